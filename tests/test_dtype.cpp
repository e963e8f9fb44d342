// DType table, promotion and the bit-exact scalar conversions of ir/dtype_convert.h.
// Expected bit patterns are worked out by hand in the comments; the fp8/fp4 encoders are also
// checked against a brute-force "nearest representable value" oracle built from the decoders.
#include <gtest/gtest.h>
#include <tessel/dtype.h>
#include <tessel/error.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ir/dtype_convert.h"

namespace tessel {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool is_f16_nan(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0; }
bool is_bf16_nan(uint16_t h) { return (h & 0x7F80) == 0x7F80 && (h & 0x007F) != 0; }
bool is_e4m3fn_nan(uint8_t c) { return (c & 0x7F) == 0x7F; }
bool is_e5m2_nan(uint8_t c) { return (c & 0x7F) > 0x7C; }

uint16_t u16_at(const unsigned char* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

std::vector<DType> all_dtypes() {
  std::vector<DType> out;
  for (int i = 0; i < kNumDTypes; ++i) out.push_back(static_cast<DType>(i));
  return out;
}

// ---------------------------------------------------------------------------------------------
// DType table

TEST(DType, NamesRoundTrip) {
  EXPECT_EQ(kNumDTypes, 21);
  for (DType t : all_dtypes()) {
    auto back = dtype_from_name(dtype_name(t));
    ASSERT_TRUE(back.has_value()) << dtype_name(t);
    EXPECT_EQ(*back, t);
  }
  EXPECT_FALSE(dtype_from_name("float32").has_value());
  EXPECT_FALSE(dtype_from_name("").has_value());
  EXPECT_STREQ(dtype_name(DType::F8E4M3FN), "f8_e4m3fn");
  EXPECT_STREQ(dtype_name(DType::F4E2M1FNx2), "f4_e2m1fn_x2");
}

TEST(DType, SizesKindsSupport) {
  EXPECT_EQ(dtype_size(DType::Bool), 1);
  EXPECT_EQ(dtype_size(DType::BF16), 2);
  EXPECT_EQ(dtype_size(DType::C64), 8);
  EXPECT_EQ(dtype_size(DType::C128), 16);
  EXPECT_EQ(dtype_size(DType::F4E2M1FNx2), 1);
  EXPECT_EQ(dtype_kind(DType::U8), DTypeKind::Unsigned);
  EXPECT_EQ(dtype_kind(DType::I16), DTypeKind::Signed);
  EXPECT_EQ(dtype_kind(DType::F8E5M2), DTypeKind::Float);
  EXPECT_EQ(dtype_kind(DType::Bool), DTypeKind::Bool);
  EXPECT_TRUE(is_complex(DType::C128));
  EXPECT_TRUE(is_integer(DType::U64));
  EXPECT_TRUE(is_inexact(DType::F8E8M0FNU));
  EXPECT_EQ(dtype_support(DType::F32), DTypeSupport::Full);
  EXPECT_EQ(dtype_support(DType::U16), DTypeSupport::Storage);
  EXPECT_EQ(dtype_support(DType::F4E2M1FNx2), DTypeSupport::Storage);
}

TEST(DType, SetToStringIsInEnumOrder) {
  EXPECT_EQ((DTypeSet{DType::F64, DType::I32, DType::F32}).to_string(), "i32 f32 f64");
  EXPECT_EQ(DTypeSet{}.to_string(), "");
  EXPECT_EQ(dtypes::kFp8.to_string(), "f8_e4m3fn f8_e5m2");
}

TEST(Error, KindNames) {
  EXPECT_STREQ(error_kind_name(ErrorKind::Shape), "Shape");
  EXPECT_STREQ(error_kind_name(ErrorKind::DType), "DType");
  EXPECT_STREQ(error_kind_name(ErrorKind::OutOfMemory), "OutOfMemory");
  EXPECT_STREQ(error_kind_name(ErrorKind::Value), "Value");
}

// ---------------------------------------------------------------------------------------------
// Promotion

TEST(Promote, PyTorchSpotChecks) {
  using D = DType;
  EXPECT_EQ(promote_types(D::U8, D::I8), D::I16);
  EXPECT_EQ(promote_types(D::I32, D::F16), D::F16);
  EXPECT_EQ(promote_types(D::F16, D::BF16), D::F32);
  EXPECT_EQ(promote_types(D::Bool, D::U8), D::U8);
  EXPECT_EQ(promote_types(D::I64, D::F32), D::F32);
  EXPECT_EQ(promote_types(D::F32, D::F32), D::F32);
  EXPECT_EQ(promote_types(D::U8, D::I64), D::I64);
  EXPECT_EQ(promote_types(D::I16, D::BF16), D::BF16);
  EXPECT_EQ(promote_types(D::F16, D::F64), D::F64);
  EXPECT_EQ(promote_types(D::I8, D::C64), D::C64);
  EXPECT_EQ(promote_types(D::BF16, D::C64), D::C64);
}

TEST(Promote, TesselChoices) {
  using D = DType;
  EXPECT_EQ(promote_types(D::C64, D::F64), D::C64);  // PyTorch: complex128
  EXPECT_EQ(promote_types(D::F8E4M3FN, D::I32), D::F8E4M3FN);
  EXPECT_EQ(promote_types(D::Bool, D::F8E5M2), D::F8E5M2);
  EXPECT_EQ(promote_types(D::F8E4M3FN, D::F8E5M2), D::F32);
  EXPECT_EQ(promote_types(D::F8E5M2, D::F16), D::F16);
  EXPECT_EQ(promote_types(D::F8E4M3FN, D::BF16), D::BF16);
  EXPECT_EQ(promote_types(D::F8E4M3FN, D::C64), D::C64);
}

TEST(Promote, SymmetricAndBoolIsIdentity) {
  for (DType a : all_dtypes()) {
    if (dtype_support(a) != DTypeSupport::Full) continue;
    EXPECT_EQ(promote_types(a, a), a);
    EXPECT_EQ(promote_types(DType::Bool, a), a);
    for (DType b : all_dtypes()) {
      if (dtype_support(b) != DTypeSupport::Full) continue;
      EXPECT_EQ(promote_types(a, b), promote_types(b, a)) << dtype_name(a) << " " << dtype_name(b);
      const DType r = promote_types(a, b);
      EXPECT_EQ(promote_types(r, a), r);  // the result absorbs both operands
      EXPECT_EQ(promote_types(r, b), r);
    }
  }
}

TEST(Promote, StorageOnlyThrows) {
  for (DType s : all_dtypes()) {
    if (dtype_support(s) != DTypeSupport::Storage) continue;
    EXPECT_EQ(promote_types(s, s), s);
    for (DType o : all_dtypes()) {
      if (o == s) continue;
      try {
        promote_types(o, s);
        ADD_FAILURE() << "no error for " << dtype_name(o) << " with " << dtype_name(s);
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::DType);
        const std::string msg = e.what();
        EXPECT_EQ(msg.rfind("[promote_types] ", 0), 0u) << msg;
        EXPECT_NE(msg.find("storage-only"), std::string::npos) << msg;
        EXPECT_NE(msg.find(dtype_name(o)), std::string::npos) << msg;
        EXPECT_NE(msg.find(dtype_name(s)), std::string::npos) << msg;
      }
    }
  }
  try {
    promote_types(DType::U16, DType::F32);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[promote_types] u16 is storage-only", 0), 0u);
  }
}

// ---------------------------------------------------------------------------------------------
// f16 / bf16

TEST(F16, HandPickedBitPatterns) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3C00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xC000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7BFF);  // max finite
  EXPECT_EQ(f32_to_f16(65519.0f), 0x7BFF);  // just below the overflow tie
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7C00);  // tie between 65504 (odd) and 2^16: to even = Inf
  EXPECT_EQ(f32_to_f16(1e10f), 0x7C00);
  EXPECT_EQ(f32_to_f16(-1e10f), 0xFC00);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -14)), 0x0400);               // min normal
  EXPECT_EQ(f32_to_f16(5.960464477539063e-08f), 0x0001);              // 2^-24
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);               // tie to even 0
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25) * 1.0000001f), 0x0001);  // above the tie
  EXPECT_EQ(f32_to_f16(std::ldexp(3.0f, -25)), 0x0002);               // 1.5 ulp -> 2
  EXPECT_EQ(f32_to_f16(std::ldexp(1023.0f, -24)), 0x03FF);            // max subnormal
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);        // tie to even
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(3.0f, -11)), 0x3C02);        // tie to even
  EXPECT_EQ(f32_to_f16(0.1f), 0x2E66);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_TRUE(is_f16_nan(f32_to_f16(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(is_f16_nan(f32_to_f16(-std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_f32(0x7BFF), 65504.0f);
  EXPECT_TRUE(std::signbit(f16_to_f32(0x8000)));
  EXPECT_TRUE(std::isinf(f16_to_f32(0xFC00)) && f16_to_f32(0xFC00) < 0);
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7C01)));  // signalling NaN decodes to a (quiet) NaN
}

TEST(F16, RoundsOnceFromDouble) {
  // 1 + 2^-11 + 2^-40 is just above the tie; via float the 2^-40 would be lost first.
  EXPECT_EQ(f64_to_f16(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 0x3C01);
  EXPECT_EQ(f64_to_f16(std::ldexp(1.0, -25) + std::ldexp(1.0, -60)), 0x0001);
  EXPECT_EQ(f64_to_f16(1e-300), 0x0000);
  EXPECT_EQ(f64_to_f16(-1e300), 0xFC00);
  EXPECT_EQ(f64_to_f16(std::numeric_limits<double>::denorm_min()), 0x0000);
}

TEST(F16, AllCodesRoundTrip) {
  for (uint32_t c = 0; c < 0x10000; ++c) {
    const auto h = static_cast<uint16_t>(c);
    const uint16_t back = f32_to_f16(f16_to_f32(h));
    if (is_f16_nan(h)) {
      EXPECT_TRUE(is_f16_nan(back)) << std::hex << c;
      if (h & 0x0200) {
        EXPECT_EQ(back, h) << std::hex << c;  // quiet NaNs keep sign and payload
      }
    } else {
      EXPECT_EQ(back, h) << std::hex << c;
    }
  }
}

TEST(BF16, HandPickedBitPatterns) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);  // tie to even
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(3.0f, -8)), 0x3F82);  // tie to even
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3F81);
  EXPECT_EQ(f32_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // rounds past 0x7F7F
  EXPECT_EQ(f32_to_bf16(std::ldexp(1.0f, -133)), 0x0001);             // min subnormal
  EXPECT_EQ(f32_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_bf16(-std::numeric_limits<float>::infinity()), 0xFF80);
  EXPECT_TRUE(is_bf16_nan(f32_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  // A NaN whose payload lives only in the low 16 bits must not truncate to Inf.
  EXPECT_TRUE(is_bf16_nan(f32_to_bf16(std::bit_cast<float>(0x7F800001u))));
  EXPECT_EQ(bf16_to_f32(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_f32(0x7F7F), std::bit_cast<float>(0x7F7F0000u));
}

TEST(BF16, AllCodesRoundTrip) {
  for (uint32_t c = 0; c < 0x10000; ++c) {
    const auto h = static_cast<uint16_t>(c);
    const uint16_t back = f32_to_bf16(bf16_to_f32(h));
    if (is_bf16_nan(h)) {
      EXPECT_TRUE(is_bf16_nan(back)) << std::hex << c;
      if (h & 0x0040) {
        EXPECT_EQ(back, h) << std::hex << c;
      }
    } else {
      EXPECT_EQ(back, h) << std::hex << c;
    }
  }
}

TEST(BF16, MatchesBitTrickOverF32Sweep) {
  // Independent reference: the classic add-0x7FFF-plus-lsb rounding on the f32 bits.
  for (uint64_t i = 0; i < (uint64_t{1} << 32); i += 4099) {
    const auto bits = static_cast<uint32_t>(i);
    const float x = std::bit_cast<float>(bits);
    if (std::isnan(x)) continue;
    const auto want = static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
    ASSERT_EQ(f32_to_bf16(x), want) << std::hex << bits;
  }
}

// ---------------------------------------------------------------------------------------------
// fp8 / fp4 / e8m0

TEST(F8E4M3FN, HandPickedBitPatterns) {
  EXPECT_EQ(f32_to_f8e4m3fn(1.0f), 0x38);    // 0.0111.000
  EXPECT_EQ(f32_to_f8e4m3fn(448.0f), 0x7E);  // 1.75 * 2^8 = 0.1111.110
  EXPECT_EQ(f32_to_f8e4m3fn(-448.0f), 0xFE);
  EXPECT_EQ(f32_to_f8e4m3fn(240.0f), 0x77);  // 1.875 * 2^7 = 0.1110.111
  EXPECT_EQ(f32_to_f8e4m3fn(500.0f), 0x7E);  // saturate
  EXPECT_EQ(f32_to_f8e4m3fn(500.0f, false), 0x7F);
  EXPECT_EQ(f32_to_f8e4m3fn(-500.0f, false), 0xFF);
  EXPECT_EQ(f32_to_f8e4m3fn(464.0f, false), 0x7E);  // tie 448/480: to even 448, no overflow
  EXPECT_EQ(f32_to_f8e4m3fn(465.0f, false), 0x7F);  // rounds to 480 > max: NaN
  EXPECT_EQ(f32_to_f8e4m3fn(465.0f), 0x7E);
  EXPECT_EQ(f32_to_f8e4m3fn(std::ldexp(1.0f, -6)), 0x08);   // min normal
  EXPECT_EQ(f32_to_f8e4m3fn(std::ldexp(1.0f, -9)), 0x01);   // min subnormal
  EXPECT_EQ(f32_to_f8e4m3fn(std::ldexp(1.0f, -10)), 0x00);  // tie to even 0
  EXPECT_EQ(f32_to_f8e4m3fn(std::ldexp(3.0f, -10)), 0x02);  // 1.5 ulp -> 2
  EXPECT_EQ(f32_to_f8e4m3fn(1.0625f), 0x38);                // 1 + 2^-4: tie to even
  EXPECT_EQ(f32_to_f8e4m3fn(1.1875f), 0x3A);                // 1 + 3*2^-4: tie to even
  EXPECT_EQ(f32_to_f8e4m3fn(-0.0f), 0x80);
  EXPECT_EQ(f32_to_f8e4m3fn(-1e-6f), 0x80);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(f32_to_f8e4m3fn(inf), 0x7E);  // ONNX saturate: Inf -> FLT_MAX
  EXPECT_EQ(f32_to_f8e4m3fn(-inf), 0xFE);
  EXPECT_EQ(f32_to_f8e4m3fn(inf, false), 0x7F);  // no Inf in e4m3fn: NaN
  EXPECT_EQ(f32_to_f8e4m3fn(-inf, false), 0xFF);
  EXPECT_TRUE(is_e4m3fn_nan(f32_to_f8e4m3fn(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(is_e4m3fn_nan(f32_to_f8e4m3fn(std::numeric_limits<float>::quiet_NaN(), false)));
  EXPECT_EQ(f8e4m3fn_to_f32(0x7E), 448.0f);
  EXPECT_EQ(f8e4m3fn_to_f32(0x01), std::ldexp(1.0f, -9));
  EXPECT_TRUE(std::isnan(f8e4m3fn_to_f32(0x7F)));
  EXPECT_TRUE(std::isnan(f8e4m3fn_to_f32(0xFF)));
}

TEST(F8E5M2, HandPickedBitPatterns) {
  EXPECT_EQ(f32_to_f8e5m2(1.0f), 0x3C);      // 0.01111.00
  EXPECT_EQ(f32_to_f8e5m2(57344.0f), 0x7B);  // 1.75 * 2^15 = 0.11110.11
  EXPECT_EQ(f32_to_f8e5m2(60000.0f), 0x7B);
  EXPECT_EQ(f32_to_f8e5m2(61440.0f, false), 0x7C);  // tie 57344 (odd) / 2^16: to even = Inf
  EXPECT_EQ(f32_to_f8e5m2(61440.0f), 0x7B);
  EXPECT_EQ(f32_to_f8e5m2(-1e6f, false), 0xFC);
  EXPECT_EQ(f32_to_f8e5m2(std::ldexp(1.0f, -16)), 0x01);  // min subnormal
  EXPECT_EQ(f32_to_f8e5m2(std::ldexp(1.0f, -14)), 0x04);  // min normal
  EXPECT_EQ(f32_to_f8e5m2(-0.0f), 0x80);
  const float inf = std::numeric_limits<float>::infinity();
  // ONNX Cast table: with saturate Inf -> FLT_MAX (0x7B); without, Inf stays Inf (0x7C).
  EXPECT_EQ(f32_to_f8e5m2(inf), 0x7B);
  EXPECT_EQ(f32_to_f8e5m2(-inf), 0xFB);
  EXPECT_EQ(f32_to_f8e5m2(inf, false), 0x7C);
  EXPECT_EQ(f32_to_f8e5m2(-inf, false), 0xFC);
  EXPECT_TRUE(is_e5m2_nan(f32_to_f8e5m2(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(f8e5m2_to_f32(0x7B), 57344.0f);
  EXPECT_EQ(f8e5m2_to_f32(0xFC), -inf);
  for (uint8_t c : {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF}) EXPECT_TRUE(std::isnan(f8e5m2_to_f32(c)));
}

TEST(F8Fnuz, HandPickedBitPatterns) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(f32_to_f8e4m3fnuz(1.0f), 0x40);    // bias 8: 0.1000.000
  EXPECT_EQ(f32_to_f8e4m3fnuz(240.0f), 0x7F);  // 1.875 * 2^7 = 0.1111.111
  EXPECT_EQ(f32_to_f8e4m3fnuz(-240.0f), 0xFF);
  EXPECT_EQ(f32_to_f8e4m3fnuz(std::ldexp(1.0f, -10)), 0x01);
  EXPECT_EQ(f32_to_f8e4m3fnuz(-0.0f), 0x00);  // no negative zero
  EXPECT_EQ(f32_to_f8e4m3fnuz(-1e-9f), 0x00);
  EXPECT_EQ(f32_to_f8e4m3fnuz(nan), 0x80);
  EXPECT_EQ(f32_to_f8e4m3fnuz(inf), 0x7F);
  EXPECT_EQ(f32_to_f8e4m3fnuz(-inf), 0xFF);
  EXPECT_EQ(f32_to_f8e4m3fnuz(inf, false), 0x80);
  EXPECT_EQ(f32_to_f8e4m3fnuz(1000.0f, false), 0x80);
  EXPECT_EQ(f32_to_f8e4m3fnuz(248.0f, false), 0x80);  // tie 240 (odd) / 256: overflows
  EXPECT_EQ(f32_to_f8e4m3fnuz(247.0f, false), 0x7F);
  EXPECT_TRUE(std::isnan(f8e4m3fnuz_to_f32(0x80)));
  EXPECT_FALSE(std::signbit(f8e4m3fnuz_to_f32(0x00)));

  EXPECT_EQ(f32_to_f8e5m2fnuz(1.0f), 0x40);  // bias 16: 0.10000.00
  EXPECT_EQ(f32_to_f8e5m2fnuz(57344.0f), 0x7F);
  EXPECT_EQ(f32_to_f8e5m2fnuz(std::ldexp(1.0f, -17)), 0x01);
  EXPECT_EQ(f32_to_f8e5m2fnuz(-0.0f), 0x00);
  EXPECT_EQ(f32_to_f8e5m2fnuz(nan), 0x80);
  EXPECT_EQ(f32_to_f8e5m2fnuz(-inf), 0xFF);
  EXPECT_EQ(f32_to_f8e5m2fnuz(-inf, false), 0x80);
  EXPECT_EQ(f8e5m2fnuz_to_f32(0x7F), 57344.0f);
  EXPECT_TRUE(std::isnan(f8e5m2fnuz_to_f32(0x80)));
}

TEST(F8E8M0, BitPatterns) {
  EXPECT_EQ(f32_to_f8e8m0fnu(1.0f), 0x7F);
  EXPECT_EQ(f32_to_f8e8m0fnu(2.0f), 0x80);
  EXPECT_EQ(f32_to_f8e8m0fnu(0.5f), 0x7E);
  EXPECT_EQ(f32_to_f8e8m0fnu(1.49f), 0x7F);  // nearer to 1 than to 2
  EXPECT_EQ(f32_to_f8e8m0fnu(1.5f), 0x80);   // tie rounds up
  EXPECT_EQ(f32_to_f8e8m0fnu(3.0f), 0x81);   // 1.5 * 2 -> 4
  EXPECT_EQ(f32_to_f8e8m0fnu(std::ldexp(1.0f, 127)), 0xFE);
  EXPECT_EQ(f32_to_f8e8m0fnu(std::ldexp(1.0f, -127)), 0x00);
  EXPECT_EQ(f64_to_f8e8m0fnu(std::ldexp(1.0, 128)), 0xFE);
  EXPECT_EQ(f64_to_f8e8m0fnu(std::ldexp(1.0, 128), false), 0xFF);
  EXPECT_EQ(f64_to_f8e8m0fnu(std::ldexp(1.0, -128)), 0x00);
  EXPECT_EQ(f64_to_f8e8m0fnu(std::ldexp(1.0, -128), false), 0xFF);
  EXPECT_EQ(f64_to_f8e8m0fnu(std::ldexp(1.5, -128), false), 0x00);  // rounds up to 2^-127
  EXPECT_EQ(f32_to_f8e8m0fnu(0.0f), 0x00);                          // ONNX: saturate, 0 -> E8M0_MIN
  EXPECT_EQ(f32_to_f8e8m0fnu(0.0f, false), 0xFF);
  EXPECT_EQ(f32_to_f8e8m0fnu(std::numeric_limits<float>::infinity()), 0xFE);
  EXPECT_EQ(f32_to_f8e8m0fnu(std::numeric_limits<float>::infinity(), false), 0xFF);
  EXPECT_EQ(f32_to_f8e8m0fnu(std::numeric_limits<float>::quiet_NaN()), 0xFF);
  EXPECT_EQ(f32_to_f8e8m0fnu(-1.0f), 0xFF);  // negative: unspecified in ONNX, NaN here
  EXPECT_EQ(f8e8m0fnu_to_f32(0x7F), 1.0f);
  EXPECT_EQ(f8e8m0fnu_to_f32(0x00), std::ldexp(1.0f, -127));
  EXPECT_EQ(f8e8m0fnu_to_f32(0xFE), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(f8e8m0fnu_to_f32(0xFF)));
  for (int c = 0; c < 255; ++c) {
    EXPECT_EQ(f32_to_f8e8m0fnu(f8e8m0fnu_to_f32(static_cast<uint8_t>(c)), false), c);
  }
}

TEST(F4E2M1, BitPatternsAndPacking) {
  const float values[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (uint8_t c = 0; c < 16; ++c) {
    const float v = (c & 0x8 ? -1.0f : 1.0f) * values[c & 0x7];
    EXPECT_EQ(f4e2m1_to_f32(c), v);
    EXPECT_EQ(std::signbit(f4e2m1_to_f32(c)), (c & 0x8) != 0);
    EXPECT_EQ(f32_to_f4e2m1(v), c);
  }
  EXPECT_EQ(f32_to_f4e2m1(0.25f), 0x0);  // tie 0 / 0.5 -> 0
  EXPECT_EQ(f32_to_f4e2m1(0.75f), 0x2);  // tie 0.5 / 1 -> 1 (even code)
  EXPECT_EQ(f32_to_f4e2m1(1.25f), 0x2);  // tie 1 / 1.5 -> 1
  EXPECT_EQ(f32_to_f4e2m1(1.75f), 0x4);  // tie 1.5 / 2 -> 2
  EXPECT_EQ(f32_to_f4e2m1(2.5f), 0x4);   // tie 2 / 3 -> 2
  EXPECT_EQ(f32_to_f4e2m1(3.5f), 0x6);   // tie 3 / 4 -> 4
  EXPECT_EQ(f32_to_f4e2m1(5.0f), 0x6);   // tie 4 / 6 -> 4
  EXPECT_EQ(f32_to_f4e2m1(5.01f), 0x7);
  EXPECT_EQ(f32_to_f4e2m1(100.0f), 0x7);  // saturates
  EXPECT_EQ(f32_to_f4e2m1(-7.0f), 0xF);
  EXPECT_EQ(f32_to_f4e2m1(-0.1f), 0x8);  // rounds to -0
  EXPECT_EQ(f32_to_f4e2m1(std::numeric_limits<float>::infinity()), 0x7);
  EXPECT_EQ(f32_to_f4e2m1(-std::numeric_limits<float>::infinity()), 0xF);
  EXPECT_EQ(f32_to_f4e2m1(std::numeric_limits<float>::quiet_NaN()), 0x7);  // ONNX: NaN -> 6
  EXPECT_EQ(pack_f4x2(0x2, 0xF), 0xF2);
  EXPECT_EQ(f4x2_lo(0xF2), 0x2);
  EXPECT_EQ(f4x2_hi(0xF2), 0xF);
}

// Brute-force oracle: the magnitude code of the representable value nearest to x >= 0, ties to
// the even code. `grid` holds (value, code) for the finite magnitudes in increasing order plus
// one virtual point past the maximum, so a result past max_code means overflow.
struct Grid {
  std::vector<std::pair<double, uint32_t>> points;
  uint32_t max_code;
};

uint32_t nearest_code(double x, const Grid& g) {
  const auto& p = g.points;
  auto it =
      std::lower_bound(p.begin(), p.end(), x,
                       [](const std::pair<double, uint32_t>& a, double v) { return a.first < v; });
  if (it == p.end()) return g.max_code + 1;
  if (it->first == x || it == p.begin()) return it->second;
  const auto lo = *(it - 1);
  const auto hi = *it;
  const double dlo = x - lo.first, dhi = hi.first - x;  // exact: x is between neighbours
  if (dlo < dhi) return lo.second;
  if (dhi < dlo) return hi.second;
  return (lo.second & 1) == 0 ? lo.second : hi.second;
}

struct Fp8Case {
  const char* name;
  uint8_t (*encode)(double, bool);
  float (*decode)(uint8_t);
  uint8_t max_code;
  bool has_inf;
  bool fnuz;
};

Grid grid_for(const Fp8Case& f) {
  Grid g;
  g.max_code = f.max_code;
  for (uint32_t c = 0; c <= f.max_code; ++c) g.points.push_back({f.decode(c), c});
  // The virtual next point: the max plus one ulp of the max's binade.
  const double max = f.decode(f.max_code);
  const double ulp = max - f.decode(f.max_code - 1);
  g.points.push_back({max + ulp, f.max_code + 1});
  return g;
}

const Fp8Case kFp8Cases[] = {
    {"e4m3fn", f64_to_f8e4m3fn, f8e4m3fn_to_f32, 0x7E, false, false},
    {"e5m2", f64_to_f8e5m2, f8e5m2_to_f32, 0x7B, true, false},
    {"e4m3fnuz", f64_to_f8e4m3fnuz, f8e4m3fnuz_to_f32, 0x7F, false, true},
    {"e5m2fnuz", f64_to_f8e5m2fnuz, f8e5m2fnuz_to_f32, 0x7F, false, true},
};

TEST(F8, AllCodesRoundTrip) {
  for (const Fp8Case& f : kFp8Cases) {
    for (int c = 0; c < 256; ++c) {
      const auto code = static_cast<uint8_t>(c);
      const float v = f.decode(code);
      for (bool saturate : {false, true}) {
        const uint8_t back = f.encode(v, saturate);
        if (std::isnan(v)) {
          EXPECT_TRUE(std::isnan(f.decode(back))) << f.name << " " << c;
        } else if (std::isinf(v) && saturate) {
          EXPECT_EQ(back, (code & 0x80) | f.max_code) << f.name << " " << c;
        } else {
          EXPECT_EQ(back, code) << f.name << " " << c << " saturate=" << saturate;
        }
      }
    }
  }
}

TEST(F8, MatchesNearestOracleAtTiesAndNeighbours) {
  for (const Fp8Case& f : kFp8Cases) {
    const Grid g = grid_for(f);
    std::vector<double> xs;
    for (size_t i = 0; i + 1 < g.points.size(); ++i) {
      const double a = g.points[i].first, b = g.points[i + 1].first;
      const double mid = (a + b) / 2;
      for (double x :
           {a, mid, std::nextafter(mid, 0.0), std::nextafter(mid, kInf), (3 * a + b) / 4})
        xs.push_back(x);
    }
    for (double x : {1e-30, 1e30, 12345.678, 0.0123}) xs.push_back(x);
    for (double x : xs) {
      const uint32_t want = nearest_code(x, g);
      for (bool saturate : {false, true}) {
        for (double sx : {x, -x}) {
          const uint8_t got = f.encode(sx, saturate);
          const uint8_t sign = std::signbit(sx) ? 0x80 : 0;
          if (want > f.max_code) {
            if (saturate) {
              EXPECT_EQ(got, sign | f.max_code) << f.name << " " << sx;
            } else if (f.has_inf) {
              EXPECT_EQ(got, sign | 0x7C) << f.name << " " << sx;
            } else {
              EXPECT_TRUE(std::isnan(f.decode(got))) << f.name << " " << sx;
            }
          } else if (want == 0 && f.fnuz) {
            EXPECT_EQ(got, 0) << f.name << " " << sx;
          } else {
            EXPECT_EQ(got, sign | want) << f.name << " " << sx << " saturate=" << saturate;
          }
        }
      }
    }
  }
}

TEST(F4E2M1, MatchesNearestOracle) {
  Grid g;
  g.max_code = 7;
  for (uint8_t c = 0; c < 8; ++c) g.points.push_back({f4e2m1_to_f32(c), c});
  for (double x = 0; x <= 8.0; x += 1.0 / 64) {
    const uint32_t want = std::min<uint32_t>(nearest_code(x, g), 7);
    EXPECT_EQ(f64_to_f4e2m1(x), want) << x;
    EXPECT_EQ(f64_to_f4e2m1(-x), 0x8 | want) << x;
  }
}

// ---------------------------------------------------------------------------------------------
// Generic load / store

TEST(LoadStore, RoundTripEveryDType) {
  for (DType t : all_dtypes()) {
    std::vector<double> values = {0.0, 1.0, 3.0, 4.0};
    if (dtype_kind(t) == DTypeKind::Bool) values = {0.0, 1.0};
    if (dtype_kind(t) == DTypeKind::Signed || is_inexact(t)) values.push_back(-2.0);
    if (is_inexact(t)) values.push_back(0.5);
    if (t == DType::F8E8M0FNU) values = {1.0, 0.5, 4.0, std::ldexp(1.0, 127)};
    alignas(16) unsigned char buf[16];
    for (double v : values) {
      std::memset(buf, 0xAB, sizeof(buf));
      store_from_f64(buf, t, v);
      EXPECT_EQ(load_as_f64(buf, t), v) << dtype_name(t) << " " << v;
      if (std::fabs(v) < 0x1p62) {
        EXPECT_EQ(load_as_i64(buf, t), static_cast<int64_t>(v)) << dtype_name(t) << " " << v;
      }
      EXPECT_EQ(load_as_c128(buf, t), std::complex<double>(v, 0.0)) << dtype_name(t);
      if (v == std::trunc(v) && std::fabs(v) < 1e6) {
        std::memset(buf, 0xAB, sizeof(buf));
        store_from_i64(buf, t, static_cast<int64_t>(v));
        EXPECT_EQ(load_as_i64(buf, t), static_cast<int64_t>(v)) << dtype_name(t) << " " << v;
      }
      std::memset(buf, 0xAB, sizeof(buf));
      store_from_c128(buf, t, {v, 0.0});
      EXPECT_EQ(load_as_f64(buf, t), v) << dtype_name(t) << " " << v;
    }
  }
}

TEST(LoadStore, ExtremesOfEachWidth) {
  alignas(16) unsigned char buf[16];
  const std::pair<DType, double> cases[] = {{DType::U8, 255},
                                            {DType::I8, -128},
                                            {DType::I16, -32768},
                                            {DType::U16, 65535},
                                            {DType::I32, -2147483648.0},
                                            {DType::U32, 4294967295.0},
                                            {DType::I64, -0x1p63},
                                            {DType::U64, 0x1p63},
                                            {DType::F16, 65504},
                                            {DType::BF16, 0x1.fep127},
                                            {DType::F32, 0x1.fffffep127},
                                            {DType::F64, 1e308},
                                            {DType::F8E4M3FN, 448},
                                            {DType::F8E5M2, 57344},
                                            {DType::F8E4M3FNUZ, 240},
                                            {DType::F8E5M2FNUZ, 57344},
                                            {DType::F4E2M1FNx2, 6},
                                            {DType::C64, 0x1.fffffep127},
                                            {DType::C128, -1e308}};
  for (const auto& [t, v] : cases) {
    store_from_f64(buf, t, v);
    EXPECT_EQ(load_as_f64(buf, t), v) << dtype_name(t);
  }
}

TEST(LoadStore, IntegerStoresTruncateAndWrap) {
  alignas(8) unsigned char buf[8];
  auto f2i = [&](DType t, double v) {
    store_from_f64(buf, t, v);
    return load_as_i64(buf, t);
  };
  EXPECT_EQ(f2i(DType::I8, 200.7), -56);  // 200 wraps to -56
  EXPECT_EQ(f2i(DType::I8, -1.9), -1);    // toward zero
  EXPECT_EQ(f2i(DType::U8, -1.5), 255);
  EXPECT_EQ(f2i(DType::U8, 256.0), 0);
  EXPECT_EQ(f2i(DType::I16, 40000.0), 40000 - 65536);
  EXPECT_EQ(f2i(DType::I32, 4294967301.0), 5);  // 2^32 + 5
  EXPECT_EQ(f2i(DType::I64, 0x1p63), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f2i(DType::I64, 0x1p64 + 0x1p12), 4096);
  EXPECT_EQ(f2i(DType::I64, -(0x1p64 + 0x1p12)), -4096);
  EXPECT_EQ(f2i(DType::I64, 1e300), 0);  // multiple of 2^64
  EXPECT_EQ(f2i(DType::I32, kNaN), 0);
  EXPECT_EQ(f2i(DType::I32, kInf), 0);
  EXPECT_EQ(f2i(DType::Bool, kNaN), 1);
  EXPECT_EQ(f2i(DType::Bool, -0.0), 0);
  EXPECT_EQ(f2i(DType::Bool, 0.25), 1);
  EXPECT_EQ(f2i(DType::U64, 0x1p63), std::numeric_limits<int64_t>::min());  // same bits
  store_from_f64(buf, DType::U64, 0x1p63);
  EXPECT_EQ(load_as_f64(buf, DType::U64), 0x1p63);

  store_from_i64(buf, DType::I8, 300);
  EXPECT_EQ(load_as_i64(buf, DType::I8), 44);
  store_from_i64(buf, DType::U16, -1);
  EXPECT_EQ(load_as_i64(buf, DType::U16), 65535);
  store_from_i64(buf, DType::Bool, -7);
  EXPECT_EQ(load_as_i64(buf, DType::Bool), 1);
  store_from_f64(buf, DType::F32, -3.99);
  EXPECT_EQ(load_as_i64(buf, DType::F32), -3);
}

TEST(LoadStore, FloatStoresFromI64RoundOnce) {
  alignas(8) unsigned char buf[8];
  // bf16 ulp at 2^60 is 2^53: 2^60 + 2^52 + 1 is above the tie and rounds up (0x5D81). Through
  // double it would first become the tie 2^60 + 2^52 and then round to even (0x5D80).
  const int64_t v = (int64_t{1} << 60) + (int64_t{1} << 52) + 1;
  store_from_i64(buf, DType::BF16, v);
  EXPECT_EQ(u16_at(buf), 0x5D81);
  store_from_f64(buf, DType::BF16, static_cast<double>(v));
  EXPECT_EQ(u16_at(buf), 0x5D80);
  // f32 ulp at 2^60 is 2^37.
  const int64_t w = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;
  store_from_i64(buf, DType::F32, w);
  EXPECT_EQ(load_as_f64(buf, DType::F32), 0x1p60 + 0x1p37);
  store_from_i64(buf, DType::F16, 70000);  // overflows to Inf
  EXPECT_EQ(u16_at(buf), 0x7C00);
  store_from_i64(buf, DType::F8E4M3FN, -1000);  // saturates
  EXPECT_EQ(buf[0], 0xFE);
  store_from_i64(buf, DType::F16, 2049);  // tie between 2048 and 2050 -> 2048
  EXPECT_EQ(load_as_i64(buf, DType::F16), 2048);
}

TEST(LoadStore, ComplexAndSaturate) {
  alignas(16) unsigned char buf[16];
  store_from_c128(buf, DType::C64, {1.5, -2.25});
  EXPECT_EQ(load_as_c128(buf, DType::C64), std::complex<double>(1.5, -2.25));
  EXPECT_EQ(load_as_f64(buf, DType::C64), 1.5);
  store_from_c128(buf, DType::C128, {0.1, 1e300});
  EXPECT_EQ(load_as_c128(buf, DType::C128), std::complex<double>(0.1, 1e300));
  store_from_f64(buf, DType::C128, 3.0);
  EXPECT_EQ(load_as_c128(buf, DType::C128), std::complex<double>(3.0, 0.0));
  store_from_c128(buf, DType::F32, {2.0, 5.0});  // imaginary part dropped
  EXPECT_EQ(load_as_f64(buf, DType::F32), 2.0);
  store_from_f64(buf, DType::F8E4M3FN, 1000.0, /*saturate=*/false);
  EXPECT_TRUE(std::isnan(load_as_f64(buf, DType::F8E4M3FN)));
  store_from_f64(buf, DType::F8E5M2, -kInf, /*saturate=*/false);
  EXPECT_EQ(load_as_f64(buf, DType::F8E5M2), -kInf);
  store_from_f64(buf, DType::F32, 0.1);
  EXPECT_EQ(load_as_f64(buf, DType::F32), static_cast<double>(0.1f));
}

TEST(LoadStore, PackedFp4ByIndex) {
  unsigned char buf[3] = {0, 0, 0xEE};
  const double values[5] = {1.0, 6.0, -0.5, 3.0, -4.0};  // codes 0x2 0x7 0x9 0x5 0xE
  for (int i = 0; i < 5; ++i) store_from_f64_at(buf, DType::F4E2M1FNx2, i, values[i]);
  EXPECT_EQ(buf[0], 0x72);
  EXPECT_EQ(buf[1], 0x59);
  EXPECT_EQ(buf[2], 0xEE);  // high nibble of the last byte untouched
  for (int i = 0; i < 5; ++i) EXPECT_EQ(load_as_f64_at(buf, DType::F4E2M1FNx2, i), values[i]);
  // The non-indexed form touches only the low nibble.
  store_from_f64(buf, DType::F4E2M1FNx2, 0.5);
  EXPECT_EQ(buf[0], 0x71);
  double data[3] = {0, 0, 0};
  store_from_f64_at(data, DType::F64, 2, 7.5);
  EXPECT_EQ(data[2], 7.5);
  EXPECT_EQ(load_as_f64_at(data, DType::F64, 2), 7.5);
}

}  // namespace
}  // namespace tessel
