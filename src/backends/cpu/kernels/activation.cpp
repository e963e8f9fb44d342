// Activations on contiguous arrays (activation.h): f32 vectorized through simd_math.h; f64
// vectorized where the kind is exact arithmetic, else the one scalar definition in
// ops/scalar_math.h (what the reference computes).
// GCC warns (-Wpsabi) on every lambda taking or returning a vector wider than the baseline ABI:
// they never cross a translation unit, so the ABI note does not apply.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#include "backends/cpu/activation.h"

#include <cmath>

#include "ops/scalar_math.h"
// clang-format off
#include "backends/cpu/simd_math.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

// y[i] = f(x[i]) a vector at a time; the tail through a partial vector.
template <class V, class F>
inline void map(const Lane<V>* x, Lane<V>* y, int64_t n, F f) {
  constexpr int L = kLanes<V>;
  int64_t i = 0;
  for (; i + L <= n; i += L) store(y + i, f(load<V>(x + i)));
  if (i < n) {
    int r = static_cast<int>(n - i);
    store_partial(y + i, f(load_partial<V>(x + i, r)), r);
  }
}

inline Vf softplus(Vf x) { return (x > 0.0f ? x : splat<Vf>(0.0f)) + vlog1p(vexp(-vabs(x))); }
inline Vf clamp06(Vf v) {
  v = v < 0.0f ? splat<Vf>(0.0f) : v;
  return v > 6.0f ? splat<Vf>(6.0f) : v;
}

}  // namespace

void activation_f32(ActivationKind k, float alpha, const float* x, float* y, int64_t n) {
  constexpr float kSeluScale = 1.0507009873554804934f;
  constexpr float kSeluAlpha = 1.6732632423543772848f;
  const Vf zero = splat<Vf>(0.0f);
  switch (k) {
    case ActivationKind::Gelu:
      return map<Vf>(x, y, n, [](Vf v) { return vgelu(v); });
    case ActivationKind::GeluApprox:  // 0.5x(1 + tanh z) = x·sigmoid(2z): no cancellation
      return map<Vf>(x, y, n, [](Vf v) {
        Vf z = 0.7978845608028654f * (v + 0.044715f * v * v * v);
        return v * vsigmoid(z + z);
      });
    case ActivationKind::Silu:
      return map<Vf>(x, y, n, [](Vf v) { return v * vsigmoid(v); });
    case ActivationKind::Relu:
      return map<Vf>(x, y, n, [&](Vf v) { return v < 0.0f ? zero : v; });
    case ActivationKind::Sigmoid:
      return map<Vf>(x, y, n, [](Vf v) { return vsigmoid(v); });
    case ActivationKind::Tanh:
      return map<Vf>(x, y, n, [](Vf v) { return vtanh(v); });
    case ActivationKind::Exp:
      return map<Vf>(x, y, n, [](Vf v) { return vexp(v); });
    case ActivationKind::Log:
      return map<Vf>(x, y, n, [](Vf v) { return vlog(v); });
    case ActivationKind::Sqrt:
      return map<Vf>(x, y, n, [](Vf v) { return vsqrt(v); });
    case ActivationKind::Rsqrt:
      return map<Vf>(x, y, n, [](Vf v) { return 1.0f / vsqrt(v); });
    case ActivationKind::Neg:
      return map<Vf>(x, y, n, [](Vf v) { return -v; });
    case ActivationKind::Abs:
      return map<Vf>(x, y, n, [](Vf v) { return vabs(v); });
    case ActivationKind::Sin:
      return map<Vf>(x, y, n, [](Vf v) { return vsin(v); });
    case ActivationKind::Cos:
      return map<Vf>(x, y, n, [](Vf v) { return vcos(v); });
    case ActivationKind::Tan:
      return map<Vf>(x, y, n, [](Vf v) { return vtan(v); });
    case ActivationKind::Atan:
      return map<Vf>(x, y, n, [](Vf v) { return vatan(v); });
    case ActivationKind::Round:
      return map<Vf>(x, y, n, [](Vf v) { return vround(v); });
    case ActivationKind::Identity:
      if (x != y) std::memmove(y, x, static_cast<size_t>(n) * sizeof(float));
      return;
    case ActivationKind::LeakyRelu: {
      float a = std::isnan(alpha) ? 0.01f : alpha;
      return map<Vf>(x, y, n, [a](Vf v) { return v > 0.0f ? v : v * a; });
    }
    case ActivationKind::Elu: {
      float a = std::isnan(alpha) ? 1.0f : alpha;
      return map<Vf>(x, y, n, [a](Vf v) { return v > 0.0f ? v : a * vexpm1(v); });
    }
    case ActivationKind::Selu:
      return map<Vf>(x, y, n,
                     [=](Vf v) { return kSeluScale * (v > 0.0f ? v : kSeluAlpha * vexpm1(v)); });
    case ActivationKind::Softplus:
      return map<Vf>(x, y, n, [](Vf v) { return softplus(v); });
    case ActivationKind::Softsign:
      return map<Vf>(x, y, n, [](Vf v) { return v / (1.0f + vabs(v)); });
    case ActivationKind::HardSigmoid:
      return map<Vf>(x, y, n, [](Vf v) { return v != v ? v : clamp06(v + 3.0f) / 6.0f; });
    case ActivationKind::HardSwish:
      return map<Vf>(x, y, n, [](Vf v) { return v != v ? v : v * clamp06(v + 3.0f) / 6.0f; });
    case ActivationKind::Mish:
      return map<Vf>(x, y, n, [](Vf v) { return v * vtanh(softplus(v)); });
    case ActivationKind::Erf:
      return map<Vf>(x, y, n, [](Vf v) { return verf(v); });
    case ActivationKind::Expm1:
      return map<Vf>(x, y, n, [](Vf v) { return vexpm1(v); });
    case ActivationKind::Log1p:
      return map<Vf>(x, y, n, [](Vf v) { return vlog1p(v); });
    case ActivationKind::Reciprocal:
      return map<Vf>(x, y, n, [](Vf v) { return 1.0f / v; });
    case ActivationKind::Square:
      return map<Vf>(x, y, n, [](Vf v) { return v * v; });
    case ActivationKind::Asin:
      return map<Vf>(x, y, n, [](Vf v) { return vasin(v); });
    case ActivationKind::Acos:
      return map<Vf>(x, y, n, [](Vf v) { return vacos(v); });
    case ActivationKind::Sinh:
      return map<Vf>(x, y, n, [](Vf v) { return vsinh(v); });
    case ActivationKind::Cosh:
      return map<Vf>(x, y, n, [](Vf v) { return vcosh(v); });
    case ActivationKind::Asinh:
      return map<Vf>(x, y, n, [](Vf v) { return vasinh(v); });
    case ActivationKind::Acosh:
      return map<Vf>(x, y, n, [](Vf v) { return vacosh(v); });
    case ActivationKind::Atanh:
      return map<Vf>(x, y, n, [](Vf v) { return vatanh(v); });
    case ActivationKind::Sign:  // NaN -> 0, as PyTorch
      return map<Vf>(x, y, n, [&](Vf v) {
        return v > 0.0f ? splat<Vf>(1.0f) : (v < 0.0f ? splat<Vf>(-1.0f) : zero);
      });
    case ActivationKind::Floor:
      return map<Vf>(x, y, n, [](Vf v) { return vfloor(v); });
    case ActivationKind::Ceil:
      return map<Vf>(x, y, n, [](Vf v) { return vceil(v); });
    case ActivationKind::Not:  // not defined on floats (the shape rule rejects it)
      break;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(tessel::activation_f64(k, x[i], alpha));
}

void activation_f64(ActivationKind k, double alpha, const double* x, double* y, int64_t n) {
  const Vd zero = splat<Vd>(0.0);
  switch (k) {
    case ActivationKind::Relu:
      return map<Vd>(x, y, n, [&](Vd v) { return v < 0.0 ? zero : v; });
    case ActivationKind::Sqrt:
      return map<Vd>(x, y, n, [](Vd v) { return vsqrt(v); });
    case ActivationKind::Rsqrt:
      return map<Vd>(x, y, n, [](Vd v) { return 1.0 / vsqrt(v); });
    case ActivationKind::Neg:
      return map<Vd>(x, y, n, [](Vd v) { return -v; });
    case ActivationKind::Abs:
      return map<Vd>(x, y, n, [](Vd v) { return vabs(v); });
    case ActivationKind::Identity:
      if (x != y) std::memmove(y, x, static_cast<size_t>(n) * sizeof(double));
      return;
    case ActivationKind::LeakyRelu: {
      double a = std::isnan(alpha) ? 0.01 : alpha;
      return map<Vd>(x, y, n, [a](Vd v) { return v > 0.0 ? v : v * a; });
    }
    case ActivationKind::Reciprocal:
      return map<Vd>(x, y, n, [](Vd v) { return 1.0 / v; });
    case ActivationKind::Square:
      return map<Vd>(x, y, n, [](Vd v) { return v * v; });
    case ActivationKind::Softsign:
      return map<Vd>(x, y, n, [](Vd v) { return v / (1.0 + vabs(v)); });
    case ActivationKind::Sign:
      return map<Vd>(x, y, n, [&](Vd v) {
        return v > 0.0 ? splat<Vd>(1.0) : (v < 0.0 ? splat<Vd>(-1.0) : zero);
      });
    case ActivationKind::Round:
      return map<Vd>(x, y, n, [](Vd v) { return vround(v); });
    case ActivationKind::Floor:
      return map<Vd>(x, y, n, [](Vd v) { return vfloor(v); });
    case ActivationKind::Ceil:
      return map<Vd>(x, y, n, [](Vd v) { return vceil(v); });
    case ActivationKind::Gelu:
    case ActivationKind::GeluApprox:
    case ActivationKind::Silu:
    case ActivationKind::Sigmoid:
    case ActivationKind::Tanh:
    case ActivationKind::Exp:
    case ActivationKind::Log:
    case ActivationKind::Sin:
    case ActivationKind::Cos:
    case ActivationKind::Tan:
    case ActivationKind::Atan:
    case ActivationKind::Elu:
    case ActivationKind::Selu:
    case ActivationKind::Softplus:
    case ActivationKind::HardSigmoid:
    case ActivationKind::HardSwish:
    case ActivationKind::Mish:
    case ActivationKind::Erf:
    case ActivationKind::Expm1:
    case ActivationKind::Log1p:
    case ActivationKind::Asin:
    case ActivationKind::Acos:
    case ActivationKind::Sinh:
    case ActivationKind::Cosh:
    case ActivationKind::Asinh:
    case ActivationKind::Acosh:
    case ActivationKind::Atanh:
    case ActivationKind::Not:
      break;  // transcendental in f64: the scalar definition (libm), exactly the reference's
  }
  for (int64_t i = 0; i < n; ++i) y[i] = tessel::activation_f64(k, x[i], alpha);
}

TESSEL_ISA_END
