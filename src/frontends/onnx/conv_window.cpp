// The window geometry declared in conv_window.h.
#include "frontends/onnx/conv_window.h"

#include <algorithm>

namespace tessel::onnx {

std::vector<int64_t> spatial_attr(const NodeCtx& ctx, const char* name, int n, int64_t fill,
                                  int64_t min) {
  std::vector<int64_t> v = ctx.attr_ints(name);
  if (v.empty()) return std::vector<int64_t>(n, fill);
  if (static_cast<int>(v.size()) != n)
    ctx.fail(ErrorKind::Format, "attribute ", name, " ", shape_str(v), " must have ", n,
             " entries (one per spatial dim)");
  for (int64_t e : v)
    if (e < min)
      ctx.fail(ErrorKind::Value, "attribute ", name, " ", shape_str(v), " must all be >= ", min);
  return v;
}

Window window_of(const NodeCtx& ctx, const Tensor& x, std::vector<int64_t> kernel) {
  const int n = x.rank() - 2;
  Window w;
  w.kernel = std::move(kernel);
  w.strides = spatial_attr(ctx, "strides", n, 1, 1);
  w.dilations = spatial_attr(ctx, "dilations", n, 1, 1);
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET" || auto_pad.empty()) {
    w.pads = ctx.attr_ints("pads");
    if (w.pads.empty()) w.pads.assign(2 * n, 0);
    if (static_cast<int>(w.pads.size()) != 2 * n)
      ctx.fail(ErrorKind::Format, "pads ", shape_str(w.pads), " must have ", 2 * n,
               " entries (begins, then ends)");
    for (int64_t p : w.pads)
      if (p < 0) ctx.fail(ErrorKind::Value, "pads ", shape_str(w.pads), " must all be >= 0");
  } else if (auto_pad == "VALID") {
    w.pads.assign(2 * n, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    w.pads.assign(2 * n, 0);
    for (int d = 0; d < n; ++d) {
      const int64_t in = x.shape()[2 + d], s = w.strides[d];
      const int64_t out = (in + s - 1) / s;
      const int64_t total =
          std::max<int64_t>(0, (out - 1) * s + (w.kernel[d] - 1) * w.dilations[d] + 1 - in);
      const int64_t small = total / 2;
      w.pads[d] = auto_pad == "SAME_UPPER" ? small : total - small;
      w.pads[n + d] = total - w.pads[d];
    }
  } else {
    ctx.fail(ErrorKind::Format, "auto_pad '", auto_pad,
             "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  }
  return w;
}

std::vector<int64_t> kernel_of_weight(const NodeCtx& ctx, const Tensor& x, const Tensor& w) {
  if (w.rank() != x.rank())
    ctx.fail(ErrorKind::Shape, "W must have X's rank ", x.rank(), ", got ", shape_str(w.shape()));
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  std::vector<int64_t> declared = ctx.attr_ints("kernel_shape");
  if (!declared.empty() && declared != kernel)
    ctx.fail(ErrorKind::Shape, "kernel_shape ", shape_str(declared), " disagrees with W ",
             shape_str(w.shape()));
  return kernel;
}

std::vector<NamedAttr> conv_attrs(const NodeCtx& ctx, const Tensor& x, const Tensor& w) {
  Window win = window_of(ctx, x, kernel_of_weight(ctx, x, w));
  return {{"strides", win.strides},
          {"pads", win.pads},
          {"dilations", win.dilations},
          {"groups", ctx.attr_int("group", 1)}};
}

}  // namespace tessel::onnx
