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

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

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

// Vector-aligned storage for a kernel's scratch rows: std::vector's 16-byte alignment makes
// every 64-byte access straddle two cache lines.
template <class T>
struct VectorAlignedAllocator {
  using value_type = T;
  VectorAlignedAllocator() = default;
  template <class U>
  VectorAlignedAllocator(const VectorAlignedAllocator<U>&) {}
  T* allocate(size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kVectorBytes)));
  }
  void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t(kVectorBytes)); }
  friend bool operator==(VectorAlignedAllocator, VectorAlignedAllocator) { return true; }
};
template <class T>
using AlignedVector = std::vector<T, VectorAlignedAllocator<T>>;

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

template <class V>
inline V splat(Lane<V> x) {
  V v;  // not V{} + x: that turns -0.0 into +0.0
  for (int i = 0; i < kLanes<V>; ++i) v[i] = x;
  return v;
}
// x in every lane as a shuffle of lane 0: one broadcast (from memory, folded into the FMA), for
// micro-kernels' inner loops.
#if defined(__clang__)
template <class V, size_t... I>
inline V lane0_everywhere(V v, std::index_sequence<I...>) {
  return __builtin_shufflevector(v, v, (static_cast<void>(I), 0)...);
}
template <class V>
inline V broadcast(Lane<V> x) {
  return lane0_everywhere(V{x}, std::make_index_sequence<kLanes<V>>{});
}
#else
template <class V>
inline V broadcast(Lane<V> x) {
  using Mask = std::conditional_t<sizeof(Lane<V>) == 4, Vi32, Vi64>;
  V v{x};
  return __builtin_shuffle(v, Mask{});
}
#endif
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
// The first n (< lanes) elements; the rest of the vector is `fill`. On AVX-512, 4- and 8-byte
// lanes go through masked loads / stores (masked-off lanes never fault). The element loop, used
// elsewhere, puts the vector in memory, and kernels whose loops contained one were compiled to
// reload their constants from the stack on every iteration.
template <class V>
inline V load_partial(const Lane<V>* p, int n, Lane<V> fill = 0) {
#if defined(TESSEL_CPU_ISA_AVX512)
  if constexpr (sizeof(Lane<V>) == 4) {
    const __mmask16 k = static_cast<__mmask16>((1u << n) - 1);
    return bitcast<V>(_mm512_mask_loadu_epi32(bitcast<__m512i>(splat<V>(fill)), k, p));
  } else if constexpr (sizeof(Lane<V>) == 8) {
    const __mmask8 k = static_cast<__mmask8>((1u << n) - 1);
    return bitcast<V>(_mm512_mask_loadu_epi64(bitcast<__m512i>(splat<V>(fill)), k, p));
  }
#endif
  V v = splat<V>(fill);
  for (int i = 0; i < n; ++i) v[i] = p[i];
  return v;
}
template <class V>
inline void store_partial(Lane<V>* p, V v, int n) {
#if defined(TESSEL_CPU_ISA_AVX512)
  if constexpr (sizeof(Lane<V>) == 4) {
    _mm512_mask_storeu_epi32(p, static_cast<__mmask16>((1u << n) - 1), bitcast<__m512i>(v));
    return;
  } else if constexpr (sizeof(Lane<V>) == 8) {
    _mm512_mask_storeu_epi64(p, static_cast<__mmask8>((1u << n) - 1), bitcast<__m512i>(v));
    return;
  }
#endif
  for (int i = 0; i < n; ++i) p[i] = v[i];
}
// Lane i = base + i.
template <class V>
inline V iota(Lane<V> base = 0) {
  V v;
  for (int i = 0; i < kLanes<V>; ++i) v[i] = base + static_cast<Lane<V>>(i);
  return v;
}

// Lane i gets lane i ^ Step: with Step = lanes / 2, ..., 1 a reduction is a tree in registers.
template <int Step, class V, size_t... I>
inline V xor_lanes(V v, std::index_sequence<I...>) {
  return __builtin_shufflevector(v, v, static_cast<int>(I ^ Step)...);
}
// Interleaved lanes of a and b: half 0 is a[0] b[0] a[1] b[1] ... from the low halves, half 1
// the same from the high halves.
template <int Half, class V, size_t... I>
inline V zip_lanes(V a, V b, std::index_sequence<I...>) {
  constexpr int L = kLanes<V>;
  return __builtin_shufflevector(a, b, static_cast<int>((I % 2 ? L : 0) + Half * L / 2 + I / 2)...);
}
template <int Half, class V>
inline V zip(V a, V b) {
  return zip_lanes<Half>(a, b, std::make_index_sequence<kLanes<V>>{});
}
// The same within each 16-byte block, for 4-byte lanes (one x86 shufps / unpcklps each, where
// even_lanes and zip cross blocks at two or three instructions): block k of even_in_blocks is
// a's elements 4k, 4k + 2 then b's, so the even elements of a, b come out in a fixed permuted
// order, which zip_blocks of two vectors in that order undoes: zip_blocks<0> is a[0] b[0] a[1]
// b[1] of each block, <1> a[2] b[2] a[3] b[3].
template <int Odd, class V, size_t... I>
inline V pick_in_blocks(V a, V b, std::index_sequence<I...>) {
  return __builtin_shufflevector(
      a, b,
      static_cast<int>(I / 4 * 4 + (I % 4 < 2 ? 2 * (I % 4) : kLanes<V> + 2 * (I % 4 - 2)) +
                       Odd)...);
}
template <class V>
inline V even_in_blocks(V a, V b) {
  static_assert(sizeof(Lane<V>) == 4);
  return pick_in_blocks<0>(a, b, std::make_index_sequence<kLanes<V>>{});
}
template <class V>
inline V odd_in_blocks(V a, V b) {
  static_assert(sizeof(Lane<V>) == 4);
  return pick_in_blocks<1>(a, b, std::make_index_sequence<kLanes<V>>{});
}
template <int Half, class V, size_t... I>
inline V zip_in_blocks(V a, V b, std::index_sequence<I...>) {
  return __builtin_shufflevector(
      a, b, static_cast<int>(I / 4 * 4 + Half * 2 + I % 4 / 2 + (I % 2 ? kLanes<V> : 0))...);
}
template <int Half, class V>
inline V zip_blocks(V a, V b) {
  static_assert(sizeof(Lane<V>) == 4);
  return zip_in_blocks<Half>(a, b, std::make_index_sequence<kLanes<V>>{});
}
// Lanes 0, 2, 4, ... of a then b: the even elements of the 2·lanes that a, b hold in order; and
// lanes 1, 3, 5, ...: the odd ones. 4-byte lanes of 256 or 512 bits take them within blocks (one
// shufps), then put the blocks' 8-byte halves in order (one vpermpd / vpermq): GCC made the
// one generic shuffle three instructions on AVX2 (two vpermd and a blend).
template <int Odd, class V, size_t... I>
inline V every_other_lane(V a, V b, std::index_sequence<I...>) {
  return __builtin_shufflevector(a, b, static_cast<int>(2 * I + Odd)...);
}
template <class W, size_t... I>
inline W halves_in_order(W v, std::index_sequence<I...>) {
  constexpr int n = kLanes<W>;
  return __builtin_shufflevector(v, v,
                                 static_cast<int>(I < n / 2 ? 2 * I : 2 * (I - n / 2) + 1)...);
}
template <int Odd, class V>
inline V pick_lanes(V a, V b) {
  if constexpr (sizeof(Lane<V>) == 4 && kLanes<V> >= 8) {
    using W = Vi64;
    const V t = pick_in_blocks<Odd>(a, b, std::make_index_sequence<kLanes<V>>{});
    return bitcast<V>(halves_in_order(bitcast<W>(t), std::make_index_sequence<kLanes<W>>{}));
  } else {
    return every_other_lane<Odd>(a, b, std::make_index_sequence<kLanes<V>>{});
  }
}
template <class V>
inline V even_lanes(V a, V b) {
  return pick_lanes<0>(a, b);
}
template <class V>
inline V odd_lanes(V a, V b) {
  return pick_lanes<1>(a, b);
}
// The sum in a tree of log2(lanes) shuffles and adds, not a serial chain through memory (which
// was 5% of a 512-wide softmax row).
template <class V, int Step = kLanes<V> / 2>
inline Lane<V> reduce_add(V v) {
  if constexpr (Step == 0)
    return v[0];
  else
    return reduce_add<V, Step / 2>(v + xor_lanes<Step>(v, std::make_index_sequence<kLanes<V>>{}));
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
// The largest lane, NaN if any lane is NaN: a tree, like reduce_add.
template <class V, int Step = kLanes<V> / 2>
inline Lane<V> reduce_max_nan(V v) {
  if constexpr (Step == 0)
    return v[0];
  else
    return reduce_max_nan<V, Step / 2>(
        max_nan(v, xor_lanes<Step>(v, std::make_index_sequence<kLanes<V>>{})));
}
// The largest lane, a tree of plain compares: a NaN lane may or may not reach the result. For
// callers whose NaN surfaces elsewhere (softmax's sums), where reduce_max_nan's NaN tests
// lengthen the chain.
template <class V, int Step = kLanes<V> / 2>
inline Lane<V> reduce_max_tree(V v) {
  if constexpr (Step == 0) {
    return v[0];
  } else {
    const V w = xor_lanes<Step>(v, std::make_index_sequence<kLanes<V>>{});
    return reduce_max_tree<V, Step / 2>(v > w ? v : w);
  }
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

// Whether any lane of a comparison mask is set: lets a kernel skip a path no lane takes.
inline bool any(Vi32 m) {
#if defined(TESSEL_CPU_ISA_AVX512)
  return _mm512_movepi32_mask(bitcast<__m512i>(m)) != 0;
#elif defined(TESSEL_CPU_ISA_AVX2)
  return _mm256_movemask_ps(bitcast<__m256>(m)) != 0;
#elif defined(__SSE2__)
  return _mm_movemask_ps(bitcast<__m128>(m)) != 0;
#else
  for (int i = 0; i < kLanes<Vi32>; ++i)
    if (m[i]) return true;
  return false;
#endif
}

// Whether any lane of v exceeds b (NaN lanes do not). On AVX-512 straight from the compare's
// mask register: any(v > b) materializes the mask as a vector and converts it back, two more
// vector operations where the test guards a rare path in a loop bound by them (tanh, GELU).
inline bool any_greater(Vf v, float b) {
#if defined(TESSEL_CPU_ISA_AVX512)
  return _mm512_cmp_ps_mask(bitcast<__m512>(v), _mm512_set1_ps(b), _CMP_GT_OQ) != 0;
#else
  return any(v > b);
#endif
}

// f(std::integral_constant<int, k>{}) for k = 0 … N - 1, written out: state indexed by a
// constant, not by a loop's counter, can stay in registers (GCC keeps an array in memory when
// any access to it has a variable index).
template <int N, class F>
inline void unrolled(F&& f) {
  [&]<int... K>(std::integer_sequence<int, K...>) { (f(std::integral_constant<int, K>{}), ...); }
  (std::make_integer_sequence<int, N>{});
}

// Non-temporal store of a whole vector to a kVectorBytes-aligned address: the line goes to
// memory without first being read into the cache (no read-for-ownership), which takes a third
// of the memory traffic off a kernel writing a tensor much larger than the last-level cache.
// Such stores are weakly ordered: a thread ends its streaming with stream_fence() before the
// results are handed on. Elsewhere (aarch64, the generic build) a plain store.
template <class V>
inline void store_stream(Lane<V>* p, V v) {
#if defined(TESSEL_CPU_ISA_AVX512)
  _mm512_stream_si512(reinterpret_cast<__m512i*>(p), bitcast<__m512i>(v));
#elif defined(TESSEL_CPU_ISA_AVX2)
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p), bitcast<__m256i>(v));
#elif defined(__SSE2__)
  _mm_stream_si128(reinterpret_cast<__m128i*>(p), bitcast<__m128i>(v));
#else
  store(p, v);
#endif
}
inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}
// How far ahead of its loads a pass reading memory once (softmax, layer norm ≫ cache) requests
// lines, and the request: into L1 (prefetcht0), 8 KB ahead. Against the rows 8–16 KB ahead by
// prefetcht2 they were taken before, two threads, 7 rounds, the same spells' copy: softmax
// 4096 × 4096 0.85 → 0.91 of it, 32768 × 512 0.78 → 0.81, layer norm 0.88 → 0.95 and
// 0.82 → 0.88; 4 KB ahead, prefetcht1, 12 and 16 KB all read less than this (a one-off probe of
// softmax's exp pass, not in the tree, agreed: 16 KB by prefetcht2 0.71–0.74, this 0.84–0.88).
inline constexpr int64_t kAheadBytes = 8192;
inline void request_line(const void* p) { __builtin_prefetch(p, 0, 3); }
// Outputs of at least this many bytes are written with store_stream: half this machine class's
// last-level cache, beyond which the next kernel would not find them in cache anyway.
inline constexpr int64_t kStreamBytes = int64_t{16} << 20;

// y[0, n) = f(i), f giving the vector of elements [i, i + lanes): streamed from y's first
// vector-aligned element on, the head before it and the partial tail stored plainly. f is called
// at any i < n and reads [i, i + lanes), so a buffer it reads needs a vector of slack past n.
// The caller ends its run of rows with stream_fence().
template <class V, class F>
inline void store_row_stream(Lane<V>* y, int64_t n, F f) {
  constexpr int L = kLanes<V>;
  const auto misalign = reinterpret_cast<uintptr_t>(y) % kVectorBytes;
  int64_t i = misalign == 0 ? 0 : (kVectorBytes - misalign) / sizeof(Lane<V>);
  if (misalign % sizeof(Lane<V>) != 0) i = n;  // not even lane-aligned: all plain
  i = std::min<int64_t>(i, n);
  for (int64_t h = 0; h < i; h += L) {
    V v = f(h);
    for (int l = 0; l < L && h + l < i; ++l) y[h + l] = v[l];
  }
  for (; i + L <= n; i += L) store_stream(y + i, f(i));
  if (i < n) {
    V v = f(i);
    for (int l = 0; i + l < n; ++l) y[i + l] = v[l];
  }
}

TESSEL_ISA_END
