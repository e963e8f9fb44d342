// Width-generic vector math for the cpu kernels: f32 exp, log, tanh, erf, trig, hyperbolic and
// friends on Vf (a few on Vd), each within a few ulp of the correctly rounded value over the
// whole range, with IEEE special cases (inf, NaN, -0 where it matters, denormals) as std:: has
// them. Polynomials are Cephes' (log, trig, inverse trig) or fitted for this file (exp, erf /
// erfc, and tanh's rational). Include after every other header, like simd.h.
#pragma once

#include <cmath>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN

inline constexpr float kInfF = std::numeric_limits<float>::infinity();
inline constexpr float kNaNF = std::numeric_limits<float>::quiet_NaN();
inline constexpr float kPiF = 3.14159265358979323846f;
inline constexpr float kPi2F = 1.57079632679489661923f;

// ---- Basics ---------------------------------------------------------------------------------

inline Vf vabs(Vf x) { return bitcast<Vf>(bitcast<Vi32>(x) & 0x7fffffff); }
inline Vd vabs(Vd x) { return bitcast<Vd>(bitcast<Vi64>(x) & 0x7fffffffffffffffLL); }
// |mag| with the sign bit of sgn.
inline Vf vcopysign(Vf mag, Vf sgn) {
  return bitcast<Vf>((bitcast<Vi32>(mag) & 0x7fffffff) |
                     (bitcast<Vi32>(sgn) & static_cast<int32_t>(0x80000000u)));
}
// Flips the sign of x where sgn is negative (x ^ sign(sgn)).
inline Vf vmulsign(Vf x, Vf sgn) {
  return bitcast<Vf>(bitcast<Vi32>(x) ^ (bitcast<Vi32>(sgn) & static_cast<int32_t>(0x80000000u)));
}
inline Vi32 visnan(Vf x) { return x != x; }

inline Vf vsqrt(Vf x) {
#if defined(TESSEL_CPU_ISA_AVX512)
  return bitcast<Vf>(_mm512_maskz_sqrt_ps(
      0xffff, bitcast<__m512>(x)));  // maskz: GCC 12 warns on the undefined-source form
#elif defined(TESSEL_CPU_ISA_AVX2)
  return bitcast<Vf>(_mm256_sqrt_ps(bitcast<__m256>(x)));
#elif defined(__SSE2__)
  return bitcast<Vf>(_mm_sqrt_ps(bitcast<__m128>(x)));
#elif defined(__aarch64__)
  return bitcast<Vf>(vsqrtq_f32(bitcast<float32x4_t>(x)));
#else
  for (int i = 0; i < kLanesF; ++i) x[i] = std::sqrt(x[i]);
  return x;
#endif
}
inline Vd vsqrt(Vd x) {
#if defined(TESSEL_CPU_ISA_AVX512)
  return bitcast<Vd>(_mm512_maskz_sqrt_pd(0xff, bitcast<__m512d>(x)));
#elif defined(TESSEL_CPU_ISA_AVX2)
  return bitcast<Vd>(_mm256_sqrt_pd(bitcast<__m256d>(x)));
#elif defined(__SSE2__)
  return bitcast<Vd>(_mm_sqrt_pd(bitcast<__m128d>(x)));
#elif defined(__aarch64__)
  return bitcast<Vd>(vsqrtq_f64(bitcast<float64x2_t>(x)));
#else
  for (int i = 0; i < kLanesD; ++i) x[i] = std::sqrt(x[i]);
  return x;
#endif
}

// Round half to even (the default rounding mode), floor, ceil, trunc. Values of magnitude >= 2^23
// are integers already and pass through, as do inf and NaN.
#if defined(TESSEL_CPU_ISA_AVX512)
template <int Mode>
inline Vf vroundscale(Vf x) {
  return bitcast<Vf>(
      _mm512_maskz_roundscale_ps(0xffff, bitcast<__m512>(x), Mode | _MM_FROUND_NO_EXC));
}
inline Vf vround(Vf x) { return vroundscale<_MM_FROUND_TO_NEAREST_INT>(x); }
inline Vf vfloor(Vf x) { return vroundscale<_MM_FROUND_TO_NEG_INF>(x); }
inline Vf vceil(Vf x) { return vroundscale<_MM_FROUND_TO_POS_INF>(x); }
inline Vf vtrunc(Vf x) { return vroundscale<_MM_FROUND_TO_ZERO>(x); }
#elif defined(TESSEL_CPU_ISA_AVX2)
// vroundps: one instruction where the magic-number form below takes six.
template <int Mode>
inline Vf vroundmode(Vf x) {
  return bitcast<Vf>(_mm256_round_ps(bitcast<__m256>(x), Mode | _MM_FROUND_NO_EXC));
}
inline Vf vround(Vf x) { return vroundmode<_MM_FROUND_TO_NEAREST_INT>(x); }
inline Vf vfloor(Vf x) { return vroundmode<_MM_FROUND_TO_NEG_INF>(x); }
inline Vf vceil(Vf x) { return vroundmode<_MM_FROUND_TO_POS_INF>(x); }
inline Vf vtrunc(Vf x) { return vroundmode<_MM_FROUND_TO_ZERO>(x); }
#else
inline Vf vround(Vf x) {
  constexpr float kMagic = 8388608.0f;  // 2^23: adding it rounds away the fraction bits
  Vf a = vabs(x);
  Vf r = vcopysign((a + kMagic) - kMagic, x);
  return a < kMagic ? r : x;
}
inline Vf vfloor(Vf x) {
  Vf r = vround(x);
  return r > x ? r - 1.0f : r;
}
inline Vf vceil(Vf x) {
  Vf r = vround(x);
  return r < x ? r + 1.0f : r;
}
inline Vf vtrunc(Vf x) { return vcopysign(vfloor(vabs(x)), x); }
#endif
inline Vd vround(Vd x) {
  constexpr double kMagic = 4503599627370496.0;  // 2^52
  Vd a = vabs(x);
  Vd r = bitcast<Vd>(bitcast<Vi64>((a + kMagic) - kMagic) |
                     (bitcast<Vi64>(x) & splat<Vi64>(INT64_MIN)));
  return a < kMagic ? r : x;
}
inline Vd vfloor(Vd x) {
  Vd r = vround(x);
  return r > x ? r - 1.0 : r;
}
inline Vd vceil(Vd x) {
  Vd r = vround(x);
  return r < x ? r + 1.0 : r;
}

// 2^n for integer n in [-126, 127], as a float.
inline Vf vpow2i(Vi32 n) { return bitcast<Vf>((n + 127) << 23); }

// 1 / d within an ulp for d and 1 / d normal and finite (callers keep d there, or select the
// result away). AVX-512: the 14-bit estimate and one Newton step, a third of vdivps's cost on
// Zen 4 / 5, where the divide bounded tanh and sigmoid.
inline Vf vrcp(Vf d) {
#if defined(TESSEL_CPU_ISA_AVX512)
  // The Newton step through explicit FMAs: 1 - d·r must round once, at every optimization level
  // (at -O1 GCC does not contract, and the step's own rounding error reached the result).
  const __m512 dv = bitcast<__m512>(d), r = _mm512_maskz_rcp14_ps(0xffff, dv);
  const __m512 e = _mm512_fnmadd_ps(dv, r, _mm512_set1_ps(1.0f));
  return bitcast<Vf>(_mm512_fmadd_ps(r, e, r));
#else
  return 1.0f / d;
#endif
}

// Horner evaluation of c[0] + c[1] x + ... + c[N-1] x^(N-1).
template <size_t N>
inline Vf vpoly(Vf x, const float (&c)[N]) {
  // Unrolled by construction: GCC -O2 left the 9- and 10-term ones a loop (15% of GELU's time).
  return [&]<size_t... I>(std::index_sequence<I...>) {
    Vf p = splat<Vf>(c[N - 1]);
    ((p = p * x + c[N - 2 - I]), ...);
    return p;
  }
  (std::make_index_sequence<N - 1>{});
}

// ---- Exponentials and logarithms ------------------------------------------------------------

// exp(x) = 2^n · e^r with |r| <= ln2/2; 2^n applied as two factors so denormal results and the
// overflow to inf round once.
inline Vf vexp(Vf x) {
#if defined(TESSEL_CPU_ISA_AVX512)
  // The clamp through min / max, whose operand order passes NaN on; 2^n through vscalefps,
  // which rounds a denormal result once and overflows to inf. (maskz forms throughout: GCC 12
  // warns on the undefined-source ones.)
  const Vf xc = bitcast<Vf>(_mm512_maskz_min_ps(
      0xffff, _mm512_set1_ps(88.8f),
      _mm512_maskz_max_ps(0xffff, _mm512_set1_ps(-104.0f), bitcast<__m512>(x))));
#else
  Vf xc = x > 88.8f ? splat<Vf>(88.8f) : (x < -104.0f ? splat<Vf>(-104.0f) : x);
  xc = x != x ? splat<Vf>(0.0f) : xc;
#endif
  Vf n = vround(xc * 1.44269504088896341f);
  Vf r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  // e^r by one degree-6 polynomial with the constant term 1, fitted for relative error on
  // |r| <= ln2/2 (2e-9 in exact arithmetic; within 1 ulp of the correctly rounded e^r in f32):
  // six FMAs, where Cephes' form (1 + r + r²·P(r), P of degree 5) took eight operations.
  static constexpr float kP[] = {1.0f,
                                 1.000000000e+00f,
                                 4.999999404e-01f,
                                 1.666643173e-01f,
                                 4.166800156e-02f,
                                 8.374162018e-03f,
                                 1.384364325e-03f};
  Vf p = vpoly(r, kP);
#if defined(TESSEL_CPU_ISA_AVX512)
  return bitcast<Vf>(_mm512_maskz_scalef_ps(0xffff, bitcast<__m512>(p), bitcast<__m512>(n)));
#else
  Vi32 ni = convert<Vi32>(n);
  Vi32 n1 = ni >> 1;
  Vf y = p * vpow2i(n1) * vpow2i(ni - n1);
  return x != x ? x : y;
#endif
}

// e^(x - m) for x <= m, the terms of a softmax, as 2^t with t = x·log2e - m·log2e: m·log2e is
// split into its f32 rounding and the remainder (exact, by an FMA), so t is within ~1 ulp for
// any m, as x - m is. 2^t = 2^floor(t) · 2^f with f = t - floor(t) in [0, 1] by vreduceps (exact
// but for the rounding of f itself, which may round up to 1: vscalefps applies the same floor),
// and vscalefps takes floor(t) itself: 9 vector operations where vexp(x - m) takes 14. Special
// cases as vexp(x - m): NaN in x or m gives NaN, x = -inf gives 0 (vreduceps(-inf) = 0, 2^-inf
// = 0), m = ±inf gives NaN.
class ExpBelow {
 public:
  explicit ExpBelow(float m)
      : m_(splat<Vf>(m)),
        hi_(splat<Vf>(m * kLog2e)),
        lo_(splat<Vf>(std::fma(m, kLog2e, -(m * kLog2e)))) {}
  Vf operator()(Vf x) const {
#if defined(TESSEL_CPU_ISA_AVX512)
    const __m512 t = _mm512_sub_ps(
        _mm512_fmsub_ps(bitcast<__m512>(x), _mm512_set1_ps(kLog2e), bitcast<__m512>(hi_)),
        bitcast<__m512>(lo_));
    const __m512 f = _mm512_maskz_reduce_ps(0xffff, t, _MM_FROUND_TO_NEG_INF);
    const Vf p = vpoly(bitcast<Vf>(f), kP2f);
    return bitcast<Vf>(_mm512_maskz_scalef_ps(0xffff, bitcast<__m512>(p), t));
#elif defined(TESSEL_CPU_ISA_AVX2)
    // The same t, f and 2^f; 2^floor(t) added to 2^f's exponent, and results below 2^-126
    // (floor(t) < -126: terms under 1.2e-38 of the row's largest) flushed to 0. NaN passes
    // (its compare is false, its exponent field stays all ones). 14 vector operations, inline:
    // vexp(x - m) is called out of line here, and with it softmax's exp pass spilled its
    // registers at every vector.
    const Vf t = bitcast<Vf>(_mm256_sub_ps(
        _mm256_fmsub_ps(bitcast<__m256>(x), _mm256_set1_ps(kLog2e), bitcast<__m256>(hi_)),
        bitcast<__m256>(lo_)));
    const Vf fl = vfloor(t);
    const Vi32 y = bitcast<Vi32>(vpoly(t - fl, kP2f)) + (convert<Vi32>(fl) << 23);
    return fl < -126.0f ? Vf{} : bitcast<Vf>(y);
#else
    return vexp(x - m_);
#endif
  }

 private:
  static constexpr float kLog2e = 1.44269504088896341f;
  // 2^f on [0, 1]: degree 5 with the constant term 1, fitted for relative error (8e-8 in exact
  // arithmetic, 2.2 ulps of 2^f in f32 over a dense sweep). Degree 6 (1 ulp) cost a multiply-add
  // more on the FMA pipes, which bound the exp pass: AVX-512, two threads, 8 rounds, the same
  // spells' copy, softmax 32768 × 512 0.67 → 0.71, 4096 × 4096 0.67 → 0.69.
  static constexpr float kP2f[] = {1.0f,
                                   6.931512952e-01f,
                                   2.401644588e-01f,
                                   5.579990894e-02f,
                                   9.017038159e-03f,
                                   1.867126324e-03f};
  Vf m_, hi_, lo_;
};

// e^x - 1 without cancellation near 0: 2^n · expm1(r) + (2^n - 1) for small n, exp(x) beyond.
inline Vf vexpm1(Vf x) {
  Vf xc = x > 88.8f ? splat<Vf>(88.8f) : (x < -18.0f ? splat<Vf>(-18.0f) : x);
  xc = x != x ? splat<Vf>(0.0f) : xc;
  Vf n = vround(xc * 1.44269504088896341f);
  Vf r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  static constexpr float kP[] = {1.0f / 2,   1.0f / 6,    1.0f / 24,    1.0f / 120,
                                 1.0f / 720, 1.0f / 5040, 1.0f / 40320, 1.0f / 362880};
  Vf em = r + (r * r) * vpoly(r, kP);
  Vi32 ni = convert<Vi32>(n);
  Vi32 ns = ni > 24 ? splat<Vi32>(24) : ni;
  Vf s = vpow2i(ns);
  Vf small = s * em + (s - 1.0f);
  Vi32 n1 = ni >> 1;
  Vf big = (em + 1.0f) * vpow2i(n1) * vpow2i(ni - n1);
  Vf y = ni > 24 ? big : small;
  y = vabs(x) < 1e-30f ? x : y;  // keeps -0 and denormals exact
  return x != x ? x : y;
}

// log(x) = e·ln2 + log(m), m in [sqrt(1/2), sqrt(2)).
inline Vf vlog(Vf x) {
  Vi32 tiny = x < 1.17549435e-38f;  // denormals (and <= 0, fixed below) scaled up first
  Vf xs = tiny ? x * 8388608.0f : x;
  Vi32 bits = bitcast<Vi32>(xs);
  Vi32 e = ((bits >> 23) & 0xff) - 126 - (tiny & 23);
  Vf m = bitcast<Vf>((bits & 0x007fffff) | 0x3f000000);  // [0.5, 1)
  Vi32 lo = m < 0.707106781186547524f;
  e = e + lo;  // lo is -1 where true
  Vf f = lo ? (m + m) - 1.0f : m - 1.0f;
  Vf ef = convert<Vf>(e);
  Vf z = f * f;
  static constexpr float kP[] = {3.3333331174e-1f,  -2.4999993993e-1f, 2.0000714765e-1f,
                                 -1.6668057665e-1f, 1.4249322787e-1f,  -1.2420140846e-1f,
                                 1.1676998740e-1f,  -1.1514610310e-1f, 7.0376836292e-2f};
  Vf y = vpoly(f, kP) * f * z;
  y = y + ef * -2.12194440e-4f;
  y = y - 0.5f * z;
  Vf r = f + y;
  r = r + ef * 0.693359375f;
  r = x == kInfF ? x : r;
  r = x == 0.0f ? splat<Vf>(-kInfF) : r;
  r = x < 0.0f ? splat<Vf>(kNaNF) : r;
  return x != x ? x : r;
}

// log(1 + x) = log(u) · x / (u - 1) with u = 1 + x (Goldberg): exact where u == 1.
inline Vf vlog1p(Vf x) {
  Vf u = x + 1.0f;
  Vf d = u - 1.0f;
  Vf y = vlog(u) * (x / (d == 0.0f ? splat<Vf>(1.0f) : d));
  y = d == 0.0f ? x : y;
  y = x == kInfF ? x : y;
  y = x == -1.0f ? splat<Vf>(-kInfF) : y;
  return x != x ? x : y;
}

// ---- Sigmoid-like ---------------------------------------------------------------------------

// |x| <= 4: x·P(x²)/Q(x²), a rational fitted for relative error: at worst 4 ulps from the
// correctly rounded float (3.9 from the exact value) over a dense sweep, held by the test
// CpuElementwise.TanhRationalWithinFourUlps; 13 vector operations where the exp form takes ~35.
// Beyond: 1 - 2/(e^{2|x|} + 1), evaluated only when a lane needs it (|x| > 4 is rare in
// activations; the rational's P and Q overflow there anyway).
//
// vtanh's rational alone, its value wherever |x| <= 4 (NaN included): `covers` says whether
// every lane is such. For loops that keep the data-dependent branch out of their main pass
// (common_case_first in kernels/fusion_regions.cpp).
inline Vf vtanh_near(Vf x, bool& covers) {
  static constexpr float kP[] = {1.000000000e+00f, 1.299178451e-01f, 2.995910123e-03f,
                                 9.805040463e-06f, -1.255375182e-08f};
  static constexpr float kQ[] = {1.000000000e+00f, 4.632511735e-01f, 2.407964133e-02f,
                                 2.377762576e-04f};
  Vf z = x * x;
  covers = !any_greater(z, 16.0f);
  return x * vpoly(z, kP) / vpoly(z, kQ);  // NaN stays NaN
}
// vtanh(x) given r = vtanh_near(x), where r does not cover every lane.
inline Vf vtanh_far(Vf x, Vf r) {
  Vf a = vabs(x);
  Vi32 far = a > 4.0f;
  Vf e = vexp(a > 10.0f ? splat<Vf>(20.0f) : a + a);  // tanh(10) rounds to 1 already
  Vf big = vcopysign(1.0f - 2.0f * vrcp(e + 1.0f), x);
  return far ? big : r;
}
inline Vf vtanh(Vf x) {
  bool covers;
  Vf r = vtanh_near(x, covers);
  if (covers) return r;  // |x| <= 4 (NaN included)
  return vtanh_far(x, r);
}

// 1 / (1 + e^-x), from e^-|x| so neither tail loses precision.
inline Vf vsigmoid(Vf x) {
  Vf e = vexp(-vabs(x));
  Vf s = vrcp(1.0f + e);  // 1 + e in (1, 2]
  return x >= 0.0f ? s : (x != x ? x : e * s);
}

// ---- erf / erfc -----------------------------------------------------------------------------

namespace simd_math_detail {
// erfc(t) for t >= 0.92 as e^-t² · u · F(u), u = 1/t, with t² = sq + sq_lo (sq_lo the rounding
// error of sq where known) so large t keep their relative accuracy. F fitted in two pieces.
inline Vf erfc_tail(Vf t, Vf sq, Vf sq_lo) {
  Vf u = vrcp(t);  // past 10.5 (and for inf) the result is selected away below
  static constexpr float kLo[] = {5.270159245e-01f, -1.558621973e-01f, -7.919953763e-02f,
                                  1.657210141e-01f, -1.217994168e-01f, 2.210611012e-03f,
                                  1.078932285e-01f, -1.347706616e-01f, 8.103979379e-02f,
                                  -2.063187212e-02f};  // u - 0.4 in [0, 0.687]
  static constexpr float kHi[] = {5.641903281e-01f,  -3.708124859e-05f, -2.813354731e-01f,
                                  -8.259315044e-03f, 4.730841219e-01f,  -1.443004161e-01f,
                                  -1.115922451e+00f, 1.775689840e+00f,  -8.989049196e-01f};
  // t < 2.5 in every lane (the common case in activations) needs the first piece only.
  Vi32 lo = u > 0.4f;
  Vf f = vpoly(u - 0.4f, kLo);
  if (any(~lo)) f = lo ? f : vpoly(u, kHi);
#if defined(TESSEL_CPU_ISA_AVX2) || defined(TESSEL_CPU_ISA_AVX512) || defined(__aarch64__)
  Vf e = vexp(-sq) * (1.0f - sq_lo);  // sq_lo is an FMA's rounding error: tiny
#else
  Vf e = vexp(-sq) * vexp(-sq_lo);
#endif
  Vf y = e * u * f;
  return t > 10.5f ? splat<Vf>(0.0f) : y;
}
// x² as sq + lo exactly where the ISA has FMA, lo = 0 otherwise.
inline void square_split(Vf x, Vf& sq, Vf& lo) {
  sq = x * x;
#if defined(TESSEL_CPU_ISA_AVX512)
  lo = bitcast<Vf>(_mm512_fmsub_ps(bitcast<__m512>(x), bitcast<__m512>(x), bitcast<__m512>(sq)));
#elif defined(TESSEL_CPU_ISA_AVX2)
  lo = bitcast<Vf>(_mm256_fmsub_ps(bitcast<__m256>(x), bitcast<__m256>(x), bitcast<__m256>(sq)));
#elif defined(__aarch64__)
  lo = bitcast<Vf>(
      vfmaq_f32(bitcast<float32x4_t>(-sq), bitcast<float32x4_t>(x), bitcast<float32x4_t>(x)));
#else
  // No FMA: x = hi + lo with hi of 12 bits, so hi² is exact and lo·(2hi + lo) is small.
  Vf hi = bitcast<Vf>(bitcast<Vi32>(x) & static_cast<int32_t>(0xfffff000u));
  Vf l = x - hi;
  sq = hi * hi;
  lo = l * (hi + hi + l);
#endif
}
inline Vf erf_small(Vf x) {  // |x| <= 0.92
  static constexpr float kP[] = {1.128379226e+00f,  -3.761263490e-01f, 1.128369644e-01f,
                                 -2.685944363e-02f, 5.201160908e-03f,  -8.144299500e-04f,
                                 8.377330232e-05f};
  return x * vpoly(x * x, kP);
}
}  // namespace simd_math_detail

inline Vf verf(Vf x) {
  Vf a = vabs(x), sq, lo;
  simd_math_detail::square_split(a, sq, lo);
  Vf big = vcopysign(1.0f - simd_math_detail::erfc_tail(a > 0.92f ? a : 1.0f, sq, lo), x);
  Vf y = a <= 0.92f ? simd_math_detail::erf_small(x) : big;
  return x != x ? x : y;
}
inline Vf verfc(Vf x) {
  Vf a = vabs(x), sq, lo;
  simd_math_detail::square_split(a, sq, lo);
  Vf tail = simd_math_detail::erfc_tail(a > 0.92f ? a : 1.0f, sq, lo);
  Vf y = a <= 0.92f ? 1.0f - simd_math_detail::erf_small(x) : (x < 0.0f ? 2.0f - tail : tail);
  return x != x ? x : y;
}

// 0.5 x (1 + erf(x / sqrt 2)). Both tails come from one erfc(|x| / sqrt 2): the negative one
// as 0.5 x erfc (where 1 + erf cancels), the positive one as x (1 - 0.5 erfc). (Going through
// verf for the positive side evaluated the tail twice: GELU was 2 ns an element.) Positive x up
// to 3.2 have a cheaper form, x·G(x - 2.25), G fitted to 1 - 0.5 erfc(x / sqrt 2) on [1.3, 3.2]
// (1.3 ulps over a dense sweep): taken when no lane needs the tail, it spares the exp, the
// reciprocal and the tail's polynomial (+ activations mostly stay below 3.2).
//
// vgelu's form for |x| <= 1.3 alone, its value there (NaN included): `covers` says whether every
// lane is such. For loops that keep the data-dependent branch out of their main pass (as
// vtanh_near).
inline Vf vgelu_near(Vf x, bool& covers) {
  // 0.5x(1 + erf(x/√2)) = 0.5x + x²·Q(x²), erf_small's polynomial rescaled (Q(t) = P(t/2) /
  // 2√2), so that x² is the only product before the Horner chain.
  static constexpr float kQ[] = {3.989423012e-01f,  -6.649037299e-02f, 9.973472837e-03f,
                                 -1.187030921e-03f, 1.149305046e-04f,  -8.998264694e-06f,
                                 4.627864856e-07f};
  Vf t = x * x;
  covers = !any_greater(t, 1.6928f);   // 1.6928 = (0.92·√2)²
  return t * vpoly(t, kQ) + 0.5f * x;  // NaN stays NaN
}
// vgelu(x) given near = vgelu_near(x), where near does not cover every lane.
inline Vf vgelu_far(Vf x, Vf near) {
  constexpr float kRsqrt2 = 0.707106781186547524f;
  Vf a = vabs(x) * kRsqrt2;
  Vi32 far = a > 0.92f;
  Vi32 mid = x > 0.0f && x <= 3.2f;
  if (!any(far & ~mid)) {
    static constexpr float kG[] = {9.877755046e-01f, 3.173963353e-02f,  -3.570691124e-02f,
                                   2.149074711e-02f, -6.139002275e-03f, -4.638340324e-04f,
                                   9.975421708e-04f, -2.590984514e-04f, -4.050873758e-05f,
                                   2.893404417e-05f};
    return far ? x * vpoly(x - 2.25f, kG) : near;
  }
  Vf sq, lo;
  simd_math_detail::square_split(x, sq, lo);
  Vf half_tail = 0.5f * simd_math_detail::erfc_tail(a > 0.92f ? a : 1.0f, 0.5f * sq, 0.5f * lo);
  Vf big = x < 0.0f ? x * half_tail : x * (1.0f - half_tail);
  Vf y = far ? big : near;
  return x != x ? x : y;
}
inline Vf vgelu(Vf x) {
  bool covers;
  Vf near = vgelu_near(x, covers);
  if (covers) return near;  // |x| <= 1.3 everywhere, the common case: no tail to evaluate
  return vgelu_far(x, near);
}

// ---- Trigonometric --------------------------------------------------------------------------

namespace simd_math_detail {
// x = q·π/2 + r, |r| <= π/4 (Cody-Waite in three parts: exact for |x| < 8192·π).
inline Vf reduce_half_pi(Vf x, Vi32& q) {
  Vf qf = vround(x * 0.636619772367581343f);
  q = convert<Vi32>(qf);
  Vf r = x - qf * 1.5703125f;
  r = r - qf * 4.837512969970703125e-4f;
  r = r - qf * 7.54978995489188216e-8f;
  return r;
}
inline Vf sin_poly(Vf r) {
  Vf z = r * r;
  static constexpr float kP[] = {-1.6666654611e-1f, 8.3321608736e-3f, -1.9515295891e-4f};
  return vpoly(z, kP) * z * r + r;
}
inline Vf cos_poly(Vf r) {
  Vf z = r * r;
  static constexpr float kP[] = {4.166664568298827e-2f, -1.388731625493765e-3f,
                                 2.443315711809948e-5f};
  return vpoly(z, kP) * z * z - 0.5f * z + 1.0f;
}
// Lanes too large for the reduction above go through double-precision std:: (rare).
template <class F>
inline Vf scalar_fallback(Vf x, Vf y, F f) {
  Vi32 big = vabs(x) > 8192.0f;
  bool any = false;
  for (int i = 0; i < kLanesF; ++i) any |= big[i] != 0;
  if (!any) return y;
  for (int i = 0; i < kLanesF; ++i)
    if (big[i] && x[i] == x[i] && std::isfinite(x[i]))
      y[i] = static_cast<float>(f(static_cast<double>(x[i])));
  return y;
}
}  // namespace simd_math_detail

inline Vf vsin(Vf x) {
  using namespace simd_math_detail;
  Vi32 q;
  Vf r = reduce_half_pi(x, q);
  Vf y = (q & 1) != 0 ? cos_poly(r) : sin_poly(r);
  y = (q & 2) != 0 ? -y : y;
  y = vabs(x) == kInfF ? splat<Vf>(kNaNF) : y;
  return scalar_fallback(x, x != x ? x : y, [](double v) { return std::sin(v); });
}
inline Vf vcos(Vf x) {
  using namespace simd_math_detail;
  Vi32 q;
  Vf r = reduce_half_pi(x, q);
  Vf y = (q & 1) != 0 ? sin_poly(r) : cos_poly(r);
  y = ((q + 1) & 2) != 0 ? -y : y;
  y = vabs(x) == kInfF ? splat<Vf>(kNaNF) : y;
  return scalar_fallback(x, x != x ? x : y, [](double v) { return std::cos(v); });
}
inline Vf vtan(Vf x) {
  using namespace simd_math_detail;
  Vi32 q;
  Vf r = reduce_half_pi(x, q);
  Vf s = sin_poly(r), c = cos_poly(r);
  Vf y = (q & 1) != 0 ? -c / s : s / c;
  y = vabs(x) == kInfF ? splat<Vf>(kNaNF) : y;
  return scalar_fallback(x, x != x ? x : y, [](double v) { return std::tan(v); });
}

inline Vf vatan(Vf x) {
  Vf a = vabs(x);
  Vi32 big = a > 2.414213562373095f, mid = a > 0.4142135623730950f;
  Vf y0 = big ? splat<Vf>(kPi2F) : (mid ? splat<Vf>(0.78539816339744831f) : splat<Vf>(0.0f));
  Vf t = big ? -1.0f / a : (mid ? (a - 1.0f) / (a + 1.0f) : a);
  Vf z = t * t;
  static constexpr float kP[] = {-3.33329491539e-1f, 1.99777106478e-1f, -1.38776856032e-1f,
                                 8.05374449538e-2f};
  Vf y = vpoly(z, kP) * z * t + t + y0;
  return vcopysign(y, x);
}

namespace simd_math_detail {
inline Vf asin_core(Vf t, Vf z) {  // asin(t) for t in [0, 0.5], z = t²
  static constexpr float kP[] = {1.6666752422e-1f, 7.4953002686e-2f, 4.5470025998e-2f,
                                 2.4181311049e-2f, 4.2163199048e-2f};
  return vpoly(z, kP) * z * t + t;
}
}  // namespace simd_math_detail

inline Vf vasin(Vf x) {
  Vf a = vabs(x);
  Vi32 big = a > 0.5f;
  Vf z = big ? 0.5f * (1.0f - a) : a * a;
  Vf t = big ? vsqrt(z) : a;
  Vf p = simd_math_detail::asin_core(t, z);
  p = big ? kPi2F - (p + p) : p;
  p = a > 1.0f ? splat<Vf>(kNaNF) : p;
  return x != x ? x : vcopysign(p, x);
}
inline Vf vacos(Vf x) {
  Vf a = vabs(x);
  Vi32 big = a > 0.5f;
  Vf z = big ? 0.5f * (1.0f - a) : a * a;
  Vf t = big ? vsqrt(z) : a;
  Vf p = simd_math_detail::asin_core(t, z);
  Vf small = kPi2F - vcopysign(p, x);
  Vf y = big ? (x > 0.0f ? p + p : kPiF - (p + p)) : small;
  y = a > 1.0f ? splat<Vf>(kNaNF) : y;
  return x != x ? x : y;
}

// atan2(y, x) from atan of min/max of |y|, |x|, with the quadrant and signed-zero rules of
// std::atan2 (inf/inf gives a multiple of π/4).
inline Vf vatan2(Vf y, Vf x) {
  Vf ay = vabs(y), ax = vabs(x);
  Vi32 swap = ay > ax;
  Vf num = swap ? ax : ay, den = swap ? ay : ax;
  Vf ratio = den == 0.0f ? splat<Vf>(0.0f) : num / den;
  ratio = (ax == kInfF) & (ay == kInfF) ? splat<Vf>(1.0f) : ratio;
  Vf a = vatan(ratio);
  a = swap ? kPi2F - a : a;
  Vi32 xneg = bitcast<Vi32>(x) < 0;
  a = xneg ? kPiF - a : a;
  Vf r = vcopysign(a, y);
  return (x != x) | (y != y) ? x + y : r;
}

// ---- Hyperbolic -----------------------------------------------------------------------------

inline Vf vsinh(Vf x) {
  Vf a = vabs(x);
  Vf t = vexpm1(a);
  Vf mid = 0.5f * (t + t / (t + 1.0f));
  Vf h = vexp(0.5f * a);  // beyond exp's range, e^a / 2 = (e^(a/2) / 2) · e^(a/2)
  Vf big = (0.5f * h) * h;
  Vf y = a > 80.0f ? big : mid;
  return x != x ? x : vcopysign(y, x);
}
inline Vf vcosh(Vf x) {
  Vf a = vabs(x);
  Vf e = vexp(a);
  Vf mid = 0.5f * e + 0.5f / e;
  Vf h = vexp(0.5f * a);
  Vf big = (0.5f * h) * h;
  Vf y = a > 80.0f ? big : mid;
  return x != x ? x : y;
}
inline Vf vasinh(Vf x) {
  Vf a = vabs(x);
  Vf z = a * a;
  Vf small = vlog1p(a + z / (1.0f + vsqrt(z + 1.0f)));
  Vf big = vlog(a) + 0.693147180559945309f;
  Vf y = a > 1e18f ? big : small;
  return x != x ? x : vcopysign(y, x);
}
inline Vf vacosh(Vf x) {
  Vf t = x - 1.0f;
  Vf near = vlog1p(t + vsqrt(2.0f * t + t * t));
  Vf mid = vlog(x + vsqrt(x * x - 1.0f));
  Vf big = vlog(x) + 0.693147180559945309f;
  Vf y = x > 1e18f ? big : (x < 2.0f ? near : mid);
  y = x < 1.0f ? splat<Vf>(kNaNF) : y;
  return x != x ? x : y;
}
inline Vf vatanh(Vf x) {
  Vf a = vabs(x);
  Vf y = 0.5f * vlog1p((a + a) / (1.0f - a));
  y = a > 1.0f ? splat<Vf>(kNaNF) : y;
  return x != x ? x : vcopysign(y, x);
}

// a^b through double-precision std::pow per lane: exactly the reference's rounding. b = 2 in
// every lane (a variance's square) is a·a: a² is exact in double, so rounding it to float gives
// the f32 product, ±0, ±inf, NaN, overflow and denormals alike.
inline Vf vpow(Vf a, Vf b) {
  if (!any(b != 2.0f)) return a * a;
  Vf y;
  for (int i = 0; i < kLanesF; ++i)
    y[i] = static_cast<float>(std::pow(static_cast<double>(a[i]), static_cast<double>(b[i])));
  return y;
}

TESSEL_ISA_END
