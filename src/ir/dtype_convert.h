// Bit-exact scalar conversions between Tessel's dtypes: the reference for every backend's casts.
//
// Narrow floats are encoded from the exact input value with one round-to-nearest-even step
// (the float overloads widen to double first, which is exact, so there is no double rounding).
// NaN stays NaN (quiet, sign and top payload bits kept where the format has room); f16 and bf16
// overflow to +-Inf as IEEE does. The fp8 / fp4 / e8m0 encoders follow the ONNX "Cast" operator
// (docs/Operators.md#Cast, opset 24+, and docs/docsgen/source/technical/float8.md / float4.md):
//
//   x          e4m3fn      e4m3fnuz    e5m2        e5m2fnuz    (saturate = true, the default)
//   +-Inf      +-448       +-240       +-57344     +-57344
//   [x] > max  +-max       +-max       +-max       +-max
//   NaN        NaN         NaN         NaN         NaN
//   -0         -0          +0          -0          +0
//
//   x          e4m3fn      e4m3fnuz    e5m2        e5m2fnuz    (saturate = false)
//   +-Inf      NaN         NaN         +-Inf       NaN
//   [x] > max  NaN         NaN         +-Inf       NaN
//
// [x] is x rounded to the target's precision, so e.g. 464 -> 448 in e4m3fn (a tie, to even) even
// with saturate = false, while 465 overflows. Codes: e4m3fn NaN = 0x7F/0xFF; e5m2 NaN written as
// 0x7E/0xFE, Inf = 0x7C/0xFC; fnuz NaN = 0x80, the only NaN.
#pragma once

#include <tessel/dtype.h>

#include <complex>
#include <cstdint>

namespace tessel {

// IEEE binary16 and bfloat16.
uint16_t f64_to_f16(double v);
uint16_t f32_to_f16(float v);
float f16_to_f32(uint16_t h);
uint16_t f64_to_bf16(double v);
uint16_t f32_to_bf16(float v);
float bf16_to_f32(uint16_t h);

// OCP fp8 (ONNX FLOAT8E4M3FN: bias 7, no Inf, max 448; FLOAT8E5M2: bias 15, IEEE-like, max 57344).
uint8_t f64_to_f8e4m3fn(double v, bool saturate = true);
uint8_t f32_to_f8e4m3fn(float v, bool saturate = true);
float f8e4m3fn_to_f32(uint8_t c);
uint8_t f64_to_f8e5m2(double v, bool saturate = true);
uint8_t f32_to_f8e5m2(float v, bool saturate = true);
float f8e5m2_to_f32(uint8_t c);

// Storage-only fp8: FNUZ variants (bias 8 / 16, no Inf, no -0, NaN = 0x80, max 240 / 57344).
uint8_t f64_to_f8e4m3fnuz(double v, bool saturate = true);
uint8_t f32_to_f8e4m3fnuz(float v, bool saturate = true);
float f8e4m3fnuz_to_f32(uint8_t c);
uint8_t f64_to_f8e5m2fnuz(double v, bool saturate = true);
uint8_t f32_to_f8e5m2fnuz(float v, bool saturate = true);
float f8e5m2fnuz_to_f32(uint8_t c);

// E8M0 (MX scale): code c means 2^(c-127), 0xFF is NaN; no zero, no sign. Encoding uses ONNX
// round_mode "nearest" (to the nearer power of two by value; the tie 1.5 * 2^e rounds up).
// saturate = true: 0 -> 0x00 (2^-127), Inf and values above 2^127 -> 0xFE, below -> 0x00.
// saturate = false: 0, Inf and out-of-range values -> NaN. Negative inputs (unspecified by ONNX)
// give NaN; -0 is treated as 0.
uint8_t f64_to_f8e8m0fnu(double v, bool saturate = true);
uint8_t f32_to_f8e8m0fnu(float v, bool saturate = true);
float f8e8m0fnu_to_f32(uint8_t c);

// FP4 E2M1 (one value in the low nibble): +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}. Always saturates, per
// ONNX: |x| > 6 and +-Inf -> +-6, NaN -> +6 (the format has no NaN). Round to nearest even.
uint8_t f64_to_f4e2m1(double v);
uint8_t f32_to_f4e2m1(float v);
float f4e2m1_to_f32(uint8_t nibble);  // the high nibble is ignored
// F4E2M1FNx2 packing, as ONNX: element 2i in the low nibble, element 2i+1 in the high nibble.
inline uint8_t pack_f4x2(uint8_t lo, uint8_t hi) {
  return static_cast<uint8_t>(((hi & 0x0F) << 4) | (lo & 0x0F));
}
inline uint8_t f4x2_lo(uint8_t byte) { return byte & 0x0F; }
inline uint8_t f4x2_hi(uint8_t byte) { return byte >> 4; }

// Generic element access for backends and tests. `p` points at one element of dtype `t`. For
// F4E2M1FNx2 it points at the byte and these touch only its low nibble (element 0); use the
// indexed forms below for packed data.
//  * Loads of complex dtypes give the real part (except load_as_c128).
//  * Stores to complex dtypes write the value as the real part and zero as the imaginary part.
//  * Bool stores write 1 for anything nonzero (NaN included), 0 for +-0.
//  * Integer stores from double truncate toward zero, then wrap modulo 2^bits (defined for every
//    finite input, unlike a C++ cast); NaN and +-Inf store 0.
//  * Float stores from i64 round once, directly from the integer.
//  * u64 loads as i64 reinterpret the bits; load_as_f64 of u64/i64 rounds to nearest even.
//  * `saturate` applies to the fp8 and e8m0 encodings as in ONNX Cast; other dtypes ignore it.
double load_as_f64(const void* p, DType t);
void store_from_f64(void* p, DType t, double v, bool saturate = true);
int64_t load_as_i64(const void* p, DType t);
void store_from_i64(void* p, DType t, int64_t v);
std::complex<double> load_as_c128(const void* p, DType t);
void store_from_c128(void* p, DType t, std::complex<double> v, bool saturate = true);

// Element `index` of a dense array of dtype `t` starting at `base` (packed dtypes included).
double load_as_f64_at(const void* base, DType t, int64_t index);
void store_from_f64_at(void* base, DType t, int64_t index, double v, bool saturate = true);

}  // namespace tessel
