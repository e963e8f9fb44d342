// General matrix multiply, the core of MatMul, DotGeneral, GroupedMatMul, Conv (im2col) and
// the fused matmul kinds: C[i, j] = beta·C[i, j] + sum_k A[i, k]·B[k, j] for i < m, j < n.
// A and B are read through element strides (any layout: row-major, transposed, strided views);
// C is row-major with leading dimension ldc. beta is 0 (C is not read: may hold garbage) or 1.
// Threaded over the pool when big enough; call from outside parallel_for for speed.
#pragma once

#include <cstdint>
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN

void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs,
              const float* b, int64_t b_rs, int64_t b_cs, float beta, float* c, int64_t ldc);
void gemm_f64(int64_t m, int64_t n, int64_t k, const double* a, int64_t a_rs, int64_t a_cs,
              const double* b, int64_t b_rs, int64_t b_cs, double beta, double* c, int64_t ldc);

TESSEL_ISA_END
