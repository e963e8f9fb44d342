// The AVX2 GEMM's 6 × 16 f32 tile in inline assembly: C[6 × 16] (+)= A[6 × kc] · B[kc × 16].
#pragma once

#include <cstdint>

#include "backends/cpu/simd.h"

TESSEL_ISA_BEGIN
#if defined(TESSEL_CPU_ISA_AVX2)

// The accumulators stay in ymm0–11 through the k loop, B's two vectors a step in ymm12–13, A's
// broadcasts alternate between ymm14–15: 12 FMAs, 2 loads and 6 broadcasts a step, nothing
// else but the pointer updates (4 steps a loop). GCC's loop from the same intrinsics rotates
// the accumulators through spare registers (a move and a changed destination every few FMAs):
// in a harness with the panels in L1 it ran at 0.66–0.90 of the FMA loop by build and spell,
// this one at 0.98–0.99 (A in L2 and B in L3 as in the library: 0.98).
//
// A's rows are `a_rows` elements apart and its k steps `a_step` apart (a packed panel: 1 and 6;
// row-major A in place: lda and 1); B's rows (k) are `ldb` apart; C's rows `ldc`.
inline void tile_6x16(int64_t kc, const float* a, int64_t a_rows, int64_t a_step, const float* b,
                      int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  const float* a3 = a + 3 * a_rows;
  float* c3 = c + 3 * ldc;
  int64_t runs = kc / 4, rest = kc % 4;
  const int64_t lda_bytes = a_rows * 4, astep_bytes = a_step * 4, ldb_bytes = ldb * 4,
                ldc_bytes = ldc * 4, add = accumulate ? 1 : 0;
  // clang-format off
#define TESSEL_TILE_STEP \
  "vmovups (%[b]), %%ymm12\n\t" \
  "vmovups 32(%[b]), %%ymm13\n\t" \
  "add %[ldb], %[b]\n\t" \
  "vbroadcastss (%[a]), %%ymm14\n\t" \
  "vfmadd231ps %%ymm14, %%ymm12, %%ymm0\n\t" \
  "vfmadd231ps %%ymm14, %%ymm13, %%ymm1\n\t" \
  "vbroadcastss (%[a],%[lda],1), %%ymm15\n\t" \
  "vfmadd231ps %%ymm15, %%ymm12, %%ymm2\n\t" \
  "vfmadd231ps %%ymm15, %%ymm13, %%ymm3\n\t" \
  "vbroadcastss (%[a],%[lda],2), %%ymm14\n\t" \
  "vfmadd231ps %%ymm14, %%ymm12, %%ymm4\n\t" \
  "vfmadd231ps %%ymm14, %%ymm13, %%ymm5\n\t" \
  "vbroadcastss (%[a3]), %%ymm15\n\t" \
  "vfmadd231ps %%ymm15, %%ymm12, %%ymm6\n\t" \
  "vfmadd231ps %%ymm15, %%ymm13, %%ymm7\n\t" \
  "vbroadcastss (%[a3],%[lda],1), %%ymm14\n\t" \
  "vfmadd231ps %%ymm14, %%ymm12, %%ymm8\n\t" \
  "vfmadd231ps %%ymm14, %%ymm13, %%ymm9\n\t" \
  "vbroadcastss (%[a3],%[lda],2), %%ymm15\n\t" \
  "vfmadd231ps %%ymm15, %%ymm12, %%ymm10\n\t" \
  "vfmadd231ps %%ymm15, %%ymm13, %%ymm11\n\t" \
  "add %[astep], %[a]\n\t" \
  "add %[astep], %[a3]\n\t"
// C's row r (an address) += the accumulators x, y; then stored.
#define TESSEL_TILE_ADD(r, x, y) \
  "vaddps " r ", %%ymm" x ", %%ymm" x "\n\t" \
  "vaddps 32" r ", %%ymm" y ", %%ymm" y "\n\t"
#define TESSEL_TILE_PUT(r, x, y) \
  "vmovups %%ymm" x ", " r "\n\t" \
  "vmovups %%ymm" y ", 32" r "\n\t"
// OP on each of C's six rows (its address) with its two accumulators.
#define TESSEL_TILE_ROWS(OP) \
  OP("(%[c])", "0", "1") OP("(%[c],%[ldc],1)", "2", "3") OP("(%[c],%[ldc],2)", "4", "5") \
  OP("(%[c3])", "6", "7") OP("(%[c3],%[ldc],1)", "8", "9") OP("(%[c3],%[ldc],2)", "10", "11")
  asm volatile(
      "vxorps %%ymm0, %%ymm0, %%ymm0\n\t"
      "vxorps %%ymm1, %%ymm1, %%ymm1\n\t"
      "vxorps %%ymm2, %%ymm2, %%ymm2\n\t"
      "vxorps %%ymm3, %%ymm3, %%ymm3\n\t"
      "vxorps %%ymm4, %%ymm4, %%ymm4\n\t"
      "vxorps %%ymm5, %%ymm5, %%ymm5\n\t"
      "vxorps %%ymm6, %%ymm6, %%ymm6\n\t"
      "vxorps %%ymm7, %%ymm7, %%ymm7\n\t"
      "vxorps %%ymm8, %%ymm8, %%ymm8\n\t"
      "vxorps %%ymm9, %%ymm9, %%ymm9\n\t"
      "vxorps %%ymm10, %%ymm10, %%ymm10\n\t"
      "vxorps %%ymm11, %%ymm11, %%ymm11\n\t"
      "test %[runs], %[runs]\n\t"
      "jz 2f\n\t"
      ".p2align 5\n\t"
      "1:\n\t"
      TESSEL_TILE_STEP TESSEL_TILE_STEP TESSEL_TILE_STEP TESSEL_TILE_STEP
      "dec %[runs]\n\t"
      "jnz 1b\n\t"
      "2:\n\t"
      "test %[rest], %[rest]\n\t"
      "jz 4f\n\t"
      "3:\n\t"
      TESSEL_TILE_STEP
      "dec %[rest]\n\t"
      "jnz 3b\n\t"
      "4:\n\t"
      "test %[add], %[add]\n\t"
      "jz 5f\n\t"
      TESSEL_TILE_ROWS(TESSEL_TILE_ADD)
      "5:\n\t"
      TESSEL_TILE_ROWS(TESSEL_TILE_PUT)
      : [a] "+r"(a), [a3] "+r"(a3), [b] "+r"(b), [runs] "+r"(runs), [rest] "+r"(rest)
      : [lda] "r"(lda_bytes), [astep] "r"(astep_bytes), [ldb] "r"(ldb_bytes), [c] "r"(c),
        [c3] "r"(c3), [ldc] "r"(ldc_bytes), [add] "r"(add)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc");
#undef TESSEL_TILE_STEP
#undef TESSEL_TILE_ADD
#undef TESSEL_TILE_PUT
#undef TESSEL_TILE_ROWS
  // clang-format on
}

#endif
TESSEL_ISA_END
