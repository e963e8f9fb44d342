// Shape rules and decompositions of the FusedComposites category. Every kind here is a composite:
// its decomposition (into MatMul, Binary, Activation, LayerNorm, RmsNorm, Reshape, Transpose and
// Attention) is the definition a fused kernel must match. All inputs share x's float dtype.
#include <cmath>

#include "ir/builder.h"
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

constexpr DTypeSet kFusedFloats = dtypes::kFloat | dtypes::kFp8;

// Every present input has x's dtype, a float.
DType float_inputs(const InferCtx& ctx) {
  require_dtype(ctx, 0, kFusedFloats, "x");
  DType dt = ctx.in(0).dtype;
  for (int i = 1; i < ctx.num_inputs(); ++i)
    if (ctx.has(i) && ctx.in(i).dtype != dt)
      ctx.fail(ErrorKind::DType, "input ", i, " has dtype ", dtype_name(ctx.in(i).dtype),
               "; every input must have x's dtype ", dtype_name(dt));
  return dt;
}

void check_eps(const InferCtx& ctx) {
  double eps = ctx.attrs().f("eps");
  if (!(eps >= 0) || !std::isfinite(eps))
    ctx.fail(ErrorKind::Value, "eps must be finite and >= 0, got ", eps);
}

// Input i must be a matrix [rows, cols] (rows < 0: any); returns it.
const Shape& require_matrix(const InferCtx& ctx, int i, int64_t rows, const char* what) {
  const Shape& s = ctx.in(i).shape;
  if (s.size() != 2 || (rows >= 0 && s[0] != rows))
    ctx.fail(ErrorKind::Shape, what, " must be a matrix with ",
             rows >= 0 ? std::to_string(rows) : "any", " rows, got ", ctx.in(i).str());
  return s;
}

// Optional input i, when present, must be a vector [n].
void check_vector(const InferCtx& ctx, int i, int64_t n, const char* what) {
  if (ctx.has(i) && ctx.in(i).shape != Shape{n})
    ctx.fail(ErrorKind::Shape, what, " must be [", n, "], got ", ctx.in(i).str());
}

Shape with_last(Shape s, int64_t last) {
  s.back() = last;
  return s;
}

Value opt(std::span<const Value> in, size_t i) { return i < in.size() ? in[i] : Value{}; }

// x·w (+ b when present).
Value linear(GraphBuilder& b, Value x, Value w, Value bias, bool transpose_w = false) {
  Value y = b.matmul(x, w, false, transpose_w);
  return bias.valid() ? b.add(y, bias) : y;
}

Value activate(GraphBuilder& b, ActivationKind act, Value x) {
  return act == ActivationKind::Identity ? x : b.activation(act, x);
}

// A per-batch [B,D] modulation of x [B,S,D] is read as [B,1,D]; any other shape must broadcast
// to x as it is.
Shape modulation_shape(const Shape& x, const Shape& m) {
  if (x.size() == 3 && m.size() == 2) return {m[0], 1, m[1]};
  return m;
}

void check_modulation(const InferCtx& ctx, int i, const char* what) {
  const Shape& x = ctx.in(0).shape;
  Shape m = modulation_shape(x, ctx.in(i).shape);
  auto b = broadcast_shapes(m, x);
  if (m.size() > x.size() || !b || *b != x)
    ctx.fail(ErrorKind::Shape, what, " has shape ", ctx.in(i).str(),
             "; expected [B,D] over x [B,S,D] = ", shape_str(x),
             " (or a shape that broadcasts to x)");
}

Value modulation(GraphBuilder& b, Value x, Value m) {
  Shape s = modulation_shape(b.type(x).shape, b.type(m).shape);
  return s == b.type(m).shape ? m : b.reshape(m, s);
}

// ---------------------------------------------------------------------------------------------
// MLP and projection.

std::vector<TensorType> infer_fused_swiglu(const InferCtx& ctx) {
  DType dt = float_inputs(ctx);
  const Shape& x = ctx.in(0).shape;
  if (x.empty()) ctx.fail(ErrorKind::Shape, "x must have rank >= 1 ([...,K])");
  const Shape& wg = require_matrix(ctx, 1, x.back(), "w_gate ([K,F])");
  require_matrix(ctx, 2, x.back(), "w_up ([K,F])");
  if (ctx.in(2).shape != wg)
    ctx.fail(ErrorKind::Shape, "w_up must have w_gate's shape ", shape_str(wg));
  const Shape& wd = require_matrix(ctx, 3, wg[1], "w_down ([F,N])");
  return {{dt, with_last(x, wd[1])}};
}

std::vector<Value> decompose_fused_swiglu(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  Value gate = b.activation(ActivationKind::Silu, b.matmul(in[0], in[1]));
  Value up = b.matmul(in[0], in[2]);
  return {b.matmul(b.mul(gate, up), in[3])};
}

std::vector<TensorType> infer_fused_matmul_bias_act(const InferCtx& ctx) {
  DType dt = float_inputs(ctx);
  const Shape& x = ctx.in(0).shape;
  if (x.empty()) ctx.fail(ErrorKind::Shape, "x must have rank >= 1 ([...,K])");
  bool tb = ctx.attrs().b("transpose_b");
  const Shape& w = ctx.in(1).shape;
  if (w.size() != 2 || w[tb ? 1 : 0] != x.back())
    ctx.fail(ErrorKind::Shape, "w must be ", tb ? "[N,K]" : "[K,N]", " with K = ", x.back(),
             ", got ", ctx.in(1).str());
  int64_t n = w[tb ? 0 : 1];
  check_vector(ctx, 2, n, "b");
  return {{dt, with_last(x, n)}};
}

std::vector<Value> decompose_fused_matmul_bias_act(Graph& g, const Node& node,
                                                   std::span<const Value> in) {
  GraphBuilder b(g);
  Value y = linear(b, in[0], in[1], opt(in, 2), node.attrs.b("transpose_b"));
  return {activate(b, node.attrs.e<ActivationKind>("act"), y)};
}

// ---------------------------------------------------------------------------------------------
// Residual + normalization, DiT modulation.

std::vector<TensorType> infer_fused_residual_norm(const InferCtx& ctx, int num_affine) {
  DType dt = float_inputs(ctx);
  check_eps(ctx);
  auto sum = broadcast_shapes(ctx.in(0).shape, ctx.in(1).shape);
  if (!sum)
    ctx.fail(ErrorKind::Shape, "x ", ctx.in(0).str(), " and residual ", ctx.in(1).str(),
             " do not broadcast");
  if (sum->empty()) ctx.fail(ErrorKind::Shape, "x + residual must have rank >= 1");
  check_vector(ctx, 2, sum->back(), "gamma");
  if (num_affine > 1) check_vector(ctx, 3, sum->back(), "beta");
  return {{dt, *sum}, {dt, *sum}};
}

std::vector<TensorType> infer_fused_residual_ln(const InferCtx& ctx) {
  return infer_fused_residual_norm(ctx, 2);
}

std::vector<TensorType> infer_fused_residual_rms_norm(const InferCtx& ctx) {
  return infer_fused_residual_norm(ctx, 1);
}

std::vector<Value> decompose_fused_residual_ln(Graph& g, const Node& node,
                                               std::span<const Value> in) {
  GraphBuilder b(g);
  Value sum = b.add(in[0], in[1]);
  return {b.layer_norm(sum, opt(in, 2), opt(in, 3), -1, node.attrs.f("eps")), sum};
}

std::vector<Value> decompose_fused_residual_rms_norm(Graph& g, const Node& node,
                                                     std::span<const Value> in) {
  GraphBuilder b(g);
  Value sum = b.add(in[0], in[1]);
  return {b.rms_norm(sum, opt(in, 2), -1, node.attrs.f("eps")), sum};
}

std::vector<TensorType> infer_ada_layer_norm(const InferCtx& ctx) {
  DType dt = float_inputs(ctx);
  check_eps(ctx);
  if (ctx.in(0).rank() != 3) ctx.fail(ErrorKind::Shape, "x must be [B,S,D], got ", ctx.in(0).str());
  check_modulation(ctx, 1, "scale");
  check_modulation(ctx, 2, "shift");
  return {{dt, ctx.in(0).shape}};
}

std::vector<Value> decompose_ada_layer_norm(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  Value n = b.layer_norm(in[0], Value{}, Value{}, -1, node.attrs.f("eps"));
  Value one_plus_scale = b.add(modulation(b, in[0], in[1]), b.scalar(1.0, b.type(in[0]).dtype));
  return {b.add(b.mul(n, one_plus_scale), modulation(b, in[0], in[2]))};
}

std::vector<TensorType> infer_gated_residual(const InferCtx& ctx) {
  DType dt = float_inputs(ctx);
  if (ctx.in(0).rank() < 1)
    ctx.fail(ErrorKind::Shape, "x must have rank >= 1, got ", ctx.in(0).str());
  if (ctx.in(1).shape != ctx.in(0).shape)
    ctx.fail(ErrorKind::Shape, "y must have x's shape ", shape_str(ctx.in(0).shape));
  check_modulation(ctx, 2, "gate");
  return {{dt, ctx.in(0).shape}};
}

std::vector<Value> decompose_gated_residual(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  return {b.add(in[0], b.mul(modulation(b, in[0], in[2]), in[1]))};
}

// ---------------------------------------------------------------------------------------------
// Attention block and transformer layer. Weights use the x·W layout: wq [D,H·Dh],
// wk/wv [D,Hkv·Dh], wo [H·Dh,Dout].

struct AttentionInputs {
  int x, wq, wk, wv, wo, bq, bk, bv, bo;
};
constexpr AttentionInputs kBlockInputs{0, 1, 2, 3, 4, 5, 6, 7, 8};

// Checks the block's inputs; returns Dout (wo's columns).
int64_t check_attention_block(const InferCtx& ctx, const AttentionInputs& p, int64_t heads,
                              int64_t kv_heads) {
  const TensorType& xt = ctx.in(p.x);
  if (xt.rank() != 3) ctx.fail(ErrorKind::Shape, "x must be [B,S,D], got ", xt.str());
  if (heads < 1) ctx.fail(ErrorKind::Value, "heads must be >= 1, got ", heads);
  if (kv_heads < 1 || heads % kv_heads != 0)
    ctx.fail(ErrorKind::Value, "kv_heads (", kv_heads, ") must be >= 1 and divide heads (", heads,
             ")");
  int64_t d = xt.shape[2];
  const Shape& wq = require_matrix(ctx, p.wq, d, "wq ([D,H·Dh])");
  if (wq[1] % heads != 0 || wq[1] < heads)
    ctx.fail(ErrorKind::Shape, "wq's columns (", wq[1], ") must be a positive multiple of heads (",
             heads, ")");
  int64_t dh = wq[1] / heads;
  for (int i : {p.wk, p.wv}) {
    const Shape& w = require_matrix(ctx, i, d, i == p.wk ? "wk ([D,Hkv·Dh])" : "wv ([D,Hkv·Dh])");
    if (w[1] != kv_heads * dh)
      ctx.fail(ErrorKind::Shape, i == p.wk ? "wk" : "wv",
               " must have kv_heads·Dh = ", kv_heads * dh, " columns, got ", ctx.in(i).str());
  }
  const Shape& wo = require_matrix(ctx, p.wo, heads * dh, "wo ([H·Dh,D])");
  check_vector(ctx, p.bq, heads * dh, "bq");
  check_vector(ctx, p.bk, kv_heads * dh, "bk");
  check_vector(ctx, p.bv, kv_heads * dh, "bv");
  check_vector(ctx, p.bo, wo[1], "bo");
  return wo[1];
}

// [B,S,heads·Dh] -> [B,heads,S,Dh]
Value split_heads(GraphBuilder& b, Value t, int64_t heads) {
  const Shape& s = b.type(t).shape;
  return b.transpose(b.reshape(t, {s[0], s[1], heads, s[2] / heads}), {0, 2, 1, 3});
}

Value attention_block(GraphBuilder& b, std::span<const Value> in, const AttentionInputs& p, Value x,
                      int64_t heads, int64_t kv_heads, MaskKind mask, int64_t window) {
  Value q = split_heads(b, linear(b, x, in[p.wq], opt(in, p.bq)), heads);
  Value k = split_heads(b, linear(b, x, in[p.wk], opt(in, p.bk)), kv_heads);
  Value v = split_heads(b, linear(b, x, in[p.wv], opt(in, p.bv)), kv_heads);
  Value att =
      b.op1(OpKind::Attention, Attrs().set("mask_kind", mask).set("window", window), {q, k, v});
  const Shape& s = b.type(x).shape;
  const int64_t width = b.type(in[p.wq]).shape[1];
  Value merged = b.reshape(b.transpose(att, {0, 2, 1, 3}), {s[0], s[1], width});
  return linear(b, merged, in[p.wo], opt(in, p.bo));
}

int64_t kv_heads_of(const Attrs& attrs) {
  int64_t kv = attrs.i("kv_heads");
  return kv == 0 ? attrs.i("heads") : kv;
}

std::vector<TensorType> infer_fused_attention_block(const InferCtx& ctx) {
  DType dt = float_inputs(ctx);
  auto mask = ctx.attrs().e<MaskKind>("mask_kind");
  if (mask == MaskKind::Custom || mask == MaskKind::Bias)
    ctx.fail(ErrorKind::Value,
             "mask_kind Custom and Bias need a mask input, which "
             "FusedAttentionBlock does not take (use None, Causal or SlidingWindow)");
  int64_t window = ctx.attrs().i("window");
  if (window < 0) ctx.fail(ErrorKind::Value, "window must be >= 0, got ", window);
  if (ctx.attrs().i("kv_heads") < 0)
    ctx.fail(ErrorKind::Value, "kv_heads must be >= 0 (0 = heads), got ",
             ctx.attrs().i("kv_heads"));
  int64_t out =
      check_attention_block(ctx, kBlockInputs, ctx.attrs().i("heads"), kv_heads_of(ctx.attrs()));
  return {{dt, with_last(ctx.in(0).shape, out)}};
}

std::vector<Value> decompose_fused_attention_block(Graph& g, const Node& node,
                                                   std::span<const Value> in) {
  GraphBuilder b(g);
  return {attention_block(b, in, kBlockInputs, in[0], node.attrs.i("heads"),
                          kv_heads_of(node.attrs), node.attrs.e<MaskKind>("mask_kind"),
                          node.attrs.i("window"))};
}

// FusedTransformerLayer's inputs, in ops.def order.
enum LayerInput : int {
  kX,
  kWq,
  kWk,
  kWv,
  kWo,
  kBq,
  kBk,
  kBv,
  kBo,
  kLn1Gamma,
  kLn1Beta,
  kW1,
  kB1,
  kW2,
  kB2,
  kLn2Gamma,
  kLn2Beta
};
constexpr AttentionInputs kLayerAttention{kX, kWq, kWk, kWv, kWo, kBq, kBk, kBv, kBo};

std::vector<TensorType> infer_fused_transformer_layer(const InferCtx& ctx) {
  float_inputs(ctx);
  check_eps(ctx);
  int64_t heads = ctx.attrs().i("heads");
  int64_t out = check_attention_block(ctx, kLayerAttention, heads, heads);
  int64_t d = ctx.in(kX).shape[2];
  if (out != d)
    ctx.fail(ErrorKind::Shape, "wo must map back to the model width D = ", d, ", got ",
             ctx.in(kWo).str());
  const Shape& w1 = require_matrix(ctx, kW1, d, "w1 ([D,F])");
  require_matrix(ctx, kW2, w1[1], "w2 ([F,D])");
  if (ctx.in(kW2).shape[1] != d)
    ctx.fail(ErrorKind::Shape, "w2 must be [F,D] = [", w1[1], ",", d, "], got ", ctx.in(kW2).str());
  check_vector(ctx, kB1, w1[1], "b1");
  check_vector(ctx, kB2, d, "b2");
  check_vector(ctx, kLn1Gamma, d, "ln1_gamma");
  check_vector(ctx, kLn1Beta, d, "ln1_beta");
  check_vector(ctx, kLn2Gamma, d, "ln2_gamma");
  check_vector(ctx, kLn2Beta, d, "ln2_beta");
  return {ctx.in(kX)};
}

std::vector<Value> decompose_fused_transformer_layer(Graph& g, const Node& node,
                                                     std::span<const Value> in) {
  GraphBuilder b(g);
  const int64_t heads = node.attrs.i("heads");
  const double eps = node.attrs.f("eps");
  const auto act = node.attrs.e<ActivationKind>("act");
  const MaskKind mask = node.attrs.b("causal") ? MaskKind::Causal : MaskKind::None;
  auto self_attention = [&](Value h) {
    return attention_block(b, in, kLayerAttention, h, heads, heads, mask, 0);
  };
  auto feed_forward = [&](Value h) {
    Value hidden = activate(b, act, linear(b, h, in[kW1], opt(in, kB1)));
    return linear(b, hidden, in[kW2], opt(in, kB2));
  };
  auto ln1 = [&](Value h) {
    return b.layer_norm(h, opt(in, kLn1Gamma), opt(in, kLn1Beta), -1, eps);
  };
  auto ln2 = [&](Value h) {
    return b.layer_norm(h, opt(in, kLn2Gamma), opt(in, kLn2Beta), -1, eps);
  };
  Value x = in[kX];
  if (node.attrs.b("norm_first")) {
    Value h = b.add(x, self_attention(ln1(x)));
    return {b.add(h, feed_forward(ln2(h)))};
  }
  Value h = ln1(b.add(x, self_attention(x)));
  return {ln2(b.add(h, feed_forward(h)))};
}

}  // namespace

void register_rules_FusedComposites(RuleTable& table) {
  table[OpKind::FusedSwiGLU] = {infer_fused_swiglu, decompose_fused_swiglu};
  table[OpKind::FusedMatMulBiasAct] = {infer_fused_matmul_bias_act,
                                       decompose_fused_matmul_bias_act};
  table[OpKind::FusedResidualLN] = {infer_fused_residual_ln, decompose_fused_residual_ln};
  table[OpKind::FusedResidualRmsNorm] = {infer_fused_residual_rms_norm,
                                         decompose_fused_residual_rms_norm};
  table[OpKind::AdaLayerNorm] = {infer_ada_layer_norm, decompose_ada_layer_norm};
  table[OpKind::GatedResidual] = {infer_gated_residual, decompose_gated_residual};
  table[OpKind::FusedAttentionBlock] = {infer_fused_attention_block,
                                        decompose_fused_attention_block};
  table[OpKind::FusedTransformerLayer] = {infer_fused_transformer_layer,
                                          decompose_fused_transformer_layer};
}

}  // namespace tessel
