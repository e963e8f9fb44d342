// cpu kernels of the positional encodings: Rope (NeoX / GPT-J pairs), AxialRope2d and ALiBi.
// Rotation angles and their cos / sin are computed once per call in f64 (a table per position,
// shared by every batch and head row), then each row is rotated with vector FMAs.
#include <cmath>
#include <vector>

#include "backends/cpu/families.h"
#include "backends/cpu/normalization.h"
#include "ops/positional_params.h"
#include "runtime/thread_pool.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

typedef uint64_t Vu64 __attribute__((vector_size(kVectorBytes)));

// Per-position rotation tables. Interleaved (GPT-J) pairs store cos twice and (-sin, sin), so
// y = x·cc + swap_pairs(x)·ss; NeoX halves store cos and sin once per pair.
template <class T>
struct RotTable {
  int64_t width = 0;  // entries per position
  std::vector<T> cc, ss;
  void resize(int64_t positions, int64_t w) {
    width = w;
    cc.resize(static_cast<size_t>(positions * w));
    ss.resize(cc.size());
  }
};

// Fills pair p of position s with angle theta for either layout.
template <class T>
inline void set_pair(RotTable<T>& t, int64_t s, int64_t p, double theta, bool interleaved) {
  const T c = static_cast<T>(std::cos(theta)), sn = static_cast<T>(std::sin(theta));
  T* cc = t.cc.data() + s * t.width;
  T* ss = t.ss.data() + s * t.width;
  if (interleaved) {
    cc[2 * p] = cc[2 * p + 1] = c;
    ss[2 * p] = -sn;
    ss[2 * p + 1] = sn;
  } else {
    cc[p] = c;
    ss[p] = sn;
  }
}

// y[2p] = x[2p]·c - x[2p+1]·s, y[2p+1] = x[2p]·s + x[2p+1]·c over n (even) channels.
template <class T>
void rotate_interleaved(const T* x, T* y, const T* cc, const T* ss, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
    for (; i + kLanesF <= n; i += kLanesF) {
      const Vu64 u = bitcast<Vu64>(load<Vf>(x + i));
      const Vf swapped = bitcast<Vf>((u >> 32) | (u << 32));
      store(y + i, load<Vf>(x + i) * load<Vf>(cc + i) + swapped * load<Vf>(ss + i));
    }
  }
  for (; i < n; i += 2) {
    const T a = x[i], b = x[i + 1];
    y[i] = a * cc[i] + b * ss[i];
    y[i + 1] = b * cc[i + 1] + a * ss[i + 1];
  }
}

// NeoX: pairs (i, i + half).
template <class T>
void rotate_halves(const T* x, T* y, const T* c, const T* s, int64_t half) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  int64_t i = 0;
  for (; i + L <= half; i += L) {
    const V a = load<V>(x + i), b = load<V>(x + half + i);
    const V vc = load<V>(c + i), vs = load<V>(s + i);
    store(y + i, a * vc - b * vs);
    store(y + half + i, a * vs + b * vc);
  }
  for (; i < half; ++i) {
    const T a = x[i], b = x[half + i];
    y[i] = a * c[i] - b * s[i];
    y[half + i] = a * s[i] + b * c[i];
  }
}

// Rows of `dim` channels of x, row r at table position r % positions; `rotate(x, y, pos)`
// writes the rotated channels, the rest pass through.
template <class T, class Rotate>
void rotate_rows(const HostTensor& x, const HostTensor& y, int64_t positions, int64_t dim,
                 int64_t rotated, const Rotate& rotate) {
  const int64_t rows = positions * dim == 0 ? 0 : x.numel() / dim;
  if (rows == 0) return;
  const StridedView xv(x);
  parallel_for(rows, row_grain(dim), [&](int64_t r0, int64_t r1) {
    std::vector<T> xbuf(static_cast<size_t>(dim)), ybuf(static_cast<size_t>(dim));
    for (int64_t r = r0; r < r1; ++r) {
      const T* xp = read(xv, r * dim, dim, xbuf.data());
      T* yp = out_block(y, r * dim, ybuf.data());
      rotate(xp, yp, r % positions);
      if (rotated < dim) std::copy(xp + rotated, xp + dim, yp + rotated);
      commit(y, r * dim, yp, dim);
    }
  });
}

template <class T>
void rope_t(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const int64_t seq = x.shape[x.rank() - 2], dim = x.shape[x.rank() - 1];
  const int64_t rotary = rope_rotary_dim(node, dim);
  const int64_t half = rotary / 2;
  const double base = node.attrs.f("base");
  const bool interleaved = node.attrs.e<RopeStyle>("style") == RopeStyle::GptJ;
  if (seq * dim == 0 || x.numel() == 0) return;
  std::vector<double> pos(static_cast<size_t>(seq));
  const HostTensor positions = optional_input(in, 1);
  if (present(positions))
    to_f64(positions.data(), positions.dtype, positions.strides[0], pos.data(), seq);
  else
    for (int64_t s = 0; s < seq; ++s) pos[s] = static_cast<double>(s);
  std::vector<double> inv_freq(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) inv_freq[i] = rope_frequency(base, i, rotary);
  RotTable<T> table;
  table.resize(seq, interleaved ? rotary : half);
  parallel_for(seq, row_grain(4 * half), [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s)
      for (int64_t i = 0; i < half; ++i) set_pair(table, s, i, pos[s] * inv_freq[i], interleaved);
  });
  const int64_t w = table.width;
  rotate_rows<T>(x, out[0], seq, dim, rotary, [&](const T* xp, T* yp, int64_t s) {
    const T* cc = table.cc.data() + s * w;
    const T* ss = table.ss.data() + s * w;
    if (interleaved)
      rotate_interleaved(xp, yp, cc, ss, rotary);
    else
      rotate_halves(xp, yp, cc, ss, half);
  });
}

// AxialRope2d: token n at grid row n / grid_w and column n % grid_w; channels [0, D/2) rotate
// by the row, [D/2, D) by the column, GPT-J pairs with frequencies base^(-2i / (D/2)).
template <class T>
void axial_rope2d_t(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const int64_t tokens = x.shape[x.rank() - 2], dim = x.shape[x.rank() - 1];
  const int64_t grid_w = node.attrs.i("grid_w");
  const double base = node.attrs.f("base");
  const int64_t half = dim / 2, quarter = dim / 4;
  if (tokens * dim == 0 || x.numel() == 0) return;
  std::vector<double> freq(static_cast<size_t>(quarter));
  for (int64_t i = 0; i < quarter; ++i) freq[i] = rope_frequency(base, i, half);
  RotTable<T> table;
  table.resize(tokens, dim);
  parallel_for(tokens, row_grain(4 * dim), [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      const double row = static_cast<double>(n / grid_w), col = static_cast<double>(n % grid_w);
      for (int64_t i = 0; i < quarter; ++i) {
        set_pair(table, n, i, row * freq[i], true);
        set_pair(table, n, quarter + i, col * freq[i], true);
      }
    }
  });
  rotate_rows<T>(x, out[0], tokens, dim, dim, [&](const T* xp, T* yp, int64_t n) {
    rotate_interleaved(xp, yp, table.cc.data() + n * dim, table.ss.data() + n * dim, dim);
  });
}

// scores [B,H,Sq,Sk] + slope_h · (j - i - (Sk - Sq)), row by row.
template <class T>
void alibi_t(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  constexpr int64_t B = kStageBlock;
  const HostTensor& s = in[0];
  const HostTensor& y = out[0];
  const int64_t heads = s.shape[1], sq = s.shape[2], sk = s.shape[3];
  const int64_t rows = s.shape[0] * heads * sq;
  if (rows == 0 || sk == 0) return;
  const double max_bias = node.attrs.f("max_bias");
  std::vector<T> slope(static_cast<size_t>(heads));
  for (int64_t h = 0; h < heads; ++h) slope[h] = static_cast<T>(alibi_slope(h, heads, max_bias));
  const StridedView sv(s);
  parallel_for(rows, row_grain(sk), [&](int64_t r0, int64_t r1) {
    alignas(64) T xbuf[B], ybuf[B];
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t i = r % sq;
      const V vs = splat<V>(slope[(r / sq) % heads]);
      const int64_t shift = i + (sk - sq);  // bias = slope · (j - shift)
      for (int64_t k = 0; k < sk; k += B) {
        const int64_t len = std::min(B, sk - k), start = r * sk + k;
        const T* xp = read(sv, start, len, xbuf);
        T* yp = out_block(y, start, ybuf);
        V dist = splat<V>(static_cast<T>(k - shift));
        for (int l = 0; l < L; ++l) dist[l] += static_cast<T>(l);
        const V step = splat<V>(static_cast<T>(L));
        int64_t j = 0;
        for (; j + L <= len; j += L, dist += step) store(yp + j, load<V>(xp + j) + vs * dist);
        if (j < len) {
          const int m = static_cast<int>(len - j);
          store_partial(yp + j, load_partial<V>(xp + j, m) + vs * dist, m);
        }
        commit(y, start, yp, len);
      }
    }
  });
}

#define TESSEL_POSITIONAL_KERNEL(name)                                                     \
  void name(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) { \
    if (out[0].dtype == DType::F64)                                                        \
      name##_t<double>(node, in, out);                                                     \
    else                                                                                   \
      name##_t<float>(node, in, out);                                                      \
  }
TESSEL_POSITIONAL_KERNEL(rope)
TESSEL_POSITIONAL_KERNEL(axial_rope2d)
TESSEL_POSITIONAL_KERNEL(alibi)
#undef TESSEL_POSITIONAL_KERNEL

}  // namespace

void register_positional(KernelRegistry& r) {
  r.native(OpKind::Rope, rope, kNormFloats);
  r.native(OpKind::AxialRope2d, axial_rope2d, kNormFloats);
  r.native(OpKind::ALiBi, alibi, kNormFloats);
}

TESSEL_ISA_END
