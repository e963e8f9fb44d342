// The C++ type a cpu kernel computes each dtype in, chosen by one exhaustive switch: a new dtype
// is flagged here, once, rather than in every kernel's dispatch.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tessel/dtype.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN

// Stands for f16, bf16 and the computed fp8 formats (e4m3fn, e5m2): no C++ arithmetic type of
// their own, so kernels stage them through f32 a block at a time (convert.h).
struct StagedF32 {};
template <class T>
inline constexpr bool kIsStagedF32 = std::is_same_v<T, StagedF32>;

// Calls fn.template operator()<T>() with T the type dtype `t` is computed in: float, double,
// bool, uint8_t, int8_t, int16_t, int32_t, int64_t or StagedF32; returns true. Returns false,
// calling nothing, for c64 and the storage-only dtypes (the caller says what it does with them).
template <class Fn>
bool visit_compute_type(DType t, Fn&& fn) {
  switch (t) {
    case DType::F32:
      fn.template operator()<float>();
      return true;
    case DType::F64:
      fn.template operator()<double>();
      return true;
    case DType::F16:
    case DType::BF16:
    case DType::F8E4M3FN:
    case DType::F8E5M2:
      fn.template operator()<StagedF32>();
      return true;
    case DType::Bool:
      fn.template operator()<bool>();
      return true;
    case DType::U8:
      fn.template operator()<uint8_t>();
      return true;
    case DType::I8:
      fn.template operator()<int8_t>();
      return true;
    case DType::I16:
      fn.template operator()<int16_t>();
      return true;
    case DType::I32:
      fn.template operator()<int32_t>();
      return true;
    case DType::I64:
      fn.template operator()<int64_t>();
      return true;
    case DType::C64:
    case DType::U16:
    case DType::U32:
    case DType::U64:
    case DType::C128:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2FNUZ:
    case DType::F8E8M0FNU:
    case DType::F4E2M1FNx2:
      return false;
  }
  return false;
}

TESSEL_ISA_END
