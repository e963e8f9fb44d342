// Conv (1-D/2-D/3-D) and ConvTranspose2d on the cpu backend, computing in f32 (f64 for f64):
// bounded im2col blocks fed to gemm (1×1 convolutions read x directly), a direct vectorized loop
// for depthwise convolution, and GEMM + col2im for the transposed convolution.
#include <algorithm>
#include <span>
#include <vector>

#include "backends/cpu/gemm.h"
#include "backends/cpu/kernels/conv_pool.h"
#include "backends/cpu/region_body.h"
#include "runtime/derived_constants.h"
#include "runtime/kernel_util.h"
#include "runtime/thread_pool.h"

TESSEL_ISA_BEGIN
namespace {

using namespace conv_pool;

constexpr DTypeSet kConvFloats = dtypes::kFloat | dtypes::kFp8;
// im2col / col2im scratch per block, in elements: bounded, yet wide enough for gemm to run well.
constexpr int64_t kColBudget = int64_t{1} << 20;
// Multiply-adds (or copies) per parallel chunk: enough to amortize a task.
constexpr int64_t kGrainWork = int64_t{1} << 15;
// The tags of what a convolution derives from constant weights (its input 1) among its node's
// derived data: Winograd's transformed weights, the implicit GEMM's packed ones.
constexpr uint64_t kWinogradWeights = 0x5749'4e4f'4632'3333;  // "WINOF233"
constexpr uint64_t kImplicitWeights = 0x494d'504c'4943'4954;  // "IMPLICIT"

// What `make` derives from the convolution's weights, kept (`hold`) when they are a graph constant
// and made on the executable's first run; null when they are not (the kernel then makes it).
template <class Make>
const float* derived_weights(uint64_t tag, std::shared_ptr<const Storage>& hold, Make&& make) {
  hold = derived_from_constant<Storage>(1, tag, std::forward<Make>(make));
  return hold ? reinterpret_cast<const float*>(hold->bytes.get()) : nullptr;
}

// dst[i] += src[i] for i < n.
template <class T>
void add_to(T* dst, const T* src, int64_t n) {
  using V = Vec<T>;
  constexpr int L = kLanes<V>;
  int64_t i = 0;
  for (; i + L <= n; i += L) store(dst + i, load<V>(dst + i) + load<V>(src + i));
  for (; i < n; ++i) dst[i] += src[i];
}

// y[row, :] = bias[row % channels] (or 0) for rows of `len` elements.
template <class T>
void fill_bias(T* y, const T* bias, int64_t rows, int64_t channels, int64_t len) {
  parallel_for(rows, std::max<int64_t>(1, kGrainWork / std::max<int64_t>(len, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t r = begin; r < end; ++r)
                   std::fill(y + r * len, y + (r + 1) * len, bias ? bias[r % channels] : T(0));
               });
}

}  // namespace

namespace conv_pool {

ConvGeo conv_geo(const Attrs& a, const Shape& x, const Shape& w, const Shape& y) {
  ConvGeo g;
  g.w = make_window(a, x, y, std::vector<int64_t>(w.begin() + 2, w.end()), false);
  g.N = x[0];
  g.C = x[1];
  g.O = y[1];
  g.G = a.i("groups");
  g.cpg = g.C / g.G;
  g.opg = g.O / g.G;
  g.KK = g.w.k[0] * g.w.k[1] * g.w.k[2];
  g.K = g.cpg * g.KK;
  g.P = g.w.out[0] * g.w.out[1] * g.w.out[2];
  g.X = g.w.in[0] * g.w.in[1] * g.w.in[2];
  return g;
}

namespace {
// The tap of im2col row r: channel c, kernel offsets kd, kh, kw; along the output row, the
// input column of output column ow is ow·stride + off, in bounds for ow in [lo, hi).
struct Tap {
  int64_t c, kd, kh, kw, off, lo, hi;
};
Tap tap_of(const ConvGeo& g, int64_t r) {
  const Window3& w = g.w;
  const int64_t t = r % g.KK;
  Tap tap{r / g.KK, t / (w.k[1] * w.k[2]), t / w.k[2] % w.k[1], t % w.k[2], 0, 0, 0};
  tap.off = tap.kw * w.dil[2] - w.pad[2];
  valid_range(w.out[2], w.in[2], w.stride[2], w.pad[2], tap.kw * w.dil[2], tap.lo, tap.hi);
  return tap;
}

// Where tap `t` of output positions (od, oh, ow .. ow+len) (one output row) reads x: positions
// [a, b) read src[a .. b) (src: the row, shifted by the tap's offset; null when the window's row
// lies in the padding); the others read padding.
template <class T>
struct RowSpan {
  const T* src;
  int64_t a, b;
};
template <class T>
inline RowSpan<T> window_span(const ConvGeo& g, const T* xg, const Tap& t, int64_t od, int64_t oh,
                              int64_t ow, int64_t len) {
  const Window3& w = g.w;
  const int64_t id = od * w.stride[0] - w.pad[0] + t.kd * w.dil[0];
  const int64_t ih = oh * w.stride[1] - w.pad[1] + t.kh * w.dil[1];
  if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) return {nullptr, ow, ow};
  const int64_t a = std::clamp(t.lo, ow, ow + len), b = std::clamp(t.hi, a, ow + len);
  return {xg + t.c * g.X + (id * w.in[1] + ih) * w.in[2] + t.off, a, b};
}

// d[0 .. len) = x at tap `t` of output positions (od, oh, ow .. ow+len), zero in the padding.
template <class T>
void window_run(const ConvGeo& g, const T* xg, const Tap& t, int64_t od, int64_t oh, int64_t ow,
                int64_t len, T* d) {
  const RowSpan<T> r = window_span(g, xg, t, od, oh, ow, len);
  if (r.src == nullptr) return std::fill(d, d + len, T(0));
  std::fill(d, d + (r.a - ow), T(0));
  if (g.w.stride[2] == 1)
    std::copy(r.src + r.a, r.src + r.b, d + (r.a - ow));
  else
    for (int64_t o = r.a; o < r.b; ++o) d[o - ow] = r.src[o * g.w.stride[2]];
  std::fill(d + (r.b - ow), d + len, T(0));
}

// Calls f(offset, od, oh, ow, len) for the runs of output positions [p0, p1) along output rows.
template <class F>
void position_runs(const Window3& w, int64_t p0, int64_t p1, F&& f) {
  int64_t ow = p0 % w.out[2], oh = p0 / w.out[2] % w.out[1], od = p0 / (w.out[2] * w.out[1]);
  for (int64_t p = p0; p < p1;) {
    const int64_t len = std::min(w.out[2] - ow, p1 - p);
    f(p - p0, od, oh, ow, len);
    p += len;
    ow = 0;
    if (++oh == w.out[1]) {
      oh = 0;
      ++od;
    }
  }
}
}  // namespace

template <class T>
void im2col_rows(const ConvGeo& g, const T* xg, int64_t p0, int64_t p1, int64_t r0, int64_t r1,
                 T* col, int64_t ldc) {
  for (int64_t r = r0; r < r1; ++r) {
    const Tap t = tap_of(g, r);
    T* dst = col + (r - r0) * ldc;
    position_runs(g.w, p0, p1, [&](int64_t at, int64_t od, int64_t oh, int64_t ow, int64_t len) {
      window_run(g, xg, t, od, oh, ow, len, dst + at);
    });
  }
}
template void im2col_rows(const ConvGeo&, const float*, int64_t, int64_t, int64_t, int64_t, float*,
                          int64_t);
template void im2col_rows(const ConvGeo&, const double*, int64_t, int64_t, int64_t, int64_t,
                          double*, int64_t);

}  // namespace conv_pool

namespace {

// The gemm's B for one (image, group) of a convolution of row stride 1 or 2, packed straight
// from x (GemmPanels): each row of B (a channel and tap) over the requested positions is one
// run of x per output row (every other element for stride 2), copied by vectors into the
// micro-panels it spans. No im2col matrix is written to memory and read back.
template <class T>
struct ConvPanels {
  const ConvGeo* g;
  const T* xg;
  std::vector<Tap> by_kw;  // tap_of of rows 0 .. k[2]: each kernel column's off, lo, hi
};

// dst[0, n) from src[0], src[stride], ... (stride 1 or 2; nullptr: zeros) by vectors (stride 2
// by deinterleaving two, never reading past src[2(n - 1)]). `whole`: the last vector is stored
// whole (dst has room for n rounded up to whole vectors), else only its first lanes.
template <bool Whole, class T>
[[gnu::always_inline]] inline void put_run(T* dst, const T* src, int64_t n, int64_t stride) {
  using V = Vec<T>;
  constexpr int L = kLanes<V>;
  auto put_last = [&](int64_t i, V v) {
    if constexpr (Whole)
      store(dst + i, v);
    else
      store_partial(dst + i, v, static_cast<int>(n - i));
  };
  int64_t i = 0;
  if (src == nullptr) {
    for (; i + L <= n; i += L) store(dst + i, V{});
    if (i < n) put_last(i, V{});
    return;
  }
  if (stride == 2) {
    for (; i + L < n; i += L)
      store(dst + i, even_lanes(load<V>(src + 2 * i), load<V>(src + 2 * i + L)));
    if (i < n) {
      const int rest = static_cast<int>(n - i), m = 2 * rest - 1;
      const V a = load_partial<V>(src + 2 * i, m < L ? m : L);
      const V b = m > L ? load_partial<V>(src + 2 * i + L, m - L) : V{};
      put_last(i, even_lanes(a, b));
    }
    return;
  }
  for (; i + L <= n; i += L) store(dst + i, load<V>(src + i));
  if (i < n) put_last(i, load_partial<V>(src + i, static_cast<int>(n - i)));
}

// Columns [at, at + n) of row p of kc×nr micro-panels `out` from src (put_run), split at the
// panels' boundaries.
template <class T>
void put_columns(T* out, int64_t kc, int nr, int64_t p, int64_t at, const T* src, int64_t n,
                 int64_t stride) {
  while (n > 0) {
    const int64_t in_panel = at % nr, piece = std::min<int64_t>(n, nr - in_panel);
    put_run<false>(out + (at - in_panel) * kc + p * nr + in_panel, src, piece, stride);
    at += piece;
    n -= piece;
    if (src != nullptr) src += piece * stride;
  }
}

template <class T>
void pack_conv_panels(const void* ctx, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int nr,
                      void* out) {
  const ConvPanels<T>& cp = *static_cast<const ConvPanels<T>*>(ctx);
  const ConvGeo& g = *cp.g;
  const int64_t stride = g.w.stride[2];  // 1 or 2
  const int64_t padded = (nc + nr - 1) / nr * nr;
  // With 256-bit vectors and more than one panel, each row of B is first laid out in order in
  // `line` (whole vectors: a piece's last one runs on into the next piece's columns, which are
  // written after it) and then copied into the panels a whole panel row at a time. Split at the
  // panels' boundaries (put_columns), a tap off the row's alignment (kw = 0 and 2 of a 3 × 3)
  // made two pieces a panel, each with a division for its place and a masked store:
  // put_columns had as many samples as the micro-kernel in PaddleOCR det's 96 → 24 channel
  // 3 × 3 convolution at 160 × 160 (Zen 3 host, two threads).
  using V = Vec<T>;
  constexpr int L = kLanes<V>;
  thread_local std::vector<T> line_buf;
  const bool by_line = kVectorBytes < 64 && nc > nr && nr % L == 0;
  if (by_line && line_buf.size() < static_cast<size_t>(padded + L))
    line_buf.resize(static_cast<size_t>(padded + L));
  T* line = line_buf.data();
  auto emit = [&](int64_t p, int64_t at, const T* src, int64_t n) {
    if (by_line) return put_run<true>(line + at, src, n, stride);
    put_columns(static_cast<T*>(out), kc, nr, p, at, src, n, stride);
  };
  // Row p0's tap, then each next row's by counting (tap_of's divisions were 12% of a
  // 60×(960·3)×40 convolution).
  Tap t = tap_of(g, p0);
  for (int64_t p = 0; p < kc; ++p, ++t.kw) {
    if (t.kw == g.w.k[2]) {
      t.kw = 0;
      if (++t.kh == g.w.k[1]) {
        t.kh = 0;
        if (++t.kd == g.w.k[0]) {
          t.kd = 0;
          ++t.c;
        }
      }
    }
    const Tap& column = cp.by_kw[t.kw];
    t.off = column.off;
    t.lo = column.lo;
    t.hi = column.hi;
    position_runs(g.w, j0, j0 + nc,
                  [&](int64_t at, int64_t od, int64_t oh, int64_t ow, int64_t len) {
                    const RowSpan<T> r = window_span(g, cp.xg, t, od, oh, ow, len);
                    if (r.src == nullptr) return emit(p, at, nullptr, len);
                    emit(p, at, nullptr, r.a - ow);
                    emit(p, at + (r.a - ow), r.src + r.a * stride, r.b - r.a);
                    emit(p, at + (r.b - ow), nullptr, ow + len - r.b);
                  });
    emit(p, nc, nullptr, padded - nc);
    if (by_line) {
      T* o = static_cast<T*>(out) + p * nr;
      for (int64_t jr = 0; jr < padded; jr += nr)
        for (int v = 0; v < nr; v += L) store(o + jr * kc + v, load<V>(line + jr + v));
    }
  }
}

// The gemm's B for one (image, group) of a 2-D convolution whose output rows are shorter than
// 16 positions, at column stride 1, packed from a zero-padded copy of the group's input (`xp`,
// [cpg][hp][wp], every tap in bounds): each row of B (a channel and tap) over the requested
// positions is one run of xp per output row, ≤ 15 elements, copied by a masked load and store
// (more where it spans two micro-panels or, for f64, passes a vector). im2col's bounds and
// element loops are not run, and no matrix is written and read back.
template <class T>
struct PaddedPanels {
  const ConvGeo* g;
  const T* xp;
  int64_t hp, wp;
};

template <class T>
void pack_padded_panels(const void* ctx, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int nr,
                        void* out) {
  using V = Vec<T>;
  constexpr int L = kLanes<V>;
  const PaddedPanels<T>& pp = *static_cast<const PaddedPanels<T>*>(ctx);
  const Window3& w = pp.g->w;
  const int64_t ow_n = w.out[2], kh_n = w.k[1], kw_n = w.k[2];
  // The runs are the same for every row of B but for its tap's offset: each is listed once, as
  // pieces within one micro-panel (source offset, destination offset in row 0, length).
  struct Piece {
    int64_t src, dst;
    int len;
  };
  std::vector<Piece> pieces;
  for (int64_t at = 0, oh = j0 / ow_n, ow = j0 % ow_n; at < nc; ++oh, ow = 0) {
    int64_t len = std::min(ow_n - ow, nc - at), src = oh * w.stride[1] * pp.wp + ow;
    while (len > 0) {
      const int64_t in_panel = at % nr;
      const int64_t piece = std::min<int64_t>({len, nr - in_panel, L});
      pieces.push_back({src, (at - in_panel) * kc + in_panel, static_cast<int>(piece)});
      at += piece;
      src += piece;
      len -= piece;
    }
  }
  T* o = static_cast<T*>(out);
  const int64_t padded = (nc + nr - 1) / nr * nr;
  int64_t kw = p0 % kw_n, kh = p0 / kw_n % kh_n, c = p0 / (kw_n * kh_n);
  for (int64_t p = 0; p < kc; ++p) {
    const T* tap = pp.xp + (c * pp.hp + kh * w.dil[1]) * pp.wp + kw * w.dil[2];
    T* row = o + p * nr;
    for (const Piece& q : pieces)
      store_partial(row + q.dst, load_partial<V>(tap + q.src, q.len), q.len);
    put_columns<T>(o, kc, nr, p, nc, nullptr, padded - nc, 1);
    if (++kw == kw_n) {
      kw = 0;
      if (++kh == kh_n) {
        kh = 0;
        ++c;
      }
    }
  }
}

// xp = the group's cpg channels of x zero-padded to hp × wp (rows and columns before the input
// per the window's pads), threaded over channels.
template <class T>
void pad_planes(const ConvGeo& g, const T* xg, T* xp, int64_t hp, int64_t wp) {
  const Window3& w = g.w;
  const int64_t h = w.in[1], wd = w.in[2], pt = w.pad[1], pl = w.pad[2];
  parallel_for(g.cpg, std::max<int64_t>(1, kGrainWork / (hp * wp)), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      T* plane = xp + c * hp * wp;
      std::fill(plane, plane + hp * wp, T(0));
      for (int64_t r = 0; r < h; ++r) {
        const int64_t pr = r + pt;
        if (pr < 0) continue;
        if (pr >= hp) break;
        const T* src = xg + (c * h + r) * wd;
        const int64_t q0 = std::max<int64_t>(0, -pl), q1 = std::min(wd, wp - pl);
        if (q0 < q1) std::copy(src + q0, src + q1, plane + pr * wp + pl + q0);
      }
    }
  });
}

// y = conv(x, w) + bias (may be null) by gemm: per (image, group), the group's weights times the
// im2col matrix of its input, the bias added to each block of y by the gemm's epilogue while the
// block is in cache (filling y with the bias first cost a pass over y and a read of y in every
// micro-kernel: a 16→32-channel 1×1 convolution at 320×320 took 2.1 ms, 1.0-1.3 ms without).
// A 1×1 convolution (unstrided, unpadded) reads x as B in place; one whose output rows are 16 or
// more positions long, unstrided or of stride 2 along the row, packs B's micro-panels straight
// from x (pack_conv_panels); a 2-D one with shorter rows at column stride 1 packs them from
// zero-padded copies of x's planes (pack_padded_panels: pack_conv_panels' bounds logic per run
// made ResNet's 7×7 layer 4 18% slower than im2col; these runs are a masked load and store
// each, and against im2col, two threads, 5 rounds: ResNet's 3 × 3 layers at 14 × 14 1.00 → 0.78
// ms, 7 × 7 1.11 → 0.89); any other writes im2col blocks of output positions and multiplies them
// (im2col's element loop for stride 2 made PaddleOCR det's 3×3 stride-2 stem 3.0 ms against 1.6
// ms through the panels, caches cold).
template <class T>
void conv_gemm(const ConvGeo& g, const T* x, const T* wt, const T* bias, T* y,
               const GemmEpilogue<T>* ep) {
  if (g.K == 0) {  // no input channels: y is the bias
    fill_bias(y, bias, g.N * g.O, g.O, g.P);
    if (ep != nullptr) apply_gemm_epilogue(*ep, y, g.P, 0, g.N * g.O, 0, g.P);
    return;
  }
  const Window3& w = g.w;
  bool direct = g.KK == 1;
  for (int d = 0; d < 3; ++d)
    direct = direct && w.stride[d] == 1 && w.pad[d] == 0 && w.pad_end[d] == 0;
  const bool panels = !direct && (w.stride[2] == 1 || w.stride[2] == 2) && w.out[2] >= 16;
  const bool padded = !direct && !panels && w.stride[2] == 1 && w.in[0] == 1 && w.k[0] == 1;
  // The padded planes hold the rows and columns the windows reach.
  const int64_t hp = (w.out[1] - 1) * w.stride[1] + (w.k[1] - 1) * w.dil[1] + 1;
  const int64_t wp = w.out[2] + (w.k[2] - 1) * w.dil[2];
  int64_t units = g.N * g.G, threads = num_threads();
  // Without im2col blocks: one gemm per (image, group), threaded inside when there are fewer of
  // those than threads (3 blocks on 2 threads left one idle a third of the time: the 1×1 convs
  // of PaddleOCR rec ran at 92 GFLOP/s).
  const bool whole = direct || panels || padded;
  int64_t pb = whole ? g.P : std::min(g.P, std::max<int64_t>(64, kColBudget / g.K));
  int64_t blocks = (g.P + pb - 1) / pb;
  if (!whole && units * blocks < 2 * threads) {
    // Split the positions further so every thread gets blocks, down to 256 columns a block
    // (narrower blocks make the gemm slower than threading inside it), in a multiple of the
    // thread count.
    int64_t want = std::min(g.P / 256, (2 * threads + units - 1) / units);
    want = std::max<int64_t>(1, want / threads * threads);
    if (want > blocks) {
      blocks = want;
      pb = (g.P + blocks - 1) / blocks;
      blocks = (g.P + pb - 1) / pb;
    }
  }
  auto block = [&](int64_t item, T* col, bool threaded) {
    int64_t u = item / blocks, p0 = item % blocks * pb;
    int64_t n = u / g.G, gi = u % g.G;
    int64_t p1 = std::min(g.P, p0 + pb), cols = p1 - p0;
    const T* xg = x + (n * g.C + gi * g.cpg) * g.X;
    const T* wg = wt + gi * g.opg * g.K;
    T* yg = y + (n * g.O + gi * g.opg) * g.P + p0;
    GemmEpilogue<T> e = ep != nullptr ? *ep : GemmEpilogue<T>{};
    e.row_bias = bias != nullptr ? bias + gi * g.opg : nullptr;
    const GemmEpilogue<T>* ebp = e.row_bias != nullptr || ep != nullptr ? &e : nullptr;
    constexpr DType dt = kDTypeOf<T>;
    if (direct)
      return gemm_ex<T>(g.opg, cols, g.K, {wg, dt, g.K, 1}, {xg + p0, dt, g.X, 1}, yg, g.P, false,
                        ebp);
    if (padded) {
      pad_planes(g, xg, col, hp, wp);
      const PaddedPanels<T> pp{&g, col, hp, wp};
      const GemmPanels source{pack_padded_panels<T>, &pp};
      GemmOperand b;
      b.dtype = kDTypeOf<T>;
      b.panels = &source;
      return gemm_ex<T>(g.opg, g.P, g.K, {wg, dt, g.K, 1}, b, yg, g.P, false, ebp);
    }
    if (panels) {
      ConvPanels<T> cp{&g, xg, {}};
      for (int64_t kw = 0; kw < w.k[2]; ++kw) cp.by_kw.push_back(tap_of(g, kw));
      const GemmPanels source{pack_conv_panels<T>, &cp};
      GemmOperand b;
      b.dtype = kDTypeOf<T>;
      b.panels = &source;
      return gemm_ex<T>(g.opg, g.P, g.K, {wg, dt, g.K, 1}, b, yg, g.P, false, ebp);
    }
    if (threaded)
      parallel_for(g.K, std::max<int64_t>(1, kGrainWork / cols), [&](int64_t b, int64_t e) {
        im2col_rows(g, xg, p0, p1, b, e, col + b * cols, cols);
      });
    else
      im2col_rows(g, xg, p0, p1, 0, g.K, col, cols);
    gemm_ex<T>(g.opg, cols, g.K, {wg, dt, g.K, 1}, {col, dt, cols, 1}, yg, g.P, false, ebp);
  };
  int64_t items = units * blocks;
  // Each task's scratch: the padded planes or the im2col block.
  const int64_t col_len = padded ? g.cpg * hp * wp : whole ? 0 : pb * g.K;
  if (threads > 1 && items >= threads) {
    // Independent blocks, one task each (a nested gemm runs single-threaded).
    parallel_for(items, 1, [&](int64_t begin, int64_t end) {
      std::shared_ptr<Storage> hold;
      T* col = col_len > 0 ? scratch<T>(col_len, hold) : nullptr;
      for (int64_t i = begin; i < end; ++i) block(i, col, false);
    });
  } else {
    // Too few blocks to go round: thread inside each (im2col rows, then the gemm itself).
    std::shared_ptr<Storage> hold;
    T* col = col_len > 0 ? scratch<T>(col_len, hold) : nullptr;
    for (int64_t i = 0; i < items; ++i) block(i, col, true);
  }
}

// Depthwise convolution (one input channel per group) runs directly on a zero-padded copy of
// each input plane whose rows are split into `stride` phases (column j of phase r is padded
// column r + j·stride): every tap of every output is then in bounds, and consecutive outputs
// read consecutive elements, so whole rows vectorize whatever the stride.
struct DwPlane {
  int64_t hp, wq, row_len, len;  // padded rows per depth slice, phase length, row, plane
};

DwPlane dw_plane(const Window3& w) {
  DwPlane p;
  int64_t dp = w.in[0] + w.pad[0] + w.pad_end[0];
  p.hp = w.in[1] + w.pad[1] + w.pad_end[1];
  int64_t wp = w.in[2] + w.pad[2] + w.pad_end[2];
  // A vector of slack past the last phase column keeps full loads in the tail in bounds; whole
  // 16-element runs start every padded row on a 64-byte line of the (aligned) plane, so that the
  // first column of taps loads aligned vectors (one thread: the three MobileNet layers of
  // bench/cpu/workloads.txt 1.0–1.2× faster, 122-element rows against 128).
  p.wq = ((wp + w.stride[2] - 1) / w.stride[2] + kVectorBytes + 15) / 16 * 16;
  p.row_len = w.stride[2] * p.wq;
  p.len = dp * p.hp * p.row_len;
  return p;
}

// The padded plane of `src` into dst. Every plane writes the same positions, so the padding is
// zeroed only when dst is fresh (`zeroed` false): zeroing whole planes was a fifth of a 5×5
// depthwise layer on 12×80 planes.
template <class T>
void dw_fill_plane(const Window3& w, const DwPlane& p, const T* src, T* dst, bool zeroed) {
  using V = Vec<T>;
  constexpr int L = kLanes<V>;
  if (!zeroed) std::fill(dst, dst + p.len, T(0));
  int64_t s = w.stride[2];
  for (int64_t id = 0; id < w.in[0]; ++id)
    for (int64_t ih = 0; ih < w.in[1]; ++ih) {
      const T* row = src + (id * w.in[1] + ih) * w.in[2];
      T* d = dst + ((id + w.pad[0]) * p.hp + ih + w.pad[1]) * p.row_len;
      if (s == 1) {
        copy_row(row, d + w.pad[2], w.in[2]);
        continue;
      }
      // Phase r holds padded columns r, r + s, ...: input columns r − pad + j·s. Stride 2 in one
      // pass by vector deinterleaves: input column i goes to phase (i + pad) mod 2 at (i + pad)
      // / 2, so the even lanes of each two vectors fill one phase and the odd lanes the other
      // (the element loop was most of a stride-2 depthwise layer: 6% of peak; a pass a phase
      // read each row twice).
      if (s == 2) {
        const int64_t pl = w.pad[2];
        T* even = d + pl % 2 * p.wq + pl / 2;             // input columns 0, 2, ...
        T* odd = d + (pl + 1) % 2 * p.wq + (pl + 1) / 2;  // input columns 1, 3, ...
        int64_t iw = 0;
        for (; iw + 2 * L <= w.in[2]; iw += 2 * L) {
          const V lo = load<V>(row + iw), hi = load<V>(row + iw + L);
          store(even + iw / 2, even_lanes(lo, hi));
          store(odd + iw / 2, odd_lanes(lo, hi));
        }
        // The rest (under two vectors of x) by masked loads and masked stores, not an element
        // loop.
        const int64_t left = w.in[2] - iw;
        if (left > 0) {
          const V lo = load_partial<V>(row + iw, static_cast<int>(std::min<int64_t>(left, L)));
          const V hi =
              load_partial<V>(row + iw + L, static_cast<int>(std::max<int64_t>(left - L, 0)));
          store_partial(even + iw / 2, even_lanes(lo, hi), static_cast<int>((left + 1) / 2));
          if (left > 1) store_partial(odd + iw / 2, odd_lanes(lo, hi), static_cast<int>(left / 2));
        }
        continue;
      }
      for (int64_t r = 0; r < s; ++r) {
        T* ph = d + r * p.wq;
        int64_t j = r >= w.pad[2] ? 0 : (w.pad[2] - r + s - 1) / s;
        int64_t iw = r + j * s - w.pad[2];
        for (; iw < w.in[2]; iw += s, ++j) ph[j] = row[iw];
      }
    }
}

// Stores a tile's sums: R rows n apart in y, NV vectors from column ow, `last` lanes of the last.
template <int R, int NV, class V>
inline void dw_store(const V (&acc)[R][NV], Lane<V>* y, int64_t n, int64_t ow, int last) {
  constexpr int L = kLanes<V>;
  unrolled<R>([&](auto i) {
    unrolled<NV>([&](auto v) {
      Lane<V>* yp = y + i * n + ow + v * L;
      if (v + 1 < NV || last == L)
        store(yp, acc[i][v]);
      else
        store_partial(yp, acc[i][v], last);
    });
  });
}

// Keeps v in a register from here on: GCC otherwise folds a loaded vector into each
// multiply-add that uses it as a memory operand, loading it again for every use.
template <class V>
inline void in_register(V& v) {
#if defined(__x86_64__) || defined(__i386__)
  asm("" : "+v"(v));
#elif defined(__aarch64__)
  asm("" : "+w"(v));
#endif
}

// What a depthwise tile reads besides its plane: the channel's weights and bias, each tap's
// offset from an output row's base in the plane (and the first kw ones: the column offsets),
// the distance of consecutive padded rows and of the output rows' bases, and the row length n.
template <class T>
struct DwArgs {
  const T* wo;
  T bias;
  const int64_t* tap_off;
  size_t taps;
  int kw;
  int64_t row_len, rows, n;
};

// R output rows × NV vectors of one channel from column `ow` (`last` lanes of the last vector
// stored), over all taps: each tap's weight is broadcast once for its R·NV multiply-adds, each
// reading one vector of the padded plane (its slack keeps whole loads in bounds), into R·NV
// independent sums.
template <int R, int NV, class T>
inline void dw_tile(const DwArgs<T>& a, const T* base, int64_t ow, T* y, int last) {
  using V = Vec<T>;
  constexpr int L = kLanes<V>;
  V acc[R][NV];
  unrolled<R>([&](auto i) { unrolled<NV>([&](auto v) { acc[i][v] = splat<V>(a.bias); }); });
  for (size_t t = 0; t < a.taps; ++t) {
    const T* xp = base + a.tap_off[t] + ow;
    const V wv = splat<V>(a.wo[t]);
    unrolled<R>([&](auto i) {
      unrolled<NV>([&](auto v) { acc[i][v] += wv * load<V>(xp + i * a.rows + v * L); });
    });
  }
  dw_store<R, NV>(acc, y, a.n, ow, last);
}

// dw_tile for a 2-D kernel of KH rows, undilated along the rows, of row stride S: padded row u
// of the tile's (R - 1)·S + KH serves output row i through kernel row u − S·i, so each vector
// is loaded once for all the output rows that read it ((R − 1)·S + KH rows' loads a column of
// taps, where dw_tile loads R·KH: 3 × 3, 4 rows: 6 against 12).
template <int R, int NV, int KH, int S, class T>
inline void dw_tile_rows(const DwArgs<T>& a, const T* base, int64_t ow, T* y, int last) {
  using V = Vec<T>;
  constexpr int L = kLanes<V>;
  V acc[R][NV];
  unrolled<R>([&](auto i) { unrolled<NV>([&](auto v) { acc[i][v] = splat<V>(a.bias); }); });
  for (int kw = 0; kw < a.kw; ++kw) {
    const T* xp = base + a.tap_off[kw] + ow;
    unrolled<(R - 1) * S + KH>([&](auto u) {
      V x[NV];
      unrolled<NV>([&](auto v) {
        V t = load<V>(xp + u * a.row_len + v * L);
        in_register(t);
        x[v] = t;
      });
      unrolled<R>([&](auto i) {
        constexpr int kh = decltype(u)::value - S * decltype(i)::value;
        if constexpr (kh >= 0 && kh < KH) {
          const V wv = splat<V>(a.wo[kh * a.kw + kw]);
          unrolled<NV>([&](auto v) { acc[i][v] += wv * x[v]; });
        }
      });
    });
  }
  dw_store<R, NV>(acc, y, a.n, ow, last);
}

// R whole output rows: tiles of NV vectors along them (at most 4, and R·NV ≤ kSums sums), then
// one of the vectors left. KH = 0: dw_tile; else dw_tile_rows<.., KH, S>, whose tiles also hold
// their NV loaded vectors of a row and a weight: 16 sums with 32 registers, 8 with 16 (with
// AVX2 its 4 × 4 tiles spilled). Flattened: the tiles' unrolled loops and stores are calls
// otherwise.
template <int R, int KH, int S, class T>
[[gnu::flatten]] void dw_row_group(const DwArgs<T>& a, const T* base, T* y) {
  constexpr int L = kLanes<Vec<T>>;
  constexpr int kSums = KH == 0 || kVectorBytes < 64 ? 8 : 16;
  constexpr int NV = std::clamp(kSums / R, 1, 4);
  auto tile = [&](auto k, int64_t ow, int last) {
    constexpr int K = decltype(k)::value;
    if constexpr (K <= NV) {
      if constexpr (KH == 0)
        dw_tile<R, K>(a, base, ow, y, last);
      else
        dw_tile_rows<R, K, KH, S>(a, base, ow, y, last);
    }
  };
  int64_t ow = 0;
  for (; ow + NV * L <= a.n; ow += NV * L) tile(std::integral_constant<int, NV>{}, ow, L);
  if (ow == a.n) return;
  const int nv = static_cast<int>((a.n - ow + L - 1) / L);  // ≤ NV
  const int last = static_cast<int>(a.n - ow - (nv - 1) * L);
  switch (nv) {
    case 1:
      return tile(std::integral_constant<int, 1>{}, ow, last);
    case 2:
      return tile(std::integral_constant<int, 2>{}, ow, last);
    case 3:
      return tile(std::integral_constant<int, 3>{}, ow, last);
    default:
      return tile(std::integral_constant<int, 4>{}, ow, last);
  }
}

// Output rows [r0, r1) (row = od·out1 + oh) of output channel `o` from its padded plane, into
// y (the channel's output), in groups of rows within a depth slice. 2-D kernels of 3 or 5 rows,
// undilated along them, of row stride 1 or 2, take groups of 8 rows of up to two vectors, else
// 4 (dw_tile_rows: up to 16 sums); other kernels and the rows left take groups of up to 8 rows
// of one vector, 4 of two, 2 of more (dw_tile: up to 8 sums, the chains that two FMA pipes of 4
// cycles' latency need).
template <class T>
void dw_rows(const Window3& w, const DwPlane& p, const T* plane, const T* wo, T bias,
             const std::vector<int64_t>& tap_off, int64_t r0, int64_t r1, T* y) {
  constexpr int L = kLanes<Vec<T>>;
  const DwArgs<T> a{wo,
                    bias,
                    tap_off.data(),
                    tap_off.size(),
                    static_cast<int>(w.k[2]),
                    p.row_len,
                    w.stride[1] * p.row_len,
                    w.out[2]};
  const int64_t nvec = (a.n + L - 1) / L;
  using Group = void (*)(const DwArgs<T>&, const T*, T*);
  const int64_t shared_rows = nvec <= 2 ? 8 : 4;
  Group shared = nullptr;
  if (w.k[0] == 1 && w.dil[1] == 1) {
    const bool eight = shared_rows == 8;
    const int64_t kind = w.k[1] * 10 + w.stride[1];
    if (kind == 31) shared = eight ? dw_row_group<8, 3, 1, T> : dw_row_group<4, 3, 1, T>;
    if (kind == 32) shared = eight ? dw_row_group<8, 3, 2, T> : dw_row_group<4, 3, 2, T>;
    if (kind == 51) shared = eight ? dw_row_group<8, 5, 1, T> : dw_row_group<4, 5, 1, T>;
    if (kind == 52) shared = eight ? dw_row_group<8, 5, 2, T> : dw_row_group<4, 5, 2, T>;
  }
  const int64_t most = nvec == 1 ? 8 : nvec == 2 ? 4 : 2;
  for (int64_t r = r0; r < r1;) {
    const int64_t od = r / w.out[1], oh = r % w.out[1];
    const T* base = plane + (od * w.stride[0] * p.hp + oh * w.stride[1]) * p.row_len;
    T* yr = y + r * a.n;
    const int64_t left = std::min(r1 - r, w.out[1] - oh);  // in this depth slice
    if (shared != nullptr && left >= shared_rows) {
      shared(a, base, yr);
      r += shared_rows;
      continue;
    }
    const int64_t g = most >= 8 && left >= 8 ? 8 : most >= 4 && left >= 4 ? 4 : left >= 2 ? 2 : 1;
    const Group group = g == 8   ? dw_row_group<8, 0, 1, T>
                        : g == 4 ? dw_row_group<4, 0, 1, T>
                        : g == 2 ? dw_row_group<2, 0, 1, T>
                                 : dw_row_group<1, 0, 1, T>;
    group(a, base, yr);
    r += g;
  }
}

template <class T>
void conv_depthwise(const ConvGeo& g, const T* x, const T* wt, const T* bias, T* y,
                    const GemmEpilogue<T>* ep) {
  const Window3& w = g.w;
  DwPlane p = dw_plane(w);
  // Offset of each tap (kd, kh, kw) from an output row's base in the padded plane.
  std::vector<int64_t> tap_off;
  for (int64_t kd = 0; kd < w.k[0]; ++kd)
    for (int64_t kh = 0; kh < w.k[1]; ++kh)
      for (int64_t kw = 0; kw < w.k[2]; ++kw) {
        int64_t q = kw * w.dil[2];
        tap_off.push_back((kd * w.dil[0] * p.hp + kh * w.dil[1]) * p.row_len +
                          q % w.stride[2] * p.wq + q / w.stride[2]);
      }
  int64_t rows = w.out[0] * w.out[1];  // per output channel
  auto channel = [&](const T* plane, int64_t n, int64_t o, int64_t r0, int64_t r1) {
    T* yo = y + (n * g.O + o) * g.P;
    dw_rows(w, p, plane, wt + o * g.KK, bias ? bias[o] : T(0), tap_off, r0, r1, yo);
    if (ep != nullptr) apply_gemm_epilogue(*ep, yo, w.out[2], r0, r1, 0, w.out[2]);
  };
  int64_t planes = g.N * g.C;
  int64_t plane_work = std::max<int64_t>(1, g.opg * g.P * g.KK);
  if (planes >= 2 * num_threads()) {
    parallel_for(planes, std::max<int64_t>(1, kGrainWork / plane_work), [&](int64_t b, int64_t e) {
      std::shared_ptr<Storage> hold;
      T* plane = scratch<T>(p.len, hold);
      for (int64_t u = b; u < e; ++u) {
        int64_t n = u / g.C, c = u % g.C;
        dw_fill_plane(w, p, x + u * g.X, plane, u != b);
        for (int64_t o = c * g.opg; o < (c + 1) * g.opg; ++o) channel(plane, n, o, 0, rows);
      }
    });
    return;
  }
  // Few planes: thread over the output rows of each.
  std::shared_ptr<Storage> hold;
  T* plane = scratch<T>(p.len, hold);
  for (int64_t u = 0; u < planes; ++u) {
    int64_t n = u / g.C, c = u % g.C;
    dw_fill_plane(w, p, x + u * g.X, plane, u != 0);
    parallel_for(g.opg * rows, std::max<int64_t>(1, kGrainWork / (w.out[2] * g.KK)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t i = b; i < e;) {
                     int64_t o = i / rows, r0 = i % rows, r1 = std::min(rows, r0 + (e - i));
                     channel(plane, n, c * g.opg + o, r0, r1);
                     i += r1 - r0;
                   }
                 });
  }
}

// A ConvRegion's body, run on each block of the convolution's output as it is finished.
struct ConvTail {
  const RegionBody* body;
  const float* base;  // the output's element 0
};
void conv_tail(const void* ctx, float* c, int64_t ldc, int64_t i0, int64_t i1, int64_t j0,
               int64_t j1) {
  const ConvTail& t = *static_cast<const ConvTail*>(ctx);
  run_region_body_tile(*t.body, c + i0 * ldc + j0 - t.base, ldc, i1 - i0, j1 - j0);
}

// Conv, or with `body` ConvRegion (f32: the body runs on each finished block of the output).
template <class T>
void conv_typed(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out,
                const Graph* body = nullptr) {
  const HostTensor &x = in[0], &w = in[1], &b = in[2];
  const HostTensor& y = out[0];
  if (y.numel() == 0) return;
  const ConvGeo g = conv_geo(node.attrs, x.shape, w.shape, y.shape);
  std::shared_ptr<Storage> hx, hw, hb, hy;
  std::shared_ptr<const Storage> hd;
  const T* xs = dense<T>(x, hx);
  const T* ws = dense<T>(w, hw);
  const T* bs = present(b) ? dense<T>(b, hb) : nullptr;
  T* ys = output_buffer<T>(y, hy);
  GemmEpilogue<T> ep;
  std::shared_ptr<const RegionBody> rb;
  ConvTail tail{};
  if constexpr (std::is_same_v<T, float>) {
    if (body != nullptr) {
      // Claimed for f32 only, so the output is the contiguous f32 buffer the convolution writes.
      if (ys != reinterpret_cast<T*>(y.data()))
        throw_error(ErrorKind::Internal, node.where(), ": the output is not contiguous f32");
      // A body that is one activation of y runs as the epilogue's activation, in place on each
      // finished block's rows (activation_f32); other bodies through the region's steps, which
      // gather short rows into blocks and scatter them back.
      const Node& out = body->node(body->outputs.at(0).node);
      if (body->outputs.size() == 1 && out.kind == OpKind::Activation &&
          body->node(out.inputs.at(0).node).kind == OpKind::Input) {
        ep.act = out.attrs.e<ActivationKind>("kind");
        ep.alpha = static_cast<T>(out.attrs.f("alpha"));
      } else {
        rb = region_body(node, *body, y);
        tail = {rb.get(), ys};
        ep.tile = conv_tail;
        ep.tile_ctx = &tail;
      }
    }
  }
  const bool any = ep.tile != nullptr || ep.act != ActivationKind::Identity;
  const GemmEpilogue<T>* epp = any ? &ep : nullptr;
  if (g.cpg == 1 && g.opg <= 8) {
    conv_depthwise(g, xs, ws, bs, ys, epp);
  } else if (std::is_same_v<T, float> && winograd_suits(g, constant_input(1))) {
    if constexpr (std::is_same_v<T, float>)
      conv_winograd(g, xs, ws,
                    derived_weights(kWinogradWeights, hd, [&] { return winograd_weights(g, ws); }),
                    bs, ys, epp);
  } else if (std::is_same_v<T, float> && implicit_gemm_suits(g)) {
    if constexpr (std::is_same_v<T, float>)
      conv_implicit_gemm(
          g, xs, ws, derived_weights(kImplicitWeights, hd, [&] { return implicit_weights(g, ws); }),
          bs, ys, epp);
  } else {
    conv_gemm(g, xs, ws, bs, ys, epp);
  }
  finish_output(ys, y);
}

void conv_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  if (out[0].dtype == DType::F64)
    conv_typed<double>(node, in, out);
  else
    conv_typed<float>(node, in, out);
}

void conv_region_kernel(const Node& node, std::span<const HostTensor> in,
                        std::span<HostTensor> out) {
  conv_typed<float>(node, in, out, node.attrs.graph("body").get());
}

// ConvTranspose2d: per (image, group), col = w_gᵀ · x_g by gemm over blocks of input rows, then
// col2im scatters col into y (which holds the bias); col2im threads over output channels.
template <class T>
void conv_transpose2d_typed(const Node& node, std::span<const HostTensor> in,
                            std::span<HostTensor> out) {
  const HostTensor &x = in[0], &w = in[1], &b = in[2];
  const HostTensor& y = out[0];
  if (y.numel() == 0) return;
  const Attrs& a = node.attrs;
  const WindowAttrs win = conv_window_attrs(a, 2);
  int64_t s0 = win.strides[0], s1 = win.strides[1];
  int64_t d0 = win.dilations[0], d1 = win.dilations[1];
  int64_t p0 = win.pads.begin[0], p1 = win.pads.begin[1];
  int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  int64_t G = a.i("groups"), cpg = C / G, opg = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  int64_t O = y.shape[1], OH = y.shape[2], OW = y.shape[3];
  int64_t M = opg * KH * KW;
  std::shared_ptr<Storage> hx, hw, hb, hy;
  const T* xs = dense<T>(x, hx);
  const T* ws = dense<T>(w, hw);
  const T* bs = present(b) ? dense<T>(b, hb) : nullptr;
  T* ys = output_buffer<T>(y, hy);
  // Kernel tiles that neither overlap nor leave gaps (stride = kernel, no padding, dilation or
  // output padding: the upsampling layers of detection heads): col2im is a permutation, each
  // output written once as bias + col, with no bias pass before it and no read-modify-write.
  const bool tiles = s0 == KH && s1 == KW && p0 == 0 && p1 == 0 && d0 == 1 && d1 == 1 &&
                     OH == H * KH && OW == W * KW && cpg > 0;
  if (!tiles) fill_bias(ys, bs, N * O, O, OH * OW);
  if (cpg > 0 && H * W > 0) {
    // Kernel tiles: blocks of input rows whose col (≤ 256 KB) stays in L2 from the gemm that
    // writes it to the scatter that reads it; many blocks then also go round the threads as work
    // items (below). Overlapping kernels keep 4 MB blocks: their blocks are not items, and a
    // single image's run in turn, each with a threaded gemm and scatter (two barriers a block).
    // PaddleOCR det's 2 × 2 stride-2 upsamplings to 24 × 320 × 320 and 24 × 160 × 160, two
    // threads on the Zen 3 host, 3 alternating runs of the model, against 4 MB blocks (3 of
    // them, each gemm and scatter threaded): 2.16 / 1.34 / 1.56 → 1.66 / 1.29 / 1.42 ms and
    // 0.90 / 0.61 / 0.71 → 0.69 / 0.57 / 0.52.
    constexpr int64_t kColL2 = int64_t{1} << 16;
    int64_t hb_rows =
        std::clamp<int64_t>((tiles ? kColL2 : kColBudget) / std::max<int64_t>(1, M * W), 1, H);
    // y = bias + col for the tiles of input rows [i0, i1), output channels [ob, oe).
    auto place_tiles = [&](const T* col, T* yg, const T* bias, int64_t i0, int64_t i1, int64_t ob,
                           int64_t oe) {
      using V = Vec<T>;
      constexpr int L = kLanes<V>;
      const int64_t cols = (i1 - i0) * W;
      for (int64_t o = ob; o < oe; ++o) {
        const T bo = bias ? bias[o] : T(0);
        const V bv = splat<V>(bo);
        for (int64_t kh = 0; kh < KH; ++kh) {
          const T* src = col + (o * KH + kh) * KW * cols;
          for (int64_t ih = i0; ih < i1; ++ih) {
            T* dr = yg + (o * OH + ih * KH + kh) * OW;
            const T* sr = src + (ih - i0) * W;
            int64_t iw = 0;
            if (KW == 2)
              for (; iw + L <= W; iw += L) {
                const V a = load<V>(sr + iw), b = load<V>(sr + cols + iw);
                store(dr + 2 * iw, zip<0>(a, b) + bv);
                store(dr + 2 * iw + L, zip<1>(a, b) + bv);
              }
            for (; iw < W; ++iw)
              for (int64_t kw = 0; kw < KW; ++kw) dr[iw * KW + kw] = sr[kw * cols + iw] + bo;
          }
        }
      }
    };
    // Scatters rows [i0, i1) of col (output channels [ob, oe) of the group) into y.
    auto col2im = [&](const T* col, T* yg, int64_t i0, int64_t i1, int64_t ob, int64_t oe) {
      int64_t cols = (i1 - i0) * W;
      for (int64_t o = ob; o < oe; ++o) {
        T* plane = yg + o * OH * OW;
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            const T* src = col + ((o * KH + kh) * KW + kw) * cols;
            int64_t lo, hi, off = kw * d1 - p1;
            valid_range(W, OW, s1, p1, kw * d1, lo, hi);
            for (int64_t ih = i0; ih < i1; ++ih) {
              int64_t oh = ih * s0 - p0 + kh * d0;
              if (oh < 0 || oh >= OH) continue;
              T* dr = plane + oh * OW;
              const T* sr = src + (ih - i0) * W;
              if (s1 == 1)
                add_to(dr + (lo + off), sr + lo, hi - lo);
              else
                for (int64_t iw = lo; iw < hi; ++iw) dr[iw * s1 + off] += sr[iw];
            }
          }
      }
    };
    // Input rows [i0, i1) of unit u (image, group): col by gemm, then scattered into y
    // (threaded over output channels when `threaded`).
    auto rows = [&](int64_t u, int64_t i0, T* col, bool threaded) {
      int64_t n = u / G, gi = u % G;
      const T* wg = ws + gi * cpg * M;
      T* yg = ys + (n * O + gi * opg) * OH * OW;
      const T* bias = bs ? bs + gi * opg : nullptr;
      const int64_t i1 = std::min(H, i0 + hb_rows), cols = (i1 - i0) * W;
      auto scatter = [&](int64_t ob, int64_t oe) {
        if (tiles)
          place_tiles(col, yg, bias, i0, i1, ob, oe);
        else
          col2im(col, yg, i0, i1, ob, oe);
      };
      gemm_t(M, cols, cpg, wg, 1, M, xs + ((n * C + gi * cpg) * H + i0) * W, H * W, 1, T(0), col,
             cols);
      if (threaded)
        parallel_for(opg, std::max<int64_t>(1, kGrainWork / (KH * KW * cols)), scatter);
      else
        scatter(0, opg);
    };
    // Work items, each on one thread (its gemm then runs there too): a unit and a block of its
    // input rows where the kernel's tiles write each output once (blocks write disjoint rows;
    // threading each block's gemm and scatter instead put two barriers in every block), else a
    // whole unit (overlapping kernels add into rows that neighbouring blocks share). From two
    // items a thread; else the blocks in turn, each threaded.
    const int64_t blocks = (H + hb_rows - 1) / hb_rows;
    const int64_t per_item = tiles ? 1 : blocks, items = N * G * blocks / per_item;
    if (items >= 2 * num_threads()) {
      parallel_for(items, 1, [&](int64_t begin, int64_t end) {
        std::shared_ptr<Storage> hold;
        T* col = scratch<T>(M * hb_rows * W, hold);
        for (int64_t t = begin * per_item; t < end * per_item; ++t)
          rows(t / blocks, t % blocks * hb_rows, col, false);
      });
    } else {
      std::shared_ptr<Storage> hold;
      T* col = scratch<T>(M * hb_rows * W, hold);
      for (int64_t t = 0; t < N * G * blocks; ++t)
        rows(t / blocks, t % blocks * hb_rows, col, true);
    }
  }
  finish_output(ys, y);
}

void conv_transpose2d_kernel(const Node& node, std::span<const HostTensor> in,
                             std::span<HostTensor> out) {
  if (out[0].dtype == DType::F64)
    conv_transpose2d_typed<double>(node, in, out);
  else
    conv_transpose2d_typed<float>(node, in, out);
}

}  // namespace

void register_conv_kinds(KernelRegistry& r) {
  r.native(OpKind::Conv, conv_kernel, kConvFloats);
  r.native(OpKind::ConvRegion, conv_region_kernel, {DType::F32});
  r.native(OpKind::ConvTranspose2d, conv_transpose2d_kernel, kConvFloats);
}

TESSEL_ISA_END
