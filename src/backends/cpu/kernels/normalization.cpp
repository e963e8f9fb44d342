// cpu kernels of the Normalization category: LayerNorm, RmsNorm (rows over [axis, rank)),
// GroupNorm, LayerNorm2d and BatchNormInference (channels-first). Statistics in f32 blocks merged
// in f64 (f64 for f64 tensors); f16 / bf16 / fp8 are staged through f32 a block at a time.
#include "backends/cpu/normalization.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/families.h"
#include "runtime/thread_pool.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

constexpr int64_t B = kStageBlock;

// ---------------------------------------------------------------------------------------------
// LayerNorm / RmsNorm: each row of `inner` elements normalized on its own.

// Streamed rows (x and y contiguous T, y ≫ cache) run as a pipeline one group of R rows deep:
// while the statistics passes read the rows of group g, group g - 1, pending, is normalized and
// written past the cache, and x is requested kAheadBytes ahead, one vector of output for every
// `passes` vectors the passes read. Reads and writes then share the memory's time through the
// whole row, as softmax's do. (Before, a row's statistics passes ran with only reads in flight
// and its normalization, into an L1 block streamed out, with the writes: on two threads
// 4096 × 4096 took 1.27× this time, 32768 × 512 1.03×.) A group is written a column at a time,
// each vector of gamma and beta loaded once for its R rows: at 4096 columns gamma and beta
// (16 KB each) and the rows in flight exceed L1's 48 KB, and read once a row, they came from L2
// (bench/cpu_overlap: a pipelined two-pass loop with a 16 KB scale and shift ran at 0.5 of the
// copy, with 4 KB ones 0.8). R > 1 needs every row of y to begin on a 64-byte boundary and to
// hold whole vectors; R = 1 takes any row.
template <class T, bool kCenter, int R>
class NormPipeline {
  using V = VecOf<T>;
  static constexpr int L = kLanes<V>;
  static constexpr int kPasses = kCenter && R > 1 ? 2 : 1;  // RowStats::provisional

 public:
  // Rows of n elements; gamma and beta (either may be null) n elements each.
  NormPipeline(int64_t n, const T* gamma, const T* beta) : n_(n), g_(gamma), b_(beta) {}

  // A row's passes begin; `ahead` (or null): the row's n elements to request along them.
  void begin(const T* ahead) {
    ahead_ = ahead;
    a_ = 0;
  }
  // Along a pass: it read `vectors`.
  void operator()(int vectors) {
    for (int u = 0; u < vectors / kPasses; ++u) {
      if (++credit_ == R) {
        credit_ = 0;
        if (i_ < body_end_) {
          column(position(i_));
          i_ += L;
        }
      }
      if (ahead_ && a_ < n_) {
        request_line(ahead_ + a_);
        a_ += L;
      }
    }
  }
  // A row's passes ended with its coefficients c; once R rows have, the pending group is
  // completed and they become it.
  void end(const T* x, T* y, NormCoef<T> c) {
    for (; ahead_ && a_ < n_; a_ += L) request_line(ahead_ + a_);
    push({x, y, c});
  }
  // Writes what remains: a group of fewer than R rows repeats its last row (written twice).
  void flush() {
    while (k_ > 0) push(next_[R - 1]);
    complete();
  }

 private:
  struct Row {
    const T* x;
    T* y;
    NormCoef<T> c;
  };

  // The rows collected for the next group shift down a place as each is added (next_ indexed
  // only by constants).
  void push(Row row) {
    unrolled<R - 1>([&](auto k) { next_[k] = next_[k + 1]; });
    next_[R - 1] = row;
    if (++k_ == R) advance();
  }
  void advance() {
    complete();
    k_ = 0;
    credit_ = 0;
    reverse_ = !reverse_;
    unrolled<R>([&](auto k) {
      x_[k] = next_[k].x;
      y_[k] = next_[k].y;
      hi_[k] = splat<V>(next_[k].c.hi);
      lo_[k] = splat<V>(next_[k].c.lo);
      inv_[k] = splat<V>(next_[k].c.inv);
    });
    // The vectors from the first 64-byte boundary of y are streamed; the head before it and the
    // tail past the last whole vector are stored plainly by complete (R = 1 only).
    const auto misalign = reinterpret_cast<uintptr_t>(y_[0]) % kVectorBytes;
    head_ = std::min<int64_t>(n_, misalign == 0 ? 0 : (kVectorBytes - misalign) / sizeof(T));
    i_ = head_;
    body_end_ = head_ + (n_ - head_) / L * L;
    pending_ = true;
  }
  // Writes what remains of the pending group.
  void complete() {
    if (!pending_) return;
    for (; i_ < body_end_; i_ += L) column(position(i_));
    if (head_ > 0) store_partial(y_[0], row(0, static_cast<int>(head_)), static_cast<int>(head_));
    if (body_end_ < n_) {
      const int m = static_cast<int>(n_ - body_end_);
      store_partial(y_[0] + body_end_, row(body_end_, m), m);
    }
    pending_ = false;
    i_ = body_end_ = 0;
  }
  // Where the pending group's vector at i (counted from head_ up) is written: groups alternate
  // direction, so that the columns of x, gamma and beta read last are read first again.
  int64_t position(int64_t i) const { return reverse_ ? head_ + body_end_ - L - i : i; }

  // The pending group's column of whole vectors at `at`, gamma and beta loaded once.
  void column(int64_t at) {
    const V g = g_ ? load<V>(g_ + at) : V{}, b = b_ ? load<V>(b_ + at) : V{};
    unrolled<R>([&](auto k) {
      V r = ((load<V>(x_[k] + at) - hi_[k]) - lo_[k]) * inv_[k];
      if (g_) r *= g;
      if (b_) r += b;
      store_stream(y_[k] + at, r);
    });
  }
  // Row 0's normalized elements [i, i + m).
  V row(int64_t i, int m) const {
    auto ld = [&](const T* p) { return m == L ? load<V>(p + i) : load_partial<V>(p + i, m); };
    V r = ((ld(x_[0]) - hi_[0]) - lo_[0]) * inv_[0];
    if (g_) r *= ld(g_);
    if (b_) r += ld(b_);
    return r;
  }

  int64_t n_;
  const T *g_, *b_;
  const T* ahead_ = nullptr;
  int64_t a_ = 0;
  Row next_[R]{};
  int k_ = 0, credit_ = 0;
  const T* x_[R]{};
  T* y_[R]{};
  V hi_[R]{}, lo_[R]{}, inv_[R]{};
  int64_t head_ = 0, i_ = 0, body_end_ = 0;
  bool reverse_ = false, pending_ = false;
};

// Rows [r0, r1) of contiguous x (`rows` rows of n elements) normalized into contiguous y, with
// x requested from `ahead` elements past each row's start along its passes.
template <class T, bool kCenter, int R>
void stream_chunk(const T* x0, T* y0, int64_t rows, int64_t n, int64_t ahead, double eps,
                  const T* gamma, const T* beta, int64_t r0, int64_t r1) {
  NormPipeline<T, kCenter, R> pipe(n, gamma, beta);
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x0 + r * n;
    pipe.begin((r + 1) * n + ahead <= rows * n ? xr + ahead : nullptr);
    RowStats<T> st{.center = kCenter, .provisional = R == 1};
    for (int64_t k = 0; k < n; k += B) st.add(xr + k, std::min(B, n - k), pipe);
    pipe.end(xr, y0 + r * n, NormCoef<T>(st, eps));
  }
  pipe.flush();
  stream_fence();
}
// stream_chunk with the passes and the pipeline inlined into one body. The pipeline's state then
// lives in registers: called out of line, it is reloaded from memory at every streaming store
// (which may alias it, for all the compiler knows). Taken for rows up to 16 KB: 1.1–1.25× faster
// on two threads at 32768 × 512 and 8192 × 2048; at 4096 × 4096 it was 0.9× until the pending
// rows alternated direction (NormPipeline::position), then, with them, 1.13× (two threads, 5
// rounds; one thread 1.08×). Longer rows, untimed, keep the out-of-line form.
template <class T, bool kCenter, int R>
[[gnu::flatten]] void stream_chunk_inlined(const T* x0, T* y0, int64_t rows, int64_t n,
                                           int64_t ahead, double eps, const T* gamma, const T* beta,
                                           int64_t r0, int64_t r1) {
  stream_chunk<T, kCenter, R>(x0, y0, rows, n, ahead, eps, gamma, beta, r0, r1);
}

// Rows of whole vectors (up to two stage blocks, 8 KB in f32, with AVX-512; see stream_rows), y
// vector-aligned: one loop a row, shaped like the copy it is measured against. Each step reads two
// vectors of the row (its statistics, a stage block at a time, about a provisional centre: the mean
// of the block's first vector, by a tree; RowStats::provisional's serial mean of the first 16
// elements is the same set in f32, twice it in f64), writes two of the previous row's outputs and
// requests x two lines kAheadBytes on; the row's coefficients follow the loop. Numerics as the
// pipeline's (RowStats::add_about, NormCoef): a centre far from its block's mean is replaced by the
// mean, with one more pass over the block. Against the pipeline at R = 1, the same spells' copy, 8
// alternating rounds: 32768 × 512 0.77 → 0.89 of it on two threads, 0.70 → 0.87 on one; 8192 ×
// 2048 0.84 → 0.95 (5 rounds; 12288 × 1536 even). At 4096 columns, 0.75 → 0.62 against the
// grouped pipeline: the two rows in flight with gamma and beta (64 KB) pass L1. (Found by a one-off
// probe of this loop in the benchmark's process, not in the tree: it read 0.9–1.0 of the copy where
// the pipeline read 0.7–0.8. The pipeline's bookkeeping per vector (credits, position, requests)
// and its serial 16-element centre sat on every row's path.)
template <class T, bool kCenter, bool kGamma, bool kBeta>
void stream_whole_rows(const T* x0, T* y0, int64_t n, double eps, const T* gamma, const T* beta,
                       int64_t r0, int64_t r1) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  const int64_t ahead = kAheadBytes / static_cast<int64_t>(sizeof(T));
  const T* px = nullptr;  // the previous row, written along this one's statistics
  T* py = nullptr;
  V hi{}, lo{}, inv{};
  auto out = [&](int64_t i) {
    V r = ((load<V>(px + i) - hi) - lo) * inv;
    if constexpr (kGamma) r *= load<V>(gamma + i);
    if constexpr (kBeta) r += load<V>(beta + i);
    store_stream(py + i, r);
  };
  for (int64_t row = r0; row < r1; ++row) {
    const T* x = x0 + row * n;
    RowStats<T> st{.center = kCenter, .provisional = true};
    for (int64_t k0 = 0; k0 < n; k0 += B) {
      const int64_t k1 = std::min(n, k0 + B);
      const T c = kCenter ? reduce_add(load<V>(x + k0)) / static_cast<T>(L) : T(0);
      const V vc = splat<V>(c);
      V s0{}, s1{}, q0{}, q1{};
      int64_t i = k0;
      for (; i + 2 * L <= k1; i += 2 * L) {
        request_line(x + ahead + i);  // prefetches never fault: past x's end is harmless
        request_line(x + ahead + i + L);
        const V d0 = load<V>(x + i) - vc, d1 = load<V>(x + i + L) - vc;
        s0 += d0;
        s1 += d1;
        q0 += d0 * d0;
        q1 += d1 * d1;
        if (px) {
          out(i);
          out(i + L);
        }
      }
      if (i < k1) {
        request_line(x + ahead + i);
        const V d0 = load<V>(x + i) - vc;
        s0 += d0;
        q0 += d0 * d0;
        if (px) out(i);
      }
      st.add_about(x + k0, k1 - k0, c, reduce_add(s0 + s1),
                   static_cast<double>(reduce_add(q0 + q1)));
    }
    const NormCoef<T> k(st, eps);
    hi = splat<V>(k.hi);
    lo = splat<V>(k.lo);
    inv = splat<V>(k.inv);
    px = x;
    py = y0 + row * n;
  }
  if (px)
    for (int64_t i = 0; i < n; i += L) out(i);
  stream_fence();
}

// The rows of contiguous x, each of n elements, normalized into contiguous y (≫ cache).
template <class T, bool kCenter>
void stream_rows(const HostTensor& x, const HostTensor& y, int64_t n, double eps, const T* gamma,
                 const T* beta) {
  const int64_t rows = x.numel() / n;
  const T* x0 = reinterpret_cast<const T*>(x.data());
  T* y0 = reinterpret_cast<T*>(y.data());
  // What row r's passes request along them: x from kAheadBytes past the row's start.
  const int64_t ahead = kAheadBytes / static_cast<int64_t>(sizeof(T));
  const int64_t row_bytes = n * static_cast<int64_t>(sizeof(T));
  const bool inlined = row_bytes <= (16 << 10);
  // Groups of 4 rows for rows past 8 KB, where they can be taken and a vector is a whole cache
  // line (AVX-512). Two threads, 6 rounds, the same spells' copy: 4096 × 4096 0.66 of it single
  // rows, 0.77 grouped (groups of 2 and 8: less); 8192 × 2048 0.76 single, 0.70 grouped; 32768 ×
  // 512 0.76 single, 0.72 grouped. Where gamma and beta fit L1 beside the rows in flight,
  // grouping measured slower (these numbers do not say why; perhaps its four write streams).
  // With 32-byte vectors (AVX2) a group's column stores half a line to each of its rows in turn:
  // the streaming stores leave their write-combining buffers partial, and 4096 × 4096 ran at
  // 0.13 of the copy on two threads of a Zen 3 host (4096 × 3072 0.14).
  const bool grouped = kVectorBytes == 64 && inlined && row_bytes > (8 << 10) &&
                       row_bytes % kVectorBytes == 0 &&
                       reinterpret_cast<uintptr_t>(y0) % kVectorBytes == 0;
  // stream_whole_rows takes rows up to two stage blocks with AVX-512 (at 4096 columns it read
  // 0.60–0.71 of the copy against the grouped pipeline's 0.75–0.89), and with narrower vectors
  // any row up to 128 KB (two rows in flight, a quarter of a 512 KB L2). On the Zen 3 host (AVX2),
  // two threads, 2 runs of 5 repetitions each, the copy's time over Tessel's: against single rows
  // (the pipeline at R = 1) 4096 × 3072 1.09 → 1.58, 4096 × 4096 1.13 → 1.37, 2048 × 8192 0.74–0.88
  // → 1.36–1.46, 1024 × 16384 0.75–0.92 → 1.0–1.2, 512 × 32768 0.74–0.76 → 0.99–1.28.
  const int64_t whole_max =
      kVectorBytes == 64 ? 2 * B : (128 << 10) / static_cast<int64_t>(sizeof(T));
  if (n % kLanes<VecOf<T>> == 0 && n <= whole_max &&
      reinterpret_cast<uintptr_t>(y0) % kVectorBytes == 0) {
    // One part a thread: the probe's form of this loop, in the library, read 0.79 of the copy
    // in 8 parts (row_grain) and 0.85–0.94 in 2 (32768 × 512, two threads, the same spells).
    parallel_for(rows, (rows + num_threads() - 1) / num_threads(), [&](int64_t r0, int64_t r1) {
      auto run = [&]<bool G, bool Bt>() {
        stream_whole_rows<T, kCenter, G, Bt>(x0, y0, n, eps, gamma, beta, r0, r1);
      };
      if (gamma && beta)
        run.template operator()<true, true>();
      else if (gamma)
        run.template operator()<true, false>();
      else if (beta)
        run.template operator()<false, true>();
      else
        run.template operator()<false, false>();
    });
    return;
  }
  parallel_for(rows, row_grain(n), [&](int64_t r0, int64_t r1) {
    if (grouped)
      stream_chunk_inlined<T, kCenter, 4>(x0, y0, rows, n, ahead, eps, gamma, beta, r0, r1);
    else
      (inlined ? stream_chunk_inlined<T, kCenter, 1>
               : stream_chunk<T, kCenter, 1>)(x0, y0, rows, n, ahead, eps, gamma, beta, r0, r1);
  });
}

template <class T>
void trailing_norm(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out,
                   bool center) {
  const HostTensor& x = in[0];
  const int axis = axis_attr(node, x.rank());
  const Shape tail(x.shape.begin() + axis, x.shape.end());
  const int64_t inner = shape_numel(tail);
  const int64_t outer = inner == 0 ? 0 : x.numel() / inner;
  if (outer == 0) return;
  const double eps = node.attrs.f("eps");
  const ParamArray<T> gamma(optional_input(in, 1), tail);
  const ParamArray<T> beta(center ? optional_input(in, 2) : HostTensor{}, tail);
  const HostTensor& y = out[0];
  const bool stream = x.dtype == kNative<T> && x.is_contiguous() && y.dtype == kNative<T> &&
                      y.is_contiguous() &&
                      y.numel() * static_cast<int64_t>(sizeof(T)) >= kStreamBytes;
  if (stream) {
    if (center)
      stream_rows<T, true>(x, y, inner, eps, gamma.get(), beta.get());
    else
      stream_rows<T, false>(x, y, inner, eps, gamma.get(), nullptr);
    return;
  }
  const StridedView xv(x);
  parallel_for(outer, row_grain(inner), [&](int64_t r0, int64_t r1) {
    alignas(64) T xbuf[B], ybuf[B];
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t start = r * inner;
      RowStats<T> st{.center = center};
      for (int64_t k = 0; k < inner; k += B) {
        const int64_t len = std::min(B, inner - k);
        st.add(read(xv, start + k, len, xbuf), len);
      }
      const NormCoef<T> c(st, eps);
      for (int64_t k = 0; k < inner; k += B) {
        const int64_t len = std::min(B, inner - k);
        T* yp = out_block(y, start + k, ybuf);
        normalize_block(read(xv, start + k, len, xbuf), yp, len, c, gamma.at(k), beta.at(k));
        commit(y, start + k, yp, len);
      }
    }
  });
}

template <class T>
void layer_norm_t(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  trailing_norm<T>(node, in, out, true);
}
template <class T>
void rms_norm_t(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  trailing_norm<T>(node, in, out, false);
}

// ---------------------------------------------------------------------------------------------
// Channels-first norms: x viewed as [N, C, S].

struct ChannelsFirst {
  int64_t n, c, s = 0;
  explicit ChannelsFirst(const HostTensor& x) : n(x.shape[0]), c(x.shape[1]) {
    s = n * c == 0 ? 0 : x.numel() / (n * c);
  }
};

// GroupNorm: a row per (n, group), its channels contiguous; gamma / beta per channel.
template <class T>
void group_norm_t(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const ChannelsFirst d(in[0]);
  const int64_t groups = node.attrs.i("groups");
  const int64_t per_group = d.c / groups;
  const int64_t len_row = per_group * d.s;
  if (len_row == 0 || d.n == 0) return;
  const double eps = node.attrs.f("eps");
  const ParamArray<T> gamma(optional_input(in, 1), {d.c});
  const ParamArray<T> beta(optional_input(in, 2), {d.c});
  const StridedView xv(in[0]);
  const HostTensor& y = out[0];
  parallel_for(d.n * groups, row_grain(len_row), [&](int64_t r0, int64_t r1) {
    alignas(64) T xbuf[B], ybuf[B];
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t start = r * len_row, c0 = (r % groups) * per_group;
      RowStats<T> st;
      for (int64_t k = 0; k < len_row; k += B) {
        const int64_t len = std::min(B, len_row - k);
        st.add(read(xv, start + k, len, xbuf), len);
      }
      const NormCoef<T> coef(st, eps);
      for (int64_t k = 0; k < len_row; k += B) {
        const int64_t len = std::min(B, len_row - k);
        const T* xp = read(xv, start + k, len, xbuf);
        T* yp = out_block(y, start + k, ybuf);
        // Split the block at channel boundaries: each segment has one gamma and beta.
        for (int64_t j = 0; j < len;) {
          const int64_t ch = (k + j) / d.s;
          const int64_t seg = std::min(len, (ch + 1) * d.s - k) - j;
          const T g = gamma.get() ? gamma.get()[c0 + ch] : T(1);
          const T b = beta.get() ? beta.get()[c0 + ch] : T(0);
          normalize_block_scalar(xp + j, yp + j, seg, coef, coef.inv * g, b);
          j += seg;
        }
        commit(y, start + k, yp, len);
      }
    }
  });
}

// LayerNorm2d on NV vectors of pixels at once (the last one holding m lanes): statistics over
// the c rows of x (row stride ldx), written to y (row stride ldy). Corrected two-pass: Σ(x -
// mean) fixes the rounding of the first mean.
template <class T, int NV>
void ln2d_columns(const T* xp, int64_t ldx, T* yp, int64_t ldy, int64_t channels, int m, double eps,
                  const T* gamma, const T* beta) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  auto ld = [&](const T* p, int v) {
    return v < NV - 1 || m == L ? load<V>(p + v * L) : load_partial<V>(p + v * L, m);
  };
  const V inv_c = splat<V>(static_cast<T>(1.0 / static_cast<double>(channels)));
  V mean[NV] = {}, ssq[NV] = {}, corr[NV] = {}, inv[NV] = {};
  for (int64_t c = 0; c < channels; ++c)
    for (int v = 0; v < NV; ++v) mean[v] += ld(xp + c * ldx, v);
  for (int v = 0; v < NV; ++v) mean[v] *= inv_c;
  for (int64_t c = 0; c < channels; ++c)
    for (int v = 0; v < NV; ++v) {
      const V dv = ld(xp + c * ldx, v) - mean[v];
      ssq[v] += dv * dv;
      corr[v] += dv;
    }
  for (int v = 0; v < NV; ++v) {
    corr[v] *= inv_c;
    const V var = ssq[v] * inv_c - corr[v] * corr[v];
    for (int l = 0; l < L; ++l)
      inv[v][l] = static_cast<T>(1.0 / std::sqrt(std::max(0.0, static_cast<double>(var[l])) + eps));
  }
  for (int64_t c = 0; c < channels; ++c) {
    const T g = gamma ? gamma[c] : T(1);
    const T b = beta ? beta[c] : T(0);
    for (int v = 0; v < NV; ++v) {
      const V r = ((ld(xp + c * ldx, v) - mean[v]) - corr[v]) * (inv[v] * g) + b;
      if (v < NV - 1 || m == L)
        store(yp + c * ldy + v * L, r);
      else
        store_partial(yp + c * ldy + v * L, r, m);
    }
  }
}

// LayerNorm2d: normalize over C for every (n, pixel). Tiles of kTileW pixels: statistics are
// computed lane-wise across pixels, reading the C rows of the tile (in place when x is
// contiguous T, else gathered into a scratch tile).
template <class T>
void layer_norm2d_t(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  constexpr int64_t kTileW = 4 * L;
  const ChannelsFirst d(in[0]);
  if (d.n * d.c * d.s == 0) return;
  const double eps = node.attrs.f("eps");
  const ParamArray<T> gamma(optional_input(in, 1), {d.c});
  const ParamArray<T> beta(optional_input(in, 2), {d.c});
  const StridedView xv(in[0]);
  const HostTensor& y = out[0];
  const bool in_place = xv.contiguous_in(kNative<T>);
  const bool out_in_place = y.dtype == kNative<T>;
  const T* x0 = in_place ? reinterpret_cast<const T*>(xv.base) : nullptr;
  const int64_t tiles = (d.s + kTileW - 1) / kTileW;
  parallel_for(d.n * tiles, row_grain(d.c * kTileW), [&](int64_t t0, int64_t t1) {
    std::vector<T> xtile, ytile;
    if (!in_place) xtile.resize(static_cast<size_t>(d.c * kTileW));
    if (!out_in_place) ytile.resize(static_cast<size_t>(d.c * kTileW));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / tiles, s0 = (t % tiles) * kTileW;
      const int64_t w = std::min(kTileW, d.s - s0);
      const int64_t base = n * d.c * d.s + s0;  // element (n, 0, s0)
      const T* xp;
      int64_t ldx;
      if (in_place) {
        xp = x0 + base;
        ldx = d.s;
      } else {
        for (int64_t c = 0; c < d.c; ++c) {
          T* dst = xtile.data() + c * kTileW;
          const T* src = read(xv, base + c * d.s, w, dst);
          if (src != dst) std::copy(src, src + w, dst);
        }
        xp = xtile.data();
        ldx = kTileW;
      }
      T* yp = out_in_place ? reinterpret_cast<T*>(y.data()) + base : ytile.data();
      const int64_t ldy = out_in_place ? d.s : kTileW;
      if (w == kTileW) {
        ln2d_columns<T, 4>(xp, ldx, yp, ldy, d.c, L, eps, gamma.get(), beta.get());
      } else {
        for (int64_t j = 0; j < w; j += L)
          ln2d_columns<T, 1>(xp + j, ldx, yp + j, ldy, d.c,
                             static_cast<int>(std::min<int64_t>(L, w - j)), eps, gamma.get(),
                             beta.get());
      }
      if (!out_in_place)
        for (int64_t c = 0; c < d.c; ++c) commit(y, base + c * d.s, yp + c * kTileW, w);
    }
  });
}

// BatchNormInference: y = (x - mean[c]) · gamma[c] / sqrt(var[c] + eps) + beta[c]. Per (n, c)
// rows of S when S is long; otherwise per n, over [C·S] with the parameters expanded.
template <class T>
void batch_norm_inference_t(const Node& node, std::span<const HostTensor> in,
                            std::span<HostTensor> out) {
  const ChannelsFirst d(in[0]);
  if (d.n * d.c * d.s == 0) return;
  const double eps = node.attrs.f("eps");
  const ParamArray<T> mean(in[1], {d.c}), var(in[2], {d.c});
  const ParamArray<T> gamma(optional_input(in, 3), {d.c}), beta(optional_input(in, 4), {d.c});
  // scale[c] = gamma / sqrt(var + eps), in f64 before rounding.
  std::vector<T> scale(static_cast<size_t>(d.c)), shift(static_cast<size_t>(d.c));
  for (int64_t c = 0; c < d.c; ++c) {
    const double g = gamma.get() ? static_cast<double>(gamma.get()[c]) : 1.0;
    scale[c] = static_cast<T>(g / std::sqrt(static_cast<double>(var.get()[c]) + eps));
    shift[c] = beta.get() ? beta.get()[c] : T(0);
  }
  const StridedView xv(in[0]);
  const HostTensor& y = out[0];
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  if (d.s >= 16) {
    parallel_for(d.n * d.c, row_grain(d.s), [&](int64_t r0, int64_t r1) {
      alignas(64) T xbuf[B], ybuf[B];
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t c = r % d.c;
        NormCoef<T> coef;
        coef.hi = mean.get()[c];
        for (int64_t k = 0; k < d.s; k += B) {
          const int64_t len = std::min(B, d.s - k), start = r * d.s + k;
          T* yp = out_block(y, start, ybuf);
          normalize_block_scalar(read(xv, start, len, xbuf), yp, len, coef, scale[c], shift[c]);
          commit(y, start, yp, len);
        }
      }
    });
    return;
  }
  const int64_t row = d.c * d.s;
  std::vector<T> me(static_cast<size_t>(row)), sc(me.size()), sh(me.size());
  for (int64_t i = 0; i < row; ++i) {
    me[i] = mean.get()[i / d.s];
    sc[i] = scale[i / d.s];
    sh[i] = shift[i / d.s];
  }
  parallel_for(d.n, row_grain(row), [&](int64_t n0, int64_t n1) {
    alignas(64) T xbuf[B], ybuf[B];
    for (int64_t n = n0; n < n1; ++n)
      for (int64_t k = 0; k < row; k += B) {
        const int64_t len = std::min(B, row - k), start = n * row + k;
        const T* xp = read(xv, start, len, xbuf);
        T* yp = out_block(y, start, ybuf);
        int64_t i = 0;
        for (; i + L <= len; i += L)
          store(yp + i, (load<V>(xp + i) - load<V>(&me[k + i])) * load<V>(&sc[k + i]) +
                            load<V>(&sh[k + i]));
        for (; i < len; ++i) yp[i] = (xp[i] - me[k + i]) * sc[k + i] + sh[k + i];
        commit(y, start, yp, len);
      }
  });
}

// The kernel for T = f64 on f64 tensors, f32 on every other dtype.
#define TESSEL_NORM_KERNEL(name)                                                           \
  void name(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) { \
    if (out[0].dtype == DType::F64)                                                        \
      name##_t<double>(node, in, out);                                                     \
    else                                                                                   \
      name##_t<float>(node, in, out);                                                      \
  }
TESSEL_NORM_KERNEL(layer_norm)
TESSEL_NORM_KERNEL(rms_norm)
TESSEL_NORM_KERNEL(group_norm)
TESSEL_NORM_KERNEL(layer_norm2d)
TESSEL_NORM_KERNEL(batch_norm_inference)
#undef TESSEL_NORM_KERNEL

}  // namespace

void register_normalization(KernelRegistry& r) {
  r.native(OpKind::LayerNorm, layer_norm, kNormFloats);
  r.native(OpKind::LayerNorm2d, layer_norm2d, kNormFloats);
  r.native(OpKind::GroupNorm, group_norm, kNormFloats);
  r.native(OpKind::BatchNormInference, batch_norm_inference, kNormFloats);
  r.native(OpKind::RmsNorm, rms_norm, kNormFloats);
  register_fused_norms(r);
  register_positional(r);
}

TESSEL_ISA_END
