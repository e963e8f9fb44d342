// Shared by the normalization, fused-norm and positional kernels: strided tensor views read as
// row-major blocks of f32 / f64 (pointing into the tensor when it already is contiguous in the
// compute type), output blocks, and the row statistics of the layer and RMS norms.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <type_traits>
#include <vector>

#include "backends/cpu/convert.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN

// Registered from register_normalization (kernels/normalization_fused.cpp, positional.cpp).
void register_fused_norms(KernelRegistry& r);
void register_positional(KernelRegistry& r);

inline constexpr DTypeSet kNormFloats = dtypes::kFloat | dtypes::kFp8;

// Compute type T (float for every dtype but f64) and its vector.
template <class T>
inline constexpr DType kNative = std::is_same_v<T, double> ? DType::F64 : DType::F32;
template <class T>
using VecOf = std::conditional_t<std::is_same_v<T, double>, Vd, Vf>;

// Optional input i: absent both as HostTensor{} and when the node has fewer inputs.
inline HostTensor optional_input(std::span<const HostTensor> in, size_t i) {
  return i < in.size() ? in[i] : HostTensor{};
}

// A tensor view read in row-major order, with size-1 dims dropped and dims that are contiguous
// with their inner neighbour merged (so a contiguous tensor is one run).
struct StridedView {
  static constexpr int kMaxRank = 16;
  const uint8_t* base = nullptr;
  DType dtype = DType::F32;
  int esize = 4;
  int rank = 1;
  int64_t shape[kMaxRank] = {1};
  int64_t strides[kMaxRank] = {1};

  StridedView() = default;
  explicit StridedView(const HostTensor& t) : dtype(t.dtype), esize(dtype_size(t.dtype)) {
    if (t.storage) base = t.data();
    int64_t sh[kMaxRank], st[kMaxRank];
    int n = 0;
    for (int d = t.rank() - 1; d >= 0; --d) {
      if (t.shape[d] == 1) continue;
      if (n > 0 && t.strides[d] == st[n - 1] * sh[n - 1]) {
        sh[n - 1] *= t.shape[d];  // merged: the inner stride stays
        continue;
      }
      TESSEL_ASSERT(n < kMaxRank, "view of rank > ", kMaxRank);
      sh[n] = t.shape[d];
      st[n] = t.strides[d];
      ++n;
    }
    if (n == 0) return;  // one element
    rank = n;
    for (int i = 0; i < n; ++i) {
      shape[i] = sh[n - 1 - i];
      strides[i] = st[n - 1 - i];
    }
  }
  bool contiguous_in(DType dt) const { return dtype == dt && rank == 1 && strides[0] == 1; }
};

template <class T>
inline void load_run(const uint8_t* p, DType dt, int64_t stride, T* dst, int64_t n) {
  if constexpr (std::is_same_v<T, double>)
    to_f64(p, dt, stride, dst, n);
  else
    to_f32(p, dt, stride, dst, n);
}

// Elements [start, start + n) of `v` in row-major order: a pointer into the tensor when they are
// contiguous values of type T, else gathered and converted into buf (n elements).
template <class T>
const T* read(const StridedView& v, int64_t start, int64_t n, T* buf) {
  const int r = v.rank;
  const int64_t last = v.shape[r - 1], ls = v.strides[r - 1];
  int64_t idx_last = start % last, rest = start / last;
  int64_t idx[StridedView::kMaxRank];
  int64_t off = idx_last * ls;
  for (int d = r - 2; d >= 0; --d) {
    idx[d] = rest % v.shape[d];
    rest /= v.shape[d];
    off += idx[d] * v.strides[d];
  }
  if (v.dtype == kNative<T> && ls == 1 && idx_last + n <= last)
    return reinterpret_cast<const T*>(v.base) + off;
  int64_t done = 0;
  while (done < n) {
    const int64_t run = std::min(last - idx_last, n - done);
    load_run(v.base + off * v.esize, v.dtype, ls, buf + done, run);
    done += run;
    if (done == n) break;
    off -= idx_last * ls;
    idx_last = 0;
    for (int d = r - 2; d >= 0; --d) {
      off += v.strides[d];
      if (++idx[d] < v.shape[d]) break;
      off -= v.strides[d] * v.shape[d];
      idx[d] = 0;
    }
  }
  return buf;
}

// Where to compute output elements [start, start + n) of a contiguous output: in place when it
// holds T, else in buf, written back (rounded to the dtype) by commit.
template <class T>
T* out_block(const HostTensor& out, int64_t start, T* buf) {
  return out.dtype == kNative<T> ? reinterpret_cast<T*>(out.data()) + start : buf;
}
template <class T>
void commit(const HostTensor& out, int64_t start, const T* y, int64_t n) {
  if (out.dtype == kNative<T>) return;
  uint8_t* p = out.data() + start * dtype_size(out.dtype);
  if constexpr (std::is_same_v<T, double>)
    from_f64(y, p, out.dtype, 1, n);
  else
    from_f32(y, p, out.dtype, 1, n);
}

// Rounds n (<= kStageBlock) values to dtype dt and back: the rounding a decomposition's
// intermediate tensor of that dtype would apply. A no-op for T's own dtype.
template <class T>
void round_trip(T* p, int64_t n, DType dt) {
  if (dt == kNative<T>) return;
  alignas(64) uint8_t tmp[kStageBlock * 8];
  if constexpr (std::is_same_v<T, double>) {
    from_f64(p, tmp, dt, 1, n);
    to_f64(tmp, dt, 1, p, n);
  } else {
    from_f32(p, tmp, dt, 1, n);
    to_f32(tmp, dt, 1, p, n);
  }
}

// A per-element parameter (gamma, beta, ...) broadcast to `shape`, as contiguous T values:
// points into the tensor when it already is that, else a converted copy. Null when absent.
template <class T>
class ParamArray {
 public:
  ParamArray(const HostTensor& t, const Shape& shape) {
    if (!present(t)) return;
    StridedView v(broadcast_to(t, shape));
    const int64_t n = shape_numel(shape);
    if (n == 0) return;
    copy_.resize(static_cast<size_t>(n));
    ptr_ = read(v, 0, n, copy_.data());
  }
  const T* get() const { return ptr_; }
  const T* at(int64_t k) const { return ptr_ ? ptr_ + k : nullptr; }

 private:
  std::vector<T> copy_;
  const T* ptr_ = nullptr;
};

// Rows of at least ~16K elements per parallel chunk.
inline int64_t row_grain(int64_t row_len) {
  return std::max<int64_t>(1, 16384 / std::max<int64_t>(row_len, 1));
}

// A job run along a statistics pass (vec_sum, vec_sum_sq, RowStats::add): called once per
// iteration of the pass's main loop with the number of vectors that iteration read.
struct NoSideJob {
  void operator()(int) const {}
};

// Σ x, running `side` along.
template <class T, class Side = NoSideJob>
T vec_sum(const T* x, int64_t n, Side&& side = {}) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  V a0{}, a1{}, a2{}, a3{};
  int64_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    side(4);
    a0 += load<V>(x + i);
    a1 += load<V>(x + i + L);
    a2 += load<V>(x + i + 2 * L);
    a3 += load<V>(x + i + 3 * L);
  }
  for (; i + L <= n; i += L) a0 += load<V>(x + i);
  if (i < n) a1 += load_partial<V>(x + i, static_cast<int>(n - i));
  return reduce_add((a0 + a1) + (a2 + a3));
}

// Σ (x - c)² and, when `dev` is given, Σ (x - c) into it; `side` as for vec_sum. Four
// accumulators each, as vec_sum has: a row's statistics are a chain of dependent passes (sum, its
// reduction, this pass, the scalar tail), so each pass's own chain is kept short.
template <class T, class Side = NoSideJob>
T vec_sum_sq(const T* x, int64_t n, T c, T* dev = nullptr, Side&& side = {}) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  const V vc = splat<V>(c);
  V a[4] = {}, s[4] = {};
  int64_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    side(4);
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) {
      V d = load<V>(x + i + u * L) - vc;
      a[u] += d * d;
      s[u] += d;
    }
  }
  for (; i + L <= n; i += L) {
    V d = load<V>(x + i) - vc;
    a[0] += d * d;
    s[0] += d;
  }
  if (i < n) {
    V d = load_partial<V>(x + i, static_cast<int>(n - i), c) - vc;
    a[1] += d * d;
    s[1] += d;
  }
  if (dev) *dev = reduce_add((s[0] + s[1]) + (s[2] + s[3]));
  return reduce_add((a[0] + a[1]) + (a[2] + a[3]));
}

// The mean of x's first min(n, 16) elements (n > 0).
template <class T>
T first_mean(const T* x, int64_t n) {
  const int64_t h = std::min<int64_t>(n, 16);
  T c = 0;
  for (int64_t j = 0; j < h; ++j) c += x[j];
  return c / static_cast<T>(h);
}

// Mean and biased variance (or, uncentered, the mean square) of a row fed in blocks: each
// block two-pass in T while it is in L1 (or one pass, `provisional`), blocks merged in f64 (Chan et
// al.), so accuracy does not degrade with the row length.
template <class T>
struct RowStats {
  bool center = true;
  // Centred on the mean of the block's first 16 elements (one pass over it) where that lies
  // near the block's mean, instead of on its mean from a pass of its own (two passes). Taken by
  // the streamed layer norm's single rows (stream_rows: up to 8 KB, and longer rows it cannot
  // group; rows of whole vectors up to a block take the same centre in their own loop,
  // stream_whole_rows). Two threads, 8 rounds, the same spells' copy: 32768 × 512 0.61 → 0.71 in a
  // fast spell, 0.83 → 0.87 in a slow one. (Rows of 4096 in groups of 4 read 0.73 → 0.67 with it:
  // they keep two passes.)
  bool provisional = false;
  double mean = 0, m2 = 0;
  int64_t n = 0;

  // The block x[0, len), running `side` along its passes (vec_sum).
  template <class Side = NoSideJob>
  void add(const T* x, int64_t len, Side&& side = {}) {
    if (len == 0) return;
    if (!center) {
      add_about(x, len, T(0), T(0),
                static_cast<double>(vec_sum_sq<T>(x, len, T(0), nullptr, side)));
      return;
    }
    // Corrected two-pass: the deviations from a rough mean c give the exact block mean.
    const T c =
        provisional ? first_mean(x, len) : vec_sum<T>(x, len, side) * (T(1) / static_cast<T>(len));
    T dev = 0;
    const double sq = static_cast<double>(vec_sum_sq<T>(x, len, c, &dev, side));
    add_about(x, len, c, dev, sq, side);
  }
  // The block x[0, len) from its sums about c, taken by the caller: Σ (x - c) = dev and
  // Σ (x - c)² = sq (uncentred: Σ x² = sq).
  template <class Side = NoSideJob>
  void add_about(const T* x, int64_t len, T c, T dev, double sq, Side&& side = {}) {
    if (!center) {
      m2 += sq;
      n += len;
      return;
    }
    const double inv_len = 1.0 / static_cast<double>(len);
    double dm = static_cast<double>(dev) * inv_len;
    // A provisional centre far from the block's mean (the squares' sum more than twice the
    // deviations' about the mean: digits lost to cancellation) is replaced by the mean. (An
    // infinity in x makes the row NaN either way: its mean, or the mean's remainder in NormCoef.)
    if (provisional && static_cast<double>(len) * dm * dm > 0.5 * sq) {
      c = static_cast<T>(static_cast<double>(c) + dm);
      dev = 0;
      sq = static_cast<double>(vec_sum_sq<T>(x, len, c, &dev, side));
      dm = static_cast<double>(dev) * inv_len;
    }
    const double bm = static_cast<double>(c) + dm;
    const double block_m2 = std::max(0.0, sq - static_cast<double>(len) * dm * dm);
    if (n == 0) {  // the row's first block (a whole row up to kStageBlock): nothing to merge
      mean = bm;
      m2 = block_m2;
      n = len;
      return;
    }
    const double total = static_cast<double>(n + len);
    const double delta = bm - mean;
    mean += delta * static_cast<double>(len) / total;
    m2 += block_m2 + delta * delta * static_cast<double>(n) * static_cast<double>(len) / total;
    n += len;
  }
  double inv_std(double eps) const { return 1.0 / std::sqrt(m2 / static_cast<double>(n) + eps); }
};

// The row's normalization as y = ((x - hi) - lo) · inv: the mean split into T's rounding and
// the remainder, so a large mean costs no precision.
template <class T>
struct NormCoef {
  T hi = 0, lo = 0, inv = 1;
  NormCoef() = default;
  NormCoef(const RowStats<T>& s, double eps) {
    const double mean = s.center ? s.mean : 0.0;
    hi = static_cast<T>(mean);
    lo = static_cast<T>(mean - static_cast<double>(hi));
    inv = static_cast<T>(s.inv_std(eps));
  }
};

// y = ((x - hi) - lo) · inv · g + b over n elements; g, b per element, either may be null.
template <class T>
void normalize_block(const T* x, T* y, int64_t n, NormCoef<T> c, const T* g, const T* b) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  const V hi = splat<V>(c.hi), lo = splat<V>(c.lo), inv = splat<V>(c.inv);
  // By value: captured by reference, the coefficients are memory that a store to y might alias,
  // and were reloaded for every vector of the loops below.
  auto one = [=](int64_t i, int m) {
    V v = (m == L ? load<V>(x + i) : load_partial<V>(x + i, m));
    V r = ((v - hi) - lo) * inv;
    if (g) r *= (m == L ? load<V>(g + i) : load_partial<V>(g + i, m));
    if (b) r += (m == L ? load<V>(b + i) : load_partial<V>(b + i, m));
    if (m == L)
      store(y + i, r);
    else
      store_partial(y + i, r, m);
  };
  int64_t i = 0;
  if (g && b) {
    for (; i + L <= n; i += L) {
      V r = ((load<V>(x + i) - hi) - lo) * inv;
      store(y + i, r * load<V>(g + i) + load<V>(b + i));
    }
  } else if (g) {
    for (; i + L <= n; i += L) store(y + i, ((load<V>(x + i) - hi) - lo) * inv * load<V>(g + i));
  } else if (!b) {
    for (; i + L <= n; i += L) store(y + i, ((load<V>(x + i) - hi) - lo) * inv);
  }
  for (; i + L <= n; i += L) one(i, L);
  if (i < n) one(i, static_cast<int>(n - i));
}

// y = ((x - hi) - lo) · a + b with scalar a (inv · gamma) and b.
template <class T>
void normalize_block_scalar(const T* x, T* y, int64_t n, NormCoef<T> c, T a, T b) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  const V hi = splat<V>(c.hi), lo = splat<V>(c.lo), va = splat<V>(a), vb = splat<V>(b);
  int64_t i = 0;
  for (; i + L <= n; i += L) store(y + i, ((load<V>(x + i) - hi) - lo) * va + vb);
  if (i < n) {
    const int m = static_cast<int>(n - i);
    store_partial(y + i, ((load_partial<V>(x + i, m) - hi) - lo) * va + vb, m);
  }
}

TESSEL_ISA_END
