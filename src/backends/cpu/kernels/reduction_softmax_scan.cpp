// cpu kernels: Softmax (and log-softmax), the scans Cumsum / CumProd / CumMax, and ArgMax /
// ArgMin, each along one axis of x viewed as [outer, n, inner].
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/kernels/reduction_family.h"
#include "ir/graph.h"
#include "tessel/error.h"
// clang-format off
#include "backends/cpu/kernels/reduction_common.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

using namespace red;

// ---------------------------------------------------------------------------------------------
// Softmax: Σ e^(x - m) for a provisional m (kSlack), then scale; log-softmax: max, Σ e^(x - max),
// then x - max - log Σ. An all -inf row or one with NaN gives NaN (PyTorch). The row version needs
// no NaN test of its own: the max skips NaN, but e^(NaN - m) makes the sum
// NaN and with it the whole row (as does x - m for m = ±inf).

// Softmax's exponentials are taken against a provisional maximum, the row's first vector's,
// and the row's maximum is found along the exp pass: no max pass before it, and no reduction
// between the passes (two threads, 8 rounds, the same spells' copy: 32768 × 512 0.74 → 0.82,
// 4096 × 4096 0.67 → 0.72). How far above the provisional
// maximum the row's may lie: e^(x - m) up to e^16 (sums far from overflow), its exponent t =
// (x - m)·log2e up to 23, whose rounding (~1 ulp of t) then stays within ~1e-6 of the row's
// largest terms. A row past it (or with NaN in its first vector, or all -inf) has its exp pass
// redone against its maximum (redo_exp).
constexpr float kSlack = 16;

// The provisional maximum: the largest of the first vector's lanes. A NaN there need not reach
// it: the NaN's term makes the row's sum NaN, and with it the row. A tree of plain compares,
// inlined: out of line and NaN-testing (reduce_max_nan), it delayed every row's exp pass and
// spilled the pass's constants around the call (32768 × 512, the same spells' copy, 6
// alternating rounds: two threads 0.65 → 0.80 of it in a fast spell, one thread 0.80 → 0.88).
// The row maxima below (top) take the same tree: their running maxima never hold a NaN.
template <class T>
[[gnu::always_inline]] inline T first_max(const T* x, int64_t n) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  return reduce_max_tree(
      n >= L ? load<V>(x)
             : load_partial<V>(x, static_cast<int>(n), -std::numeric_limits<T>::infinity()));
}

// The exp pass again, against the row's maximum m: e[0, n) = e^(x - m) (whole vectors of e,
// n rounded up, when `whole`; else the tail written partially), returning their sum.
template <class T>
T redo_exp(const T* x, T* e, int64_t n, T m, bool whole) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  const auto exp_m = exp_below(m);
  V s{};
  int64_t k = 0;
  for (; k + L <= n; k += L) {
    V v = exp_m(load<V>(x + k));
    store(e + k, v);
    s += v;
  }
  if (k < n) {
    const int r = static_cast<int>(n - k);
    V v = keep_first(exp_m(load_partial<V>(x + k, r)), r);
    if (whole)
      store(e + k, v);
    else
      store_partial(e + k, v, r);
    s += v;
  }
  return reduce_add(s);
}

// A row's exp pass: e[0, n) = e^(x - m) against the row's provisional maximum (first_max), the
// row's maximum found along it and the pass redone against that where it lies past kSlack;
// returns Σ e. `whole`: e has room for n rounded up to whole vectors (a partial tail is stored
// whole). Along each whole vector at i, x is requested kAheadBytes on (`request`) and side(i)
// runs (softmax_whole_rows writes the previous row's vector i there).
template <class T, class Side>
[[gnu::always_inline]] inline T exp_pass(const T* x, T* e, int64_t n, bool whole, bool request,
                                         Side side) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  const T ninf = -std::numeric_limits<T>::infinity();
  const T m0 = first_max(x, n);
  const auto exp_m = exp_below(m0);
  // Prefetches never fault: running past the tensor's end is harmless.
  const T* ahead = x + kAheadBytes / static_cast<int64_t>(sizeof(T));
  // One running maximum, not one a vector: with 16 registers (AVX2) the loop's constants and
  // four accumulators left one sum in memory, a chain through a store and a load every step.
  V a0 = splat<V>(ninf), s0{}, s1{};
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    if (request) {
      request_line(ahead + i);
      if constexpr (L * sizeof(T) >= 64) request_line(ahead + i + L);  // (else the same line)
    }
    const V v0 = load<V>(x + i), v1 = load<V>(x + i + L);
    const V top2 = v0 > v1 ? v0 : v1;  // NaN: v1's or NaN, which the next compare skips
    a0 = top2 > a0 ? top2 : a0;
    const V e0 = exp_m(v0), e1 = exp_m(v1);
    store(e + i, e0);
    store(e + i + L, e1);
    side(i);
    side(i + L);
    s0 += e0;
    s1 += e1;
  }
  if (i + L <= n) {
    if (request) request_line(ahead + i);
    const V v0 = load<V>(x + i);
    a0 = v0 > a0 ? v0 : a0;
    const V e0 = exp_m(v0);
    store(e + i, e0);
    side(i);
    s0 += e0;
    i += L;
  }
  if (i < n) {
    const int rem = static_cast<int>(n - i);
    const V v = load_partial<V>(x + i, rem, ninf);
    a0 = v > a0 ? v : a0;
    const V e0 = keep_first(exp_m(v), rem);
    if (whole)
      store(e + i, e0);
    else
      store_partial(e + i, e0, rem);
    s1 += e0;
  }
  const T top = reduce_max_tree(a0);
  return top - m0 <= kSlack ? reduce_add(s0 + s1) : redo_exp(x, e, n, top, whole);
}

template <class T>
void softmax_row(const T* x, T* y, int64_t n, bool log, T* tmp) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  const T ninf = -std::numeric_limits<T>::infinity();
  V acc0 = splat<V>(ninf), acc1 = acc0;
  int64_t i = 0;
  const int rem = static_cast<int>(n % L);
  if (log) {
    for (; i + 2 * L <= n; i += 2 * L) {
      V v0 = load<V>(x + i), v1 = load<V>(x + i + L);
      acc0 = v0 > acc0 ? v0 : acc0;
      acc1 = v1 > acc1 ? v1 : acc1;
    }
    for (; i + L <= n; i += L) {
      V v = load<V>(x + i);
      acc0 = v > acc0 ? v : acc0;
    }
    if (rem > 0) {
      V v = load_partial<V>(x + i, rem, ninf);
      acc1 = v > acc1 ? v : acc1;
    }
    const T m = reduce_max_tree(acc1 > acc0 ? acc1 : acc0);  // a tree: no serial chain per row
    const double s = sum_map(x, n, exp_below(m));
    // (x - m) - log s: x - (m + log s) would round m + log s to T first, an error of half
    // m's ulp in every output (~1e-4 for logits near 3000).
    const V mv = splat<V>(m), logs = splat<V>(static_cast<T>(std::log(s)));
    for (i = 0; i + L <= n; i += L) store(y + i, (load<V>(x + i) - mv) - logs);
    if (rem > 0) store_partial(y + i, (load_partial<V>(x + i, rem) - mv) - logs, rem);
    return;
  }
  // e^(x - m) is written once and rescaled, saving a second exp per element. Into `tmp` (a
  // cache-resident, vector-aligned row of the caller's, padded to whole vectors) when y is
  // streamed, so that y is written once, past the cache; else into y.
  T* e = tmp ? tmp : y;
  const double s =
      static_cast<double>(exp_pass(x, e, n, tmp != nullptr, tmp != nullptr, [](int64_t) {}));
  const V inv = splat<V>(static_cast<T>(1.0 / s));
  if (tmp) {
    store_row_stream<V>(y, n, [tmp, inv](int64_t k) { return load<V>(tmp + k) * inv; });
    return;
  }
  for (i = 0; i + L <= n; i += L) store(y + i, load<V>(y + i) * inv);
  if (i < n) {
    int r = static_cast<int>(n - i);
    store_partial(y + i, load_partial<V>(y + i, r) * inv, r);
  }
}

// softmax_row's streamed path for rows [r0, r1) of n elements each, n whole vectors and y
// vector-aligned, in one loop a row shaped like the copy it is measured against (as layer norm's
// stream_whole_rows): each step reads two vectors of x, stores their exponentials into the row's
// half of `tmp` (two rows `stride` elements apart), writes two vectors of the previous row from
// its half, and requests two lines kAheadBytes on. Reads and writes share the memory's time;
// a row written in a burst after its exp pass left reads idle (1.27× slower at 4096 × 4096 and
// 1.3× at 32768 × 512, two threads). Each row's arithmetic, and so its result, is softmax_row's.
template <class T>
void softmax_whole_rows(const T* x0, T* y0, int64_t n, int64_t r0, int64_t r1, T* tmp,
                        int64_t stride) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  const T* pe = nullptr;  // the previous row's exponentials, written along this row's
  T* py = nullptr;
  V pinv{};
  for (int64_t row = r0; row < r1; ++row) {
    const T* x = x0 + row * n;
    T* e = tmp + (row % 2) * stride;
    const T s = exp_pass(x, e, n, true, true, [py, pe, pinv](int64_t i) {
      if (py) store_stream(py + i, load<V>(pe + i) * pinv);
    });
    pinv = splat<V>(static_cast<T>(1.0 / static_cast<double>(s)));
    pe = e;
    py = y0 + row * n;
  }
  if (py)
    for (int64_t i = 0; i < n; i += L) store_stream(py + i, load<V>(pe + i) * pinv);
  stream_fence();
}

// Softmax of one [n, w] column block (w <= lanes) of a [n, inner] slab, lanes across columns.
template <class T>
void softmax_columns(const T* x, T* y, int64_t n, int64_t inner, int w, bool log) {
  using V = VecOf<T>;
  using M = decltype(V{} < V{});
  constexpr int L = kLanes<V>;
  const T ninf = -std::numeric_limits<T>::infinity();
  auto ld = [&](const T* p) { return w == L ? load<V>(p) : load_partial<V>(p, w, ninf); };
  V m = splat<V>(ninf);
  M nan{};
  for (int64_t k = 0; k < n; ++k) {
    V v = ld(x + k * inner);
    m = v > m ? v : m;
    nan |= v != v;
  }
  m = nan ? splat<V>(std::numeric_limits<T>::quiet_NaN()) : m;
  V s{};
  for (int64_t k = 0; k < n; ++k) s += vexp(ld(x + k * inner) - m);
  V logs, inv;
  for (int l = 0; l < L; ++l) {
    logs[l] = static_cast<T>(std::log(static_cast<double>(s[l])));
    inv[l] = static_cast<T>(1.0 / static_cast<double>(s[l]));
  }
  for (int64_t k = 0; k < n; ++k) {
    V v = ld(x + k * inner);
    V r = log ? (v - m) - logs : vexp(v - m) * inv;
    if (w == L)
      store(y + k * inner, r);
    else
      store_partial(y + k * inner, r, w);
  }
}

template <class T>
void softmax_typed(const HostTensor& xt, const HostTensor& yt, const AxisView& a, bool log) {
  Staged<T> x = stage<T>(xt);
  OutBuf<T> y(yt);
  constexpr int L = kLanes<VecOf<T>>;
  if (a.inner == 1) {
    // Outputs ≫ cache are streamed (rows up to 256 KB staged in a cache-resident buffer).
    const bool stream = !log && xt.numel() * static_cast<int64_t>(sizeof(T)) >= kStreamBytes &&
                        a.n * static_cast<int64_t>(sizeof(T)) <= (256 << 10);
    // Two staged rows, their starts half a page apart modulo 4 KB: the exp pass stores to one
    // while loading from the other at the same offset, and loads whose address matches an older
    // store's in its low 12 bits wait for it (16 KB + 64 B apart, 4096-wide rows were 7% slower).
    const int64_t page = 4096 / static_cast<int64_t>(sizeof(T));
    const int64_t stride = (a.n + L + page - 1) / page * page + page / 2;
    if (stream && a.n % L == 0 && reinterpret_cast<uintptr_t>(y.p) % kVectorBytes == 0) {
      // One part a thread. Against rows in pairs (≤ 4 KB) or single rows with the previous one
      // pending, in 8 parts (two threads, 6 alternating rounds, the same spells' copy):
      // 32768 × 512 0.74 → 0.95 of it, 4096 × 4096 0.75 → 0.90; one thread 0.60 → 1.04 and
      // 1.04 → 1.05.
      parallel_for(a.outer, (a.outer + num_threads() - 1) / num_threads(),
                   [&](int64_t r0, int64_t r1) {
                     AlignedVector<T> tmp(static_cast<size_t>(2 * stride));
                     softmax_whole_rows(x.p, y.p, a.n, r0, r1, tmp.data(), stride);
                   });
    } else {
      parallel_for(a.outer, std::max<int64_t>(1, kGrainElems / std::max<int64_t>(a.n, 1)),
                   [&](int64_t b, int64_t e) {
                     AlignedVector<T> tmp(stream ? static_cast<size_t>(stride) : 0);
                     for (int64_t o = b; o < e; ++o)
                       softmax_row(x.p + o * a.n, y.p + o * a.n, a.n, log,
                                   stream ? tmp.data() : nullptr);
                     if (stream) stream_fence();
                   });
    }
  } else {
    const int64_t tiles = (a.inner + L - 1) / L;
    parallel_for(a.outer * tiles, std::max<int64_t>(1, kGrainElems / std::max<int64_t>(a.n * L, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t item = b; item < e; ++item) {
                     int64_t o = item / tiles, j0 = (item % tiles) * L;
                     int w = static_cast<int>(std::min<int64_t>(L, a.inner - j0));
                     int64_t off = o * a.n * a.inner + j0;
                     softmax_columns(x.p + off, y.p + off, a.n, a.inner, w, log);
                   }
                 });
  }
  y.finish();
}

void softmax_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  if (x.numel() == 0) return;
  AxisView a(x.shape, node.attrs.i("axis"));
  bool log = node.attrs.b("log");
  if (x.dtype == DType::F64)
    softmax_typed<double>(x, out[0], a, log);
  else
    softmax_typed<float>(x, out[0], a, log);
}

// ---------------------------------------------------------------------------------------------
// Scans: acc = step(acc, x) along the axis (backwards when reverse). Floats accumulate in f64
// like the reference; integers in i64 modulo 2^64.

enum class Scan { Sum, Prod, Max };

template <class T, class A, class Step>
void scan_typed(const HostTensor& xt, const HostTensor& yt, const AxisView& a, bool reverse,
                bool exclusive, A identity, Step step) {
  Staged<T> x = stage<T>(xt);
  OutBuf<T> y(yt);
  const int64_t n = a.n, inner = a.inner;
  // Whole [n, inner] slabs per task; a slab walks k in order so each column's acc is live.
  parallel_for(a.outer, std::max<int64_t>(1, kGrainElems / std::max<int64_t>(n * inner, 1)),
               [&](int64_t b, int64_t e) {
                 std::vector<A> acc(static_cast<size_t>(inner));
                 for (int64_t o = b; o < e; ++o) {
                   const T* xs = x.p + o * n * inner;
                   T* ys = y.p + o * n * inner;
                   for (int64_t j = 0; j < n; ++j) {
                     int64_t k = reverse ? n - 1 - j : j;
                     const T* xr = xs + k * inner;
                     T* yr = ys + k * inner;
                     if (exclusive) {
                       if (j == 0) std::fill(acc.begin(), acc.end(), identity);
                       for (int64_t i = 0; i < inner; ++i) {
                         yr[i] = static_cast<T>(acc[i]);
                         acc[i] = step(acc[i], static_cast<A>(xr[i]));
                       }
                     } else if (j == 0) {
                       for (int64_t i = 0; i < inner; ++i) {
                         acc[i] = static_cast<A>(xr[i]);
                         yr[i] = xr[i];
                       }
                     } else {
                       for (int64_t i = 0; i < inner; ++i) {
                         acc[i] = step(acc[i], static_cast<A>(xr[i]));
                         yr[i] = static_cast<T>(acc[i]);
                       }
                     }
                   }
                 }
               });
  y.finish();
}

void scan_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out,
                 Scan kind) {
  const HostTensor& x = in[0];
  if (x.numel() == 0) return;
  AxisView a(x.shape, node.attrs.i("axis"));
  bool reverse = node.attrs.b("reverse");
  bool exclusive = kind == Scan::Sum && node.attrs.b("exclusive");
  const HostTensor& y = out[0];
  if (is_integer(x.dtype) || x.dtype == DType::Bool) {
    switch (kind) {
      case Scan::Sum:
        return scan_typed<int64_t, uint64_t>(x, y, a, reverse, exclusive, 0,
                                             [](uint64_t s, uint64_t v) { return s + v; });
      case Scan::Prod:
        return scan_typed<int64_t, uint64_t>(x, y, a, reverse, false, 1,
                                             [](uint64_t s, uint64_t v) { return s * v; });
      case Scan::Max:
        return scan_typed<int64_t, int64_t>(x, y, a, reverse, false, 0,
                                            [](int64_t s, int64_t v) { return std::max(s, v); });
    }
  }
  auto run = [&](auto zero) {
    using T = decltype(zero);
    switch (kind) {
      case Scan::Sum:
        return scan_typed<T, double>(x, y, a, reverse, exclusive, 0.0,
                                     [](double s, double v) { return s + v; });
      case Scan::Prod:
        return scan_typed<T, double>(x, y, a, reverse, false, 1.0,
                                     [](double s, double v) { return s * v; });
      case Scan::Max:
        // Once a NaN is seen the running maximum stays NaN (torch.cummax).
        return scan_typed<T, double>(x, y, a, reverse, false, 0.0, max_nan_d);
    }
  };
  if (x.dtype == DType::F64)
    run(0.0);
  else
    run(0.0f);
}

void cumsum_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  scan_kernel(node, in, out, Scan::Sum);
}
void cumprod_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  scan_kernel(node, in, out, Scan::Prod);
}
void cummax_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  scan_kernel(node, in, out, Scan::Max);
}

// ---------------------------------------------------------------------------------------------
// ArgMax / ArgMin: first occurrence (last with select_last); NaN is the extreme of both.

template <class T>
void arg_extreme_typed(const HostTensor& xt, const HostTensor& y, const AxisView& a, bool want_max,
                       bool last) {
  Staged<T> x = stage<T>(xt);
  int64_t* out = reinterpret_cast<int64_t*>(y.data());
  const int64_t n = a.n, inner = a.inner;
  if (inner == 1) {
    parallel_for(a.outer, std::max<int64_t>(1, kGrainElems / n), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) out[o] = arg_extreme_row(x.p + o * n, n, want_max, last);
    });
    return;
  }
  auto is_nan = [](T v) { return v != v; };
  parallel_for(a.outer, std::max<int64_t>(1, kGrainElems / (n * inner)), [&](int64_t b, int64_t e) {
    std::vector<T> best_v(static_cast<size_t>(inner));
    for (int64_t o = b; o < e; ++o) {
      const T* xs = x.p + o * n * inner;
      int64_t* best = out + o * inner;
      for (int64_t i = 0; i < inner; ++i) {
        best[i] = 0;
        best_v[i] = xs[i];
      }
      for (int64_t k = 1; k < n; ++k)
        for (int64_t i = 0; i < inner; ++i) {
          T v = xs[k * inner + i], bv = best_v[i];
          bool same = v == bv || (is_nan(v) && is_nan(bv));
          bool better = !is_nan(bv) && (is_nan(v) || (want_max ? v > bv : v < bv));
          if (better || (last && same)) {
            best[i] = k;
            best_v[i] = v;
          }
        }
    }
  });
}

void arg_extreme_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out,
                        bool want_max) {
  const HostTensor& x = in[0];
  AxisView a(x.shape, node.attrs.i("axis"));
  if (a.n == 0)
    throw_error(ErrorKind::Value, node.where(), ": the axis is empty (x ", shape_str(x.shape),
                "), so there is no index to return");
  if (out[0].numel() == 0) return;
  bool last = node.attrs.b("select_last");
  if (is_integer(x.dtype) || x.dtype == DType::Bool)
    arg_extreme_typed<int64_t>(x, out[0], a, want_max, last);
  else if (x.dtype == DType::F64)
    arg_extreme_typed<double>(x, out[0], a, want_max, last);
  else
    arg_extreme_typed<float>(x, out[0], a, want_max, last);
}

void argmax_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  arg_extreme_kernel(node, in, out, true);
}
void argmin_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  arg_extreme_kernel(node, in, out, false);
}

}  // namespace

void register_softmax_scan(KernelRegistry& r) {
  const DTypeSet floats = dtypes::kFloat | dtypes::kFp8;
  const DTypeSet numbers = floats | dtypes::kInt;
  r.native(OpKind::Softmax, softmax_kernel, floats);
  r.native(OpKind::Cumsum, cumsum_kernel, numbers);
  r.native(OpKind::CumProd, cumprod_kernel, numbers);
  r.native(OpKind::CumMax, cummax_kernel, numbers);
  r.native(OpKind::ArgMax, argmax_kernel, numbers | DTypeSet{DType::Bool});
  r.native(OpKind::ArgMin, argmin_kernel, numbers | DTypeSet{DType::Bool});
}
TESSEL_ISA_END
