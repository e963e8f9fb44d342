// VJP rule of Attention, which emits AttentionBackward per wanted input, and that kind's
// decomposition. With P the attention
// probabilities (0 at masked keys, and on rows that see no key: the reference's convention),
// dV = Pᵀ·dY, dS = P ⊙ (dY·Vᵀ − rowsum(P ⊙ dY·Vᵀ)), dQ = scale·dS·K, dK = scale·dSᵀ·Q. GQA query
// head h reads kv head h / group, so queries are viewed as [B, Hkv, group·Sq, D]: the products
// over the group then sum the kv heads' gradients. A Bias mask gets dS (before the scale)
// summed over the axes it broadcasts along; a Custom (bool) mask gets none.
#include <cmath>
#include <limits>

#include "ops/vjp_util.h"

namespace tessel {
namespace {

// The score scale: 0 means 1/sqrt(D).
double attention_scale(const Attrs& attrs, int64_t d) {
  const double scale = attrs.f("scale");
  if (scale != 0) return scale;
  return d > 0 ? 1.0 / std::sqrt(static_cast<double>(d)) : 1.0;
}

// The keep mask of Causal / SlidingWindow (queries aligned to the last keys) as a bool [Sq, Sk]
// constant.
Value position_mask(GraphBuilder& b, MaskKind kind, int64_t sq, int64_t sk, int64_t window) {
  HostTensor keep = HostTensor::empty(DType::Bool, {sq, sk});
  const int64_t offset = sk - sq;
  for (int64_t i = 0; i < sq; ++i)
    for (int64_t j = 0; j < sk; ++j) {
      bool k = j <= i + offset;
      if (kind == MaskKind::SlidingWindow) k = k && j >= i + offset - window;
      keep.set_f64(i * sk + j, k ? 1 : 0);
    }
  return b.graph().constant(std::move(keep));
}

// Attention's probabilities [B, Hq, Sq, Sk]: softmax over the keys it keeps, zero elsewhere.
Value attention_probabilities(GraphBuilder& b, const Attrs& attrs, Value q, Value k, Value mask,
                              int64_t group) {
  const Shape qs = b.type(q).shape, ks = b.type(k).shape;
  const int64_t batch = qs[0], hq = qs[1], sq = qs[2], d = qs[3], hkv = ks[1], sk = ks[2];
  auto c = [&](double v) { return scalar_like(b, v, q); };
  Value s = b.matmul(b.reshape(q, {batch, hkv, group * sq, d}), k, false, true);
  s = b.mul(b.reshape(s, {batch, hq, sq, sk}), c(attention_scale(attrs, d)));
  if (mask.valid() && b.type(mask).rank() == 2)  // [B, Sk]: a key padding mask
    mask = b.reshape(mask, {batch, 1, 1, sk});
  Value keep;
  switch (attrs.e<MaskKind>("mask_kind")) {
    case MaskKind::None:
      break;
    case MaskKind::Causal:
    case MaskKind::SlidingWindow:
      keep = position_mask(b, attrs.e<MaskKind>("mask_kind"), sq, sk, attrs.i("window"));
      break;
    case MaskKind::Custom:
      keep = b.type(mask).dtype == DType::Bool ? mask : b.cast(mask, DType::Bool);
      break;
    case MaskKind::Bias:
      s = b.add(s, mask);
      break;
  }
  const Value neg_inf = c(-std::numeric_limits<double>::infinity());
  if (keep.valid()) s = b.where(keep, s, neg_inf);
  // The row max, 0 on rows without a visible key (all -inf), so that exp gives 0 there.
  Value m = b.reduce(ReduceOp::Max, s, {3}, true);
  m = b.where(b.compare(CmpOp::Eq, m, neg_inf), c(0), m);
  Value e = b.exp(b.sub(s, m));
  Value z = b.sum(e, {3}, true);
  return b.div(e, b.where(b.compare(CmpOp::Eq, z, c(0)), c(1), z));
}

// dS = P ⊙ (dY·Vᵀ − rowsum(P ⊙ dY·Vᵀ)): the gradient w.r.t. the (scaled, biased) scores, in the
// grouped [B, Hkv, group·Sq, Sk] view.
Value score_gradient(GraphBuilder& b, Value p, Value dy_grouped, Value v) {
  Value dp = b.matmul(dy_grouped, v, false, true);
  return b.mul(p, b.sub(dp, b.sum(b.mul(dp, p), {3}, true)));
}

// The gradient w.r.t. the additive bias of a Bias-masked Attention: dS summed to the bias's
// shape ([B, Sk] key biases are seen as [B, 1, 1, Sk]).
Value attention_bias_gradient(GraphBuilder& b, const Attrs& attrs, Value dy, Value q, Value k,
                              Value v, Value bias) {
  const Shape qs = b.type(q).shape, ks = b.type(k).shape, bs = b.type(bias).shape;
  const int64_t batch = qs[0], hq = qs[1], sq = qs[2], hkv = ks[1], sk = ks[2];
  if (hkv == 0 || hq == 0) return zeros_like(b, bias);
  const int64_t group = hq / hkv;
  auto grouped = [&](Value x) {
    return b.reshape(x, {batch, hkv, group * sq, b.type(x).shape[3]});
  };
  Value p = grouped(attention_probabilities(b, attrs, q, k, bias, group));
  Value ds = b.reshape(score_gradient(b, p, grouped(dy), v), {batch, hq, sq, sk});
  if (bs.size() == 2) return b.reshape(unbroadcast(b, ds, {batch, 1, 1, sk}), bs);
  return unbroadcast(b, ds, bs);
}

// The gradient w.r.t. `wrt` of Attention (q, k, v, mask?) with attrs mask_kind / scale / window,
// dy the output's cotangent: what AttentionBackward computes.
Value attention_backward(GraphBuilder& b, const Attrs& attrs, AttentionBwdWrt wrt, Value dy,
                         Value q, Value k, Value v, Value mask) {
  const Shape qs = b.type(q).shape, ks = b.type(k).shape;
  const int64_t batch = qs[0], hq = qs[1], sq = qs[2], hkv = ks[1];
  if (hkv == 0 || hq == 0)  // no heads: nothing to differentiate
    return zeros_like(b, wrt == AttentionBwdWrt::Query ? q : wrt == AttentionBwdWrt::Key ? k : v);
  const int64_t group = hq / hkv;
  // [B, Hkv, group·Sq, ·] views of the per-query-head values.
  auto grouped = [&](Value x) {
    return b.reshape(x, {batch, hkv, group * sq, b.type(x).shape[3]});
  };
  Value p = grouped(attention_probabilities(b, attrs, q, k, mask, group));
  Value dyg = grouped(dy);
  if (wrt == AttentionBwdWrt::Value) return b.matmul(p, dyg, true, false);
  Value ds = b.mul(score_gradient(b, p, dyg, v), scalar_like(b, attention_scale(attrs, qs[3]), q));
  if (wrt == AttentionBwdWrt::Key) return b.matmul(ds, grouped(q), true, false);
  return b.reshape(b.matmul(ds, k), qs);
}

std::vector<Value> decompose_attention_backward(Graph& g, const Node& node,
                                                std::span<const Value> in) {
  GraphBuilder b(g);
  return {attention_backward(b, node.attrs, node.attrs.e<AttentionBwdWrt>("wrt"), in[0], in[1],
                             in[2], in[3], in.size() > 4 ? in[4] : Value{})};
}

// Emits AttentionBackward for each wanted q / k / v, and a Bias mask's gradient inline.
std::vector<Value> vjp_attention(VjpCtx& ctx) {
  std::vector<Value> grads(ctx.inputs.size());
  const Value mask = ctx.inputs.size() > 3 ? ctx.inputs[3] : Value{};
  const AttentionBwdWrt wrt[] = {AttentionBwdWrt::Query, AttentionBwdWrt::Key,
                                 AttentionBwdWrt::Value};
  for (int i = 0; i < 3; ++i) {
    if (!ctx.needs(i)) continue;
    Attrs a = ctx.node.attrs;
    a.set("wrt", wrt[i]);
    grads[i] = ctx.b.op1(OpKind::AttentionBackward, std::move(a),
                         {ctx.cotangents[0], ctx.inputs[0], ctx.inputs[1], ctx.inputs[2], mask});
  }
  if (mask.valid() && ctx.needs(3) && ctx.node.attrs.e<MaskKind>("mask_kind") == MaskKind::Bias)
    grads[3] = attention_bias_gradient(ctx.b, ctx.node.attrs, ctx.cotangents[0], ctx.inputs[0],
                                       ctx.inputs[1], ctx.inputs[2], mask);
  return grads;
}

}  // namespace

void register_vjp_attention(RuleTable& table) {
  table[OpKind::Attention].vjp = vjp_attention;
  table[OpKind::AttentionBackward].decompose = decompose_attention_backward;
}

}  // namespace tessel
