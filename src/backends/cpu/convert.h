// Moving elements between a tensor's dtype and the f32 / f64 a kernel computes in: the staging
// every cpu kernel for f16, bf16 and fp8 goes through (a block at a time, into a scratch
// buffer), and the strided gathers of non-contiguous operands. Rounding matches the reference:
// round-to-nearest-even into floats, saturating fp8 like Cast, C-style truncation with two's
// complement wrap into integers, bool = (x != 0).
#pragma once

#include <cstdint>
#include <cstring>

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

// f32 -> bf16, round to nearest even; NaN stays a quiet NaN.
inline uint16_t bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

#if defined(TESSEL_CPU_ISA_AVX512)
// bf16_bits on 16 lanes. (maskz forms: GCC 12 warns on the undefined-source ones.)
inline __m256i bf16_bits(__m512 f) {
  const __m512i u = _mm512_castps_si512(f);
  const __m512i hi = _mm512_maskz_srli_epi32(0xffff, u, 16);
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  __m512i r = _mm512_maskz_srli_epi32(
      0xffff,
      _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff),
                                           _mm512_and_si512(hi, _mm512_set1_epi32(1)))),
      16);
  r = _mm512_mask_or_epi32(r, nan, hi, _mm512_set1_epi32(0x40));
  return _mm512_maskz_cvtepi32_epi16(0xffff, r);
}
#endif

// Elements per staging block: small enough for L1 with a few operands.
inline constexpr int64_t kStageBlock = 1024;

TESSEL_ISA_END
