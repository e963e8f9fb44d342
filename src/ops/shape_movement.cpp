// Shape rules and decompositions of the ShapeMovement category: the layout kinds (Reshape,
// Transpose, Narrow, Concat, Expand, Reverse, Slice, Pad, Clamp, Tile, Trilu, ResizeNearest2x,
// Interpolate3d, Range, Split). The index-driven kinds (Gather*, Scatter*, Embedding, OneHot)
// live in shape_movement_indexing.cpp. Every kind runs natively on the reference backend; the
// decompositions here (Split, Tile, Reverse, ResizeNearest2x, Interpolate3d) are exact rewrites
// into simpler movement kinds for backends that lack a kernel.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ir/builder.h"
#include "ops/rules.h"
#include "ops/shape_util.h"
#include "ops/slice_range.h"

namespace tessel {

void register_rules_ShapeMovementIndexing(RuleTable& table);  // shape_movement_indexing.cpp

namespace {

// Normalizes a list of distinct axes of a rank-`rank` tensor.
std::vector<int> unique_axes(const InferCtx& ctx, const std::vector<int64_t>& axes, int rank,
                             const char* what) {
  std::vector<int> out;
  std::vector<bool> seen(rank, false);
  for (int64_t a : axes) {
    int n = normalize_axis(ctx, a, rank, what);
    if (rank == 0 || seen[n])
      ctx.fail(ErrorKind::Value, what, " ", a, " repeats an axis (or x is a scalar); got ",
               shape_str(axes));
    seen[n] = true;
    out.push_back(n);
  }
  return out;
}

std::vector<TensorType> infer_reshape(const InferCtx& ctx) {
  const TensorType& x = ctx.in(0);
  Shape shape = ctx.attrs().ints("shape");
  int infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer_at >= 0) ctx.fail(ErrorKind::Shape, "shape ", shape_str(shape), " has two -1");
      infer_at = static_cast<int>(i);
    } else if (shape[i] < 0) {
      ctx.fail(ErrorKind::Shape, "shape ", shape_str(shape),
               " has a negative dimension (only one -1 is allowed)");
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      ctx.fail(ErrorKind::Shape, "shape ", shape_str(shape), " overflows int64");
    }
  }
  if (infer_at >= 0) {
    if (known == 0)
      ctx.fail(ErrorKind::Shape, "cannot infer the -1 of ", shape_str(shape),
               " when the other dimensions multiply to 0");
    if (x.numel() % known != 0)
      ctx.fail(ErrorKind::Shape, "cannot reshape ", x.str(), " (", x.numel(), " elements) to ",
               shape_str(shape));
    shape[infer_at] = x.numel() / known;
  } else if (known != x.numel()) {
    ctx.fail(ErrorKind::Shape, "cannot reshape ", x.str(), " (", x.numel(), " elements) to ",
             shape_str(shape), " (", known, " elements)");
  }
  return {{x.dtype, shape}};
}

std::vector<TensorType> infer_transpose(const InferCtx& ctx) {
  const TensorType& x = ctx.in(0);
  const auto& perm = ctx.attrs().ints("perm");
  if (static_cast<int>(perm.size()) != x.rank())
    ctx.fail(ErrorKind::Shape, "perm ", shape_str(perm), " must have ", x.rank(), " entries");
  std::vector<bool> seen(perm.size(), false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= x.rank() || seen[p])
      ctx.fail(ErrorKind::Value, "perm ", shape_str(perm), " is not a permutation of [0, ",
               x.rank(), ")");
    seen[p] = true;
    out.push_back(x.shape[p]);
  }
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_narrow(const InferCtx& ctx) {
  const TensorType& x = ctx.in(0);
  if (x.rank() < 1) ctx.fail(ErrorKind::Shape, "x must have rank >= 1, got ", x.str());
  int axis = normalize_axis(ctx, ctx.attrs().i("axis"), x.rank());
  int64_t dim = x.shape[axis];
  int64_t start = ctx.attrs().i("start"), length = ctx.attrs().i("length");
  if (start < 0) start += dim;
  if (start < 0 || length < 0 || start > dim || length > dim - start)
    ctx.fail(ErrorKind::Value, "start ", ctx.attrs().i("start"), " length ", length,
             " do not fit axis ", axis, " of size ", dim,
             " (need length >= 0 and start + length <= size after wrapping start once)");
  Shape out = x.shape;
  out[axis] = length;
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_concat(const InferCtx& ctx) {
  if (ctx.num_inputs() < 1) ctx.fail(ErrorKind::Value, "needs at least one input");
  DType dtype = same_dtype(ctx, {0});
  const TensorType& first = ctx.in(0);
  if (first.rank() < 1) ctx.fail(ErrorKind::Shape, "inputs must have rank >= 1, got ", first.str());
  int axis = normalize_axis(ctx, ctx.attrs().i("axis"), first.rank());
  Shape out = first.shape;
  out[axis] = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType& t = ctx.in(i);
    if (t.dtype != dtype)
      ctx.fail(ErrorKind::DType, "inputs must share one dtype; input ", i, " is ", t.str());
    if (t.rank() != first.rank())
      ctx.fail(ErrorKind::Shape, "inputs must share one rank; input ", i, " is ", t.str());
    for (int d = 0; d < t.rank(); ++d)
      if (d != axis && t.shape[d] != first.shape[d])
        ctx.fail(ErrorKind::Shape, "input ", i, " is ", t.str(), "; every dimension but axis ",
                 axis, " must equal input 0's ", first.str());
    out[axis] += t.shape[axis];
  }
  return {{dtype, out}};
}

std::vector<TensorType> infer_expand(const InferCtx& ctx) {
  const TensorType& x = ctx.in(0);
  const Shape& shape = ctx.attrs().ints("shape");
  for (int64_t d : shape)
    if (d < 0) ctx.fail(ErrorKind::Shape, "shape ", shape_str(shape), " has a negative dimension");
  auto out = broadcast_shapes(x.shape, shape);
  if (!out)
    ctx.fail(ErrorKind::Shape, "cannot broadcast ", x.str(), " with shape ", shape_str(shape));
  return {{x.dtype, *out}};
}

std::vector<TensorType> infer_reverse(const InferCtx& ctx) {
  unique_axes(ctx, ctx.attrs().ints("axes"), ctx.in(0).rank(), "axis");
  return {ctx.in(0)};
}

// ONNX Slice (opset 13): one entry per sliced axis; everything here mirrors the spec's clamping.
std::vector<TensorType> infer_slice(const InferCtx& ctx) {
  const TensorType& x = ctx.in(0);
  const auto& starts = ctx.attrs().ints("starts");
  const auto& ends = ctx.attrs().ints("ends");
  std::vector<int64_t> axes = ctx.attrs().ints("axes");
  std::vector<int64_t> steps = ctx.attrs().ints("steps");
  size_t n = starts.size();
  if (ends.size() != n)
    ctx.fail(ErrorKind::Value, "starts ", shape_str(starts), " and ends ", shape_str(ends),
             " must have the same length");
  if (axes.empty()) {
    if (n > static_cast<size_t>(x.rank()))
      ctx.fail(ErrorKind::Value, n, " starts given for rank ", x.rank());
    axes.resize(n);
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(n, 1);
  if (axes.size() != n || steps.size() != n)
    ctx.fail(ErrorKind::Value, "axes ", shape_str(axes), " and steps ", shape_str(steps),
             " must have one entry per start (", n, ")");
  std::vector<int> ax = unique_axes(ctx, axes, x.rank(), "axis");
  Shape out = x.shape;
  for (size_t i = 0; i < n; ++i) {
    int64_t dim = x.shape[ax[i]], step = steps[i];
    if (step == 0) ctx.fail(ErrorKind::Value, "steps must be nonzero, got ", shape_str(steps));
    out[ax[i]] = slice_range(starts[i], ends[i], step, dim).length;
  }
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_pad(const InferCtx& ctx) {
  const TensorType& x = ctx.in(0);
  const auto& pads = ctx.attrs().ints("pads");
  int r = x.rank();
  if (static_cast<int>(pads.size()) != 2 * r)
    ctx.fail(ErrorKind::Value, "pads ", shape_str(pads), " must have 2 * rank = ", 2 * r,
             " entries [begin_0.., end_0..]");
  auto mode = ctx.attrs().e<PadMode>("mode");
  Shape out = x.shape;
  for (int d = 0; d < r; ++d) {
    int64_t dim = x.shape[d], begin = pads[d], end = pads[d + r];
    if (__builtin_add_overflow(dim, begin, &out[d]) || __builtin_add_overflow(out[d], end, &out[d]))
      ctx.fail(ErrorKind::Value, "pads ", shape_str(pads), " overflow int64");
    if (out[d] < 0)
      ctx.fail(ErrorKind::Value, "pads ", shape_str(pads), " crop axis ", d, " of size ", dim,
               " below zero");
    int64_t most = std::max(begin, end);
    if (most <= 0 || out[d] == 0) continue;
    switch (mode) {
      case PadMode::Constant:
        break;
      case PadMode::Reflect:
        if (most >= dim)
          ctx.fail(ErrorKind::Value, "reflect padding ", most, " of axis ", d, " must be < size ",
                   dim);
        break;
      case PadMode::Replicate:
        if (dim == 0) ctx.fail(ErrorKind::Value, "cannot replicate-pad empty axis ", d);
        break;
      case PadMode::Circular:
        if (most > dim)
          ctx.fail(ErrorKind::Value, "circular padding ", most, " of axis ", d, " must be <= size ",
                   dim);
        break;
    }
  }
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_clamp(const InferCtx& ctx) {
  double lo = ctx.attrs().f("min"), hi = ctx.attrs().f("max");
  if (std::isnan(lo) || std::isnan(hi))
    ctx.fail(ErrorKind::Value, "min and max must not be NaN, got ", lo, " and ", hi);
  require_dtype(ctx, 0, dtypes::kNumeric | dtypes::kFp8, "x");
  return {ctx.in(0)};
}

std::vector<TensorType> infer_tile(const InferCtx& ctx) {
  const TensorType& x = ctx.in(0);
  const auto& repeats = ctx.attrs().ints("repeats");
  if (static_cast<int>(repeats.size()) != x.rank())
    ctx.fail(ErrorKind::Value, "repeats ", shape_str(repeats), " must have ", x.rank(), " entries");
  Shape out = x.shape;
  for (int d = 0; d < x.rank(); ++d) {
    if (repeats[d] < 0) ctx.fail(ErrorKind::Value, "repeats ", shape_str(repeats), " must be >= 0");
    if (__builtin_mul_overflow(out[d], repeats[d], &out[d]))
      ctx.fail(ErrorKind::Value, "repeats ", shape_str(repeats), " overflow int64");
  }
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_trilu(const InferCtx& ctx) {
  if (ctx.in(0).rank() < 2)
    ctx.fail(ErrorKind::Shape, "x must have rank >= 2, got ", ctx.in(0).str());
  return {ctx.in(0)};
}

std::vector<TensorType> infer_resize_nearest2x(const InferCtx& ctx) {
  TensorType y = ctx.in(0);
  if (y.rank() < 2) ctx.fail(ErrorKind::Shape, "x must have rank >= 2, got ", y.str());
  y.shape[y.rank() - 1] *= 2;
  y.shape[y.rank() - 2] *= 2;
  return {y};
}

std::vector<TensorType> infer_interpolate3d(const InferCtx& ctx) {
  TensorType y = ctx.in(0);
  if (y.rank() != 5) ctx.fail(ErrorKind::Shape, "x must be [N, C, D, H, W], got ", y.str());
  const auto& size = ctx.attrs().ints("size");
  if (size.size() != 3)
    ctx.fail(ErrorKind::Value, "size ", shape_str(size), " must have 3 entries (D, H, W)");
  for (int i = 0; i < 3; ++i) {
    if (size[i] <= 0) ctx.fail(ErrorKind::Value, "size ", shape_str(size), " must be positive");
    if (y.shape[2 + i] == 0)
      ctx.fail(ErrorKind::Shape, "cannot resample empty spatial axis ", 2 + i, " of ", y.str());
    y.shape[2 + i] = size[i];
  }
  return {y};
}

std::vector<TensorType> infer_range(const InferCtx& ctx) {
  DType dtype = ctx.attrs().dtype("dtype");
  if (!(dtypes::kNumeric | dtypes::kFp8).contains(dtype))
    ctx.fail(ErrorKind::DType, "dtype ", dtype_name(dtype), " must be a float or integer dtype");
  double start = ctx.attrs().f("start"), limit = ctx.attrs().f("limit");
  double delta = ctx.attrs().f("delta");
  if (!std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    ctx.fail(ErrorKind::Value, "start, limit and delta must be finite");
  if (delta == 0) ctx.fail(ErrorKind::Value, "delta must be nonzero");
  if (is_integer(dtype)) {
    for (double v : {start, limit, delta})
      if (v != std::floor(v) || std::abs(v) > 9.0e15)
        ctx.fail(ErrorKind::Value, "start ", start, ", limit ", limit, " and delta ", delta,
                 " must be integral (|v| < 9e15) for ", dtype_name(dtype));
  }
  double length = std::max(std::ceil((limit - start) / delta), 0.0);
  if (is_integer(dtype)) {  // exactly, in integers
    auto s = static_cast<int64_t>(start), l = static_cast<int64_t>(limit);
    auto d = static_cast<int64_t>(delta);
    int64_t span = d > 0 ? l - s : s - l, step = d > 0 ? d : -d;
    length = span > 0 ? static_cast<double>((span + step - 1) / step) : 0.0;
  }
  if (length > 4.0e12) ctx.fail(ErrorKind::Value, "the range has ", length, " elements");
  return {{dtype, {static_cast<int64_t>(length)}}};
}

std::vector<TensorType> infer_split(const InferCtx& ctx) {
  const TensorType& x = ctx.in(0);
  if (x.rank() < 1) ctx.fail(ErrorKind::Shape, "x must have rank >= 1, got ", x.str());
  int axis = normalize_axis(ctx, ctx.attrs().i("axis"), x.rank());
  const auto& sizes = ctx.attrs().ints("sizes");
  if (sizes.empty()) ctx.fail(ErrorKind::Value, "sizes must have at least one entry");
  int64_t total = 0;
  std::vector<TensorType> outs;
  for (int64_t s : sizes) {
    if (s < 0) ctx.fail(ErrorKind::Value, "sizes ", shape_str(sizes), " must be >= 0");
    total += s;
    TensorType t = x;
    t.shape[axis] = s;
    outs.push_back(t);
  }
  if (total != x.shape[axis])
    ctx.fail(ErrorKind::Value, "sizes ", shape_str(sizes), " sum to ", total, ", not axis ", axis,
             "'s size ", x.shape[axis]);
  return outs;
}

// ---- Decompositions (exact rewrites into Narrow / Reshape / Expand / Slice / Gather) --------

std::vector<Value> decompose_split(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  int64_t axis = node.attrs.i("axis"), start = 0;
  std::vector<Value> outs;
  for (int64_t s : node.attrs.ints("sizes")) {
    outs.push_back(b.narrow(in[0], axis, start, s));
    start += s;
  }
  return outs;
}

// x [d0, d1, ...] -> [1, d0, 1, d1, ...] -> expand to [r0, d0, r1, d1, ...] -> [r0·d0, ...].
std::vector<Value> decompose_tile(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  const Shape& x = b.type(in[0]).shape;
  const auto& repeats = node.attrs.ints("repeats");
  Shape split, expanded;
  for (size_t d = 0; d < x.size(); ++d) {
    split.insert(split.end(), {1, x[d]});
    expanded.insert(expanded.end(), {repeats[d], x[d]});
  }
  Value v = b.expand(b.reshape(in[0], split), expanded);
  return {b.reshape(v, node.outputs[0].shape)};
}

// Reverse = Slice with step -1 from the last element past the first.
std::vector<Value> decompose_reverse(Graph& g, const Node& node, std::span<const Value> in) {
  const auto& axes = node.attrs.ints("axes");
  if (axes.empty()) return {GraphBuilder(g).reshape(in[0], node.outputs[0].shape)};
  size_t n = axes.size();
  Attrs a;
  a.set("starts", std::vector<int64_t>(n, -1))
      .set("ends", std::vector<int64_t>(n, std::numeric_limits<int64_t>::min()))
      .set("axes", axes)
      .set("steps", std::vector<int64_t>(n, -1));
  return {g.add1(OpKind::Slice, a, {in[0]})};
}

// x [..., H, W] -> [..., H, 1, W, 1] -> expand [..., H, 2, W, 2] -> [..., 2H, 2W].
std::vector<Value> decompose_resize_nearest2x(Graph& g, const Node& node,
                                              std::span<const Value> in) {
  GraphBuilder b(g);
  Shape s = b.type(in[0]).shape;
  int64_t h = s[s.size() - 2], w = s[s.size() - 1];
  s.resize(s.size() - 2);
  Shape split = s, expanded = s;
  split.insert(split.end(), {h, 1, w, 1});
  expanded.insert(expanded.end(), {h, 2, w, 2});
  Value v = b.expand(b.reshape(in[0], split), expanded);
  return {b.reshape(v, node.outputs[0].shape)};
}

// One Gather per spatial axis with constant source indices floor(dst · in / out).
std::vector<Value> decompose_interpolate3d(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  Value v = in[0];
  const Shape& x = b.type(in[0]).shape;
  const auto& size = node.attrs.ints("size");
  for (int i = 0; i < 3; ++i) {
    int64_t from = x[2 + i], to = size[i];
    if (from == to) continue;
    HostTensor idx = HostTensor::empty(DType::I64, {to});
    for (int64_t o = 0; o < to; ++o) idx.set_i64(o, o * from / to);
    v = b.gather(v, g.constant(std::move(idx)), 2 + i);
  }
  if (v == in[0]) v = b.reshape(v, node.outputs[0].shape);  // keep one node per output
  return {v};
}

}  // namespace

void register_rules_ShapeMovement(RuleTable& table) {
  table[OpKind::Reshape].infer = infer_reshape;
  table[OpKind::Transpose].infer = infer_transpose;
  table[OpKind::Narrow].infer = infer_narrow;
  table[OpKind::Concat].infer = infer_concat;
  table[OpKind::Expand].infer = infer_expand;
  table[OpKind::Reverse].infer = infer_reverse;
  table[OpKind::Reverse].decompose = decompose_reverse;
  table[OpKind::Slice].infer = infer_slice;
  table[OpKind::Pad].infer = infer_pad;
  table[OpKind::Clamp].infer = infer_clamp;
  table[OpKind::Tile].infer = infer_tile;
  table[OpKind::Tile].decompose = decompose_tile;
  table[OpKind::Trilu].infer = infer_trilu;
  table[OpKind::ResizeNearest2x].infer = infer_resize_nearest2x;
  table[OpKind::ResizeNearest2x].decompose = decompose_resize_nearest2x;
  table[OpKind::Interpolate3d].infer = infer_interpolate3d;
  table[OpKind::Interpolate3d].decompose = decompose_interpolate3d;
  table[OpKind::Range].infer = infer_range;
  table[OpKind::Split].infer = infer_split;
  table[OpKind::Split].decompose = decompose_split;
  register_rules_ShapeMovementIndexing(table);
}

}  // namespace tessel
