// Shape rules of the Normalization category: LayerNorm, LayerNorm2d, GroupNorm,
// BatchNormInference, RmsNorm. Each runs natively on the reference backend (no decomposition):
// the output is x's type; affine and statistics inputs share x's dtype and must broadcast to the
// shape they scale (x.shape[axis:] for the layer norms, [C] for the channel norms).
#include <cmath>

#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

constexpr DTypeSet kNormDTypes = dtypes::kFloat | dtypes::kFp8;

void check_eps(const InferCtx& ctx) {
  double eps = ctx.attrs().f("eps");
  if (!(eps >= 0) || !std::isfinite(eps))
    ctx.fail(ErrorKind::Value, "eps must be finite and >= 0, got ", eps);
}

// Input `i` (when present) must have x's dtype and a shape that broadcasts to `target`.
void check_per_element(const InferCtx& ctx, int i, const Shape& target, const char* what) {
  if (!ctx.has(i)) return;
  if (ctx.in(i).dtype != ctx.in(0).dtype)
    ctx.fail(ErrorKind::DType, what, " has dtype ", dtype_name(ctx.in(i).dtype),
             "; expected x's dtype ", dtype_name(ctx.in(0).dtype));
  const Shape& s = ctx.in(i).shape;
  auto b = broadcast_shapes(s, target);
  if (s.size() > target.size() || !b || *b != target)
    ctx.fail(ErrorKind::Shape, what, " has shape ", shape_str(s), "; expected ", shape_str(target),
             " (or a shape that broadcasts to it)");
}

// x [N, C, ...] of a float dtype with rank >= min_rank; returns C.
int64_t check_channels_first(const InferCtx& ctx, int min_rank) {
  require_dtype(ctx, 0, kNormDTypes, "x");
  if (ctx.in(0).rank() < min_rank)
    ctx.fail(ErrorKind::Shape, "x must have rank >= ", min_rank, " ([N, C, ...]), got ",
             ctx.in(0).str());
  return ctx.in(0).shape[1];
}

// LayerNorm / RmsNorm: normalize over [axis, rank); gamma (input 1) and beta (input 2) scale
// x.shape[axis:].
std::vector<TensorType> infer_trailing_norm(const InferCtx& ctx, bool has_beta) {
  require_dtype(ctx, 0, kNormDTypes, "x");
  const TensorType& x = ctx.in(0);
  if (x.rank() < 1) ctx.fail(ErrorKind::Shape, "x must have rank >= 1, got ", x.str());
  int axis = normalize_axis(ctx, ctx.attrs().i("axis"), x.rank());
  check_eps(ctx);
  Shape tail(x.shape.begin() + axis, x.shape.end());
  check_per_element(ctx, 1, tail, "gamma");
  if (has_beta) check_per_element(ctx, 2, tail, "beta");
  return {x};
}

std::vector<TensorType> infer_layer_norm(const InferCtx& ctx) {
  return infer_trailing_norm(ctx, true);
}

std::vector<TensorType> infer_rms_norm(const InferCtx& ctx) {
  return infer_trailing_norm(ctx, false);
}

std::vector<TensorType> infer_layer_norm2d(const InferCtx& ctx) {
  require_dtype(ctx, 0, kNormDTypes, "x");
  if (ctx.in(0).rank() != 4)
    ctx.fail(ErrorKind::Shape, "x must be NCHW (rank 4), got ", ctx.in(0).str());
  check_eps(ctx);
  Shape c = {ctx.in(0).shape[1]};
  check_per_element(ctx, 1, c, "gamma");
  check_per_element(ctx, 2, c, "beta");
  return {ctx.in(0)};
}

std::vector<TensorType> infer_group_norm(const InferCtx& ctx) {
  int64_t channels = check_channels_first(ctx, 2);
  int64_t groups = ctx.attrs().i("groups");
  if (groups < 1) ctx.fail(ErrorKind::Value, "groups must be >= 1, got ", groups);
  if (channels % groups != 0)
    ctx.fail(ErrorKind::Shape, "groups (", groups,
             ") must divide the channel count C = ", channels);
  check_eps(ctx);
  check_per_element(ctx, 1, {channels}, "gamma");
  check_per_element(ctx, 2, {channels}, "beta");
  return {ctx.in(0)};
}

std::vector<TensorType> infer_batch_norm_inference(const InferCtx& ctx) {
  int64_t channels = check_channels_first(ctx, 2);
  check_eps(ctx);
  check_per_element(ctx, 1, {channels}, "mean");
  check_per_element(ctx, 2, {channels}, "var");
  check_per_element(ctx, 3, {channels}, "gamma");
  check_per_element(ctx, 4, {channels}, "beta");
  return {ctx.in(0)};
}

}  // namespace

void register_rules_Normalization(RuleTable& table) {
  table[OpKind::LayerNorm].infer = infer_layer_norm;
  table[OpKind::LayerNorm2d].infer = infer_layer_norm2d;
  table[OpKind::GroupNorm].infer = infer_group_norm;
  table[OpKind::BatchNormInference].infer = infer_batch_norm_inference;
  table[OpKind::RmsNorm].infer = infer_rms_norm;
}

}  // namespace tessel
