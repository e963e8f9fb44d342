// Conv (f32; AVX-512 and AVX2) as an implicit GEMM, for 1-D and 2-D convolutions of column stride
// up to 4 with few output channels a group (or more: implicit_gemm_suits). The gemm path packs
// B's micro-panels from x, writing each input element once per kernel tap (nine times for a
// 3×3); with few rows of A to share them, the packing is a large part of the time (~30% of
// PaddleOCR det's 96→24-channel 3×3 convolutions at 160×160). Here each task copies a band of
// input rows once, zero-padded, into a buffer that stays in L2, and the micro-kernel reads B's
// vectors straight from it: row p of B (channel c, tap kh, kw) for output columns ow .. ow+kNR-1
// of output row oh is the band's padded row (oh·stride + kh·dil) of channel c from column ow +
// kw·dil on, one offset from a table per p. At a column stride s the band's rows are kept in s
// phases (see wq below), and the tap reads phase kw·dil mod s from ow + kw·dil / s on.
#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "backends/cpu/kernels/conv_pool.h"
#include "backends/cpu/kernels/conv_pool_tile.h"
#include "runtime/thread_pool.h"
#include "tessel/error.h"

TESSEL_ISA_BEGIN
namespace conv_pool {

#if defined(TESSEL_CPU_ISA_AVX512) || defined(TESSEL_CPU_ISA_AVX2)
namespace {

// The cache budgets by vector width: for Zen 5's 1 MB L2 a core (AVX-512), Zen 3's 512 KB (AVX2).
#if defined(TESSEL_CPU_ISA_AVX512)
constexpr int64_t kBandBytes = 512 << 10;       // a task's input band, in L2
constexpr int64_t kMaxWeightBytes = 768 << 10;  // a group's weights past kMaxRows, in L2
#else
constexpr int64_t kMaxPlane = 1024;  // output positions, past kMaxRows (implicit_gemm_suits)
constexpr int64_t kBandBytes = 256 << 10;
#endif
constexpr int64_t kMaxRows = 64;  // output channels a group (more: see implicit_gemm_suits)

// The band's output rows [0, rows) for every panel of output channels; output row r's column ow
// is the band's position r·pitch + ow. Unstrided (`flat`), next_tile's tiles run on across the
// rows (positions past OW are padding, computed and dropped); strided, each row is tiled alone.
// Past kKC k's, a tile runs them in equal chunks of at most kKC over every panel, accumulating
// in `cbuf` (panels · kMR × kNR), whose rows' segments are then copied to the output rows they
// belong to; so does a tile that spans two rows. Others store to y (the band's first output row
// of the group's first channel).
void band_tiles(const ConvGeo& g, const float* band, const int32_t* off, const float* ag,
                const float* bg, int64_t rows, int64_t pitch, bool flat, float* y, float* cbuf) {
  const int64_t OW = g.w.out[2], panels = (g.opg + kMR - 1) / kMR;
  const int64_t chunks = (g.K - 1) / kKC + 1, kc = (g.K + chunks - 1) / chunks;  // K >= 2
  auto run = [&](int64_t j, int64_t nr, TileFn kernel) {
    const int64_t r0 = j / pitch;
    if (chunks == 1 && j + nr <= r0 * pitch + OW) {
      for (int64_t q = 0; q < panels; ++q)
        kernel(g.K, ag + q * g.K * kMR, band + j, off, bg + q * kMR,
               y + q * kMR * g.P + r0 * OW + (j - r0 * pitch), g.P,
               static_cast<int>(std::min<int64_t>(kMR, g.opg - q * kMR)), static_cast<int>(nr),
               false);
      return;
    }
    for (int64_t k0 = 0; k0 < g.K; k0 += kc) {
      const int64_t kn = std::min(kc, g.K - k0);
      for (int64_t q = 0; q < panels; ++q)
        kernel(kn, ag + (q * g.K + k0) * kMR, band + j, off + k0, bg + q * kMR,
               cbuf + q * kMR * kNR, kNR, kMR, kNR, k0 > 0);
    }
    for (int64_t r = r0; r * pitch < j + nr; ++r) {
      const int64_t lo = std::max(j, r * pitch), hi = std::min(j + nr, r * pitch + OW);
      if (lo >= hi) continue;
      for (int64_t i = 0; i < g.opg; ++i)
        copy_row(cbuf + i * kNR + (lo - j), y + i * g.P + r * OW + (lo - r * pitch), hi - lo);
    }
  };
  if (flat) {
    const int64_t end = (rows - 1) * pitch + OW;
    for (int64_t j = 0, nr = 0; j < end; j += nr) {
      const TileFn kernel = next_tile(end - j, nr);
      run(j, nr, kernel);
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t ow = 0, nr = 0; ow < OW; ow += nr) {
      const TileFn kernel = next_tile(OW - ow, nr);
      run(r * pitch + ow, nr, kernel);
    }
}

}  // namespace

bool implicit_gemm_suits(const ConvGeo& g) {
  const Window3& w = g.w;
  // The tap offsets are int32: a one-row band of every channel must stay well inside them.
  const int64_t min_band = g.cpg * ((w.k[1] - 1) * w.dil[1] + 1) * w.stride[2] *
                           (w.out[2] + (w.k[2] - 1) * w.dil[2] / w.stride[2] + kNR + kL);
  const int64_t OW = w.out[2];
#if defined(TESSEL_CPU_ISA_AVX512)
  // Past kMaxRows output channels: where a group's weights stay in L2 (kMaxWeightBytes) and an
  // output row's tiles fill at least 85% of their lanes (the im2col path flattens the rows and
  // wastes none). Two threads, 5 rounds, against the im2col path: 3 × 3 convolutions
  // 128 → 128 at 28 × 28 1.09 → 0.95 ms, at 32 × 32 1.34 → 1.05, at 56 × 56 3.80 → 3.29;
  // 96 → 96 at 32 × 32 0.79 → 0.59; 64 → 128 at 28 × 28 0.55 → 0.49. Left on im2col: 40 wide
  // (83% of the lanes; even), 20 wide (62%; slower), 192 channels and up (weights past L2:
  // 256 at 14 × 14 and 28 × 28 slower, 192 at 28 × 28 even).
  const int64_t tiles = (OW + kNR - 1) / kNR, last = OW - (tiles - 1) * kNR;
  const double fill =
      static_cast<double>(OW) / static_cast<double>((tiles - 1) * kNR + (last + kL - 1) / kL * kL);
  const bool rows_ok =
      g.opg <= kMaxRows ||
      (g.opg * g.K * static_cast<int64_t>(sizeof(float)) <= kMaxWeightBytes && fill >= 0.85);
#else
  // Past kMaxRows output channels: unstrided, on planes of at most kMaxPlane positions, where
  // the gemm path has few columns to share between the threads. Zen 3 host, two threads, 5
  // rounds, against the gemm path: 3 × 3 convolutions 128 → 128 at 28 × 28 1.59 → 1.51 ms, 256
  // → 256 at 14 × 14 2.11 → 1.90, 64 → 128 at 28 × 28 0.82 → 0.78, 96 → 96 at 32 × 32 1.17 →
  // 1.11. Left on the gemm path: 128 → 128 at 56 × 56 (5.7 against 6.4) and the strided ones
  // (128 → 256 at stride 2 from 28 × 28 0.90 against 1.12, 64 → 128 from 56 × 56 0.90 against
  // 1.04), whose weights the implicit tiles read again for every 16 columns.
  const bool rows_ok =
      g.opg <= kMaxRows || (w.stride[1] == 1 && w.stride[2] == 1 && w.out[1] * OW <= kMaxPlane);
#endif
  return w.in[0] == 1 && w.k[0] == 1 && w.out[0] == 1 && w.stride[2] <= 4 && g.KK > 1 && rows_ok &&
         w.out[2] >= kL && g.cpg > 0 && min_band < (int64_t{1} << 30);
}

// A (each group's weights) in kMR-row panels, k-major, rows past a group's outputs zero.
std::shared_ptr<Storage> implicit_weights(const ConvGeo& g, const float* wt) {
  const int64_t panels = (g.opg + kMR - 1) / kMR;
  std::shared_ptr<Storage> ha;
  float* apk = scratch<float>(g.G * panels * kMR * g.K, ha);
  // Panels packed in parallel, each written in order from its kMR rows (packed by one thread,
  // element by element down each row, it was ~8% of a 128-channel 3 × 3 convolution at 28 × 28
  // and left the other thread idle as long).
  parallel_for(g.G * panels, std::max<int64_t>(1, 16384 / (kMR * g.K)),
               [&](int64_t u0, int64_t u1) {
                 for (int64_t u = u0; u < u1; ++u) {
                   const int64_t gi = u / panels, o0 = u % panels * kMR;
                   const int rows = static_cast<int>(std::min<int64_t>(kMR, g.opg - o0));
                   const float* src = wt + (gi * g.opg + o0) * g.K;
                   float* a = apk + u * kMR * g.K;
                   for (int64_t p = 0; p < g.K; ++p)
                     for (int i = 0; i < kMR; ++i)
                       a[p * kMR + i] = i < rows ? src[i * g.K + p] : 0.0f;
                 }
               });
  return ha;
}

void conv_implicit_gemm(const ConvGeo& g, const float* x, const float* wt, const float* ready,
                        const float* bias, float* y, const GemmEpilogue<float>* ep) {
  const Window3& w = g.w;
  const int64_t H = w.in[1], W = w.in[2], OH = w.out[1], OW = w.out[2];
  const int64_t KH = w.k[1], KW = w.k[2], sh = w.stride[1], dh = w.dil[1], dw = w.dil[2];
  const int64_t pt = w.pad[1], pl = w.pad[2];
  const int64_t sw = w.stride[2];
  // A band row holds the padded input row in sw phases (phase f: padded columns f, f + sw, ...),
  // each wq long: output column ow's tap kw then reads phase (kw·dw) mod sw at ow + (kw·dw)/sw,
  // so a tile's columns are consecutive for any column stride. wq covers every column a tile
  // reads, the last tile's included.
  // Unstrided, the band's rows lie end to end at the padded width instead (`flat`): a tile then
  // runs on across output rows, its columns past a row's end computed and dropped, so that a row
  // narrower than a whole number of tiles wastes only its padding columns. Rows of 28 filled 28
  // of a tile's 32 lanes, of 56 56 of 64; at the padded width 28 of 30 and 56 of 58.
  const bool flat = sw == 1 && sh == 1;
  const int64_t wq = flat ? OW + (KW - 1) * dw : (OW + (KW - 1) * dw / sw + kNR + kL - 1) / kL * kL;
  const int64_t wa = sw * wq;
  // Output rows a band: its input rows fit kBandBytes, and the bands go round the threads.
  const int64_t row_bytes = g.cpg * wa * static_cast<int64_t>(sizeof(float));
  const int64_t fit = std::max<int64_t>(1, (kBandBytes / row_bytes - (KH - 1) * dh - 1) / sh + 1);
  const int64_t want = (2 * num_threads() + g.N * g.G - 1) / (g.N * g.G);  // bands per plane
  const int64_t spread = (OH + want - 1) / want;
  const int64_t rows = std::clamp<int64_t>(std::min(fit, spread), 1, OH);
  const int64_t bands = (OH + rows - 1) / rows;
  const int64_t band_rows = (rows - 1) * sh + (KH - 1) * dh + 1;  // input rows of a full band
  // A channel's rows in the band, and (flat) a vector past them that a last tile reads.
  const int64_t cs = band_rows * wa + (flat ? kL : 0);

  // B's row p = (c, kh, kw): its offset in the band from a tile's first column.
  std::vector<int32_t> off(static_cast<size_t>(g.K));
  for (int64_t c = 0, p = 0; c < g.cpg; ++c)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw, ++p)
        off[static_cast<size_t>(p)] =
            static_cast<int32_t>(c * cs + kh * dh * wa + kw * dw % sw * wq + kw * dw / sw);
  // A: implicit_weights, made here unless it comes made; the bias padded to whole panels.
  const int64_t panels = (g.opg + kMR - 1) / kMR;
  std::shared_ptr<Storage> ha, hb;
  const float* apk = ready;
  if (apk == nullptr) {
    ha = implicit_weights(g, wt);
    apk = reinterpret_cast<const float*>(ha->bytes.get());
  }
  float* bpk = scratch<float>(g.G * panels * kMR, hb);
  for (int64_t u = 0; u < g.G * panels; ++u)
    for (int i = 0; i < kMR; ++i) {
      const int64_t o = u % panels * kMR + i;
      bpk[u * kMR + i] = o < g.opg && bias != nullptr ? bias[u / panels * g.opg + o] : 0.0f;
    }

  parallel_for(g.N * g.G * bands, 1, [&](int64_t u0, int64_t u1) {
    std::shared_ptr<Storage> hold;
    float* cbuf = scratch<float>(panels * kMR * kNR + g.cpg * cs + wa, hold);  // band_tiles' C
    float* band = cbuf + panels * kMR * kNR;
    float* padded = band + g.cpg * cs;  // a padded row, split into phases (sw > 1)
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t n = u / (g.G * bands), gi = u / bands % g.G, oh0 = u % bands * rows;
      const int64_t oh1 = std::min(OH, oh0 + rows);
      const float* xg = x + (n * g.C + gi * g.cpg) * H * W;
      float* yg = y + (n * g.O + gi * g.opg) * g.P;
      // The band: input rows oh0·sh - pt + r, padded columns [0, wa), zero outside x.
      for (int64_t c = 0; c < g.cpg; ++c) {
        if (flat) std::fill(band + c * cs + band_rows * wa, band + (c + 1) * cs, 0.0f);
        for (int64_t r = 0; r < band_rows; ++r) {
          float* d = band + c * cs + r * wa;
          const int64_t ih = oh0 * sh - pt + r;
          if (ih < 0 || ih >= H) {
            std::fill(d, d + wa, 0.0f);
            continue;
          }
          float* row = sw > 1 ? padded : d;
          const int64_t end = std::min(pl + W, wa);
          std::fill(row, row + pl, 0.0f);
          std::copy(xg + (c * H + ih) * W, xg + (c * H + ih) * W + (end - pl), row + pl);
          std::fill(row + end, row + wa, 0.0f);
          if (sw == 2) {
            // Even and odd columns a vector at a time by two-source shuffles (the element loop
            // was half the time of a 32 → 64-channel stride-2 layer at 112 × 112).
            for (int64_t t = 0; t < wq; t += kL) {
              const Vf lo = load<Vf>(row + 2 * t), hi = load<Vf>(row + 2 * t + kL);
              store(d + t, even_lanes(lo, hi));
              store(d + wq + t, odd_lanes(lo, hi));
            }
          } else if (sw > 2) {
            for (int64_t f = 0; f < sw; ++f)
              for (int64_t t = 0; t < wq; ++t) d[f * wq + t] = row[t * sw + f];
          }
        }
      }
      const float* ag = apk + gi * panels * kMR * g.K;
      const float* bg = bpk + gi * panels * kMR;
      band_tiles(g, band, off.data(), ag, bg, oh1 - oh0, flat ? wa : sh * wa, flat, yg + oh0 * OW,
                 cbuf);
      if (ep != nullptr) apply_gemm_epilogue(*ep, yg, g.P, 0, g.opg, oh0 * OW, oh1 * OW);
    }
  });
}
#else
bool implicit_gemm_suits(const ConvGeo&) { return false; }
std::shared_ptr<Storage> implicit_weights(const ConvGeo&, const float*) {
  throw_error(ErrorKind::Internal, "implicit_weights: not built for this ISA");
}
void conv_implicit_gemm(const ConvGeo&, const float*, const float*, const float*, const float*,
                        float*, const GemmEpilogue<float>*) {
  throw_error(ErrorKind::Internal, "conv_implicit_gemm: not built for this ISA");
}
#endif

}  // namespace conv_pool
TESSEL_ISA_END
