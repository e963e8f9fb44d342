// Resampling ONNX ops: Resize, Upsample, GridSample, RoiAlign.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "frontends/onnx/convert_util.h"

namespace tessel::onnx {
namespace {

// a <op> b for a scalar b of a's dtype.
Tensor compare_scalar(const NodeCtx& ctx, const char* op, const Tensor& a, double b) {
  return compare(op, a, ctx.scalar_tensor(b, a.dtype()));
}

// --- Resize / Upsample ---------------------------------------------------------------------
//
// Resizing is separable: each resized axis is resampled on its own, out[i] = Σ_t w_t[i] ·
// in[idx_t[i]] (+ fill[i]), with the taps (indices and weights) computed on the host from the
// shapes and attributes alone, and applied on the device with Gather, Mul and Add. The
// coefficients follow the ONNX reference implementation (onnx/reference/ops/op_resize.py):
// neighbours of the original coordinate with edge padding, optional exclude_outside and
// antialias, tf_crop_and_resize's extrapolation value outside the ROI.

struct ResizeAttrs {
  std::string mode;          // nearest, linear, cubic
  std::string coord;         // coordinate_transformation_mode
  std::string nearest_mode;  // round_prefer_floor, ..., or "simple" (opset < 11)
  double cubic_a = -0.75;
  bool exclude_outside = false, antialias = false;
  double extrapolation = 0;
};

// One axis's resampling.
struct AxisResample {
  int64_t in = 0, out = 0;
  std::vector<std::vector<int64_t>> idx;  // [tap][out]
  std::vector<std::vector<double>> w;     // [tap][out]
  std::vector<double> fill;               // [out]; nonzero where outside the ROI

  bool identity() const {
    if (in != out || idx.size() != 1) return false;
    for (int64_t i = 0; i < out; ++i)
      if (idx[0][i] != i || w[0][i] != 1.0 || fill[i] != 0) return false;
    return true;
  }
  bool nearest2x() const {
    if (out != 2 * in || idx.size() != 1) return false;
    for (int64_t i = 0; i < out; ++i)
      if (idx[0][i] != i / 2 || w[0][i] != 1.0 || fill[i] != 0) return false;
    return true;
  }
};

// The original coordinate of output position x (ONNX Resize, coordinate_transformation_mode);
// nullopt when tf_crop_and_resize puts it outside the input.
std::optional<double> original_coord(const ResizeAttrs& a, double x, double scale, int64_t in,
                                     int64_t out, double roi_start, double roi_end) {
  const double out_width = scale * static_cast<double>(in);
  const double len = static_cast<double>(in);
  if (a.coord == "align_corners") return out_width == 1 ? 0.0 : x * (len - 1) / (out_width - 1);
  if (a.coord == "asymmetric") return x / scale;
  if (a.coord == "tf_crop_and_resize") {
    double xo = out_width == 1 ? (roi_end - roi_start) * (len - 1) / 2
                               : x * (roi_end - roi_start) * (len - 1) / (out_width - 1);
    xo += roi_start * (len - 1);
    if (!(xo >= 0 && xo <= len - 1)) return std::nullopt;  // NaN too
    return xo;
  }
  if (a.coord == "pytorch_half_pixel") return out_width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (a.coord == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(out) / out_width;
    const double offset = len / 2 * (1 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  if (a.coord == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  return (x + 0.5) / scale - 0.5;  // half_pixel
}

// The interpolation coefficients for a position at `ratio` ∈ (0, 1] past neighbour `base`; the
// first coefficient belongs to index base + *start.
std::vector<double> coefficients(const ResizeAttrs& a, double ratio, double scale, int64_t* start) {
  if (a.mode == "nearest") {
    *start = 0;
    if (ratio == 1) return {0, 1};
    const std::string& m = a.nearest_mode;
    bool up;
    if (m == "round_prefer_ceil")
      up = ratio >= 0.5;
    else if (m == "floor")
      up = false;
    else if (m == "ceil")
      up = true;
    else
      up = ratio > 0.5;  // round_prefer_floor
    return {up ? 0.0 : 1.0, up ? 1.0 : 0.0};
  }
  const double s = a.antialias ? std::min(scale, 1.0) : 1.0;
  std::vector<double> c;
  if (a.mode == "linear") {
    *start = static_cast<int64_t>(std::floor(-1 / s)) + 1;
    for (int64_t i = *start; i < 2 - *start; ++i)
      c.push_back(std::clamp(1 - std::abs((i - ratio) * s), 0.0, 1.0));
  } else {  // cubic
    const double A = a.cubic_a;
    auto kernel = [A](double x) {
      x = std::abs(x);
      if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
      if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
      return 0.0;
    };
    *start = static_cast<int64_t>(std::floor(-2 / s)) + 1;
    for (int64_t i = *start; i < 2 - *start; ++i) c.push_back(kernel((i - ratio) * s));
  }
  double total = 0;
  for (double v : c) total += v;
  if (a.antialias && total != 0)
    for (double& v : c) v /= total;
  return c;
}

AxisResample plan_axis(const ResizeAttrs& a, int64_t in, int64_t out, double scale,
                       double roi_start, double roi_end) {
  AxisResample r;
  r.in = in, r.out = out;
  r.fill.assign(out, 0.0);
  std::vector<std::map<int64_t, double>> taps(out);
  for (int64_t i = 0; i < out; ++i) {
    auto xo = original_coord(a, static_cast<double>(i), scale, in, out, roi_start, roi_end);
    if (!xo) {
      r.fill[i] = a.extrapolation;
      continue;
    }
    if (a.nearest_mode == "simple") {  // Resize-10 / Upsample
      const double v = scale < 1 ? std::ceil(*xo) : std::floor(*xo);
      taps[i][std::clamp<int64_t>(static_cast<int64_t>(v), 0, in - 1)] = 1.0;
      continue;
    }
    int64_t base = static_cast<int64_t>(std::floor(*xo));
    double ratio = *xo - static_cast<double>(base);
    if (ratio == 0) base -= 1, ratio = 1;
    int64_t start = 0;
    std::vector<double> c = coefficients(a, ratio, scale, &start);
    if (a.exclude_outside) {
      double total = 0;
      for (size_t j = 0; j < c.size(); ++j) {
        const int64_t q = base + start + static_cast<int64_t>(j);
        if (q < 0 || q >= in) c[j] = 0;
        total += c[j];
      }
      if (total != 0)
        for (double& v : c) v /= total;
    }
    for (size_t j = 0; j < c.size(); ++j) {
      if (c[j] == 0) continue;
      const int64_t q = std::clamp<int64_t>(base + start + static_cast<int64_t>(j), 0, in - 1);
      taps[i][q] += c[j];
    }
  }
  size_t n = 1;
  for (const auto& t : taps) n = std::max(n, t.size());
  r.idx.assign(n, std::vector<int64_t>(out, 0));
  r.w.assign(n, std::vector<double>(out, 0.0));
  for (int64_t i = 0; i < out; ++i) {
    size_t j = 0;
    for (const auto& [q, wt] : taps[i]) r.idx[j][i] = q, r.w[j][i] = wt, ++j;
  }
  return r;
}

Tensor apply_axis(const NodeCtx& ctx, const Tensor& x, int64_t axis, const AxisResample& r) {
  Shape wshape(static_cast<size_t>(x.rank() - axis), 1);
  wshape[0] = r.out;
  const DType dt = x.dtype();
  Tensor acc;
  for (size_t t = 0; t < r.idx.size(); ++t) {
    Tensor g = op1("Gather", {x, ctx.vector_tensor(r.idx[t], DType::I64)}, {{"axis", axis}});
    bool ones = true;
    for (double v : r.w[t]) ones = ones && v == 1.0;
    if (!ones) g = binary("Mul", g, ctx.constant(HostTensor::from_vector(dt, wshape, r.w[t])));
    acc = t == 0 ? g : binary("Add", acc, g);
  }
  bool any_fill = false;
  for (double v : r.fill) any_fill = any_fill || v != 0;
  if (any_fill) acc = binary("Add", acc, ctx.constant(HostTensor::from_vector(dt, wshape, r.fill)));
  return acc;
}

std::vector<double> floats_of(const NodeCtx& ctx, int i) {
  HostTensor h = ctx.host(i);
  std::vector<double> v(static_cast<size_t>(h.numel()));
  for (int64_t k = 0; k < h.numel(); ++k) v[k] = h.get_f64(k);
  return v;
}

// Resizes x to `out` with per-axis `scales` (the factors the coordinate transform uses) and a
// ROI [starts..., ends...] over all axes (tf_crop_and_resize only).
Tensor resize_to(const NodeCtx& ctx, Tensor x, const ResizeAttrs& a, const Shape& out,
                 const std::vector<double>& scales, const std::vector<double>& roi) {
  const int64_t rank = x.rank();
  std::vector<AxisResample> plans(rank);
  std::vector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d) {
    if (out[d] < 1 || x.shape()[d] < 1)
      ctx.fail(ErrorKind::Shape, "cannot resize ", shape_str(x.shape()), " to ", shape_str(out));
    const double rs = roi.empty() ? 0 : roi[d], re = roi.empty() ? 1 : roi[rank + d];
    plans[d] = plan_axis(a, x.shape()[d], out[d], scales[d], rs, re);
    if (!plans[d].identity()) order.push_back(d);
  }
  if (order.empty()) return x;
  // The common 2× nearest upsampling of the last two axes has its own kind.
  if (rank >= 2 && order.size() == 2 && order[0] == rank - 2 && order[1] == rank - 1 &&
      plans[rank - 2].nearest2x() && plans[rank - 1].nearest2x())
    return op1("ResizeNearest2x", {x});
  // Shrinking axes first keeps the intermediates small.
  std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
    return static_cast<double>(out[p]) / x.shape()[p] < static_cast<double>(out[q]) / x.shape()[q];
  });
  const DType dt = x.dtype();
  bool weighted = false;
  for (int64_t d : order)
    for (size_t t = 0; t < plans[d].w.size(); ++t)
      for (int64_t i = 0; i < plans[d].out; ++i)
        weighted = weighted || (plans[d].w[t][i] != 1.0 && plans[d].w[t][i] != 0.0) ||
                   plans[d].fill[i] != 0;
  const bool via_f32 = weighted && !is_float(dt);
  if (via_f32) x = cast(x, DType::F32);
  for (int64_t d : order) x = apply_axis(ctx, x, d, plans[d]);
  return via_f32 ? cast(x, dt) : x;
}

std::vector<Value> resize_op(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  const int64_t rank = x.rank();
  if (rank == 0) ctx.fail(ErrorKind::Shape, "X must have rank >= 1");
  ResizeAttrs a;
  a.mode = ctx.attr_string("mode", "nearest");
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic")
    ctx.fail(ErrorKind::Format, "mode '", a.mode, "' is not nearest, linear or cubic");
  if (ctx.opset() < 11) {
    if (a.mode == "cubic") ctx.fail(ErrorKind::Format, "mode cubic needs opset 11");
    a.coord = "asymmetric";
    a.nearest_mode = a.mode == "nearest" ? "simple" : "";
  } else {
    a.coord = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
    a.nearest_mode = ctx.attr_string("nearest_mode", "round_prefer_floor");
    a.cubic_a = ctx.attr_float("cubic_coeff_a", -0.75);
    a.exclude_outside = ctx.attr_int("exclude_outside", 0) != 0;
    a.extrapolation = ctx.attr_float("extrapolation_value", 0.0);
    a.antialias = ctx.attr_int("antialias", 0) != 0 && a.mode != "nearest";
  }
  static const char* kCoords[] = {
      "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
      "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  if (std::find(std::begin(kCoords), std::end(kCoords), a.coord) == std::end(kCoords))
    ctx.fail(ErrorKind::Format, "coordinate_transformation_mode '", a.coord, "' is unknown");
  static const char* kNearest[] = {
      "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple", ""};
  if (std::find(std::begin(kNearest), std::end(kNearest), a.nearest_mode) == std::end(kNearest))
    ctx.fail(ErrorKind::Format, "nearest_mode '", a.nearest_mode, "' is unknown");

  // The resized axes (opset 18's `axes`, else all) and their scales or sizes.
  std::vector<int64_t> axes;
  for (int64_t d : ctx.attr_ints("axes")) axes.push_back(normalize_axis(ctx, d, rank));
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  const size_t na = axes.size();
  std::vector<double> scales_in, roi_in;
  std::vector<int64_t> sizes_in;
  if (ctx.opset() < 11) {
    scales_in = floats_of(ctx, 1);
  } else {
    if (ctx.has(1) && ctx.in(1).numel() > 0) roi_in = floats_of(ctx, 1);
    if (ctx.has(2) && ctx.in(2).numel() > 0) scales_in = floats_of(ctx, 2);
    if (ctx.has(3) && ctx.in(3).numel() > 0) sizes_in = ctx.ints(3);
  }
  if (scales_in.empty() == sizes_in.empty())
    ctx.fail(ErrorKind::Format, "exactly one of scales and sizes must be given");
  if (!scales_in.empty() && scales_in.size() != na)
    ctx.fail(ErrorKind::Shape, "scales has ", scales_in.size(), " entries; ", na, " expected");
  if (!sizes_in.empty() && sizes_in.size() != na)
    ctx.fail(ErrorKind::Shape, "sizes has ", sizes_in.size(), " entries; ", na, " expected");

  Shape out = x.shape();
  std::vector<double> scales(rank, 1.0);
  if (!scales_in.empty()) {
    for (size_t i = 0; i < na; ++i) {
      if (!(scales_in[i] > 0))
        ctx.fail(ErrorKind::Value, "scales must be positive, got ", scales_in[i]);
      scales[axes[i]] = scales_in[i];
      out[axes[i]] = to_int64(ctx, std::floor(scales_in[i] * x.shape()[axes[i]]), "output size");
    }
  } else {
    const std::string policy = ctx.attr_string("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
      ctx.fail(ErrorKind::Format, "keep_aspect_ratio_policy '", policy, "' is unknown");
    double common = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0;
    for (size_t i = 0; i < na; ++i) {
      if (sizes_in[i] < 1) ctx.fail(ErrorKind::Value, "sizes must be positive, got ", sizes_in[i]);
      const double s = static_cast<double>(sizes_in[i]) / x.shape()[axes[i]];
      common = policy == "not_larger" ? std::min(common, s) : std::max(common, s);
    }
    for (size_t i = 0; i < na; ++i) {
      const int64_t d = axes[i];
      if (policy == "stretch") {
        out[d] = sizes_in[i];
        scales[d] = static_cast<double>(out[d]) / x.shape()[d];
      } else {
        out[d] = to_int64(ctx, std::round(common * x.shape()[d]), "output size");
        scales[d] = common;
      }
    }
  }
  std::vector<double> roi;
  if (a.coord == "tf_crop_and_resize") {
    if (roi_in.size() != 2 * na)
      ctx.fail(ErrorKind::Shape, "roi has ", roi_in.size(), " entries; ", 2 * na,
               " (starts, then ends) expected for tf_crop_and_resize");
    roi.assign(2 * rank, 0.0);
    for (int64_t d = 0; d < rank; ++d) roi[rank + d] = 1.0;
    for (size_t i = 0; i < na; ++i) roi[axes[i]] = roi_in[i], roi[rank + axes[i]] = roi_in[na + i];
  }
  return {resize_to(ctx, x, a, out, scales, roi)};
}

std::vector<Value> upsample_op(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  ResizeAttrs a;
  a.mode = ctx.attr_string("mode", "nearest");
  if (a.mode == "bilinear" || a.mode == "trilinear") a.mode = "linear";
  if (a.mode != "nearest" && a.mode != "linear")
    ctx.fail(ErrorKind::Format, "mode '", a.mode, "' is not nearest or linear");
  a.coord = "asymmetric";
  a.nearest_mode = a.mode == "nearest" ? "simple" : "";
  std::vector<double> scales = ctx.opset() >= 9 ? floats_of(ctx, 1) : ctx.attr_floats("scales");
  if (static_cast<int64_t>(scales.size()) != x.rank())
    ctx.fail(ErrorKind::Shape, "scales has ", scales.size(), " entries; X has rank ", x.rank());
  Shape out = x.shape();
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (!(scales[d] >= 1)) ctx.fail(ErrorKind::Value, "scales must be >= 1, got ", scales[d]);
    out[d] = to_int64(ctx, std::floor(scales[d] * x.shape()[d]), "output size");
  }
  return {resize_to(ctx, x, a, out, scales, {})};
}

// --- GridSample ----------------------------------------------------------------------------
//
// 2-D GridSample with PyTorch's grid_sample semantics (which the ONNX tests reproduce). The
// grid is data, so the source coordinates, taps and weights are all computed on the device; the
// taps are read with GatherElements from X flattened to [N, C, H·W].

struct GridSampler {
  const NodeCtx& ctx;
  Tensor x_flat;  // [N, C, H·W]
  int64_t n, c, h, w, points;
  bool align_corners;
  std::string padding;

  Tensor unnormalize(const Tensor& g, int64_t size) const {
    if (align_corners) return (g + 1.0) * (0.5 * static_cast<double>(size - 1));
    return ((g + 1.0) * static_cast<double>(size) - 1.0) * 0.5;
  }
  // PyTorch's reflect_coordinates over [twice_low / 2, twice_high / 2].
  Tensor reflect(const Tensor& t, int64_t twice_low, int64_t twice_high) const {
    if (twice_low == twice_high) return t * 0.0;
    const double lo = twice_low / 2.0, span = (twice_high - twice_low) / 2.0;
    Tensor in = tessel::abs(t - lo);
    Tensor extra = binary("Mod", in, ctx.scalar_tensor(span, t.dtype()));
    Tensor flips = act("Floor", in / span);
    Tensor even =
        compare_scalar(ctx, "Eq", binary("Mod", flips, ctx.scalar_tensor(2, t.dtype())), 0);
    return where(even, extra + lo, (extra * -1.0) + (span + lo));
  }
  // The padding mode's coordinate transform (none for zeros).
  Tensor pad_coords(const Tensor& t, int64_t size) const {
    if (padding == "border") return clamp(t, 0, static_cast<double>(size - 1));
    if (padding == "reflection") {
      Tensor r = align_corners ? reflect(t, 0, 2 * (size - 1)) : reflect(t, -1, 2 * size - 1);
      return clamp(r, 0, static_cast<double>(size - 1));
    }
    return t;
  }
  // weight · X[iy, ix] for integer-valued coordinate tensors [N, P]; 0 outside the input.
  Tensor tap(const Tensor& ix, const Tensor& iy, const Tensor& weight) const {
    Tensor inside = binary(
        "BitAnd",
        binary("BitAnd", compare_scalar(ctx, "Ge", ix, 0), compare_scalar(ctx, "Le", ix, w - 1.0)),
        binary("BitAnd", compare_scalar(ctx, "Ge", iy, 0), compare_scalar(ctx, "Le", iy, h - 1.0)));
    Tensor xc = clamp(ix, 0, static_cast<double>(w - 1)),
           yc = clamp(iy, 0, static_cast<double>(h - 1));
    Tensor flat = cast(yc * static_cast<double>(w) + xc, DType::I64);
    flat = expand_to(reshape(flat, {n, 1, points}), {n, c, points});
    Tensor v = op1("GatherElements", {x_flat, flat}, {{"axis", 2}});
    Tensor wt = where(inside, weight, ctx.scalar_tensor(0, weight.dtype()));
    return binary("Mul", v, reshape(wt, {n, 1, points}));
  }
};

std::vector<Value> grid_sample_op(NodeCtx& ctx) {
  Tensor x = ctx.in(0), grid = ctx.in(1);
  require_float(ctx, x, "X");
  if (x.rank() != 4)
    ctx.fail(ErrorKind::Unsupported, "only 2-D sampling (X of rank 4) is supported, got X ",
             shape_str(x.shape()));
  const Shape& xs = x.shape();
  const Shape& gs = grid.shape();
  if (grid.rank() != 4 || gs[0] != xs[0] || gs[3] != 2)
    ctx.fail(ErrorKind::Shape, "grid must be [N, H_out, W_out, 2] with X's N, got ", shape_str(gs),
             " for X ", shape_str(xs));
  if (grid.dtype() != x.dtype()) grid = cast(grid, x.dtype());
  std::string mode = ctx.attr_string("mode", ctx.opset() >= 20 ? "linear" : "bilinear");
  if (mode == "linear") mode = "bilinear";
  if (mode == "cubic") mode = "bicubic";
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    ctx.fail(ErrorKind::Format, "mode '", mode, "' is not bilinear, nearest or bicubic");
  const std::string padding = ctx.attr_string("padding_mode", "zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    ctx.fail(ErrorKind::Format, "padding_mode '", padding, "' is not zeros, border or reflection");
  const int64_t points = gs[1] * gs[2];
  GridSampler s{ctx,    reshape(x, {xs[0], xs[1], xs[2] * xs[3]}), xs[0],  xs[1], xs[2], xs[3],
                points, ctx.attr_int("align_corners", 0) != 0,     padding};
  auto component = [&](int64_t i) { return reshape(narrow(grid, 3, i, 1), {xs[0], points}); };
  Tensor ix = s.unnormalize(component(0), xs[3]), iy = s.unnormalize(component(1), xs[2]);
  Tensor one = ctx.scalar_tensor(1, x.dtype());
  Tensor y;
  if (mode == "bicubic") {
    // 4×4 taps around floor(i), each tap's coordinate passed through the padding mode.
    const double A = -0.75;
    auto coeffs = [&](const Tensor& t) {
      auto near = [&](const Tensor& d) { return ((d * (A + 2)) - (A + 3)) * d * d + 1.0; };
      auto far = [&](const Tensor& d) { return (((d * A) - 5 * A) * d + 8 * A) * d - 4 * A; };
      Tensor u = one - t;
      return std::vector<Tensor>{far(t + 1.0), near(t), near(u), far(u + 1.0)};
    };
    Tensor x0 = act("Floor", ix), y0 = act("Floor", iy);
    std::vector<Tensor> cx = coeffs(ix - x0), cy = coeffs(iy - y0);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        Tensor tx = s.pad_coords(x0 + (j - 1.0), xs[3]), ty = s.pad_coords(y0 + (i - 1.0), xs[2]);
        Tensor t = s.tap(tx, ty, cx[j] * cy[i]);
        y = y.defined() ? binary("Add", y, t) : t;
      }
  } else {
    ix = s.pad_coords(ix, xs[3]);
    iy = s.pad_coords(iy, xs[2]);
    if (mode == "nearest") {
      Tensor w1 = expand_to(one, {xs[0], points});
      y = s.tap(act("Round", ix), act("Round", iy), w1);
    } else {
      Tensor x0 = act("Floor", ix), y0 = act("Floor", iy);
      Tensor x1 = x0 + 1.0, y1 = y0 + 1.0;
      Tensor wx1 = ix - x0, wy1 = iy - y0, wx0 = x1 - ix, wy0 = y1 - iy;
      y = binary("Add", binary("Add", s.tap(x0, y0, wx0 * wy0), s.tap(x1, y0, wx1 * wy0)),
                 binary("Add", s.tap(x0, y1, wx0 * wy1), s.tap(x1, y1, wx1 * wy1)));
    }
  }
  return {reshape(y, {xs[0], xs[1], gs[1], gs[2]})};
}

// --- RoiAlign ------------------------------------------------------------------------------
//
// RoiAlign as onnxruntime computes it (the ONNX tests' reference): each output bin averages (or
// takes the max of) a grid of bilinear samples. The sample coordinates come from the ROIs, so
// they are computed on the device; only the largest adaptive grid (sampling_ratio 0), which
// decides the shapes, is read on the host.
std::vector<Value> roi_align_op(NodeCtx& ctx) {
  Tensor x = ctx.in(0), rois = ctx.in(1), batch = ctx.in(2);
  require_float(ctx, x, "X");
  if (x.rank() != 4)
    ctx.fail(ErrorKind::Shape, "X must be [N, C, H, W], got ", shape_str(x.shape()));
  const int64_t r = rois.rank() == 2 ? rois.shape()[0] : -1;
  if (r < 0 || rois.shape()[1] != 4)
    ctx.fail(ErrorKind::Shape, "rois must be [num_rois, 4], got ", shape_str(rois.shape()));
  if (batch.rank() != 1 || batch.shape()[0] != r || !is_integer(batch.dtype()))
    ctx.fail(ErrorKind::Shape, "batch_indices must be an integer [", r, "], got ",
             dtype_name(batch.dtype()), shape_str(batch.shape()));
  const std::string mode = ctx.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max")
    ctx.fail(ErrorKind::Format, "mode '", mode, "' is not avg or max");
  const int64_t out_h = ctx.attr_int("output_height", 1), out_w = ctx.attr_int("output_width", 1);
  const int64_t ratio = ctx.attr_int("sampling_ratio", 0);
  if (out_h < 1 || out_w < 1 || ratio < 0)
    ctx.fail(ErrorKind::Value, "output_height, output_width must be >= 1 and sampling_ratio >= 0");
  const double scale = ctx.attr_float("spatial_scale", 1.0);
  const std::string coord = ctx.attr_string("coordinate_transformation_mode",
                                            ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (coord != "half_pixel" && coord != "output_half_pixel")
    ctx.fail(ErrorKind::Format, "coordinate_transformation_mode '", coord, "' is unknown");
  const bool half = coord == "half_pixel";
  const DType dt = x.dtype();
  const Shape& xs = x.shape();
  const int64_t c = xs[1], h = xs[2], w = xs[3];
  if (rois.dtype() != dt) rois = cast(rois, dt);
  auto col = [&](int64_t i) {
    Tensor v = reshape(narrow(rois, 1, i, 1), {r, 1});
    return v * scale - (half ? 0.5 : 0.0);
  };
  Tensor x0 = col(0), y0 = col(1), rw = col(2) - x0, rh = col(3) - y0;
  if (!half) {
    rw = binary("Max", rw, ctx.scalar_tensor(1, dt));
    rh = binary("Max", rh, ctx.scalar_tensor(1, dt));
  }
  Tensor bin_h = rh / static_cast<double>(out_h), bin_w = rw / static_cast<double>(out_w);
  // Per-ROI grid sizes [r, 1], and the largest (the static sample count per bin).
  Tensor gh, gw;
  int64_t grid_h = ratio, grid_w = ratio;
  if (ratio > 0) {
    gh = gw = ctx.scalar_tensor(static_cast<double>(ratio), dt);
  } else {
    gh = act("Ceil", bin_h);
    gw = act("Ceil", bin_w);
    HostTensor hh = gh.data(), hw = gw.data();
    grid_h = grid_w = 1;
    for (int64_t i = 0; i < r; ++i) {
      grid_h = std::max(grid_h, to_int64(ctx, hh.get_f64(i), "sampling grid height"));
      grid_w = std::max(grid_w, to_int64(ctx, hw.get_f64(i), "sampling grid width"));
    }
  }
  // The samples per axis (out · grid) are materialized as coordinate tensors.
  constexpr int64_t max_samples = int64_t{1} << 24;
  if (grid_h > max_samples / out_h || grid_w > max_samples / out_w)
    ctx.fail(ErrorKind::Value, "a sampling grid of ", grid_h, "x", grid_w, " per bin over ", out_h,
             "x", out_w, " bins exceeds ", max_samples, " samples per axis");
  // Sample coordinates along one axis: start + bin · (p + (i + 0.5) / g), valid while i < g.
  auto samples = [&](const Tensor& start, const Tensor& bin, const Tensor& g, int64_t out,
                     int64_t grid, Tensor* valid) {
    std::vector<double> p(out * grid), i5(out * grid);
    for (int64_t k = 0; k < out * grid; ++k)
      p[k] = static_cast<double>(k / grid), i5[k] = k % grid + 0.5;
    Tensor pv = ctx.constant(HostTensor::from_vector(dt, {1, out * grid}, p));
    Tensor iv = ctx.constant(HostTensor::from_vector(dt, {1, out * grid}, i5));
    *valid = compare("Lt", iv, g);
    return start + bin * pv + (iv * bin) / g;
  };
  Tensor vy, vx;
  Tensor sy = samples(y0, bin_h, gh, out_h, grid_h, &vy);
  Tensor sx = samples(x0, bin_w, gw, out_w, grid_w, &vx);
  const int64_t hs = out_h * grid_h, ws = out_w * grid_w, points = hs * ws;
  Shape grid_shape = {r, hs, ws};
  sy = expand_to(reshape(sy, {r, hs, 1}), grid_shape);
  sx = expand_to(reshape(sx, {r, 1, ws}), grid_shape);
  Tensor valid = binary("BitAnd", expand_to(reshape(vy, {vy.shape()[0], hs, 1}), grid_shape),
                        expand_to(reshape(vx, {vx.shape()[0], 1, ws}), grid_shape));
  Tensor inside = binary("BitAnd",
                         binary("BitAnd", compare_scalar(ctx, "Ge", sy, -1),
                                compare_scalar(ctx, "Le", sy, static_cast<double>(h))),
                         binary("BitAnd", compare_scalar(ctx, "Ge", sx, -1),
                                compare_scalar(ctx, "Le", sx, static_cast<double>(w))));
  // onnxruntime's bilinear rule: clamp at 0, and at the last row / column both taps coincide.
  struct Axis {
    Tensor low, high, l, hcoef;
  };
  auto axis_taps = [&](Tensor v, int64_t size) {
    v = binary("Max", v, ctx.scalar_tensor(0, dt));
    Tensor low = act("Floor", v);
    Tensor top = compare_scalar(ctx, "Ge", low, static_cast<double>(size - 1));
    Tensor last = ctx.scalar_tensor(static_cast<double>(size - 1), dt);
    low = where(top, last, low);
    Tensor high = where(top, last, low + 1.0);
    v = where(top, low, v);
    Tensor l = v - low;
    return Axis{low, high, l, (l * -1.0) + 1.0};
  };
  Axis ay = axis_taps(sy, h), ax = axis_taps(sx, w);
  Tensor data =
      op1("Gather", {reshape(x, {xs[0], c, h * w}), cast(batch, DType::I64)}, {{"axis", 0}});
  Tensor zero = ctx.scalar_tensor(0, dt);
  auto tap = [&](const Tensor& yi, const Tensor& xi, const Tensor& wt) {
    Tensor idx = cast(yi * static_cast<double>(w) + xi, DType::I64);
    idx = expand_to(reshape(idx, {r, 1, points}), {r, c, points});
    Tensor v = op1("GatherElements", {data, idx}, {{"axis", 2}});
    return binary("Mul", v, reshape(where(inside, wt, zero), {r, 1, points}));
  };
  Tensor t1 = tap(ay.low, ax.low, ay.hcoef * ax.hcoef), t2 = tap(ay.low, ax.high, ay.hcoef * ax.l);
  Tensor t3 = tap(ay.high, ax.low, ay.l * ax.hcoef), t4 = tap(ay.high, ax.high, ay.l * ax.l);
  Tensor keep = reshape(valid, {r, 1, points});
  Shape bins = {r, c, out_h, grid_h, out_w, grid_w};
  if (mode == "max") {
    Tensor m = binary("Max", binary("Max", t1, t2), binary("Max", t3, t4));
    m = where(keep, m, ctx.scalar_tensor(-std::numeric_limits<double>::infinity(), dt));
    return {reduce_op("Max", reshape(m, bins), {3, 5}, false)};
  }
  Tensor sum = binary("Add", binary("Add", t1, t2), binary("Add", t3, t4));
  sum = where(keep, sum, zero);
  Tensor total = reduce_op("Sum", reshape(sum, bins), {3, 5}, false);
  Tensor count = binary("Max", gh * gw, ctx.scalar_tensor(1, dt));
  if (count.rank() > 0) count = reshape(count, {r, 1, 1, 1});
  return {binary("Div", total, count)};
}

constexpr Converter kConverters[] = {
    {"", "Resize", resize_op},
    {"", "Upsample", upsample_op},
    {"", "GridSample", grid_sample_op},
    {"", "RoiAlign", roi_align_op},
};

}  // namespace

std::span<const Converter> resample_converters() { return kConverters; }

}  // namespace tessel::onnx
