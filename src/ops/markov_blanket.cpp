// Shape rules of the MarkovBlanket category (kernels pending: "domain libraries").
// As in DOMAIN-OPS.md: adj [N,N] (adj_ij != 0 for an edge i -> j), node masks [N] (bool or
// 0/1 integers), labels [N] (i64 from BlanketPartition: 0 internal, 1 sensory, 2 active,
// 3 external), states x [..., N], precision J [N,N], Γ [N,N], its diagonal [N], or one value.
// BlanketFlow returns x's shape: the selected rows hold the flow, the others zero.
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

constexpr DTypeSet kMask = dtypes::kInt | DTypeSet{DType::Bool};

// Input i is [N,N]; returns N.
int64_t square_dim(const InferCtx& ctx, int i, const char* what) {
  const TensorType& t = ctx.in(i);
  if (t.rank() != 2 || t.shape[0] != t.shape[1])
    ctx.fail(ErrorKind::Shape, what, " ", t.str(), " must be a square [N, N]");
  return t.shape[0];
}

void check_vector(const InferCtx& ctx, int i, int64_t n, DTypeSet allowed, const char* what) {
  require_dtype(ctx, i, allowed, what);
  if (ctx.in(i).shape != Shape{n})
    ctx.fail(ErrorKind::Shape, what, " ", ctx.in(i).str(), " must be [N=", n, "]");
}

std::vector<TensorType> infer_partition(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kNumeric | DTypeSet{DType::Bool}, "adj");
  int64_t n = square_dim(ctx, 0, "adj");
  check_vector(ctx, 1, n, kMask, "internal_mask");
  return {{DType::I64, {n}}};
}

// x, j, labels, gamma? -> dx like x
std::vector<TensorType> infer_flow(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat, "x");
  same_dtype(ctx, {0, 1, 3});
  int64_t n = square_dim(ctx, 1, "J");
  const TensorType& x = ctx.in(0);
  if (x.rank() < 1 || x.shape.back() != n)
    ctx.fail(ErrorKind::Shape, "x ", x.str(), " must be [..., N=", n, "]");
  check_vector(ctx, 2, n, dtypes::kIndex, "labels");
  if (ctx.has(3)) {
    const Shape& g = ctx.in(3).shape;
    if (g != Shape{n, n} && g != Shape{n} && ctx.in(3).numel() != 1)
      ctx.fail(ErrorKind::Shape, "gamma ", ctx.in(3).str(), " must be [N, N], [N] or one value");
  }
  return {x};
}

// sigma, mask_a, mask_b -> scalar
std::vector<TensorType> infer_mutual_information(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat, "sigma");
  int64_t n = square_dim(ctx, 0, "sigma");
  check_vector(ctx, 1, n, kMask, "mask_a");
  check_vector(ctx, 2, n, kMask, "mask_b");
  return {{ctx.in(0).dtype, {}}};
}

}  // namespace

void register_rules_MarkovBlanket(RuleTable& table) {
  table[OpKind::BlanketPartition].infer = infer_partition;
  table[OpKind::BlanketFlow].infer = infer_flow;
  table[OpKind::BlanketMutualInformation].infer = infer_mutual_information;
}

}  // namespace tessel
