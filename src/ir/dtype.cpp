// DType names, sizes, kinds and type promotion. Everything per-dtype comes from TESSEL_DTYPES.
#include <tessel/dtype.h>
#include <tessel/error.h>

namespace tessel {

const char* dtype_name(DType t) {
  switch (t) {
#define TESSEL_DTYPE_CASE(e, n, b, k, s) \
  case DType::e:                         \
    return n;
    TESSEL_DTYPES(TESSEL_DTYPE_CASE)
#undef TESSEL_DTYPE_CASE
  }
  return "?";  // only reachable with a value outside the enum
}

std::optional<DType> dtype_from_name(std::string_view name) {
#define TESSEL_DTYPE_MATCH(e, n, b, k, s) \
  if (name == n) return DType::e;
  TESSEL_DTYPES(TESSEL_DTYPE_MATCH)
#undef TESSEL_DTYPE_MATCH
  return std::nullopt;
}

int dtype_size(DType t) {
  switch (t) {
#define TESSEL_DTYPE_CASE(e, n, b, k, s) \
  case DType::e:                         \
    return b;
    TESSEL_DTYPES(TESSEL_DTYPE_CASE)
#undef TESSEL_DTYPE_CASE
  }
  return 0;
}

DTypeKind dtype_kind(DType t) {
  switch (t) {
#define TESSEL_DTYPE_CASE(e, n, b, k, s) \
  case DType::e:                         \
    return DTypeKind::k;
    TESSEL_DTYPES(TESSEL_DTYPE_CASE)
#undef TESSEL_DTYPE_CASE
  }
  return DTypeKind::Float;
}

DTypeSupport dtype_support(DType t) {
  switch (t) {
#define TESSEL_DTYPE_CASE(e, n, b, k, s) \
  case DType::e:                         \
    return DTypeSupport::s;
    TESSEL_DTYPES(TESSEL_DTYPE_CASE)
#undef TESSEL_DTYPE_CASE
  }
  return DTypeSupport::Storage;
}

std::string DTypeSet::to_string() const {
  std::string out;
  for (int i = 0; i < kNumDTypes; ++i) {
    auto t = static_cast<DType>(i);
    if (!contains(t)) continue;
    if (!out.empty()) out += ' ';
    out += dtype_name(t);
  }
  return out;
}

namespace {

// The promotion table covers the "full" dtypes, which are the first kPromoteCount enum values.
constexpr int kPromoteCount = 13;
static_assert(static_cast<int>(DType::C64) == kPromoteCount - 1);
static_assert(static_cast<int>(DType::U16) == kPromoteCount,
              "promotion table assumes full dtypes precede storage-only ones");

constexpr DType b1 = DType::Bool, u1 = DType::U8, i1 = DType::I8, i2 = DType::I16, i4 = DType::I32,
                i8 = DType::I64, f2 = DType::F16, bf = DType::BF16, f4 = DType::F32,
                f8 = DType::F64, e4 = DType::F8E4M3FN, e5 = DType::F8E5M2, c8 = DType::C64;

// torch.promote_types for two tensor operands (c10/core/ScalarType.cpp), row = a, column = b.
// Rows/columns without fp8 and c64-f64 were checked against torch 1.13. Tessel's choices:
//  * c64 with f64 -> c64 (PyTorch: complex128, which is storage-only here).
//  * fp8 (PyTorch refuses to promote fp8 with anything but itself): fp8 with bool/int -> the fp8
//    type; fp8 with f16/bf16/f32/f64/c64 -> the other type; e4m3fn with e5m2 -> f32, the type
//    fp8 kernels accumulate in.
constexpr DType kPromote[kPromoteCount][kPromoteCount] = {
    /*        b1  u1  i1  i2  i4  i8  f2  bf  f4  f8  e4  e5  c8 */
    /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8, e4, e5, c8},
    /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8, e4, e5, c8},
    /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8, e4, e5, c8},
    /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8, e4, e5, c8},
    /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8, e4, e5, c8},
    /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8, e4, e5, c8},
    /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8, f2, f2, c8},
    /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8, bf, bf, c8},
    /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8, f4, f4, c8},
    /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, c8},
    /* e4 */ {e4, e4, e4, e4, e4, e4, f2, bf, f4, f8, e4, f4, c8},
    /* e5 */ {e5, e5, e5, e5, e5, e5, f2, bf, f4, f8, f4, e5, c8},
    /* c8 */ {c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8},
};

}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  for (DType t : {a, b}) {
    if (dtype_support(t) == DTypeSupport::Storage) {
      throw_error(ErrorKind::DType, "[promote_types] ", dtype_name(t),
                  " is storage-only and is not promoted with other dtypes (got ", dtype_name(a),
                  " and ", dtype_name(b), "); cast it to a computable dtype first");
    }
  }
  return kPromote[static_cast<int>(a)][static_cast<int>(b)];
}

}  // namespace tessel
