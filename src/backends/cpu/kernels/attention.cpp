// cpu kernels: Attention (every MaskKind, GQA/MQA) as a fused flash-attention: query blocks ×
// key blocks with an online softmax, never materializing the [Sq, Sk] score matrix.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "backends/cpu/convert.h"
#include "backends/cpu/families.h"
#include "backends/cpu/kernels/data_movement.h"
#include "runtime/host_allocator.h"
#include "runtime/kernel_util.h"
#include "runtime/thread_pool.h"

// clang-format off
#include "backends/cpu/simd_math.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

// Tile sizes: a key block of kBk keys (a multiple of every vector width) and query blocks of
// kBq rows keep Q, Kᵀ, V, the scores and the accumulator of one tile in L1/L2. 128 keys a block
// halve the online softmax's per-row bookkeeping a key against 64 (its reductions, rescale and
// the tile calls' set-up): one thread on the Zen 3 host (AVX2), 3 alternating rounds, heads of
// 128 × 64 4.73 → 4.58 ms, 512 × 64 31.4 → 30.5, 1024 × 64 61.6 → 58.2; 256 keys lost at 128
// (half of a block padding) and query blocks of 24–96 rows read alike.
constexpr int64_t kBk = 128;
constexpr int64_t kBq = 48;
// Register blocking of both tile products: kRows query rows × kVecs vectors of columns.
constexpr int kRows = 6;
constexpr int kVecs = kVectorBytes == 64 ? 4 : 2;

template <class T>
using VecOf = std::conditional_t<std::is_same_v<T, float>, Vf, Vd>;
template <class V>
using IntOf = std::conditional_t<sizeof(Lane<V>) == 4, Vi32, Vi64>;

// e^x lane-wise for x <= ~88 (f32) / ~709 (f64), taken by f64 (f32 takes simd_math.h's
// ExpBelow) — softmax only feeds x <= 0: Cody-Waite
// reduction to |r| <= ln2/2, a Taylor polynomial (error < 1 ulp), 2^n built in the exponent
// bits. exp(-inf) is exactly 0 (a masked key), NaN stays NaN.
template <class V>
inline V vexp(V x) {
  using T = Lane<V>;
  using VI = IntOf<V>;
  constexpr bool kF32 = sizeof(T) == 4;
  constexpr T lo = kF32 ? T(-87.33) : T(-708.39), hi = kF32 ? T(88.37) : T(709.0);
  constexpr T log2e = T(1.4426950408889634);
  constexpr T ln2_hi = kF32 ? T(0.693359375) : T(6.93147180369123816490e-01);
  constexpr T ln2_lo = kF32 ? T(-2.12194440e-4) : T(1.90821492927058770002e-10);
  constexpr T magic = kF32 ? T(12582912.0) : T(6755399441055744.0);  // 1.5·2^mantissa_bits
  constexpr int kMantBits = kF32 ? 23 : 52, kBias = kF32 ? 127 : 1023;
  constexpr int kDegree = kF32 ? 7 : 13;

  V xc = x < lo ? splat<V>(lo) : x;
  xc = xc > hi ? splat<V>(hi) : xc;
  V t = xc * log2e + magic;  // round(x·log2e) in the low mantissa bits
  V n = t - magic;
  V r = xc - n * ln2_hi;
  r = r - n * ln2_lo;
  T coef = 1;
  for (int k = 2; k <= kDegree; ++k) coef /= T(k);
  V p = splat<V>(coef);
  for (int k = kDegree; k >= 1; --k) {
    coef *= T(k);  // 1/(k-1)!
    p = p * r + coef;
  }
  VI ni = bitcast<VI>(t) - bitcast<VI>(splat<V>(magic));
  V scale = bitcast<V>((ni + kBias) << kMantBits);
  V y = p * scale;
  y = x < lo ? splat<V>(0) : y;
  return x > hi ? splat<V>(std::numeric_limits<T>::infinity()) : y;
}

inline void stage(const void* src, DType dt, int64_t stride, float* dst, int64_t n) {
  to_f32(src, dt, stride, dst, n);
}
inline void stage(const void* src, DType dt, int64_t stride, double* dst, int64_t n) {
  to_f64(src, dt, stride, dst, n);
}
inline void unstage(const float* src, void* dst, DType dt, int64_t n) {
  from_f32(src, dst, dt, 1, n);
}
inline void unstage(const double* src, void* dst, DType dt, int64_t n) {
  from_f64(src, dst, dt, 1, n);
}

// s[R rows][kBk] = q[R rows][d] · kt[d][kBk] (kt: a packed, zero-padded key block). Its k loop
// and pv_tile's are unrolled by 4, as the GEMM's micro-kernel: a step's 12 FMAs (AVX2) carried
// the loop's scalar instructions (8 × 8 heads of 128 × 64 on one thread: 5.2 → 4.9 ms).
template <class T, int R>
void qk_tile(const T* q, int64_t ldq, const T* kt, T* s, int64_t d) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  for (int64_t c0 = 0; c0 < kBk; c0 += kVecs * L) {
    V acc[R][kVecs];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int v = 0; v < kVecs; ++v) acc[r][v] = splat<V>(0);
#pragma GCC unroll 4
    for (int64_t c = 0; c < d; ++c) {
      V kv[kVecs];
#pragma GCC unroll 8
      for (int v = 0; v < kVecs; ++v) kv[v] = load<V>(kt + c * kBk + c0 + v * L);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        V qr = splat<V>(q[r * ldq + c]);
#pragma GCC unroll 8
        for (int v = 0; v < kVecs; ++v) acc[r][v] += qr * kv[v];
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int v = 0; v < kVecs; ++v) store(s + r * kBk + c0 + v * L, acc[r][v]);
  }
}

// o[R rows][NV vectors] += p[R rows][nk] · v[nk][NV vectors] (o and v have row strides ldo, ldv).
template <class T, int R, int NV>
void pv_tile(const T* p, const T* v, int64_t ldv, T* o, int64_t ldo, int64_t nk) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  V acc[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n) acc[r][n] = load<V>(o + r * ldo + n * L);
#pragma GCC unroll 4
  for (int64_t j = 0; j < nk; ++j) {
    V vv[NV];
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n) vv[n] = load<V>(v + j * ldv + n * L);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      V pr = splat<V>(p[r * kBk + j]);
#pragma GCC unroll 8
      for (int n = 0; n < NV; ++n) acc[r][n] += pr * vv[n];
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n) store(o + r * ldo + n * L, acc[r][n]);
}

template <class T, int R>
void pv_rows(const T* p, const T* v, int64_t ldv, T* o, int64_t ldo, int64_t nk) {
  constexpr int L = kLanes<VecOf<T>>;
  int64_t c = 0;
  for (; c + kVecs * L <= ldv; c += kVecs * L) pv_tile<T, R, kVecs>(p, v + c, ldv, o + c, ldo, nk);
  for (; c < ldv; c += L) pv_tile<T, R, 1>(p, v + c, ldv, o + c, ldo, nk);
}

// Runs a row-blocked tile function over `rows` rows: kRows at a time, then the remainder.
template <template <class, int> class F, class T, class... Args>
void over_rows(int64_t rows, Args... args) {
  int64_t r = 0;
  for (; r + kRows <= rows; r += kRows) F<T, kRows>::run(r, args...);
  switch (rows - r) {
    case 5:
      return F<T, 5>::run(r, args...);
    case 4:
      return F<T, 4>::run(r, args...);
    case 3:
      return F<T, 3>::run(r, args...);
    case 2:
      return F<T, 2>::run(r, args...);
    case 1:
      return F<T, 1>::run(r, args...);
    default:
      return;
  }
}
static_assert(kRows == 6, "over_rows handles remainders up to 5 rows");

template <class T, int R>
struct QkRows {
  static void run(int64_t r, const T* q, int64_t ldq, const T* kt, T* s, int64_t d) {
    qk_tile<T, R>(q + r * ldq, ldq, kt, s + r * kBk, d);
  }
};
template <class T, int R>
struct PvRows {
  static void run(int64_t r, const T* p, const T* v, int64_t ldv, T* o, int64_t ldo, int64_t nk) {
    pv_rows<T, R>(p + r * kBk, v, ldv, o + r * ldo, ldo, nk);
  }
};

// The problem, its operands' layouts, and the packed K / V.
template <class T>
struct Problem {
  int64_t batch, hq, sq, d, hkv, sk, dv, group, offset, window, ldv, nkb;
  MaskKind kind;
  T scale;
  const HostTensor *q, *k, *v;
  HostTensor mask;  // broadcast to [B, Hq, Sq, Sk] when present
  T* kt;            // [B·Hkv][nkb][d][kBk], zero-padded
  T* vp;            // [B·Hkv][nkb·kBk][ldv], columns zero-padded to ldv
  uint8_t* v_bad;   // [B·Hkv][nkb]: the V block holds an inf or NaN
};

// Packs key block kb of (b, kv head h): Kᵀ for the QK product and V row-major, both as T, and
// whether the V block holds an inf or NaN. `rows`: scratch for kBk rows of d elements. Kᵀ goes
// through the strided copy's tiled register transposes, from K in place where it holds T, else
// from its rows staged as T; the finiteness test sums x - x (0, or NaN for inf and NaN) by
// vectors. Element by element, the transpose and the test had been ~22% of the time at 8 × 8
// heads of 128 × 64 (two threads).
template <class T>
void pack_block(const Problem<T>& p, int64_t bh, int64_t kb, T* rows) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  constexpr DType kT = sizeof(T) == 4 ? DType::F32 : DType::F64;
  const int64_t b = bh / p.hkv, h = bh % p.hkv;
  const int64_t j0 = kb * kBk, nk = std::min(kBk, p.sk - j0);
  const HostTensor &k = *p.k, &v = *p.v;
  T* kt = p.kt + (bh * p.nkb + kb) * p.d * kBk;
  const int64_t k0 = k.offset + b * k.strides[0] + h * k.strides[1] + j0 * k.strides[2];
  const uint8_t* ksrc = k.element_ptr(k0);
  int64_t kstrides[2] = {k.strides[3], k.strides[2]};  // (c, j)
  if (k.dtype != kT) {
    for (int64_t j = 0; j < nk; ++j)
      stage(k.element_ptr(k0 + j * k.strides[2]), k.dtype, k.strides[3], rows + j * p.d, p.d);
    ksrc = reinterpret_cast<const uint8_t*>(rows);
    kstrides[0] = 1;
    kstrides[1] = p.d;
  }
  const int64_t kt_strides[2] = {kBk, 1};
  copy_strided_serial(sizeof(T), Shape{p.d, nk}, reinterpret_cast<uint8_t*>(kt), kt_strides, ksrc,
                      kstrides);
  if (nk < kBk)
    for (int64_t c = 0; c < p.d; ++c) std::fill(kt + c * kBk + nk, kt + (c + 1) * kBk, T(0));
  T* vb = p.vp + (bh * p.nkb * kBk + j0) * p.ldv;
  for (int64_t j = 0; j < nk; ++j) {
    const int64_t off = v.offset + b * v.strides[0] + h * v.strides[1] + (j0 + j) * v.strides[2];
    stage(v.element_ptr(off), v.dtype, v.strides[3], vb + j * p.ldv, p.dv);
    std::fill(vb + j * p.ldv + p.dv, vb + (j + 1) * p.ldv, T(0));
  }
  V z{};
  for (int64_t e = 0; e < nk * p.ldv; e += L) {
    const V x = load<V>(vb + e);
    z += x - x;
  }
  const T zs = reduce_add(z);
  p.v_bad[bh * p.nkb + kb] = zs != zs;
}

// Per-thread scratch of one query block.
template <class T>
struct Scratch {
  std::vector<T> q, s, o, m, l, row;
  std::vector<uint8_t> seen;  // [kBq][kBk]: key j is visible to row r (careful tiles only)
  void size(const Problem<T>& p) {
    seen.resize(static_cast<size_t>(kBq * kBk));
    q.resize(static_cast<size_t>(kBq * std::max<int64_t>(p.d, 1)));
    s.resize(static_cast<size_t>(kBq * kBk));
    o.resize(static_cast<size_t>(kBq * std::max<int64_t>(p.ldv, 1)));
    m.resize(kBq);
    l.resize(kBq);
    row.resize(static_cast<size_t>(std::max({kBk, p.d, p.dv})));
  }
};

// Key positions [lo, hi] row i may see under a causal / sliding-window mask (else all).
template <class T>
void visible_range(const Problem<T>& p, int64_t i, int64_t& lo, int64_t& hi) {
  lo = 0;
  hi = p.sk - 1;
  if (p.kind == MaskKind::Causal || p.kind == MaskKind::SlidingWindow) hi = i + p.offset;
  if (p.kind == MaskKind::SlidingWindow) lo = i + p.offset - p.window;
}

// Masks, biases and runs the online softmax over one tile's score rows; leaves P in s. With
// `careful`, also records which keys each row sees (a score of -inf after masking is unseen).
template <class T>
void softmax_tile(const Problem<T>& p, Scratch<T>& w, int64_t b, int64_t h, int64_t i0, int64_t nq,
                  int64_t j0, int64_t nk, bool careful) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  const HostTensor& mk = p.mask;
  for (int64_t r = 0; r < nq; ++r) {
    T* s = w.s.data() + r * kBk;
    const int64_t i = i0 + r;
    if (p.kind == MaskKind::Custom || p.kind == MaskKind::Bias) {
      const int64_t off = mk.offset + b * mk.strides[0] + h * mk.strides[1] + i * mk.strides[2] +
                          j0 * mk.strides[3];
      T* mrow = w.row.data();
      stage(mk.element_ptr(off), mk.dtype, mk.strides[3], mrow, nk);
      if (p.kind == MaskKind::Custom)
        for (int64_t j = 0; j < nk; ++j) s[j] = mrow[j] != 0 ? s[j] : kNegInf;
      else
        for (int64_t j = 0; j < nk; ++j) s[j] += mrow[j];
    }
    int64_t lo, hi;
    visible_range(p, i, lo, hi);
    lo = std::clamp<int64_t>(lo - j0, 0, kBk);
    hi = std::clamp<int64_t>(hi - j0 + 1, 0, nk);  // exclusive
    if (hi <= lo) lo = hi = 0;
    std::fill(s, s + lo, kNegInf);
    std::fill(s + hi, s + kBk, kNegInf);
    if (careful)
      for (int64_t j = 0; j < kBk; ++j) w.seen[r * kBk + j] = s[j] != kNegInf;

    V vmax = splat<V>(kNegInf);
    for (int64_t j = 0; j < kBk; j += L) {
      V x = load<V>(s + j);
      vmax = x > vmax ? x : vmax;
    }
    T mx = reduce_max(vmax);
    const T m_old = w.m[r];
    const T m_new = mx > m_old ? mx : m_old;  // NaN in m_old stays
    // A row that has seen nothing yet keeps m = -inf; subtract 0 so exp(-inf) gives 0, not NaN.
    const T m_use = m_new == kNegInf ? T(0) : m_new;
    V vsum = splat<V>(0);
    auto exp_pass = [&](auto exp_m) {
      for (int64_t j = 0; j < kBk; j += L) {
        V e = exp_m(load<V>(s + j));
        store(s + j, e);
        vsum += e;
      }
    };
    if constexpr (std::is_same_v<T, float>)
      exp_pass(ExpBelow(m_use));  // simd_math.h: 9 operations a vector, vexp's f32 form ~18
    else
      exp_pass([mv = splat<V>(m_use)](V v) { return vexp(v - mv); });
    // An unchanged maximum rescales by exactly 1 (e^0): the call is skipped, ~3% at 512 keys.
    const T alpha = m_old == m_use ? T(1) : std::exp(m_old - m_use);
    w.l[r] = w.l[r] * alpha + reduce_add(vsum);
    w.m[r] = m_new;
    if (alpha != T(1)) {
      T* o = w.o.data() + r * p.ldv;
      const V av = splat<V>(alpha);
      for (int64_t c = 0; c < p.ldv; c += L) store(o + c, load<V>(o + c) * av);
    }
  }
}

// One query block of one (batch, query head): every visible key block, then O / l into out.
template <class T>
void query_block(const Problem<T>& p, Scratch<T>& w, int64_t bh, int64_t qb, HostTensor& out) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  const int64_t b = bh / p.hq, h = bh % p.hq, kvh = b * p.hkv + h / p.group;
  const int64_t i0 = qb * kBq, nq = std::min(kBq, p.sq - i0);
  const HostTensor& q = *p.q;
  // The scale is folded into Q once per row, by vectors (GCC -O2 leaves a loop of unknown trip
  // count scalar: ~5% of the time at 8 × 8 heads of 128 × 64).
  const V scale = splat<V>(p.scale);
  for (int64_t r = 0; r < nq; ++r) {
    T* qr = w.q.data() + r * p.d;
    const int64_t off = q.offset + b * q.strides[0] + h * q.strides[1] + (i0 + r) * q.strides[2];
    stage(q.element_ptr(off), q.dtype, q.strides[3], qr, p.d);
    int64_t c = 0;
    for (; c + L <= p.d; c += L) store(qr + c, load<V>(qr + c) * scale);
    for (; c < p.d; ++c) qr[c] *= p.scale;
    w.m[r] = -std::numeric_limits<T>::infinity();
    w.l[r] = 0;
  }
  std::fill(w.o.begin(), w.o.begin() + nq * p.ldv, T(0));

  // Key blocks that any row of this query block may see.
  int64_t kb0 = 0, kb1 = p.nkb, lo, hi, lo_last, hi_last;
  visible_range(p, i0, lo, hi);
  visible_range(p, i0 + nq - 1, lo_last, hi_last);
  kb0 = std::clamp<int64_t>(lo, 0, p.sk) / kBk;
  kb1 = hi_last < 0 ? 0 : std::min(p.nkb, hi_last / kBk + 1);

  for (int64_t kb = kb0; kb < kb1; ++kb) {
    const int64_t j0 = kb * kBk, nk = std::min(kBk, p.sk - j0);
    const T* kt = p.kt + (kvh * p.nkb + kb) * p.d * kBk;
    const T* vb = p.vp + (kvh * p.nkb * kBk + j0) * p.ldv;
    over_rows<QkRows, T>(nq, static_cast<const T*>(w.q.data()), p.d, kt, w.s.data(), p.d);
    // An unseen key's weight is 0, but 0·inf is NaN: when V holds an inf or NaN, unseen keys
    // are skipped one by one (as the reference does); else the register-blocked product.
    const bool careful = p.v_bad[kvh * p.nkb + kb] != 0;
    softmax_tile(p, w, b, h, i0, nq, j0, nk, careful);
    if (!careful) {
      over_rows<PvRows, T>(nq, static_cast<const T*>(w.s.data()), vb, p.ldv, w.o.data(), p.ldv, nk);
      continue;
    }
    for (int64_t r = 0; r < nq; ++r)
      for (int64_t j = 0; j < nk; ++j) {
        if (!w.seen[r * kBk + j]) continue;
        const T pj = w.s[r * kBk + j];
        T* o = w.o.data() + r * p.ldv;
        for (int64_t c = 0; c < p.ldv; ++c) o[c] += pj * vb[j * p.ldv + c];
      }
  }

  for (int64_t r = 0; r < nq; ++r) {
    T* o = w.o.data() + r * p.ldv;
    // l == 0: the row saw no key (fully masked) and outputs zeros, as the reference.
    const T l = w.l[r];
    const V inv = splat<V>(l == T(0) ? T(0) : T(1) / l);
    for (int64_t c = 0; c < p.ldv; c += L)
      store(o + c, l == T(0) ? splat<V>(0) : load<V>(o + c) * inv);
    unstage(o, out.element_ptr(out.offset + (bh * p.sq + i0 + r) * p.dv), out.dtype, p.dv);
  }
}

template <class T>
void attention(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  constexpr int L = kLanes<VecOf<T>>;
  const HostTensor &q = in[0], &k = in[1], &v = in[2];
  HostTensor& y = out[0];
  if (y.numel() == 0) return;
  Problem<T> p{};
  p.batch = q.shape[0];
  p.hq = q.shape[1];
  p.sq = q.shape[2];
  p.d = q.shape[3];
  p.hkv = k.shape[1];
  p.sk = k.shape[2];
  p.dv = v.shape[3];
  p.group = p.hq / p.hkv;
  p.offset = p.sk - p.sq;
  p.window = node.attrs.i("window");
  p.kind = node.attrs.e<MaskKind>("mask_kind");
  double scale = node.attrs.f("scale");
  if (scale == 0) scale = p.d > 0 ? 1.0 / std::sqrt(static_cast<double>(p.d)) : 1.0;
  p.scale = static_cast<T>(scale);
  p.q = &q;
  p.k = &k;
  p.v = &v;
  if (in.size() > 3 && present(in[3])) {
    HostTensor m = in[3];
    if (m.rank() == 2) {  // [B, Sk] key padding, seen as [B, 1, 1, Sk]
      m.shape = {in[3].shape[0], 1, 1, in[3].shape[1]};
      m.strides = {in[3].strides[0], 0, 0, in[3].strides[1]};
    }
    p.mask = broadcast_to(m, {p.batch, p.hq, p.sq, p.sk});
  }
  p.ldv = (p.dv + L - 1) / L * L;
  p.nkb = (p.sk + kBk - 1) / kBk;

  const int64_t kv_heads = p.batch * p.hkv;
  const size_t kt_elems = static_cast<size_t>(kv_heads * p.nkb * p.d * kBk);
  const size_t vp_elems = static_cast<size_t>(kv_heads * p.nkb * kBk * p.ldv);
  auto kt_store = host_allocate(std::max<size_t>(kt_elems * sizeof(T), 1));
  auto vp_store = host_allocate(std::max<size_t>(vp_elems * sizeof(T), 1));
  p.kt = reinterpret_cast<T*>(kt_store->bytes.get());
  p.vp = reinterpret_cast<T*>(vp_store->bytes.get());
  std::vector<uint8_t> v_bad(static_cast<size_t>(kv_heads * p.nkb));
  p.v_bad = v_bad.data();

  const int64_t pack_tasks = kv_heads * p.nkb;
  const int64_t pack_work = kBk * (p.d + p.dv) + 1;
  parallel_for(pack_tasks, std::max<int64_t>(1, 16384 / pack_work), [&](int64_t t0, int64_t t1) {
    std::vector<T> rows(static_cast<size_t>(kBk * std::max<int64_t>(p.d, 1)));
    for (int64_t t = t0; t < t1; ++t) pack_block(p, t / p.nkb, t % p.nkb, rows.data());
  });

  const int64_t nqb = (p.sq + kBq - 1) / kBq;
  const int64_t tasks = p.batch * p.hq * nqb;
  const int64_t task_work = std::min(kBq, p.sq) * std::max<int64_t>(p.sk, 1) * (p.d + p.dv) + 1;
  parallel_for(tasks, std::max<int64_t>(1, 65536 / task_work), [&](int64_t t0, int64_t t1) {
    thread_local Scratch<T> w;
    w.size(p);
    for (int64_t t = t0; t < t1; ++t) {
      // Alternate early and late query blocks so contiguous task ranges get even causal work.
      const int64_t bh = t / nqb, i = t % nqb;
      const int64_t qb = i % 2 == 0 ? i / 2 : nqb - 1 - i / 2;
      query_block(p, w, bh, qb, y);
    }
  });
}

// f64 computes in f64; every other float dtype is staged through f32.
void attention_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  if (in[0].dtype == DType::F64)
    attention<double>(node, in, out);
  else
    attention<float>(node, in, out);
}

}  // namespace

void register_attention(KernelRegistry& r) {
  r.native(OpKind::Attention, attention_kernel, dtypes::kFloat | dtypes::kFp8);
}
TESSEL_ISA_END
