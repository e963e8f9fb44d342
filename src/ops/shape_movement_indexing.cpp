// Shape rules of the index-driven ShapeMovement kinds: Gather, Embedding, ScatterAdd, ScatterNd,
// ScatterElements, GatherNd, GatherElements, OneHot. Index values are data, so their range is
// checked by the kernels at run time (Value errors); here only ranks, dims and dtypes are.
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

void require_same_dtype(const InferCtx& ctx, int i, const char* what) {
  if (ctx.in(i).dtype != ctx.in(0).dtype)
    ctx.fail(ErrorKind::DType, what, " has dtype ", dtype_name(ctx.in(i).dtype),
             "; expected the data's ", dtype_name(ctx.in(0).dtype));
}

void require_min_rank(const InferCtx& ctx, int i, int rank, const char* what) {
  if (ctx.in(i).rank() < rank)
    ctx.fail(ErrorKind::Shape, what, " must have rank >= ", rank, ", got ", ctx.in(i).str());
}

// x.shape[:axis] + indices.shape + x.shape[axis+1:]
std::vector<TensorType> infer_gather(const InferCtx& ctx) {
  const TensorType& x = ctx.in(0);
  require_min_rank(ctx, 0, 1, "x");
  require_dtype(ctx, 1, dtypes::kIndex, "indices");
  int axis = normalize_axis(ctx, ctx.attrs().i("axis"), x.rank());
  Shape out(x.shape.begin(), x.shape.begin() + axis);
  const Shape& idx = ctx.in(1).shape;
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_embedding(const InferCtx& ctx) {
  const TensorType& w = ctx.in(0);
  if (w.rank() != 2) ctx.fail(ErrorKind::Shape, "weight must be [V, D], got ", w.str());
  require_dtype(ctx, 1, dtypes::kInt, "ids");
  Shape out = ctx.in(1).shape;
  out.push_back(w.shape[1]);
  return {{w.dtype, out}};
}

std::vector<TensorType> infer_scatter_add(const InferCtx& ctx) {
  const TensorType& x = ctx.in(0);
  require_min_rank(ctx, 0, 1, "x");
  require_dtype(ctx, 0, dtypes::kNumeric | dtypes::kFp8, "x");
  require_dtype(ctx, 1, dtypes::kIndex, "indices");
  require_same_dtype(ctx, 2, "updates");
  int axis = normalize_axis(ctx, ctx.attrs().i("axis"), x.rank());
  if (ctx.in(1).rank() != 1)
    ctx.fail(ErrorKind::Shape, "indices must be 1-D [n], got ", ctx.in(1).str());
  Shape want = x.shape;
  want[axis] = ctx.in(1).shape[0];
  if (ctx.in(2).shape != want)
    ctx.fail(ErrorKind::Shape, "updates must be ", shape_str(want), " (x's shape with axis ", axis,
             " = indices' length), got ", ctx.in(2).str());
  return {x};
}

// Reductions other than None combine numbers; None only moves bytes (every dtype).
void check_reduction_dtype(const InferCtx& ctx) {
  if (ctx.attrs().e<ScatterReduction>("reduction") != ScatterReduction::None)
    require_dtype(ctx, 0, dtypes::kNumeric | dtypes::kFp8, "data (with a reduction)");
}

// ONNX ScatterND: indices [..., k] address data's first k axes; updates =
// indices.shape[:-1] + data.shape[k:].
std::vector<TensorType> infer_scatter_nd(const InferCtx& ctx) {
  const TensorType& data = ctx.in(0);
  const TensorType& idx = ctx.in(1);
  require_min_rank(ctx, 0, 1, "data");
  require_min_rank(ctx, 1, 1, "indices");
  require_dtype(ctx, 1, dtypes::kIndex, "indices");
  require_same_dtype(ctx, 2, "updates");
  check_reduction_dtype(ctx);
  int64_t k = idx.shape.back();
  if (k < 1 || k > data.rank())
    ctx.fail(ErrorKind::Shape, "indices' last dimension ", k, " must be in [1, ", data.rank(),
             "] (data's rank)");
  Shape want(idx.shape.begin(), idx.shape.end() - 1);
  want.insert(want.end(), data.shape.begin() + k, data.shape.end());
  if (ctx.in(2).shape != want)
    ctx.fail(ErrorKind::Shape, "updates must be ", shape_str(want),
             " (indices.shape[:-1] + data.shape[k:]), got ", ctx.in(2).str());
  return {data};
}

// indices (and updates) have data's rank and, off the axis, dims no larger than data's.
int check_elementwise_indices(const InferCtx& ctx) {
  const TensorType& data = ctx.in(0);
  const TensorType& idx = ctx.in(1);
  require_min_rank(ctx, 0, 1, "data");
  require_dtype(ctx, 1, dtypes::kIndex, "indices");
  int axis = normalize_axis(ctx, ctx.attrs().i("axis"), data.rank());
  if (idx.rank() != data.rank())
    ctx.fail(ErrorKind::Shape, "indices must have data's rank ", data.rank(), ", got ", idx.str());
  for (int d = 0; d < data.rank(); ++d)
    if (d != axis && idx.shape[d] > data.shape[d])
      ctx.fail(ErrorKind::Shape, "indices ", idx.str(), " exceed data ", data.str(), " on axis ", d,
               " (only the axis ", axis, " may be larger)");
  return axis;
}

std::vector<TensorType> infer_scatter_elements(const InferCtx& ctx) {
  check_elementwise_indices(ctx);
  require_same_dtype(ctx, 2, "updates");
  check_reduction_dtype(ctx);
  if (ctx.in(2).shape != ctx.in(1).shape)
    ctx.fail(ErrorKind::Shape, "updates ", ctx.in(2).str(), " must have indices' shape ",
             ctx.in(1).str());
  return {ctx.in(0)};
}

std::vector<TensorType> infer_gather_elements(const InferCtx& ctx) {
  check_elementwise_indices(ctx);
  return {{ctx.in(0).dtype, ctx.in(1).shape}};
}

// ONNX GatherND: out = indices.shape[:-1] + data.shape[b + k:], the first b axes shared.
std::vector<TensorType> infer_gather_nd(const InferCtx& ctx) {
  const TensorType& data = ctx.in(0);
  const TensorType& idx = ctx.in(1);
  require_min_rank(ctx, 0, 1, "data");
  require_min_rank(ctx, 1, 1, "indices");
  require_dtype(ctx, 1, dtypes::kIndex, "indices");
  int64_t b = ctx.attrs().i("batch_dims");
  if (b < 0 || b >= std::min(data.rank(), idx.rank()))
    ctx.fail(ErrorKind::Value, "batch_dims ", b, " must be in [0, min(data rank, indices rank))");
  for (int d = 0; d < b; ++d)
    if (data.shape[d] != idx.shape[d])
      ctx.fail(ErrorKind::Shape, "the first ", b, " (batch) dims of data and indices must match");
  int64_t k = idx.shape.back();
  if (k < 1 || k > data.rank() - b)
    ctx.fail(ErrorKind::Shape, "indices' last dimension ", k, " must be in [1, ", data.rank() - b,
             "] (data's rank - batch_dims)");
  Shape out(idx.shape.begin(), idx.shape.end() - 1);
  out.insert(out.end(), data.shape.begin() + b + k, data.shape.end());
  return {{data.dtype, out}};
}

std::vector<TensorType> infer_one_hot(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kInt, "indices");
  DType dtype = ctx.attrs().dtype("dtype");
  if (!(dtypes::kNumeric | dtypes::kFp8 | DTypeSet{DType::Bool}).contains(dtype))
    ctx.fail(ErrorKind::DType, "dtype ", dtype_name(dtype), " must be a number or bool dtype");
  int64_t depth = ctx.attrs().i("depth");
  if (depth <= 0) ctx.fail(ErrorKind::Value, "depth must be > 0, got ", depth);
  const Shape& in = ctx.in(0).shape;
  int r = static_cast<int>(in.size());
  int64_t axis = ctx.attrs().i("axis");
  if (axis < -r - 1 || axis > r)
    ctx.fail(ErrorKind::Value, "axis ", axis, " must be in [", -r - 1, ", ", r, "]");
  if (axis < 0) axis += r + 1;
  Shape out = in;
  out.insert(out.begin() + axis, depth);
  return {{dtype, out}};
}

}  // namespace

void register_rules_ShapeMovementIndexing(RuleTable& table) {
  table[OpKind::Gather].infer = infer_gather;
  table[OpKind::Embedding].infer = infer_embedding;
  table[OpKind::ScatterAdd].infer = infer_scatter_add;
  table[OpKind::ScatterNd].infer = infer_scatter_nd;
  table[OpKind::ScatterElements].infer = infer_scatter_elements;
  table[OpKind::GatherNd].infer = infer_gather_nd;
  table[OpKind::GatherElements].infer = infer_gather_elements;
  table[OpKind::OneHot].infer = infer_one_hot;
}

}  // namespace tessel
