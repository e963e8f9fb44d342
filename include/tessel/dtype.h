// Element types. The X-macro below is the one list of dtypes; everything else derives from it.
// "full" dtypes are computed on; "storage" dtypes are storage-and-cast-only for now (seed 003's
// long tail), and the coverage matrix says so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessel {

// X(Enum, short name, bytes (0 = sub-byte packed), kind, support)
#define TESSEL_DTYPES(X)                          \
  X(Bool, "bool", 1, Bool, Full)                  \
  X(U8, "u8", 1, Unsigned, Full)                  \
  X(I8, "i8", 1, Signed, Full)                    \
  X(I16, "i16", 2, Signed, Full)                  \
  X(I32, "i32", 4, Signed, Full)                  \
  X(I64, "i64", 8, Signed, Full)                  \
  X(F16, "f16", 2, Float, Full)                   \
  X(BF16, "bf16", 2, Float, Full)                 \
  X(F32, "f32", 4, Float, Full)                   \
  X(F64, "f64", 8, Float, Full)                   \
  X(F8E4M3FN, "f8_e4m3fn", 1, Float, Full)        \
  X(F8E5M2, "f8_e5m2", 1, Float, Full)            \
  X(C64, "c64", 8, Complex, Full)                 \
  X(U16, "u16", 2, Unsigned, Storage)             \
  X(U32, "u32", 4, Unsigned, Storage)             \
  X(U64, "u64", 8, Unsigned, Storage)             \
  X(C128, "c128", 16, Complex, Storage)           \
  X(F8E4M3FNUZ, "f8_e4m3fnuz", 1, Float, Storage) \
  X(F8E5M2FNUZ, "f8_e5m2fnuz", 1, Float, Storage) \
  X(F8E8M0FNU, "f8_e8m0fnu", 1, Float, Storage)   \
  X(F4E2M1FNx2, "f4_e2m1fn_x2", 1, Float, Storage)

enum class DType : uint8_t {
#define TESSEL_DTYPE_ENUM(e, n, b, k, s) e,
  TESSEL_DTYPES(TESSEL_DTYPE_ENUM)
#undef TESSEL_DTYPE_ENUM
};

#define TESSEL_DTYPE_COUNT_ONE(e, n, b, k, s) +1
inline constexpr int kNumDTypes = 0 TESSEL_DTYPES(TESSEL_DTYPE_COUNT_ONE);
#undef TESSEL_DTYPE_COUNT_ONE

enum class DTypeKind : uint8_t { Bool, Unsigned, Signed, Float, Complex };
enum class DTypeSupport : uint8_t { Full, Storage };

const char* dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);
int dtype_size(DType t);  // bytes per element (F4E2M1FNx2: one byte holds two values)
DTypeKind dtype_kind(DType t);
DTypeSupport dtype_support(DType t);
inline bool is_float(DType t) { return dtype_kind(t) == DTypeKind::Float; }
inline bool is_complex(DType t) { return dtype_kind(t) == DTypeKind::Complex; }
inline bool is_integer(DType t) {
  auto k = dtype_kind(t);
  return k == DTypeKind::Signed || k == DTypeKind::Unsigned;
}
inline bool is_inexact(DType t) { return is_float(t) || is_complex(t); }

// PyTorch's type promotion for two tensor operands (torch.promote_types), written as a table in
// dtype.cpp. Deviation: c64 with f64 gives c64 (PyTorch gives c128, a storage-only type here).
DType promote_types(DType a, DType b);

// A set of dtypes, used by claim tables.
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> ts) {
    for (DType t : ts) bits_ |= bit(t);
  }
  static constexpr DTypeSet from_bits(uint64_t b) {
    DTypeSet s;
    s.bits_ = b;
    return s;
  }
  constexpr bool contains(DType t) const { return bits_ & bit(t); }
  constexpr DTypeSet operator|(DTypeSet o) const { return from_bits(bits_ | o.bits_); }
  constexpr DTypeSet operator&(DTypeSet o) const { return from_bits(bits_ & o.bits_); }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr uint64_t bits() const { return bits_; }
  constexpr bool operator==(const DTypeSet&) const = default;
  std::string to_string() const;  // "f32 f64 i32" in enum order

 private:
  static constexpr uint64_t bit(DType t) { return uint64_t{1} << static_cast<int>(t); }
  uint64_t bits_ = 0;
};

namespace dtypes {
inline constexpr DTypeSet kFloat{DType::F16, DType::BF16, DType::F32, DType::F64};
inline constexpr DTypeSet kFp8{DType::F8E4M3FN, DType::F8E5M2};
inline constexpr DTypeSet kInt{DType::U8, DType::I8, DType::I16, DType::I32, DType::I64};
inline constexpr DTypeSet kNumeric = kFloat | kInt;
inline constexpr DTypeSet kAll = kNumeric | kFp8 | DTypeSet{DType::Bool, DType::C64};
inline constexpr DTypeSet kIndex{DType::I32, DType::I64};
// Every dtype, the storage-only ones included (what pure data movement and Cast run on).
inline constexpr DTypeSet kEvery = DTypeSet::from_bits((uint64_t{1} << kNumDTypes) - 1);
static_assert(kNumDTypes < 64, "DTypeSet holds one bit per dtype");
}  // namespace dtypes

}  // namespace tessel
