// Moving elements between a tensor's dtype and the f32 / f64 a kernel computes in: the staging
// every cpu kernel for f16, bf16 and fp8 goes through (a block at a time, into a scratch
// buffer), and the strided gathers of non-contiguous operands. Rounding matches the reference:
// round-to-nearest-even into floats, saturating fp8 like Cast, C-style truncation with two's
// complement wrap into integers, bool = (x != 0).
#pragma once

#include "tessel/dtype.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN

// dst[i] = src[i * stride] (stride in elements) for i < n; any full dtype but c64.
void to_f32(const void* src, DType dt, int64_t stride, float* dst, int64_t n);
void to_f64(const void* src, DType dt, int64_t stride, double* dst, int64_t n);
// dst[i * stride] = src[i] for i < n.
void from_f32(const float* src, void* dst, DType dt, int64_t stride, int64_t n);
void from_f64(const double* src, void* dst, DType dt, int64_t stride, int64_t n);

// Elements per staging block: small enough for L1 with a few operands.
inline constexpr int64_t kStageBlock = 1024;

TESSEL_ISA_END
