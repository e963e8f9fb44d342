// Shape and data-movement ONNX ops: Identity, Constant, Shape, Size, Reshape, Flatten, Squeeze,
// Unsqueeze, Transpose, Concat, Split, Slice, Gather*, Scatter*, Expand, Tile, Pad,
// ConstantOfShape, Range, DepthToSpace, SpaceToDepth, Trilu, OneHot, EyeLike, Compress, NonZero,
// ReverseSequence, Unique, CenterCropPad.
//
// Values that decide shapes or attributes (a Reshape's shape, Slice's starts, a Range's limits)
// are read on the host; data is moved by Tessel ops on the run's device. The ops whose output
// shape depends on data (Compress, NonZero) read the mask on the host, derive index tensors from
// it, and gather the data on the device; Unique computes on the device and reads only its count.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "frontends/onnx/convert_util.h"

namespace tessel::onnx {
namespace {

// --- helpers ------------------------------------------------------------------------------------

Tensor reshape_to(const Tensor& x, const Shape& shape) {
  return op1("Reshape", {x}, {{"shape", shape}});
}

// The shape of a tensor or string tensor input.
Shape shape_of(const NodeCtx& ctx, int i) {
  const Value& v = ctx.value(i);
  if (v.kind == Value::Kind::Tensor) return v.tensor.shape();
  if (v.kind == Value::Kind::Strings) return v.shape;
  ctx.fail(ErrorKind::DType, "input ", i, " is ", v.describe(), "; a tensor is needed");
}

// Input `i` with a new shape of as many elements; string tensors keep their row-major strings.
Value reshaped(const NodeCtx& ctx, int i, const Shape& shape) {
  const Value& v = ctx.value(i);
  if (v.kind == Value::Kind::Strings) {
    if (shape_numel(shape) != shape_numel(v.shape))
      ctx.fail(ErrorKind::Shape, "cannot reshape string", shape_str(v.shape), " to ",
               shape_str(shape));
    return Value::string_tensor(shape, v.strings);
  }
  return reshape_to(ctx.in(i), shape);
}

// An integer attribute list (opset < `from_opset`) or an optional integer input (later).
std::vector<int64_t> attr_or_input(const NodeCtx& ctx, std::string_view attr, int from_opset,
                                   int input) {
  if (ctx.opset() < from_opset) return ctx.attr_ints(attr);
  return ctx.has(input) ? ctx.ints(input) : std::vector<int64_t>{};
}

// Distinct axes normalized against `rank`.
std::vector<int64_t> normalize_axes(const NodeCtx& ctx, std::vector<int64_t> axes, int64_t rank) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank)
      ctx.fail(ErrorKind::Shape, "axis ", a, " is out of range for rank ", rank);
    if (a < 0) a += rank;
    if (seen[a]) ctx.fail(ErrorKind::Value, "axes ", shape_str(axes), " repeat axis ", a);
    seen[a] = true;
  }
  return axes;
}

Tensor int64_scalar(const NodeCtx& ctx, int64_t v) {
  HostTensor t = HostTensor::empty(DType::I64, {});
  t.set_i64(0, v);
  return ctx.constant(std::move(t));
}

// 0, 1, ..., n-1 as i64 on the run's device.
Tensor iota(const NodeCtx& ctx, int64_t n) {
  return op1(
      "Range", {},
      {{"start", 0.0}, {"limit", static_cast<double>(n)}, {"delta", 1.0}, {"dtype", DType::I64}},
      ctx.device());
}

// Indices derived on the host (from a host-read mask or shape) as an i64 tensor.
Tensor index_tensor(const NodeCtx& ctx, const std::vector<int64_t>& idx) {
  return ctx.vector_tensor(idx, DType::I64);
}

// An axis of a tensor of rank >= 1.
int64_t axis_of(const NodeCtx& ctx, int64_t axis, int64_t rank) {
  if (rank < 1) ctx.fail(ErrorKind::Shape, "the input must have rank >= 1, not be a scalar");
  return normalize_axis(ctx, axis, rank);
}

// --- Identity, Constant, Shape, Size ------------------------------------------------------------

std::vector<Value> identity(NodeCtx& ctx) { return {ctx.value(0)}; }

std::vector<Value> constant(NodeCtx& ctx) {
  if (ctx.has_attr("value")) return {ctx.attr_tensor("value")};
  if (ctx.has_attr("sparse_value")) return {ctx.attr_sparse_tensor("sparse_value")};
  if (ctx.has_attr("value_float"))
    return {ctx.scalar_tensor(ctx.attr_float("value_float"), DType::F32)};
  if (ctx.has_attr("value_floats"))
    return {ctx.vector_tensor(ctx.attr_floats("value_floats"), DType::F32)};
  if (ctx.has_attr("value_int")) return {int64_scalar(ctx, ctx.attr_int("value_int"))};
  if (ctx.has_attr("value_ints"))
    return {ctx.vector_tensor(ctx.attr_ints("value_ints"), DType::I64)};
  if (ctx.has_attr("value_string"))
    return {Value::string_tensor({}, {ctx.attr_string("value_string")})};
  if (ctx.has_attr("value_strings")) {
    std::vector<std::string> s = ctx.attr_strings("value_strings");
    const auto n = static_cast<int64_t>(s.size());
    return {Value::string_tensor({n}, std::move(s))};
  }
  ctx.fail(ErrorKind::Format, "has none of the attributes value, value_float(s), value_int(s), ",
           "value_string(s)");
}

std::vector<Value> shape_op(NodeCtx& ctx) {
  const Shape s = shape_of(ctx, 0);
  const auto r = static_cast<int64_t>(s.size());
  int64_t start = ctx.opset() >= 15 ? ctx.attr_int("start", 0) : 0;
  int64_t end = ctx.opset() >= 15 ? ctx.attr_int("end", r) : r;
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  std::vector<int64_t> dims(s.begin() + start, s.begin() + std::max(start, end));
  return {index_tensor(ctx, dims)};
}

std::vector<Value> size_op(NodeCtx& ctx) {
  return {int64_scalar(ctx, shape_numel(shape_of(ctx, 0)))};
}

// --- Reshape, Flatten, Squeeze, Unsqueeze -------------------------------------------------------

std::vector<Value> reshape(NodeCtx& ctx) {
  const Shape in = shape_of(ctx, 0);
  std::vector<int64_t> target = ctx.opset() < 5 ? ctx.attr_ints("shape") : ctx.ints(1);
  const bool allowzero = ctx.opset() >= 14 && ctx.attr_int("allowzero", 0) != 0;
  int infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allowzero) {
      if (i >= in.size())
        ctx.fail(ErrorKind::Shape, "shape ", shape_str(target), " copies dimension ", i,
                 " (0) of input ", shape_str(in), ", which has no such dimension");
      target[i] = in[i];
    }
    if (target[i] == -1) {
      if (infer_at >= 0) ctx.fail(ErrorKind::Shape, "shape ", shape_str(target), " has two -1");
      infer_at = static_cast<int>(i);
    } else if (target[i] < 0) {
      ctx.fail(ErrorKind::Shape, "shape ", shape_str(target), " has a negative dimension");
    } else {
      known *= target[i];
    }
  }
  const int64_t n = shape_numel(in);
  if (infer_at >= 0) {
    if (known == 0 || n % known != 0)
      ctx.fail(ErrorKind::Shape, "cannot infer the -1 of ", shape_str(target), " for input ",
               shape_str(in));
    target[infer_at] = n / known;
  } else if (known != n) {
    ctx.fail(ErrorKind::Shape, "cannot reshape ", shape_str(in), " (", n, " elements) to ",
             shape_str(target));
  }
  return {reshaped(ctx, 0, target)};
}

std::vector<Value> flatten(NodeCtx& ctx) {
  const Shape in = shape_of(ctx, 0);
  const auto r = static_cast<int64_t>(in.size());
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < -r || axis > r)
    ctx.fail(ErrorKind::Shape, "axis ", axis, " is out of range for rank ", r);
  if (axis < 0) axis += r;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < r; ++d) (d < axis ? outer : inner) *= in[d];
  return {reshaped(ctx, 0, {outer, inner})};
}

std::vector<Value> squeeze(NodeCtx& ctx) {
  const Shape in = shape_of(ctx, 0);
  const auto r = static_cast<int64_t>(in.size());
  // No axes (or an empty list, as onnxruntime reads it): every axis of size 1.
  std::vector<int64_t> axes = normalize_axes(ctx, attr_or_input(ctx, "axes", 13, 1), r);
  const bool given = !axes.empty();
  std::vector<bool> drop(static_cast<size_t>(r), false);
  if (!given) {
    for (int64_t d = 0; d < r; ++d) drop[d] = in[d] == 1;
  } else {
    for (int64_t a : axes) {
      if (in[a] != 1)
        ctx.fail(ErrorKind::Shape, "cannot squeeze axis ", a, " of size ", in[a], " (input ",
                 shape_str(in), ")");
      drop[a] = true;
    }
  }
  Shape out;
  for (int64_t d = 0; d < r; ++d)
    if (!drop[d]) out.push_back(in[d]);
  return {reshaped(ctx, 0, out)};
}

std::vector<Value> unsqueeze(NodeCtx& ctx) {
  const Shape in = shape_of(ctx, 0);
  if (ctx.opset() < 13 ? !ctx.has_attr("axes") : !ctx.has(1))
    ctx.fail(ErrorKind::Format, "axes are required");
  std::vector<int64_t> axes = attr_or_input(ctx, "axes", 13, 1);
  const auto r = static_cast<int64_t>(in.size() + axes.size());
  axes = normalize_axes(ctx, axes, r);
  std::vector<bool> inserted(static_cast<size_t>(r), false);
  for (int64_t a : axes) inserted[a] = true;
  Shape out;
  for (int64_t d = 0, k = 0; d < r; ++d) out.push_back(inserted[d] ? 1 : in[k++]);
  return {reshaped(ctx, 0, out)};
}

// --- Transpose, Concat, Split, Slice ------------------------------------------------------------

std::vector<Value> transpose(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  std::vector<int64_t> perm(static_cast<size_t>(x.rank()));
  std::iota(perm.rbegin(), perm.rend(), 0);
  perm = ctx.attr_ints("perm", perm);
  return {op1("Transpose", {x}, {{"perm", perm}})};
}

std::vector<Value> concat(NodeCtx& ctx) {
  if (ctx.num_inputs() == 0) ctx.fail(ErrorKind::Format, "needs at least one input");
  std::vector<Tensor> xs;
  for (int i = 0; i < ctx.num_inputs(); ++i) xs.push_back(ctx.in(i));
  const int64_t axis = ctx.opset() < 4 ? ctx.attr_int("axis", 1) : ctx.attr_int("axis");
  return {op1("Concat", xs, {{"axis", axis_of(ctx, axis, xs[0].rank())}})};
}

std::vector<Value> split(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  const int64_t axis = axis_of(ctx, ctx.attr_int("axis", 0), x.rank());
  const int64_t dim = x.shape()[axis];
  std::vector<int64_t> sizes = ctx.opset() < 13 ? ctx.attr_ints("split")
                               : ctx.has(1)     ? ctx.ints(1)
                                                : std::vector<int64_t>{};
  if (ctx.opset() < 2 && sizes.empty() && ctx.has(1)) sizes = ctx.ints(1);  // Split-1's input
  if (sizes.empty()) {
    if (ctx.opset() >= 18 && ctx.has_attr("num_outputs")) {
      // Parts of ceil(dim / n); the last one takes what is left.
      const int64_t n = ctx.attr_int("num_outputs");
      if (n < 1 || n != ctx.num_outputs())
        ctx.fail(ErrorKind::Value, "num_outputs ", n, " must be >= 1 and match the node's ",
                 ctx.num_outputs(), " outputs");
      const int64_t chunk = (dim + n - 1) / n;
      for (int64_t i = 0, left = dim; i < n; ++i, left -= chunk)
        sizes.push_back(std::clamp<int64_t>(left, 0, chunk));
    } else {
      const int64_t n = ctx.num_outputs();
      if (n < 1 || dim % n != 0)
        ctx.fail(ErrorKind::Shape, "cannot split axis ", axis, " of size ", dim, " into ", n,
                 " equal parts");
      sizes.assign(static_cast<size_t>(n), dim / n);
    }
  }
  if (static_cast<int64_t>(sizes.size()) != ctx.num_outputs())
    ctx.fail(ErrorKind::Value, "split ", shape_str(sizes), " has ", sizes.size(), " entries for ",
             ctx.num_outputs(), " outputs");
  return values(tessel::op("Split", {x}, {{"axis", axis}, {"sizes", sizes}}));
}

std::vector<Value> slice(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.attr_ints("starts");
    ends = ctx.attr_ints("ends");
    axes = ctx.attr_ints("axes");
  } else {
    starts = ctx.ints(1);
    ends = ctx.ints(2);
    if (ctx.has(3)) axes = ctx.ints(3);
    if (ctx.has(4)) steps = ctx.ints(4);
  }
  if (ends.size() != starts.size())
    ctx.fail(ErrorKind::Shape, "starts ", shape_str(starts), " and ends ", shape_str(ends),
             " differ in length");
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    ctx.fail(ErrorKind::Shape, "axes ", shape_str(axes), " and steps ", shape_str(steps),
             " must have one entry per start (", starts.size(), ")");
  axes = normalize_axes(ctx, axes, x.rank());
  for (int64_t s : steps)
    if (s == 0) ctx.fail(ErrorKind::Value, "steps ", shape_str(steps), " must be nonzero");
  return {
      op1("Slice", {x}, {{"starts", starts}, {"ends", ends}, {"axes", axes}, {"steps", steps}})};
}

// --- Gather / Scatter ---------------------------------------------------------------------------

std::vector<Value> gather(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  const int64_t axis = axis_of(ctx, ctx.attr_int("axis", 0), x.rank());
  return {op1("Gather", {x, ctx.in(1)}, {{"axis", axis}})};
}

std::vector<Value> gather_elements(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  const int64_t axis = axis_of(ctx, ctx.attr_int("axis", 0), x.rank());
  return {op1("GatherElements", {x, ctx.in(1)}, {{"axis", axis}})};
}

std::vector<Value> gather_nd(NodeCtx& ctx) {
  return {op1("GatherNd", {ctx.in(0), ctx.in(1)}, {{"batch_dims", ctx.attr_int("batch_dims", 0)}})};
}

std::string scatter_reduction(const NodeCtx& ctx) {
  const std::string r = ctx.opset() >= 16 ? ctx.attr_string("reduction", "none") : "none";
  if (r == "none") return "None";
  if (r == "add") return "Add";
  if (r == "mul") return "Mul";
  if (ctx.opset() >= 18 && r == "max") return "Max";
  if (ctx.opset() >= 18 && r == "min") return "Min";
  ctx.fail(ErrorKind::Format, "reduction '", r, "' is not one of none, add, mul",
           ctx.opset() >= 18 ? ", max, min" : "");
}

// Scatter (opset 9-10) is ScatterElements without a reduction.
std::vector<Value> scatter_elements(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  const int64_t axis = axis_of(ctx, ctx.attr_int("axis", 0), x.rank());
  const std::string reduction = ctx.op_type() == "Scatter" ? "None" : scatter_reduction(ctx);
  return {op1("ScatterElements", {x, ctx.in(1), ctx.in(2)},
              {{"axis", axis}, {"reduction", reduction}})};
}

std::vector<Value> scatter_nd(NodeCtx& ctx) {
  return {
      op1("ScatterNd", {ctx.in(0), ctx.in(1), ctx.in(2)}, {{"reduction", scatter_reduction(ctx)}})};
}

// --- Expand, Tile, Pad, ConstantOfShape, Range --------------------------------------------------

std::vector<Value> expand(NodeCtx& ctx) { return {expand_to(ctx.in(0), ctx.ints(1))}; }

std::vector<Value> tile(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  std::vector<int64_t> repeats;
  if (ctx.opset() < 6) {  // Tile-1: a number of tiles along one axis
    repeats.assign(static_cast<size_t>(x.rank()), 1);
    const int64_t axis = axis_of(ctx, scalar_int(ctx, 2, "axis"), x.rank());
    repeats[axis] = scalar_int(ctx, 1, "tiles");
  } else {
    repeats = ctx.ints(1);
  }
  if (static_cast<int64_t>(repeats.size()) != x.rank())
    ctx.fail(ErrorKind::Shape, "repeats ", shape_str(repeats), " must have one entry per axis of ",
             shape_str(x.shape()));
  return {op1("Tile", {x}, {{"repeats", repeats}})};
}

std::vector<Value> pad(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  const int64_t r = x.rank();
  const std::string mode = ctx.attr_string("mode", "constant");
  std::string kind;
  if (mode == "constant")
    kind = "Constant";
  else if (mode == "reflect")
    kind = "Reflect";
  else if (mode == "edge")
    kind = "Replicate";
  else if (mode == "wrap" && ctx.opset() >= 19)
    kind = "Circular";
  else
    ctx.fail(ErrorKind::Format, "mode '", mode, "' is not one of constant, reflect, edge",
             ctx.opset() >= 19 ? ", wrap" : "");
  std::vector<int64_t> pads, axes;
  double value = 0;
  if (ctx.opset() < 11) {
    pads = ctx.attr_ints(ctx.opset() < 2 ? "paddings" : "pads");
    value = ctx.attr_float("value", 0.0);
  } else {
    pads = ctx.ints(1);
    if (ctx.has(2)) value = ctx.scalar(2);
    if (ctx.has(3)) axes = ctx.ints(3);
  }
  if (axes.empty()) {
    axes.resize(static_cast<size_t>(r));
    std::iota(axes.begin(), axes.end(), 0);
  }
  axes = normalize_axes(ctx, axes, r);
  const auto n = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(pads.size()) != 2 * n)
    ctx.fail(ErrorKind::Shape, "pads ", shape_str(pads), " must have 2 * ", n, " entries");
  std::vector<int64_t> full(static_cast<size_t>(2 * r), 0);
  for (int64_t i = 0; i < n; ++i) {
    full[axes[i]] = pads[i];
    full[axes[i] + r] = pads[i + n];
  }
  return {op1("Pad", {x}, {{"pads", full}, {"mode", kind}, {"value", value}})};
}

std::vector<Value> constant_of_shape(NodeCtx& ctx) {
  std::vector<int64_t> shape = ctx.ints(0);
  for (int64_t d : shape)
    if (d < 0) ctx.fail(ErrorKind::Shape, "shape ", shape_str(shape), " has a negative dimension");
  Tensor v = ctx.scalar_tensor(0, DType::F32);
  if (ctx.has_attr("value")) {
    Value a = ctx.attr_tensor("value");
    if (!a.is_tensor() || a.tensor.numel() != 1)
      ctx.fail(ErrorKind::Value, "attribute 'value' must be a one-element tensor, not ",
               a.describe());
    v = reshape_to(a.tensor, {});
  }
  return {expand_to(v, shape)};
}

std::vector<Value> range(NodeCtx& ctx) {
  const DType dt = ctx.in(0).dtype();
  if (ctx.in(1).dtype() != dt || ctx.in(2).dtype() != dt)
    ctx.fail(ErrorKind::DType, "start, limit and delta must share one dtype");
  int64_t n;
  if (is_float(dt)) {
    const double start = ctx.scalar(0), limit = ctx.scalar(1), delta = ctx.scalar(2);
    if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
      ctx.fail(ErrorKind::Value, "start ", start, ", limit ", limit, ", delta ", delta,
               " must be finite with a nonzero delta");
    n = to_int64(ctx, std::max(std::ceil((limit - start) / delta), 0.0), "element count");
  } else {
    const int64_t start = host_int(ctx, 0, "start"), limit = host_int(ctx, 1, "limit");
    const int64_t delta = host_int(ctx, 2, "delta");
    if (delta == 0) ctx.fail(ErrorKind::Value, "delta must be nonzero");
    const int64_t span = delta > 0 ? limit - start : start - limit;
    const int64_t step = delta > 0 ? delta : -delta;
    n = span > 0 ? (span + step - 1) / step : 0;
  }
  // start + i·delta, computed in the output dtype on the device.
  Tensor i = op1("Cast", {iota(ctx, n)}, {{"to", dt}});
  Tensor start = reshape_to(ctx.in(0), {}), delta = reshape_to(ctx.in(2), {});
  return {start + i * delta};
}

// --- DepthToSpace, SpaceToDepth, Trilu ----------------------------------------------------------

int64_t blocksize(const NodeCtx& ctx, const Tensor& x) {
  if (x.rank() != 4)
    ctx.fail(ErrorKind::Shape, "input must be [N, C, H, W], got ", x.shape().size(), "-d ",
             shape_str(x.shape()));
  const int64_t b = ctx.attr_int("blocksize");
  if (b < 1) ctx.fail(ErrorKind::Value, "blocksize must be >= 1, got ", b);
  return b;
}

std::vector<Value> depth_to_space(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  const int64_t b = blocksize(ctx, x);
  const Shape& s = x.shape();
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  if (c % (b * b) != 0)
    ctx.fail(ErrorKind::Shape, "channels ", c, " must be divisible by blocksize² ", b * b);
  const std::string mode = ctx.opset() >= 11 ? ctx.attr_string("mode", "DCR") : "DCR";
  Tensor t;
  if (mode == "DCR") {
    t = reshape_to(x, {n, b, b, c / (b * b), h, w});
    t = op1("Transpose", {t}, {{"perm", std::vector<int64_t>{0, 3, 4, 1, 5, 2}}});
  } else if (mode == "CRD") {
    t = reshape_to(x, {n, c / (b * b), b, b, h, w});
    t = op1("Transpose", {t}, {{"perm", std::vector<int64_t>{0, 1, 4, 2, 5, 3}}});
  } else {
    ctx.fail(ErrorKind::Format, "mode '", mode, "' is not DCR or CRD");
  }
  return {reshape_to(t, {n, c / (b * b), h * b, w * b})};
}

std::vector<Value> space_to_depth(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  const int64_t b = blocksize(ctx, x);
  const Shape& s = x.shape();
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  if (h % b != 0 || w % b != 0)
    ctx.fail(ErrorKind::Shape, "height ", h, " and width ", w, " must be divisible by blocksize ",
             b);
  Tensor t = reshape_to(x, {n, c, h / b, b, w / b, b});
  t = op1("Transpose", {t}, {{"perm", std::vector<int64_t>{0, 3, 5, 1, 2, 4}}});
  return {reshape_to(t, {n, c * b * b, h / b, w / b})};
}

std::vector<Value> trilu(NodeCtx& ctx) {
  const bool upper = ctx.attr_int("upper", 1) != 0;
  const int64_t k = ctx.has(1) ? host_int(ctx, 1, "k") : 0;
  return {op1("Trilu", {ctx.in(0)}, {{"upper", upper}, {"k", k}})};
}

// --- OneHot, EyeLike ----------------------------------------------------------------------------

std::vector<Value> one_hot(NodeCtx& ctx) {
  Tensor indices = ctx.in(0), vals = ctx.in(2);
  // Non-integer indices are truncated to int64, as the spec says.
  if (is_inexact(indices.dtype())) indices = op1("Cast", {indices}, {{"to", DType::I64}});
  const int64_t depth = scalar_int(ctx, 1, "depth");
  if (depth < 1) ctx.fail(ErrorKind::Value, "depth must be >= 1, got ", depth);
  if (vals.numel() != 2)
    ctx.fail(ErrorKind::Shape, "values must hold [off_value, on_value], got ",
             shape_str(vals.shape()));
  const int64_t axis = ctx.attr_int("axis", -1);
  // A bool one-hot mask selects between the two values on the device.
  Tensor mask = op1("OneHot", {indices},
                    {{"depth", depth},
                     {"axis", axis},
                     {"dtype", DType::Bool},
                     {"on_value", 1.0},
                     {"off_value", 0.0}});
  Tensor flat = reshape_to(vals, {2});
  auto pick = [&](int64_t i) {
    Tensor v = narrow(flat, 0, i, 1);
    return reshape_to(v, {});
  };
  return {where(mask, pick(1), pick(0))};
}

std::vector<Value> eye_like(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  if (x.rank() != 2) ctx.fail(ErrorKind::Shape, "input must be 2-D, got ", shape_str(x.shape()));
  const DType dt = ctx.has_attr("dtype") ? onnx_dtype(ctx, ctx.attr_int("dtype")) : x.dtype();
  const int64_t rows = x.shape()[0], cols = x.shape()[1], k = ctx.attr_int("k", 0);
  // y[i, j] = (j - i == k)
  Tensor i = reshape_to(iota(ctx, rows), {rows, 1});
  Tensor j = reshape_to(iota(ctx, cols), {1, cols});
  Tensor diag = compare("Eq", j - i, int64_scalar(ctx, k));
  return {dt == DType::Bool ? diag : op1("Cast", {diag}, {{"to", dt}})};
}

// --- Compress, NonZero, ReverseSequence, Unique, CenterCropPad ----------------------------------

std::vector<Value> compress(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  int64_t axis = 0;
  if (ctx.has_attr("axis")) {
    axis = axis_of(ctx, ctx.attr_int("axis"), x.rank());
  } else {
    x = reshape_to(x, {x.numel()});
  }
  // The condition decides the output shape: it is read on the host, and the kept positions
  // gather the data on the device.
  const HostTensor cond = ctx.host(1);
  if (cond.rank() != 1)
    ctx.fail(ErrorKind::Shape, "condition must be 1-D, got ", shape_str(cond.shape));
  const int64_t dim = x.shape()[axis];
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond.numel(); ++i) {
    if (cond.get_f64(i) == 0) continue;
    if (i >= dim)
      ctx.fail(ErrorKind::Shape, "condition selects position ", i, " past axis ", axis, "'s size ",
               dim);
    keep.push_back(i);
  }
  return {op1("Gather", {x, index_tensor(ctx, keep)}, {{"axis", axis}})};
}

std::vector<Value> non_zero(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  const Shape s = x.shape();
  const auto r = static_cast<int64_t>(s.size());
  // The count decides the output shape: the nonzero flat positions are read on the host, and
  // their coordinates are computed from them on the device.
  const HostTensor h = ctx.host(0);
  std::vector<int64_t> pos;
  for (int64_t i = 0; i < h.numel(); ++i)
    if (h.get_f64(i) != 0) pos.push_back(i);
  const auto nnz = static_cast<int64_t>(pos.size());
  if (r == 0)  // a scalar: treated as one element of a 1-D tensor, as numpy does
    return {expand_to(int64_scalar(ctx, 0), {1, nnz})};
  Tensor p = index_tensor(ctx, pos);
  std::vector<Tensor> rows;
  int64_t stride = 1;
  for (int64_t d = r - 1; d >= 0; --d) {
    Tensor c = binary("Div", p, int64_scalar(ctx, stride));
    c = binary("FloorMod", c, int64_scalar(ctx, std::max<int64_t>(s[d], 1)));
    rows.push_back(reshape_to(c, {1, nnz}));
    stride *= s[d];
  }
  std::reverse(rows.begin(), rows.end());
  return {rows.size() == 1 ? rows[0] : op1("Concat", rows, {{"axis", int64_t{0}}})};
}

std::vector<Value> reverse_sequence(NodeCtx& ctx) {
  Tensor x = ctx.in(0), lens = ctx.in(1);
  if (x.rank() < 2)
    ctx.fail(ErrorKind::Shape, "input must have rank >= 2, got ", shape_str(x.shape()));
  const int64_t time_axis = ctx.attr_int("time_axis", 0),
                batch_axis = ctx.attr_int("batch_axis", 1);
  if (!((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0)))
    ctx.fail(ErrorKind::Value, "time_axis ", time_axis, " and batch_axis ", batch_axis,
             " must be 0 and 1 in some order");
  const int64_t t_len = x.shape()[time_axis], b_len = x.shape()[batch_axis];
  if (lens.rank() != 1 || lens.shape()[0] != b_len)
    ctx.fail(ErrorKind::Shape, "sequence_lens must be [", b_len, "], got ",
             shape_str(lens.shape()));
  if (lens.dtype() != DType::I64) lens = op1("Cast", {lens}, {{"to", DType::I64}});
  // Source time index: len - 1 - t inside each sequence, t past its end.
  Shape t_shape(2, 1), b_shape(2, 1);
  t_shape[time_axis] = t_len;
  b_shape[batch_axis] = b_len;
  Tensor t = reshape_to(iota(ctx, t_len), t_shape);
  Tensor len = reshape_to(lens, b_shape);
  Tensor inside = compare("Lt", t, len);
  Tensor src = where(inside, len - int64_scalar(ctx, 1) - t, t);
  Shape full(static_cast<size_t>(x.rank()), 1);
  full[0] = src.shape()[0];
  full[1] = src.shape()[1];
  src = expand_to(reshape_to(src, full), x.shape());
  return {op1("GatherElements", {x, src}, {{"axis", time_axis}})};
}

// Unique on the device. The slices along the axis (the elements, without one) are rows of
// [n, m]; a stable LSD sort (one stable ArgSort per column, last to first) orders them, equal
// neighbours form groups, and scatters derive first occurrences, counts and the inverse. Only
// the number of groups, which decides the output shapes, is read on the host.
std::vector<Value> unique(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  const bool sorted = ctx.attr_int("sorted", 1) != 0;
  const bool has_axis = ctx.has_attr("axis");
  const int64_t axis = has_axis ? axis_of(ctx, ctx.attr_int("axis"), x.rank()) : 0;
  if (!has_axis) x = reshape_to(x, {x.numel()});
  const int64_t n = x.shape()[axis];
  if (n == 0) {
    Tensor none = index_tensor(ctx, {});
    return {op1("Gather", {x, none}, {{"axis", axis}}), none, none, none};
  }
  std::vector<int64_t> to_front(static_cast<size_t>(x.rank()));
  std::iota(to_front.begin(), to_front.end(), 0);
  to_front.erase(to_front.begin() + axis);
  to_front.insert(to_front.begin(), axis);
  const int64_t m = x.numel() / n;
  const Tensor rows = reshape_to(op1("Transpose", {x}, {{"perm", to_front}}), {n, m});

  // ArgSort is stable (equal keys keep their index order), so sorting the running permutation
  // by each column from last to first orders the rows lexicographically, ties by first index.
  auto argsort = [](const Tensor& key) { return op1("ArgSort", {key}, {{"axis", int64_t{0}}}); };
  Tensor perm = iota(ctx, n);
  for (int64_t c = m - 1; c >= 0; --c)
    perm = op1("Gather", {perm, argsort(op1("Gather", {take_slice(rows, 1, c), perm}))});

  // starts[k] = 1 where sorted row k differs from row k - 1 (row 0 starts the first group).
  // NaNs equal each other, as the sort orders them (np.unique's equal_nan).
  Tensor one = int64_scalar(ctx, 1);
  Tensor starts = reshape_to(one, {1});
  if (n > 1 && m > 0) {
    const Tensor sorted_rows = op1("Gather", {rows, perm}, {{"axis", int64_t{0}}});
    const Tensor cur = narrow(sorted_rows, 0, 1, n - 1), prev = narrow(sorted_rows, 0, 0, n - 1);
    Tensor differs = cast(compare("Ne", cur, prev), DType::I64);
    if (is_float(x.dtype()))
      differs = differs - cast(compare("Ne", cur, cur), DType::I64) *
                              cast(compare("Ne", prev, prev), DType::I64);
    starts = op1("Concat", {starts, reduce_op("Max", differs, {1}, false)}, {{"axis", int64_t{0}}});
  } else if (n > 1) {  // empty slices are all equal
    starts =
        op1("Concat", {starts, expand_to(int64_scalar(ctx, 0), {n - 1})}, {{"axis", int64_t{0}}});
  }
  const Tensor group = op1("Cumsum", {starts}, {{"axis", int64_t{0}}}) - one;  // of sorted row k
  const auto groups = static_cast<int64_t>(narrow(group, 0, n - 1, 1).item()) + 1;

  auto scatter = [&](const Tensor& init, const Tensor& idx, const Tensor& upd, const char* red) {
    return op1("ScatterElements", {init, idx, upd}, {{"axis", int64_t{0}}, {"reduction", red}});
  };
  auto filled = [&](int64_t v, int64_t len) { return expand_to(int64_scalar(ctx, v), {len}); };
  // A group's first occurrence: the smallest original index among its rows.
  Tensor indices = scatter(filled(n, groups), group, perm, "Min");
  Tensor counts = scatter(filled(0, groups), group, filled(1, n), "Add");
  Tensor inverse = scatter(filled(0, n), perm, group, "None");  // perm is a permutation
  if (!sorted) {  // groups in order of first occurrence
    const Tensor by_first = argsort(indices);
    const Tensor rank = scatter(filled(0, groups), by_first, iota(ctx, groups), "None");
    indices = op1("Gather", {indices, by_first});
    counts = op1("Gather", {counts, by_first});
    inverse = op1("Gather", {rank, inverse});
  }
  Tensor y = op1("Gather", {x, indices}, {{"axis", axis}});
  return {y, indices, inverse, counts};
}

std::vector<Value> center_crop_pad(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  const int64_t r = x.rank();
  std::vector<int64_t> target = ctx.ints(1);
  std::vector<int64_t> axes = ctx.attr_ints("axes");
  if (axes.empty()) {
    axes.resize(static_cast<size_t>(r));
    std::iota(axes.begin(), axes.end(), 0);
  }
  axes = normalize_axes(ctx, axes, r);
  if (target.size() != axes.size())
    ctx.fail(ErrorKind::Shape, "shape ", shape_str(target), " must have one entry per axis ",
             shape_str(axes));
  std::vector<int64_t> starts, ends, sliced, pads(static_cast<size_t>(2 * r), 0);
  bool padded = false;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i], dim = x.shape()[a], want = target[i];
    if (want < 0) ctx.fail(ErrorKind::Shape, "shape ", shape_str(target), " is negative");
    if (want < dim) {  // crop, the extra element (if odd) from the end
      const int64_t start = (dim - want) / 2;
      starts.push_back(start);
      ends.push_back(start + want);
      sliced.push_back(a);
    } else if (want > dim) {  // pad with zeros, the extra element (if odd) at the end
      pads[a] = (want - dim) / 2;
      pads[a + r] = want - dim - pads[a];
      padded = true;
    }
  }
  if (!sliced.empty())
    x = op1("Slice", {x},
            {{"starts", starts},
             {"ends", ends},
             {"axes", sliced},
             {"steps", std::vector<int64_t>(sliced.size(), 1)}});
  if (padded) x = op1("Pad", {x}, {{"pads", pads}, {"mode", "Constant"}, {"value", 0.0}});
  return {x};
}

constexpr Converter kConverters[] = {
    {"", "Identity", identity},
    {"", "Constant", constant},
    {"", "Shape", shape_op},
    {"", "Size", size_op},
    {"", "Reshape", reshape},
    {"", "Flatten", flatten},
    {"", "Squeeze", squeeze},
    {"", "Unsqueeze", unsqueeze},
    {"", "Transpose", transpose},
    {"", "Concat", concat},
    {"", "Split", split},
    {"", "Slice", slice},
    {"", "Gather", gather},
    {"", "GatherElements", gather_elements},
    {"", "GatherND", gather_nd},
    {"", "Scatter", scatter_elements},
    {"", "ScatterElements", scatter_elements},
    {"", "ScatterND", scatter_nd},
    {"", "Expand", expand},
    {"", "Tile", tile},
    {"", "Pad", pad},
    {"", "ConstantOfShape", constant_of_shape},
    {"", "Range", range},
    {"", "DepthToSpace", depth_to_space},
    {"", "SpaceToDepth", space_to_depth},
    {"", "Trilu", trilu},
    {"", "OneHot", one_hot},
    {"", "EyeLike", eye_like},
    {"", "Compress", compress},
    {"", "NonZero", non_zero},
    {"", "ReverseSequence", reverse_sequence},
    {"", "Unique", unique},
    {"", "CenterCropPad", center_crop_pad},
};

}  // namespace

std::span<const Converter> shape_converters() { return kConverters; }

}  // namespace tessel::onnx
