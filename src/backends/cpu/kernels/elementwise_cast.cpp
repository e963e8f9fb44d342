// cpu kernel: Cast, bit-exact with the reference's kernel_cast. Computed dtypes go a block at a
// time through f32 (exact for f16 / bf16 / fp8 sources), f64 or i64 staging, each value rounded
// once into the target; storage-only and complex dtypes take the element-wise definition
// (ops/cast_elements.h).
// GCC warns (-Wpsabi) on every lambda taking or returning a vector wider than the baseline ABI:
// they never cross a translation unit, so the ABI note does not apply.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#include <cstring>

#include "backends/cpu/convert.h"
#include "backends/cpu/families.h"
#include "backends/cpu/strided.h"
#include "ir/dtype_convert.h"
#include "ops/cast_elements.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

bool is_exact(DType t) { return is_integer(t) || t == DType::Bool; }
bool is_computed_real(DType t) { return dtype_support(t) == DTypeSupport::Full && !is_complex(t); }

// A staged source value as the f64 that a narrow float target rounds from once: integers past
// 2^53 are first rounded to odd (exact below), so there is no double rounding.
double narrow_float_source(double v) { return v; }
double narrow_float_source(int64_t v) {
  if (v > -(int64_t{1} << 53) && v < (int64_t{1} << 53)) return static_cast<double>(v);
  bool negative = v < 0;
  uint64_t m = negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  double d = round_to_odd_f64(m);
  return negative ? -d : d;
}

// A staged source value as the i64 an integer target wraps: floats truncate toward zero, then
// wrap modulo 2^64 (NaN, inf: 0), as store_from_f64.
int64_t wrapped_i64(int64_t v) { return v; }
int64_t wrapped_i64(double v) {
  if (v > -9.2e18 && v < 9.2e18) return static_cast<int64_t>(v);
  int64_t r;
  store_from_f64(&r, DType::I64, v);
  return r;
}

template <class T, class S, class F>
void write_as(uint8_t* dst, const S* src, int64_t n, F f) {
  auto d = reinterpret_cast<T*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = f(src[i]);
}

// A block staged in f64 or i64 (S), each value rounded once into `to`.
template <class S>
void write_staged(const S* v, DType to, bool sat, uint8_t* dst, int64_t n) {
  switch (to) {
    case DType::F32:  // int64 -> float converts with one rounding
      return write_as<float>(dst, v, n, [](S x) { return static_cast<float>(x); });
    case DType::F64:
      return write_as<double>(dst, v, n, [](S x) { return static_cast<double>(x); });
    case DType::F16:
      return write_as<uint16_t>(dst, v, n, [](S x) { return f64_to_f16(narrow_float_source(x)); });
    case DType::BF16:
      return write_as<uint16_t>(dst, v, n, [](S x) { return f64_to_bf16(narrow_float_source(x)); });
    case DType::F8E4M3FN:
      return write_as<uint8_t>(dst, v, n,
                               [sat](S x) { return f64_to_f8e4m3fn(narrow_float_source(x), sat); });
    case DType::F8E5M2:
      return write_as<uint8_t>(dst, v, n,
                               [sat](S x) { return f64_to_f8e5m2(narrow_float_source(x), sat); });
    case DType::Bool:
      return write_as<uint8_t>(dst, v, n, [](S x) { return uint8_t{x != 0}; });
    case DType::U8:
    case DType::I8:
      return write_as<uint8_t>(dst, v, n, [](S x) { return static_cast<uint8_t>(wrapped_i64(x)); });
    case DType::I16:
      return write_as<uint16_t>(dst, v, n,
                                [](S x) { return static_cast<uint16_t>(wrapped_i64(x)); });
    case DType::I32:
      return write_as<uint32_t>(dst, v, n,
                                [](S x) { return static_cast<uint32_t>(wrapped_i64(x)); });
    case DType::I64:
      return write_as<int64_t>(dst, v, n, [](S x) { return wrapped_i64(x); });
    case DType::C64:
    case DType::U16:
    case DType::U32:
    case DType::U64:
    case DType::C128:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2FNUZ:
    case DType::F8E8M0FNU:
    case DType::F4E2M1FNx2:
      break;
  }
  TESSEL_ASSERT(false, "cast staging to ", dtype_name(to));
}

template <class T>
void gather_i64(const uint8_t* src, int64_t stride, int64_t* dst, int64_t n) {
  auto s = reinterpret_cast<const T*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int64_t>(s[i * stride]);
}

void to_i64(const uint8_t* src, DType from, int64_t stride, int64_t* dst, int64_t n) {
  switch (from) {
    case DType::Bool:
      for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride] != 0;
      return;
    case DType::U8:
      return gather_i64<uint8_t>(src, stride, dst, n);
    case DType::I8:
      return gather_i64<int8_t>(src, stride, dst, n);
    case DType::I16:
      return gather_i64<int16_t>(src, stride, dst, n);
    case DType::I32:
      return gather_i64<int32_t>(src, stride, dst, n);
    case DType::I64:
      return gather_i64<int64_t>(src, stride, dst, n);
    default:
      TESSEL_ASSERT(false, "cast staging from ", dtype_name(from));
  }
}

template <class T>
void copy_run(const uint8_t* src, int64_t stride, uint8_t* dst, int64_t n) {
  auto s = reinterpret_cast<const T*>(src);
  auto d = reinterpret_cast<T*>(dst);
  if (stride == 1) {
    std::memcpy(d, s, static_cast<size_t>(n) * sizeof(T));
    return;
  }
  for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
}

// One run of a cast between computed real dtypes.
void cast_run(DType from, DType to, bool sat, const uint8_t* src, int64_t ss, uint8_t* dst,
              int64_t n) {
  const int fs = dtype_size(from), ts = dtype_size(to);
  if (from == to) {
    switch (fs) {
      case 1:
        return copy_run<uint8_t>(src, ss, dst, n);
      case 2:
        return copy_run<uint16_t>(src, ss, dst, n);
      case 4:
        return copy_run<uint32_t>(src, ss, dst, n);
      default:
        return copy_run<uint64_t>(src, ss, dst, n);
    }
  }
  const bool f32_path =
      !is_exact(from) && from != DType::F64 &&
      (to == DType::F16 || to == DType::BF16 || to == DType::F32 || to == DType::F64);
  for (int64_t i = 0; i < n; i += kStageBlock) {
    int64_t m = std::min(kStageBlock, n - i);
    const uint8_t* s = src + i * ss * fs;
    uint8_t* d = dst + i * ts;
    if (f32_path) {  // the f32 staging is exact; from_f32 rounds once
      float buf[kStageBlock];
      to_f32(s, from, ss, buf, m);
      from_f32(buf, d, to, 1, m);
    } else if (!is_exact(from)) {
      double buf[kStageBlock];
      to_f64(s, from, ss, buf, m);
      write_staged(buf, to, sat, d, m);
    } else {
      int64_t buf[kStageBlock];
      to_i64(s, from, ss, buf, m);
      write_staged(buf, to, sat, d, m);
    }
  }
}

void kernel_cast(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  const bool sat = node.attrs.b("saturate");
  const DType from = x.dtype, to = y.dtype;
  if (!is_computed_real(from) || !is_computed_real(to)) return cast_elements(x, y, sat);
  auto plan = plan_strided<2>(y.shape, {&y, &x});
  strided_for(plan, [&](const std::array<uint8_t*, 2>& p, const std::array<int64_t, 2>& s,
                        int64_t n) { cast_run(from, to, sat, p[1], s[1], p[0], n); });
}

}  // namespace

void register_elementwise_cast(KernelRegistry& r) {
  r.native(OpKind::Cast, kernel_cast, dtypes::kEvery);
}

TESSEL_ISA_END
