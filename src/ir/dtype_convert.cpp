// Scalar dtype conversions. Every narrow-float encoder works on the exact input value, written as
// sig * 2^exp2, and rounds it once (round to nearest, ties to even) with round_to_code().
#include "ir/dtype_convert.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace tessel {

static_assert(std::numeric_limits<float>::is_iec559 && std::numeric_limits<double>::is_iec559,
              "the conversions assume IEEE 754 float and double");

namespace {

// An exact value: (-1)^neg * sig * 2^exp2 (sig == 0 is zero), or NaN / Inf.
struct Exact {
  bool neg = false;
  bool nan = false;
  bool inf = false;
  uint64_t sig = 0;  // for NaN: the 52-bit f64 fraction, whose top bits are the payload
  int exp2 = 0;
};

Exact exact_from_f64(double v) {
  const auto bits = std::bit_cast<uint64_t>(v);
  Exact x;
  x.neg = (bits >> 63) != 0;
  const int field = static_cast<int>((bits >> 52) & 0x7FF);
  const uint64_t frac = bits & ((uint64_t{1} << 52) - 1);
  if (field == 0x7FF) {
    x.nan = frac != 0;
    x.inf = frac == 0;
    x.sig = frac;
  } else if (field == 0) {
    x.sig = frac;  // zero or subnormal
    x.exp2 = -1074;
  } else {
    x.sig = frac | (uint64_t{1} << 52);
    x.exp2 = field - 1075;
  }
  return x;
}

Exact exact_from_i64(int64_t v) {
  Exact x;
  x.neg = v < 0;
  x.sig = x.neg ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  return x;
}

// Rounds sig * 2^exp2 (sig > 0) to nearest-even in a binary format with `man_bits` stored
// mantissa bits and exponent bias `bias`, IEEE layout (exponent field 0 = subnormal). Returns the
// magnitude code; the exponent is unbounded above, so a code past the format's largest finite
// code means overflow (kOverflow when the exponent is far out of range).
constexpr uint64_t kOverflow = ~uint64_t{0};

uint64_t round_to_code(uint64_t sig, int exp2, int man_bits, int bias) {
  const int e = exp2 + 63 - std::countl_zero(sig);  // value in [2^e, 2^(e+1))
  if (e > bias + 1) return kOverflow;
  const int emin = 1 - bias;
  const int scale = std::max(e, emin);          // exponent of the leading digit after rounding
  const int shift = (scale - man_bits) - exp2;  // right shift of sig into units of one ULP
  uint64_t n;
  if (shift <= 0) {
    n = sig << -shift;  // exact: fewer than man_bits + 2 significant bits
  } else if (shift > 64) {
    n = 0;  // below half an ULP
  } else {
    n = shift == 64 ? 0 : sig >> shift;
    const uint64_t rem = shift == 64 ? sig : sig & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (n & 1))) ++n;
  }
  // A carry out of the mantissa (n == 2^(man_bits+1)) moves into the exponent field by itself.
  return (static_cast<uint64_t>(scale + bias - 1) << man_bits) + n;
}

// Decodes a finite magnitude code of such a format (exact in float for every format here).
float decode_magnitude(uint32_t mag, int man_bits, int bias) {
  const uint32_t e = mag >> man_bits;
  const uint32_t m = mag & ((1u << man_bits) - 1);
  if (e == 0) return std::ldexp(static_cast<float>(m), 1 - bias - man_bits);
  return std::ldexp(static_cast<float>(m | (1u << man_bits)),
                    static_cast<int>(e) - bias - man_bits);
}

float with_sign(float mag, bool neg) { return neg ? -mag : mag; }

float quiet_nan_f32(bool neg) {
  return std::bit_cast<float>((neg ? 0x80000000u : 0u) | 0x7FC00000u);
}

uint16_t encode_f16(const Exact& x) {
  const uint16_t sign = x.neg ? 0x8000 : 0;
  if (x.nan) return sign | 0x7E00 | static_cast<uint16_t>((x.sig >> 42) & 0x3FF);
  if (x.inf) return sign | 0x7C00;
  if (x.sig == 0) return sign;
  const uint64_t code = round_to_code(x.sig, x.exp2, 10, 15);
  return sign | static_cast<uint16_t>(std::min<uint64_t>(code, 0x7C00));
}

uint16_t encode_bf16(const Exact& x) {
  const uint16_t sign = x.neg ? 0x8000 : 0;
  if (x.nan) return sign | 0x7FC0 | static_cast<uint16_t>((x.sig >> 45) & 0x7F);
  if (x.inf) return sign | 0x7F80;
  if (x.sig == 0) return sign;
  const uint64_t code = round_to_code(x.sig, x.exp2, 7, 127);
  return sign | static_cast<uint16_t>(std::min<uint64_t>(code, 0x7F80));
}

struct Fp8Format {
  int man_bits;
  int bias;
  uint8_t max_code;  // largest finite magnitude
  bool has_inf;      // e5m2: Inf = S.11111.00
  bool fnuz;         // single NaN 0x80, no -0
};
constexpr Fp8Format kE4M3FN{3, 7, 0x7E, false, false};
constexpr Fp8Format kE5M2{2, 15, 0x7B, true, false};
constexpr Fp8Format kE4M3FNUZ{3, 8, 0x7F, false, true};
constexpr Fp8Format kE5M2FNUZ{2, 16, 0x7F, false, true};

// ONNX Cast semantics; see the tables in dtype_convert.h.
uint8_t encode_fp8(const Exact& x, const Fp8Format& f, bool saturate) {
  const uint8_t sign = x.neg ? 0x80 : 0;
  const uint8_t nan = f.fnuz ? 0x80 : static_cast<uint8_t>(sign | (f.has_inf ? 0x7E : 0x7F));
  if (x.nan) return nan;
  uint64_t code = 0;
  if (x.inf) {
    code = kOverflow;
  } else if (x.sig != 0) {
    code = round_to_code(x.sig, x.exp2, f.man_bits, f.bias);
  }
  if (code > f.max_code) {
    if (saturate) return sign | f.max_code;
    return f.has_inf ? static_cast<uint8_t>(sign | 0x7C) : nan;
  }
  if (code == 0 && f.fnuz) return 0;
  return sign | static_cast<uint8_t>(code);
}

float decode_fp8(uint8_t c, const Fp8Format& f) {
  const bool neg = (c & 0x80) != 0;
  const uint8_t mag = c & 0x7F;
  if (f.fnuz) {
    if (c == 0x80) return quiet_nan_f32(false);
  } else if (f.has_inf) {
    if (mag == 0x7C) return with_sign(std::numeric_limits<float>::infinity(), neg);
    if (mag > 0x7C) return quiet_nan_f32(neg);
  } else if (mag == 0x7F) {
    return quiet_nan_f32(neg);
  }
  return with_sign(decode_magnitude(mag, f.man_bits, f.bias), neg);
}

uint8_t encode_e8m0(const Exact& x, bool saturate) {
  constexpr uint8_t kNaN = 0xFF, kMin = 0x00, kMax = 0xFE;
  if (x.nan || (x.neg && (x.inf || x.sig != 0))) return kNaN;
  if (x.inf) return saturate ? kMax : kNaN;
  if (x.sig == 0) return saturate ? kMin : kNaN;
  const int top = 63 - std::countl_zero(x.sig);
  int e = x.exp2 + top;  // x in [2^e, 2^(e+1))
  // Nearest power of two, tie (x == 1.5 * 2^e) up: round up iff the bit below the leading one is
  // set.
  if (top >= 1 && ((x.sig >> (top - 1)) & 1)) ++e;
  const int code = e + 127;
  if (code < 0) return saturate ? kMin : kNaN;
  if (code > kMax) return saturate ? kMax : kNaN;
  return static_cast<uint8_t>(code);
}

uint8_t encode_f4(const Exact& x) {
  if (x.nan) return 0x7;  // ONNX: NaN -> +6
  const uint8_t sign = x.neg ? 0x8 : 0;
  if (x.inf) return sign | 0x7;
  if (x.sig == 0) return sign;
  const uint64_t code = round_to_code(x.sig, x.exp2, 1, 1);
  return sign | static_cast<uint8_t>(std::min<uint64_t>(code, 0x7));
}

// Truncates toward zero, then wraps modulo 2^64; NaN and +-Inf give 0.
uint64_t f64_to_wrapped_u64(double v) {
  if (!std::isfinite(v)) return 0;
  const double t = std::trunc(v);
  if (std::fabs(t) < 9223372036854775808.0) return static_cast<uint64_t>(static_cast<int64_t>(t));
  // |t| >= 2^63 is sig * 2^shift with shift >= 11; keep the low 64 bits of the exact value.
  int exp = 0;
  const double m = std::frexp(std::fabs(t), &exp);  // |t| = m * 2^exp, m in [0.5, 1)
  const auto sig = static_cast<uint64_t>(std::ldexp(m, 53));
  const int shift = exp - 53;
  const uint64_t mag = shift >= 64 ? 0 : sig << shift;
  return t < 0 ? uint64_t{0} - mag : mag;
}

template <class T>
T load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
void store(void* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Writes the low `bytes` bytes of a wrapped integer (two's complement for signed dtypes).
void store_wrapped(void* p, DType t, uint64_t bits) {
  switch (dtype_size(t)) {
    case 1:
      store(p, static_cast<uint8_t>(bits));
      return;
    case 2:
      store(p, static_cast<uint16_t>(bits));
      return;
    case 4:
      store(p, static_cast<uint32_t>(bits));
      return;
    default:
      store(p, bits);
      return;
  }
}

void store_f4_low_nibble(void* p, uint8_t nibble) {
  const auto byte = load<uint8_t>(p);
  store(p, pack_f4x2(nibble, f4x2_hi(byte)));
}

// Stores an exact value into a narrow-float dtype; false if `t` is not one of them.
bool store_narrow_float(void* p, DType t, const Exact& x, bool saturate) {
  switch (t) {
    case DType::F16:
      store(p, encode_f16(x));
      return true;
    case DType::BF16:
      store(p, encode_bf16(x));
      return true;
    case DType::F8E4M3FN:
      store(p, encode_fp8(x, kE4M3FN, saturate));
      return true;
    case DType::F8E5M2:
      store(p, encode_fp8(x, kE5M2, saturate));
      return true;
    case DType::F8E4M3FNUZ:
      store(p, encode_fp8(x, kE4M3FNUZ, saturate));
      return true;
    case DType::F8E5M2FNUZ:
      store(p, encode_fp8(x, kE5M2FNUZ, saturate));
      return true;
    case DType::F8E8M0FNU:
      store(p, encode_e8m0(x, saturate));
      return true;
    case DType::F4E2M1FNx2:
      store_f4_low_nibble(p, encode_f4(x));
      return true;
    case DType::Bool:
    case DType::U8:
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
    case DType::F32:
    case DType::F64:
    case DType::C64:
    case DType::U16:
    case DType::U32:
    case DType::U64:
    case DType::C128:
      return false;
  }
  return false;
}

}  // namespace

uint16_t f64_to_f16(double v) { return encode_f16(exact_from_f64(v)); }
uint16_t f32_to_f16(float v) { return f64_to_f16(v); }
float f16_to_f32(uint16_t h) {
  const bool neg = (h & 0x8000) != 0;
  const uint32_t mag = h & 0x7FFF;
  if (mag >= 0x7C00) {
    const uint32_t sign = neg ? 0x80000000u : 0u;
    if (mag == 0x7C00) return std::bit_cast<float>(sign | 0x7F800000u);
    return std::bit_cast<float>(sign | 0x7FC00000u | ((mag & 0x3FF) << 13));  // quiet, payload kept
  }
  return with_sign(decode_magnitude(mag, 10, 15), neg);
}

uint16_t f64_to_bf16(double v) { return encode_bf16(exact_from_f64(v)); }
uint16_t f32_to_bf16(float v) { return f64_to_bf16(v); }
float bf16_to_f32(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) bits |= 0x00400000u;  // NaN: make it quiet
  return std::bit_cast<float>(bits);
}

uint8_t f64_to_f8e4m3fn(double v, bool saturate) {
  return encode_fp8(exact_from_f64(v), kE4M3FN, saturate);
}
uint8_t f32_to_f8e4m3fn(float v, bool saturate) { return f64_to_f8e4m3fn(v, saturate); }
float f8e4m3fn_to_f32(uint8_t c) { return decode_fp8(c, kE4M3FN); }

uint8_t f64_to_f8e5m2(double v, bool saturate) {
  return encode_fp8(exact_from_f64(v), kE5M2, saturate);
}
uint8_t f32_to_f8e5m2(float v, bool saturate) { return f64_to_f8e5m2(v, saturate); }
float f8e5m2_to_f32(uint8_t c) { return decode_fp8(c, kE5M2); }

uint8_t f64_to_f8e4m3fnuz(double v, bool saturate) {
  return encode_fp8(exact_from_f64(v), kE4M3FNUZ, saturate);
}
uint8_t f32_to_f8e4m3fnuz(float v, bool saturate) { return f64_to_f8e4m3fnuz(v, saturate); }
float f8e4m3fnuz_to_f32(uint8_t c) { return decode_fp8(c, kE4M3FNUZ); }

uint8_t f64_to_f8e5m2fnuz(double v, bool saturate) {
  return encode_fp8(exact_from_f64(v), kE5M2FNUZ, saturate);
}
uint8_t f32_to_f8e5m2fnuz(float v, bool saturate) { return f64_to_f8e5m2fnuz(v, saturate); }
float f8e5m2fnuz_to_f32(uint8_t c) { return decode_fp8(c, kE5M2FNUZ); }

uint8_t f64_to_f8e8m0fnu(double v, bool saturate) {
  return encode_e8m0(exact_from_f64(v), saturate);
}
uint8_t f32_to_f8e8m0fnu(float v, bool saturate) { return f64_to_f8e8m0fnu(v, saturate); }
float f8e8m0fnu_to_f32(uint8_t c) {
  if (c == 0xFF) return quiet_nan_f32(false);
  return std::ldexp(1.0f, static_cast<int>(c) - 127);
}

uint8_t f64_to_f4e2m1(double v) { return encode_f4(exact_from_f64(v)); }
uint8_t f32_to_f4e2m1(float v) { return f64_to_f4e2m1(v); }
float f4e2m1_to_f32(uint8_t nibble) {
  return with_sign(decode_magnitude(nibble & 0x7, 1, 1), (nibble & 0x8) != 0);
}

double load_as_f64(const void* p, DType t) {
  switch (t) {
    case DType::Bool:
      return load<uint8_t>(p) != 0 ? 1.0 : 0.0;
    case DType::U8:
      return load<uint8_t>(p);
    case DType::I8:
      return load<int8_t>(p);
    case DType::I16:
      return load<int16_t>(p);
    case DType::I32:
      return load<int32_t>(p);
    case DType::I64:
      return static_cast<double>(load<int64_t>(p));
    case DType::U16:
      return load<uint16_t>(p);
    case DType::U32:
      return load<uint32_t>(p);
    case DType::U64:
      return static_cast<double>(load<uint64_t>(p));
    case DType::F16:
      return f16_to_f32(load<uint16_t>(p));
    case DType::BF16:
      return bf16_to_f32(load<uint16_t>(p));
    case DType::F32:
      return load<float>(p);
    case DType::F64:
      return load<double>(p);
    case DType::F8E4M3FN:
      return f8e4m3fn_to_f32(load<uint8_t>(p));
    case DType::F8E5M2:
      return f8e5m2_to_f32(load<uint8_t>(p));
    case DType::F8E4M3FNUZ:
      return f8e4m3fnuz_to_f32(load<uint8_t>(p));
    case DType::F8E5M2FNUZ:
      return f8e5m2fnuz_to_f32(load<uint8_t>(p));
    case DType::F8E8M0FNU:
      return f8e8m0fnu_to_f32(load<uint8_t>(p));
    case DType::F4E2M1FNx2:
      return f4e2m1_to_f32(f4x2_lo(load<uint8_t>(p)));
    case DType::C64:
      return load<float>(p);
    case DType::C128:
      return load<double>(p);
  }
  return 0.0;
}

void store_from_f64(void* p, DType t, double v, bool saturate) {
  switch (t) {
    case DType::Bool:
      store<uint8_t>(p, v != 0.0 ? 1 : 0);
      return;
    case DType::U8:
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
    case DType::U16:
    case DType::U32:
    case DType::U64:
      store_wrapped(p, t, f64_to_wrapped_u64(v));
      return;
    case DType::F32:
      store(p, static_cast<float>(v));  // IEEE: round to nearest even, overflow to +-Inf
      return;
    case DType::F64:
      store(p, v);
      return;
    case DType::C64:
      store(p, std::complex<float>(static_cast<float>(v), 0.0f));
      return;
    case DType::C128:
      store(p, std::complex<double>(v, 0.0));
      return;
    case DType::F16:
    case DType::BF16:
    case DType::F8E4M3FN:
    case DType::F8E5M2:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2FNUZ:
    case DType::F8E8M0FNU:
    case DType::F4E2M1FNx2:
      store_narrow_float(p, t, exact_from_f64(v), saturate);
      return;
  }
}

int64_t load_as_i64(const void* p, DType t) {
  switch (t) {
    case DType::Bool:
      return load<uint8_t>(p) != 0 ? 1 : 0;
    case DType::U8:
      return load<uint8_t>(p);
    case DType::I8:
      return load<int8_t>(p);
    case DType::I16:
      return load<int16_t>(p);
    case DType::I32:
      return load<int32_t>(p);
    case DType::I64:
      return load<int64_t>(p);
    case DType::U16:
      return load<uint16_t>(p);
    case DType::U32:
      return load<uint32_t>(p);
    case DType::U64:
      return static_cast<int64_t>(load<uint64_t>(p));  // same bits
    case DType::F16:
    case DType::BF16:
    case DType::F32:
    case DType::F64:
    case DType::F8E4M3FN:
    case DType::F8E5M2:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2FNUZ:
    case DType::F8E8M0FNU:
    case DType::F4E2M1FNx2:
    case DType::C64:
    case DType::C128:
      return static_cast<int64_t>(f64_to_wrapped_u64(load_as_f64(p, t)));
  }
  return 0;
}

void store_from_i64(void* p, DType t, int64_t v) {
  switch (t) {
    case DType::Bool:
      store<uint8_t>(p, v != 0 ? 1 : 0);
      return;
    case DType::U8:
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
    case DType::U16:
    case DType::U32:
    case DType::U64:
      store_wrapped(p, t, static_cast<uint64_t>(v));
      return;
    case DType::F32:
      store(p, static_cast<float>(v));  // one rounding, from the integer
      return;
    case DType::F64:
      store(p, static_cast<double>(v));
      return;
    case DType::C64:
      store(p, std::complex<float>(static_cast<float>(v), 0.0f));
      return;
    case DType::C128:
      store(p, std::complex<double>(static_cast<double>(v), 0.0));
      return;
    case DType::F16:
    case DType::BF16:
    case DType::F8E4M3FN:
    case DType::F8E5M2:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2FNUZ:
    case DType::F8E8M0FNU:
    case DType::F4E2M1FNx2:
      store_narrow_float(p, t, exact_from_i64(v), /*saturate=*/true);
      return;
  }
}

std::complex<double> load_as_c128(const void* p, DType t) {
  if (t == DType::C64) {
    const auto c = load<std::complex<float>>(p);
    return {c.real(), c.imag()};
  }
  if (t == DType::C128) return load<std::complex<double>>(p);
  return {load_as_f64(p, t), 0.0};
}

void store_from_c128(void* p, DType t, std::complex<double> v, bool saturate) {
  if (t == DType::C64) {
    store(p, std::complex<float>(static_cast<float>(v.real()), static_cast<float>(v.imag())));
  } else if (t == DType::C128) {
    store(p, v);
  } else {
    store_from_f64(p, t, v.real(), saturate);  // the imaginary part is dropped, as in PyTorch
  }
}

double load_as_f64_at(const void* base, DType t, int64_t index) {
  const auto* bytes = static_cast<const unsigned char*>(base);
  if (t == DType::F4E2M1FNx2) {
    const uint8_t byte = bytes[index / 2];
    return f4e2m1_to_f32(index % 2 == 0 ? f4x2_lo(byte) : f4x2_hi(byte));
  }
  return load_as_f64(bytes + index * dtype_size(t), t);
}

void store_from_f64_at(void* base, DType t, int64_t index, double v, bool saturate) {
  auto* bytes = static_cast<unsigned char*>(base);
  if (t == DType::F4E2M1FNx2) {
    unsigned char* p = bytes + index / 2;
    const uint8_t nibble = f64_to_f4e2m1(v);
    *p = index % 2 == 0 ? pack_f4x2(nibble, f4x2_hi(*p)) : pack_f4x2(f4x2_lo(*p), nibble);
    return;
  }
  store_from_f64(bytes + index * dtype_size(t), t, v, saturate);
}

}  // namespace tessel
