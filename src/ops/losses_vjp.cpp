// VJP rules of the loss kinds: Loss (every LossKind, gradients for input and target),
// SoftmaxCrossEntropy (soft targets) and SoftmaxCrossEntropyWithLogits (class ids). Each gradient
// is a named function of (attrs, dloss, operands) with the attrs of the Backward kinds
// (LossBackward, SoftmaxCrossEntropyBackward): it is their decomposition, and the rules emit those
// kinds for the gradients they cover. Where a point is not differentiable the derivative is
// PyTorch's (Mae: sign; Huber: clamp(x - t)).
#include "ops/vjp_util.h"

namespace tessel {
namespace {

// The loss's cotangent as one value per element of `shape`: for reduction None, g (of the
// unreduced loss shape) reshaped to `kept` (the unreduced shape with any class axis kept as 1)
// and broadcast; for Sum / Mean, the scalar g broadcast, divided by `count` for Mean.
Value per_element_cotangent(GraphBuilder& b, Reduction reduction, Value g, const Shape& kept,
                            const Shape& shape, Value count) {
  switch (reduction) {
    case Reduction::None:
      if (b.type(g).shape != kept) g = b.reshape(g, kept);
      break;
    case Reduction::Mean:
      g = b.div(g, count);
      break;
    case Reduction::Sum:
      break;
  }
  return b.type(g).shape == shape ? g : b.expand(g, shape);
}

// A Loss's cotangent per element of x (Mean divides by x's element count).
Value loss_cotangent(GraphBuilder& b, const Attrs& attrs, Value dloss, Value x) {
  const auto reduction = attrs.e<Reduction>("reduction");
  const TensorType xt = b.type(x);  // a copy: the graph grows below
  Value count =
      reduction == Reduction::Mean ? scalar_like(b, static_cast<double>(xt.numel()), x) : Value{};
  return per_element_cotangent(b, reduction, dloss, xt.shape, xt.shape, count);
}

// ∂loss_i/∂x_i of Loss at input x and target t, elementwise.
Value loss_input_derivative(GraphBuilder& b, const Attrs& attrs, Value x, Value t) {
  auto c = [&](double v) { return scalar_like(b, v, x); };
  switch (attrs.e<LossKind>("kind")) {
    case LossKind::Mse:
      return b.mul(c(2), b.sub(x, t));
    case LossKind::Mae:
      return b.activation(ActivationKind::Sign, b.sub(x, t));
    case LossKind::Huber: {
      const double delta = attrs.f("delta");
      return b.clamp(b.sub(x, t), -delta, delta);
    }
    case LossKind::BinaryCrossEntropy:  // PyTorch's (x - t) / max(x(1 - x), 1e-12)
      return b.div(b.sub(x, t), b.maximum(b.mul(x, b.sub(c(1), x)), c(1e-12)));
    case LossKind::BinaryCrossEntropyWithLogits:
      return b.sub(b.activation(ActivationKind::Sigmoid, x), t);
    case LossKind::KlDiv:
      return b.neg(attrs.b("log_target") ? b.exp(t) : t);
  }
  TESSEL_ASSERT(false, "no input derivative for loss kind ",
                static_cast<int>(attrs.e<LossKind>("kind")));
  return Value{};
}

// ∂loss_i/∂t_i of Loss at input x and target t, elementwise.
Value loss_target_derivative(GraphBuilder& b, const Attrs& attrs, Value x, Value t) {
  auto c = [&](double v) { return scalar_like(b, v, x); };
  switch (attrs.e<LossKind>("kind")) {
    case LossKind::Mse:
    case LossKind::Mae:
    case LossKind::Huber:  // functions of x - t
      return b.neg(loss_input_derivative(b, attrs, x, t));
    case LossKind::BinaryCrossEntropy: {  // the forward's logs, clamped at -100 as there
      Value log_q = b.maximum(b.activation(ActivationKind::Log1p, b.neg(x)), c(-100));
      return b.sub(log_q, b.maximum(b.log(x), c(-100)));
    }
    case LossKind::BinaryCrossEntropyWithLogits:
      return b.neg(x);
    case LossKind::KlDiv:
      if (attrs.b("log_target"))  // e^t (t - x + 1)
        return b.mul(b.exp(t), b.add(b.sub(t, x), c(1)));
      // log t - x + 1, and 0 where t == 0 (the forward defines the loss as 0 there), as PyTorch
      return b.where(b.compare(CmpOp::Eq, t, c(0)), c(0), b.add(b.sub(b.log(t), x), c(1)));
  }
  TESSEL_ASSERT(false, "no target derivative for loss kind ",
                static_cast<int>(attrs.e<LossKind>("kind")));
  return Value{};
}

// Gradient of Loss w.r.t. its input: what LossBackward (dloss, input, target -> dinput) computes.
Value loss_input_backward(GraphBuilder& b, const Attrs& attrs, Value dloss, Value x, Value t) {
  return b.mul(loss_cotangent(b, attrs, dloss, x), loss_input_derivative(b, attrs, x, t));
}

// Gradient of Loss w.r.t. its (float) target.
Value loss_target_backward(GraphBuilder& b, const Attrs& attrs, Value dloss, Value x, Value t) {
  return b.mul(loss_cotangent(b, attrs, dloss, x), loss_target_derivative(b, attrs, x, t));
}

// A gradient of a two-operand loss from (attrs, dloss, operand 0, operand 1).
using LossGradFn = Value (*)(GraphBuilder& b, const Attrs& attrs, Value dloss, Value x, Value t);

// The VJP of a loss node from its operands' gradient functions (nullptr: no gradient).
std::vector<Value> pull_back_loss(VjpCtx& ctx, LossGradFn d0, LossGradFn d1) {
  std::vector<Value> grads(2);
  LossGradFn fns[] = {d0, d1};
  for (int i = 0; i < 2; ++i)
    if (fns[i] != nullptr && ctx.needs(i))
      grads[i] = fns[i](ctx.b, ctx.node.attrs, ctx.cotangents[0], ctx.inputs[0], ctx.inputs[1]);
  return grads;
}

// A gradient that a Backward kind (dloss, operand 0, operand 1 -> the gradient) computes, as a
// node of that kind with the forward node's attributes.
template <OpKind kind>
Value emit_loss_backward(GraphBuilder& b, const Attrs& attrs, Value dloss, Value x, Value t) {
  return b.op1(kind, attrs, {dloss, x, t});
}

// The decomposition of a Backward kind (dloss, operand 0, operand 1) by its gradient function.
template <LossGradFn grad>
std::vector<Value> decompose_loss_backward(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  return {grad(b, node.attrs, in[0], in[1], in[2])};
}

std::vector<Value> vjp_loss(VjpCtx& ctx) {
  return pull_back_loss(ctx, emit_loss_backward<OpKind::LossBackward>, loss_target_backward);
}

// SoftmaxCrossEntropy's cotangent per element of the logits: Mean divides by the number of
// positions (elements without the class axis).
Value soft_cross_entropy_cotangent(GraphBuilder& b, const Attrs& attrs, Value dloss, Value logits,
                                   int64_t axis) {
  const auto reduction = attrs.e<Reduction>("reduction");
  const TensorType lt = b.type(logits);  // a copy: the graph grows below
  Value count = reduction == Reduction::Mean
                    ? scalar_like(b, static_cast<double>(lt.numel() / lt.shape[axis]), logits)
                    : Value{};
  return per_element_cotangent(b, reduction, dloss, keepdims_shape(lt.shape, {axis}), lt.shape,
                               count);
}

// SoftmaxCrossEntropy's class axis, non-negative.
int64_t soft_cross_entropy_axis(GraphBuilder& b, const Attrs& attrs, Value logits) {
  return reduced_axes({attrs.i("axis")}, b.type(logits).rank())[0];
}

// loss = -Σ_c t_c · log_softmax(x)_c, so ∂/∂x = softmax(x) · Σ_c t_c - t (targets need not sum
// to 1).
Value soft_cross_entropy_logits_backward(GraphBuilder& b, const Attrs& attrs, Value dloss,
                                         Value logits, Value target) {
  const int64_t axis = soft_cross_entropy_axis(b, attrs, logits);
  Value g = soft_cross_entropy_cotangent(b, attrs, dloss, logits, axis);
  Value p = b.softmax(logits, axis);
  return b.mul(g, b.sub(b.mul(p, b.sum(target, {axis}, true)), target));
}

// ∂loss/∂t = -log_softmax(x).
Value soft_cross_entropy_target_backward(GraphBuilder& b, const Attrs& attrs, Value dloss,
                                         Value logits, Value target) {
  const int64_t axis = soft_cross_entropy_axis(b, attrs, logits);
  Value g = soft_cross_entropy_cotangent(b, attrs, dloss, logits, axis);
  return b.neg(b.mul(g, b.softmax(logits, axis, /*log=*/true)));
}

std::vector<Value> vjp_soft_cross_entropy(VjpCtx& ctx) {
  return pull_back_loss(ctx, soft_cross_entropy_logits_backward,
                        soft_cross_entropy_target_backward);
}

// Gradient of SoftmaxCrossEntropyWithLogits w.r.t. the logits [N,C,...] (or [C]): what
// SoftmaxCrossEntropyBackward (dloss, logits, labels -> dlogits) computes. Per position,
// softmax(x) - ((1-ε)·onehot(label) + ε/C); 0 at ignored positions; Mean divides by the number
// of positions not ignored (PyTorch cross_entropy).
Value cross_entropy_backward(GraphBuilder& b, const Attrs& attrs, Value dloss, Value logits,
                             Value labels) {
  const TensorType lt = b.type(logits);  // a copy: the graph grows below
  const int64_t axis = lt.rank() == 1 ? 0 : 1;
  const int64_t classes = lt.shape[axis];
  const double eps = attrs.f("label_smoothing");
  const auto reduction = attrs.e<Reduction>("reduction");
  const Shape kept = keepdims_shape(lt.shape, {axis});
  // Compared as i64: ignore_index need not be representable in the labels' dtype.
  Value ids = b.type(labels).dtype == DType::I64 ? labels : b.cast(labels, DType::I64);
  Value counted =
      b.compare(CmpOp::Ne, ids, b.scalar(static_cast<double>(attrs.i("ignore_index")), DType::I64));
  Value count = reduction == Reduction::Mean ? b.sum(b.cast(counted, lt.dtype), {}) : Value{};
  Value g = per_element_cotangent(b, reduction, dloss, kept, lt.shape, count);
  const double off = eps / static_cast<double>(classes);
  Value smoothed = b.op1(OpKind::OneHot,
                         Attrs()
                             .set("depth", classes)
                             .set("axis", axis)
                             .set("dtype", lt.dtype)
                             .set("on_value", 1 - eps + off)
                             .set("off_value", off),
                         {ids});
  Value d = b.mul(g, b.sub(b.softmax(logits, axis), smoothed));
  // where, not a multiply by the mask: with every position ignored, Mean's g / 0 is not finite.
  return b.where(b.reshape(counted, kept), d, scalar_like(b, 0, logits));
}

std::vector<Value> vjp_cross_entropy(VjpCtx& ctx) {
  // class ids: no gradient
  return pull_back_loss(ctx, emit_loss_backward<OpKind::SoftmaxCrossEntropyBackward>, nullptr);
}

}  // namespace

void register_vjp_losses(RuleTable& table) {
  table[OpKind::Loss].vjp = vjp_loss;
  table[OpKind::SoftmaxCrossEntropy].vjp = vjp_soft_cross_entropy;
  table[OpKind::SoftmaxCrossEntropyWithLogits].vjp = vjp_cross_entropy;
  table[OpKind::LossBackward].decompose = decompose_loss_backward<loss_input_backward>;
  table[OpKind::SoftmaxCrossEntropyBackward].decompose =
      decompose_loss_backward<cross_entropy_backward>;
}

}  // namespace tessel
