// Shape rules of the PredictiveCoding category (kernels pending: "domain libraries").
// One layer as in DOMAIN-OPS.md: W [Dx, Dr], representations r [..., Dr], observations and
// errors [..., Dx] (leading batch dims shared); precision Π [Dx, Dx] or its diagonal [Dx].
// The weight update sums ε f(r)ᵀ over the batch.
#include <algorithm>
#include <cmath>

#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

// Input i is W [Dx, Dr]; returns {Dx, Dr}.
std::pair<int64_t, int64_t> weight_dims(const InferCtx& ctx, int i) {
  if (ctx.in(i).rank() != 2) ctx.fail(ErrorKind::Shape, "W ", ctx.in(i).str(), " must be [Dx, Dr]");
  return {ctx.in(i).shape[0], ctx.in(i).shape[1]};
}

void check_last(const InferCtx& ctx, int i, int64_t d, const char* what) {
  if (ctx.in(i).rank() < 1 || ctx.in(i).shape.back() != d)
    ctx.fail(ErrorKind::Shape, what, " ", ctx.in(i).str(), " must be [..., ", d, "]");
}

void check_same_lead(const InferCtx& ctx, int i, int j) {
  const Shape& a = ctx.in(i).shape;
  const Shape& b = ctx.in(j).shape;
  if (a.size() != b.size() || !std::equal(a.begin(), a.end() - 1, b.begin()))
    ctx.fail(ErrorKind::Shape, "inputs ", i, " and ", j, " must share their leading (batch) dims");
}

void check_lr(const InferCtx& ctx) {
  double lr = ctx.attrs().f("lr");
  if (!std::isfinite(lr)) ctx.fail(ErrorKind::Value, "lr=", lr, " must be finite");
}

// f applies to float r: Not (bool / bitwise) does not; the representation update also needs f'.
void check_act(const InferCtx& ctx, bool needs_derivative) {
  auto kind = ctx.attrs().e<ActivationKind>("act");
  int act = static_cast<int>(kind);
  const OpInfo& info = op_info(OpKind::Activation);
  if (kind == ActivationKind::Not)
    ctx.fail(ErrorKind::Value, "act=Not is logical / bitwise; f must act on float r");
  if (needs_derivative && !info.variant_differentiable(act))
    ctx.fail(ErrorKind::Value, "act=", info.variant_name(act),
             " has no derivative; the update needs f'(r)");
}

// w, r -> x_hat [..., Dx]
std::vector<TensorType> infer_prediction(const InferCtx& ctx) {
  check_act(ctx, false);
  require_dtype(ctx, 0, dtypes::kFloat, "W");
  same_dtype(ctx, {0, 1});
  auto [dx, dr] = weight_dims(ctx, 0);
  check_last(ctx, 1, dr, "r");
  Shape y = ctx.in(1).shape;
  y.back() = dx;
  return {{ctx.in(0).dtype, y}};
}

// x, x_hat, precision? -> eps like x
std::vector<TensorType> infer_prediction_error(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat, "x");
  same_dtype(ctx, {0, 1, 2});
  const TensorType& x = ctx.in(0);
  if (x.rank() < 1) ctx.fail(ErrorKind::Shape, "x must be [..., Dx], got ", x.str());
  if (ctx.in(1).shape != x.shape)
    ctx.fail(ErrorKind::Shape, "x_hat ", ctx.in(1).str(), " must have x's shape ", x.str());
  if (ctx.has(2)) {
    int64_t d = x.shape.back();
    const Shape& p = ctx.in(2).shape;
    if (p != Shape{d, d} && p != Shape{d})
      ctx.fail(ErrorKind::Shape, "precision ", ctx.in(2).str(), " must be [", d, ", ", d,
               "] or its diagonal [", d, "]");
  }
  return {x};
}

// r, w, eps -> r_new like r
std::vector<TensorType> infer_update_representation(const InferCtx& ctx) {
  check_lr(ctx);
  check_act(ctx, true);
  require_dtype(ctx, 0, dtypes::kFloat, "r");
  same_dtype(ctx, {0, 1, 2});
  auto [dx, dr] = weight_dims(ctx, 1);
  check_last(ctx, 0, dr, "r");
  check_last(ctx, 2, dx, "eps");
  check_same_lead(ctx, 0, 2);
  return {ctx.in(0)};
}

// w, eps, r -> w_new like w
std::vector<TensorType> infer_update_weights(const InferCtx& ctx) {
  check_lr(ctx);
  check_act(ctx, false);
  require_dtype(ctx, 0, dtypes::kFloat, "W");
  same_dtype(ctx, {0, 1, 2});
  auto [dx, dr] = weight_dims(ctx, 0);
  check_last(ctx, 1, dx, "eps");
  check_last(ctx, 2, dr, "r");
  check_same_lead(ctx, 1, 2);
  return {ctx.in(0)};
}

}  // namespace

void register_rules_PredictiveCoding(RuleTable& table) {
  table[OpKind::PcPrediction].infer = infer_prediction;
  table[OpKind::PcPredictionError].infer = infer_prediction_error;
  table[OpKind::PcUpdateRepresentation].infer = infer_update_representation;
  table[OpKind::PcUpdateWeights].infer = infer_update_weights;
}

}  // namespace tessel
