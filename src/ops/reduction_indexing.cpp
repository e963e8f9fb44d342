// Shape rules of the ReductionIndexing category: Reduce, Softmax, Cumsum, CumProd, CumMax,
// ArgMax, ArgMin, TopK, Sort, ArgSort, Sample. Every kind runs natively on the reference backend,
// so none has a decomposition.
//
// Axes follow PyTorch: negative axes wrap, and a rank-0 tensor accepts axis 0 or -1 (its one
// element is a length-1 axis). The dtypes each rule accepts are exactly those the reference
// computes: integers where the result is exact, floats everywhere.
#include <cmath>
#include <string>

#include "ir/builder.h"
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

constexpr DTypeSet kFloatTypes = dtypes::kFloat | dtypes::kFp8;
constexpr DTypeSet kIntTypes = dtypes::kInt;
constexpr DTypeSet kBoolType{DType::Bool};

// Axis in [-rank, rank) → [0, rank); a rank-0 tensor accepts 0 and -1 (both give 0).
int axis_of(const InferCtx& ctx, int64_t axis, int rank, const char* what = "axis") {
  if (rank == 0) {
    if (axis != 0 && axis != -1)
      ctx.fail(ErrorKind::Shape, what, " ", axis,
               " is out of range for a rank-0 tensor (valid: -1, 0)");
    return 0;
  }
  return normalize_axis(ctx, axis, rank, what);
}

// The dtypes Reduce accepts for each variant.
DTypeSet reduce_dtypes(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod:
    case ReduceOp::L1:
    case ReduceOp::SumSquare:
      return kFloatTypes | kIntTypes;
    case ReduceOp::Max:
    case ReduceOp::Min:
      return kFloatTypes | kIntTypes | kBoolType;
    case ReduceOp::Mean:
    case ReduceOp::LogSumExp:
    case ReduceOp::L2:
    case ReduceOp::Var:
    case ReduceOp::Std:
      return kFloatTypes;
  }
  return {};
}

std::vector<TensorType> infer_reduce(const InferCtx& ctx) {
  const TensorType& x = ctx.in(0);
  int64_t op_value = ctx.attrs().i("op");
  const EnumInfo& ops = enum_info(VariantEnum::ReduceOp);
  if (op_value < 0 || op_value >= static_cast<int64_t>(ops.values.size()))
    ctx.fail(ErrorKind::Value, "op ", op_value, " is not a ReduceOp");
  auto op = static_cast<ReduceOp>(op_value);
  std::string what = "x (op " + ops.values[op_value].name + ")";
  require_dtype(ctx, 0, reduce_dtypes(op), what.c_str());

  int64_t correction = ctx.attrs().i("correction");
  bool uses_correction = op == ReduceOp::Var || op == ReduceOp::Std;
  if (uses_correction && correction < 0)
    ctx.fail(ErrorKind::Value, "correction must be >= 0, got ", correction);
  if (!uses_correction && correction != 0)
    ctx.fail(ErrorKind::Value, "correction ", correction, " applies only to Var and Std (op ",
             ops.values[op_value].name, " needs 0)");

  const std::vector<int64_t>& axes = ctx.attrs().ints("axes");
  std::vector<bool> reduced(x.rank(), axes.empty());
  for (int64_t a : axes) {
    int d = axis_of(ctx, a, x.rank(), "axes entry");
    if (x.rank() == 0) continue;
    if (reduced[d])
      ctx.fail(ErrorKind::Value, "axes ", shape_str(axes), " name axis ", d,
               " more than once; each axis may appear once");
    reduced[d] = true;
  }
  bool keepdims = ctx.attrs().b("keepdims");
  Shape out;
  for (int d = 0; d < x.rank(); ++d) {
    if (!reduced[d])
      out.push_back(x.shape[d]);
    else if (keepdims)
      out.push_back(1);
  }
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_softmax(const InferCtx& ctx) {
  require_dtype(ctx, 0, kFloatTypes, "x");
  axis_of(ctx, ctx.attrs().i("axis"), ctx.in(0).rank());
  return {ctx.in(0)};
}

// Cumsum, CumProd, CumMax: same type as x; floats and integers.
std::vector<TensorType> infer_scan(const InferCtx& ctx) {
  require_dtype(ctx, 0, kFloatTypes | kIntTypes, "x");
  axis_of(ctx, ctx.attrs().i("axis"), ctx.in(0).rank());
  return {ctx.in(0)};
}

// ArgMax, ArgMin: i64 indices with the axis removed (or kept as 1). An empty axis is a Value
// error when the node runs (there is no index to return).
std::vector<TensorType> infer_arg_extreme(const InferCtx& ctx) {
  require_dtype(ctx, 0, kFloatTypes | kIntTypes | kBoolType, "x");
  const TensorType& x = ctx.in(0);
  int axis = axis_of(ctx, ctx.attrs().i("axis"), x.rank());
  Shape out;
  for (int d = 0; d < x.rank(); ++d) {
    if (d != axis)
      out.push_back(x.shape[d]);
    else if (ctx.attrs().b("keepdims"))
      out.push_back(1);
  }
  return {{DType::I64, out}};
}

std::vector<TensorType> infer_topk(const InferCtx& ctx) {
  require_dtype(ctx, 0, kFloatTypes | kIntTypes, "x");
  const TensorType& x = ctx.in(0);
  int axis = axis_of(ctx, ctx.attrs().i("axis"), x.rank());
  int64_t dim = x.rank() == 0 ? 1 : x.shape[axis];
  int64_t k = ctx.attrs().i("k");
  if (k < 0 || k > dim)
    ctx.fail(ErrorKind::Value, "k ", k, " is out of range for an axis of size ", dim,
             " (valid: 0 to ", dim, ")");
  if (x.rank() == 0 && k != 1)
    ctx.fail(ErrorKind::Value, "k must be 1 for a rank-0 tensor, got ", k);
  Shape out = x.shape;
  if (x.rank() > 0) out[axis] = k;
  return {{x.dtype, out}, {DType::I64, out}};
}

std::vector<TensorType> infer_sort(const InferCtx& ctx) {
  require_dtype(ctx, 0, kFloatTypes | kIntTypes | kBoolType, "x");
  axis_of(ctx, ctx.attrs().i("axis"), ctx.in(0).rank());
  return {ctx.in(0)};
}

std::vector<TensorType> infer_argsort(const InferCtx& ctx) {
  require_dtype(ctx, 0, kFloatTypes | kIntTypes | kBoolType, "x");
  axis_of(ctx, ctx.attrs().i("axis"), ctx.in(0).rank());
  return {{DType::I64, ctx.in(0).shape}};
}

// Sample: logits [..., V] → ids [...] (i64).
std::vector<TensorType> infer_sample(const InferCtx& ctx) {
  require_dtype(ctx, 0, kFloatTypes, "logits");
  const TensorType& x = ctx.in(0);
  if (x.rank() < 1)
    ctx.fail(ErrorKind::Shape, "logits must have rank >= 1 ([..., V]), got ", x.str());
  if (x.shape.back() < 1)
    ctx.fail(ErrorKind::Shape, "the vocabulary axis of logits must not be empty, got ", x.str());
  double temperature = ctx.attrs().f("temperature");
  if (!(temperature >= 0) || !std::isfinite(temperature))
    ctx.fail(ErrorKind::Value, "temperature must be finite and >= 0, got ", temperature);
  int64_t top_k = ctx.attrs().i("top_k");
  if (top_k < 0) ctx.fail(ErrorKind::Value, "top_k must be >= 0 (0 = off), got ", top_k);
  double top_p = ctx.attrs().f("top_p");
  if (!(top_p > 0 && top_p <= 1))
    ctx.fail(ErrorKind::Value, "top_p must be in (0, 1] (1 = off), got ", top_p);
  return {{DType::I64, Shape(x.shape.begin(), x.shape.end() - 1)}};
}

// Softmax for backends without a kernel: y = exp(x − max) / Σ exp(x − max), or for log-softmax
// x − max − log Σ exp(x − max); the max keeps exp finite.
std::vector<Value> decompose_softmax(Graph& g, const Node& n, std::span<const Value> in) {
  GraphBuilder b(g);
  int64_t axis = n.attrs.i("axis");
  Value m = b.stop_gradient(b.reduce(ReduceOp::Max, in[0], {axis}, true));
  Value shifted = b.sub(in[0], m);
  Value e = b.exp(shifted);
  Value total = b.sum(e, {axis}, true);
  if (n.attrs.b("log")) return {b.sub(shifted, b.log(total))};
  return {b.div(e, total)};
}

}  // namespace

void register_rules_ReductionIndexing(RuleTable& table) {
  table[OpKind::Reduce].infer = infer_reduce;
  table[OpKind::Softmax].infer = infer_softmax;
  table[OpKind::Softmax].decompose = decompose_softmax;
  table[OpKind::Cumsum].infer = infer_scan;
  table[OpKind::CumProd].infer = infer_scan;
  table[OpKind::CumMax].infer = infer_scan;
  table[OpKind::ArgMax].infer = infer_arg_extreme;
  table[OpKind::ArgMin].infer = infer_arg_extreme;
  table[OpKind::TopK].infer = infer_topk;
  table[OpKind::Sort].infer = infer_sort;
  table[OpKind::ArgSort].infer = infer_argsort;
  table[OpKind::Sample].infer = infer_sample;
}

}  // namespace tessel
