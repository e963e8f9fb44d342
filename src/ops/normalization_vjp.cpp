// VJP rules of the normalization kinds: LayerNorm, LayerNorm2d, GroupNorm, BatchNormInference,
// RmsNorm, AdaLayerNorm. Each kind's gradients come from one named function (`<kind>_backward`)
// that recomputes the statistics from x the way the reference does (biased variance, eps inside
// the sqrt); it is also the decomposition of the Backward kinds (LayerNormBackwardInput, ...),
// which the rules emit for the gradients those kinds cover. The functions take dy, the forward
// kind's inputs and attributes, and which gradients to emit; they return the per-element inputs'
// gradients at the shape those scale (x.shape[axis:] or [C]); the rules sum them to the inputs'
// own, possibly broadcast, shapes.
#include <algorithm>
#include <span>

#include "ops/vjp_util.h"

namespace tessel {
namespace {

// Which gradients a backward function emits, indexed like the forward kind's inputs.
using Wanted = std::vector<bool>;
bool wanted(const Wanted& w, size_t i) { return i < w.size() && w[i]; }

// The forward kind's input i, or an invalid Value when it is absent.
Value optional_input(std::span<const Value> in, size_t i) {
  return i < in.size() ? in[i] : Value{};
}

// x̂ = (x - mean) · rstd over `axes`, rstd = 1 / sqrt(var + eps) with the biased variance; for
// the RMS norm (!center) the mean is taken as 0, so var is the mean square. rstd keeps dims.
struct Normalized {
  Value xhat, rstd;
};

Normalized normalize(GraphBuilder& b, Value x, const std::vector<int64_t>& axes, double eps,
                     bool center) {
  Value xc = center ? b.sub(x, b.mean(x, axes, true)) : x;
  Value rstd = b.rsqrt(b.add(b.mean(b.mul(xc, xc), axes, true), scalar_like(b, eps, x)));
  return {b.mul(xc, rstd), rstd};
}

// dL/dx from dL/dx̂: rstd · (dx̂ - mean(dx̂) - x̂ · mean(dx̂ · x̂)), the mean(dx̂) term only when
// the mean was subtracted.
Value normalized_input_grad(GraphBuilder& b, Value dxhat, const Normalized& n,
                            const std::vector<int64_t>& axes, bool center) {
  Value d = b.sub(dxhat, b.mul(n.xhat, b.mean(b.mul(dxhat, n.xhat), axes, true)));
  if (center) d = b.sub(d, b.mean(dxhat, axes, true));
  return b.mul(n.rstd, d);
}

// v summed over `axes` (none: v itself; an empty Reduce `axes` would mean every axis).
Value sum_over(GraphBuilder& b, Value v, const std::vector<int64_t>& axes) {
  return axes.empty() ? v : b.sum(v, axes);
}

// The axes [from, to).
std::vector<int64_t> axis_range(int64_t from, int64_t to) {
  std::vector<int64_t> axes;
  for (int64_t a = from; a < to; ++a) axes.push_back(a);
  return axes;
}

// A per-channel value (of a shape that broadcasts to [C]) as [C].
Value as_channels(GraphBuilder& b, Value p, int64_t channels) {
  return b.type(p).shape == Shape{channels} ? p : b.expand(p, {channels});
}

// A per-channel value as [1, C, 1, ...] of rank `rank`, to scale x [N, C, ...].
Value channel_view(GraphBuilder& b, Value p, int64_t channels, int rank) {
  Shape s(static_cast<size_t>(rank), 1);
  s[1] = channels;
  return b.reshape(as_channels(b, p, channels), s);
}

// v [N, C, ...] summed over every axis but the channel axis: [C].
Value channel_sum(GraphBuilder& b, Value v) {
  std::vector<int64_t> axes = axis_range(0, b.type(v).rank());
  axes.erase(axes.begin() + 1);
  return b.sum(v, axes);
}

// LayerNorm (center) and RmsNorm (!center) over [axis, rank) of y = x̂ · gamma + beta:
// {dx, dgamma, dbeta}, dgamma and dbeta of shape x.shape[axis:]. gamma may be absent.
std::vector<Value> trailing_norm_backward(GraphBuilder& b, Value dy, Value x, Value gamma,
                                          int64_t axis, double eps, bool center,
                                          const Wanted& want) {
  const int rank = b.type(dy).rank();
  if (axis < 0) axis += rank;
  const std::vector<int64_t> norm_axes = axis_range(axis, rank), lead = axis_range(0, axis);
  std::vector<Value> grads(3);
  if (wanted(want, 2)) grads[2] = sum_over(b, dy, lead);
  if (!wanted(want, 0) && !wanted(want, 1)) return grads;
  Normalized n = normalize(b, x, norm_axes, eps, center);
  if (wanted(want, 1)) grads[1] = sum_over(b, b.mul(dy, n.xhat), lead);
  if (wanted(want, 0))
    grads[0] =
        normalized_input_grad(b, gamma.valid() ? b.mul(dy, gamma) : dy, n, norm_axes, center);
  return grads;
}

// LayerNorm (x, gamma?, beta?): {dx, dgamma, dbeta}.
std::vector<Value> layer_norm_backward(GraphBuilder& b, Value dy, std::span<const Value> in,
                                       const Attrs& attrs, const Wanted& want) {
  return trailing_norm_backward(b, dy, in[0], optional_input(in, 1), attrs.i("axis"),
                                attrs.f("eps"), true, want);
}

// RmsNorm (x, gamma?): {dx, dgamma}.
std::vector<Value> rms_norm_backward(GraphBuilder& b, Value dy, std::span<const Value> in,
                                     const Attrs& attrs, const Wanted& want) {
  std::vector<Value> grads = trailing_norm_backward(b, dy, in[0], optional_input(in, 1),
                                                    attrs.i("axis"), attrs.f("eps"), false, want);
  grads.resize(2);
  return grads;
}

// The channel-first norms (LayerNorm2d, GroupNorm) after normalizing x̂: y = x̂ · gamma[c] +
// beta[c]. `normalized(dx̂)` gives x̂ and dL/dx (invalid when dx̂ is). {dx, dgamma [C], dbeta [C]}.
template <class Normalize>
std::vector<Value> channel_norm_backward(GraphBuilder& b, Value dy, Value gamma, const Wanted& want,
                                         Normalize normalized) {
  const int rank = b.type(dy).rank();
  const int64_t channels = b.type(dy).shape[1];
  std::vector<Value> grads(3);
  if (wanted(want, 2)) grads[2] = channel_sum(b, dy);
  if (!wanted(want, 0) && !wanted(want, 1)) return grads;
  Value dxhat;
  if (wanted(want, 0))
    dxhat = gamma.valid() ? b.mul(dy, channel_view(b, gamma, channels, rank)) : dy;
  auto [xhat, dx] = normalized(dxhat);
  if (wanted(want, 1)) grads[1] = channel_sum(b, b.mul(dy, xhat));
  grads[0] = dx;
  return grads;
}

// LayerNorm2d: x NCHW normalized over C for every pixel.
std::vector<Value> layer_norm2d_backward(GraphBuilder& b, Value dy, std::span<const Value> in,
                                         const Attrs& attrs, const Wanted& want) {
  const Value x = in[0];
  const double eps = attrs.f("eps");
  return channel_norm_backward(b, dy, optional_input(in, 1), want, [&](Value dxhat) {
    Normalized n = normalize(b, x, {1}, eps, true);
    Value dx = dxhat.valid() ? normalized_input_grad(b, dxhat, n, {1}, true) : Value{};
    return std::pair{n.xhat, dx};
  });
}

// GroupNorm: x [N, C, ...] viewed as [N, groups, C / groups · spatial], normalized over the
// last axis (a group's channels are consecutive).
std::vector<Value> group_norm_backward(GraphBuilder& b, Value dy, std::span<const Value> in,
                                       const Attrs& attrs, const Wanted& want) {
  const Value x = in[0];
  const int64_t groups = attrs.i("groups");
  const double eps = attrs.f("eps");
  const Shape s = b.type(dy).shape;  // a copy: the graph's nodes move as the rule emits
  const Shape grouped = {s[0], groups, s[0] * groups == 0 ? 0 : shape_numel(s) / (s[0] * groups)};
  return channel_norm_backward(b, dy, optional_input(in, 1), want, [&](Value dxhat) {
    Normalized n = normalize(b, b.reshape(x, grouped), {2}, eps, true);
    Value dx;
    if (dxhat.valid())
      dx = b.reshape(normalized_input_grad(b, b.reshape(dxhat, grouped), n, {2}, true), s);
    return std::pair{b.reshape(n.xhat, s), dx};
  });
}

// BatchNormInference: y = (x - mean[c]) · rstd[c] · gamma[c] + beta[c], rstd = 1 / sqrt(var +
// eps), with frozen statistics. In: x, mean, var, gamma?, beta?; out: {dx, dmean [C], dvar [C],
// dgamma [C], dbeta [C]}. x and mean are read only for dvar and dgamma.
std::vector<Value> batch_norm_inference_backward(GraphBuilder& b, Value dy,
                                                 std::span<const Value> in, const Attrs& attrs,
                                                 const Wanted& want) {
  const Value x = in[0], mean = in[1], var = in[2], gamma = optional_input(in, 3);
  const double eps = attrs.f("eps");
  const int rank = b.type(dy).rank();
  const int64_t channels = b.type(dy).shape[1];
  auto view = [&](Value p) { return channel_view(b, p, channels, rank); };
  std::vector<Value> grads(5);
  if (wanted(want, 4)) grads[4] = channel_sum(b, dy);
  if (!wanted(want, 0) && !wanted(want, 1) && !wanted(want, 2) && !wanted(want, 3)) return grads;
  // rstd per channel: [C].
  Value rstd = b.rsqrt(b.add(as_channels(b, var, channels), scalar_like(b, eps, dy)));
  Value dxhat = gamma.valid() ? b.mul(dy, view(gamma)) : dy;
  if (wanted(want, 0)) grads[0] = b.mul(dxhat, view(rstd));
  if (wanted(want, 1)) grads[1] = b.neg(b.mul(channel_sum(b, dxhat), rstd));
  if (wanted(want, 2) || wanted(want, 3)) {
    Value xhat = b.mul(b.sub(x, view(mean)), view(rstd));
    // d x̂ / d var = -x̂ · rstd² / 2
    if (wanted(want, 2))
      grads[2] = b.mul(channel_sum(b, b.mul(dxhat, xhat)),
                       b.mul(scalar_like(b, -0.5, dy), b.mul(rstd, rstd)));
    if (wanted(want, 3)) grads[3] = channel_sum(b, b.mul(dy, xhat));
  }
  return grads;
}

// AdaLayerNorm y = LayerNorm(x)·(1 + scale) + shift over x [B,S,D] (no affine, eps), scale and
// shift DiT modulations: {dx, dscale, dshift}, the modulations' summed to their own shapes.
std::vector<Value> ada_layer_norm_backward(GraphBuilder& b, Value dy, std::span<const Value> in,
                                           const Attrs& attrs, const Wanted& want) {
  const Value x = in[0], scale = in[1], shift = in[2];
  const Shape xs = b.type(x).shape, ss = b.type(scale).shape;
  auto fit = [&](Value g, Value m) {
    const Shape ms = b.type(m).shape;
    return b.reshape(unbroadcast(b, g, modulation_view(xs, ms)), ms);
  };
  std::vector<Value> grads(3);
  if (wanted(want, 2)) grads[2] = fit(dy, shift);
  if (!wanted(want, 0) && !wanted(want, 1)) return grads;
  Normalized n = normalize(b, x, {2}, attrs.f("eps"), true);
  if (wanted(want, 1)) grads[1] = fit(b.mul(dy, n.xhat), scale);
  if (wanted(want, 0)) {
    Value one_plus = b.add(b.reshape(scale, modulation_view(xs, ss)), scalar_like(b, 1, x));
    grads[0] = normalized_input_grad(b, b.mul(dy, one_plus), n, {2}, true);
  }
  return grads;
}

// The backward function's gradients as the rule's result: one per input of the node, summed to
// the input's own shape, invalid where the input is absent or its gradient is not needed.
std::vector<Value> fit_to_inputs(VjpCtx& ctx, const std::vector<Value>& grads) {
  std::vector<Value> out(ctx.inputs.size());
  for (size_t i = 0; i < out.size(); ++i)
    if (ctx.needs(static_cast<int>(i)) && grads[i].valid())
      out[i] = unbroadcast(ctx.b, grads[i], Shape(ctx.type(ctx.inputs[i]).shape));
  return out;
}

using BackwardFn = std::vector<Value> (*)(GraphBuilder& b, Value dy, std::span<const Value> in,
                                          const Attrs& attrs, const Wanted& want);

// The VJP rule of a kind whose gradients `backward` emits.
template <BackwardFn backward>
std::vector<Value> vjp_from(VjpCtx& ctx) {
  return fit_to_inputs(ctx,
                       backward(ctx.b, ctx.cotangents[0], ctx.inputs, ctx.node.attrs, ctx.needed));
}

// The decomposition of a Backward kind (dy, operands... -> one gradient): `backward`'s gradient
// `which` (an input index of the forward kind) from the kind's operands, which are the forward
// kind's inputs at `slots` (-1: an operand the gradient does not read is not passed).
template <BackwardFn backward, size_t which, int... slots>
std::vector<Value> decompose_from(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  constexpr int kSlots[] = {slots...};
  std::vector<Value> fwd(*std::max_element(std::begin(kSlots), std::end(kSlots)) + 1);
  for (size_t k = 0; k < sizeof...(slots); ++k)
    if (1 + k < in.size()) fwd[kSlots[k]] = in[1 + k];
  Wanted want(std::max(fwd.size(), which + 1), false);
  want[which] = true;
  return {backward(b, in[0], fwd, node.attrs, want)[which]};
}

// [C]-gradients of the per-channel beta (GroupNorm, BatchNormInference): dy summed over all
// but the channel axis.
std::vector<Value> decompose_channel_beta(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  return {channel_sum(b, in[0])};
}

// RmsNormBackwardBeta: dy summed over the axes before `axis`.
std::vector<Value> decompose_rms_norm_beta(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  return {trailing_norm_backward(b, in[0], Value{}, Value{}, node.attrs.i("axis"), 0, false,
                                 {false, false, true})[2]};
}

// A gradient as a Backward kind's node `kind` on `operands`, summed to input i's shape.
Value emit_grad(VjpCtx& ctx, int i, OpKind kind, const Attrs& attrs, std::vector<Value> operands) {
  Value g = ctx.b.op1(kind, attrs, std::move(operands));
  return unbroadcast(ctx.b, g, Shape(ctx.type(ctx.inputs[i]).shape));
}

// LayerNorm / RmsNorm: dx and dgamma from their Backward kinds; LayerNorm's dbeta inline.
template <OpKind kInput, OpKind kGamma, BackwardFn backward>
std::vector<Value> vjp_trailing_norm(VjpCtx& ctx) {
  Value dy = ctx.cotangents[0], x = ctx.inputs[0], gamma = optional_input(ctx.inputs, 1);
  std::vector<Value> grads(ctx.inputs.size());
  if (ctx.needs(0)) grads[0] = emit_grad(ctx, 0, kInput, ctx.node.attrs, {dy, x, gamma});
  if (ctx.needs(1)) grads[1] = emit_grad(ctx, 1, kGamma, ctx.node.attrs, {dy, x});
  if (ctx.needs(2))
    grads[2] = fit_to_inputs(
        ctx, backward(ctx.b, dy, ctx.inputs, ctx.node.attrs, {false, false, true}))[2];
  return grads;
}

// GroupNorm: every gradient from its Backward kind (gamma passed as [C]).
std::vector<Value> vjp_group_norm(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value dy = ctx.cotangents[0], x = ctx.inputs[0], gamma = optional_input(ctx.inputs, 1);
  const int64_t channels = ctx.type(x).shape[1];
  std::vector<Value> grads(ctx.inputs.size());
  if (ctx.needs(0))
    grads[0] = emit_grad(ctx, 0, OpKind::GroupNormBackwardInput, ctx.node.attrs,
                         {dy, x, gamma.valid() ? as_channels(b, gamma, channels) : Value{}});
  if (ctx.needs(1))
    grads[1] = emit_grad(ctx, 1, OpKind::GroupNormBackwardGamma, ctx.node.attrs, {dy, x});
  if (ctx.needs(2)) grads[2] = emit_grad(ctx, 2, OpKind::GroupNormBackwardBeta, Attrs(), {dy});
  return grads;
}

// BatchNormInference: dx, dgamma, dbeta from their Backward kinds (statistics passed as [C]);
// the statistics' own gradients inline.
std::vector<Value> vjp_batch_norm_inference(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value dy = ctx.cotangents[0], x = ctx.inputs[0];
  const int64_t channels = ctx.type(x).shape[1];
  auto per_channel = [&](int i) {
    Value v = optional_input(ctx.inputs, i);
    return v.valid() ? as_channels(b, v, channels) : Value{};
  };
  std::vector<Value> grads(ctx.inputs.size());
  if (ctx.needs(0))
    grads[0] = emit_grad(ctx, 0, OpKind::BatchNormInferenceBackwardInput, ctx.node.attrs,
                         {dy, per_channel(2), per_channel(3)});
  if (ctx.needs(1) || ctx.needs(2)) {
    std::vector<Value> stats =
        fit_to_inputs(ctx, batch_norm_inference_backward(b, dy, ctx.inputs, ctx.node.attrs,
                                                         {false, ctx.needs(1), ctx.needs(2)}));
    grads[1] = stats[1];
    grads[2] = stats[2];
  }
  if (ctx.needs(3))
    grads[3] = emit_grad(ctx, 3, OpKind::BatchNormInferenceBackwardGamma, ctx.node.attrs,
                         {dy, x, per_channel(1), per_channel(2)});
  if (ctx.needs(4))
    grads[4] = emit_grad(ctx, 4, OpKind::BatchNormInferenceBackwardBeta, Attrs(), {dy});
  return grads;
}

// AdaLayerNorm: AdaLayerNormBackward when scale and shift are [B,D] (its contract), else the
// same gradients inline.
std::vector<Value> vjp_ada_layer_norm(VjpCtx& ctx) {
  const Shape& xs = ctx.type(ctx.inputs[0]).shape;
  const Shape bd = {xs[0], xs[2]};
  if (ctx.type(ctx.inputs[1]).shape != bd || ctx.type(ctx.inputs[2]).shape != bd)
    return vjp_from<ada_layer_norm_backward>(ctx);
  return ctx.b.emit(OpKind::AdaLayerNormBackward, ctx.node.attrs,
                    {ctx.cotangents[0], ctx.inputs[0], ctx.inputs[1], ctx.inputs[2]});
}

std::vector<Value> decompose_ada_layer_norm_backward(Graph& g, const Node& node,
                                                     std::span<const Value> in) {
  GraphBuilder b(g);
  return ada_layer_norm_backward(b, in[0], in.subspan(1), node.attrs, {true, true, true});
}

}  // namespace

void register_vjp_normalization(RuleTable& table) {
  table[OpKind::LayerNorm].vjp =
      vjp_trailing_norm<OpKind::LayerNormBackwardInput, OpKind::LayerNormBackwardGamma,
                        layer_norm_backward>;
  table[OpKind::LayerNorm2d].vjp = vjp_from<layer_norm2d_backward>;
  table[OpKind::GroupNorm].vjp = vjp_group_norm;
  table[OpKind::BatchNormInference].vjp = vjp_batch_norm_inference;
  table[OpKind::RmsNorm].vjp = vjp_trailing_norm<OpKind::RmsNormBackwardInput,
                                                 OpKind::RmsNormBackwardGamma, rms_norm_backward>;
  table[OpKind::AdaLayerNorm].vjp = vjp_ada_layer_norm;

  // Backward kinds: (dy, operands) with the forward kind's input slots of the operands.
  table[OpKind::LayerNormBackwardInput].decompose = decompose_from<layer_norm_backward, 0, 0, 1>;
  table[OpKind::LayerNormBackwardGamma].decompose = decompose_from<layer_norm_backward, 1, 0>;
  table[OpKind::RmsNormBackwardInput].decompose = decompose_from<rms_norm_backward, 0, 0, 1>;
  table[OpKind::RmsNormBackwardGamma].decompose = decompose_from<rms_norm_backward, 1, 0>;
  table[OpKind::RmsNormBackwardBeta].decompose = decompose_rms_norm_beta;
  table[OpKind::GroupNormBackwardInput].decompose = decompose_from<group_norm_backward, 0, 0, 1>;
  table[OpKind::GroupNormBackwardGamma].decompose = decompose_from<group_norm_backward, 1, 0>;
  table[OpKind::GroupNormBackwardBeta].decompose = decompose_channel_beta;
  // dy, var, gamma? -> dx; dy, x, mean, var -> dgamma.
  table[OpKind::BatchNormInferenceBackwardInput].decompose =
      decompose_from<batch_norm_inference_backward, 0, 2, 3>;
  table[OpKind::BatchNormInferenceBackwardGamma].decompose =
      decompose_from<batch_norm_inference_backward, 3, 0, 1, 2>;
  table[OpKind::BatchNormInferenceBackwardBeta].decompose = decompose_channel_beta;
  table[OpKind::AdaLayerNormBackward].decompose = decompose_ada_layer_norm_backward;
}

}  // namespace tessel
