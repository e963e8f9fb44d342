// VJP rules of the elementwise kinds: Activation (every differentiable variant), Binary, Where,
// Cast, GatedResidual; and the decompositions of ReluBackward, ActivationBackward and
// GatedResidualBackward, which the Activation / GatedResidual rules emit. x is the input, y the
// output, g the output's cotangent; derivatives follow PyTorch's conventions where a point is not
// differentiable (relu'(0) = 0, |x|'(0) = 0, max/min ties split the gradient evenly, pow's
// exponent gradient is 0 where the base is 0).
#include <cmath>
#include <numbers>

#include "ops/vjp_util.h"

namespace tessel {
namespace {

// The value of an `alpha` attribute, or the kind's default when it is NaN (unset).
double alpha_or(const Attrs& attrs, double fallback) {
  double a = attrs.f("alpha");
  return std::isnan(a) ? fallback : a;
}

// dy/dx of Activation (attrs kind, alpha) at x, as a graph; invalid where it is 1 (straight
// through). `y_in` is the activation's output, or invalid to recompute it where needed.
Value activation_derivative(GraphBuilder& b, const Attrs& attrs, Value x, Value y_in) {
  const auto k = attrs.e<ActivationKind>("kind");
  const double alpha = attrs.f("alpha");
  Value y = y_in;
  if (!y.valid()) switch (k) {  // the kinds whose derivative reads y
      case ActivationKind::Exp:
      case ActivationKind::Expm1:
      case ActivationKind::Sqrt:
      case ActivationKind::Rsqrt:
      case ActivationKind::Reciprocal:
      case ActivationKind::Tanh:
      case ActivationKind::Sigmoid:
      case ActivationKind::Tan:
      case ActivationKind::Elu:
      case ActivationKind::Selu:
        y = std::isnan(alpha) ? b.activation(k, x) : b.activation(k, x, alpha);
        break;
      default:
        break;
    }
  auto c = [&](double v) { return scalar_like(b, v, x); };
  auto act = [&](ActivationKind a, Value v) { return b.activation(a, v); };
  auto positive = [&] { return b.compare(CmpOp::Gt, x, c(0)); };
  auto one_minus_x2 = [&] { return b.sub(c(1), b.mul(x, x)); };
  switch (k) {
    case ActivationKind::Identity:
    case ActivationKind::Round:  // straight-through
      return Value{};
    case ActivationKind::Neg:
      return c(-1);
    case ActivationKind::Exp:
      return y;
    case ActivationKind::Expm1:
      return b.add(y, c(1));
    case ActivationKind::Log:
      return act(ActivationKind::Reciprocal, x);
    case ActivationKind::Log1p:
      return act(ActivationKind::Reciprocal, b.add(x, c(1)));
    case ActivationKind::Sqrt:
      return b.div(c(0.5), y);
    case ActivationKind::Rsqrt:
      return b.mul(c(-0.5), b.mul(y, b.mul(y, y)));
    case ActivationKind::Reciprocal:
      return b.neg(b.mul(y, y));
    case ActivationKind::Square:
      return b.mul(c(2), x);
    case ActivationKind::Tanh:
      return b.sub(c(1), b.mul(y, y));
    case ActivationKind::Sigmoid:
      return b.mul(y, b.sub(c(1), y));
    case ActivationKind::Relu:
      return b.where(positive(), c(1), c(0));
    case ActivationKind::Abs:
      return act(ActivationKind::Sign, x);
    case ActivationKind::Sin:
      return act(ActivationKind::Cos, x);
    case ActivationKind::Cos:
      return b.neg(act(ActivationKind::Sin, x));
    case ActivationKind::Tan:
      return b.add(c(1), b.mul(y, y));
    case ActivationKind::Atan:
      return act(ActivationKind::Reciprocal, b.add(c(1), b.mul(x, x)));
    case ActivationKind::Asin:
      return act(ActivationKind::Rsqrt, one_minus_x2());
    case ActivationKind::Acos:
      return b.neg(act(ActivationKind::Rsqrt, one_minus_x2()));
    case ActivationKind::Atanh:
      return act(ActivationKind::Reciprocal, one_minus_x2());
    case ActivationKind::Sinh:
      return act(ActivationKind::Cosh, x);
    case ActivationKind::Cosh:
      return act(ActivationKind::Sinh, x);
    case ActivationKind::Asinh:
      return act(ActivationKind::Rsqrt, b.add(b.mul(x, x), c(1)));
    case ActivationKind::Acosh:
      return act(ActivationKind::Rsqrt, b.sub(b.mul(x, x), c(1)));
    case ActivationKind::Erf:  // 2/√π · e^(-x²)
      return b.mul(c(2 / std::sqrt(std::numbers::pi)), b.exp(b.neg(b.mul(x, x))));
    case ActivationKind::LeakyRelu:
      return b.where(positive(), c(1), c(alpha_or(attrs, 0.01)));
    case ActivationKind::Elu:  // x <= 0: alpha·e^x = y + alpha
      return b.where(positive(), c(1), b.add(y, c(alpha_or(attrs, 1.0))));
    case ActivationKind::Selu: {
      constexpr double kAlpha = 1.6732632423543772848170429916717;
      constexpr double kScale = 1.0507009873554804934193349852946;
      return b.where(positive(), c(kScale), b.add(y, c(kScale * kAlpha)));
    }
    case ActivationKind::Softplus:
      return act(ActivationKind::Sigmoid, x);
    case ActivationKind::Softsign: {  // 1 / (1 + |x|)²
      Value d = b.add(c(1), act(ActivationKind::Abs, x));
      return act(ActivationKind::Reciprocal, b.mul(d, d));
    }
    case ActivationKind::HardSigmoid: {  // 1/6 on (-3, 3)
      Value inside =
          b.binary(BinaryOp::BitAnd, b.compare(CmpOp::Gt, x, c(-3)), b.compare(CmpOp::Lt, x, c(3)));
      return b.where(inside, c(1.0 / 6), c(0));
    }
    case ActivationKind::HardSwish: {  // 0 below -3, 1 above 3, (2x + 3) / 6 between
      Value mid = b.add(b.mul(x, c(1.0 / 3)), c(0.5));
      return b.where(b.compare(CmpOp::Lt, x, c(-3)), c(0),
                     b.where(b.compare(CmpOp::Gt, x, c(3)), c(1), mid));
    }
    case ActivationKind::Silu: {  // s·(1 + x·(1 - s))
      Value s = act(ActivationKind::Sigmoid, x);
      return b.mul(s, b.add(c(1), b.mul(x, b.sub(c(1), s))));
    }
    case ActivationKind::Mish: {  // t + x·(1 - t²)·σ(x), t = tanh(softplus(x))
      Value t = act(ActivationKind::Tanh, act(ActivationKind::Softplus, x));
      Value s = act(ActivationKind::Sigmoid, x);
      return b.add(t, b.mul(x, b.mul(b.sub(c(1), b.mul(t, t)), s)));
    }
    case ActivationKind::Gelu: {  // Φ(x) + x·φ(x)
      Value cdf = b.mul(
          c(0.5), b.add(c(1), act(ActivationKind::Erf, b.mul(x, c(std::numbers::sqrt2 / 2)))));
      Value pdf = b.mul(c(1 / std::sqrt(2 * std::numbers::pi)), b.exp(b.mul(c(-0.5), b.mul(x, x))));
      return b.add(cdf, b.mul(x, pdf));
    }
    case ActivationKind::GeluApprox: {  // u = √(2/π)(x + 0.044715x³), y = x(1 + tanh u)/2
      const double k = std::sqrt(2 / std::numbers::pi);
      Value x2 = b.mul(x, x);
      Value t = act(ActivationKind::Tanh, b.mul(c(k), b.add(x, b.mul(c(0.044715), b.mul(x2, x)))));
      Value du = b.mul(c(k), b.add(c(1), b.mul(c(3 * 0.044715), x2)));
      Value half_x = b.mul(c(0.5), x);
      return b.add(b.mul(c(0.5), b.add(c(1), t)),
                   b.mul(half_x, b.mul(b.sub(c(1), b.mul(t, t)), du)));
    }
    case ActivationKind::Sign:
    case ActivationKind::Floor:
    case ActivationKind::Ceil:
    case ActivationKind::Not:
      break;  // not differentiable: autodiff never asks
  }
  TESSEL_ASSERT(false, "no derivative for activation ", static_cast<int>(k));
  return Value{};
}

// ActivationBackward (dy, x -> dx): dy · f'(x).
std::vector<Value> decompose_activation_backward(Graph& g, const Node& node,
                                                 std::span<const Value> in) {
  GraphBuilder b(g);
  Value d = activation_derivative(b, node.attrs, in[1], Value{});
  return {d.valid() ? b.mul(in[0], d) : in[0]};
}

// ReluBackward (dy, x -> dx): dy where x > 0, else 0 (relu'(0) = 0).
Value relu_backward(GraphBuilder& b, Value dy, Value x) {
  return b.where(b.compare(CmpOp::Gt, x, scalar_like(b, 0, x)), dy, scalar_like(b, 0, dy));
}

std::vector<Value> decompose_relu_backward(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  return {relu_backward(b, in[0], in[1])};
}

// Emits ReluBackward / ActivationBackward; a straight-through kind passes g on.
std::vector<Value> vjp_activation(VjpCtx& ctx) {
  const auto k = ctx.node.attrs.e<ActivationKind>("kind");
  Value g = ctx.cotangents[0], x = ctx.inputs[0];
  if (k == ActivationKind::Identity || k == ActivationKind::Round) return {g};
  if (k == ActivationKind::Relu) return {ctx.b.op1(OpKind::ReluBackward, Attrs(), {g, x})};
  return {ctx.b.op1(OpKind::ActivationBackward, ctx.node.attrs, {g, x})};
}

std::vector<Value> vjp_binary(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value a = ctx.inputs[0], bv = ctx.inputs[1], y = ctx.outputs[0], g = ctx.cotangents[0];
  auto c = [&](double v) { return scalar_like(b, v, g); };
  Value ga, gb;
  switch (ctx.node.attrs.e<BinaryOp>("op")) {
    case BinaryOp::Add:
      ga = g;
      gb = g;
      break;
    case BinaryOp::Sub:
      ga = g;
      gb = b.neg(g);
      break;
    case BinaryOp::Mul:
      if (ctx.needs(0)) ga = b.mul(g, bv);
      if (ctx.needs(1)) gb = b.mul(g, a);
      break;
    case BinaryOp::Div:
      if (ctx.needs(0)) ga = b.div(g, bv);
      if (ctx.needs(1)) gb = b.neg(b.div(b.mul(g, y), bv));
      break;
    case BinaryOp::Max:
    case BinaryOp::Min: {  // the winner takes g; a tie splits it evenly
      const bool max = ctx.node.attrs.e<BinaryOp>("op") == BinaryOp::Max;
      Value a_wins = b.compare(max ? CmpOp::Gt : CmpOp::Lt, a, bv);
      Value tie = b.compare(CmpOp::Eq, a, bv);
      Value half = b.mul(g, c(0.5)), zero = c(0);
      if (ctx.needs(0)) ga = b.where(a_wins, g, b.where(tie, half, zero));
      if (ctx.needs(1)) gb = b.where(a_wins, zero, b.where(tie, half, g));
      break;
    }
    case BinaryOp::Pow:  // d/da = b·a^(b-1) (0 where b == 0); d/db = y·ln a (0 where a == 0, b >=
                         // 0)
      if (ctx.needs(0)) {
        Value d = b.mul(bv, b.pow(a, b.sub(bv, c(1))));
        ga = b.where(b.compare(CmpOp::Eq, bv, c(0)), c(0), b.mul(g, d));
      }
      if (ctx.needs(1)) {
        Value zero_base = b.binary(BinaryOp::BitAnd, b.compare(CmpOp::Eq, a, c(0)),
                                   b.compare(CmpOp::Ge, bv, c(0)));
        gb = b.where(zero_base, c(0), b.mul(g, b.mul(y, b.log(a))));
      }
      break;
    case BinaryOp::Atan2: {  // d/da = b / (a² + b²), d/db = -a / (a² + b²)
      Value r = b.add(b.mul(a, a), b.mul(bv, bv));
      if (ctx.needs(0)) ga = b.div(b.mul(g, bv), r);
      if (ctx.needs(1)) gb = b.neg(b.div(b.mul(g, a), r));
      break;
    }
    case BinaryOp::Mod:       // y = a - trunc(a/b)·b: d/db = -trunc(a/b)
    case BinaryOp::FloorMod:  // y = a - floor(a/b)·b: d/db = -floor(a/b)
      ga = g;                 // the quotient, an integer, recovered exactly as round((a - y) / b)
      if (ctx.needs(1))
        gb = b.neg(b.mul(g, b.activation(ActivationKind::Round, b.div(b.sub(a, y), bv))));
      break;
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor:
    case BinaryOp::Shl:
    case BinaryOp::Shr:
      break;  // not differentiable: autodiff never asks
  }
  if (ga.valid()) ga = unbroadcast(b, ga, ctx.type(a).shape);
  if (gb.valid()) gb = unbroadcast(b, gb, ctx.type(bv).shape);
  return {ga, gb};
}

std::vector<Value> vjp_where(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value cond = ctx.inputs[0], g = ctx.cotangents[0];
  Value zero = scalar_like(b, 0, g);
  Value ga, gb;
  if (ctx.needs(1)) ga = unbroadcast(b, b.where(cond, g, zero), ctx.type(ctx.inputs[1]).shape);
  if (ctx.needs(2)) gb = unbroadcast(b, b.where(cond, zero, g), ctx.type(ctx.inputs[2]).shape);
  return {Value{}, ga, gb};
}

std::vector<Value> vjp_cast(VjpCtx& ctx) {
  return {ctx.b.cast(ctx.cotangents[0], ctx.type(ctx.inputs[0]).dtype)};
}

// GatedResidual out = x + gate·y (gate a DiT modulation): {dx, dy, dgate}, dgate summed to the
// gate's shape; what GatedResidualBackward (dout, x, y, gate) computes.
std::vector<Value> gated_residual_backward(GraphBuilder& b, Value dout, Value x, Value y,
                                           Value gate) {
  const Shape gs = b.type(gate).shape;
  const Shape view = modulation_view(b.type(x).shape, gs);
  Value dgate = b.reshape(unbroadcast(b, b.mul(dout, y), view), gs);
  return {dout, b.mul(dout, b.reshape(gate, view)), dgate};
}

std::vector<Value> decompose_gated_residual_backward(Graph& g, const Node& node,
                                                     std::span<const Value> in) {
  GraphBuilder b(g);
  return gated_residual_backward(b, in[0], in[1], in[2], in[3]);
}

// Emits GatedResidualBackward, unless a [B,D]-style gate is not exactly [B,D] (the kind's
// contract): then the same gradients inline.
std::vector<Value> vjp_gated_residual(VjpCtx& ctx) {
  Value x = ctx.inputs[0], y = ctx.inputs[1], gate = ctx.inputs[2], g = ctx.cotangents[0];
  const Shape& xs = ctx.type(x).shape;
  const Shape& gs = ctx.type(gate).shape;
  if (xs.size() == 3 && gs.size() == 2 && gs != Shape{xs[0], xs[2]})
    return gated_residual_backward(ctx.b, g, x, y, gate);
  return ctx.b.emit(OpKind::GatedResidualBackward, Attrs(), {g, x, y, gate});
}

}  // namespace

void register_vjp_elementwise(RuleTable& table) {
  table[OpKind::Activation].vjp = vjp_activation;
  table[OpKind::Binary].vjp = vjp_binary;
  table[OpKind::Where].vjp = vjp_where;
  table[OpKind::Cast].vjp = vjp_cast;
  table[OpKind::GatedResidual].vjp = vjp_gated_residual;
  table[OpKind::ReluBackward].decompose = decompose_relu_backward;
  table[OpKind::ActivationBackward].decompose = decompose_activation_backward;
  table[OpKind::GatedResidualBackward].decompose = decompose_gated_residual_backward;
}

}  // namespace tessel
