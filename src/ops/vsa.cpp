// Shape rules of the Vsa category (kernels pending: "domain libraries"). Hypervectors are
// float [..., D] (bipolar vectors as ±1 floats); batch dims broadcast, D must match exactly.
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

// a, b [..., D] -> (broadcast batch shape, D)
Shape pair_shape(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat, "a");
  same_dtype(ctx, {0, 1});
  const TensorType& a = ctx.in(0);
  const TensorType& b = ctx.in(1);
  if (a.rank() < 1 || b.rank() < 1 || a.shape.back() != b.shape.back())
    ctx.fail(ErrorKind::Shape, "a and b must be [..., D] with the same D");
  auto s = broadcast_shapes(a.shape, b.shape);
  if (!s) ctx.fail(ErrorKind::Shape, "the batch dims of a and b do not broadcast");
  return *s;
}

std::vector<TensorType> infer_bind(const InferCtx& ctx) {
  return {{ctx.in(0).dtype, pair_shape(ctx)}};
}

// x [K, ..., D] -> [..., D]
std::vector<TensorType> infer_bundle(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat, "x");
  const TensorType& x = ctx.in(0);
  if (x.rank() < 2 || x.shape[0] < 1)
    ctx.fail(ErrorKind::Shape, "x must be [K, ..., D] with rank >= 2 and K >= 1, got ", x.str());
  return {{x.dtype, Shape(x.shape.begin() + 1, x.shape.end())}};
}

// a, b [..., D] -> [...] cosine similarity
std::vector<TensorType> infer_similarity(const InferCtx& ctx) {
  Shape s = pair_shape(ctx);
  s.pop_back();
  return {{ctx.in(0).dtype, s}};
}

std::vector<TensorType> infer_permute(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kNumeric, "x");
  if (ctx.in(0).rank() < 1 || ctx.in(0).shape.back() < 1)
    ctx.fail(ErrorKind::Shape, "x must be [..., D] with D >= 1 (k wraps modulo D), got ",
             ctx.in(0).str());
  return {ctx.in(0)};
}

}  // namespace

void register_rules_Vsa(RuleTable& table) {
  table[OpKind::VsaBind].infer = infer_bind;
  table[OpKind::VsaBundle].infer = infer_bundle;
  table[OpKind::VsaSimilarity].infer = infer_similarity;
  table[OpKind::VsaPermute].infer = infer_permute;
}

}  // namespace tessel
