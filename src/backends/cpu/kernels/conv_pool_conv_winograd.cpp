// Conv (f32; AVX-512 and AVX2) by Winograd's minimal filtering F(2 × 2, 3 × 3), for unstrided,
// undilated, ungrouped 3 × 3 convolutions with many channels (winograd_suits). Each 2 × 2 block
// of outputs (a "tile") is
//   y = Aᵀ [ Σ_c (G g_oc Gᵀ) ⊙ (Bᵀ d_c B) ] A
// where d_c is the 4 × 4 input patch under the tile in channel c and g_oc the filter: 16
// multiplies a tile and channel pair where the direct convolution does 36. The sum over channels
// is, for each of the 16 points ξ of the transformed domain, a GEMM
//   M[ξ] (outputs × tiles) = U[ξ] (outputs × channels) · V[ξ] (channels × tiles),
// run by the implicit GEMM's register tile (conv_pool_tile.h). Tiles go in blocks of kNR (the
// register tile's columns) taken in row-major tile order across the plane, so that a block spans
// tile rows on small planes (7 × 7 tiles at 14 × 14: three full blocks and one tile, not seven
// blocks of 7); a block's input transform runs along each tile row it covers, a vector of tiles
// at a time.
//   Bᵀ = [1 0 −1 0; 0 1 1 0; 0 −1 1 0; 0 1 0 −1], G = [1 0 0; ½ ½ ½; ½ −½ ½; 0 0 1],
//   Aᵀ = [1 1 1 0; 0 1 −1 −1].
// The transforms add rounding (inputs are combined before the products): against a
// double-precision sum, about twice the direct f32 convolution's error (512 channels, outputs up
// to ~50: 4.2e-5 against 1.7e-5; 64 channels: 5.9e-6 against 3.1e-6).
#include <algorithm>
#include <memory>
#include <vector>

#include "backends/cpu/kernels/conv_pool.h"
#include "backends/cpu/kernels/conv_pool_tile.h"
#include "runtime/thread_pool.h"
#include "tessel/error.h"

TESSEL_ISA_BEGIN
namespace conv_pool {

#if defined(TESSEL_CPU_ISA_AVX512) || defined(TESSEL_CPU_ISA_AVX2)
namespace {

constexpr int kXi = 16;                 // points of the transformed domain (4 × 4)
constexpr int kTB = kNR;                // tiles a block: one register tile's columns
constexpr int64_t kMBytes = 256 << 10;  // a task's products M for a group of panels
constexpr int64_t kVBytes = 64 << 10;   // a point's V for a task's tiles, where U is past L2
constexpr int64_t kUResidentBytes = 256 << 10;  // U up to this stays in L2 across tasks
constexpr int64_t kMaxBlocks = 4;               // blocks a task
constexpr int64_t kCacheLineFloats = 16;

// The plane's tiles: tile (ty, tx) covers outputs (2ty .. 2ty + 1, 2tx .. 2tx + 1) and reads
// input rows 2ty − pt .. 2ty − pt + 3, columns 2tx − pl .. 2tx − pl + 3 (zero outside x).
struct WinoPlan {
  int64_t H, W, pt, pl;  // the input plane and its leading padding
  int64_t OH, OW, TH, TW, tiles;
};

WinoPlan wino_plan(const ConvGeo& g) {
  WinoPlan p;
  p.H = g.w.in[1];
  p.W = g.w.in[2];
  p.pt = g.w.pad[1];
  p.pl = g.w.pad[2];
  p.OH = g.w.out[1];
  p.OW = g.w.out[2];
  p.TH = (p.OH + 1) / 2;
  p.TW = (p.OW + 1) / 2;
  p.tiles = p.TH * p.TW;
  return p;
}

// The row length of a segment's staged input rows (input_transform): a task's widest segment's
// columns, its last vector's reads included.
inline int64_t stage_cols(int64_t width) { return 2 * (width + kL) + 2; }

// A vector of filters' (3 × 3, row-major taps g) 16 transformed weights u = G g Gᵀ, point
// ξ = 4i + j.
inline void transform_filter(const Vf (&g)[9], Vf (&u)[kXi]) {
  Vf t[4][3];
  for (int j = 0; j < 3; ++j) {
    const Vf g0 = g[j], g1 = g[3 + j], g2 = g[6 + j];
    t[0][j] = g0;
    t[1][j] = 0.5f * (g0 + g1 + g2);
    t[2][j] = 0.5f * (g0 - g1 + g2);
    t[3][j] = g2;
  }
  for (int i = 0; i < 4; ++i) {
    u[4 * i + 0] = t[i][0];
    u[4 * i + 1] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
    u[4 * i + 2] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
    u[4 * i + 3] = t[i][2];
  }
}

// U[ξ][q] (channels × kMR, as the register tile reads A) for panel q: in chunks of channels, the
// panel's filters are gathered tap-major into T[tap][c][r] (rows past O zero), whose rows then
// transform a vector of (c, r) entries at a time into U's rows, which are in the same order.
// (Filter by filter, with 16 scalar stores each, it was 40 cycles a filter, as long as the
// products of a 256-channel layer at 14 × 14.)
constexpr int64_t kFilterChunk = 64;  // channels: T is 9 · 64 · kMR floats, in L1
void transform_panel(const float* wt, int64_t C, int64_t O, int64_t q, float* U, int64_t ldu,
                     float* T) {
  for (int64_t c0 = 0; c0 < C; c0 += kFilterChunk) {
    const int64_t cn = std::min(kFilterChunk, C - c0), n = cn * kMR;
    for (int r = 0; r < kMR; ++r) {
      const int64_t o = q * kMR + r;
      if (o >= O) {
        for (int64_t e = r; e < 9 * n; e += kMR) T[e] = 0.0f;
        continue;
      }
      const float* src = wt + (o * C + c0) * 9;
      float* t = T + r;
      for (int64_t c = 0; c < cn; ++c, src += 9, t += kMR)
#pragma GCC unroll 9
        for (int k = 0; k < 9; ++k) t[k * n] = src[k];
    }
    float* u0 = U + (q * C + c0) * kMR;
    for (int64_t e = 0; e < n; e += kL) {
      const int left = static_cast<int>(std::min<int64_t>(kL, n - e));
      Vf g[9], u[kXi];
      for (int k = 0; k < 9; ++k)
        g[k] = left == kL ? load<Vf>(T + k * n + e) : load_partial<Vf>(T + k * n + e, left);
      transform_filter(g, u);
      for (int xi = 0; xi < kXi; ++xi) {
        if (left == kL)
          store(u0 + xi * ldu + e, u[xi]);
        else
          store_partial(u0 + xi * ldu + e, u[xi], left);
      }
    }
  }
}

// A run of n tiles along tile row ty from tile tx, at columns h .. h + n of a block.
struct Segment {
  int64_t ty, tx, n, h;
};

// The segments of tiles [t0, t1) in row-major order.
std::vector<Segment> segments_of(const WinoPlan& p, int64_t t0, int64_t t1) {
  std::vector<Segment> s;
  for (int64_t t = t0; t < t1;) {
    const int64_t ty = t / p.TW, tx = t % p.TW, n = std::min(t1 - t, p.TW - tx);
    s.push_back({ty, tx, n, t - t0});
    t += n;
  }
  return s;
}

// d's columns 0 .. 3 for a vector of kL tiles from the input row at `row` (x's or staged, from
// the first tile's first column): the even and odd elements of the row and of the same row two
// on. Full vectors (`Blocks`) take them within 16-byte blocks, their tiles then in a permuted
// order (even_in_blocks) that the output transform undoes; a segment's last vector keeps the
// tiles in order, as its columns past the segment belong to other tiles.
template <bool Blocks>
inline void patch_columns(const float* row, Vf (&d)[4]) {
  const Vf a0 = load<Vf>(row), a1 = load<Vf>(row + kL);
  const Vf b0 = load<Vf>(row + 2), b1 = load<Vf>(row + kL + 2);
  if constexpr (Blocks) {
    d[0] = even_in_blocks(a0, a1);
    d[1] = odd_in_blocks(a0, a1);
    d[2] = even_in_blocks(b0, b1);
    d[3] = odd_in_blocks(b0, b1);
  } else {
    d[0] = even_lanes(a0, a1);
    d[1] = odd_lanes(a0, a1);
    d[2] = even_lanes(b0, b1);
    d[3] = odd_lanes(b0, b1);
  }
}

// Bᵀ d B for a vector of tiles whose input rows start at `base`, wp apart, its 16 points stored at
// dst, ξ apart by ldxi, `room` columns of them at most. Bᵀ's rows are combined as the rows arrive,
// so that fewer than 16 vectors are live at once.
template <bool Blocks>
inline void input_vector(const float* base, int64_t wp, float* dst, int64_t ldxi, int64_t room) {
  Vf d0[4], d1[4], d2[4], d3[4], t[4][4];
  patch_columns<Blocks>(base, d0);
  patch_columns<Blocks>(base + 2 * wp, d2);
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) t[0][j] = d0[j] - d2[j];
  patch_columns<Blocks>(base + wp, d1);
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    t[1][j] = d1[j] + d2[j];
    t[2][j] = d2[j] - d1[j];
  }
  patch_columns<Blocks>(base + 3 * wp, d3);
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) t[3][j] = d1[j] - d3[j];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    const Vf out[4] = {t[i][0] - t[i][2], t[i][1] + t[i][2], t[i][2] - t[i][1], t[i][1] - t[i][3]};
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      if (room >= kL)
        store(dst + (4 * i + j) * ldxi, out[j]);
      else
        store_partial(dst + (4 * i + j) * ldxi, out[j], static_cast<int>(room));
    }
  }
}

// V[ξ][c][h] (rows of `width` columns) = Bᵀ d B for the segment's tiles, channels [c0, c1) of
// the image x, a vector of kL tiles at a time. A segment's last vector writes columns of the
// segments after it (rewritten by them), or, past the row's width, only its own. Where the
// segment's reads (its last vector's included) lie inside x, the vectors read x; elsewhere each
// channel's 4 rows are first staged, zero-padded, in `stage` (stage_cols(width) wide). (A
// zero-padded copy of all of x, made beforehand, cost a pass over memory: PaddleOCR det's 96 →
// 24-channel layers at 160 × 160 spent ~20% of their time on it.)
void input_transform(const WinoPlan& p, const float* x, int64_t C, int64_t c0, int64_t c1,
                     const Segment& s, int64_t width, float* stage, float* V) {
  const int64_t ldxi = C * width, row0 = 2 * s.ty - p.pt, col0 = 2 * s.tx - p.pl;
  const int64_t last = (s.n - 1) / kL * kL;    // the last vector's first tile
  const int64_t cols = 2 * last + 2 * kL + 2;  // columns read from col0
  const bool inside = row0 >= 0 && row0 + 4 <= p.H && col0 >= 0 && col0 + cols <= p.W;
  const int64_t sw = stage_cols(width);
  for (int64_t c = c0; c < c1; ++c) {
    const float* xc = x + c * p.H * p.W;
    const float* base = xc + row0 * p.W + col0;
    int64_t ld = p.W;
    if (!inside) {
      for (int64_t r = 0; r < 4; ++r) {
        float* d = stage + r * sw;
        if (row0 + r < 0 || row0 + r >= p.H) {
          std::fill(d, d + cols, 0.0f);
          continue;
        }
        const float* src = xc + (row0 + r) * p.W;
        const int64_t a = std::clamp<int64_t>(-col0, 0, cols);
        const int64_t b = std::clamp<int64_t>(p.W - col0, a, cols);
        std::fill(d, d + a, 0.0f);
        std::copy(src + col0 + a, src + col0 + b, d + a);
        std::fill(d + b, d + cols, 0.0f);
      }
      base = stage;
      ld = sw;
    }
    float* v = V + c * width + s.h;
    int64_t h = 0;
    for (; h + kL <= s.n; h += kL) input_vector<true>(base + 2 * h, ld, v + h, ldxi, kL);
    if (h < s.n) input_vector<false>(base + 2 * h, ld, v + h, ldxi, width - (s.h + h));
  }
}

// Output columns [0, cols) of a row from the interleaved pair lo, hi (2·kL columns).
inline void store_columns(float* y, Vf lo, Vf hi, int64_t cols) {
  if (cols >= 2 * kL) {
    store(y, lo);
    store(y + kL, hi);
  } else if (cols > kL) {
    store(y, lo);
    store_partial(y + kL, hi, static_cast<int>(cols - kL));
  } else if (cols == kL) {
    store(y, lo);
  } else {
    store_partial(y, lo, static_cast<int>(cols));
  }
}

// Aᵀ m A + bias for a vector of tiles, m's 16 points at mo, ξ apart by ldxi, into output rows
// y0 and (if `second`) y0 + ow, `cols` columns from the vector's first tile's. Full vectors
// (`Blocks`) hold their tiles in even_in_blocks' order, which zip_blocks undoes.
template <bool Blocks>
inline void output_vector(const float* mo, int64_t ldxi, Vf bias, float* y0, int64_t ow,
                          bool second, int64_t cols) {
  Vf a[4], b[4];  // Aᵀ m: its two rows, summed as m's rows arrive
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) a[j] = load<Vf>(mo + j * ldxi);
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const Vf m1 = load<Vf>(mo + (4 + j) * ldxi), m2 = load<Vf>(mo + (8 + j) * ldxi);
    a[j] += m1 + m2;
    b[j] = m1 - m2 - load<Vf>(mo + (12 + j) * ldxi);
  }
  const Vf y00 = a[0] + a[1] + a[2] + bias, y01 = a[1] - a[2] - a[3] + bias;
  const Vf y10 = b[0] + b[1] + b[2] + bias, y11 = b[1] - b[2] - b[3] + bias;
  if constexpr (Blocks) {
    store_columns(y0, zip_blocks<0>(y00, y01), zip_blocks<1>(y00, y01), cols);
    if (second) store_columns(y0 + ow, zip_blocks<0>(y10, y11), zip_blocks<1>(y10, y11), cols);
  } else {
    store_columns(y0, zip<0>(y00, y01), zip<1>(y00, y01), cols);
    if (second) store_columns(y0 + ow, zip<0>(y10, y11), zip<1>(y10, y11), cols);
  }
}

// y's channels [o0, o1) over the segment's tiles = Aᵀ M A + bias, M[ξ][o − o0][h] (rows of
// `width`, ξ apart by ldxi; read up to a vector past the row). yo: channel o0's plane.
void output_transform(const WinoPlan& p, const float* M, int64_t width, int64_t ldxi,
                      const float* bias, int64_t o0, int64_t o1, const Segment& s, float* yo) {
  const bool second = 2 * s.ty + 1 < p.OH;
  for (int64_t o = o0; o < o1; ++o) {
    const Vf bv = splat<Vf>(bias != nullptr ? bias[o] : 0.0f);
    const float* mo = M + (o - o0) * width + s.h;
    float* y0 = yo + (o - o0) * p.OH * p.OW + 2 * s.ty * p.OW + 2 * s.tx;
    int64_t h = 0;
    for (; h + kL <= s.n; h += kL)
      output_vector<true>(mo + h, ldxi, bv, y0 + 2 * h, p.OW, second,
                          std::min<int64_t>(2 * kL, p.OW - 2 * (s.tx + h)));
    if (h < s.n)
      output_vector<false>(mo + h, ldxi, bv, y0 + 2 * h, p.OW, second,
                           std::min(2 * (s.n - h), p.OW - 2 * (s.tx + h)));
  }
}

}  // namespace

bool winograd_suits(const ConvGeo& g, bool weights_ready) {
  const Window3& w = g.w;
  bool plain = w.in[0] == 1 && w.k[0] == 1 && w.out[0] == 1 && w.k[1] == 3 && w.k[2] == 3;
  for (int d = 1; d < 3; ++d) plain = plain && w.stride[d] == 1 && w.dil[d] == 1;
  // Where it measured faster than the implicit GEMM (Zen 3, AVX2, two threads): from 32 input
  // and 24 output channels (16 → 16 at 56 × 56 even), on planes of at least 25 tiles, or 64
  // over the batch. On smaller planes the weights' transform, made on every call, is not
  // amortized: 512 channels at 7 × 7 (16 tiles) 1.9 → 2.2 ms. Made once (the weights a graph
  // constant), it is from 9 tiles a plane: 512 channels at 7 × 7 1.88 → 0.89–1.01 ms, at 5 × 5
  // 1.22 → 0.91, 256 at 6 × 6 0.50 → 0.23–0.31, 128 at 7 × 7 0.19 → 0.09; at 4 × 4 (4 tiles,
  // half a vector a tile row) 0.67 → 0.78, and 2.24 → 2.52 with 4 images.
  const int64_t tiles = (w.out[1] + 1) / 2 * ((w.out[2] + 1) / 2);
  return plain && g.G == 1 && g.C >= 32 && g.O >= 24 &&
         (tiles >= (weights_ready ? 9 : 25) || g.N * tiles >= 64);
}

// U[ξ][panel][c][kMR]: each panel's rows k-major, as the register tile reads A; rows past O
// zero. The points lie a cache line more than a whole number of panels apart: at a multiple of
// 4 KB (512 channels) their 16 interleaved store streams fell in the same L1 sets, and the
// transform took 150 cycles a filter.
static int64_t winograd_ldu(int64_t C, int64_t O) {
  return (O + kMR - 1) / kMR * C * kMR + kCacheLineFloats;  // between points ξ
}

std::shared_ptr<Storage> winograd_weights(const ConvGeo& g, const float* wt) {
  const int64_t C = g.C, O = g.O, ldu = winograd_ldu(C, O);
  const int64_t panels = (O + kMR - 1) / kMR;
  std::shared_ptr<Storage> hu;
  float* U = scratch<float>(kXi * ldu, hu);
  parallel_for(panels, std::max<int64_t>(1, 4096 / (kMR * C)), [&](int64_t q0, int64_t q1) {
    std::shared_ptr<Storage> ht;
    float* T = scratch<float>(9 * kFilterChunk * kMR, ht);
    for (int64_t q = q0; q < q1; ++q) transform_panel(wt, C, O, q, U, ldu, T);
  });
  return hu;
}

void conv_winograd(const ConvGeo& g, const float* x, const float* wt, const float* ready,
                   const float* bias, float* y, const GemmEpilogue<float>* ep) {
  const WinoPlan p = wino_plan(g);
  const int64_t C = g.C, O = g.O;
  const int64_t panels = (O + kMR - 1) / kMR, ldu = winograd_ldu(C, O);
  std::shared_ptr<Storage> hu;
  const float* U = ready;
  if (U == nullptr) {
    hu = winograd_weights(g, wt);
    U = reinterpret_cast<const float*>(hu->bytes.get());
  }

  // A task's tiles: `sb` blocks of kTB (a register tile's columns each). Where U is past L2, it
  // streams in once a task, so a task takes as many blocks as keep a point's V (channels ×
  // tiles) within kVBytes, each panel of U then serving them all from L1.
  const int64_t blocks = (p.tiles + kTB - 1) / kTB;
  const int64_t u_bytes = kXi * ldu * static_cast<int64_t>(sizeof(float));
  const int64_t sb =
      u_bytes <= kUResidentBytes
          ? 1
          : std::clamp<int64_t>(kVBytes / (C * kTB * static_cast<int64_t>(sizeof(float))), 1,
                                std::min(blocks, kMaxBlocks));
  const int64_t width = sb * kTB, supers = (blocks + sb - 1) / sb;
  // Tasks: (image, run of blocks, run of panels). Panels are split where there are too few
  // runs of blocks to go round the threads twice (each split transforms its input again).
  const int64_t want = 2 * num_threads();
  const int64_t splits = std::clamp<int64_t>((want + g.N * supers - 1) / (g.N * supers), 1, panels);
  const int64_t per_split = (panels + splits - 1) / splits;
  // Panels a group: their products M for the task's tiles stay within kMBytes.
  const int64_t group = std::clamp<int64_t>(
      kMBytes / (kXi * kMR * width * static_cast<int64_t>(sizeof(float))), 1, per_split);
  const int64_t chunks = (C - 1) / kKC + 1, kc = (C + chunks - 1) / chunks;

  // B's row c of a point's V: its offset from the point's first row.
  std::vector<int32_t> off(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) off[static_cast<size_t>(c)] = static_cast<int32_t>(c * width);
  const float zeros[kMR] = {};

  // With panels split, each run of blocks' V is transformed once, before the tasks, in chunks
  // of channels (each split transforming it again was 30% of a 256-channel layer at 14 × 14 on
  // two threads).
  const int64_t ldv = C * width, ldm = group * kMR * width;
  std::shared_ptr<Storage> hv;
  float* Vs = nullptr;
  if (splits > 1) {
    Vs = scratch<float>(g.N * supers * kXi * ldv, hv);
    const int64_t cchunks = (C + kL - 1) / kL;
    parallel_for(g.N * supers * cchunks, 1, [&](int64_t u0, int64_t u1) {
      std::shared_ptr<Storage> hs;
      float* stage = scratch<float>(4 * stage_cols(width), hs);
      for (int64_t u = u0; u < u1; ++u) {
        const int64_t ns = u / cchunks, c0 = u % cchunks * kL, c1 = std::min(C, c0 + kL);
        const int64_t t0 = ns % supers * width, t1 = std::min(p.tiles, t0 + width);
        for (const Segment& s : segments_of(p, t0, t1))
          input_transform(p, x + ns / supers * C * p.H * p.W, C, c0, c1, s, width, stage,
                          Vs + ns * kXi * ldv);
      }
    });
  }

  parallel_for(g.N * supers * splits, 1, [&](int64_t i0, int64_t i1) {
    std::shared_ptr<Storage> hold;
    float* M =
        scratch<float>(kXi * ldm + kL + 4 * stage_cols(width) + (splits > 1 ? 0 : kXi * ldv), hold);
    float* stage = M + kXi * ldm + kL;
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t n = i / (supers * splits), b = i / splits % supers, sp = i % splits;
      const int64_t t0 = b * width, t1 = std::min(p.tiles, t0 + width);
      const int64_t qa = sp * per_split, qb = std::min(panels, qa + per_split);
      if (qa >= qb) continue;
      const std::vector<Segment> segs = segments_of(p, t0, t1);
      float* V = Vs != nullptr ? Vs + (n * supers + b) * kXi * ldv : stage + 4 * stage_cols(width);
      if (Vs == nullptr)
        for (const Segment& s : segs)
          input_transform(p, x + n * C * p.H * p.W, C, 0, C, s, width, stage, V);
      float* yn = y + n * O * g.P;
      for (int64_t q0 = qa; q0 < qb; q0 += group) {
        const int64_t q1 = std::min(qb, q0 + group);
        for (int xi = 0; xi < kXi; ++xi)
          for (int64_t k0 = 0; k0 < C; k0 += kc) {
            const int64_t kn = std::min(kc, C - k0);
            for (int64_t q = q0; q < q1; ++q)
              for (int64_t j = 0, nr = 0; t0 + j < t1; j += nr) {
                const TileFn kernel = next_tile(std::min(t1 - t0 - j, int64_t{kTB}), nr);
                kernel(kn, U + xi * ldu + (q * C + k0) * kMR, V + xi * ldv + j, off.data() + k0,
                       zeros, M + xi * ldm + (q - q0) * kMR * width + j, width, kMR,
                       static_cast<int>(nr), k0 > 0);
              }
          }
        const int64_t o0 = q0 * kMR, o1 = std::min(O, q1 * kMR);
        for (const Segment& s : segs) {
          output_transform(p, M, width, ldm, bias, o0, o1, s, yn + o0 * g.P);
          if (ep == nullptr) continue;
          const int64_t col0 = 2 * s.tx, col1 = std::min(p.OW, 2 * (s.tx + s.n));
          for (int64_t r = 2 * s.ty; r < std::min(p.OH, 2 * s.ty + 2); ++r)
            apply_gemm_epilogue(*ep, yn, g.P, o0, o1, r * p.OW + col0, r * p.OW + col1);
        }
      }
    }
  });
}
#else
bool winograd_suits(const ConvGeo&, bool) { return false; }
std::shared_ptr<Storage> winograd_weights(const ConvGeo&, const float*) {
  throw_error(ErrorKind::Internal, "winograd_weights: not built for this ISA");
}
void conv_winograd(const ConvGeo&, const float*, const float*, const float*, const float*, float*,
                   const GemmEpilogue<float>*) {
  throw_error(ErrorKind::Internal, "conv_winograd: not built for this ISA");
}
#endif

}  // namespace conv_pool
TESSEL_ISA_END
