// Helpers shared by the reduction, softmax / scan / ordering and losses kernel files: the
// [outer, n, inner] view around an axis, staging any dtype into a contiguous f32 / f64 / i64
// buffer (and back), an f64 vector exp, e^(x - max), and the blocked sums long f32 reductions need
// for accuracy.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "backends/cpu/convert.h"
#include "runtime/host_allocator.h"
#include "runtime/thread_pool.h"
#include "tessel/host_tensor.h"
// clang-format off
#include "backends/cpu/simd.h"
#include "backends/cpu/simd_math.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace red {

// Work (in elements) below which a chunk is not worth a thread.
inline constexpr int64_t kGrainElems = 16384;

// x viewed as [outer, n, inner] around one axis (rank 0: one length-1 axis).
struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
  AxisView() = default;
  AxisView(const Shape& shape, int64_t axis) {
    int rank = static_cast<int>(shape.size());
    if (rank == 0) return;
    if (axis < 0) axis += rank;
    for (int d = 0; d < rank; ++d) {
      if (d < axis) outer *= shape[d];
      if (d > axis) inner *= shape[d];
    }
    n = shape[axis];
  }
};

template <class T>
using VecOf = std::conditional_t<std::is_same_v<T, float>, Vf, Vd>;

// The native dtype of a compute type.
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>)
    return DType::F32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::F64;
  else
    return DType::I64;
}

// Integers and bool into i64 (bool: 0 / 1), strided source.
template <class S>
inline void gather_i64(const S* s, int64_t stride, int64_t* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<int64_t>(s[i * stride]);
}
inline void to_i64(const void* src, DType dt, int64_t stride, int64_t* dst, int64_t n) {
  switch (dt) {
    case DType::Bool: {
      auto s = static_cast<const uint8_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = s[i * stride] != 0;
      return;
    }
    case DType::U8:
      return gather_i64(static_cast<const uint8_t*>(src), stride, dst, n);
    case DType::I8:
      return gather_i64(static_cast<const int8_t*>(src), stride, dst, n);
    case DType::I16:
      return gather_i64(static_cast<const int16_t*>(src), stride, dst, n);
    case DType::I32:
      return gather_i64(static_cast<const int32_t*>(src), stride, dst, n);
    case DType::I64:
      return gather_i64(static_cast<const int64_t*>(src), stride, dst, n);
    default: {  // floats never reach the integer paths; truncate like a C cast if they do
      std::vector<double> tmp(static_cast<size_t>(n));
      to_f64(src, dt, stride, tmp.data(), n);
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int64_t>(tmp[i]);
      return;
    }
  }
}
// i64 into an integer dtype (two's complement wrap) or bool (x != 0); contiguous.
template <class D>
inline void scatter_i64(const int64_t* s, D* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<D>(s[i]);
}
inline void from_i64(const int64_t* src, void* dst, DType dt, int64_t n) {
  switch (dt) {
    case DType::Bool: {
      auto d = static_cast<uint8_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = src[i] != 0;
      return;
    }
    case DType::U8:
      return scatter_i64(src, static_cast<uint8_t*>(dst), n);
    case DType::I8:
      return scatter_i64(src, static_cast<int8_t*>(dst), n);
    case DType::I16:
      return scatter_i64(src, static_cast<int16_t*>(dst), n);
    case DType::I32:
      return scatter_i64(src, static_cast<int32_t*>(dst), n);
    case DType::I64:
      return scatter_i64(src, static_cast<int64_t*>(dst), n);
    default: {
      std::vector<double> tmp(src, src + n);
      from_f64(tmp.data(), dst, dt, 1, n);
      return;
    }
  }
}

template <class T>
inline void load_strided(const void* src, DType dt, int64_t stride, T* dst, int64_t n) {
  if constexpr (std::is_same_v<T, float>)
    to_f32(src, dt, stride, dst, n);
  else if constexpr (std::is_same_v<T, double>)
    to_f64(src, dt, stride, dst, n);
  else
    to_i64(src, dt, stride, dst, n);
}
template <class T>
inline void store_contiguous(const T* src, void* dst, DType dt, int64_t n) {
  if constexpr (std::is_same_v<T, float>)
    from_f32(src, dst, dt, 1, n);
  else if constexpr (std::is_same_v<T, double>)
    from_f64(src, dst, dt, 1, n);
  else
    from_i64(src, dst, dt, n);
}

// A tensor's elements in row-major order as a contiguous array of T: its own memory when it
// already is one, else a staged copy (any strides, broadcast, offset, dtype).
template <class T>
struct Staged {
  const T* p = nullptr;
  std::shared_ptr<Storage> owner;
};

template <class T>
Staged<T> stage(const HostTensor& x) {
  Staged<T> s;
  int64_t total = x.numel();
  if (x.dtype == dtype_of<T>() && x.is_contiguous() && total > 0) {
    s.p = reinterpret_cast<const T*>(x.data());
    return s;
  }
  s.owner = host_allocate(static_cast<size_t>(std::max<int64_t>(total, 1)) * sizeof(T));
  T* dst = reinterpret_cast<T*>(s.owner->bytes.get());
  s.p = dst;
  if (total == 0) return s;
  // Coalesce the view's dims (drop size-1 dims, merge dims that are contiguous to each other)
  // so rows are as long as possible.
  std::vector<int64_t> shape, strides;
  for (int d = 0; d < x.rank(); ++d) {
    if (x.shape[d] == 1) continue;
    if (!shape.empty() && strides.back() == x.shape[d] * x.strides[d]) {
      shape.back() *= x.shape[d];
      strides.back() = x.strides[d];
    } else {
      shape.push_back(x.shape[d]);
      strides.push_back(x.strides[d]);
    }
  }
  if (shape.empty()) {
    shape.push_back(1);
    strides.push_back(1);
  }
  const int rank = static_cast<int>(shape.size());
  const int64_t len = shape.back(), stride = strides.back(), rows = total / len;
  const int esize = dtype_size(x.dtype);
  const uint8_t* base = x.storage->bytes.get();
  if (rows == 1) {  // one long row: split it
    int64_t chunk = 65536;
    parallel_for((len + chunk - 1) / chunk, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        int64_t i0 = c * chunk, m = std::min(chunk, len - i0);
        load_strided<T>(base + (x.offset + i0 * stride) * esize, x.dtype, stride, dst + i0, m);
      }
    });
    return s;
  }
  parallel_for(rows, std::max<int64_t>(1, kGrainElems / len), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      int64_t off = x.offset, rem = r;
      for (int d = rank - 2; d >= 0; --d) {
        off += (rem % shape[d]) * strides[d];
        rem /= shape[d];
      }
      load_strided<T>(base + off * esize, x.dtype, stride, dst + r * len, len);
    }
  });
  return s;
}

// Where a kernel writes its T results for the contiguous output `y`: y's memory when y is of
// dtype T, else a scratch buffer that finish() converts into y.
template <class T>
struct OutBuf {
  T* p = nullptr;
  std::shared_ptr<Storage> owner;
  const HostTensor* y = nullptr;
  explicit OutBuf(const HostTensor& out) : y(&out) {
    if (out.dtype == dtype_of<T>() && out.numel() > 0) {
      p = reinterpret_cast<T*>(out.data());
    } else {
      owner = host_allocate(static_cast<size_t>(std::max<int64_t>(out.numel(), 1)) * sizeof(T));
      p = reinterpret_cast<T*>(owner->bytes.get());
    }
  }
  void finish() const {
    int64_t total = y->numel(), chunk = 65536;
    if (!owner || total == 0) return;
    parallel_for((total + chunk - 1) / chunk, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        int64_t i0 = c * chunk;
        store_contiguous<T>(p + i0, y->element_ptr(y->offset + i0), y->dtype,
                            std::min(chunk, total - i0));
      }
    });
  }
};

// Lanes at or past n set to zero.
template <class V>
inline V keep_first(V v, int n) {
  using M = decltype(v < v);
  return iota<M>() < splat<M>(static_cast<Lane<M>>(n)) ? v : V{};
}

// e^x on f64 lanes: libm per lane (f64 accuracy; f64 is not the fast path). Vf: simd_math.h.
inline Vd vexp(Vd x) {
  Vd y;
  for (int i = 0; i < kLanesD; ++i) y[i] = std::exp(x[i]);
  return y;
}

// v ↦ e^(v - m) for v <= m: ExpBelow on f32 lanes, vexp(v - m) on f64.
template <class T>
inline auto exp_below(T m) {
  if constexpr (std::is_same_v<T, float>)
    return ExpBelow(m);
  else
    return [mv = splat<Vd>(m)](Vd v) { return vexp(v - mv); };
}

// Σ f(v) over x[0, n) (f maps a vector to a vector; lanes past n are dropped), in T vectors
// flushed to f64 every block, so a long f32 sum stays close to the f64 reference.
template <class T, class F>
inline double sum_map(const T* x, int64_t n, F f) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  constexpr int64_t kBlock = 4096;
  double total = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    int64_t e = std::min(n, b + kBlock), i = b;
    V a0{}, a1{}, a2{}, a3{};
    for (; i + 4 * L <= e; i += 4 * L) {
      a0 += f(load<V>(x + i));
      a1 += f(load<V>(x + i + L));
      a2 += f(load<V>(x + i + 2 * L));
      a3 += f(load<V>(x + i + 3 * L));
    }
    for (; i + L <= e; i += L) a0 += f(load<V>(x + i));
    if (i < e) {
      int rem = static_cast<int>(e - i);
      a1 += keep_first(f(load_partial<V>(x + i, rem)), rem);
    }
    total += static_cast<double>(reduce_add((a0 + a1) + (a2 + a3)));
  }
  return total;
}

// Runs fn(o, row, len) -> R for each of `outer` contiguous rows of n elements into out[o],
// threaded over rows; a few long rows are split into chunks combined with comb.
template <class R, class T, class Fn, class Comb>
void for_rows(const T* x, int64_t outer, int64_t n, R* out, Fn fn, Comb comb) {
  constexpr int64_t kSplit = 65536;
  if (outer < num_threads() && n >= 2 * kSplit) {
    int64_t chunks = (n + kSplit - 1) / kSplit;
    std::vector<R> part(static_cast<size_t>(chunks));
    for (int64_t o = 0; o < outer; ++o) {
      parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c)
          part[c] = fn(o, x + o * n + c * kSplit, std::min(kSplit, n - c * kSplit));
      });
      R r = part[0];
      for (int64_t c = 1; c < chunks; ++c) r = comb(r, part[c]);
      out[o] = r;
    }
    return;
  }
  parallel_for(outer, std::max<int64_t>(1, kGrainElems / std::max<int64_t>(n, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t o = b; o < e; ++o) out[o] = fn(o, x + o * n, n);
               });
}

inline double max_nan_d(double a, double b) { return std::isnan(a) || a > b ? a : b; }
inline double min_nan_d(double a, double b) { return std::isnan(a) || a < b ? a : b; }

// The first maximum (want_max) or minimum of a contiguous row, NaN counting as the extreme
// (the first NaN wins); with last, the last of the equal extremes. n >= 1.
template <class T>
int64_t arg_extreme_row(const T* x, int64_t n, bool want_max, bool last) {
  if constexpr (std::is_floating_point_v<T>) {
    using V = VecOf<T>;
    using M = decltype(V{} < V{});
    constexpr int L = kLanes<V>;
    const T init =
        want_max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    V acc = splat<V>(init);
    M nan{};
    int64_t i = 0;
    for (; i + L <= n; i += L) {
      V v = load<V>(x + i);
      acc = want_max ? (v > acc ? v : acc) : (v < acc ? v : acc);
      nan |= v != v;
    }
    for (; i < n; ++i) {
      T v = x[i];
      if (v != v) nan[0] = -1;
      if (want_max ? v > acc[0] : v < acc[0]) acc[0] = v;
    }
    bool any_nan = false;
    for (int l = 0; l < L; ++l) any_nan |= nan[l] != 0;
    T m = want_max ? reduce_max(acc) : reduce_min(acc);
    auto hit = [&](T v) { return any_nan ? v != v : v == m; };
    if (last) {
      for (int64_t k = n - 1; k >= 0; --k)
        if (hit(x[k])) return k;
    } else {
      for (int64_t k = 0; k < n; ++k)
        if (hit(x[k])) return k;
    }
    return 0;
  } else {
    int64_t best = 0;
    for (int64_t k = 1; k < n; ++k) {
      bool better = want_max ? x[k] > x[best] : x[k] < x[best];
      if (better || (last && x[k] == x[best])) best = k;
    }
    return best;
  }
}

}  // namespace red
TESSEL_ISA_END
