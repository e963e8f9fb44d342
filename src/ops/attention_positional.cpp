// Shape rules of the AttentionPositional category: Attention, Rope, AxialRope2d, ALiBi. All run
// natively on the reference backend (no decomposition); see
// src/backends/reference/attention_positional.cpp for the exact conventions.
#include <cmath>

#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

constexpr DTypeSet kAttnFloats = dtypes::kFloat | dtypes::kFp8;

void check_finite(const InferCtx& ctx, const char* name) {
  double v = ctx.attrs().f(name);
  if (!std::isfinite(v)) ctx.fail(ErrorKind::Value, name, " must be finite, got ", v);
}

void check_base(const InferCtx& ctx) {
  double base = ctx.attrs().f("base");
  if (!(base > 0) || !std::isfinite(base))
    ctx.fail(ErrorKind::Value, "base must be finite and > 0, got ", base);
}

// The attention mask (input 3) must broadcast to [B, Hq, Sq, Sk]; rank 2 means [B, Sk] (a
// per-batch key padding mask, as BERT), viewed as [B, 1, 1, Sk].
void check_mask(const InferCtx& ctx, MaskKind kind, const Shape& scores) {
  bool needs_mask = kind == MaskKind::Custom || kind == MaskKind::Bias;
  if (!needs_mask) {
    if (ctx.has(3))
      ctx.fail(ErrorKind::Value, "a mask input is only taken with mask_kind Custom or Bias");
    return;
  }
  if (!ctx.has(3))
    ctx.fail(ErrorKind::Value, "mask_kind ", kind == MaskKind::Custom ? "Custom" : "Bias",
             " needs a mask input");
  const TensorType& m = ctx.in(3);
  constexpr DTypeSet kKeepDTypes = dtypes::kNumeric | dtypes::kFp8 | DTypeSet{DType::Bool};
  if (kind == MaskKind::Custom && !kKeepDTypes.contains(m.dtype))
    ctx.fail(ErrorKind::DType, "a Custom mask must be bool or real numeric (nonzero = keep), got ",
             dtype_name(m.dtype));
  if (kind == MaskKind::Bias && !kAttnFloats.contains(m.dtype))
    ctx.fail(ErrorKind::DType, "a Bias mask must be a float tensor, got ", dtype_name(m.dtype));
  Shape s = m.shape;
  if (s.size() == 2) s = {s[0], 1, 1, s[1]};
  auto b = broadcast_shapes(s, scores);
  if (s.size() > 4 || !b || *b != scores)
    ctx.fail(ErrorKind::Shape, "mask has shape ", shape_str(m.shape),
             "; expected a shape that broadcasts to [B,Hq,Sq,Sk] = ", shape_str(scores),
             " or [B,Sk]");
}

std::vector<TensorType> infer_attention(const InferCtx& ctx) {
  for (int i = 0; i < 3; ++i) {
    if (ctx.in(i).rank() != 4)
      ctx.fail(ErrorKind::Shape, "q, k and v must have rank 4 ([B,H,S,D]), got input ", i, " ",
               ctx.in(i).str());
  }
  require_dtype(ctx, 0, kAttnFloats, "q");
  same_dtype(ctx, {0, 1, 2});
  const Shape& q = ctx.in(0).shape;
  const Shape& k = ctx.in(1).shape;
  const Shape& v = ctx.in(2).shape;
  if (k[0] != q[0] || v[0] != q[0])
    ctx.fail(ErrorKind::Shape, "q, k and v must share the batch size B");
  if (v[1] != k[1]) ctx.fail(ErrorKind::Shape, "k and v must have the same number of heads");
  if (k[1] == 0 ? q[1] != 0 : q[1] % k[1] != 0)
    ctx.fail(ErrorKind::Shape, "query heads (", q[1], ") must be a multiple of kv heads (", k[1],
             ")");
  if (v[2] != k[2]) ctx.fail(ErrorKind::Shape, "k and v must have the same length Sk");
  if (k[3] != q[3]) ctx.fail(ErrorKind::Shape, "q and k must have the same head size D");
  check_finite(ctx, "scale");
  int64_t window = ctx.attrs().i("window");
  if (window < 0) ctx.fail(ErrorKind::Value, "window must be >= 0, got ", window);
  auto kind = ctx.attrs().e<MaskKind>("mask_kind");
  check_mask(ctx, kind, {q[0], q[1], q[2], k[2]});
  return {{ctx.in(0).dtype, {q[0], q[1], q[2], v[3]}}};
}

std::vector<TensorType> infer_rope(const InferCtx& ctx) {
  require_dtype(ctx, 0, kAttnFloats, "x");
  const TensorType& x = ctx.in(0);
  if (x.rank() < 2)
    ctx.fail(ErrorKind::Shape, "x must have rank >= 2 ([..., S, D]), got ", x.str());
  int64_t seq = x.shape[x.rank() - 2], dim = x.shape[x.rank() - 1];
  int64_t rotary_dim = ctx.attrs().i("rotary_dim");
  if (rotary_dim < 0 || rotary_dim % 2 != 0 || rotary_dim > dim)
    ctx.fail(ErrorKind::Value, "rotary_dim must be even and in [0, D = ", dim, "], got ",
             rotary_dim);
  if (rotary_dim == 0 && dim % 2 != 0)
    ctx.fail(ErrorKind::Shape, "rotary_dim 0 rotates all of D, which must be even; got D = ", dim);
  check_base(ctx);
  if (ctx.has(1)) {
    require_dtype(ctx, 1, dtypes::kInt | kAttnFloats, "positions");
    if (ctx.in(1).shape != Shape{seq})
      ctx.fail(ErrorKind::Shape, "positions must have shape [S] = [", seq, "], got ",
               ctx.in(1).str());
  }
  return {x};
}

std::vector<TensorType> infer_axial_rope2d(const InferCtx& ctx) {
  require_dtype(ctx, 0, kAttnFloats, "x");
  const TensorType& x = ctx.in(0);
  if (x.rank() < 2)
    ctx.fail(ErrorKind::Shape, "x must have rank >= 2 ([..., N, D]), got ", x.str());
  int64_t gh = ctx.attrs().i("grid_h"), gw = ctx.attrs().i("grid_w");
  if (gh < 1 || gw < 1)
    ctx.fail(ErrorKind::Value, "grid_h and grid_w must be >= 1, got ", gh, " and ", gw);
  int64_t n = x.shape[x.rank() - 2], dim = x.shape[x.rank() - 1];
  if (n != gh * gw)
    ctx.fail(ErrorKind::Shape, "N = ", n, " must equal grid_h·grid_w = ", gh, "·", gw);
  if (dim % 4 != 0) ctx.fail(ErrorKind::Shape, "D must be a multiple of 4, got ", dim);
  check_base(ctx);
  return {x};
}

std::vector<TensorType> infer_alibi(const InferCtx& ctx) {
  require_dtype(ctx, 0, kAttnFloats, "scores");
  if (ctx.in(0).rank() != 4)
    ctx.fail(ErrorKind::Shape, "scores must have rank 4 ([B,H,Sq,Sk]), got ", ctx.in(0).str());
  double max_bias = ctx.attrs().f("max_bias");
  if (!(max_bias >= 0) || !std::isfinite(max_bias))
    ctx.fail(ErrorKind::Value, "max_bias must be finite and >= 0, got ", max_bias);
  return {ctx.in(0)};
}

}  // namespace

void register_rules_AttentionPositional(RuleTable& table) {
  table[OpKind::Attention].infer = infer_attention;
  table[OpKind::Rope].infer = infer_rope;
  table[OpKind::AxialRope2d].infer = infer_axial_rope2d;
  table[OpKind::ALiBi].infer = infer_alibi;
}

}  // namespace tessel
