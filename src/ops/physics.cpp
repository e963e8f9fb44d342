// Shape rules of the Physics category (kernels pending: "physics"). Grids are float: Laplacian
// acts on the last two axes [..., H, W]; Grad1d, Divergence1d and the Madelung / Bohmian kernels
// on the last axis [..., N]. QuantumPotential, BohmianVelocity and MadelungContinuity have no
// boundary attribute: their central differences are periodic. BohmianVelocity takes a c64 wave
// function and returns an f32 velocity.
#include <cmath>

#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

void check_positive(const InferCtx& ctx, const char* name) {
  double v = ctx.attrs().f(name);
  if (!(std::isfinite(v) && v > 0))
    ctx.fail(ErrorKind::Value, name, "=", v, " must be finite and > 0");
}

void check_grid(const InferCtx& ctx, int i, int axes) {
  require_dtype(ctx, i, dtypes::kFloat, "the field");
  const TensorType& t = ctx.in(i);
  if (t.rank() < axes)
    ctx.fail(ErrorKind::Shape, "the field must have rank >= ", axes, ", got ", t.str());
  for (int d = t.rank() - axes; d < t.rank(); ++d)
    if (t.shape[d] < 1) ctx.fail(ErrorKind::Shape, "the grid ", t.str(), " is empty");
}

std::vector<TensorType> infer_laplacian(const InferCtx& ctx) {
  int64_t order = ctx.attrs().i("order");
  if (order != 2 && order != 4)
    ctx.fail(ErrorKind::Value, "order=", order, " must be 2 (5-point) or 4 (4th-order stencil)");
  check_positive(ctx, "dx");
  check_grid(ctx, 0, 2);
  return {ctx.in(0)};
}

std::vector<TensorType> infer_stencil_1d(const InferCtx& ctx) {
  check_positive(ctx, "dx");
  check_grid(ctx, 0, 1);
  return {ctx.in(0)};
}

std::vector<TensorType> infer_quantum_potential(const InferCtx& ctx) {
  check_positive(ctx, "hbar");
  check_positive(ctx, "mass");
  return infer_stencil_1d(ctx);
}

std::vector<TensorType> infer_bohmian_velocity(const InferCtx& ctx) {
  check_positive(ctx, "hbar");
  check_positive(ctx, "mass");
  check_positive(ctx, "dx");
  const TensorType& psi = ctx.in(0);
  if (psi.dtype != DType::C64)
    ctx.fail(ErrorKind::DType, "psi must be a c64 wave function, got ", psi.str());
  if (psi.rank() < 1 || psi.shape.back() < 1)
    ctx.fail(ErrorKind::Shape, "psi must be [..., N] with N >= 1, got ", psi.str());
  return {{DType::F32, psi.shape}};
}

std::vector<TensorType> infer_madelung(const InferCtx& ctx) {
  check_positive(ctx, "dx");
  check_grid(ctx, 0, 1);
  same_dtype(ctx, {0, 1});
  if (ctx.in(1).shape != ctx.in(0).shape)
    ctx.fail(ErrorKind::Shape, "v ", ctx.in(1).str(), " must have rho's shape ", ctx.in(0).str());
  return {ctx.in(0)};
}

}  // namespace

void register_rules_Physics(RuleTable& table) {
  table[OpKind::Laplacian].infer = infer_laplacian;
  table[OpKind::Grad1d].infer = infer_stencil_1d;
  table[OpKind::Divergence1d].infer = infer_stencil_1d;
  table[OpKind::QuantumPotential].infer = infer_quantum_potential;
  table[OpKind::BohmianVelocity].infer = infer_bohmian_velocity;
  table[OpKind::MadelungContinuity].infer = infer_madelung;
}

}  // namespace tessel
