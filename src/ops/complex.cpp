// Shape rules of the Complex category (kernels pending: "complex"). Complex tensors are c64
// (c128 is storage-only).
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

void require_c64(const InferCtx& ctx, int i, const char* what) {
  if (ctx.in(i).dtype != DType::C64)
    ctx.fail(ErrorKind::DType, what, " must be c64, got ", ctx.in(i).str());
}

// c64 x -> f32 |x|² of the same shape.
std::vector<TensorType> infer_norm_sq(const InferCtx& ctx) {
  require_c64(ctx, 0, "x");
  return {{DType::F32, ctx.in(0).shape}};
}

// f32 dy, c64 x -> c64 dx = dy · 2x (the conjugate Wirtinger gradient).
std::vector<TensorType> infer_norm_sq_backward(const InferCtx& ctx) {
  require_c64(ctx, 1, "x");
  if (ctx.in(0).dtype != DType::F32)
    ctx.fail(ErrorKind::DType, "dy must be f32 (ComplexNormSq's output), got ", ctx.in(0).str());
  if (ctx.in(0).shape != ctx.in(1).shape)
    ctx.fail(ErrorKind::Shape, "dy ", ctx.in(0).str(), " must have x's shape ", ctx.in(1).str());
  return {ctx.in(1)};
}

std::vector<TensorType> infer_conjugate(const InferCtx& ctx) {
  require_c64(ctx, 0, "x");
  return {ctx.in(0)};
}

}  // namespace

void register_rules_Complex(RuleTable& table) {
  table[OpKind::ComplexNormSq].infer = infer_norm_sq;
  table[OpKind::ComplexNormSqBackward].infer = infer_norm_sq_backward;
  table[OpKind::Conjugate].infer = infer_conjugate;
}

}  // namespace tessel
