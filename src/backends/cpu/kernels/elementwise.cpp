// cpu kernels of the elementwise family: Activation, StopGradient and GatedActivation here, and
// the registration of the whole family (Cast in elementwise_cast.cpp, Binary and Clamp in
// elementwise_binary.cpp, Compare and Where in elementwise_select.cpp).
// GCC warns (-Wpsabi) on every lambda taking or returning a vector wider than the baseline ABI:
// they never cross a translation unit, so the ABI note does not apply.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#include <cstring>
#include <type_traits>

#include "backends/cpu/activation.h"
#include "backends/cpu/convert.h"
#include "backends/cpu/dtype_dispatch.h"
#include "backends/cpu/families.h"
#include "backends/cpu/strided.h"
#include "ops/elementwise_dtypes.h"
#include "runtime/kernel_util.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN

void register_elementwise_cast(KernelRegistry& r);    // elementwise_cast.cpp
void register_elementwise_binary(KernelRegistry& r);  // elementwise_binary.cpp
void register_elementwise_select(KernelRegistry& r);  // elementwise_select.cpp

namespace {

// y[i] = x[i * stride] for a typed run (the gather before an in-place contiguous pass).
template <class T>
void gather_run(const T* x, int64_t stride, T* y, int64_t n) {
  if (stride == 1) {
    if (x != y) std::memmove(y, x, static_cast<size_t>(n) * sizeof(T));
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = x[i * stride];
}

// ---- Activation -----------------------------------------------------------------------------

// Integer and bool kinds, exact with two's-complement wrap (computed in the unsigned type).
template <class T>
void int_activation(ActivationKind k, T* y, int64_t n, bool is_bool) {
  using U = std::make_unsigned_t<T>;
  using V = Vec<T>;
  using VU = Vec<U>;
  constexpr int L = kLanes<V>;
  auto apply = [&](auto f) {
    int64_t i = 0;
    for (; i + L <= n; i += L) store(y + i, f(load<V>(y + i)));
    if (i < n) {
      int r = static_cast<int>(n - i);
      store_partial(y + i, f(load_partial<V>(y + i, r)), r);
    }
  };
  const V zero = splat<V>(0), one = splat<V>(1);
  switch (k) {
    case ActivationKind::Identity:
      if (is_bool) apply([&](V v) { return v != 0 ? one : zero; });
      return;
    case ActivationKind::Neg:
      return apply([](V v) { return bitcast<V>(VU{} - bitcast<VU>(v)); });
    case ActivationKind::Abs:
      return apply([&](V v) { return v < zero ? bitcast<V>(VU{} - bitcast<VU>(v)) : v; });
    case ActivationKind::Sign:
      return apply([&](V v) { return v > zero ? one : (v < zero ? V{} - 1 : zero); });
    case ActivationKind::Square:
      return apply([](V v) { return bitcast<V>(bitcast<VU>(v) * bitcast<VU>(v)); });
    case ActivationKind::Relu:
      return apply([&](V v) { return v < zero ? zero : v; });
    case ActivationKind::Not:
      if (is_bool) return apply([&](V v) { return v == 0 ? one : zero; });
      return apply([](V v) { return ~v; });
    case ActivationKind::Gelu:
    case ActivationKind::GeluApprox:
    case ActivationKind::Silu:
    case ActivationKind::Sigmoid:
    case ActivationKind::Tanh:
    case ActivationKind::Exp:
    case ActivationKind::Log:
    case ActivationKind::Sqrt:
    case ActivationKind::Rsqrt:
    case ActivationKind::Sin:
    case ActivationKind::Cos:
    case ActivationKind::Tan:
    case ActivationKind::Atan:
    case ActivationKind::Round:
    case ActivationKind::LeakyRelu:
    case ActivationKind::Elu:
    case ActivationKind::Selu:
    case ActivationKind::Softplus:
    case ActivationKind::Softsign:
    case ActivationKind::HardSigmoid:
    case ActivationKind::HardSwish:
    case ActivationKind::Mish:
    case ActivationKind::Erf:
    case ActivationKind::Expm1:
    case ActivationKind::Log1p:
    case ActivationKind::Reciprocal:
    case ActivationKind::Asin:
    case ActivationKind::Acos:
    case ActivationKind::Sinh:
    case ActivationKind::Cosh:
    case ActivationKind::Asinh:
    case ActivationKind::Acosh:
    case ActivationKind::Atanh:
    case ActivationKind::Floor:
    case ActivationKind::Ceil:
      break;  // float-only: the shape rule rejects integer inputs
  }
  TESSEL_ASSERT(false, "integer activation variant not claimed");
}

template <class T>
void activation_int_kernel(const StridedPlan<2>& plan, ActivationKind k, bool is_bool) {
  strided_for(plan,
              [&](const std::array<uint8_t*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                auto y = reinterpret_cast<T*>(p[0]);
                gather_run(reinterpret_cast<const T*>(p[1]), s[1], y, n);
                int_activation<T>(k, y, n, is_bool);
              });
}

// f32 / f64 in their own vectors (strided inputs gathered into y first).
template <class T>
void activation_float_kernel(const StridedPlan<2>& plan, ActivationKind kind, double alpha) {
  strided_for(plan,
              [&](const std::array<uint8_t*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                auto yo = reinterpret_cast<T*>(p[0]);
                auto xi = reinterpret_cast<const T*>(p[1]);
                if (s[1] != 1) gather_run(xi, s[1], yo, n), xi = yo;
                if constexpr (std::is_same_v<T, float>)
                  activation_f32(kind, static_cast<float>(alpha), xi, yo, n);
                else
                  activation_f64(kind, alpha, xi, yo, n);
              });
}

void kernel_activation(const Node& node, std::span<const HostTensor> in,
                       std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  auto kind = node.attrs.e<ActivationKind>("kind");
  double alpha = node.attrs.f("alpha");
  auto plan = plan_strided<2>(y.shape, {&y, &x});
  const bool claimed = visit_compute_type(x.dtype, [&]<class T>() {
    if constexpr (kIsStagedF32<T>)
      strided_staged_unary(plan, x.dtype, [&](float* buf, int64_t m) {
        activation_f32(kind, static_cast<float>(alpha), buf, buf, m);
      });
    else if constexpr (std::is_floating_point_v<T>)
      activation_float_kernel<T>(plan, kind, alpha);
    else if constexpr (std::is_same_v<T, bool>)
      activation_int_kernel<uint8_t>(plan, kind, true);
    else
      activation_int_kernel<T>(plan, kind, false);
  });
  TESSEL_ASSERT(claimed, "Activation on ", dtype_name(x.dtype), " not claimed");
}

// ---- StopGradient ---------------------------------------------------------------------------

template <class T>
void copy_strided(const uint8_t* src, int64_t stride, uint8_t* dst, int64_t n) {
  gather_run(reinterpret_cast<const T*>(src), stride, reinterpret_cast<T*>(dst), n);
}

void kernel_stop_gradient(const Node&, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  auto plan = plan_strided<2>(y.shape, {&y, &in[0]});
  const int size = dtype_size(y.dtype);
  strided_for(
      plan, [&](const std::array<uint8_t*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
        switch (size) {
          case 1:
            return copy_strided<uint8_t>(p[1], s[1], p[0], n);
          case 2:
            return copy_strided<uint16_t>(p[1], s[1], p[0], n);
          case 4:
            return copy_strided<uint32_t>(p[1], s[1], p[0], n);
          case 8:
            return copy_strided<uint64_t>(p[1], s[1], p[0], n);
          default:
            for (int64_t i = 0; i < n; ++i)
              std::memcpy(p[0] + i * size, p[1] + i * s[1] * size, static_cast<size_t>(size));
        }
      });
}

// ---- GatedActivation ------------------------------------------------------------------------

// y = act(a) · b, a and b the halves of x along axis: two strided views of x over y's shape.
void kernel_gated_activation(const Node& node, std::span<const HostTensor> in,
                             std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  auto kind = node.attrs.e<ActivationKind>("kind");
  const int axis = axis_attr(node, x.rank());
  HostTensor a = x;
  a.shape = y.shape;
  HostTensor b = a;
  b.offset += y.shape[axis] * x.strides[axis];
  auto plan = plan_strided<3>(y.shape, {&y, &a, &b});
  const DType t = y.dtype;
  const int size = dtype_size(t);
  const float kNaNf = std::numeric_limits<float>::quiet_NaN();
  strided_for(plan,
              [&](const std::array<uint8_t*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
                for (int64_t i = 0; i < n; i += kStageBlock) {
                  int64_t m = std::min(kStageBlock, n - i);
                  if (t == DType::F64) {
                    double av[kStageBlock], bv[kStageBlock];
                    to_f64(p[1] + i * s[1] * size, t, s[1], av, m);
                    to_f64(p[2] + i * s[2] * size, t, s[2], bv, m);
                    activation_f64(kind, static_cast<double>(kNaNf), av, av, m);
                    auto yo = reinterpret_cast<double*>(p[0]) + i;
                    for (int64_t j = 0; j < m; ++j) yo[j] = av[j] * bv[j];
                    continue;
                  }
                  float av[kStageBlock], bv[kStageBlock];
                  to_f32(p[1] + i * s[1] * size, t, s[1], av, m);
                  to_f32(p[2] + i * s[2] * size, t, s[2], bv, m);
                  activation_f32(kind, kNaNf, av, av, m);
                  if (t == DType::F32) {
                    auto yo = reinterpret_cast<float*>(p[0]) + i;
                    for (int64_t j = 0; j < m; ++j) yo[j] = av[j] * bv[j];
                  } else {
                    for (int64_t j = 0; j < m; ++j) av[j] *= bv[j];
                    from_f32(av, p[0] + i * size, t, 1, m);
                  }
                }
              });
}

// One claim per variant, on exactly the dtypes the shape rule accepts (as the reference).
template <class Variant>
void claim_variants(KernelRegistry& r, OpKind kind, HostKernel fn, DTypeSet (*dtypes)(Variant)) {
  for (int v = 0; v < op_info(kind).num_variants(); ++v) {
    DTypeSet s = dtypes(static_cast<Variant>(v));
    if (!s.empty()) r.native(kind, fn, s, {v});
  }
}

}  // namespace

void register_elementwise(KernelRegistry& r) {
  claim_variants(r, OpKind::Activation, kernel_activation, activation_dtypes);
  r.native(OpKind::StopGradient, kernel_stop_gradient, dtypes::kEvery);
  claim_variants(r, OpKind::GatedActivation, kernel_gated_activation, gated_activation_dtypes);
  register_elementwise_cast(r);
  register_elementwise_binary(r);
  register_elementwise_select(r);
}

TESSEL_ISA_END
