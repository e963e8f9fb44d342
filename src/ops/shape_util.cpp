#include "ops/shape_util.h"

namespace tessel {

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int normalize_axis(const InferCtx& ctx, int64_t axis, int rank, const char* what) {
  if (axis < -rank || axis >= std::max(rank, 1))
    ctx.fail(ErrorKind::Shape, what, " ", axis, " is out of range for rank ", rank,
             " (valid: ", -rank, " to ", std::max(rank, 1) - 1, ")");
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

DType same_dtype(const InferCtx& ctx, std::initializer_list<int> inputs) {
  DType t = ctx.in(*inputs.begin()).dtype;
  for (int i : inputs)
    if (ctx.has(i) && ctx.in(i).dtype != t)
      ctx.fail(ErrorKind::DType, "inputs must share one dtype, got ", dtype_name(t), " and ",
               dtype_name(ctx.in(i).dtype));
  return t;
}

void require_dtype(const InferCtx& ctx, int i, DTypeSet allowed, const char* what) {
  if (!allowed.contains(ctx.in(i).dtype))
    ctx.fail(ErrorKind::DType, what, " has dtype ", dtype_name(ctx.in(i).dtype),
             "; expected one of ", allowed.to_string());
}

void require_rank(const InferCtx& ctx, int i, int rank) {
  if (ctx.in(i).rank() != rank)
    ctx.fail(ErrorKind::Shape, "input ", i, " must have rank ", rank, ", got ", ctx.in(i).str());
}

void require_rank_between(const InferCtx& ctx, int i, int lo, int hi) {
  int r = ctx.in(i).rank();
  if (r < lo || r > hi)
    ctx.fail(ErrorKind::Shape, "input ", i, " must have rank ", lo, " to ", hi, ", got ",
             ctx.in(i).str());
}

std::vector<TensorType> same_as_input(const InferCtx& ctx) { return {ctx.in(0)}; }

}  // namespace tessel
