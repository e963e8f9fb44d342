#include "ops/scalar_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tessel/error.h"

namespace tessel {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

static double softplus(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

double round_half_even(double x) {
  double r = std::round(x);  // half away from zero
  if (std::abs(x - std::trunc(x)) == 0.5) r = 2.0 * std::round(x / 2.0);
  return r;
}

double activation_f64(ActivationKind k, double x, double alpha) {
  constexpr double kSeluScale = 1.0507009873554804934193349852946;
  constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
  switch (k) {
    case ActivationKind::Gelu:
      return 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2));
    case ActivationKind::GeluApprox: {
      constexpr double kBeta = 0.7978845608028654;  // sqrt(2 / pi)
      return 0.5 * x * (1.0 + std::tanh(kBeta * (x + 0.044715 * x * x * x)));
    }
    case ActivationKind::Silu:
      return x / (1.0 + std::exp(-x));
    case ActivationKind::Relu:
      return x < 0 ? 0.0 : x;  // NaN and -0 pass through
    case ActivationKind::Sigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case ActivationKind::Tanh:
      return std::tanh(x);
    case ActivationKind::Exp:
      return std::exp(x);
    case ActivationKind::Log:
      return std::log(x);
    case ActivationKind::Sqrt:
      return std::sqrt(x);
    case ActivationKind::Rsqrt:
      return 1.0 / std::sqrt(x);
    case ActivationKind::Neg:
      return -x;
    case ActivationKind::Abs:
      return std::abs(x);
    case ActivationKind::Sin:
      return std::sin(x);
    case ActivationKind::Cos:
      return std::cos(x);
    case ActivationKind::Tan:
      return std::tan(x);
    case ActivationKind::Atan:
      return std::atan(x);
    case ActivationKind::Round:
      return round_half_even(x);
    case ActivationKind::Identity:
      return x;
    case ActivationKind::LeakyRelu:
      return x > 0 ? x : x * (std::isnan(alpha) ? 0.01 : alpha);
    case ActivationKind::Elu:
      return x > 0 ? x : (std::isnan(alpha) ? 1.0 : alpha) * std::expm1(x);
    case ActivationKind::Selu:
      return kSeluScale * (x > 0 ? x : kSeluAlpha * std::expm1(x));
    case ActivationKind::Softplus:
      return softplus(x);
    case ActivationKind::Softsign:
      return x / (1.0 + std::abs(x));
    case ActivationKind::HardSigmoid:
      return std::isnan(x) ? x : std::clamp(x + 3.0, 0.0, 6.0) / 6.0;
    case ActivationKind::HardSwish:
      return std::isnan(x) ? x : x * std::clamp(x + 3.0, 0.0, 6.0) / 6.0;
    case ActivationKind::Mish:
      return x * std::tanh(softplus(x));
    case ActivationKind::Erf:
      return std::erf(x);
    case ActivationKind::Expm1:
      return std::expm1(x);
    case ActivationKind::Log1p:
      return std::log1p(x);
    case ActivationKind::Reciprocal:
      return 1.0 / x;
    case ActivationKind::Square:
      return x * x;
    case ActivationKind::Asin:
      return std::asin(x);
    case ActivationKind::Acos:
      return std::acos(x);
    case ActivationKind::Sinh:
      return std::sinh(x);
    case ActivationKind::Cosh:
      return std::cosh(x);
    case ActivationKind::Asinh:
      return std::asinh(x);
    case ActivationKind::Acosh:
      return std::acosh(x);
    case ActivationKind::Atanh:
      return std::atanh(x);
    case ActivationKind::Sign:
      return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;  // NaN -> 0, as PyTorch
    case ActivationKind::Floor:
      return std::floor(x);
    case ActivationKind::Ceil:
      return std::ceil(x);
    case ActivationKind::Not:
      return kNaN;  // rejected on floats by the shape rule
  }
  return kNaN;
}

double binary_f64(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::Add:
      return a + b;
    case BinaryOp::Sub:
      return a - b;
    case BinaryOp::Mul:
      return a * b;
    case BinaryOp::Div:
      return a / b;
    case BinaryOp::Max:
      return std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b);
    case BinaryOp::Min:
      return std::isnan(a) || std::isnan(b) ? kNaN : std::min(a, b);
    case BinaryOp::Pow:
      return std::pow(a, b);
    case BinaryOp::Mod:
      return std::fmod(a, b);
    case BinaryOp::FloorMod:
      return floor_mod(a, b);
    case BinaryOp::Atan2:
      return std::atan2(a, b);
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor:
    case BinaryOp::Shl:
    case BinaryOp::Shr:
      break;  // integer-only: the shape rule rejects float inputs
  }
  TESSEL_ASSERT(false, "float binary op not claimed");
  return kNaN;
}

}  // namespace tessel
