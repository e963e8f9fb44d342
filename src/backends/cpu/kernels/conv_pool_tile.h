// The register tile of the cpu backend's direct convolutions (AVX-512 and AVX2): the implicit
// GEMM (conv_pool_conv_implicit.cpp) and Winograd's products (conv_pool_conv_winograd.cpp). A
// panel of kMR rows of A, packed k-major, times kNR columns of B whose row p starts at b + off[p]:
// a table, so that B can be rows of a padded input band at each kernel tap's offset, or any
// strided matrix.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <utility>

#include "backends/cpu/kernels/conv_pool.h"

TESSEL_ISA_BEGIN
namespace conv_pool {

#if defined(TESSEL_CPU_ISA_AVX512) || defined(TESSEL_CPU_ISA_AVX2)
// The C tile by vector width. AVX-512: 8 × 48 (24 of 32 registers). AVX2: 6 × 16 (12 of 16
// registers, as the gemm's tile).
// kKC: the most k's a tile runs before the next panel's, so that B's rows for them stay in L1
// across the panels.
#if defined(TESSEL_CPU_ISA_AVX512)
inline constexpr int kMR = 8, kNV = 3;
inline constexpr int64_t kKC = std::numeric_limits<int64_t>::max();  // not measured in chunks yet
#else
inline constexpr int kMR = 6, kNV = 2;
inline constexpr int64_t kKC = 256;
#endif
inline constexpr int kL = kLanes<Vf>, kNR = kNV * kL;

// C[0 .. mr, 0 .. nr] = (from_c ? C : bias) + A panel (kMR × k, packed by p) · B, B's row p at
// b + off[p] (from_c: C holds whole vectors, kMR rows of NV).
template <int NV>
void implicit_tile(int64_t k, const float* __restrict a, const float* b,
                   const int32_t* __restrict off, const float* bias, float* c, int64_t ldc, int mr,
                   int nr, bool from_c) {
  Vf acc[kMR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v)
      acc[i][v] = from_c ? load<Vf>(c + i * ldc + v * kL) : broadcast<Vf>(bias[i]);
      // With AVX2, unrolled by 4 as the gemm's micro-kernel is (its 12 FMAs a step carried the
      // loop's own instructions): one thread, 5 alternating rounds, PaddleOCR det's 96 → 24 3 × 3
      // at 160 × 160 15.08 → 14.51 ms, ResNet's 3 × 3 layers 1 and 2 2.98 → 2.94 and 3.15 → 3.05.
#if defined(TESSEL_CPU_ISA_AVX2)
#pragma GCC unroll 4
#endif
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b + off[p];
    Vf bv[NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) bv[v] = load<Vf>(bp + v * kL);
#pragma GCC unroll 8
    for (int i = 0; i < kMR; ++i) {
      const Vf ai = broadcast<Vf>(a[i]);
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[i][v] += ai * bv[v];
    }
    a += kMR;
  }
  for (int i = 0; i < mr; ++i)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      const int cols = nr - v * kL;
      if (cols >= kL)
        store(c + i * ldc + v * kL, acc[i][v]);
      else if (cols > 0)
        store_partial(c + i * ldc + v * kL, acc[i][v], cols);
    }
}

using TileFn = void (*)(int64_t, const float*, const float*, const int32_t*, const float*, float*,
                        int64_t, int, int, bool);

// The next tile's width with `left` columns to go, and its kernel (as many vectors wide as
// its columns need): kNR columns, but with three vectors a tile, for a last one of at most a
// vector after a full one, two vectors and the rest (56 columns as 32 + 24, not 48 + 8, whose
// one-vector tile waits on its broadcasts of A: ResNet's 64-channel layer at 56 × 56 0.74 →
// 0.69 ms, and 128 channels 2.81 → 2.69, two threads, 5 rounds, AVX-512).
template <size_t... I>
constexpr std::array<TileFn, kNV> tile_kernels(std::index_sequence<I...>) {
  return {implicit_tile<static_cast<int>(I) + 1>...};
}

inline TileFn next_tile(int64_t left, int64_t& nr) {
  static constexpr std::array<TileFn, kNV> kernels = tile_kernels(std::make_index_sequence<kNV>{});
  nr = kNV > 2 && left > kNR && left <= kNR + kL ? (kNV - 1) * kL : std::min<int64_t>(kNR, left);
  return kernels[static_cast<size_t>((nr + kL - 1) / kL - 1)];
}

#endif

}  // namespace conv_pool
TESSEL_ISA_END
