// VJP rules of the normalization kinds: LayerNorm, LayerNorm2d, GroupNorm, BatchNormInference,
// RmsNorm. Each kind's gradients come from one named function (`<kind>_backward`) that
// recomputes the statistics from x the way the reference does (biased variance, eps inside the
// sqrt), so the pending Backward kinds (LayerNormBackwardInput, ...) can use it as their
// decomposition: all take dy, the forward kind's inputs and attributes, and which gradients to
// emit. They return the per-element inputs' gradients at the shape those scale (x.shape[axis:] or
// [C]); the rules sum them to the inputs' own, possibly broadcast, shapes.
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

}  // namespace

void register_vjp_normalization(RuleTable& table) {
  table[OpKind::LayerNorm].vjp = vjp_from<layer_norm_backward>;
  table[OpKind::LayerNorm2d].vjp = vjp_from<layer_norm2d_backward>;
  table[OpKind::GroupNorm].vjp = vjp_from<group_norm_backward>;
  table[OpKind::BatchNormInference].vjp = vjp_from<batch_norm_inference_backward>;
  table[OpKind::RmsNorm].vjp = vjp_from<rms_norm_backward>;
}

}  // namespace tessel
