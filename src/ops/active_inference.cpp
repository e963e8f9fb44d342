// Shape rules of the ActiveInference category (kernels pending: "domain libraries").
// Discrete POMDP as in DOMAIN-OPS.md: A [O,S] likelihood, B [S,S,U] transitions, C [O] log
// preferences, beliefs / priors [..., S]. Leading batch dims are allowed: an observation or
// action index (i32 / i64) then has the beliefs' leading shape (a scalar when unbatched).
#include <cmath>

#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

// Input i is A [O,S]; returns {O, S}.
std::pair<int64_t, int64_t> likelihood_dims(const InferCtx& ctx, int i) {
  if (ctx.in(i).rank() != 2) ctx.fail(ErrorKind::Shape, "A ", ctx.in(i).str(), " must be [O, S]");
  return {ctx.in(i).shape[0], ctx.in(i).shape[1]};
}

// Input i is a belief [..., S].
void check_belief(const InferCtx& ctx, int i, int64_t s, const char* what) {
  const TensorType& t = ctx.in(i);
  if (t.rank() < 1 || t.shape.back() != s)
    ctx.fail(ErrorKind::Shape, what, " ", t.str(), " must be [..., S=", s, "]");
}

// Input i is an index with the leading shape of `belief`.
void check_index(const InferCtx& ctx, int i, const TensorType& belief, const char* what) {
  require_dtype(ctx, i, dtypes::kIndex, what);
  Shape lead(belief.shape.begin(), belief.shape.end() - 1);
  if (ctx.in(i).shape != lead)
    ctx.fail(ErrorKind::Shape, what, " ", ctx.in(i).str(), " must have shape ", shape_str(lead),
             " (the beliefs' leading dims)");
}

// a, prior, obs -> q like prior
std::vector<TensorType> infer_belief_update(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat, "A");
  same_dtype(ctx, {0, 1});
  auto [o, s] = likelihood_dims(ctx, 0);
  (void)o;
  check_belief(ctx, 1, s, "prior");
  check_index(ctx, 2, ctx.in(1), "obs");
  return {ctx.in(1)};
}

// q, a, prior, obs -> F [...]
std::vector<TensorType> infer_free_energy(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat, "q");
  same_dtype(ctx, {0, 1, 2});
  auto [o, s] = likelihood_dims(ctx, 1);
  (void)o;
  check_belief(ctx, 0, s, "q");
  if (ctx.in(2).shape != ctx.in(0).shape)
    ctx.fail(ErrorKind::Shape, "prior ", ctx.in(2).str(), " must have q's shape ", ctx.in(0).str());
  check_index(ctx, 3, ctx.in(0), "obs");
  return {{ctx.in(0).dtype, ctx.in(3).shape}};
}

// q, a, b, c, u -> G [...]
std::vector<TensorType> infer_expected_free_energy(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat, "q");
  same_dtype(ctx, {0, 1, 2, 3});
  auto [o, s] = likelihood_dims(ctx, 1);
  check_belief(ctx, 0, s, "q");
  const TensorType& b = ctx.in(2);
  if (b.rank() != 3 || b.shape[0] != s || b.shape[1] != s || b.shape[2] < 1)
    ctx.fail(ErrorKind::Shape, "B ", b.str(), " must be [S=", s, ", S, U]");
  if (ctx.in(3).shape != Shape{o})
    ctx.fail(ErrorKind::Shape, "C ", ctx.in(3).str(), " must be [O=", o, "]");
  check_index(ctx, 4, ctx.in(0), "u");
  return {{ctx.in(0).dtype, ctx.in(4).shape}};
}

// g [..., U] -> softmax(-gamma g) over the last axis
std::vector<TensorType> infer_precision_weight(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat, "G");
  if (ctx.in(0).rank() < 1 || ctx.in(0).shape.back() < 1)
    ctx.fail(ErrorKind::Shape, "G must be [..., U] with U >= 1, got ", ctx.in(0).str());
  double gamma = ctx.attrs().f("gamma");
  if (!std::isfinite(gamma)) ctx.fail(ErrorKind::Value, "gamma=", gamma, " must be finite");
  return {ctx.in(0)};
}

}  // namespace

void register_rules_ActiveInference(RuleTable& table) {
  table[OpKind::BeliefUpdate].infer = infer_belief_update;
  table[OpKind::FreeEnergy].infer = infer_free_energy;
  table[OpKind::ExpectedFreeEnergy].infer = infer_expected_free_energy;
  table[OpKind::PrecisionWeight].infer = infer_precision_weight;
}

}  // namespace tessel
