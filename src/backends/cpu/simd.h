// SIMD for the cpu backend's kernels, chosen at run time.
//
// Every file in src/backends/cpu/kernels/ is compiled once per instruction set (CMake defines
// TESSEL_CPU_ISA_AVX512, _AVX2 or neither for the portable build: SSE2 on x86-64, NEON on
// aarch64). Its code sits between TESSEL_ISA_BEGIN and TESSEL_ISA_END, which open the namespace
// tessel::cpu::<isa> and, like Highway's HWY_BEFORE_NAMESPACE, switch the compiler's target for
// the functions inside only — library templates instantiated from headers included before keep
// the baseline target, so the linker can never pick an AVX-512 copy for the portable path. The
// backend picks one ISA's kernel table at start-up from the CPU's features (isa.h).
//
// Vectors are GCC/Clang vector extensions of the ISA's native width: arithmetic, comparisons
// (lane masks of all-ones / zero) and `mask ? a : b` work lane-wise, and a*b+c contracts to FMA
// (kernels are built with -ffp-contract=fast). Include this after every other header.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

// clang-format off
#if defined(TESSEL_CPU_ISA_AVX512)
#define TESSEL_ISA_NS avx512
#define TESSEL_ISA_VECTOR_BYTES 64
#if defined(__clang__)
#define TESSEL_ISA_PUSH _Pragma("clang attribute push(__attribute__((target(\"avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c,bmi,bmi2,lzcnt,popcnt\"))), apply_to = function)")
#else
#define TESSEL_ISA_PUSH _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c,bmi,bmi2,lzcnt,popcnt,prefer-vector-width=512\")")
#endif
#elif defined(TESSEL_CPU_ISA_AVX2)
#define TESSEL_ISA_NS avx2
#define TESSEL_ISA_VECTOR_BYTES 32
#if defined(__clang__)
#define TESSEL_ISA_PUSH _Pragma("clang attribute push(__attribute__((target(\"avx2,fma,f16c,bmi,bmi2,lzcnt,popcnt\"))), apply_to = function)")
#else
#define TESSEL_ISA_PUSH _Pragma("GCC push_options") _Pragma("GCC target(\"avx2,fma,f16c,bmi,bmi2,lzcnt,popcnt\")")
#endif
#else
#define TESSEL_ISA_NS portable
#define TESSEL_ISA_VECTOR_BYTES 16
#endif
// clang-format on

#if !defined(TESSEL_ISA_PUSH)
#define TESSEL_ISA_BEGIN namespace tessel::cpu::TESSEL_ISA_NS {
#define TESSEL_ISA_END }
#elif defined(__clang__)
#define TESSEL_ISA_BEGIN TESSEL_ISA_PUSH namespace tessel::cpu::TESSEL_ISA_NS {
#define TESSEL_ISA_END \
  }                    \
  _Pragma("clang attribute pop")
#else
#define TESSEL_ISA_BEGIN TESSEL_ISA_PUSH namespace tessel::cpu::TESSEL_ISA_NS {
#define TESSEL_ISA_END \
  }                    \
  _Pragma("GCC pop_options")
#endif

TESSEL_ISA_BEGIN

inline constexpr int kVectorBytes = TESSEL_ISA_VECTOR_BYTES;

typedef float Vf __attribute__((vector_size(kVectorBytes)));
typedef double Vd __attribute__((vector_size(kVectorBytes)));
typedef int32_t Vi32 __attribute__((vector_size(kVectorBytes)));
typedef int64_t Vi64 __attribute__((vector_size(kVectorBytes)));
typedef uint32_t Vu32 __attribute__((vector_size(kVectorBytes)));
typedef int16_t Vi16 __attribute__((vector_size(kVectorBytes)));
typedef int8_t Vi8 __attribute__((vector_size(kVectorBytes)));

template <class V>
using Lane = std::remove_cvref_t<decltype(V{}[0])>;
template <class V>
inline constexpr int kLanes = kVectorBytes / static_cast<int>(sizeof(Lane<V>));
inline constexpr int kLanesF = kLanes<Vf>;  // floats per vector
inline constexpr int kLanesD = kLanes<Vd>;

template <class V>
inline V splat(Lane<V> x) {
  V v;  // not V{} + x: that turns -0.0 into +0.0
  for (int i = 0; i < kLanes<V>; ++i) v[i] = x;
  return v;
}
template <class V>
inline V load(const Lane<V>* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
inline void store(Lane<V>* p, V v) {
  std::memcpy(p, &v, sizeof v);
}
// The first n (< lanes) elements; the rest of the vector is `fill`.
template <class V>
inline V load_partial(const Lane<V>* p, int n, Lane<V> fill = 0) {
  V v = splat<V>(fill);
  for (int i = 0; i < n; ++i) v[i] = p[i];
  return v;
}
template <class V>
inline void store_partial(Lane<V>* p, V v, int n) {
  for (int i = 0; i < n; ++i) p[i] = v[i];
}
// Lane i = base + i.
template <class V>
inline V iota(Lane<V> base = 0) {
  V v;
  for (int i = 0; i < kLanes<V>; ++i) v[i] = base + static_cast<Lane<V>>(i);
  return v;
}

template <class V>
inline Lane<V> reduce_add(V v) {
  Lane<V> s = v[0];
  for (int i = 1; i < kLanes<V>; ++i) s += v[i];
  return s;
}
template <class V>
inline Lane<V> reduce_max(V v) {
  Lane<V> s = v[0];
  for (int i = 1; i < kLanes<V>; ++i) s = v[i] > s ? v[i] : s;
  return s;
}
template <class V>
inline Lane<V> reduce_min(V v) {
  Lane<V> s = v[0];
  for (int i = 1; i < kLanes<V>; ++i) s = v[i] < s ? v[i] : s;
  return s;
}
// NaN-propagating max / min, like PyTorch's maximum / minimum.
template <class V>
inline V max_nan(V a, V b) {
  return a != a ? a : (b != b ? b : (a > b ? a : b));
}
template <class V>
inline V min_nan(V a, V b) {
  return a != a ? a : (b != b ? b : (a < b ? a : b));
}

// Bit reinterpretation and lane-wise value conversion.
template <class To, class From>
inline To bitcast(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To t;
  std::memcpy(&t, &v, sizeof t);
  return t;
}
template <class To, class From>
inline To convert(From v) {
  return __builtin_convertvector(v, To);
}

TESSEL_ISA_END
