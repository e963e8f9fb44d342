// Neural-network ONNX ops: MatMul, Gemm, Einsum, Conv, ConvTranspose, pooling (MaxPool with
// Indices, AveragePool, LpPool, the Global pools, MaxUnpool), normalizations (Batch, Instance,
// Layer, Group, LRN, MeanVariance), Dropout.
#include <algorithm>
#include <cmath>
#include <limits>

#include "frontends/onnx/conv_window.h"
#include "frontends/onnx/convert_util.h"

namespace tessel::onnx {
namespace {

Tensor pad_constant(const Tensor& x, const std::vector<int64_t>& pads, double value) {
  return op1("Pad", {x}, {{"pads", pads}, {"mode", "Constant"}, {"value", value}});
}
int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
  return p;
}
// A per-channel vector [C] shaped to broadcast against [N, C, ...] of rank `rank`.
Tensor channel_shaped(const Tensor& v, int64_t rank) {
  Shape s(static_cast<size_t>(std::max<int64_t>(rank - 1, 1)), 1);
  s[0] = v.numel();
  return reshape(v, s);
}
// The lowest value of a dtype, as a padding that never wins a max.
double lowest_of(DType dt) {
  switch (dtype_kind(dt)) {
    case DTypeKind::Unsigned:
    case DTypeKind::Bool:
      return 0;
    case DTypeKind::Signed:
      return -std::ldexp(1.0, dtype_size(dt) * 8 - 1);
    default:
      return -std::numeric_limits<double>::infinity();
  }
}

// x [N, C, D1, ...] with 1 to 3 spatial dims; returns the spatial rank.
int spatial_rank(const NodeCtx& ctx, const Tensor& x) {
  if (x.rank() < 3 || x.rank() > 5)
    ctx.fail(ErrorKind::Shape, "X must be [N, C, D1, ...] with 1 to 3 spatial dims, got ",
             shape_str(x.shape()));
  return x.rank() - 2;
}

// --- MatMul, Gemm, Einsum ------------------------------------------------------------------

std::vector<Value> matmul(NodeCtx& ctx) {
  Tensor a = ctx.in(0), b = ctx.in(1);
  if (a.rank() == 0 || b.rank() == 0)
    ctx.fail(ErrorKind::Shape, "operands must have rank >= 1, got ", shape_str(a.shape()), " and ",
             shape_str(b.shape()));
  if (a.dtype() != b.dtype())
    ctx.fail(ErrorKind::DType, "operands differ in dtype: ", dtype_name(a.dtype()), " and ",
             dtype_name(b.dtype()));
  return {op1("MatMul", {a, b})};
}

std::vector<Value> gemm(NodeCtx& ctx) {
  Tensor a = ctx.in(0), b = ctx.in(1);
  if (a.rank() != 2 || b.rank() != 2)
    ctx.fail(ErrorKind::Shape, "A and B must be matrices, got ", shape_str(a.shape()), " and ",
             shape_str(b.shape()));
  const bool ta = ctx.attr_int("transA", 0) != 0, tb = ctx.attr_int("transB", 0) != 0;
  const double alpha = ctx.attr_float("alpha", 1.0), beta = ctx.attr_float("beta", 1.0);
  const int64_t ka = ta ? a.shape()[0] : a.shape()[1], kb = tb ? b.shape()[1] : b.shape()[0];
  if (ka != kb)
    ctx.fail(ErrorKind::Shape, "inner dims differ: A ", shape_str(a.shape()),
             ta ? " (transposed)" : "", " and B ", shape_str(b.shape()), tb ? " (transposed)" : "");
  Tensor y = op1("MatMul", {a, b}, {{"transpose_a", ta}, {"transpose_b", tb}});
  if (alpha != 1.0) y = binary("Mul", y, ctx.scalar_tensor(alpha, y.dtype()));
  if (ctx.has(2) && beta != 0.0) {
    Tensor c = ctx.in(2);
    if (beta != 1.0) c = binary("Mul", c, ctx.scalar_tensor(beta, c.dtype()));
    y = binary("Add", y, c);
  }
  return {y};
}

std::vector<Value> einsum(NodeCtx& ctx) {
  std::vector<Tensor> xs;
  for (int i = 0; i < ctx.num_inputs(); ++i) xs.push_back(ctx.in(i));
  if (xs.empty()) ctx.fail(ErrorKind::Format, "needs at least one input");
  return {op1("Einsum", xs, {{"equation", ctx.attr_string("equation")}})};
}

// --- Conv, ConvTranspose -------------------------------------------------------------------

std::vector<Value> conv(NodeCtx& ctx) {
  Tensor x = ctx.in(0), w = ctx.in(1);
  spatial_rank(ctx, x);
  require_float(ctx, x, "X");
  // The bias slot is passed even when absent (Tensor()): the cpu kernel reads all three.
  std::vector<Tensor> ins = {x, w, ctx.has(2) ? ctx.in(2) : Tensor()};
  return {op1("Conv", ins, conv_attrs(ctx, x, w))};
}

// ConvTranspose. When pads and output_padding suit ConvTranspose2d it runs natively; otherwise
// the full (unpadded) transposed convolution is computed and then cropped / zero-extended, which
// covers negative total padding (output_shape larger than natural), 1-D (as 2-D with H = 1) and
// 3-D (as the input gradient of a 3-D convolution).
std::vector<Value> conv_transpose(NodeCtx& ctx) {
  Tensor x = ctx.in(0), w = ctx.in(1);
  const int n = spatial_rank(ctx, x);
  require_float(ctx, x, "X");
  const std::vector<int64_t> kernel = kernel_of_weight(ctx, x, w);
  const int64_t group = ctx.attr_int("group", 1);
  if (group < 1 || x.shape()[1] % group != 0 || w.shape()[0] != x.shape()[1])
    ctx.fail(ErrorKind::Shape, "W ", shape_str(w.shape()), " does not fit X ", shape_str(x.shape()),
             " with group ", group, " (W must be [C, M/group, k...])");
  const int64_t m = w.shape()[1] * group;
  const auto strides = spatial_attr(ctx, "strides", n, 1, 1);
  const auto dilations = spatial_attr(ctx, "dilations", n, 1, 1);
  const auto out_pad = spatial_attr(ctx, "output_padding", n, 0, 0);
  std::vector<int64_t> full(n), begin(n), end(n);
  for (int d = 0; d < n; ++d)
    full[d] = strides[d] * (x.shape()[2 + d] - 1) + (kernel[d] - 1) * dilations[d] + 1;

  std::vector<int64_t> output_shape = ctx.attr_ints("output_shape");
  if (static_cast<int>(output_shape.size()) == n + 2)
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (!output_shape.empty() && static_cast<int>(output_shape.size()) != n)
    ctx.fail(ErrorKind::Format, "output_shape ", shape_str(output_shape), " must have ", n,
             " entries");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && auto_pad != "VALID" && !auto_pad.empty())
    ctx.fail(ErrorKind::Format, "auto_pad '", auto_pad,
             "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  if (!output_shape.empty() || same) {
    for (int d = 0; d < n; ++d) {
      const int64_t want = output_shape.empty() ? x.shape()[2 + d] * strides[d] : output_shape[d];
      const int64_t total = full[d] + out_pad[d] - want;
      // Python's floor division, as the reference: a negative total extends the end.
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      begin[d] = auto_pad == "SAME_UPPER" ? half : total - half;
      end[d] = total - begin[d];
    }
  } else if (auto_pad != "VALID") {
    std::vector<int64_t> pads = ctx.attr_ints("pads");
    if (pads.empty()) pads.assign(2 * n, 0);
    if (static_cast<int>(pads.size()) != 2 * n)
      ctx.fail(ErrorKind::Format, "pads ", shape_str(pads), " must have ", 2 * n, " entries");
    for (int d = 0; d < n; ++d) begin[d] = pads[d], end[d] = pads[n + d];
  }
  for (int d = 0; d < n; ++d)
    if (full[d] + out_pad[d] - begin[d] - end[d] < 1)
      ctx.fail(ErrorKind::Shape, "spatial dim ", d, ": the output would be empty (input ",
               x.shape()[2 + d], ", pads ", begin[d], "+", end[d], ")");

  const Tensor bias = ctx.has(2) ? ctx.in(2) : Tensor();
  bool native = n == 2;
  for (int d = 0; d < n && native; ++d)
    native = begin[d] >= 0 && end[d] >= 0 && (out_pad[d] < strides[d] || out_pad[d] < dilations[d]);
  if (native) {
    std::vector<int64_t> pads = begin;
    pads.insert(pads.end(), end.begin(), end.end());
    return {op1("ConvTranspose2d", {x, w, bias},
                {{"strides", strides},
                 {"pads", pads},
                 {"dilations", dilations},
                 {"output_padding", out_pad},
                 {"groups", group}})};
  }

  Tensor y;
  const Shape& xs = x.shape();
  if (n == 3) {
    Shape in_shape = {xs[0], m, full[0], full[1], full[2]};
    y = op1("Conv3dBackwardInput", {x, w},
            {{"input_shape", in_shape},
             {"strides", strides},
             {"dilations", dilations},
             {"groups", group}});
  } else {
    Tensor x4 = x, w4 = w;
    std::vector<int64_t> s2 = strides, d2 = dilations;
    if (n == 1) {
      x4 = reshape(x, {xs[0], xs[1], 1, xs[2]});
      w4 = reshape(w, {w.shape()[0], w.shape()[1], 1, w.shape()[2]});
      s2 = {1, strides[0]};
      d2 = {1, dilations[0]};
    }
    y = op1("ConvTranspose2d", {x4, w4, Tensor()},
            {{"strides", s2}, {"dilations", d2}, {"groups", group}});
    if (n == 1) y = reshape(y, {xs[0], m, full[0]});
  }
  // Crop `begin` in front and `end - output_padding` behind (negative: extend with zeros).
  std::vector<int64_t> pads(2 * (n + 2), 0);
  bool any = false;
  for (int d = 0; d < n; ++d) {
    pads[2 + d] = -begin[d];
    pads[n + 4 + d] = out_pad[d] - end[d];
    any = any || pads[2 + d] != 0 || pads[n + 4 + d] != 0;
  }
  if (any) y = pad_constant(y, pads, 0.0);
  if (bias.defined()) y = binary("Add", y, channel_shaped(bias, y.rank()));
  return {y};
}

// --- Pooling -------------------------------------------------------------------------------

// Pool with ONNX semantics. The Pool kind takes pads up to half the kernel; larger pads are
// applied explicitly (max: with the dtype's lowest value; average: dividing by the pooled
// count of valid positions unless count_include_pad).
Tensor pool(NodeCtx& ctx, const std::string& kind, Tensor x, Window win, bool ceil_mode,
            bool count_include_pad, int64_t p = 2) {
  const int n = win.n();
  auto run = [&](const Tensor& in, const std::vector<int64_t>& pads, bool include_pad) {
    return op1("Pool", {in},
               {{"kind", kind},
                {"kernel", win.kernel},
                {"strides", win.strides},
                {"pads", pads},
                {"dilations", win.dilations},
                {"ceil_mode", ceil_mode},
                {"count_include_pad", include_pad},
                {"p", p}});
  };
  bool any_pad = false;
  for (int64_t v : win.pads) any_pad = any_pad || v != 0;
  if (!any_pad || (kind != "Lp" && win.pads_within_half_kernel()))
    return run(x, win.pads, count_include_pad);
  std::vector<int64_t> full(2 * (n + 2), 0);
  for (int d = 0; d < n; ++d) full[2 + d] = win.pads[d], full[n + 4 + d] = win.pads[n + d];
  const std::vector<int64_t> none(2 * n, 0);
  if (kind == "Max") return run(pad_constant(x, full, lowest_of(x.dtype())), none, false);
  if (kind == "Lp" || count_include_pad) return run(pad_constant(x, full, 0.0), none, false);
  // Average over valid positions only: pool(x padded with 0) / pool(1 padded with 0).
  Shape ones_shape(x.shape());
  ones_shape[0] = ones_shape[1] = 1;
  Tensor ones = expand_to(ctx.scalar_tensor(1, x.dtype()), ones_shape);
  return binary("Div", run(pad_constant(x, full, 0.0), none, false),
                run(pad_constant(ones, full, 0.0), none, false));
}

Window pool_window(NodeCtx& ctx, const Tensor& x) {
  const int n = spatial_rank(ctx, x);
  std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
  if (static_cast<int>(kernel.size()) != n)
    ctx.fail(ErrorKind::Format, "kernel_shape ", shape_str(kernel), " must have ", n,
             " entries (one per spatial dim)");
  for (int64_t k : kernel)
    if (k < 1) ctx.fail(ErrorKind::Value, "kernel_shape ", shape_str(kernel), " must be >= 1");
  return window_of(ctx, x, kernel);
}

// Output length of a pooling window (ONNX: floor, or ceil with the last window starting inside
// the input or its left padding).
int64_t pool_out_size(int64_t in, int64_t pb, int64_t pe, int64_t k, int64_t s, int64_t dil,
                      bool ceil_mode) {
  const int64_t span = in + pb + pe - dil * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + pb) --out;
  return out;
}

// Avg / Lp pooling with dilations, which the Pool kind takes only for Max: each window's sum of
// taps is a depthwise convolution with a weight of ones. `pads` are the window's pads with the
// ends grown so that ceil_mode's last window fits (its taps beyond the padding read zeros).
struct DilatedPool {
  const Window& win;
  std::vector<int64_t> out;   // the output's spatial dims
  std::vector<int64_t> pads;  // [begins..., ends...]
  bool ceil_extended = false;

  // Σ of each window's taps over t [N, C, ...] zero-padded by `conv_pads`, cropped to `out`.
  Tensor window_sum(const NodeCtx& ctx, const Tensor& t,
                    const std::vector<int64_t>& conv_pads) const {
    const int64_t c = t.shape()[1];
    Shape w_shape = {c, 1};
    w_shape.insert(w_shape.end(), win.kernel.begin(), win.kernel.end());
    Tensor w = expand_to(ctx.scalar_tensor(1, t.dtype()), w_shape);
    Tensor y = op1("Conv", {t, w, Tensor()},
                   {{"strides", win.strides},
                    {"pads", conv_pads},
                    {"dilations", win.dilations},
                    {"groups", c}});
    // Floor can exceed ceil_mode's count when a last window would start in the end padding.
    for (int d = 0; d < win.n(); ++d)
      if (y.shape()[2 + d] > out[d]) y = narrow(y, 2 + d, 0, out[d]);
    return y;
  }
};

DilatedPool dilated_pool_geometry(const NodeCtx& ctx, const Tensor& x, const Window& win,
                                  bool ceil_mode) {
  const int n = win.n();
  DilatedPool dp{win, std::vector<int64_t>(n), win.pads};
  for (int d = 0; d < n; ++d) {
    const int64_t in = x.shape()[2 + d], pb = win.pads[d], pe = win.pads[n + d];
    dp.out[d] =
        pool_out_size(in, pb, pe, win.kernel[d], win.strides[d], win.dilations[d], ceil_mode);
    if (dp.out[d] < 1)
      ctx.fail(ErrorKind::Shape, "spatial dim ", d, ": padded input ", in, " + ", pb, " + ", pe,
               " is smaller than the dilated kernel ", (win.kernel[d] - 1) * win.dilations[d] + 1);
    const int64_t extra = (dp.out[d] - 1) * win.strides[d] +
                          (win.kernel[d] - 1) * win.dilations[d] + 1 - (in + pb + pe);
    if (extra > 0) dp.pads[n + d] += extra, dp.ceil_extended = true;
  }
  return dp;
}

// MaxPool's Indices output: for each output element, the flat index (over N, C and the spatial
// dims, row-major; column-major over the spatial dims when storage_order is 1) of the maximum
// in its window. The window taps are gathered from x padded with its lowest value (a constant
// table of tap positions, built from the shapes), and ArgMax picks the first maximum.
Tensor max_pool_indices(NodeCtx& ctx, const Tensor& x, const Window& win, bool ceil_mode,
                        bool column_major) {
  const int n = win.n();
  const Shape& xs = x.shape();
  Shape in(xs.begin() + 2, xs.end()), out(n), padded(n);
  int64_t taps = 1, positions = 1;
  for (int d = 0; d < n; ++d) {
    out[d] = pool_out_size(in[d], win.pads[d], win.pads[n + d], win.kernel[d], win.strides[d],
                           win.dilations[d], ceil_mode);
    padded[d] =
        std::max(in[d] + win.pads[d] + win.pads[n + d],
                 (out[d] - 1) * win.strides[d] + (win.kernel[d] - 1) * win.dilations[d] + 1);
    taps *= win.kernel[d];
    positions *= out[d];
  }
  // tap_src[t][o]: the position in the flattened padded input; tap_idx[t][o]: its flat index in
  // the unpadded input (storage order), or 0 for a padding position.
  std::vector<int64_t> tap_src(taps * positions), tap_idx(taps * positions);
  std::vector<int64_t> o(n), k(n);
  for (int64_t t = 0; t < taps; ++t) {
    for (int64_t r = t, d = n - 1; d >= 0; --d) k[d] = r % win.kernel[d], r /= win.kernel[d];
    for (int64_t pos = 0; pos < positions; ++pos) {
      for (int64_t r = pos, d = n - 1; d >= 0; --d) o[d] = r % out[d], r /= out[d];
      int64_t src = 0, idx = 0;
      bool inside = true;
      for (int d = 0; d < n; ++d) {
        const int64_t q = o[d] * win.strides[d] + k[d] * win.dilations[d];
        src = src * padded[d] + q;
        const int64_t u = q - win.pads[d];
        inside = inside && u >= 0 && u < in[d];
      }
      if (inside) {
        int64_t mult = 1;
        for (int dd = 0; dd < n; ++dd) {
          const int d = column_major ? dd : n - 1 - dd;
          idx += (o[d] * win.strides[d] + k[d] * win.dilations[d] - win.pads[d]) * mult;
          mult *= in[d];
        }
      }
      tap_src[t * positions + pos] = src;
      tap_idx[t * positions + pos] = idx;
    }
  }
  std::vector<int64_t> pads(2 * (n + 2), 0);
  for (int d = 0; d < n; ++d) {
    pads[2 + d] = win.pads[d];
    pads[n + 4 + d] = padded[d] - in[d] - win.pads[d];
  }
  Tensor xp = pad_constant(x, pads, lowest_of(x.dtype()));
  xp = reshape(xp, {xs[0], xs[1], product(padded, 0, n)});
  Tensor cols = op1("Gather", {xp, ctx.vector_tensor(tap_src, DType::I64)}, {{"axis", 2}});
  cols = reshape(cols, {xs[0], xs[1], taps, positions});
  Tensor best = op1("ArgMax", {cols}, {{"axis", 2}, {"keepdims", true}});
  Tensor table =
      ctx.constant(HostTensor::from_vector(DType::I64, {1, 1, taps, positions}, tap_idx));
  table = expand_to(table, {xs[0], xs[1], taps, positions});
  Tensor idx = op1("GatherElements", {table, best}, {{"axis", 2}});
  const int64_t plane = product(in, 0, n);
  std::vector<int64_t> offsets(xs[0] * xs[1]);
  for (int64_t i = 0; i < xs[0] * xs[1]; ++i) offsets[i] = i * plane;
  Tensor base = ctx.constant(HostTensor::from_vector(DType::I64, {xs[0], xs[1], 1, 1}, offsets));
  Shape y_shape = {xs[0], xs[1]};
  y_shape.insert(y_shape.end(), out.begin(), out.end());
  return reshape(binary("Add", idx, base), y_shape);
}

std::vector<Value> max_pool(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  Window win = pool_window(ctx, x);
  const bool ceil_mode = ctx.attr_int("ceil_mode", 0) != 0;
  Tensor y = pool(ctx, "Max", x, win, ceil_mode, false);
  if (!ctx.wants_output(1)) return {y};
  return {y, max_pool_indices(ctx, x, win, ceil_mode, ctx.attr_int("storage_order", 0) == 1)};
}

std::vector<Value> average_pool(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  require_float(ctx, x, "X");
  Window win = pool_window(ctx, x);
  const bool ceil_mode = ctx.attr_int("ceil_mode", 0) != 0;
  const bool include_pad = ctx.attr_int("count_include_pad", 0) != 0;
  if (win.dilated()) {
    DilatedPool dp = dilated_pool_geometry(ctx, x, win, ceil_mode);
    Tensor sum = dp.window_sum(ctx, x, dp.pads);
    if (include_pad && !dp.ceil_extended) {
      int64_t size = 1;
      for (int64_t k : win.kernel) size *= k;
      return {binary("Div", sum, ctx.scalar_tensor(static_cast<double>(size), x.dtype()))};
    }
    // The divisor counts the taps inside the input (or, with count_include_pad, inside the
    // padded input, ceil_mode's extension excluded): the same window sum over ones.
    Shape ones_shape(x.rank(), 1);
    std::vector<int64_t> pads = dp.pads;
    for (int d = 0; d < win.n(); ++d) {
      ones_shape[2 + d] = x.shape()[2 + d];
      if (include_pad) {
        ones_shape[2 + d] += win.pads[d] + win.pads[win.n() + d];
        pads[d] = 0;
        pads[win.n() + d] -= win.pads[win.n() + d];
      }
    }
    Tensor ones = expand_to(ctx.scalar_tensor(1, x.dtype()), ones_shape);
    return {binary("Div", sum, dp.window_sum(ctx, ones, pads))};
  }
  return {pool(ctx, "Avg", x, win, ceil_mode, include_pad)};
}

// The p of LpPool / GlobalLpPool (default 2).
int64_t lp_order(const NodeCtx& ctx) {
  const int64_t p = ctx.attr_int("p", 2);
  if (p < 1) ctx.fail(ErrorKind::Value, "p must be >= 1, got ", p);
  return p;
}

std::vector<Value> lp_pool(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  require_float(ctx, x, "X");
  Window win = pool_window(ctx, x);
  const int64_t p = lp_order(ctx);
  const bool ceil_mode = ctx.attr_int("ceil_mode", 0) != 0;
  if (win.dilated()) {
    // (Σ |x|^p)^(1/p) over each window's taps; padding adds nothing.
    DilatedPool dp = dilated_pool_geometry(ctx, x, win, ceil_mode);
    Tensor a = act("Abs", x);
    if (p == 2) a = binary("Mul", a, a);
    if (p > 2) a = binary("Pow", a, ctx.scalar_tensor(static_cast<double>(p), x.dtype()));
    Tensor sum = dp.window_sum(ctx, a, dp.pads);
    if (p == 1) return {sum};
    if (p == 2) return {act("Sqrt", sum)};
    return {binary("Pow", sum, ctx.scalar_tensor(1.0 / static_cast<double>(p), x.dtype()))};
  }
  return {pool(ctx, "Lp", act("Abs", x), win, ceil_mode, false, p)};
}

std::vector<int64_t> spatial_axes(const NodeCtx& ctx, const Tensor& x) {
  if (x.rank() < 2) ctx.fail(ErrorKind::Shape, "X must be [N, C, ...], got ", shape_str(x.shape()));
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < x.rank(); ++d) axes.push_back(d);
  return axes;
}

std::vector<Value> global_average_pool(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  require_float(ctx, x, "X");
  auto axes = spatial_axes(ctx, x);
  if (axes.empty()) return {x};
  return {reduce_op("Mean", x, axes, true)};
}
std::vector<Value> global_max_pool(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  auto axes = spatial_axes(ctx, x);
  if (axes.empty()) return {x};
  return {reduce_op("Max", x, axes, true)};
}
std::vector<Value> global_lp_pool(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  require_float(ctx, x, "X");
  auto axes = spatial_axes(ctx, x);
  const int64_t p = lp_order(ctx);
  if (p == 1) return {reduce_op("L1", x, axes, true)};
  if (p == 2) return {reduce_op("L2", x, axes, true)};
  Tensor a = act("Abs", x);
  Tensor s = reduce_op("Sum", binary("Pow", a, ctx.scalar_tensor(p, x.dtype())), axes, true);
  return {binary("Pow", s, ctx.scalar_tensor(1.0 / p, x.dtype()))};
}

// MaxUnpool: scatter X into zeros at MaxPool's flat indices.
std::vector<Value> max_unpool(NodeCtx& ctx) {
  Tensor x = ctx.in(0), indices = ctx.in(1);
  const int n = spatial_rank(ctx, x);
  if (indices.shape() != x.shape())
    ctx.fail(ErrorKind::Shape, "I ", shape_str(indices.shape()), " must have X's shape ",
             shape_str(x.shape()));
  if (!is_integer(indices.dtype()))
    ctx.fail(ErrorKind::DType, "I must be an integer tensor, not ", dtype_name(indices.dtype()));
  Window win = pool_window(ctx, x);
  // The indices address the inferred shape; an explicit output_shape gets that result in its
  // leading corner (the reference's rule), cropped or zero-extended.
  Shape inferred = {x.shape()[0], x.shape()[1]};
  for (int d = 0; d < n; ++d)
    inferred.push_back((x.shape()[2 + d] - 1) * win.strides[d] + win.kernel[d] - win.pads[d] -
                       win.pads[n + d]);
  const int64_t total = shape_numel(inferred);
  Tensor zeros = expand_to(ctx.scalar_tensor(0, x.dtype()), {total});
  Tensor flat_idx = reshape(cast(indices, DType::I64), {x.numel()});
  Tensor y = op1("ScatterElements", {zeros, flat_idx, reshape(x, {x.numel()})}, {{"axis", 0}});
  y = reshape(y, inferred);
  if (!ctx.has(2)) return {y};
  const Shape out = ctx.ints(2);
  if (static_cast<int>(out.size()) != n + 2 || out[0] != x.shape()[0] || out[1] != x.shape()[1])
    ctx.fail(ErrorKind::Shape, "output_shape ", shape_str(out), " must be [N, C, ...] of X ",
             shape_str(x.shape()));
  if (out == inferred) return {y};
  std::vector<int64_t> pads(2 * (n + 2), 0);
  for (int d = 0; d < n; ++d) pads[n + 4 + d] = out[2 + d] - inferred[2 + d];
  return {pad_constant(y, pads, 0.0)};
}

// --- Normalizations ------------------------------------------------------------------------

std::vector<Value> batch_norm(NodeCtx& ctx) {
  Tensor x = ctx.in(0), scale = ctx.in(1), bias = ctx.in(2), mean = ctx.in(3), var = ctx.in(4);
  require_float(ctx, x, "X");
  if (x.rank() < 2) ctx.fail(ErrorKind::Shape, "X must be [N, C, ...], got ", shape_str(x.shape()));
  const double eps = ctx.attr_float("epsilon", 1e-5);
  const bool training =
      ctx.opset() >= 14 ? ctx.attr_int("training_mode", 0) != 0 : ctx.num_outputs() > 1;
  auto to_x = [&](const Tensor& t) { return t.dtype() == x.dtype() ? t : cast(t, x.dtype()); };
  scale = to_x(scale), bias = to_x(bias);
  if (!training) {
    if (scale.rank() > 1 || mean.rank() > 1) {
      // spatial = 0 (opset < 9): per-activation statistics shaped like X[1:].
      Tensor inv = binary("Add", to_x(var), ctx.scalar_tensor(eps, x.dtype()));
      Tensor y = binary("Div", binary("Sub", x, to_x(mean)), act("Sqrt", inv));
      return {binary("Add", binary("Mul", y, scale), bias)};
    }
    return {op1("BatchNormInference", {x, to_x(mean), to_x(var), scale, bias}, {{"eps", eps}})};
  }
  std::vector<int64_t> axes = {0};
  for (int64_t d = 2; d < x.rank(); ++d) axes.push_back(d);
  Tensor batch_mean = reduce_op("Mean", x, axes, false);
  Tensor batch_var = reduce_op("Var", x, axes, false);
  Tensor y = op1("BatchNormInference", {x, batch_mean, batch_var, scale, bias}, {{"eps", eps}});
  const double momentum = ctx.attr_float("momentum", 0.9);
  auto running = [&](const Tensor& old, const Tensor& now) {
    Tensor o = cast(old, now.dtype());
    Tensor r = binary("Add", binary("Mul", o, ctx.scalar_tensor(momentum, now.dtype())),
                      binary("Mul", now, ctx.scalar_tensor(1 - momentum, now.dtype())));
    return cast(r, old.dtype());
  };
  return {y, running(mean, batch_mean), running(var, batch_var), batch_mean, batch_var};
}

std::vector<Value> instance_norm(NodeCtx& ctx) {
  Tensor x = ctx.in(0), scale = ctx.in(1), bias = ctx.in(2);
  require_float(ctx, x, "input");
  if (x.rank() < 3)
    ctx.fail(ErrorKind::Shape, "input must be [N, C, D1, ...], got ", shape_str(x.shape()));
  return {op1("GroupNorm", {x, scale, bias},
              {{"groups", x.shape()[1]}, {"eps", ctx.attr_float("epsilon", 1e-5)}})};
}

std::vector<Value> group_norm(NodeCtx& ctx) {
  Tensor x = ctx.in(0), scale = ctx.in(1), bias = ctx.in(2);
  require_float(ctx, x, "X");
  if (x.rank() < 2) ctx.fail(ErrorKind::Shape, "X must be [N, C, ...], got ", shape_str(x.shape()));
  const int64_t groups = ctx.attr_int("num_groups"), c = x.shape()[1];
  if (groups < 1 || c % groups != 0)
    ctx.fail(ErrorKind::Shape, "num_groups ", groups, " must divide the channel count ", c);
  // Opset 18 takes one scale / bias per group, opset 21 one per channel.
  auto per_channel = [&](Tensor t, const char* what) {
    if (t.numel() == c) return reshape(t, {c});
    if (t.numel() != groups)
      ctx.fail(ErrorKind::Shape, what, " ", shape_str(t.shape()), " must have ", groups,
               " (groups) or ", c, " (channels) entries");
    std::vector<int64_t> idx(c);
    for (int64_t i = 0; i < c; ++i) idx[i] = i / (c / groups);
    return op1("Gather", {reshape(t, {groups}), ctx.vector_tensor(idx, DType::I64)});
  };
  scale = per_channel(scale, "scale");
  bias = per_channel(bias, "bias");
  const double eps = ctx.attr_float("epsilon", 1e-5);
  if (ctx.attr_int("stash_type", 1) == 1 && x.dtype() != DType::F32 && x.dtype() != DType::F64) {
    Tensor y =
        op1("GroupNorm", {cast(x, DType::F32), cast(scale, DType::F32), cast(bias, DType::F32)},
            {{"groups", groups}, {"eps", eps}});
    return {cast(y, x.dtype())};
  }
  return {op1("GroupNorm", {x, scale, bias}, {{"groups", groups}, {"eps", eps}})};
}

std::vector<Value> layer_norm(NodeCtx& ctx) {
  Tensor x = ctx.in(0), scale = ctx.in(1);
  require_float(ctx, x, "X");
  if (x.rank() < 1) ctx.fail(ErrorKind::Shape, "X must have rank >= 1");
  const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), x.rank());
  const double eps = ctx.attr_float("epsilon", 1e-5);
  std::vector<Tensor> ins = {x, scale};
  if (ctx.has(2)) ins.push_back(ctx.in(2));
  Tensor y = op1("LayerNorm", ins, {{"axis", axis}, {"eps", eps}});
  if (!ctx.wants_output(1) && !ctx.wants_output(2)) return {y};
  // The statistics, in the stash type (f32 unless stash_type says otherwise).
  const int64_t stash = ctx.attr_int("stash_type", 1);
  const DType st =
      stash == 1 ? DType::F32 : dtype_from_onnx(static_cast<int>(stash)).value_or(DType::F32);
  Tensor xs = x.dtype() == st || !is_float(st) ? x : cast(x, st);
  std::vector<int64_t> axes;
  for (int64_t d = axis; d < x.rank(); ++d) axes.push_back(d);
  Tensor mean = reduce_op("Mean", xs, axes, true);
  Tensor var = reduce_op("Var", xs, axes, true);
  Tensor inv = act("Rsqrt", binary("Add", var, ctx.scalar_tensor(eps, xs.dtype())));
  return {y, mean, inv};
}

std::vector<Value> lrn(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  require_float(ctx, x, "X");
  if (x.rank() < 2) ctx.fail(ErrorKind::Shape, "X must be [N, C, ...], got ", shape_str(x.shape()));
  const int64_t size = ctx.attr_int("size");
  if (size < 1) ctx.fail(ErrorKind::Value, "size must be >= 1, got ", size);
  const double alpha = ctx.attr_float("alpha", 1e-4), beta = ctx.attr_float("beta", 0.75),
               bias = ctx.attr_float("bias", 1.0);
  const Shape& s = x.shape();
  // Σ x² over the channel window [c - floor((size-1)/2), c + ceil((size-1)/2)]: an average pool
  // over channels with zero padding, times size.
  Tensor sq = binary("Mul", x, x);
  sq = reshape(sq, {s[0], 1, s[1], product(s, 2, s.size())});
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  Tensor avg = op1("Pool", {sq},
                   {{"kind", "Avg"},
                    {"kernel", std::vector<int64_t>{size, 1}},
                    {"strides", std::vector<int64_t>{1, 1}},
                    {"pads", std::vector<int64_t>{lo, 0, hi, 0}},
                    {"count_include_pad", true}});
  avg = reshape(avg, s);
  const DType dt = x.dtype();
  Tensor denom =
      binary("Add", ctx.scalar_tensor(bias, dt), binary("Mul", avg, ctx.scalar_tensor(alpha, dt)));
  return {binary("Div", x, binary("Pow", denom, ctx.scalar_tensor(beta, dt)))};
}

std::vector<Value> mean_variance_norm(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  require_float(ctx, x, "X");
  std::vector<int64_t> axes;
  for (int64_t a : ctx.attr_ints("axes", {0, 2, 3}))
    axes.push_back(normalize_axis(ctx, a, x.rank()));
  Tensor mean = reduce_op("Mean", x, axes, true);
  Tensor sd = act("Sqrt", reduce_op("Var", x, axes, true));
  Tensor centered = binary("Sub", x, mean);
  return {binary("Div", centered, binary("Add", sd, ctx.scalar_tensor(1e-9, x.dtype())))};
}

// --- Dropout -------------------------------------------------------------------------------

// Inference: identity and an all-true mask. Training (opset 12+: training_mode input true):
// keep each element with probability 1 - ratio, scaled by 1 / (1 - ratio). The seed is the
// `seed` attribute, or one derived from the node's output name (stable across runs).
std::vector<Value> dropout(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  double ratio = ctx.attr_float("ratio", 0.5);
  bool training = false;
  if (ctx.opset() >= 12) {
    ratio = ctx.has(1) ? ctx.scalar(1) : 0.5;
    training = ctx.has(2) && ctx.scalar(2) != 0;
  }
  const DType mask_dt = ctx.opset() >= 10 ? DType::Bool : x.dtype();
  auto mask_of = [&](bool v) {
    return expand_to(ctx.scalar_tensor(v ? 1 : 0, mask_dt), x.shape());
  };
  if (!training || ratio == 0) {
    if (!ctx.wants_output(1)) return {x};
    return {x, mask_of(true)};
  }
  if (!(ratio >= 0 && ratio <= 1))
    ctx.fail(ErrorKind::Value, "ratio ", ratio, " must be in [0, 1]");
  if (ratio == 1) {
    Tensor zero = expand_to(ctx.scalar_tensor(0, x.dtype()), x.shape());
    return {zero, mask_of(false)};
  }
  Tensor u =
      op1("RngUniform", {},
          {{"shape", x.shape()}, {"dtype", DType::F32}, {"seed", random_seed(ctx)}}, ctx.device());
  Tensor keep = compare("Ge", u, ctx.scalar_tensor(ratio, DType::F32));
  Tensor scaled = binary("Mul", x, ctx.scalar_tensor(1.0 / (1.0 - ratio), x.dtype()));
  Tensor y = where(keep, scaled, ctx.scalar_tensor(0, x.dtype()));
  if (!ctx.wants_output(1)) return {y};
  return {y, mask_dt == DType::Bool ? keep : cast(keep, mask_dt)};
}

constexpr Converter kConverters[] = {
    {"", "MatMul", matmul},
    {"", "Gemm", gemm},
    {"", "Einsum", einsum},
    {"", "Conv", conv},
    {"", "ConvTranspose", conv_transpose},
    {"", "MaxPool", max_pool},
    {"", "AveragePool", average_pool},
    {"", "LpPool", lp_pool},
    {"", "GlobalAveragePool", global_average_pool},
    {"", "GlobalMaxPool", global_max_pool},
    {"", "GlobalLpPool", global_lp_pool},
    {"", "MaxUnpool", max_unpool},
    {"", "BatchNormalization", batch_norm},
    {"", "InstanceNormalization", instance_norm},
    {"", "GroupNormalization", group_norm},
    {"", "LayerNormalization", layer_norm},
    {"", "LRN", lrn},
    {"", "MeanVarianceNormalization", mean_variance_norm},
    {"", "Dropout", dropout},
};

}  // namespace

std::span<const Converter> nn_converters() { return kConverters; }

}  // namespace tessel::onnx
