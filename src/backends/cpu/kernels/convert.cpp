#include "backends/cpu/convert.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/dtype_convert.h"

#if defined(TESSEL_CPU_ISA_AVX2) || defined(TESSEL_CPU_ISA_AVX512)
#include <immintrin.h>
#endif

// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

// Decoded values of every code of a one-byte float format.
struct Fp8Table {
  float v[256];
  explicit Fp8Table(DType dt) {
    for (int c = 0; c < 256; ++c) {
      uint8_t b = static_cast<uint8_t>(c);
      v[c] = static_cast<float>(load_as_f64(&b, dt));
    }
  }
};
const float* fp8_table(DType dt) {
  static const Fp8Table e4m3(DType::F8E4M3FN), e5m2(DType::F8E5M2);
  return dt == DType::F8E4M3FN ? e4m3.v : e5m2.v;
}

// n copies of v with vector stores: the compiler leaves a plain fill loop scalar at -O2, and
// broadcast operands (scalars, per-channel parameters) are read this way block after block.
template <class D>
void fill(D* dst, D v, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<D, float>) {
    const Vf x = splat<Vf>(v);
    for (; i + kLanesF <= n; i += kLanesF) store(dst + i, x);
  }
  for (; i < n; ++i) dst[i] = v;
}

template <class T, class D>
void gather(const T* s, int64_t stride, D* dst, int64_t n) {
  if (stride == 0) return fill(dst, static_cast<D>(s[0]), n);
  if constexpr (std::is_same_v<T, D>) {
    if (stride == 1) {  // a plain copy: memcpy is vectorized, the loop below is not at -O2
      std::memcpy(dst, s, static_cast<size_t>(n) * sizeof(D));
      return;
    }
  }
  if (stride == 1)
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<D>(s[i]);
  else
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<D>(s[i * stride]);
}

template <class D>
void to_float(const void* src, DType dt, int64_t stride, D* dst, int64_t n) {
  switch (dt) {
    case DType::F32:
      return gather(static_cast<const float*>(src), stride, dst, n);
    case DType::F64:
      return gather(static_cast<const double*>(src), stride, dst, n);
    case DType::Bool: {
      auto s = static_cast<const uint8_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = s[i * stride] != 0 ? D(1) : D(0);
      return;
    }
    case DType::U8:
      return gather(static_cast<const uint8_t*>(src), stride, dst, n);
    case DType::I8:
      return gather(static_cast<const int8_t*>(src), stride, dst, n);
    case DType::I16:
      return gather(static_cast<const int16_t*>(src), stride, dst, n);
    case DType::I32:
      return gather(static_cast<const int32_t*>(src), stride, dst, n);
    case DType::I64:
      return gather(static_cast<const int64_t*>(src), stride, dst, n);
    case DType::BF16: {
      auto s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) {
        uint32_t u = static_cast<uint32_t>(s[i * stride]) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        dst[i] = static_cast<D>(f);
      }
      return;
    }
    case DType::F16: {
      auto s = static_cast<const uint16_t*>(src);
      int64_t i = 0;
#if defined(TESSEL_CPU_ISA_AVX2) || defined(TESSEL_CPU_ISA_AVX512)
      if (stride == 1 && std::is_same_v<D, float>) {
        for (; i + 8 <= n; i += 8) {
          __m256 f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
          std::memcpy(dst + i, &f, sizeof f);
        }
      }
#endif
      for (; i < n; ++i) dst[i] = static_cast<D>(f16_to_f32(s[i * stride]));
      return;
    }
    case DType::F8E4M3FN:
    case DType::F8E5M2: {
      const float* table = fp8_table(dt);
      auto s = static_cast<const uint8_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<D>(table[s[i * stride]]);
      return;
    }
    default: {  // storage-only and complex: exact but slow
      auto s = static_cast<const uint8_t*>(src);
      int size = dtype_size(dt);
      for (int64_t i = 0; i < n; ++i)
        dst[i] = static_cast<D>(load_as_f64(s + i * stride * size, dt));
    }
  }
}

template <class S>
void from_float(const S* src, void* dst, DType dt, int64_t stride, int64_t n) {
  switch (dt) {
    case DType::F32: {
      auto d = static_cast<float*>(dst);
      if constexpr (std::is_same_v<S, float>) {
        if (stride == 1) return static_cast<void>(std::memcpy(d, src, static_cast<size_t>(n) * 4));
      }
      for (int64_t i = 0; i < n; ++i) d[i * stride] = static_cast<float>(src[i]);
      return;
    }
    case DType::F64: {
      auto d = static_cast<double*>(dst);
      if constexpr (std::is_same_v<S, double>) {
        if (stride == 1) return static_cast<void>(std::memcpy(d, src, static_cast<size_t>(n) * 8));
      }
      for (int64_t i = 0; i < n; ++i) d[i * stride] = static_cast<double>(src[i]);
      return;
    }
    case DType::BF16: {
      auto d = static_cast<uint16_t*>(dst);
      if constexpr (std::is_same_v<S, float>) {
        int64_t i = 0;
#if defined(TESSEL_CPU_ISA_AVX512)
        // bf16_bits on 16 lanes (the bf16 outputs of the GEMMs spent a quarter of the product's
        // time in the element loop).
        if (stride == 1)
          for (; i + 16 <= n; i += 16)
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i),
                                bf16_bits(_mm512_loadu_ps(src + i)));
#endif
        for (; i < n; ++i) d[i * stride] = bf16_bits(src[i]);
      } else {
        for (int64_t i = 0; i < n; ++i) d[i * stride] = f64_to_bf16(src[i]);
      }
      return;
    }
    case DType::F16: {
      auto d = static_cast<uint16_t*>(dst);
      int64_t i = 0;
#if defined(TESSEL_CPU_ISA_AVX2) || defined(TESSEL_CPU_ISA_AVX512)
      if (stride == 1 && std::is_same_v<S, float>) {
        for (; i + 8 <= n; i += 8) {
          __m256 f;
          std::memcpy(&f, src + i, sizeof f);
          _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                           _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        }
      }
#endif
      for (; i < n; ++i)
        d[i * stride] = std::is_same_v<S, float> ? f32_to_f16(static_cast<float>(src[i]))
                                                 : f64_to_f16(static_cast<double>(src[i]));
      return;
    }
    default: {
      auto d = static_cast<uint8_t*>(dst);
      int size = dtype_size(dt);
      for (int64_t i = 0; i < n; ++i)
        store_from_f64(d + i * stride * size, dt, static_cast<double>(src[i]));
    }
  }
}

}  // namespace

void to_f32(const void* src, DType dt, int64_t stride, float* dst, int64_t n) {
  to_float(src, dt, stride, dst, n);
}
void to_f64(const void* src, DType dt, int64_t stride, double* dst, int64_t n) {
  to_float(src, dt, stride, dst, n);
}
void from_f32(const float* src, void* dst, DType dt, int64_t stride, int64_t n) {
  from_float(src, dst, dt, stride, n);
}
void from_f64(const double* src, void* dst, DType dt, int64_t stride, int64_t n) {
  from_float(src, dst, dt, stride, n);
}

TESSEL_ISA_END
