// Native kernels of the hot gradient kinds: ReluBackward and ActivationBackward for the
// activations of transformer and CNN training (Relu, LeakyRelu, Sigmoid, Tanh, Silu, Gelu,
// GeluApprox); f32 vectorized through simd_math.h, f64 in scalar double. The derivatives are the
// ones of the kinds' decomposition (src/ops/elementwise_vjp.cpp), the parity harness's reference.
// Other activations and dtypes run by that decomposition.
// GCC warns (-Wpsabi) on every lambda taking or returning a vector wider than the baseline ABI:
// they never cross a translation unit, so the ABI note does not apply.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#include <cmath>
#include <numbers>
#include <vector>

#include "backends/cpu/families.h"
#include "backends/cpu/strided.h"
// clang-format off
#include "backends/cpu/simd_math.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

constexpr ActivationKind kNative[] = {ActivationKind::Relu,      ActivationKind::LeakyRelu,
                                      ActivationKind::Sigmoid,   ActivationKind::Tanh,
                                      ActivationKind::Silu,      ActivationKind::Gelu,
                                      ActivationKind::GeluApprox};

// dx[i] = f(dy[i], x[i]) a vector at a time; the tail through a partial vector.
template <class F>
inline void map2(const float* dy, const float* x, float* dx, int64_t n, F f) {
  constexpr int L = kLanes<Vf>;
  int64_t i = 0;
  for (; i + L <= n; i += L) store(dx + i, f(load<Vf>(dy + i), load<Vf>(x + i)));
  if (i < n) {
    int r = static_cast<int>(n - i);
    store_partial(dx + i, f(load_partial<Vf>(dy + i, r), load_partial<Vf>(x + i, r)), r);
  }
}

constexpr double kInvSqrt2Pi = 0.398942280401432677939946059934;   // 1 / sqrt(2π)
constexpr double kSqrt2OverPi = 0.797884560802865355879892119869;  // sqrt(2 / π)

void backward_f32(ActivationKind k, float alpha, const float* dy, const float* x, float* dx,
                  int64_t n) {
  const Vf zero = splat<Vf>(0.0f);
  switch (k) {
    case ActivationKind::Relu:
      return map2(dy, x, dx, n, [&](Vf g, Vf v) { return v > 0.0f ? g : zero; });
    case ActivationKind::LeakyRelu: {
      const float a = std::isnan(alpha) ? 0.01f : alpha;
      return map2(dy, x, dx, n, [&](Vf g, Vf v) { return v > 0.0f ? g : g * a; });
    }
    case ActivationKind::Sigmoid:
      return map2(dy, x, dx, n, [](Vf g, Vf v) {
        Vf s = vsigmoid(v);
        return g * (s * (1.0f - s));
      });
    case ActivationKind::Tanh:
      return map2(dy, x, dx, n, [](Vf g, Vf v) {
        Vf t = vtanh(v);
        return g * (1.0f - t * t);
      });
    case ActivationKind::Silu:  // s·(1 + x·(1 - s))
      return map2(dy, x, dx, n, [](Vf g, Vf v) {
        Vf s = vsigmoid(v);
        return g * (s * (1.0f + v * (1.0f - s)));
      });
    case ActivationKind::Gelu:  // Φ(x) + x·φ(x), Φ through erfc: exact in both tails
      return map2(dy, x, dx, n, [](Vf g, Vf v) {
        Vf cdf = 0.5f * verfc(v * -0.707106781186547524f);
        Vf pdf = static_cast<float>(kInvSqrt2Pi) * vexp(-0.5f * v * v);
        return g * (cdf + v * pdf);
      });
    case ActivationKind::GeluApprox:  // (1 + t)/2 + x/2·(1 - t²)·u', u = √(2/π)(x + 0.044715x³)
      return map2(dy, x, dx, n, [](Vf g, Vf v) {
        constexpr float c = static_cast<float>(kSqrt2OverPi);
        Vf v2 = v * v;
        Vf t = vtanh(c * (v + 0.044715f * v2 * v));
        Vf du = c * (1.0f + (3 * 0.044715f) * v2);
        return g * (0.5f * (1.0f + t) + 0.5f * v * ((1.0f - t * t) * du));
      });
    default:
      break;
  }
  TESSEL_ASSERT(false, "ActivationBackward kind ", static_cast<int>(k), " not claimed natively");
}

double derivative_f64(ActivationKind k, double alpha, double x) {
  switch (k) {
    case ActivationKind::Relu:
      return x > 0 ? 1.0 : 0.0;
    case ActivationKind::LeakyRelu:
      return x > 0 ? 1.0 : (std::isnan(alpha) ? 0.01 : alpha);
    case ActivationKind::Sigmoid: {
      double s = 1 / (1 + std::exp(-x));
      return s * (1 - s);
    }
    case ActivationKind::Tanh: {
      double t = std::tanh(x);
      return 1 - t * t;
    }
    case ActivationKind::Silu: {
      double s = 1 / (1 + std::exp(-x));
      return s * (1 + x * (1 - s));
    }
    case ActivationKind::Gelu:
      return 0.5 * std::erfc(-x * std::numbers::sqrt2 / 2) +
             x * kInvSqrt2Pi * std::exp(-0.5 * x * x);
    case ActivationKind::GeluApprox: {
      double x2 = x * x;
      double t = std::tanh(kSqrt2OverPi * (x + 0.044715 * x2 * x));
      double du = kSqrt2OverPi * (1 + 3 * 0.044715 * x2);
      return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du;
    }
    default:
      break;
  }
  TESSEL_ASSERT(false, "ActivationBackward kind ", static_cast<int>(k), " not claimed natively");
  return 0;
}

// dx = dy · f'(x) over any strides (dx, dy, x), runs gathered to contiguous buffers.
void run_backward(ActivationKind k, double alpha, const HostTensor& dy, const HostTensor& x,
                  const HostTensor& dx) {
  auto plan = plan_strided<3>(dx.shape, {&dx, &dy, &x});
  const bool f32 = dx.dtype == DType::F32;
  strided_for(plan,
              [&](const std::array<uint8_t*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
                auto run = [&]<class T>(T*) {
                  std::vector<T> gbuf, xbuf;
                  const T* g = reinterpret_cast<const T*>(p[1]);
                  const T* xv = reinterpret_cast<const T*>(p[2]);
                  if (s[1] != 1) {
                    gbuf.resize(n);
                    for (int64_t i = 0; i < n; ++i) gbuf[i] = g[i * s[1]];
                    g = gbuf.data();
                  }
                  if (s[2] != 1) {
                    xbuf.resize(n);
                    for (int64_t i = 0; i < n; ++i) xbuf[i] = xv[i * s[2]];
                    xv = xbuf.data();
                  }
                  T* out = reinterpret_cast<T*>(p[0]);
                  std::vector<T> obuf;
                  T* o = s[0] == 1 ? out : (obuf.resize(n), obuf.data());
                  if constexpr (std::is_same_v<T, float>)
                    backward_f32(k, static_cast<float>(alpha), g, xv, o, n);
                  else
                    for (int64_t i = 0; i < n; ++i) o[i] = g[i] * derivative_f64(k, alpha, xv[i]);
                  if (s[0] != 1)
                    for (int64_t i = 0; i < n; ++i) out[i * s[0]] = o[i];
                };
                if (f32)
                  run(static_cast<float*>(nullptr));
                else
                  run(static_cast<double*>(nullptr));
              });
}

void kernel_relu_backward(const Node&, std::span<const HostTensor> in, std::span<HostTensor> out) {
  run_backward(ActivationKind::Relu, NAN, in[0], in[1], out[0]);
}

void kernel_activation_backward(const Node& node, std::span<const HostTensor> in,
                                std::span<HostTensor> out) {
  run_backward(node.attrs.e<ActivationKind>("kind"), node.attrs.f("alpha"), in[0], in[1], out[0]);
}

}  // namespace

void register_backward(KernelRegistry& r) {
  constexpr DTypeSet kF32F64 = DTypeSet{DType::F32} | DTypeSet{DType::F64};
  r.native(OpKind::ReluBackward, kernel_relu_backward, kF32F64);
  std::vector<int> variants;
  for (ActivationKind k : kNative) variants.push_back(static_cast<int>(k));
  r.native(OpKind::ActivationBackward, kernel_activation_backward, kF32F64, variants);
}
TESSEL_ISA_END
