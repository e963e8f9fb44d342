// Reductions and indexing by value: Reduce*, ArgMax / ArgMin, Softmax / LogSoftmax / Hardmax,
// CumSum, TopK.
#include <algorithm>
#include <cmath>
#include <limits>

#include "frontends/onnx/convert_util.h"

namespace tessel::onnx {
namespace {

// Axes in [0, rank), each once; a Shape error names a repeated or out-of-range axis. A scalar
// has no axis to name (normalize_axis lets axis 0 through for rank 0, where an op over "the"
// axis of a scalar is meaningful; a reduction's axis list is not).
std::vector<int64_t> normalized_axes(const NodeCtx& ctx, const std::vector<int64_t>& axes,
                                     int64_t rank) {
  if (rank == 0 && !axes.empty())
    ctx.fail(ErrorKind::Shape, "axes ", shape_str(axes),
             " name axes of a scalar input, which has none");
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    int64_t d = normalize_axis(ctx, a, rank);
    if (std::find(out.begin(), out.end(), d) != out.end())
      ctx.fail(ErrorKind::Shape, "axes ", shape_str(axes), " name axis ", d, " more than once");
    out.push_back(d);
  }
  return out;
}

// The Reduce* family. `axes` moved from an attribute to an optional input at opset 13 for
// ReduceSum and at opset 18 for the others; an empty list reduces every axis unless
// noop_with_empty_axes (then the input passes through).
std::vector<Value> reduce(NodeCtx& ctx, const std::string& onnx_op) {
  Tensor x = ctx.in(0);
  const int axes_input_from = onnx_op == "ReduceSum" ? 13 : 18;
  std::vector<int64_t> axes;
  if (ctx.opset() >= axes_input_from) {
    if (ctx.has(1)) axes = ctx.ints(1);
  } else {
    axes = ctx.attr_ints("axes");
  }
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  if (axes.empty() && ctx.attr_int("noop_with_empty_axes", 0) != 0) return {x};
  axes = normalized_axes(ctx, axes, x.rank());
  if (axes.empty())
    for (int64_t d = 0; d < x.rank(); ++d) axes.push_back(d);

  const DType dt = x.dtype();
  if (dt == DType::Bool && onnx_op != "ReduceMax" && onnx_op != "ReduceMin")
    ctx.fail(ErrorKind::DType, "does not take bool tensors");
  // Reductions whose result is not exact on integers run in f64 and are cast back (as numpy's
  // astype would: truncating).
  auto via_float = [&](const std::string& op) {
    if (!is_integer(dt)) return reduce_op(op, x, axes, keepdims);
    return cast(reduce_op(op, cast(x, DType::F64), axes, keepdims), dt);
  };
  // Max / Min / LogSumExp of an empty set: the identity of the reduction (opset 18's rule).
  bool empty = false;
  for (int64_t d : axes) empty = empty || x.shape()[d] == 0;
  if (empty && (onnx_op == "ReduceMax" || onnx_op == "ReduceMin" || onnx_op == "ReduceLogSumExp")) {
    Shape out;
    for (int64_t d = 0; d < x.rank(); ++d) {
      const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
      if (!reduced)
        out.push_back(x.shape()[d]);
      else if (keepdims)
        out.push_back(1);
    }
    const double inf = std::numeric_limits<double>::infinity();
    double fill = onnx_op == "ReduceMin" ? inf : -inf;
    if (is_integer(dt) || dt == DType::Bool) {
      const bool is_signed = dtype_kind(dt) == DTypeKind::Signed;
      const double bits = dt == DType::Bool ? 1 : dtype_size(dt) * 8 - (is_signed ? 1 : 0);
      fill = onnx_op == "ReduceMin" ? std::ldexp(1.0, static_cast<int>(bits)) - 1
                                    : (is_signed ? -std::ldexp(1.0, static_cast<int>(bits)) : 0);
    }
    return {expand_to(ctx.scalar_tensor(fill, dt), out)};
  }
  if (onnx_op == "ReduceSum") return {reduce_op("Sum", x, axes, keepdims)};
  if (onnx_op == "ReduceMean") return {via_float("Mean")};
  if (onnx_op == "ReduceMax") return {reduce_op("Max", x, axes, keepdims)};
  if (onnx_op == "ReduceMin") return {reduce_op("Min", x, axes, keepdims)};
  if (onnx_op == "ReduceProd") return {reduce_op("Prod", x, axes, keepdims)};
  if (onnx_op == "ReduceL1") return {reduce_op("L1", x, axes, keepdims)};
  if (onnx_op == "ReduceL2") return {via_float("L2")};
  if (onnx_op == "ReduceSumSquare") return {reduce_op("SumSquare", x, axes, keepdims)};
  if (onnx_op == "ReduceLogSumExp") return {via_float("LogSumExp")};
  // ReduceLogSum: log(Σ x).
  if (!is_integer(dt)) return {log(reduce_op("Sum", x, axes, keepdims))};
  return {cast(log(reduce_op("Sum", cast(x, DType::F64), axes, keepdims)), dt)};
}

template <const char* Op>
std::vector<Value> reduce_conv(NodeCtx& ctx) {
  return reduce(ctx, Op);
}
constexpr char kReduceSum[] = "ReduceSum", kReduceMean[] = "ReduceMean", kReduceMax[] = "ReduceMax",
               kReduceMin[] = "ReduceMin", kReduceProd[] = "ReduceProd", kReduceL1[] = "ReduceL1",
               kReduceL2[] = "ReduceL2", kReduceLogSum[] = "ReduceLogSum",
               kReduceLogSumExp[] = "ReduceLogSumExp", kReduceSumSquare[] = "ReduceSumSquare";

std::vector<Value> arg_extreme(NodeCtx& ctx, const char* kind) {
  Tensor x = ctx.in(0);
  const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), x.rank());
  if (x.rank() > 0 && x.shape()[axis] == 0)
    ctx.fail(ErrorKind::Shape, "cannot take the index of an extreme over empty axis ", axis, " of ",
             shape_str(x.shape()));
  return {op1(kind, {x},
              {{"axis", axis},
               {"keepdims", ctx.attr_int("keepdims", 1) != 0},
               {"select_last", ctx.attr_int("select_last_index", 0) != 0}})};
}

// Softmax-like ops: before opset 13 the input is coerced to 2-D [prod(dims[:axis]),
// prod(dims[axis:])] (default axis 1) and the op runs over its second dim; from 13 over the one
// axis (default -1). `fn` computes the op along one axis.
template <class Fn>
std::vector<Value> softmax_like(NodeCtx& ctx, Fn fn) {
  Tensor x = ctx.in(0);
  if (!is_float(x.dtype()))
    ctx.fail(ErrorKind::DType, "takes a floating-point tensor, not ", dtype_name(x.dtype()));
  const int64_t rank = x.rank();
  if (ctx.opset() >= 13) return {fn(x, normalize_axis(ctx, ctx.attr_int("axis", -1), rank))};
  const int64_t axis = rank == 0 ? 0 : normalize_axis(ctx, ctx.attr_int("axis", 1), rank);
  const Shape& s = x.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= s[d];
  return {reshape(fn(reshape(x, {outer, inner}), 1), s)};
}

std::vector<Value> softmax_op(NodeCtx& ctx) {
  return softmax_like(ctx, [](const Tensor& x, int64_t axis) {
    return op1("Softmax", {x}, {{"axis", axis}});
  });
}
std::vector<Value> log_softmax_op(NodeCtx& ctx) {
  return softmax_like(ctx, [](const Tensor& x, int64_t axis) {
    return op1("Softmax", {x}, {{"axis", axis}, {"log", true}});
  });
}
// Hardmax: 1 at the first maximum along the axis, 0 elsewhere.
std::vector<Value> hardmax_op(NodeCtx& ctx) {
  return softmax_like(ctx, [&](const Tensor& x, int64_t axis) {
    if (x.rank() == 0) return ctx.scalar_tensor(1, x.dtype());
    const int64_t depth = x.shape()[axis];
    if (depth == 0) return x;
    Tensor idx = op1("ArgMax", {x}, {{"axis", axis}, {"keepdims", false}});
    return op1("OneHot", {idx}, {{"depth", depth}, {"axis", axis}, {"dtype", x.dtype()}});
  });
}

std::vector<Value> cumsum_op(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  const int64_t axis = normalize_axis(ctx, scalar_int(ctx, 1, "axis"), x.rank());
  return {op1("Cumsum", {x},
              {{"axis", axis},
               {"exclusive", ctx.attr_int("exclusive", 0) != 0},
               {"reverse", ctx.attr_int("reverse", 0) != 0}})};
}

std::vector<Value> top_k(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  int64_t k;
  if (ctx.opset() >= 10) {
    std::vector<int64_t> kv = ctx.ints(1);
    if (kv.size() != 1) ctx.fail(ErrorKind::Shape, "K must hold one element, got ", kv.size());
    k = kv[0];
  } else {
    k = ctx.attr_int("k");
  }
  const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), x.rank());
  const int64_t dim = x.rank() == 0 ? 1 : x.shape()[axis];
  if (k < 0 || k > dim)
    ctx.fail(ErrorKind::Value, "K ", k, " is out of range for axis ", axis, " of size ", dim);
  auto outs = tessel::op("TopK", {x},
                         {{"k", k},
                          {"axis", axis},
                          {"largest", ctx.attr_int("largest", 1) != 0},
                          {"sorted", ctx.attr_int("sorted", 1) != 0}});
  return values(std::move(outs));
}

constexpr Converter kConverters[] = {
    {"", "ReduceSum", reduce_conv<kReduceSum>},
    {"", "ReduceMean", reduce_conv<kReduceMean>},
    {"", "ReduceMax", reduce_conv<kReduceMax>},
    {"", "ReduceMin", reduce_conv<kReduceMin>},
    {"", "ReduceProd", reduce_conv<kReduceProd>},
    {"", "ReduceL1", reduce_conv<kReduceL1>},
    {"", "ReduceL2", reduce_conv<kReduceL2>},
    {"", "ReduceLogSum", reduce_conv<kReduceLogSum>},
    {"", "ReduceLogSumExp", reduce_conv<kReduceLogSumExp>},
    {"", "ReduceSumSquare", reduce_conv<kReduceSumSquare>},
    {"", "ArgMax", [](NodeCtx& c) { return arg_extreme(c, "ArgMax"); }},
    {"", "ArgMin", [](NodeCtx& c) { return arg_extreme(c, "ArgMin"); }},
    {"", "Softmax", softmax_op},
    {"", "LogSoftmax", log_softmax_op},
    {"", "Hardmax", hardmax_op},
    {"", "CumSum", cumsum_op},
    {"", "TopK", top_k},
};

}  // namespace

std::span<const Converter> reduction_converters() { return kConverters; }

}  // namespace tessel::onnx
