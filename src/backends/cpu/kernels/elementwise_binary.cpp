// cpu kernels: Binary (all ops, broadcasting through strides) and Clamp. f32 / f64 in their own
// vectors, f16 / bf16 / fp8 staged through f32, integers exact in their own width (two's-
// complement wrap, as the reference's int64 arithmetic wrapped by the store).
// GCC warns (-Wpsabi) on every lambda taking or returning a vector wider than the baseline ABI:
// they never cross a translation unit, so the ABI note does not apply.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backends/cpu/convert.h"
#include "backends/cpu/dtype_dispatch.h"
#include "backends/cpu/families.h"
#include "backends/cpu/strided.h"
#include "ops/elementwise_dtypes.h"
#include "ops/scalar_math.h"
#include "runtime/kernel_util.h"
// clang-format off
#include "backends/cpu/simd_math.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

using Ptrs3 = std::array<uint8_t*, 3>;
using Steps3 = std::array<int64_t, 3>;

// y[i] = op(a[i·sa], b[i·sb]) with vectors V; stride-0 operands are splatted, other strides
// gathered a block at a time. Tail lanes of b are 1 so integer division never sees 0 there.
template <class V, class Op>
void binary_run(Lane<V>* y, const Lane<V>* a, int64_t sa, const Lane<V>* b, int64_t sb, int64_t n,
                const Op& op) {
  using T = Lane<V>;
  constexpr int L = kLanes<V>;
  if ((sa != 0 && sa != 1) || (sb != 0 && sb != 1)) {
    T ab[kStageBlock], bb[kStageBlock];
    for (int64_t i = 0; i < n; i += kStageBlock) {
      int64_t m = std::min(kStageBlock, n - i);
      const T* ap = a + i * sa;
      const T* bp = b + i * sb;
      for (int64_t j = 0; j < m; ++j) ab[j] = ap[j * sa];
      for (int64_t j = 0; j < m; ++j) bb[j] = bp[j * sb];
      binary_run<V>(y + i, ab, 1, bb, 1, m, op);
    }
    return;
  }
  auto la = [&](int64_t i) { return sa == 0 ? splat<V>(a[0]) : load<V>(a + i); };
  auto lb = [&](int64_t i) { return sb == 0 ? splat<V>(b[0]) : load<V>(b + i); };
  int64_t i = 0;
  if (sa == 1 && sb == 1) {
    for (; i + L <= n; i += L) store(y + i, op(load<V>(a + i), load<V>(b + i)));
  } else {
    for (; i + L <= n; i += L) store(y + i, op(la(i), lb(i)));
  }
  if (i < n) {
    int r = static_cast<int>(n - i);
    V va = sa == 0 ? splat<V>(a[0]) : load_partial<V>(a + i, r);
    V vb = sb == 0 ? splat<V>(b[0]) : load_partial<V>(b + i, r, T(1));
    store_partial(y + i, op(va, vb), r);
  }
}

// Lane-wise scalar function (fmod, pow, atan2 in f64): exact, rare enough to stay scalar.
template <class V, class F>
V lanewise(V a, V b, F f) {
  V r;
  for (int i = 0; i < kLanes<V>; ++i) r[i] = f(a[i], b[i]);
  return r;
}

// Calls run(op) with the vector op for a float BinaryOp.
template <class V, class Run>
void dispatch_float(BinaryOp op, Run&& run) {
  using T = Lane<V>;
  switch (op) {
    case BinaryOp::Add:
      return run([](V a, V b) { return a + b; });
    case BinaryOp::Sub:
      return run([](V a, V b) { return a - b; });
    case BinaryOp::Mul:
      return run([](V a, V b) { return a * b; });
    case BinaryOp::Div:
      return run([](V a, V b) { return a / b; });
    case BinaryOp::Max:
      return run([](V a, V b) { return max_nan(a, b); });
    case BinaryOp::Min:
      return run([](V a, V b) { return min_nan(a, b); });
    case BinaryOp::Pow:
      if constexpr (std::is_same_v<T, float>) return run([](V a, V b) { return vpow(a, b); });
      return run([](V a, V b) { return lanewise(a, b, [](T x, T y) { return std::pow(x, y); }); });
    case BinaryOp::Mod:
      return run([](V a, V b) { return lanewise(a, b, [](T x, T y) { return std::fmod(x, y); }); });
    case BinaryOp::FloorMod:
      return run([](V a, V b) { return lanewise(a, b, floor_mod<T>); });
    case BinaryOp::Atan2:
      if constexpr (std::is_same_v<T, float>) return run([](V a, V b) { return vatan2(a, b); });
      return run(
          [](V a, V b) { return lanewise(a, b, [](T x, T y) { return std::atan2(x, y); }); });
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor:
    case BinaryOp::Shl:
    case BinaryOp::Shr:
      break;  // integer-only: the shape rule rejects float inputs
  }
  TESSEL_ASSERT(false, "float binary op not claimed");
}

template <class U>
U pow_wrapped(U base, U exponent) {
  U result = 1;
  for (auto e = static_cast<uint64_t>(exponent); e; e >>= 1) {
    if (e & 1) result = static_cast<U>(result * base);
    base = static_cast<U>(base * base);
  }
  return result;
}

// Calls run(op) with the vector op for an integer BinaryOp on lane type T (bool: uint8 0/1).
template <class T, class Run>
void dispatch_int(BinaryOp op, Run&& run) {
  using V = Vec<T>;
  using U = std::make_unsigned_t<T>;
  using VU = Vec<U>;
  constexpr int kBits = 8 * sizeof(T);
  constexpr bool kSigned = std::is_signed_v<T>;
  auto wrap = [](auto f) {  // wrapping arithmetic in the unsigned lane type
    return [f](V a, V b) { return bitcast<V>(f(bitcast<VU>(a), bitcast<VU>(b))); };
  };
  switch (op) {
    case BinaryOp::Add:
      return run(wrap([](VU a, VU b) { return a + b; }));
    case BinaryOp::Sub:
      return run(wrap([](VU a, VU b) { return a - b; }));
    case BinaryOp::Mul:
      return run(wrap([](VU a, VU b) { return a * b; }));
    case BinaryOp::Div:  // b != 0 checked; b == -1 negates (no INT_MIN / -1 trap)
      return run([](V a, V b) {
        if constexpr (kSigned) {
          V m1 = b == -1;
          V q = a / (m1 ? splat<V>(1) : b);
          return m1 ? bitcast<V>(VU{} - bitcast<VU>(a)) : q;
        } else {
          return a / b;
        }
      });
    case BinaryOp::Mod:
    case BinaryOp::FloorMod: {
      const bool floor = op == BinaryOp::FloorMod;
      return run([floor](V a, V b) {
        if constexpr (kSigned) {
          V r = a % ((b == -1) ? splat<V>(1) : b);
          if (!floor) return r;
          // r + b is formed in every lane, selected or not: wrap it (unsigned) so that the
          // unselected lanes cannot overflow.
          V rb = bitcast<V>(bitcast<VU>(r) + bitcast<VU>(b));
          return (r != 0) & ((r < 0) != (b < 0)) ? rb : r;
        } else {
          (void)floor;
          return a % b;
        }
      });
    }
    case BinaryOp::Max:
      return run([](V a, V b) { return a > b ? a : b; });
    case BinaryOp::Min:
      return run([](V a, V b) { return a < b ? a : b; });
    case BinaryOp::Pow:  // exponent >= 0 checked
      return run([](V a, V b) {
        V r;
        for (int i = 0; i < kLanes<V>; ++i)
          r[i] = static_cast<T>(pow_wrapped(static_cast<U>(a[i]), static_cast<U>(b[i])));
        return r;
      });
    case BinaryOp::BitAnd:
      return run([](V a, V b) { return a & b; });
    case BinaryOp::BitOr:
      return run([](V a, V b) { return a | b; });
    case BinaryOp::BitXor:
      return run([](V a, V b) { return a ^ b; });
    case BinaryOp::Shl:  // amount >= 0 checked; >= width gives 0
      return run([](V a, V b) {
        V big = b >= kBits;
        V sh = big ? splat<V>(0) : b;
        return big ? splat<V>(0) : bitcast<V>(bitcast<VU>(a) << bitcast<VU>(sh));
      });
    case BinaryOp::Shr:  // arithmetic for signed; >= width gives the sign fill
      return run([](V a, V b) {
        V big = b >= kBits;
        V sh = big ? splat<V>(kBits - 1) : b;
        if constexpr (kSigned) return a >> sh;
        return big ? splat<V>(0) : a >> sh;
      });
    case BinaryOp::Atan2:
      break;  // float-only
  }
  TESSEL_ASSERT(false, "integer binary op not claimed");
}

// The reference's Value errors, checked before any work: the first offending element in
// row-major order names the operands.
template <class T>
void check_int_operands(const Node& node, BinaryOp op, const StridedPlan<3>& plan) {
  const char* what = nullptr;
  bool zero = false;
  switch (op) {
    case BinaryOp::Div:
      what = "integer division by zero", zero = true;
      break;
    case BinaryOp::Mod:
    case BinaryOp::FloorMod:
      what = "integer modulo by zero", zero = true;
      break;
    case BinaryOp::Pow:
      what = "integer power with a negative exponent";
      break;
    case BinaryOp::Shl:
    case BinaryOp::Shr:
      what = "negative shift amount";
      break;
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Max:
    case BinaryOp::Min:
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor:
    case BinaryOp::Atan2:
      return;
  }
  if (!zero && !std::is_signed_v<T>) return;
  bool bad = false;
  int64_t bad_a = 0, bad_b = 0;
  strided_range(plan, 0, plan.numel, [&](const Ptrs3& p, const Steps3& s, int64_t n) {
    if (bad) return;
    auto a = reinterpret_cast<const T*>(p[1]);
    auto b = reinterpret_cast<const T*>(p[2]);
    for (int64_t i = 0; i < n; ++i) {
      T v = b[i * s[2]];
      if (zero ? v == 0 : v < 0) {
        bad = true, bad_a = static_cast<int64_t>(a[i * s[1]]), bad_b = static_cast<int64_t>(v);
        return;
      }
    }
  });
  if (bad)
    throw_error(ErrorKind::Value, node.where(), ": ", what, " (a = ", bad_a, ", b = ", bad_b, ")");
}

template <class V>
void binary_typed(const StridedPlan<3>& plan, BinaryOp op) {
  using T = Lane<V>;
  auto run = [&](auto vop) {
    strided_for(plan, [&](const Ptrs3& p, const Steps3& s, int64_t n) {
      binary_run<V>(reinterpret_cast<T*>(p[0]), reinterpret_cast<const T*>(p[1]), s[1],
                    reinterpret_cast<const T*>(p[2]), s[2], n, vop);
    });
  };
  if constexpr (std::is_floating_point_v<T>)
    dispatch_float<V>(op, run);
  else
    dispatch_int<T>(op, run);
}

// f16 / bf16 / fp8: both operands staged to f32 a block at a time, rounded once on the store.
void binary_staged(const StridedPlan<3>& plan, BinaryOp op, DType t) {
  const int size = dtype_size(t);
  dispatch_float<Vf>(op, [&](auto vop) {
    strided_for(plan, [&](const Ptrs3& p, const Steps3& s, int64_t n) {
      float ab[kStageBlock], bb[kStageBlock], yb[kStageBlock];
      for (int64_t i = 0; i < n; i += kStageBlock) {
        int64_t m = std::min(kStageBlock, n - i);
        to_f32(p[1] + i * s[1] * size, t, s[1], ab, s[1] == 0 ? 1 : m);
        to_f32(p[2] + i * s[2] * size, t, s[2], bb, s[2] == 0 ? 1 : m);
        binary_run<Vf>(yb, ab, s[1] == 0 ? 0 : 1, bb, s[2] == 0 ? 0 : 1, m, vop);
        from_f32(yb, p[0] + i * size, t, 1, m);
      }
    });
  });
}

template <class T>
void binary_int(const Node& node, const StridedPlan<3>& plan, BinaryOp op) {
  check_int_operands<T>(node, op, plan);
  binary_typed<Vec<T>>(plan, op);
}

// Bit ops on 0 / 1 (any nonzero byte reads as true).
void binary_bool(const StridedPlan<3>& plan, BinaryOp op) {
  strided_for(plan, [&](const Ptrs3& p, const Steps3& s, int64_t n) {
    auto yo = p[0];
    for (int64_t i = 0; i < n; ++i) {
      bool x = p[1][i * s[1]] != 0, z = p[2][i * s[2]] != 0;
      yo[i] = op == BinaryOp::BitAnd ? (x & z) : op == BinaryOp::BitOr ? (x | z) : (x ^ z);
    }
  });
}

void kernel_binary(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  HostTensor a = broadcast_to(in[0], y.shape), b = broadcast_to(in[1], y.shape);
  auto op = node.attrs.e<BinaryOp>("op");
  auto plan = plan_strided<3>(y.shape, {&y, &a, &b});
  const bool claimed = visit_compute_type(y.dtype, [&]<class T>() {
    if constexpr (kIsStagedF32<T>)
      binary_staged(plan, op, y.dtype);
    else if constexpr (std::is_same_v<T, bool>)
      binary_bool(plan, op);
    else if constexpr (std::is_floating_point_v<T>)
      binary_typed<Vec<T>>(plan, op);
    else
      binary_int<T>(node, plan, op);
  });
  TESSEL_ASSERT(claimed, "Binary on ", dtype_name(y.dtype), " not claimed");
}

// ---- Clamp ----------------------------------------------------------------------------------

// min(max(x, lo), hi) as torch: NaN passes, lo > hi gives hi.
template <class V>
V clamp_vec(V v, Lane<V> lo, Lane<V> hi) {
  V r = v < lo ? splat<V>(lo) : v;
  r = hi < r ? splat<V>(hi) : r;
  return v != v ? v : r;
}

template <class V>
void clamp_typed(const StridedPlan<2>& plan, Lane<V> lo, Lane<V> hi) {
  using T = Lane<V>;
  strided_for(plan,
              [&](const std::array<uint8_t*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                auto y = reinterpret_cast<T*>(p[0]);
                auto x = reinterpret_cast<const T*>(p[1]);
                if (s[1] != 1) {
                  for (int64_t i = 0; i < n; ++i) y[i] = x[i * s[1]];
                  x = y;
                }
                constexpr int L = kLanes<V>;
                int64_t i = 0;
                for (; i + L <= n; i += L) store(y + i, clamp_vec<V>(load<V>(x + i), lo, hi));
                if (i < n) {
                  int r = static_cast<int>(n - i);
                  store_partial(y + i, clamp_vec<V>(load_partial<V>(x + i, r), lo, hi), r);
                }
              });
}

// Integer bounds: ceil(lo) / floor(hi) saturated into the dtype's range (as the reference).
template <class T>
void clamp_int(const StridedPlan<2>& plan, double lo, double hi) {
  auto sat = [](double v) {
    constexpr auto tmin = std::numeric_limits<T>::min();
    constexpr auto tmax = std::numeric_limits<T>::max();
    if (v <= static_cast<double>(tmin)) return tmin;
    if (v >= static_cast<double>(tmax)) return tmax;
    return static_cast<T>(v);
  };
  clamp_typed<Vec<T>>(plan, sat(std::ceil(lo)), sat(std::floor(hi)));
}

void kernel_clamp(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  const double lo = node.attrs.f("min"), hi = node.attrs.f("max");
  auto plan = plan_strided<2>(y.shape, {&y, &in[0]});
  const DType t = y.dtype;
  const bool claimed = visit_compute_type(t, [&]<class T>() {
    if constexpr (kIsStagedF32<T>) {
      const float flo = static_cast<float>(lo), fhi = static_cast<float>(hi);
      strided_staged_unary(plan, t, [&](float* buf, int64_t m) {
        for (int64_t j = 0; j < m; ++j) {
          float v = buf[j];
          float r = v < flo ? flo : v;
          buf[j] = v != v ? v : (fhi < r ? fhi : r);
        }
      });
    } else if constexpr (std::is_floating_point_v<T>) {
      clamp_typed<Vec<T>>(plan, static_cast<T>(lo), static_cast<T>(hi));
    } else if constexpr (std::is_same_v<T, bool>) {
      TESSEL_ASSERT(false, "Clamp on bool not claimed");  // the shape rule rejects it
    } else {
      clamp_int<T>(plan, lo, hi);
    }
  });
  TESSEL_ASSERT(claimed, "Clamp on ", dtype_name(t), " not claimed");
}

}  // namespace

void register_elementwise_binary(KernelRegistry& r) {
  for (int v = 0; v < op_info(OpKind::Binary).num_variants(); ++v) {
    DTypeSet s = binary_dtypes(static_cast<BinaryOp>(v));
    if (!s.empty()) r.native(OpKind::Binary, kernel_binary, s, {v});
  }
  r.native(OpKind::Clamp, kernel_clamp, dtypes::kFloat | dtypes::kFp8 | dtypes::kInt);
}

TESSEL_ISA_END
