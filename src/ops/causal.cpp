// Shape rules of the Causal category (kernels pending: "domain libraries"). Shapes from
// DOMAIN-OPS.md. A linear-Gaussian SCM is x = Wᵀx + b + e with W [N,N], b [N]; an intervention
// is do_mask [N] (bool or 0/1 integers) with do_value [N]. Counterfactual and
// DagMarkovFactorization accept a batch of observations x [..., N]. Cate (uncertain signature):
// x [N,D] (bins stratify x[:,0]), t [N] (bool, integer or 0/1 float), y [N] -> tau [bins].
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

constexpr DTypeSet kMask = dtypes::kInt | DTypeSet{DType::Bool};

void require_shape(const InferCtx& ctx, int i, const Shape& shape, const char* what) {
  if (ctx.in(i).shape != shape)
    ctx.fail(ErrorKind::Shape, what, " ", ctx.in(i).str(), " must be ", shape_str(shape));
}

// Input i is [N,N]; returns N.
int64_t square_dim(const InferCtx& ctx, int i, const char* what) {
  const TensorType& t = ctx.in(i);
  if (t.rank() != 2 || t.shape[0] != t.shape[1])
    ctx.fail(ErrorKind::Shape, what, " ", t.str(), " must be a square [N, N]");
  return t.shape[0];
}

// w (input 0), b (1), then do_mask / do_value at `mask`; returns N.
int64_t check_scm(const InferCtx& ctx, int mask) {
  require_dtype(ctx, 0, dtypes::kFloat, "W");
  int64_t n = square_dim(ctx, 0, "W");
  require_shape(ctx, 1, {n}, "b");
  require_dtype(ctx, mask, kMask, "do_mask");
  require_shape(ctx, mask, {n}, "do_mask");
  require_shape(ctx, mask + 1, {n}, "do_value");
  return n;
}

void check_batch_of_vectors(const InferCtx& ctx, int i, int64_t n, const char* what) {
  if (ctx.in(i).rank() < 1 || ctx.in(i).shape.back() != n)
    ctx.fail(ErrorKind::Shape, what, " ", ctx.in(i).str(), " must be [..., N=", n, "]");
}

// w, b, noise_cov, do_mask, do_value -> mean [N], cov [N,N]
std::vector<TensorType> infer_do_calculus(const InferCtx& ctx) {
  DType t = same_dtype(ctx, {0, 1, 2, 4});
  int64_t n = check_scm(ctx, 3);
  require_shape(ctx, 2, {n, n}, "noise_cov");
  return {{t, {n}}, {t, {n, n}}};
}

// p_y_given_xz [X,Z,Y], p_z [Z] -> [X,Y]
std::vector<TensorType> infer_backdoor(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat, "p_y_given_xz");
  same_dtype(ctx, {0, 1});
  require_rank(ctx, 0, 3);
  const Shape& p = ctx.in(0).shape;
  require_shape(ctx, 1, {p[1]}, "p_z");
  return {{ctx.in(0).dtype, {p[0], p[2]}}};
}

// p_m_given_x [X,M], p_y_given_xm [X,M,Y], p_x [X] -> [X,Y]
std::vector<TensorType> infer_frontdoor(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat, "p_m_given_x");
  same_dtype(ctx, {0, 1, 2});
  require_rank(ctx, 0, 2);
  require_rank(ctx, 1, 3);
  const Shape& pm = ctx.in(0).shape;
  const Shape& py = ctx.in(1).shape;
  if (py[0] != pm[0] || py[1] != pm[1])
    ctx.fail(ErrorKind::Shape, "p_y_given_xm ", ctx.in(1).str(), " must be [X=", pm[0],
             ", M=", pm[1], ", Y]");
  require_shape(ctx, 2, {pm[0]}, "p_x");
  return {{ctx.in(0).dtype, {pm[0], py[2]}}};
}

// z, x, y [..., N] -> beta [...]
std::vector<TensorType> infer_iv_estimate(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat, "z");
  same_dtype(ctx, {0, 1, 2});
  const TensorType& z = ctx.in(0);
  if (z.rank() < 1 || z.shape.back() < 2)
    ctx.fail(ErrorKind::Shape, "z must be [..., N] with N >= 2 samples, got ", z.str());
  require_shape(ctx, 1, z.shape, "x");
  require_shape(ctx, 2, z.shape, "y");
  return {{z.dtype, Shape(z.shape.begin(), z.shape.end() - 1)}};
}

// x [N,D], t [N], y [N] -> tau [bins]
std::vector<TensorType> infer_cate(const InferCtx& ctx) {
  int64_t bins = ctx.attrs().i("bins");
  if (bins < 1) ctx.fail(ErrorKind::Value, "bins=", bins, " must be positive");
  require_dtype(ctx, 0, dtypes::kFloat, "x");
  same_dtype(ctx, {0, 2});
  require_dtype(ctx, 1, kMask | dtypes::kFloat, "t");
  const TensorType& x = ctx.in(0);
  if (x.rank() != 2 || x.shape[1] < 1)
    ctx.fail(ErrorKind::Shape, "x ", x.str(), " must be [N, D] with D >= 1");
  require_shape(ctx, 1, {x.shape[0]}, "t");
  require_shape(ctx, 2, {x.shape[0]}, "y");
  return {{x.dtype, {bins}}};
}

// w, b, x_obs [..., N], do_mask, do_value -> x_cf like x_obs
std::vector<TensorType> infer_counterfactual(const InferCtx& ctx) {
  same_dtype(ctx, {0, 1, 2, 4});
  int64_t n = check_scm(ctx, 3);
  check_batch_of_vectors(ctx, 2, n, "x_obs");
  return {ctx.in(2)};
}

// adj [N,N], w [N,N], b [N], noise_var [N], x [..., N] -> log p [...]
std::vector<TensorType> infer_dag_factorization(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kNumeric | DTypeSet{DType::Bool}, "adj");
  require_dtype(ctx, 1, dtypes::kFloat, "W");
  same_dtype(ctx, {1, 2, 3, 4});
  int64_t n = square_dim(ctx, 0, "adj");
  require_shape(ctx, 1, {n, n}, "W");
  require_shape(ctx, 2, {n}, "b");
  require_shape(ctx, 3, {n}, "noise_var");
  check_batch_of_vectors(ctx, 4, n, "x");
  return {{ctx.in(4).dtype, Shape(ctx.in(4).shape.begin(), ctx.in(4).shape.end() - 1)}};
}

}  // namespace

void register_rules_Causal(RuleTable& table) {
  table[OpKind::DoCalculus].infer = infer_do_calculus;
  table[OpKind::BackdoorAdjustment].infer = infer_backdoor;
  table[OpKind::FrontdoorAdjustment].infer = infer_frontdoor;
  table[OpKind::IvEstimate].infer = infer_iv_estimate;
  table[OpKind::Cate].infer = infer_cate;
  table[OpKind::Counterfactual].infer = infer_counterfactual;
  table[OpKind::DagMarkovFactorization].infer = infer_dag_factorization;
}

}  // namespace tessel
