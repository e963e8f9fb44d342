// GEMM (gemm.h): BLIS-style. B is packed into kc×NR micro-panels (L1) of a kc×nc block (L3), A
// into MR×kc micro-panels of an mc×kc block (L2); a register-blocked micro-kernel multiplies one
// pair. Packing reads any strides and converts any float dtype; threads split the M×N tiles.
// m == 1 or n == 1 (a matrix-vector product) skips packing: it is memory-bound.
#include "backends/cpu/gemm.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <new>
#include <utility>
#if defined(TESSEL_CPU_ISA_AVX512) || defined(TESSEL_CPU_ISA_AVX2)
#include <immintrin.h>
#endif

#include "backends/cpu/activation.h"
#include "backends/cpu/convert.h"
#include "runtime/thread_pool.h"
// clang-format off
#include "backends/cpu/simd.h"
#include "backends/cpu/kernels/gemm_tile_avx2.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

template <class T>
struct VecOf;
template <>
struct VecOf<float> {
  using type = Vf;
};
template <>
struct VecOf<double> {
  using type = Vd;
};
template <class T>
using VecT = typename VecOf<T>::type;

template <class T>
constexpr DType kNative = sizeof(T) == 4 ? DType::F32 : DType::F64;

// Register blocking: MR rows × NV vectors of C live in registers through the k loop, plus the
// NV B vectors and one broadcast of A. AVX-512 has 32 registers: 14×2 vectors (28
// accumulators), or 8×3 (24) for row counts that 14 divides badly (M = 128 fills 10 panels of
// 14, 91%; 16 of 8 exactly: 12% faster on one core at 128×4096×4096). AVX2 and SSE have 16
// (6×2).
template <class T, int MRv, int NVv, int64_t KCv, int64_t ABytes, bool PairsV = false,
          int64_t KAv = KCv>
struct Blocks {
  using Elem = T;
  // bf16 pairs along k (PairOperand): each packed 32-bit element holds two bf16 factors, and
  // the micro-kernel multiplies them with vdpbf16ps; k, KC and the packed lengths count pairs.
  static constexpr bool kPairs = PairsV;
  using Unpaired = Blocks<T, MRv, NVv, KCv, ABytes, false, KAv>;
  static constexpr int kL = kLanes<VecT<T>>;
  static constexpr int MR = MRv;
  static constexpr int NV = NVv;
  static constexpr int NR = NV * kL;
  // A long kc amortizes each update of C (loaded and stored once a k block): 14×2 at kc 512
  // beat 256 by up to 6% of peak on one thread (1024³ 1.10× the FMA loop's time against 1.13×,
  // 2048³ 1.08× against 1.14×; 512³ and two of the encoder's four shapes unchanged), two threads
  // ×0.91–0.98 on the squares and the encoder's shapes (4096×512×512 1.01; ResNet's 3×3 layers
  // ×0.82–1.12 in two noisy runs, no consistent loss), though its B micro-panel (64 KB at kc
  // 512, 128 at 1024) is past this host's 48 KB L1: B and A both stream from L2 at ~13 bytes a
  // cycle, a fifth of what L2 delivers. Past 512, kc 1024: C ≫ L2 is read and written half as often
  // (pointing the tile at a dummy C made a 2048³ product ~6% faster on two threads). One thread, 4
  // rounds, the same spells' FMA loop: 1024³ 0.873 → 0.891, 2048³ 0.875 → 0.898, 1024×2048×512
  // 0.834 → 0.867, 4096×1024×4096 0.857 → 0.881; two threads within the host's noise on the squares
  // (+2%), ResNet's 3×3 layers 1.02–1.14× faster.
  static constexpr int64_t KC = KCv;
  // An A block of at most ABytes in L2 (1 MB a core), with the rows a k block of KA gets for
  // any shorter one: 252 rows for the 14×2 tile up to k blocks of 768 (126 rows: 2048³ and
  // 4096-row shapes ~2% slower), 182 at 1024 (A 745 KB; 224 rows, 896 KB, read 0.97× at 2048³
  // on two threads).
  static constexpr int64_t mc(int64_t kb) {
    return ABytes / (std::max(kb, KAv) * static_cast<int64_t>(sizeof(T))) / MR * MR;
  }
  // A B block of KC·NC in L3: 4096 columns, fewer where that passes 4 MB (1024 at the 14×2
  // tile's f32 kc of 1024). Each thread packs its own block and reads every panel of it from L3
  // once per row block; on this shared host the L3 a process keeps shrinks in busy spells. A
  // one-off probe of the micro-kernels alone (one thread, an A block of 182 rows, kc 1024)
  // read 0.97–0.99 of the FMA loop over a B block of 2 MB, 0.89–0.97 over 4 MB and 0.84–0.93
  // over 8 MB in busy spells, all ~0.96 in quiet ones. At 8 MB against 4 MB, two threads, 4
  // runs of 6–8 alternating rounds: 2048³ +1–4%, 4096³ +0–3%, 1024 × 512 × 2048 +1–6%, 4096 ×
  // 1024 × 4096 −1 to +5% (the same within the noise on one thread and on shapes with N ≤ 1024).
  // 2 MB (512 columns) packs A four times per 2048 columns: mixed. (16 MB → 8 MB earlier: 4096³
  // on one thread 0.78 → 0.83 of the FMA loop, two threads 0.80 → 0.82.)
  static constexpr int64_t NC =
      std::min<int64_t>(4096, (4 << 20) / (KC * static_cast<int64_t>(sizeof(T))));
  // k in equal blocks of at most KC (a multiple of 8): 1100 = 552 + 548, not 1024 + 76, whose
  // short block pays a whole update of C for an eighth of the multiplies.
  static constexpr int64_t k_block(int64_t k) {
    const int64_t blocks = std::max<int64_t>(1, (k + KC - 1) / KC);
    return std::max<int64_t>(8, ((k + blocks - 1) / blocks + 7) / 8 * 8);
  }
};
#if defined(TESSEL_CPU_ISA_AVX512)
template <class T>
using MainBlocks = Blocks<T, 14, 2, 1024, 768 * 1024, false, 768>;
template <class T>
using NarrowBlocks = Blocks<T, 8, 3, 160, 256 * 1024>;  // a 30 KB B panel
// bf16 × bf16 through vdpbf16ps: the main tile's shape, k counted in pairs, with the main f32
// blocks' geometry in bytes (k blocks of 1024 pairs, 4 KB an A row; A blocks of 768 KB).
// Against 512 pairs and 512 KB, two threads, 5 rounds: 2048³ 24.1 → 23.0 ms, 1024 × 512 × 2048
// 3.81 → 3.53, 1024³ 3.22 → 3.12 (256 and 384 pairs were slower than 512).
using PairBlocks = Blocks<float, 14, 2, 1024, 768 * 1024, true>;
#else
template <class T>
using MainBlocks = Blocks<T, 6, 2, 256, 256 * 1024>;
#endif

// A grow-only, 64-byte aligned scratch buffer per thread (packing must not allocate per call).
class Scratch {
 public:
  ~Scratch() { release(); }
  void* get(size_t bytes) {
    if (bytes > cap_) {
      release();
      p_ = ::operator new(bytes, std::align_val_t(64));
      cap_ = bytes;
    }
    return p_;
  }

 private:
  void release() {
    if (p_ != nullptr) ::operator delete(p_, std::align_val_t(64));
    p_ = nullptr;
    cap_ = 0;
  }
  void* p_ = nullptr;
  size_t cap_ = 0;
};
thread_local Scratch t_pack_a, t_pack_b, t_vec, t_whole_a, t_edge;
// All of A packed, at most: past this, each column part packs A's k block for itself.
constexpr int64_t kWholeABytes = 2 << 20;

template <class T>
void to_t(const void* src, DType dt, int64_t stride, T* dst, int64_t n) {
  if constexpr (sizeof(T) == 4)
    to_f32(src, dt, stride, dst, n);
  else
    to_f64(src, dt, stride, dst, n);
}

inline const uint8_t* element(const GemmOperand& x, int64_t i, int64_t j) {
  return static_cast<const uint8_t*>(x.data) + (i * x.rs + j * x.cs) * dtype_size(x.dtype);
}

inline int64_t iabs(int64_t v) { return v < 0 ? -v : v; }

#if defined(TESSEL_CPU_ISA_AVX512)
// r[i] lane j -> r[j] lane i: pairs interleaved, then quads, then 128-bit lanes twice. (maskz
// forms: GCC 12 warns on the undefined-source ones.)
inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16], v[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_maskz_unpacklo_ps(0xffff, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_ps(0xffff, r[i], r[i + 1]);
  }
  auto lo = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(
        _mm512_maskz_unpacklo_pd(0xff, _mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  auto hi = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(
        _mm512_maskz_unpackhi_pd(0xff, _mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  for (int i = 0; i < 16; i += 4) {
    u[i] = lo(t[i], t[i + 2]);
    u[i + 1] = hi(t[i], t[i + 2]);
    u[i + 2] = lo(t[i + 1], t[i + 3]);
    u[i + 3] = hi(t[i + 1], t[i + 3]);
  }
  // u[4g + e]: 128-bit lane L holds element 4L + e of rows 4g .. 4g + 3.
  for (int e = 0; e < 4; ++e) {
    v[e] = _mm512_maskz_shuffle_f32x4(0xffff, u[e], u[4 + e], 0x88);
    v[4 + e] = _mm512_maskz_shuffle_f32x4(0xffff, u[e], u[4 + e], 0xdd);
    v[8 + e] = _mm512_maskz_shuffle_f32x4(0xffff, u[8 + e], u[12 + e], 0x88);
    v[12 + e] = _mm512_maskz_shuffle_f32x4(0xffff, u[8 + e], u[12 + e], 0xdd);
  }
  for (int e = 0; e < 4; ++e) {
    r[e] = _mm512_maskz_shuffle_f32x4(0xffff, v[e], v[8 + e], 0x88);
    r[8 + e] = _mm512_maskz_shuffle_f32x4(0xffff, v[e], v[8 + e], 0xdd);
    r[4 + e] = _mm512_maskz_shuffle_f32x4(0xffff, v[4 + e], v[12 + e], 0x88);
    r[12 + e] = _mm512_maskz_shuffle_f32x4(0xffff, v[4 + e], v[12 + e], 0xdd);
  }
}
#endif

#if defined(TESSEL_CPU_ISA_AVX2)
// r[i] lane j -> r[j] lane i (8 × 8): pairs interleaved, then quads, then the 128-bit halves.
inline void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
#pragma GCC unroll 4
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
#pragma GCC unroll 2
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  // u[4g + e]: 128-bit half H holds element 4H + e of rows 4g .. 4g + 3.
#pragma GCC unroll 4
  for (int e = 0; e < 4; ++e) {
    r[e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x20);
    r[4 + e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x31);
  }
}
#endif

// A bf16 operand seen as pairs along k: pair q is elements 2q (low half) and 2q + 1 (high
// half, zero where 2q + 1 = k) as one 32-bit word. k is the operand's own length along k.
struct PairOperand : GemmOperand {
  int64_t k = 0;
  // The pair at `e` (element 2q), its second element `step` further, present when `second`.
  static uint32_t word(const uint16_t* e, int64_t step, bool second) {
    return e[0] | (second ? uint32_t{e[step]} << 16 : 0u);
  }
};

template <class Bk, class T = typename Bk::Elem>
void pack_a(const GemmOperand& a, int64_t i0, int64_t mc, int64_t p0, int64_t kc, T* dst);

#if defined(TESSEL_CPU_ISA_AVX512)
// 16 bf16 elements widened to 32 bits (a pair with an empty high half). (maskz forms: GCC 12
// warns on the undefined-source ones.)
inline __m512i widen_bf16(const uint16_t* p) {
  return _mm512_maskz_cvtepu16_epi32(0xffff,
                                     _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
// 16 columns of bf16 rows r0 and r1 as 16 pairs, r1's element in the high half.
inline __m512i pair_words(const uint16_t* r0, const uint16_t* r1) {
  return _mm512_or_si512(widen_bf16(r0), _mm512_maskz_slli_epi32(0xffff, widen_bf16(r1), 16));
}
#endif

// pack_a for pairs: rows [i0, i0+mc) × pairs [q0, q0+kq), pair (i, q) at panel word q·MR + i.
template <class Bk>
void pack_a_pairs(const PairOperand& a, int64_t i0, int64_t mc, int64_t q0, int64_t kq,
                  float* dst) {
  constexpr int MR = Bk::MR;
  // Row-major with even rows on a 4-byte boundary: the pairs are A's 32-bit words, packed as
  // f32 A is (through the 16×16 transpose). The last block of an odd k takes the element loop.
  if (a.cs == 1 && a.rs % 2 == 0 && reinterpret_cast<uintptr_t>(a.data) % 4 == 0 &&
      2 * (q0 + kq) <= a.k) {
    const GemmOperand words{a.data, DType::F32, a.rs / 2, 1};
    return pack_a<typename Bk::Unpaired>(words, i0, mc, q0, kq, dst);
  }
  const auto* s = static_cast<const uint16_t*>(a.data);
  auto* out = reinterpret_cast<uint32_t*>(dst);
  for (int64_t ir = 0; ir < mc; ir += MR) {
    const int rows = static_cast<int>(std::min<int64_t>(MR, mc - ir));
    uint32_t* panel = out + ir * kq;
    for (int64_t q = 0; q < kq; ++q) {
      const int64_t k0 = 2 * (q0 + q);
      const bool second = k0 + 1 < a.k;
      for (int r = 0; r < MR; ++r)
        panel[q * MR + r] =
            r < rows ? a.word(s + (i0 + ir + r) * a.rs + k0 * a.cs, a.cs, second) : 0u;
    }
  }
}

// pack_b for pairs: pairs [q0, q0+kq) × columns [j0, j0+nc), pair (q, j) at panel word q·NR + j
// of panel j / NR; columns past nc zero.
template <class Bk>
void pack_b_pairs(const PairOperand& b, int64_t q0, int64_t kq, int64_t j0, int64_t nc,
                  float* dst) {
  constexpr int NR = Bk::NR, L = Bk::kL, NV = Bk::NV;
  const auto* s = static_cast<const uint16_t*>(b.data);
  auto* out = reinterpret_cast<uint32_t*>(dst);
#if defined(TESSEL_CPU_ISA_AVX512)
  if (b.cs == 1 && nc >= NR) {
    // Row-major: as pack_b's, 8 panels at a time, a pair of rows at a time (each row read 512 B
    // in order), 16 columns of the two rows widened to 32 bits and interleaved by a shift.
    constexpr int64_t kGroup = 8 * NR;
    const int64_t full = nc / NR * NR;
    for (int64_t g0 = 0; g0 < full; g0 += kGroup) {
      const int64_t g1 = std::min(full, g0 + kGroup);
      for (int64_t q = 0; q < kq; ++q) {
        const int64_t k0 = 2 * (q0 + q);
        const bool second = k0 + 1 < b.k;
        const uint16_t* r0 = s + k0 * b.rs + j0;
        uint32_t* d = out + q * NR;
        for (int64_t jr = g0; jr < g1; jr += NR)
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v) {
            const uint16_t* e = r0 + jr + v * L;
            _mm512_store_si512(d + jr * kq + v * L,
                               second ? pair_words(e, e + b.rs) : widen_bf16(e));
          }
      }
    }
    if (full < nc) pack_b_pairs<Bk>(b, q0, kq, j0 + full, nc - full, dst + full * kq);
    return;
  }
#endif
  for (int64_t jr = 0; jr < nc; jr += NR) {
    const int cols = static_cast<int>(std::min<int64_t>(NR, nc - jr));
    uint32_t* panel = out + jr * kq;
    for (int64_t q = 0; q < kq; ++q) {
      const int64_t k0 = 2 * (q0 + q);
      const bool second = k0 + 1 < b.k;
      const uint16_t* r0 = s + k0 * b.rs + (j0 + jr) * b.cs;
      uint32_t* d = panel + q * NR;
      for (int c = 0; c < NR; ++c) d[c] = c < cols ? b.word(r0 + c * b.cs, b.rs, second) : 0u;
    }
  }
}

// A[i0 .. i0+mc, p0 .. p0+kc] as MR×kc micro-panels: panel r holds rows r·MR.., element
// (i, p) at [p·MR + i]; rows past mc are zero.
template <class Bk, class T>
void pack_a(const GemmOperand& a, int64_t i0, int64_t mc, int64_t p0, int64_t kc, T* dst) {
  if constexpr (Bk::kPairs)
    return pack_a_pairs<Bk>(static_cast<const PairOperand&>(a), i0, mc, p0, kc, dst);
  constexpr int MR = Bk::MR;
  const bool native = a.dtype == kNative<T>;
  for (int64_t ir = 0; ir < mc; ir += MR) {
    const int rows = static_cast<int>(std::min<int64_t>(MR, mc - ir));
    T* panel = dst + ir * kc;
    const int64_t i = i0 + ir;
    if (native) {
      const T* s = static_cast<const T*>(a.data) + i * a.rs + p0 * a.cs;
      if (a.rs == 1 && rows == MR) {
#if defined(TESSEL_CPU_ISA_AVX512)
        if constexpr (sizeof(T) == 4) {
          constexpr __mmask16 rows_mask = (1u << MR) - 1;
          for (int64_t p = 0; p < kc; ++p)
            _mm512_mask_storeu_ps(panel + p * MR, rows_mask,
                                  _mm512_maskz_loadu_ps(rows_mask, s + p * a.cs));
          continue;
        }
#endif
        for (int64_t p = 0; p < kc; ++p)
          for (int r = 0; r < MR; ++r) panel[p * MR + r] = s[p * a.cs + r];
      } else if (a.cs == 1) {
        // Row-major A. On AVX-512, 16 consecutive k of the MR rows at a time through a 16×16
        // transpose in registers. (Element-wise copies were 10% of a 1024³ GEMM; one gather per
        // panel row, which replaced them, was still 7% of the encoder layer on Zen 4, ~4 cycles
        // an element.) AVX2 likewise 8 k through an 8×8 transpose (below); other ISAs and the
        // tail copy elements.
        int64_t p = 0;
#if defined(TESSEL_CPU_ISA_AVX512)
        if constexpr (sizeof(T) == 4)
          if (rows == MR) {
            constexpr __mmask16 rows_mask = (1u << MR) - 1;
            for (; p + 16 <= kc; p += 16) {
              __m512 r[16];
#pragma GCC unroll 16
              for (int i = 0; i < 16; ++i)
                r[i] = i < MR ? _mm512_loadu_ps(s + i * a.rs + p) : _mm512_setzero_ps();
              transpose16(r);
#pragma GCC unroll 16
              for (int j = 0; j < 16; ++j)
                _mm512_mask_storeu_ps(panel + (p + j) * MR, rows_mask, r[j]);
            }
          }
#endif
#if defined(TESSEL_CPU_ISA_AVX2)
        // With 256-bit vectors, 8 consecutive k of the MR (≤ 8) rows through an 8 × 8 transpose:
        // the 8 columns are the panel's next 8·MR floats, each stored whole over the last one's
        // spare lanes (the last masked). The element-wise copy was ~6% of a 1024³ GEMM on one
        // thread on the Zen 3 host (~4 cycles an element, A cold).
        if constexpr (sizeof(T) == 4 && MR <= 8)
          if (rows == MR) {
            const __m256i first_mr = _mm256_cmpgt_epi32(_mm256_set1_epi32(MR),
                                                        _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
            for (; p + 8 <= kc; p += 8) {
              __m256 r[8];
#pragma GCC unroll 8
              for (int i = 0; i < 8; ++i)
                r[i] = i < MR ? _mm256_loadu_ps(s + i * a.rs + p) : _mm256_setzero_ps();
              transpose8(r);
#pragma GCC unroll 7
              for (int j = 0; j < 7; ++j) _mm256_storeu_ps(panel + (p + j) * MR, r[j]);
              _mm256_maskstore_ps(panel + (p + 7) * MR, first_mr, r[7]);
            }
          }
#endif
        for (int r = 0; r < rows; ++r)
          for (int64_t q = p; q < kc; ++q) panel[q * MR + r] = s[r * a.rs + q];
      } else {
        for (int64_t p = 0; p < kc; ++p)
          for (int r = 0; r < rows; ++r) panel[p * MR + r] = s[r * a.rs + p * a.cs];
      }
    } else if (iabs(a.cs) <= iabs(a.rs)) {
      T tmp[Bk::KC];
      for (int r = 0; r < rows; ++r) {
        to_t(element(a, i + r, p0), a.dtype, a.cs, tmp, kc);
        for (int64_t p = 0; p < kc; ++p) panel[p * MR + r] = tmp[p];
      }
    } else {
      for (int64_t p = 0; p < kc; ++p)
        to_t(element(a, i, p0 + p), a.dtype, a.rs, panel + p * MR, rows);
    }
    if (rows < MR)
      for (int64_t p = 0; p < kc; ++p)
        for (int r = rows; r < MR; ++r) panel[p * MR + r] = T(0);
  }
}

// B[p0 .. p0+kc, j0 .. j0+nc] as kc×NR micro-panels: element (p, j) at [p·NR + j]; columns
// past nc are zero.
template <class Bk, class T = typename Bk::Elem>
void pack_b(const GemmOperand& b, int64_t p0, int64_t kc, int64_t j0, int64_t nc, T* dst) {
  if constexpr (Bk::kPairs)
    return pack_b_pairs<Bk>(static_cast<const PairOperand&>(b), p0, kc, j0, nc, dst);
  using V = VecT<T>;
  constexpr int NR = Bk::NR, L = Bk::kL, NV = Bk::NV;
  if (b.panels != nullptr) return b.panels->pack(b.panels->ctx, p0, kc, j0, nc, NR, dst);
  const bool native = b.dtype == kNative<T>;
  if (native && b.cs == 1 && nc >= NR) {
    // Row-major B: 8 panels at a time, row by row, so each source row is read 1 KB in order
    // and 8 panels are written (panel by panel the source was read one 128-byte piece per
    // row, rows a page apart; all panels at once wrote too many streams: 19-23% of a
    // 128×4096×4096 GEMM either way).
    constexpr int64_t kGroup = 8 * NR;
    const int64_t full = nc / NR * NR;
    for (int64_t g0 = 0; g0 < full; g0 += kGroup) {
      const int64_t g1 = std::min(full, g0 + kGroup);
      for (int64_t p = 0; p < kc; ++p) {
        const T* s = static_cast<const T*>(b.data) + (p0 + p) * b.rs + j0;
        T* d = dst + p * NR;
        for (int64_t jr = g0; jr < g1; jr += NR)
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v) store(d + jr * kc + v * L, load<V>(s + jr + v * L));
      }
    }
    if (full < nc) pack_b<Bk>(b, p0, kc, j0 + full, nc - full, dst + full * kc);
    return;
  }
  for (int64_t jr = 0; jr < nc; jr += NR) {
    const int cols = static_cast<int>(std::min<int64_t>(NR, nc - jr));
    T* panel = dst + jr * kc;
    const int64_t j = j0 + jr;
    if (native) {
      const T* s = static_cast<const T*>(b.data) + p0 * b.rs + j * b.cs;
      if (b.cs == 1 && cols == NR) {
        for (int64_t p = 0; p < kc; ++p)
          for (int v = 0; v < NV; ++v) store(panel + p * NR + v * L, load<V>(s + p * b.rs + v * L));
      } else if (b.cs == 1) {
        // A partial panel of row-major B (N < NR, or the last panel): whole vectors, a masked
        // one, zeros; the element loop below was 29% of a 60×2880×40 GEMM.
        const int full = cols / L, rest = cols % L;
        for (int64_t p = 0; p < kc; ++p) {
          const T* sp = s + p * b.rs;
          T* d = panel + p * NR;
          int v = 0;
          for (; v < full; ++v) store(d + v * L, load<V>(sp + v * L));
          if (rest > 0) store(d + v++ * L, load_partial<V>(sp + full * L, rest));
          for (; v < NV; ++v) store(d + v * L, V{});
        }
        continue;
      } else if (b.rs == 1) {
        int64_t p = 0;
#if defined(TESSEL_CPU_ISA_AVX2)
        // Column-major B (a transposed operand: Gemm's transB, a backward pass's weights) with
        // 256-bit vectors: 8 columns × 8 k through an 8 × 8 transpose, each a row of the panel,
        // not element by element into every 16th float.
        if constexpr (sizeof(T) == 4 && NR % 8 == 0)
          if (cols == NR)
            for (; p + 8 <= kc; p += 8)
#pragma GCC unroll 2
              for (int c0 = 0; c0 < NR; c0 += 8) {
                __m256 r[8];
#pragma GCC unroll 8
                for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(s + (c0 + i) * b.cs + p);
                transpose8(r);
#pragma GCC unroll 8
                for (int q = 0; q < 8; ++q) _mm256_storeu_ps(panel + (p + q) * NR + c0, r[q]);
              }
#endif
        for (int c = 0; c < cols; ++c) {
          const T* sc = s + c * b.cs;
          for (int64_t q = p; q < kc; ++q) panel[q * NR + c] = sc[q];
        }
      } else {
        for (int64_t p = 0; p < kc; ++p)
          for (int c = 0; c < cols; ++c) panel[p * NR + c] = s[p * b.rs + c * b.cs];
      }
    } else if (iabs(b.cs) <= iabs(b.rs)) {
      for (int64_t p = 0; p < kc; ++p)
        to_t(element(b, p0 + p, j), b.dtype, b.cs, panel + p * NR, cols);
    } else {
      T tmp[Bk::KC];
      for (int c = 0; c < cols; ++c) {
        to_t(element(b, p0, j + c), b.dtype, b.rs, tmp, kc);
        for (int64_t p = 0; p < kc; ++p) panel[p * NR + c] = tmp[p];
      }
    }
    if (cols < NR)
      for (int64_t p = 0; p < kc; ++p)
        for (int c = cols; c < NR; ++c) panel[p * NR + c] = T(0);
  }
}

template <class T>
struct BAhead;

#if defined(TESSEL_CPU_ISA_AVX512)
// acc + the products of a's and b's bf16 pairs, lane by lane (vdpbf16ps: each product exact in
// f32, each sum rounded to nearest; subnormal inputs and results are zero). Only where the CPU
// has AVX512_BF16 (has_bf16_dot).
[[gnu::target("avx512bf16")]] inline Vf dot_pairs(Vf acc, Vf a, Vf b) {
  return bitcast<Vf>(
      _mm512_dpbf16_ps(bitcast<__m512>(acc), bitcast<__m512bh>(a), bitcast<__m512bh>(b)));
}
bool has_bf16_dot() {
  static const bool yes = __builtin_cpu_supports("avx512bf16");
  return yes;
}
#else
inline Vf dot_pairs(Vf acc, Vf, Vf) { return acc; }  // never called: no PairBlocks here
#endif

// C[0 .. mr, 0 .. nr] (+)= one A micro-panel · one B micro-panel; `ahead` (optional) requests
// a line every 4 steps of k. DirectA: A is MR rows of row-major A in place, `lda` apart (mr ==
// MR), not a packed panel. Pairs: with `out`, the sum's last k block, the tile's sum ([C +] the
// product) goes to out (rows `ldo` apart) as bf16 instead of to C. Rows (≤ MR, mr ≤ Rows): the
// rows the tile holds, a packed panel's last few (its stride along k stays MR).
template <class Bk, bool DirectA = false, int Rows = Bk::MR, class T = typename Bk::Elem>
inline void micro_kernel(int64_t kc, const T* __restrict a, const T* __restrict b, int64_t ldb,
                         T* c, int64_t ldc, int mr, int nr, bool accumulate,
                         BAhead<T>* ahead = nullptr, int64_t lda = 0, uint16_t* out = nullptr,
                         int64_t ldo = 0) {
  using V = VecT<T>;
  constexpr int MR = Bk::MR, NR = Bk::NR, L = Bk::kL, NV = Bk::NV;
#if defined(TESSEL_CPU_ISA_AVX2)
  // The main f32 tile in assembly (gemm_tile_avx2.h: GCC's loop below rotates its accumulators
  // through spare registers). On the Zen 3 host against OpenBLAS alternating, 3 rounds, one
  // thread: 1024³ 0.94 → 1.01×, 2048³ 0.93 → 1.01×, 128 × 4096 × 4096 0.91 → 0.97×; two threads:
  // 2048³ 0.93 → 1.00×, 1024 × 2048 × 512 0.92 → 0.99×, 4096 × 512 × 512 0.96 → 1.04×.
  if constexpr (std::is_same_v<T, float> && Rows == 6 && NV == 2 && !Bk::kPairs) {
    if (ahead == nullptr) {
      const int64_t a_rows = DirectA ? lda : 1, a_step = DirectA ? 1 : MR;
      if (mr == Rows && nr == NR) {
#pragma GCC unroll 6
        for (int i = 0; i < Rows; ++i) {
          __builtin_prefetch(c + i * ldc, 1, 3);
          __builtin_prefetch(c + i * ldc + NR - 1, 1, 3);
        }
        return tile_6x16(kc, a, a_rows, a_step, b, ldb, c, ldc, accumulate);
      }
      // A partial tile (a packed panel's last 5 rows, a panel's last 9–15 columns; the packed
      // panels are padded to whole tiles) through a buffer.
      alignas(64) T tmp[Rows * NR];
      tile_6x16(kc, a, a_rows, a_step, b, ldb, tmp, NR, false);
      for (int i = 0; i < mr; ++i)
        for (int j = 0; j < nr; ++j)
          c[i * ldc + j] = accumulate ? c[i * ldc + j] + tmp[i * NR + j] : tmp[i * NR + j];
      return;
    }
  }
#endif
  V acc[Rows][NV];
  // C's lines are requested now, to be in L1 when the k loop ends (C ≫ L2 missed there).
#pragma GCC unroll 16
  for (int i = 0; i < Rows; ++i) {
    __builtin_prefetch(c + i * ldc, 1, 3);
    __builtin_prefetch(c + i * ldc + NR - 1, 1, 3);
  }
#pragma GCC unroll 16
  for (int i = 0; i < Rows; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = V{};
  auto step = [&] [[gnu::always_inline]] () {
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = load<V>(b + v * L);
#pragma GCC unroll 16
    for (int i = 0; i < Rows; ++i) {
      V ai = broadcast<V>(DirectA ? a[i * lda] : a[i]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        if constexpr (Bk::kPairs)
          acc[i][v] = dot_pairs(acc[i][v], ai, bv[v]);
        else
          acc[i][v] += ai * bv[v];
      }
    }
    a += DirectA ? 1 : MR;
    b += ldb;
  };
  // With 256-bit vectors, steps of k in runs of 4, `ahead` tested once a run and the run
  // unrolled: a step's 12 FMAs (6 cycles) carried ~7 scalar instructions of loop and test. On
  // the Zen 3 host, two threads, 4 alternating rounds, the same spells' FMA loop: 1024³ 0.63 →
  // 0.70, 2048³ 0.68 → 0.75, 128 × 4096 × 4096 0.59 → 0.65, 1024 × 512 × 2048 0.65 → 0.69.
  // (AVX-512 keeps one step at a time: unrolled by 4 it read 1–3% slower.)
  int64_t p = 0;
  if constexpr (kVectorBytes < 64)
    for (; p + 4 <= kc; p += 4) {
      if (ahead != nullptr) ahead->one();
      step();
      step();
      step();
      step();
    }
  for (; p < kc; ++p) {
    if (ahead != nullptr && p % 4 == 0) ahead->one();
    step();
  }
  // Pairs with `out`: rounded from the registers (a bf16 product's f32 C and a pass over it
  // saved; 1024 × 512 × 2048 on two threads: that pass and C's traffic were ~12% of the time).
  const bool to_bf16 = Bk::kPairs && out != nullptr;
  if (mr == Rows && nr == NR) {
#pragma GCC unroll 16
    for (int i = 0; i < Rows; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        T* cp = c + i * ldc + v * L;
        const V s = accumulate ? load<V>(cp) + acc[i][v] : acc[i][v];
#if defined(TESSEL_CPU_ISA_AVX512)
        if (to_bf16) {
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i * ldo + v * L),
                              bf16_bits(bitcast<__m512>(s)));
          continue;
        }
#endif
        store(cp, s);
      }
    return;
  }
  alignas(64) T tmp[Rows * NR];
#pragma GCC unroll 16
  for (int i = 0; i < Rows; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) store(tmp + i * NR + v * L, acc[i][v]);
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nr; ++j) {
      const T s = accumulate ? c[i * ldc + j] + tmp[i * NR + j] : tmp[i * NR + j];
      if (to_bf16)
        out[i * ldo + j] = bf16_bits(static_cast<float>(s));
      else
        c[i * ldc + j] = s;
    }
}

// micro_kernel by the narrowest tile of Bk's rows that covers nr columns: a panel's last few
// columns then cost their own multiplies, not a whole tile's.
template <class Bk, bool DirectA = false, class T = typename Bk::Elem>
void narrowest_kernel(int64_t kc, const T* a, const T* b, int64_t ldb, T* c, int64_t ldc, int mr,
                      int nr, bool accumulate, BAhead<T>* ahead, int64_t lda = 0) {
  if constexpr (Bk::NV > 1) {
    // (The A block's size, ABytes, is for the packing loops; a micro-kernel does not read it.)
    using Narrower = Blocks<T, Bk::MR, Bk::NV - 1, Bk::KC, 0>;
    if (nr <= Narrower::NR)
      return narrowest_kernel<Narrower, DirectA>(kc, a, b, ldb, c, ldc, mr, nr, accumulate, ahead,
                                                 lda);
  }
  // A packed panel's last few rows by a tile of as few rows (the panel's stride stays MR): where
  // M leaves 1–8 rows past the last whole panel, the full tile's FMAs on empty rows cost up to
  // 13/14 of that panel's time.
  // The 6-row tile (256-bit vectors) likewise takes 2 or 4 rows by a tile of 2 or 4: M = 128
  // leaves 2 rows past 21 panels, whose 6-row tile had been 3% of the multiplies for no work.
  // (AVX-512's 8-row tile keeps its whole panels until it is measured there.)
  if constexpr (!DirectA && Bk::MR > 8) {
    if (mr <= 4)
      return micro_kernel<Bk, false, 4>(kc, a, b, ldb, c, ldc, mr, nr, accumulate, ahead);
    if (mr <= 8)
      return micro_kernel<Bk, false, 8>(kc, a, b, ldb, c, ldc, mr, nr, accumulate, ahead);
  } else if constexpr (!DirectA && Bk::MR > 4 && kVectorBytes < 64) {
    if (mr <= 2)
      return micro_kernel<Bk, false, 2>(kc, a, b, ldb, c, ldc, mr, nr, accumulate, ahead);
    if (mr <= 4)
      return micro_kernel<Bk, false, 4>(kc, a, b, ldb, c, ldc, mr, nr, accumulate, ahead);
  }
  micro_kernel<Bk, DirectA>(kc, a, b, ldb, c, ldc, mr, nr, accumulate, ahead, lda);
}

// C[0 .. mr, 0 .. nr] (+)= R rows of row-major A (in place, `lda` apart; rows past mr read row
// mr - 1, their sums dropped) · NC columns of B laid along k (`bt`, columns `ldbt` apart): the
// products vectorized along k, R·NC sums in registers, each reduced at the end. For a panel's
// last few columns, where micro_kernel's lanes along the columns would be mostly empty.
template <class T, int R, int NC>
void dot_block(int64_t kc, const T* a, int64_t lda, const T* bt, int64_t ldbt, T* c, int64_t ldc,
               int mr, bool accumulate) {
  using V = VecT<T>;
  constexpr int L = kLanes<V>;
  const T* ar[R];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) ar[i] = a + std::min(i, mr - 1) * lda;
  V acc[R][NC];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NC; ++j) acc[i][j] = V{};
  auto step = [&](int64_t p, int n) {
    V bv[NC];
#pragma GCC unroll 4
    for (int j = 0; j < NC; ++j)
      bv[j] = n == L ? load<V>(bt + j * ldbt + p) : load_partial<V>(bt + j * ldbt + p, n);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const V av = n == L ? load<V>(ar[i] + p) : load_partial<V>(ar[i] + p, n);
#pragma GCC unroll 4
      for (int j = 0; j < NC; ++j) acc[i][j] += av * bv[j];
    }
  };
  int64_t p = 0;
  for (; p + L <= kc; p += L) step(p, L);
  if (p < kc) step(p, static_cast<int>(kc - p));
  for (int i = 0; i < std::min(R, mr); ++i)
    for (int j = 0; j < NC; ++j) {
      const T sum = reduce_add(acc[i][j]);
      c[i * ldc + j] = accumulate ? c[i * ldc + j] + sum : sum;
    }
}

// The widest columns dot_block takes, and its rows a block for nc columns (≤ 28 sums).
constexpr int kDotCols = 4;
template <class T>
void dot_edge(int64_t kc, const T* a, int64_t lda, const T* bt, int64_t ldbt, T* c, int64_t ldc,
              int mr, int nc, bool accumulate) {
  switch (nc) {
    case 1:
      return dot_block<T, 14, 1>(kc, a, lda, bt, ldbt, c, ldc, mr, accumulate);
    case 2:
      return dot_block<T, 14, 2>(kc, a, lda, bt, ldbt, c, ldc, mr, accumulate);
    default:
      for (int i = 0; i < mr; i += 7) {
        const int rows = std::min(7, mr - i);
        if (nc == 3)
          dot_block<T, 7, 3>(kc, a + i * lda, lda, bt, ldbt, c + i * ldc, ldc, rows, accumulate);
        else
          dot_block<T, 7, 4>(kc, a + i * lda, lda, bt, ldbt, c + i * ldc, ldc, rows, accumulate);
      }
  }
}

// micro_kernel on pairs: flattened into one body compiled for AVX512_BF16, where dot_pairs
// inlines (elsewhere it would be a call per multiply).
template <class Bk, class T = typename Bk::Elem>
#if defined(TESSEL_CPU_ISA_AVX512)
[[gnu::target("avx512bf16"), gnu::flatten]]
#endif
void micro_kernel_pairs(int64_t kc, const T* a, const T* b, int64_t ldb, T* c, int64_t ldc, int mr,
                        int nr, bool accumulate, BAhead<T>* ahead, uint16_t* out, int64_t ldo) {
  micro_kernel<Bk>(kc, a, b, ldb, c, ldc, mr, nr, accumulate, ahead, 0, out, ldo);
}

// Where a macro-kernel reads B: packed kc×NR panels, or (few rows of A: packing B would cost
// more than it saves) row-major B in place, with its last partial panel packed.
template <class T>
struct BSource {
  const T* packed = nullptr;  // panel of columns [jr, jr+NR) at packed + jr·kc
  const T* direct = nullptr;  // else B at column 0, rows `ld` apart; columns < full in place
  int64_t ld = 0, full = 0;
  const T* edge = nullptr;  // the packed panel at column `full`
};

// Where a macro-kernel reads A: packed MR×kc panels, or (few B panels: each A element is used
// too few times to pay for packing it) row-major A in place, with its last partial panel packed.
template <class T>
struct ASource {
  const T* packed = nullptr;  // panel of rows [ir, ir+MR) at packed + ir·kc
  const T* direct = nullptr;  // else A at the block's first row and k, rows `ld` apart
  int64_t ld = 0, full = 0;   // rows < full in place
  const T* edge = nullptr;    // the packed panel at row `full`
};

// Work done along the micro-kernels' k loops, a step every 4 k: rows of row-major B requested a
// line at a time (a block packed later, so that packing it reads the cache, not memory), and a
// single panel's block of row-major B packed a vector at a time (`copy`, run_share), so that
// the packing's loads overlap the multiplies instead of stalling a packing pass between them.
// The row requests go to L1 (prefetcht0; run_part's groups and PanelsAlong make them). When
// run_share still made them, two blocks ahead of its copy, into L2 128 × 4096 × 4096 read 0.79
// of the FMA loop's rate and into L1 0.84 (two threads, 7 rounds); it now has the copy request
// its own source `copy_ahead` elements on into L2 instead (below). Elsewhere copy_ahead is 0:
// the copy then requests the line it loads, one spare instruction every 4 steps of k.
//
// run_share's copy requests its rows 48 on into L2. Before, the rows of the block after the
// copied one were requested into L1, 160 rows (a k block) ahead: with B's rows 16 KB apart, a
// 48-column block's 480 lines fall in 3 of L1's sets and 12 of L2's (~192 lines), so most were
// evicted before the copy read them (the copy's loads stalled: ~7% of the micro-kernel's
// samples at 128 × 4096 × 4096). Two threads, 3 runs of 8 alternating rounds, the FMA loop's
// rate: 128 × 4096 × 4096 0.822 → 0.840, 0.800 → 0.825, 0.807 → 0.827; 128 × 512 × 2048 0.823
// → 0.820. 24 rows ahead read alike, 96 a little less (0.813), both requests together less.
constexpr int64_t kCopyAheadRows = 48;
// run_strips' bounds: a strip of C (MR rows) and the group of B's panels it multiplies.
constexpr int64_t kStripBytes = 16 << 10, kStripBBytes = 128 << 10;
template <class T>
struct BAhead {
  const T* row = nullptr;  // the next line's row, at the block's first column
  int64_t rs = 0, rows_left = 0, row_lines = 0, line = 0;
  // The panel being copied: its next row's source and destination, vectors per row (NV).
  const T* copy_src = nullptr;
  T* copy_dst = nullptr;
  int64_t copy_rows_left = 0, copy_ld = 0, copy_ahead = 0;
  int copy_vecs = 0, copy_v = 0;
  // Pairs (bf16 B): a row of pairs from two bf16 rows instead, the first at pair_src, the
  // second pair_rs elements on.
  const uint16_t* pair_src = nullptr;
  int64_t pair_rs = 0;
  void one() {
    if (copy_rows_left != 0) copy_one();
    if (rows_left == 0) return;
    __builtin_prefetch(row + line * (64 / sizeof(T)), 0, 3);
    if (++line == row_lines) {
      line = 0;
      row += rs;
      --rows_left;
    }
  }
  void copy_one() {
    using V = VecT<T>;
    constexpr int L = kLanes<V>;
#if defined(TESSEL_CPU_ISA_AVX512)
    if (pair_src != nullptr) {
      const uint16_t* e = pair_src + copy_v * L;
      _mm512_store_si512(copy_dst + copy_v * L, pair_words(e, e + pair_rs));
      if (++copy_v == copy_vecs) {
        copy_v = 0;
        pair_src += 2 * pair_rs;
        copy_dst += copy_ld;
        --copy_rows_left;
      }
      return;
    }
#endif
    __builtin_prefetch(copy_src + copy_ahead + copy_v * L, 0, 2);  // (0: the line it loads)
    store(copy_dst + copy_v * L, load<V>(copy_src + copy_v * L));
    if (++copy_v == copy_vecs) {
      copy_v = 0;
      copy_src += rs;
      copy_dst += copy_ld;
      --copy_rows_left;
    }
  }
  // The copies the k loops left (fewer row panels than the block has vectors).
  void finish_copy() {
    while (copy_rows_left != 0) copy_one();
  }
};

// Row-major B's k block packed panel by panel along a macro-kernel (`along`): the panel at
// column jr + NR along the micro-kernels of panel jr, the one after it requested ahead. `src`
// (bf16 B as pairs: `pairs`) is the block's first row at its first column; the panels before
// `full` are copied (the first and any partial one the caller packs).
template <class T>
struct PanelsAlong {
  const T* src = nullptr;
  const uint16_t* pairs = nullptr;
  int64_t rs = 0;
  T* dst = nullptr;  // the packed block, panel jr at dst + jr·kc
  int64_t full = 0;
};

// C[0 .. mc, 0 .. ncols] (+)= A block (packed or in place) · B panels; `ahead` as for
// micro_kernel, or B's panels packed `along` it; `out` (pairs, at C's origin) as for micro_kernel.
template <class Bk, class T = typename Bk::Elem>
void macro_kernel(int64_t mc, int64_t ncols, int64_t kc, const ASource<T>& a, const BSource<T>& b,
                  T* c, int64_t ldc, bool accumulate, BAhead<T>* ahead = nullptr,
                  const PanelsAlong<T>* along = nullptr, uint16_t* out = nullptr, int64_t ldo = 0) {
  constexpr int MR = Bk::MR, NR = Bk::NR;
  for (int64_t jr = 0; jr < ncols; jr += NR) {
    BAhead<T> next;
    BAhead<T>* steps = ahead;
    if (along != nullptr && jr + NR < along->full) {
      next.copy_dst = along->dst + (jr + NR) * kc;
      next.copy_rows_left = kc;
      next.copy_ld = NR;
      next.copy_vecs = Bk::NV;
      if (along->pairs != nullptr) {
        // Twice as many source rows of half the bytes: requested a line a row where the rows
        // are whole floats apart.
        next.pair_src = along->pairs + jr + NR;
        next.pair_rs = along->rs;
        if (jr + 2 * NR < along->full && along->rs % 2 == 0) {
          next.row = reinterpret_cast<const T*>(along->pairs + jr + 2 * NR);
          next.rs = along->rs / 2;
          next.rows_left = 2 * kc;
          next.row_lines = NR * 2 / 64;
        }
      } else {
        next.rs = along->rs;
        next.copy_src = along->src + jr + NR;
        if (jr + 2 * NR < along->full) {
          next.row = along->src + jr + 2 * NR;
          next.rows_left = kc;
          next.row_lines = NR * static_cast<int64_t>(sizeof(T)) / 64;
        }
      }
      steps = &next;
    }
    const int nr = static_cast<int>(std::min<int64_t>(NR, ncols - jr));
    const T* bp = b.packed + jr * kc;
    int64_t ldb = NR;
    if (b.direct != nullptr) {
      bp = jr < b.full ? b.direct + jr : b.edge;
      ldb = jr < b.full ? b.ld : NR;
    }
    // A panel's last few columns against A in place: dot_edge, with the columns laid along k.
    // ResNet's 14 × 14 layer (N = 196: 4 columns past 6 panels) spent ~6% of its samples in
    // the one-vector tile there, for 2% of the flops.
    T* bt = nullptr;
    if (!Bk::kPairs && a.direct != nullptr && nr <= kDotCols && a.full > 0) {
      bt = static_cast<T*>(t_edge.get(static_cast<size_t>(nr * kc) * sizeof(T)));
      for (int64_t p = 0; p < kc; ++p)
        for (int j = 0; j < nr; ++j) bt[j * kc + p] = bp[p * ldb + j];
    }
    for (int64_t ir = 0; ir < mc; ir += MR) {
      const int mr = static_cast<int>(std::min<int64_t>(MR, mc - ir));
      if constexpr (Bk::kPairs)
        micro_kernel_pairs<Bk>(kc, a.packed + ir * kc, bp, ldb, c + ir * ldc + jr, ldc, mr, nr,
                               accumulate, steps, out != nullptr ? out + ir * ldo + jr : nullptr,
                               ldo);
      else if (bt != nullptr && ir < a.full)
        dot_edge(kc, a.direct + ir * a.ld, a.ld, bt, kc, c + ir * ldc + jr, ldc, mr, nr,
                 accumulate);
      else if (a.direct != nullptr && ir < a.full)
        narrowest_kernel<Bk, true>(kc, a.direct + ir * a.ld, bp, ldb, c + ir * ldc + jr, ldc, mr,
                                   nr, accumulate, steps, a.ld);
      else
        narrowest_kernel<Bk>(kc, a.direct != nullptr ? a.edge : a.packed + ir * kc, bp, ldb,
                             c + ir * ldc + jr, ldc, mr, nr, accumulate, steps);
    }
    next.finish_copy();
  }
}

// Whether MR rows `row_bytes` apart, read in place, spread over L1's sets (64 sets of 64-byte
// lines, 12 ways) with at most 8 of their lines in one: rows a multiple of 4 KB apart all fall
// in one set. (2 KB apart, 7 a set, read faster in place than packed; 4 KB mixed.)
template <int MR>
bool rows_spread(int64_t row_bytes) {
  int per_set[64] = {};
  for (int64_t i = 0; i < MR; ++i)
    if (++per_set[(i * row_bytes / 64) % 64] > 8) return false;
  return true;
}

template <class Bk, class T = typename Bk::Elem>
void gemm_packed(int64_t m, int64_t n, int64_t k, const GemmOperand& a, const GemmOperand& b, T* c,
                 int64_t ldc, bool accumulate, const GemmEpilogue<T>* ep) {
  constexpr int MR = Bk::MR, NR = Bk::NR;
  // bf16 out from the pair kernel's registers (GemmEpilogue::out_bf16): the sum's last k block
  // stores there, and the epilogue is not run. out_at: where the tile at C's (i, j) goes.
  uint16_t* const out16 = Bk::kPairs && ep != nullptr ? ep->out_bf16 : nullptr;
  const int64_t ldo = out16 != nullptr ? ep->ld_out : 0;
  if (out16 != nullptr) ep = nullptr;
  auto out_at = [out16, ldo](bool last, int64_t i, int64_t j) {
    return last && out16 != nullptr ? out16 + i * ldo + j : nullptr;
  };
  // Small products are not worth waking the pool.
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * k;
  const int threads = flops < 2e6 ? 1 : num_threads();
  // Row blocks hold whole MR-row micro-panels, at most mc(kb) rows, in equal shares. Three paths:
  // one row block (own_b: the threads split the columns); enough rows for a multiple of the
  // thread count (each thread owns whole row blocks, below); otherwise, and for ≤ 2·MR rows
  // reading B in place, work units of row blocks × column chunks on a B packed once and shared.
  const int64_t row_panels = (m + MR - 1) / MR;
  const int64_t kb = Bk::k_block(k);
  int64_t row_blocks = (m + Bk::mc(kb) - 1) / Bk::mc(kb);
  if (threads > 1 && row_blocks >= threads)
    row_blocks = std::min(row_panels, (row_blocks + threads - 1) / threads * threads);
  const int64_t mc_max = (row_panels + row_blocks - 1) / row_blocks * MR;
  // Few rows: B is read once per row block anyway, so it is read in place when row-major.
  const bool direct_b = m <= 2 * MR && b.dtype == kNative<T> && b.cs == 1 && b.panels == nullptr;
  // One row block (M <= mc(kb)): the columns are split between the threads, and each runs the
  // whole k loop over its own columns, packing its B panels right before using them (still in
  // L2) and its own copy of the small A block: no shared packing pass (at M = 128 that was ~17%
  // of the time, bound by memory while the cores idled) and no barrier per k block.
  const bool own_b = !direct_b && row_blocks == 1 && threads > 1;
  // All of A packed (own_b's whole_a), once a call: in the calling thread's t_whole_a, shared
  // by the threads. (A nested product runs inside a parallel_for, on one thread, and never
  // takes the own_b path: it cannot reuse the buffer while the threads read it.)
  const T* whole_a_packed = nullptr;
  for (int64_t jc = 0; jc < n; jc += Bk::NC) {
    const int64_t nc = std::min<int64_t>(Bk::NC, n - jc);
    const int64_t panels = (nc + NR - 1) / NR;
    const int64_t chunks =
        threads == 1 || row_blocks % threads == 0
            ? 1
            : std::clamp<int64_t>((4 * threads + row_blocks - 1) / row_blocks, 1, panels);
    const int64_t units = row_blocks * chunks;
    if (own_b) {
      // Too few column panels to go round (N = 40, K = 2880 in PaddleOCR rec ran on one
      // thread): the rows are split instead, each part packing all of B for itself.
      // Where all of A packed is at most 2 MB, it is packed once (whole_a) and every
      // column panel is a part of its own: the part's C (M × NR, 24 KB at M = 128) then stays
      // in L1 through the whole k loop while A streams from L2 / L3. Two threads against four
      // parts a thread (and A of 2 MB packed per part and k block): 128×4096×4096 1.29× faster,
      // 128×512×2048 1.17×, 200×512×1024 1.14×, 240×240×960 1.04×, 128×64×1920 1.01×; parts of
      // two and three panels were between the two. (One thread keeps the shared path below:
      // mixed there, 0.95–1.07×.) Otherwise two parts a thread, or with few panels a part each:
      // every part packs all of A (four parts of a 60×2880×120 product packed A for as long as
      // they multiplied).
      //
      // B packed by its producer (GemmPanels: a convolution's windows) takes the wider parts
      // with 256-bit vectors: packed a panel at a time, each call paid the producer's setup
      // (its taps and position runs) for 16 columns, and the packing took 76% of a 96 → 24
      // channel 3 × 3 convolution at 160 × 160 on two threads, slower than on one. On the Zen 3
      // host, two threads, 3 alternating rounds: that convolution 42.4 → 18.2 ms, ResNet's 7 × 7
      // stem 5.7 → 3.9, its 3 × 3 layers 1 and 3 5.2 → 2.8 and 3.7 → 3.1, MobileNet's 144 → 24
      // pointwise 0.31 → 0.26. (Not measured with AVX-512, whose panels are twice as wide: it
      // keeps a part a panel until it is.)
      const bool whole_a = row_panels * MR * k * static_cast<int64_t>(sizeof(T)) <= kWholeABytes;
      const bool panel_parts = whole_a && (b.panels == nullptr || kVectorBytes == 64);
      const int64_t col_parts =
          panel_parts ? panels
                      : std::min<int64_t>(panels, (panels >= 8 * threads ? 2 : 1) * threads);
      const int64_t row_parts = col_parts < threads ? std::min<int64_t>(row_panels, threads) : 1;
      const int64_t parts = col_parts < threads ? row_parts : col_parts;
      const bool share_a = whole_a && row_parts == 1;
      // One packed A for both threads, each packing half its k blocks: half the packing work,
      // and one copy in L3 instead of one a thread. Two threads, 8 alternating rounds, the FMA
      // loop's rate: 128 × 4096 × 4096 0.733 → 0.738, 128 × 512 × 2048 0.813 → 0.814, 200 ×
      // 512 × 1024 0.814 → 0.800 (even: kept for the simpler code, no per-call ids).
      if (share_a && whole_a_packed == nullptr) {
        T* whole =
            static_cast<T*>(t_whole_a.get(static_cast<size_t>(row_panels * MR * k) * sizeof(T)));
        parallel_for((k + kb - 1) / kb, 1, [&](int64_t q0, int64_t q1) {
          for (int64_t q = q0; q < q1; ++q)
            pack_a<Bk>(a, 0, m, q * kb, std::min<int64_t>(kb, k - q * kb),
                       whole + q * kb * row_panels * MR);
        });
        whole_a_packed = whole;
      }
      // With a part a panel, each thread takes one share of the columns, equal in flops (whole
      // vectors; a share's last panel may be narrower, and narrowest_kernel multiplies only its
      // columns' vectors): parts handed out a few at a time left one thread up to a part more,
      // and the last partial panel cost a whole one's time. Two threads, 7 rounds, the same
      // spells' FMA loop: 128 × 512 × 2048 0.81 → 0.84 (every round above), 128 × 4096 × 4096
      // 0.81 → 0.82.
      const bool shares = share_a && col_parts == panels && threads > 1;
      parallel_for(shares ? threads : parts, 1, [&](int64_t u0, int64_t u1) {
        T* pa =
            share_a
                ? nullptr
                : static_cast<T*>(t_pack_a.get(static_cast<size_t>(mc_max * Bk::KC) * sizeof(T)));
        // All of A, packed, at k block pc.
        auto whole_a_at = [&](int64_t pc) { return whole_a_packed + pc * row_panels * MR; };
        // Rows [i0, i1) × columns [c0, c1) of this column block, through the whole k loop.
        auto run_part = [&](int64_t i0, int64_t i1, int64_t c0, int64_t c1) {
          // Row-major B ≫ cache is packed a group of panels at a time (pack_b's kGroup, ~240
          // KB), while the next group's rows are requested along this one's micro-kernels:
          // packing all of the part's B before multiplying (~1 MB, past L2) read memory while
          // the multipliers idled (measured when the column shares ran here, before run_share:
          // pack_b 15% of the GEMM's samples at 128×4096×4096, 5% after; 0.95× of the time).
          // Where B fits the caches, the requests only cost (128×512×2048: 1.09× slower).
          // With 256-bit vectors no rows are requested, so the assembly tile takes these
          // multiplies (it makes no requests): on the Zen 3 host the requests read even with
          // GCC's tile (0.796 / 0.794 of the FMA loop), and the assembly tile without them
          // 1.00× OpenBLAS against GCC's with them 0.92× (128 × 4096 × 4096, two threads).
          const bool grouped = b.panels == nullptr && b.dtype == kNative<T> && b.cs == 1 &&
                               k * n * static_cast<int64_t>(sizeof(T)) >= kStreamBytes;
          const bool requests = grouped && kVectorBytes == 64;
          const int64_t part_panels = (c1 - c0 + NR - 1) / NR;
          const int64_t group_panels = grouped ? std::min<int64_t>(8, part_panels) : part_panels;
          const int64_t group = group_panels * NR;
          T* pb = static_cast<T*>(t_pack_b.get(static_cast<size_t>(group * Bk::KC) * sizeof(T)));
          for (int64_t pc = 0; pc < k; pc += kb) {
            const int64_t kc = std::min<int64_t>(kb, k - pc);
            const T* pak = pa;
            if (share_a)
              pak = whole_a_at(pc);
            else
              pack_a<Bk>(a, i0, i1 - i0, pc, kc, pa);
            for (int64_t g0 = c0; g0 < c1; g0 += group) {
              const int64_t g1 = std::min(c1, g0 + group);
              pack_b<Bk>(b, pc, kc, jc + g0, g1 - g0, pb);
              BSource<T> part;
              part.packed = pb;
              BAhead<T> ahead;
              // The next group: this k block's next columns, or the next k block's first.
              const int64_t n0 = g1 < c1 ? g1 : c0, n1 = std::min(c1, n0 + group);
              const int64_t np = g1 < c1 ? pc : pc + kb;
              if (requests && np < k) {
                ahead.row = static_cast<const T*>(b.data) + np * b.rs + jc + n0;
                ahead.rs = b.rs;
                ahead.rows_left = std::min<int64_t>(kb, k - np);
                ahead.row_lines = ((n1 - n0) * static_cast<int64_t>(sizeof(T)) + 63) / 64;
              }
              macro_kernel<Bk>(i1 - i0, g1 - g0, kc, ASource<T>{pak}, part, c + i0 * ldc + jc + g0,
                               ldc, accumulate || pc > 0, requests ? &ahead : nullptr,
                               static_cast<const PanelsAlong<T>*>(nullptr),
                               out_at(pc + kc >= k, i0, jc + g0), ldo);
            }
          }
          if (ep != nullptr) apply_gemm_epilogue(*ep, c, ldc, i0, i1, jc + c0, jc + c1);
        };
        // One thread's share of the columns [s0, s1), a panel at a time through the whole k
        // loop (as run_part with one panel), as a sequence of blocks (panel, k block). Row-major
        // B: each full panel's block is packed along the micro-kernels of the block before
        // (BAhead's copy, into the other of two buffers), the copy requesting its source
        // kCopyAheadRows rows on; else pack_b packs each block before its multiplies. The
        // packing pass between the multiplies had been ~6% of the time at 128 × 4096 × 4096,
        // waiting on B's loads. Two threads, 7 rounds, the same spells' FMA loop: 128 × 4096 ×
        // 4096 0.77 → 0.84, 128 × 512 × 2048 0.83 → 0.84–0.86. With 256-bit vectors each
        // block is packed before its multiplies instead (as row_major_b below): on the Zen 3
        // host, two threads, 3 alternating rounds against OpenBLAS, 128 × 512 × 2048 0.92 →
        // 1.03× (the copy 8 to 48 rows ahead read alike). (128 × 4096 × 4096 does not come here
        // with 6-row panels: its A, 22 panels, is past kWholeABytes; let in, it read 0.91 →
        // 0.76×.)
        // One k block with an epilogue (a convolution's bias, and its fused activation, as in
        // PaddleOCR det's 1 × 1 convolutions): the share's columns in groups of panels, each
        // group's C by strips of MR rows, each strip's epilogue run right after its multiplies,
        // while the strip is in L1. Panel by panel (below), a panel's C, a line in every row, went
        // past L1 before the epilogue read it back: a convolution's output rows lie a plane apart,
        // in one L1 set (at 320 × 320 that pass was 25% of a 1 × 1 convolution's samples). Zen 3
        // host, two threads, 5 alternating rounds: 16 → 32 at 320 × 320 2.25 → 1.33 ms, 48 → 24 at
        // 160 × 160 0.58 → 0.48, ResNet's 256 → 64 at 56 × 56 0.74 → 0.62.
        auto run_strips = [&](int64_t s0, int64_t s1) {
          const int64_t strip_cols = kStripBytes / (MR * static_cast<int64_t>(sizeof(T)));
          const int64_t b_cols = kStripBBytes / (k * static_cast<int64_t>(sizeof(T)));
          const int64_t group = std::max<int64_t>(1, std::min(strip_cols, b_cols) / NR) * NR;
          T* pb = static_cast<T*>(t_pack_b.get(static_cast<size_t>(group * k) * sizeof(T)));
          BSource<T> part;
          part.packed = pb;
          for (int64_t g0 = s0; g0 < s1; g0 += group) {
            const int64_t g1 = std::min(s1, g0 + group);
            pack_b<Bk>(b, 0, k, jc + g0, g1 - g0, pb);
            for (int64_t i0 = 0; i0 < m; i0 += MR) {
              const int64_t i1 = std::min(m, i0 + MR);
              macro_kernel<Bk>(i1 - i0, g1 - g0, k, ASource<T>{whole_a_at(0) + i0 * k}, part,
                               c + i0 * ldc + jc + g0, ldc, accumulate);
              apply_gemm_epilogue(*ep, c, ldc, i0, i1, jc + g0, jc + g1);
            }
          }
        };
        auto run_share = [&](int64_t s0, int64_t s1) {
          if (!Bk::kPairs && k <= kb && ep != nullptr) return run_strips(s0, s1);
          const int64_t kbs = (k + kb - 1) / kb, blocks = (s1 - s0 + NR - 1) / NR * kbs;
          const bool rows =
              kVectorBytes == 64 && b.panels == nullptr && b.dtype == kNative<T> && b.cs == 1;
          T* buf = static_cast<T*>(t_pack_b.get(static_cast<size_t>(2 * NR * Bk::KC) * sizeof(T)));
          // Block q's first column (of this column block), first k and its column count.
          auto col = [&](int64_t q) { return s0 + q / kbs * NR; };
          auto kat = [&](int64_t q) { return q % kbs * kb; };
          auto cols = [&](int64_t q) { return std::min<int64_t>(NR, s1 - col(q)); };
          auto src = [&](int64_t q) {
            return static_cast<const T*>(b.data) + kat(q) * b.rs + jc + col(q);
          };
          bool packed = false;  // the block's panel was copied along the block before
          for (int64_t q = 0; q < blocks; ++q) {
            const int64_t c0 = col(q), pc = kat(q), kc = std::min<int64_t>(kb, k - pc);
            T* pb = buf + q % 2 * NR * Bk::KC;
            if (!packed) pack_b<Bk>(b, pc, kc, jc + c0, cols(q), pb);
            BAhead<T> ahead;
            ahead.rs = b.rs;
            packed = rows && q + 1 < blocks && cols(q + 1) == NR;
            if (packed) {
              ahead.copy_src = src(q + 1);
              ahead.copy_dst = buf + (q + 1) % 2 * NR * Bk::KC;
              ahead.copy_rows_left = std::min<int64_t>(kb, k - kat(q + 1));
              ahead.copy_ld = NR;
              ahead.copy_vecs = Bk::NV;
              ahead.copy_ahead = kCopyAheadRows * b.rs;
            }
            BSource<T> part;
            part.packed = pb;
            macro_kernel<Bk>(m, cols(q), kc, ASource<T>{whole_a_at(pc)}, part, c + jc + c0, ldc,
                             accumulate || pc > 0, packed ? &ahead : nullptr,
                             static_cast<const PanelsAlong<T>*>(nullptr),
                             out_at(pc + kc >= k, 0, jc + c0), ldo);
            ahead.finish_copy();
            if (pc + kc >= k && ep != nullptr)
              apply_gemm_epilogue(*ep, c, ldc, 0, m, jc + c0, jc + c0 + cols(q));
          }
        };
        constexpr int64_t L = Bk::kL;
        for (int64_t u = u0; u < u1; ++u) {
          if (shares) {
            const int64_t s0 = u * (nc / L) / threads * L;
            const int64_t s1 = u + 1 == threads ? nc : (u + 1) * (nc / L) / threads * L;
            run_share(s0, s1);
            continue;
          }
          const int64_t q0 = row_parts > 1 ? 0 : u * panels / parts;
          const int64_t q1 = row_parts > 1 ? panels : (u + 1) * panels / parts;
          const int64_t r = row_parts > 1 ? u : 0;
          run_part(r * row_panels / row_parts * MR,
                   std::min(m, (r + 1) * row_panels / row_parts * MR), q0 * NR,
                   std::min(nc, q1 * NR));
        }
      });
      continue;
    }
    if (!direct_b && chunks == 1) {
      // Each thread owns whole row blocks and runs the whole k loop over them, packing all of
      // B's k block for itself. Sharing one packed B between the threads (each packing part,
      // with a barrier per k block) made each thread read half its panels from the other
      // core's cache and write into lines the other had just read: 2 threads, old time ×0.96
      // at 512³ and 1024³, ×0.91–0.98 on ResNet's 3×3 layers with 256 and 512 channels, neutral
      // (0.99–1.0) from 256 rows on, where the packing is more of the work.
      // Row panels that do not divide between the threads (one of 37 at 512 rows) would leave
      // one thread a panel more than the others: with few panels a thread, their columns are
      // shared out instead (512³: ×0.95). With many, the imbalance is smaller than the cost of
      // one more pass over B for a single panel.
      const int64_t extra = threads > 1 && row_panels < 32 * threads ? row_panels % threads : 0;
      const int64_t own_panels = row_panels - extra, e0 = own_panels * MR;
      // Row-major B is packed along the multiplies (PanelsAlong, below) with 512-bit vectors
      // only. With 256-bit ones, on the Zen 3 host (L1 32 KB and L2 512 KB, both 8 ways), the
      // copy's loads, a line from each of kc rows a power of two apart, stalled (11% of the
      // macro-kernel's samples at 252 × 256 × 4096, one thread, sat on one), and pack_b's pass
      // before the multiplies, reading each row in order, was faster: two threads, 3 alternating
      // rounds against OpenBLAS, 512³ 0.95 → 1.01×, 1024³ 0.98 → 1.02×, 1024 × 2048 × 512 0.93 →
      // 1.02×.
      const bool row_major_b = kVectorBytes == 64 && b.panels == nullptr && b.dtype == kNative<T> &&
                               b.cs == 1 && nc >= NR;
      const bool pair_rows = Bk::kPairs && b.panels == nullptr && b.cs == 1 && nc >= NR;
      // At most 16 column panels: row-major A is read in place (ASource), not packed. Each A
      // element is then used by too few micro-kernels to pay for its packing pass (at N = 49
      // a 16 × 16 transpose and a store for two uses: 22% of ResNet's 512-channel 3 × 3 layer).
      // Two threads, 5 rounds, the same spells' FMA loop: 1024 × 1000 × 64 0.64 → 0.91, 2048 ×
      // 1000 × 128 0.76 → 0.92, 4096 × 512 × 512 0.86 → 0.90, 1024 × 1000 × 512 0.85 → 0.89;
      // 32 panels (1000³) even. ResNet's 3 × 3 layers at 7 × 7 1.41 → 1.13 ms, 14 × 14 1.05 →
      // 1.04.
      const bool direct_a = !Bk::kPairs && a.dtype == kNative<T> && a.cs == 1 && a.rs > 0 &&
                            panels <= 16 && rows_spread<MR>(a.rs * static_cast<int64_t>(sizeof(T)));
      parallel_for(threads, 1, [&](int64_t t0, int64_t t1) {
        const int64_t pa_rows = std::max(mc_max, extra * MR);
        T* pa = static_cast<T*>(t_pack_a.get(static_cast<size_t>(pa_rows * Bk::KC) * sizeof(T)));
        T* pb =
            static_cast<T*>(t_pack_b.get(static_cast<size_t>(panels * NR * Bk::KC) * sizeof(T)));
        BSource<T> src;
        src.packed = pb;
        for (int64_t t = t0; t < t1; ++t)
          for (int64_t pc = 0; pc < k; pc += kb) {
            const int64_t kc = std::min<int64_t>(kb, k - pc);
            const bool acc = accumulate || pc > 0, last = pc + kc >= k;
            const int64_t rb0 = t * row_blocks / threads, rb1 = (t + 1) * row_blocks / threads;
            // Row-major B: the k block's panels are packed along the thread's first row block's
            // multiplies, each along the panel before (PanelsAlong), not in a pass before them.
            // Two threads, 7 rounds, the same spells' FMA loop: 512³ 0.85 → 0.88, 1024³ 0.86 →
            // 0.87, 2048³ 0.855 → 0.86, 1024 × 2048 × 512 0.84 → 0.865, 1024 × 512 × 2048 0.83
            // → 0.85; the 4096-row shapes unchanged.
            PanelsAlong<T> along;
            const int64_t first_rows = rb0 < rb1
                                           ? std::min(m, (rb0 + 1) * own_panels / row_blocks * MR) -
                                                 rb0 * own_panels / row_blocks * MR
                                           : 0;
            // bf16 pairs: where every pair of the block has its two rows (not an odd k's last).
            const bool pairs_along =
                pair_rows && 2 * (pc + kc) <= static_cast<const PairOperand&>(b).k;
            if ((row_major_b || pairs_along) && first_rows > 0) {
              if (pairs_along)
                along.pairs = static_cast<const uint16_t*>(b.data) + 2 * pc * b.rs + jc;
              else
                along.src = static_cast<const T*>(b.data) + pc * b.rs + jc;
              along.rs = b.rs;
              along.dst = pb;
              along.full = nc / NR * NR;
              pack_b<Bk>(b, pc, kc, jc, NR, pb);
              if (along.full < nc)
                pack_b<Bk>(b, pc, kc, jc + along.full, nc - along.full, pb + along.full * kc);
            } else {
              pack_b<Bk>(b, pc, kc, jc, nc, pb);
            }
            for (int64_t rb = rb0; rb < rb1; ++rb) {
              const int64_t i0 = rb * own_panels / row_blocks * MR;
              const int64_t mc = std::min(m, (rb + 1) * own_panels / row_blocks * MR) - i0;
              if (mc <= 0) continue;
              ASource<T> as{pa};
              if (direct_a) {
                as.direct = static_cast<const T*>(a.data) + i0 * a.rs + pc;
                as.ld = a.rs;
                as.full = mc / MR * MR;
                as.edge = pa;
                if (as.full < mc) pack_a<Bk>(a, i0 + as.full, mc - as.full, pc, kc, pa);
              } else {
                pack_a<Bk>(a, i0, mc, pc, kc, pa);
              }
              macro_kernel<Bk>(mc, nc, kc, as, src, c + i0 * ldc + jc, ldc, acc,
                               static_cast<BAhead<T>*>(nullptr),
                               along.dst != nullptr && rb == rb0 ? &along : nullptr,
                               out_at(last, i0, jc), ldo);
              if (last && ep != nullptr) apply_gemm_epilogue(*ep, c, ldc, i0, i0 + mc, jc, jc + nc);
            }
            const int64_t c0 = t * panels / threads * NR;
            const int64_t c1 = std::min(nc, (t + 1) * panels / threads * NR);
            if (extra == 0 || c0 >= c1) continue;
            pack_a<Bk>(a, e0, m - e0, pc, kc, pa);
            BSource<T> part;
            part.packed = pb + c0 * kc;
            macro_kernel<Bk>(m - e0, c1 - c0, kc, ASource<T>{pa}, part, c + e0 * ldc + jc + c0, ldc,
                             acc, static_cast<BAhead<T>*>(nullptr),
                             static_cast<const PanelsAlong<T>*>(nullptr), out_at(last, e0, jc + c0),
                             ldo);
            if (last && ep != nullptr) apply_gemm_epilogue(*ep, c, ldc, e0, m, jc + c0, jc + c1);
          }
      });
      continue;
    }
    for (int64_t pc = 0; pc < k; pc += kb) {
      const int64_t kc = std::min<int64_t>(kb, k - pc);
      const bool acc = accumulate || pc > 0, last = pc + kc >= k;
      BSource<T> src;
      if (direct_b) {
        // Only the last partial panel is packed.
        src.direct = static_cast<const T*>(b.data) + pc * b.rs + jc;
        src.ld = b.rs;
        src.full = nc / NR * NR;
        T* edge = static_cast<T*>(t_pack_b.get(static_cast<size_t>(NR * kc) * sizeof(T)));
        if (src.full < nc) pack_b<Bk>(b, pc, kc, jc + src.full, nc - src.full, edge);
        src.edge = edge;
      } else {
        T* pb = static_cast<T*>(t_pack_b.get(static_cast<size_t>(panels * NR * kc) * sizeof(T)));
        const int64_t grain = threads == 1 ? panels : std::max<int64_t>(1, 16384 / (NR * kc));
        parallel_for(panels, grain, [&](int64_t p0, int64_t p1) {
          pack_b<Bk>(b, pc, kc, jc + p0 * NR, std::min(nc, p1 * NR) - p0 * NR, pb + p0 * NR * kc);
        });
        src.packed = pb;
      }
      parallel_for(units, threads == 1 ? units : 1, [&](int64_t u0, int64_t u1) {
        T* pa = static_cast<T*>(t_pack_a.get(static_cast<size_t>(mc_max * kc) * sizeof(T)));
        for (int64_t u = u0; u < u1; ++u) {
          const int64_t rb = u % row_blocks, ch = u / row_blocks;
          const int64_t i0 = rb * row_panels / row_blocks * MR;
          const int64_t mc = std::min(m, (rb + 1) * row_panels / row_blocks * MR) - i0;
          if (mc <= 0) continue;
          const int64_t q0 = ch * panels / chunks, q1 = (ch + 1) * panels / chunks;
          if (q0 == q1) continue;
          const int64_t c0 = q0 * NR, c1 = std::min(nc, q1 * NR);
          BSource<T> part = src;
          if (direct_b) {
            part.direct += c0;
            part.full -= c0;
          } else {
            part.packed += c0 * kc;
          }
          pack_a<Bk>(a, i0, mc, pc, kc, pa);
          T* ct = c + i0 * ldc + jc + c0;
          macro_kernel<Bk>(
              mc, c1 - c0, kc, ASource<T>{pa}, part, ct, ldc, acc, static_cast<BAhead<T>*>(nullptr),
              static_cast<const PanelsAlong<T>*>(nullptr), out_at(last, i0, jc + c0), ldo);
          if (last && ep != nullptr)
            apply_gemm_epilogue(*ep, c, ldc, i0, i0 + mc, jc + c0, jc + c1);
        }
      });
    }
  }
}

// y[i·ys] (+)= sum_p mat[i·rs + p·cs]·x[p] for i < rows (x contiguous): a matrix-vector
// product, memory-bound, so no packing; threaded over rows.
template <class T>
void gemv(int64_t rows, int64_t k, const T* mat, int64_t rs, int64_t cs, const T* x, T* y,
          int64_t ys, bool accumulate) {
  using V = VecT<T>;
  constexpr int L = kLanes<V>;
  auto put = [&](int64_t i, T v) { y[i * ys] = accumulate ? y[i * ys] + v : v; };
  if (cs == 1) {  // rows are contiguous: dot products
    parallel_for(rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(k, 1)),
                 [&](int64_t r0, int64_t r1) {
                   for (int64_t i = r0; i < r1; ++i) {
                     const T* row = mat + i * rs;
                     V s0{}, s1{}, s2{}, s3{};
                     int64_t p = 0;
                     for (; p + 4 * L <= k; p += 4 * L) {
                       s0 += load<V>(row + p) * load<V>(x + p);
                       s1 += load<V>(row + p + L) * load<V>(x + p + L);
                       s2 += load<V>(row + p + 2 * L) * load<V>(x + p + 2 * L);
                       s3 += load<V>(row + p + 3 * L) * load<V>(x + p + 3 * L);
                     }
                     for (; p + L <= k; p += L) s0 += load<V>(row + p) * load<V>(x + p);
                     T s = reduce_add((s0 + s1) + (s2 + s3));
                     for (; p < k; ++p) s += row[p] * x[p];
                     put(i, s);
                   }
                 });
    return;
  }
  if (rs == 1) {  // columns are contiguous: accumulate scaled columns, 4 vectors of rows a time
    constexpr int W = 4 * L;
    const int64_t blocks = (rows + W - 1) / W;
    parallel_for(blocks, std::max<int64_t>(1, 32768 / (std::max<int64_t>(k, 1) * W)),
                 [&](int64_t b0, int64_t b1) {
                   for (int64_t blk = b0; blk < b1; ++blk) {
                     const int64_t i0 = blk * W;
                     if (i0 + W <= rows) {
                       V s[4] = {};
                       for (int64_t p = 0; p < k; ++p) {
                         const V xp = broadcast<V>(x[p]);
                         const T* col = mat + p * cs + i0;
#pragma GCC unroll 4
                         for (int q = 0; q < 4; ++q) s[q] += xp * load<V>(col + q * L);
                       }
                       alignas(64) T out[W];
                       for (int q = 0; q < 4; ++q) store(out + q * L, s[q]);
                       for (int j = 0; j < W; ++j) put(i0 + j, out[j]);
                     } else {
                       for (int64_t i = i0; i < rows; ++i) {
                         T s = 0;
                         for (int64_t p = 0; p < k; ++p) s += mat[i + p * cs] * x[p];
                         put(i, s);
                       }
                     }
                   }
                 });
    return;
  }
  parallel_for(rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(k, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t i = r0; i < r1; ++i) {
                   T s = 0;
                   for (int64_t p = 0; p < k; ++p) s += mat[i * rs + p * cs] * x[p];
                   put(i, s);
                 }
               });
}

template <class T>
void gemm_any(int64_t m, int64_t n, int64_t k, const GemmOperand& a, const GemmOperand& b, T* c,
              int64_t ldc, bool accumulate, const GemmEpilogue<T>* ep) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
  } else if (b.panels == nullptr &&
             ((m == 1 && b.dtype == kNative<T>) || (n == 1 && a.dtype == kNative<T>))) {
    // The vector operand is staged contiguous in the compute type; the matrix is read in place,
    // so it must be the native one (m == n == 1 with only A native is the n == 1 form).
    T* x = static_cast<T*>(t_vec.get(static_cast<size_t>(k) * sizeof(T)));
    if (m == 1 && b.dtype == kNative<T>) {
      to_t(a.data, a.dtype, a.cs, x, k);
      gemv(n, k, static_cast<const T*>(b.data), b.cs, b.rs, x, c, 1, accumulate);
    } else {
      to_t(b.data, b.dtype, b.rs, x, k);
      gemv(m, k, static_cast<const T*>(a.data), a.rs, a.cs, x, c, ldc, accumulate);
    }
  } else {
#if defined(TESSEL_CPU_ISA_AVX512)
    if constexpr (sizeof(T) == 4)
      if (a.dtype == DType::BF16 && b.dtype == DType::BF16 && b.panels == nullptr &&
          has_bf16_dot()) {
        // bf16 × bf16 as pairs along k, two products a lane per instruction: twice the f32
        // kernel's rate (a scratch 14×2 tile over L1-resident panels, one core: 435 GFLOP/s
        // against 217).
        PairOperand pa, pb;
        static_cast<GemmOperand&>(pa) = a;
        static_cast<GemmOperand&>(pb) = b;
        pa.k = pb.k = k;
        gemm_packed<PairBlocks>(m, n, (k + 1) / 2, pa, pb, c, ldc, accumulate, ep);
        return;
      }
    // The narrow tile where the main one's tiles waste >= 5% of C and it wastes less (M = 128
    // with N a multiple of 48 or large; not N = 64, which fills 2 of its 48-wide panels to
    // 67%). Elsewhere the main tile is ~3% faster per flop.
    using Main = MainBlocks<T>;
    using Narrow = NarrowBlocks<T>;
    auto fill = [m, n](int mr, int nr) {
      auto f = [](int64_t x, int r) {
        return static_cast<double>(x) / static_cast<double>((x + r - 1) / r * r);
      };
      return f(m, mr) * f(n, nr);
    };
    const double main_fill = fill(Main::MR, Main::NR);
    if (main_fill < 0.95 && fill(Narrow::MR, Narrow::NR) > main_fill + 0.04) {
      gemm_packed<Narrow>(m, n, k, a, b, c, ldc, accumulate, ep);
      return;
    }
#endif
    gemm_packed<MainBlocks<T>>(m, n, k, a, b, c, ldc, accumulate, ep);
    return;
  }
  if (ep != nullptr) apply_gemm_epilogue(*ep, c, ldc, 0, m, 0, n);
}

}  // namespace

template <class T>
void apply_gemm_epilogue(const GemmEpilogue<T>& ep, T* c, int64_t ldc, int64_t i0, int64_t i1,
                         int64_t j0, int64_t j1) {
  using V = VecT<T>;
  constexpr int L = kLanes<V>;
  for (int64_t i = i0; i < i1; ++i) {
    T* row = c + i * ldc;
    if (ep.row_bias != nullptr) {
      const T b = ep.row_bias[i];
      int64_t j = j0;
      for (; j + L <= j1; j += L) store(row + j, load<V>(row + j) + b);
      for (; j < j1; ++j) row[j] += b;
    }
    // By vectors: the element loops compiled to scalar adds (bias and row may alias, which
    // -O2's cost model will not check at run time): 3% of a 1024 × 512 × 2048 Linear.
    if (ep.bias != nullptr) {
      int64_t j = j0;
      for (; j + L <= j1; j += L) store(row + j, load<V>(row + j) + load<V>(ep.bias + j));
      for (; j < j1; ++j) row[j] += ep.bias[j];
    }
    if (ep.act != ActivationKind::Identity) {
      if constexpr (sizeof(T) == 4)
        activation_f32(ep.act, ep.alpha, row + j0, row + j0, j1 - j0);
      else
        activation_f64(ep.act, ep.alpha, row + j0, row + j0, j1 - j0);
    }
    if (ep.mul != nullptr) {
      const T* mr = ep.mul + i * ep.ld_mul;
      int64_t j = j0;
      for (; j + L <= j1; j += L) store(row + j, load<V>(row + j) * load<V>(mr + j));
      for (; j < j1; ++j) row[j] *= mr[j];
    }
  }
  if (ep.tile != nullptr) ep.tile(ep.tile_ctx, c, ldc, i0, i1, j0, j1);
}
template void apply_gemm_epilogue<float>(const GemmEpilogue<float>&, float*, int64_t, int64_t,
                                         int64_t, int64_t, int64_t);
template void apply_gemm_epilogue<double>(const GemmEpilogue<double>&, double*, int64_t, int64_t,
                                          int64_t, int64_t, int64_t);

void gemm_ex_f32(int64_t m, int64_t n, int64_t k, const GemmOperand& a, const GemmOperand& b,
                 float* c, int64_t ldc, bool accumulate, const GemmEpilogue<float>* epilogue) {
  gemm_any(m, n, k, a, b, c, ldc, accumulate, epilogue);
}
void gemm_ex_f64(int64_t m, int64_t n, int64_t k, const GemmOperand& a, const GemmOperand& b,
                 double* c, int64_t ldc, bool accumulate, const GemmEpilogue<double>* epilogue) {
  gemm_any(m, n, k, a, b, c, ldc, accumulate, epilogue);
}

void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs,
              const float* b, int64_t b_rs, int64_t b_cs, float beta, float* c, int64_t ldc) {
  gemm_any<float>(m, n, k, {a, DType::F32, a_rs, a_cs}, {b, DType::F32, b_rs, b_cs}, c, ldc,
                  beta != 0, nullptr);
}
void gemm_f64(int64_t m, int64_t n, int64_t k, const double* a, int64_t a_rs, int64_t a_cs,
              const double* b, int64_t b_rs, int64_t b_cs, double beta, double* c, int64_t ldc) {
  gemm_any<double>(m, n, k, {a, DType::F64, a_rs, a_cs}, {b, DType::F64, b_rs, b_cs}, c, ldc,
                   beta != 0, nullptr);
}
TESSEL_ISA_END
