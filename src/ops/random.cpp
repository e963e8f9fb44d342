// Shape rules and decompositions of the Random category: RngUniform, RngNormal, Dropout. Every
// draw comes from src/runtime/rng.h, element i from (seed, i) alone, so a decomposition and a
// native kernel produce the same bits.
#include <cmath>

#include "ir/builder.h"
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

constexpr DTypeSet kFloats = dtypes::kFloat | dtypes::kFp8;

TensorType fill_type(const InferCtx& ctx) {
  const Shape& shape = ctx.attrs().ints("shape");
  for (int64_t d : shape)
    if (d < 0) ctx.fail(ErrorKind::Shape, "negative dimension in shape ", shape_str(shape));
  DType t = ctx.attrs().dtype("dtype");
  if (!kFloats.contains(t))
    ctx.fail(ErrorKind::DType, "dtype ", dtype_name(t), " is not a float; expected one of ",
             kFloats.to_string());
  return {t, shape};
}

std::vector<TensorType> infer_rng_uniform(const InferCtx& ctx) {
  TensorType t = fill_type(ctx);
  double low = ctx.attrs().f("low"), high = ctx.attrs().f("high");
  if (!std::isfinite(low) || !std::isfinite(high) || low > high)
    ctx.fail(ErrorKind::Value, "low ", low, " and high ", high, " must be finite with low <= high");
  return {t};
}

std::vector<TensorType> infer_rng_normal(const InferCtx& ctx) {
  TensorType t = fill_type(ctx);
  double mean = ctx.attrs().f("mean"), std = ctx.attrs().f("std");
  if (!std::isfinite(mean) || !std::isfinite(std) || std < 0)
    ctx.fail(ErrorKind::Value, "mean ", mean, " and std ", std, " must be finite with std >= 0");
  return {t};
}

std::vector<TensorType> infer_dropout(const InferCtx& ctx) {
  require_dtype(ctx, 0, kFloats, "x");
  double p = ctx.attrs().f("p");
  if (!(p >= 0.0 && p < 1.0)) ctx.fail(ErrorKind::Value, "p ", p, " must be in [0, 1)");
  return {ctx.in(0)};
}

// keep = RngUniform(f32) >= (float)p; y = keep ? x · scale : 0, scale = 1/(1-p) in x's dtype.
// f32 holds rng::uniform's 24-bit values exactly, so the comparison is the native kernel's.
std::vector<Value> decompose_dropout(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  const TensorType& x = b.type(in[0]);
  double p = node.attrs.f("p");
  Value u = g.add1(
      OpKind::RngUniform,
      Attrs().set("shape", x.shape).set("dtype", DType::F32).set("seed", node.attrs.i("seed")), {});
  Value keep = b.compare(CmpOp::Ge, u, b.scalar(p, DType::F32));
  Value scaled = b.mul(in[0], b.scalar(1.0 / (1.0 - p), x.dtype));
  return {b.where(keep, scaled, b.scalar(0.0, x.dtype))};
}

}  // namespace

void register_rules_Random(RuleTable& table) {
  table[OpKind::RngUniform].infer = infer_rng_uniform;
  table[OpKind::RngNormal].infer = infer_rng_normal;
  table[OpKind::Dropout].infer = infer_dropout;
  table[OpKind::Dropout].decompose = decompose_dropout;
}

}  // namespace tessel
