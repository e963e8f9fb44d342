// Shape rules of the Hawkes category (kernels pending: "domain libraries"). Univariate
// exponential kernel, shapes from DOMAIN-OPS.md: events [B,N] (times, padded; mask [B,N] marks
// the real ones, bool or the events' float dtype), t_query [B,Q], t_end [B].
#include <cmath>

#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

// mu >= 0 (> 0 where log λ is taken), alpha >= 0, beta > 0, all finite.
void check_params(const InferCtx& ctx, bool has_mu, bool mu_positive) {
  const Attrs& a = ctx.attrs();
  double alpha = a.f("alpha"), beta = a.f("beta");
  if (!(std::isfinite(alpha) && alpha >= 0))
    ctx.fail(ErrorKind::Value, "alpha=", alpha, " must be finite and >= 0");
  if (!(std::isfinite(beta) && beta > 0))
    ctx.fail(ErrorKind::Value, "beta=", beta, " must be finite and > 0");
  if (!has_mu) return;
  double mu = a.f("mu");
  if (!(std::isfinite(mu) && (mu_positive ? mu > 0 : mu >= 0)))
    ctx.fail(ErrorKind::Value, "mu=", mu, " must be finite and ", mu_positive ? "> 0" : ">= 0");
}

// events (input e) [B,N] float; mask (input m) [B,N] bool or the events' dtype.
void check_events(const InferCtx& ctx, int e, int m) {
  require_dtype(ctx, e, dtypes::kFloat, "events");
  require_rank(ctx, e, 2);
  if (m < 0) return;
  if (ctx.in(m).dtype != DType::Bool && ctx.in(m).dtype != ctx.in(e).dtype)
    ctx.fail(ErrorKind::DType, "mask must be bool or ", dtype_name(ctx.in(e).dtype), ", got ",
             ctx.in(m).str());
  if (ctx.in(m).shape != ctx.in(e).shape)
    ctx.fail(ErrorKind::Shape, "mask ", ctx.in(m).str(), " must have the events' shape ",
             ctx.in(e).str());
}

std::vector<TensorType> infer_intensity(const InferCtx& ctx) {
  check_params(ctx, true, false);
  check_events(ctx, 1, 2);
  same_dtype(ctx, {0, 1});
  require_rank(ctx, 0, 2);
  if (ctx.in(0).shape[0] != ctx.in(1).shape[0])
    ctx.fail(ErrorKind::Shape, "t_query and events disagree on the batch B");
  return {ctx.in(0)};
}

std::vector<TensorType> infer_kernel_matrix(const InferCtx& ctx) {
  check_params(ctx, false, false);
  check_events(ctx, 0, -1);
  const Shape& e = ctx.in(0).shape;
  return {{ctx.in(0).dtype, {e[0], e[1], e[1]}}};
}

std::vector<TensorType> infer_log_likelihood(const InferCtx& ctx) {
  check_params(ctx, true, true);
  check_events(ctx, 0, 1);
  same_dtype(ctx, {0, 2});
  if (ctx.in(2).shape != Shape{ctx.in(0).shape[0]})
    ctx.fail(ErrorKind::Shape, "t_end ", ctx.in(2).str(), " must be [B=", ctx.in(0).shape[0], "]");
  return {ctx.in(2)};
}

// -> events f32 [max_events] (unused slots padded), count i64 scalar
std::vector<TensorType> infer_simulate(const InferCtx& ctx) {
  check_params(ctx, true, true);
  double t_end = ctx.attrs().f("t_end");
  if (!(std::isfinite(t_end) && t_end > 0))
    ctx.fail(ErrorKind::Value, "t_end=", t_end, " must be finite and > 0");
  int64_t max_events = ctx.attrs().i("max_events");
  if (max_events < 1) ctx.fail(ErrorKind::Value, "max_events=", max_events, " must be positive");
  return {{DType::F32, {max_events}}, {DType::I64, {}}};
}

}  // namespace

void register_rules_Hawkes(RuleTable& table) {
  table[OpKind::HawkesIntensity].infer = infer_intensity;
  table[OpKind::HawkesKernelMatrix].infer = infer_kernel_matrix;
  table[OpKind::HawkesLogLikelihood].infer = infer_log_likelihood;
  table[OpKind::HawkesSimulate].infer = infer_simulate;
}

}  // namespace tessel
