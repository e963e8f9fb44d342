// Shape rules of the Backward category: each checks that a gradient has the shape and dtype of
// what it differentiates. The two softmax cross-entropy losses have reference kernels
// (backends/reference/backward.cpp); the gradient kinds' decompositions sit beside the VJP rules
// that emit them (src/ops/*_vjp.cpp), one function serving both.
#include <cmath>

#include "ops/conv_geometry.h"
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

constexpr DTypeSet kGradTypes = dtypes::kFloat | dtypes::kFp8;

const std::string& port_name(const InferCtx& ctx, int i) {
  const auto& ports = ctx.node().info().inputs;
  return ports[std::min<size_t>(i, ports.size() - 1)].name;
}

// Input i must be a float tensor.
const TensorType& grad_operand(const InferCtx& ctx, int i) {
  require_dtype(ctx, i, kGradTypes, port_name(ctx, i).c_str());
  return ctx.in(i);
}

void require_dtype_of(const InferCtx& ctx, int i, int like) {
  if (ctx.in(i).dtype != ctx.in(like).dtype)
    ctx.fail(ErrorKind::DType, port_name(ctx, i), " has dtype ", dtype_name(ctx.in(i).dtype),
             "; expected ", port_name(ctx, like), "'s ", dtype_name(ctx.in(like).dtype));
}

void require_shape(const InferCtx& ctx, int i, const Shape& expected, const std::string& what) {
  if (ctx.in(i).shape != expected)
    ctx.fail(ErrorKind::Shape, port_name(ctx, i), " has shape ", shape_str(ctx.in(i).shape),
             "; expected ", shape_str(expected), " (", what, ")");
}

// Input i must have input `like`'s dtype and shape (a gradient and the value it belongs to).
void require_like(const InferCtx& ctx, int i, int like) {
  require_dtype_of(ctx, i, like);
  require_shape(ctx, i, ctx.in(like).shape, "the shape of " + port_name(ctx, like));
}

void require_eps(const InferCtx& ctx) {
  double eps = ctx.attrs().f("eps");
  if (!std::isfinite(eps) || eps < 0)
    ctx.fail(ErrorKind::Value, "eps is ", eps, "; expected a finite value >= 0");
}

Shape tail(const Shape& s, int from) { return Shape(s.begin() + from, s.end()); }

// ---- Softmax cross-entropy ----------------------------------------------------------------------

void require_reduction_shape(const InferCtx& ctx, int dloss, const TensorType& like,
                             const Shape& unreduced) {
  Shape expected = ctx.attrs().e<Reduction>("reduction") == Reduction::None ? unreduced : Shape{};
  if (ctx.in(dloss).dtype != like.dtype)
    ctx.fail(ErrorKind::DType, "dloss has dtype ", dtype_name(ctx.in(dloss).dtype),
             "; expected the logits' ", dtype_name(like.dtype));
  require_shape(ctx, dloss, expected, "the forward loss shape");
}

// Probability targets along `axis`; returns the shape of the unreduced loss (axis removed).
Shape check_soft_ce(const InferCtx& ctx, int logits_i, int target_i) {
  const TensorType& logits = grad_operand(ctx, logits_i);
  if (logits.rank() < 1) ctx.fail(ErrorKind::Shape, "logits must have rank >= 1, got a scalar");
  require_like(ctx, target_i, logits_i);
  int axis = normalize_axis(ctx, ctx.attrs().i("axis"), logits.rank());
  if (logits.shape[axis] < 1) ctx.fail(ErrorKind::Shape, "logits need at least one class");
  Shape out = logits.shape;
  out.erase(out.begin() + axis);
  return out;
}

// logits [N,C,d1,...] with labels [N,d1,...], or unbatched [C] with labels []; returns the
// labels' shape (= the unreduced loss shape).
Shape check_label_ce(const InferCtx& ctx, int logits_i, int labels_i) {
  const TensorType& logits = grad_operand(ctx, logits_i);
  const TensorType& labels = ctx.in(labels_i);
  require_dtype(ctx, labels_i, dtypes::kInt, "labels (integer class ids)");
  if (logits.rank() < 1) ctx.fail(ErrorKind::Shape, "logits must be [C] or [N,C,...], got []");
  int class_axis = logits.rank() == 1 ? 0 : 1;
  if (logits.shape[class_axis] < 1) ctx.fail(ErrorKind::Shape, "logits need at least one class");
  Shape expected = logits.shape;
  expected.erase(expected.begin() + class_axis);
  require_shape(ctx, labels_i, expected, "logits' shape without the class axis 1");
  double eps = ctx.attrs().f("label_smoothing");
  if (!(eps >= 0 && eps <= 1))
    ctx.fail(ErrorKind::Value, "label_smoothing is ", eps, "; expected 0 <= label_smoothing <= 1");
  return labels.shape;
}

std::vector<TensorType> reduced_loss(const InferCtx& ctx, DType dtype, const Shape& unreduced) {
  if (ctx.attrs().e<Reduction>("reduction") == Reduction::None) return {{dtype, unreduced}};
  return {{dtype, {}}};
}

std::vector<TensorType> infer_softmax_cross_entropy(const InferCtx& ctx) {
  Shape out = check_soft_ce(ctx, 0, 1);
  return reduced_loss(ctx, ctx.in(0).dtype, out);
}

std::vector<TensorType> infer_softmax_cross_entropy_with_logits(const InferCtx& ctx) {
  Shape out = check_label_ce(ctx, 0, 1);
  return reduced_loss(ctx, ctx.in(0).dtype, out);
}

std::vector<TensorType> infer_softmax_cross_entropy_backward(const InferCtx& ctx) {
  Shape unreduced = check_label_ce(ctx, 1, 2);
  require_reduction_shape(ctx, 0, ctx.in(1), unreduced);
  return {ctx.in(1)};
}

// ---- Pointwise ----------------------------------------------------------------------------------

std::vector<TensorType> infer_pointwise_backward(const InferCtx& ctx) {
  grad_operand(ctx, 1);
  require_like(ctx, 0, 1);
  return {ctx.in(1)};
}

std::vector<TensorType> infer_activation_backward(const InferCtx& ctx) {
  int kind = static_cast<int>(ctx.attrs().e<ActivationKind>("kind"));
  const VariantInfo& v = enum_info(VariantEnum::ActivationKind).values.at(kind);
  if (!v.differentiable)
    ctx.fail(ErrorKind::Value, "activation ", v.name, " is not differentiable");
  return infer_pointwise_backward(ctx);
}

std::vector<TensorType> infer_cumsum_backward(const InferCtx& ctx) {
  const TensorType& dy = grad_operand(ctx, 0);
  normalize_axis(ctx, ctx.attrs().i("axis"), dy.rank());
  return {dy};
}

// dx of Gather(x, indices, axis) with x of input_shape: dy = x[:axis] + indices + x[axis+1:].
std::vector<TensorType> infer_gather_backward(const InferCtx& ctx) {
  const TensorType& dy = grad_operand(ctx, 0);
  require_dtype(ctx, 1, dtypes::kIndex, "indices");
  const Shape& xs = ctx.attrs().ints("input_shape");
  for (int64_t d : xs)
    if (d < 0) ctx.fail(ErrorKind::Value, "input_shape ", shape_str(xs), " has a negative dim");
  if (xs.empty()) ctx.fail(ErrorKind::Shape, "input_shape must have rank >= 1 to gather from");
  int axis = normalize_axis(ctx, ctx.attrs().i("axis"), static_cast<int>(xs.size()));
  Shape expected(xs.begin(), xs.begin() + axis);
  const Shape& idx = ctx.in(1).shape;
  expected.insert(expected.end(), idx.begin(), idx.end());
  expected.insert(expected.end(), xs.begin() + axis + 1, xs.end());
  require_shape(ctx, 0, expected, "Gather's output for input_shape " + shape_str(xs));
  return {{dy.dtype, xs}};
}

// ---- Normalization ------------------------------------------------------------------------------

// x of rank >= 1 normalized over [axis, rank); returns axis.
int norm_axis(const InferCtx& ctx, int x_i) {
  const TensorType& x = ctx.in(x_i);
  if (x.rank() < 1) ctx.fail(ErrorKind::Shape, "x must have rank >= 1, got a scalar");
  return normalize_axis(ctx, ctx.attrs().i("axis"), x.rank());
}

// LayerNorm / RmsNorm: dy, x, gamma? -> dx.
std::vector<TensorType> infer_norm_backward_input(const InferCtx& ctx) {
  const TensorType& x = grad_operand(ctx, 1);
  require_like(ctx, 0, 1);
  require_eps(ctx);
  Shape normalized = tail(x.shape, norm_axis(ctx, 1));
  if (ctx.has(2)) {
    require_dtype_of(ctx, 2, 1);
    auto b = broadcast_shapes(ctx.in(2).shape, normalized);
    if (!b || *b != normalized)
      ctx.fail(ErrorKind::Shape, "gamma ", shape_str(ctx.in(2).shape),
               " does not broadcast to the normalized shape ", shape_str(normalized));
  }
  return {x};
}

// LayerNorm / RmsNorm: dy, x -> dgamma of x.shape[axis:].
std::vector<TensorType> infer_norm_backward_gamma(const InferCtx& ctx) {
  const TensorType& x = grad_operand(ctx, 1);
  require_like(ctx, 0, 1);
  require_eps(ctx);
  return {{x.dtype, tail(x.shape, norm_axis(ctx, 1))}};
}

std::vector<TensorType> infer_rms_norm_backward_beta(const InferCtx& ctx) {
  const TensorType& dy = grad_operand(ctx, 0);
  return {{dy.dtype, tail(dy.shape, norm_axis(ctx, 0))}};
}

// [N, C, ...] operands: returns C.
int64_t channels(const InferCtx& ctx, int i) {
  if (ctx.in(i).rank() < 2)
    ctx.fail(ErrorKind::Shape, port_name(ctx, i), " must be [N,C,...] (rank >= 2), got ",
             ctx.in(i).str());
  return ctx.in(i).shape[1];
}

int64_t group_norm_channels(const InferCtx& ctx, int x_i) {
  int64_t c = channels(ctx, x_i);
  int64_t groups = ctx.attrs().i("groups");
  if (groups < 1) ctx.fail(ErrorKind::Value, "groups is ", groups, "; expected >= 1");
  if (c % groups != 0)
    ctx.fail(ErrorKind::Shape, "groups ", groups, " does not divide the ", c, " channels");
  require_eps(ctx);
  return c;
}

std::vector<TensorType> infer_group_norm_backward_input(const InferCtx& ctx) {
  const TensorType& x = grad_operand(ctx, 1);
  require_like(ctx, 0, 1);
  int64_t c = group_norm_channels(ctx, 1);
  if (ctx.has(2)) {
    require_dtype_of(ctx, 2, 1);
    require_shape(ctx, 2, {c}, "one per channel");
  }
  return {x};
}

std::vector<TensorType> infer_group_norm_backward_gamma(const InferCtx& ctx) {
  const TensorType& x = grad_operand(ctx, 1);
  require_like(ctx, 0, 1);
  return {{x.dtype, {group_norm_channels(ctx, 1)}}};
}

// GroupNorm / BatchNormInference: dy -> dbeta [C].
std::vector<TensorType> infer_channel_backward_beta(const InferCtx& ctx) {
  const TensorType& dy = grad_operand(ctx, 0);
  return {{dy.dtype, {channels(ctx, 0)}}};
}

void require_per_channel(const InferCtx& ctx, int i, int like, int64_t c) {
  require_dtype_of(ctx, i, like);
  require_shape(ctx, i, {c}, "one per channel");
}

// dx = dy·gamma/sqrt(var + eps): dy, var, gamma? -> dx.
std::vector<TensorType> infer_batch_norm_backward_input(const InferCtx& ctx) {
  const TensorType& dy = grad_operand(ctx, 0);
  int64_t c = channels(ctx, 0);
  require_eps(ctx);
  require_per_channel(ctx, 1, 0, c);
  if (ctx.has(2)) require_per_channel(ctx, 2, 0, c);
  return {dy};
}

std::vector<TensorType> infer_batch_norm_backward_gamma(const InferCtx& ctx) {
  const TensorType& dy = grad_operand(ctx, 0);
  require_like(ctx, 1, 0);
  int64_t c = channels(ctx, 0);
  require_eps(ctx);
  require_per_channel(ctx, 2, 0, c);
  require_per_channel(ctx, 3, 0, c);
  return {{dy.dtype, {c}}};
}

// ---- DiT blocks ---------------------------------------------------------------------------------

// x [B,S,D] with a per-(batch, feature) operand [B,D].
void require_batch_feature(const InferCtx& ctx, int i, int x_i) {
  const Shape& x = ctx.in(x_i).shape;
  require_dtype_of(ctx, i, x_i);
  require_shape(ctx, i, {x[0], x[2]}, "[B,D] for x [B,S,D]");
}

std::vector<TensorType> infer_ada_layer_norm_backward(const InferCtx& ctx) {
  const TensorType& x = grad_operand(ctx, 1);
  if (x.rank() != 3) ctx.fail(ErrorKind::Shape, "x must be [B,S,D], got ", x.str());
  require_like(ctx, 0, 1);
  require_eps(ctx);
  require_batch_feature(ctx, 2, 1);
  require_batch_feature(ctx, 3, 1);
  return {x, ctx.in(2), ctx.in(3)};
}

// gate [B,D] over x [B,S,D], or any gate that broadcasts to x without growing it.
std::vector<TensorType> infer_gated_residual_backward(const InferCtx& ctx) {
  const TensorType& x = grad_operand(ctx, 1);
  require_like(ctx, 0, 1);
  require_like(ctx, 2, 1);
  require_dtype_of(ctx, 3, 1);
  const Shape& g = ctx.in(3).shape;
  bool per_batch = x.rank() == 3 && g.size() == 2;
  if (per_batch) {
    require_batch_feature(ctx, 3, 1);
  } else {
    auto b = broadcast_shapes(g, x.shape);
    if (!b || *b != x.shape)
      ctx.fail(ErrorKind::Shape, "gate ", shape_str(g), " must be [B,D] or broadcast to x ",
               shape_str(x.shape));
  }
  return {x, ctx.in(2), ctx.in(3)};
}

// ---- Attention & positional ---------------------------------------------------------------------

std::vector<TensorType> infer_attention_backward(const InferCtx& ctx) {
  const TensorType& q = grad_operand(ctx, 1);
  for (int i : {0, 2, 3}) require_dtype_of(ctx, i, 1);
  for (int i : {0, 1, 2, 3})
    if (ctx.in(i).rank() != 4)
      ctx.fail(ErrorKind::Shape, port_name(ctx, i), " must be [B,H,S,D], got ", ctx.in(i).str());
  const Shape& k = ctx.in(2).shape;
  const Shape& v = ctx.in(3).shape;
  int64_t b = q.shape[0], h = q.shape[1], sq = q.shape[2], d = q.shape[3];
  int64_t hk = k[1], sk = k[2];
  if (k[0] != b || k[3] != d)
    ctx.fail(ErrorKind::Shape, "k must be [B=", b, ",Hkv,Sk,D=", d, "], got ", shape_str(k));
  if (hk < 1 || h % hk != 0)
    ctx.fail(ErrorKind::Shape, "kv heads ", hk, " must divide the ", h, " query heads");
  if (v[0] != b || v[1] != hk || v[2] != sk)
    ctx.fail(ErrorKind::Shape, "v must be [", b, ",", hk, ",", sk, ",Dv], got ", shape_str(v));
  require_shape(ctx, 0, {b, h, sq, v[3]}, "the attention output [B,H,Sq,Dv]");

  auto mask_kind = ctx.attrs().e<MaskKind>("mask_kind");
  bool needs_mask = false;
  switch (mask_kind) {
    case MaskKind::None:
    case MaskKind::Causal:
    case MaskKind::SlidingWindow:
      break;
    case MaskKind::Custom:
      needs_mask = true;
      if (ctx.has(4))
        require_dtype(ctx, 4, dtypes::kNumeric | dtypes::kFp8 | DTypeSet{DType::Bool}, "mask");
      break;
    case MaskKind::Bias:
      needs_mask = true;
      if (ctx.has(4)) require_dtype_of(ctx, 4, 1);
      break;
  }
  if (needs_mask != ctx.has(4))
    ctx.fail(ErrorKind::Value, needs_mask
                                   ? "this mask_kind needs a mask input"
                                   : "a mask input is only taken by mask_kind Custom or Bias");
  if (ctx.has(4)) {
    const Shape& m = ctx.in(4).shape;
    Shape scores{b, h, sq, sk};
    auto bc = broadcast_shapes(m, scores);
    bool padding = m.size() == 2 && m[0] == b && m[1] == sk;  // [B,Sk] means [B,1,1,Sk]
    if (!padding && (!bc || *bc != scores))
      ctx.fail(ErrorKind::Shape, "mask ", shape_str(m), " must broadcast to ", shape_str(scores),
               " or be [B,Sk]");
  }
  if (ctx.attrs().i("window") < 0)
    ctx.fail(ErrorKind::Value, "window is ", ctx.attrs().i("window"), "; expected >= 0");
  if (!std::isfinite(ctx.attrs().f("scale")))
    ctx.fail(ErrorKind::Value, "scale must be finite (0 = 1/sqrt(D))");

  switch (ctx.attrs().e<AttentionBwdWrt>("wrt")) {
    case AttentionBwdWrt::Query:
      return {q};
    case AttentionBwdWrt::Key:
      return {ctx.in(2)};
    case AttentionBwdWrt::Value:
      return {ctx.in(3)};
  }
  return {q};
}

std::vector<TensorType> infer_rope_backward(const InferCtx& ctx) {
  const TensorType& dy = grad_operand(ctx, 0);
  if (dy.rank() < 2) ctx.fail(ErrorKind::Shape, "dy must be [..., S, D], got ", dy.str());
  int64_t s = dy.shape[dy.rank() - 2], d = dy.shape[dy.rank() - 1];
  int64_t rotary = ctx.attrs().i("rotary_dim");
  if (rotary < 0 || rotary > d || rotary % 2 != 0)
    ctx.fail(ErrorKind::Value, "rotary_dim is ", rotary, "; expected an even value <= D = ", d,
             " (0 = D)");
  if (rotary == 0 && d % 2 != 0)
    ctx.fail(ErrorKind::Value, "rotary_dim 0 rotates all of D = ", d, ", which must be even");
  double base = ctx.attrs().f("base");
  if (!(base > 0) || !std::isfinite(base))
    ctx.fail(ErrorKind::Value, "base is ", base, "; expected a finite value > 0");
  if (ctx.has(1)) {
    require_dtype(ctx, 1, dtypes::kInt | dtypes::kFloat, "positions");
    require_shape(ctx, 1, {s}, "one position per sequence index");
  }
  return {dy};
}

// ---- Convolution & pooling ----------------------------------------------------------------------

// Window attributes and output sizes: ops/conv_geometry.h.

// Checks x [N,C,*sp] * w [O,C/groups,*k] -> y [N,O,*out] under the conv attributes.
void check_conv(const InferCtx& ctx, int sp, const Shape& x, const Shape& w, const Shape& y) {
  auto strides = checked_window_attr(ctx, "strides", sp, 1, 1);
  auto dilations = checked_window_attr(ctx, "dilations", sp, 1, 1);
  WindowPads pads = checked_window_pads(ctx, sp, true);
  int64_t groups = ctx.attrs().i("groups");
  if (groups < 1) ctx.fail(ErrorKind::Value, "groups is ", groups, "; expected >= 1");
  int64_t c = x[1], o = w[0];
  if (c % groups != 0 || o % groups != 0)
    ctx.fail(ErrorKind::Shape, "groups ", groups, " must divide input channels ", c,
             " and output channels ", o);
  if (w[1] * groups != c)
    ctx.fail(ErrorKind::Shape, "weight ", shape_str(w), " takes ", w[1], " channels per group; x ",
             shape_str(x), " has ", c, " channels in ", groups, " groups");
  Shape expected{x[0], o};
  for (int i = 0; i < sp; ++i) {
    if (w[2 + i] < 1) ctx.fail(ErrorKind::Shape, "kernel ", shape_str(w), " has an empty axis");
    expected.push_back(checked_window_out_size(ctx, i, x[2 + i], pads.begin[i], pads.end[i],
                                               w[2 + i], strides[i], dilations[i]));
  }
  if (y != expected)
    ctx.fail(ErrorKind::Shape, "dy has shape ", shape_str(y), "; the convolution of x ",
             shape_str(x), " with w ", shape_str(w), " gives ", shape_str(expected));
}

Shape shape_attr(const InferCtx& ctx, const char* name, int rank) {
  const Shape& s = ctx.attrs().ints(name);
  if (static_cast<int>(s.size()) != rank)
    ctx.fail(ErrorKind::Value, name, " ", shape_str(s), " must have ", rank, " entries");
  for (int64_t d : s)
    if (d < 0) ctx.fail(ErrorKind::Value, name, " ", shape_str(s), " has a negative dim");
  return s;
}

// dy [N,O,*out], w [O,C/groups,*k] -> dx of input_shape [N,C,*sp].
template <int Sp>
std::vector<TensorType> infer_conv_backward_input(const InferCtx& ctx) {
  const TensorType& dy = grad_operand(ctx, 0);
  require_dtype_of(ctx, 1, 0);
  require_rank(ctx, 0, Sp + 2);
  require_rank(ctx, 1, Sp + 2);
  Shape xs = shape_attr(ctx, "input_shape", Sp + 2);
  check_conv(ctx, Sp, xs, ctx.in(1).shape, dy.shape);
  return {{dy.dtype, xs}};
}

// dy [N,O,*out], x [N,C,*sp] -> dw of weight_shape [O,C/groups,*k].
template <int Sp>
std::vector<TensorType> infer_conv_backward_weight(const InferCtx& ctx) {
  const TensorType& dy = grad_operand(ctx, 0);
  require_dtype_of(ctx, 1, 0);
  require_rank(ctx, 0, Sp + 2);
  require_rank(ctx, 1, Sp + 2);
  Shape ws = shape_attr(ctx, "weight_shape", Sp + 2);
  check_conv(ctx, Sp, ctx.in(1).shape, ws, dy.shape);
  return {{dy.dtype, ws}};
}

// dy, x [N,C,*sp] (or unbatched [C,*sp]) -> dx, dy being the max pool's output.
template <int Sp>
std::vector<TensorType> infer_max_pool_backward(const InferCtx& ctx) {
  const TensorType& x = grad_operand(ctx, 1);
  require_dtype_of(ctx, 0, 1);
  require_rank_between(ctx, 1, Sp + 1, Sp + 2);
  std::vector<int64_t> kernel = ctx.attrs().ints("kernel");
  if (static_cast<int>(kernel.size()) != Sp)
    ctx.fail(ErrorKind::Value, "kernel ", shape_str(kernel), " must have ", Sp, " entries");
  for (int64_t k : kernel)
    if (k < 1) ctx.fail(ErrorKind::Value, "kernel ", shape_str(kernel), " has a size below 1");
  auto strides = checked_window_attr(ctx, "strides", Sp, 0, 1);
  for (int i = 0; i < Sp; ++i)
    if (strides[i] == 0) strides[i] = kernel[i];
  auto dilations = checked_window_attr(ctx, "dilations", Sp, 1, 1);
  WindowPads pads = checked_window_pads(ctx, Sp, true);
  bool ceil_mode = ctx.attrs().b("ceil_mode");
  int lead = x.rank() - Sp;
  Shape expected(x.shape.begin(), x.shape.begin() + lead);
  for (int i = 0; i < Sp; ++i) {
    if (pads.begin[i] > kernel[i] / 2 || pads.end[i] > kernel[i] / 2)
      ctx.fail(ErrorKind::Value, "pads ", shape_str(ctx.attrs().ints("pads")),
               " exceed half the kernel ", shape_str(kernel));
    expected.push_back(checked_window_out_size(ctx, i, x.shape[lead + i], pads.begin[i],
                                               pads.end[i], kernel[i], strides[i], dilations[i],
                                               ceil_mode));
  }
  require_shape(ctx, 0, expected, "the pooled shape of x");
  return {x};
}

}  // namespace

void register_rules_Backward(RuleTable& table) {
  table[OpKind::SoftmaxCrossEntropy].infer = infer_softmax_cross_entropy;
  table[OpKind::SoftmaxCrossEntropyWithLogits].infer = infer_softmax_cross_entropy_with_logits;
  table[OpKind::SoftmaxCrossEntropyBackward].infer = infer_softmax_cross_entropy_backward;

  table[OpKind::ReluBackward].infer = infer_pointwise_backward;
  table[OpKind::ActivationBackward].infer = infer_activation_backward;
  table[OpKind::CumsumBackward].infer = infer_cumsum_backward;
  table[OpKind::GatherBackward].infer = infer_gather_backward;

  table[OpKind::MaxPool2dBackward].infer = infer_max_pool_backward<2>;
  table[OpKind::MaxPool3dBackward].infer = infer_max_pool_backward<3>;
  table[OpKind::Conv2dBackwardInput].infer = infer_conv_backward_input<2>;
  table[OpKind::Conv2dBackwardWeight].infer = infer_conv_backward_weight<2>;
  table[OpKind::Conv3dBackwardInput].infer = infer_conv_backward_input<3>;
  table[OpKind::Conv3dBackwardWeight].infer = infer_conv_backward_weight<3>;

  table[OpKind::AttentionBackward].infer = infer_attention_backward;
  table[OpKind::RopeBackward].infer = infer_rope_backward;

  table[OpKind::LayerNormBackwardInput].infer = infer_norm_backward_input;
  table[OpKind::LayerNormBackwardGamma].infer = infer_norm_backward_gamma;
  table[OpKind::RmsNormBackwardInput].infer = infer_norm_backward_input;
  table[OpKind::RmsNormBackwardGamma].infer = infer_norm_backward_gamma;
  table[OpKind::RmsNormBackwardBeta].infer = infer_rms_norm_backward_beta;
  table[OpKind::GroupNormBackwardInput].infer = infer_group_norm_backward_input;
  table[OpKind::GroupNormBackwardGamma].infer = infer_group_norm_backward_gamma;
  table[OpKind::GroupNormBackwardBeta].infer = infer_channel_backward_beta;
  table[OpKind::BatchNormInferenceBackwardInput].infer = infer_batch_norm_backward_input;
  table[OpKind::BatchNormInferenceBackwardGamma].infer = infer_batch_norm_backward_gamma;
  table[OpKind::BatchNormInferenceBackwardBeta].infer = infer_channel_backward_beta;

  table[OpKind::AdaLayerNormBackward].infer = infer_ada_layer_norm_backward;
  table[OpKind::GatedResidualBackward].infer = infer_gated_residual_backward;
}

}  // namespace tessel
