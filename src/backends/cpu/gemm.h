// General matrix multiply, the core of MatMul, DotGeneral, GroupedMatMul, Einsum, Conv (im2col)
// and the fused matmul kinds: C[i, j] = beta·C[i, j] + sum_k A[i, k]·B[k, j] for i < m, j < n.
// A and B are read through element strides (any layout: row-major, transposed, strided views);
// C is row-major with leading dimension ldc. beta is 0 (C is not read: may hold garbage) or 1.
// Threaded over the pool when big enough; inside a parallel_for it runs on the calling thread.
//
// Why our own kernels and not OpenBLAS / MKL: no extra dependency; OpenBLAS's speed here hangs
// on OPENBLAS_CORETYPE (this environment pins Haswell kernels on an AVX-512 machine); its threads
// would fight our pool; and we need what a BLAS cannot give: packing that reads any strides and
// converts f16 / bf16 / fp8 to f32 on the way (no staged copies), and epilogues (bias,
// activation, gating) applied to each tile of C while it is still in cache.
#pragma once

#include <cstdint>
#include <limits>

#include "ir/op.h"
#include "tessel/dtype.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN

void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs,
              const float* b, int64_t b_rs, int64_t b_cs, float beta, float* c, int64_t ldc);
void gemm_f64(int64_t m, int64_t n, int64_t k, const double* a, int64_t a_rs, int64_t a_cs,
              const double* b, int64_t b_rs, int64_t b_cs, double beta, double* c, int64_t ldc);

// A B operand whose owner writes its packed panels (an implicit-GEMM convolution packs straight
// from its input: no im2col matrix is written and read back). pack(ctx, p0, kc, j0, nc, nr, dst)
// writes rows [p0, p0+kc) × columns [j0, j0+nc) of B in the compute type as kc×nr micro-panels:
// column j0 + j, row p0 + p at dst[(j / nr)·nr·kc + p·nr + j % nr], the last panel's columns
// past nc zero.
struct GemmPanels {
  void (*pack)(const void* ctx, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int nr,
               void* dst) = nullptr;
  const void* ctx = nullptr;
};

// A matrix operand of any float dtype but c64: element (i, j) is at element offset i·rs + j·cs
// from `data` (strides may be 0 or negative). Packing converts it to the compute type, except
// that bf16 A and B on a CPU with AVX512_BF16 are packed as bf16 pairs along k and multiplied by
// vdpbf16ps into f32 (twice the rate; that instruction reads subnormal bf16 factors as zero).
// A B operand may instead come as `panels` (data, dtype and strides are then not read).
struct GemmOperand {
  const void* data = nullptr;
  DType dtype = DType::F32;
  int64_t rs = 0, cs = 0;
  const GemmPanels* panels = nullptr;
};

// Applied to C after the full sum, in this order: C += row_bias (per row, contiguous [m]: a
// convolution's bias, added to each block of C while it is in cache instead of filling C before
// an accumulating product) and C += bias (per column, contiguous [n]); C = act(C) (alpha NaN: the
// kind's default); C *= mul (row-major, leading dimension ld_mul); tile(tile_ctx, c, ldc, i0, i1,
// j0, j1) on the block of C just finished (C's row 0 at c; a fused kind's own epilogue, run while
// the block is in cache). Where out_bf16 is set, the rest being empty but tile: a product that
// runs on the bf16 pair kernel stores each finished tile of the sum as bf16 at out_bf16 (row
// stride ld_out, C's origin) straight from its registers, and leaves C and tile alone; any other
// product runs tile as usual (which must then store the same).
template <class T>
struct GemmEpilogue {
  const T* row_bias = nullptr;
  const T* bias = nullptr;
  ActivationKind act = ActivationKind::Identity;
  T alpha = std::numeric_limits<T>::quiet_NaN();
  const T* mul = nullptr;
  int64_t ld_mul = 0;
  void (*tile)(const void* ctx, T* c, int64_t ldc, int64_t i0, int64_t i1, int64_t j0,
               int64_t j1) = nullptr;
  const void* tile_ctx = nullptr;
  uint16_t* out_bf16 = nullptr;
  int64_t ld_out = 0;
};

// C (row-major, ldc) = [C +] A·B, then the epilogue (may be null).
void gemm_ex_f32(int64_t m, int64_t n, int64_t k, const GemmOperand& a, const GemmOperand& b,
                 float* c, int64_t ldc, bool accumulate,
                 const GemmEpilogue<float>* epilogue = nullptr);
void gemm_ex_f64(int64_t m, int64_t n, int64_t k, const GemmOperand& a, const GemmOperand& b,
                 double* c, int64_t ldc, bool accumulate,
                 const GemmEpilogue<double>* epilogue = nullptr);

// The same typed by the compute type (float or double), for templated callers.
template <class T>
inline void gemm_ex(int64_t m, int64_t n, int64_t k, const GemmOperand& a, const GemmOperand& b,
                    T* c, int64_t ldc, bool accumulate, const GemmEpilogue<T>* epilogue = nullptr) {
  if constexpr (sizeof(T) == 4)
    gemm_ex_f32(m, n, k, a, b, c, ldc, accumulate, epilogue);
  else
    gemm_ex_f64(m, n, k, a, b, c, ldc, accumulate, epilogue);
}

// Applies `ep` to rows [i0, i1) × columns [j0, j1) of C (c: row 0; row_bias by row, bias by
// column, mul by row and column). Defined for float and double.
template <class T>
void apply_gemm_epilogue(const GemmEpilogue<T>& ep, T* c, int64_t ldc, int64_t i0, int64_t i1,
                         int64_t j0, int64_t j1);

TESSEL_ISA_END
