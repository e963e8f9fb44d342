// How much arithmetic a memory stream hides on this machine: y = f(x) over 64 MiB (x read, y
// written past the cache, as softmax and layer norm on 4096 × 4096 do), with K multiply-adds per
// 16-lane vector in four independent chains, timed alternately with K = 0 (a streaming copy) on
// the same threads. Three shapes of loop: one pass (load, K FMAs, streaming store, the source
// requested 8 KB ahead); two passes per 16 KB row (a sum pass, then the first pass's work less
// the row's mean); and the two passes pipelined as the softmax and layer-norm kernels run them
// (each row's sum pass writes the row before), also with a per-column scale and shift read along
// (layer norm's gamma and beta), with a scale and shift of a quarter row (the same arithmetic,
// 24 KB less to keep in L1), and with the rows written in alternating directions. Prints a
// markdown table of median times and the copy's time over the kernel's.
//
//   build/bench/cpu_overlap [--threads N] [--reps R]
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/thread_pool.h"

using namespace tessel;

namespace {

constexpr int64_t kElems = int64_t{16} << 20;  // 64 MiB of f32 each way
constexpr int64_t kRow = 4096;                 // the two-pass shape's row (16 KB)

template <int K>
__attribute__((target("avx512f"))) inline __m512 work(__m512 v) {
  const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
  if constexpr (K == 0) {
    return v;
  } else {
    __m512 c0 = v, c1 = _mm512_add_ps(v, b), c2 = _mm512_mul_ps(v, a), c3 = _mm512_sub_ps(v, b);
    for (int k = 0; k < K / 4 - 1; ++k) {
      c0 = _mm512_fmadd_ps(c0, a, b);
      c1 = _mm512_fmadd_ps(c1, a, b);
      c2 = _mm512_fmadd_ps(c2, a, b);
      c3 = _mm512_fmadd_ps(c3, a, b);
    }
    return _mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3));
  }
}

// Elements [b, e) (whole rows) of one pass.
template <int K>
__attribute__((target("avx512f"))) void one_pass(const float* x, float* y, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; i += 16) {
    _mm_prefetch(reinterpret_cast<const char*>(x + i + 2048), _MM_HINT_T1);
    _mm512_stream_ps(y + i, work<K>(_mm512_load_ps(x + i)));
  }
}

// Rows [b, e) / kRow of the two-pass shape.
template <int K>
__attribute__((target("avx512f"))) void two_pass(const float* x, float* y, int64_t b, int64_t e) {
  for (int64_t r = b; r < e; r += kRow) {
    __m512 s0 = _mm512_setzero_ps(), s1 = s0;
    for (int64_t i = r; i < r + kRow; i += 32) {
      _mm_prefetch(reinterpret_cast<const char*>(x + i + kRow), _MM_HINT_T1);
      _mm_prefetch(reinterpret_cast<const char*>(x + i + kRow + 16), _MM_HINT_T1);
      s0 = _mm512_add_ps(s0, _mm512_load_ps(x + i));
      s1 = _mm512_add_ps(s1, _mm512_load_ps(x + i + 16));
    }
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, _mm512_add_ps(s0, s1));
    float sum = 0;
    for (float v : lanes) sum += v;
    const __m512 m = _mm512_set1_ps(sum / kRow);
    for (int64_t i = r; i < r + kRow; i += 16)
      _mm512_stream_ps(y + i, work<K>(_mm512_sub_ps(_mm512_load_ps(x + i), m)));
  }
}

// Rows [b, e) / kRow of the two-pass shape pipelined as the softmax and layer-norm kernels are:
// row r's sum pass also writes row r - 1 (read again from L1 / L2), so that reads and writes
// share the whole loop; the last row is written at the end.
alignas(64) float g_scale[kRow], g_shift[kRow];

// y[p + i, +16) of the pending row p, whose mean is m; kAffine 1: times g[i] plus b[i], 2: the
// same with g and b of 1024 columns only (reused four times a row), 3: as 1, the pending rows
// written in alternating directions (as layer norm's are).
template <int K, int kAffine>
__attribute__((target("avx512f"))) inline void out(const float* x, float* y, __m512 m, int64_t p,
                                                   int64_t i) {
  __m512 v = work<K>(_mm512_sub_ps(_mm512_load_ps(x + p + i), m));
  const int64_t j = kAffine == 2 ? i % 1024 : i;
  if (kAffine) v = _mm512_fmadd_ps(v, _mm512_load_ps(g_scale + j), _mm512_load_ps(g_shift + j));
  _mm512_stream_ps(y + p + i, v);
}

template <int K, int kAffine = 0>
__attribute__((target("avx512f"))) void pipelined(const float* x, float* y, int64_t b, int64_t e) {
  __m512 prev_m = _mm512_setzero_ps();
  for (int64_t r = b; r <= e; r += kRow) {
    const int64_t p = r - kRow;  // the pending row
    if (r == e) {
      for (int64_t i = 0; i < kRow; i += 16) out<K, kAffine>(x, y, prev_m, p, i);
      break;
    }
    __m512 s0 = _mm512_setzero_ps(), s1 = s0;
    for (int64_t i = 0; i < kRow; i += 32) {
      _mm_prefetch(reinterpret_cast<const char*>(x + r + i + kRow), _MM_HINT_T1);
      _mm_prefetch(reinterpret_cast<const char*>(x + r + i + kRow + 16), _MM_HINT_T1);
      s0 = _mm512_add_ps(s0, _mm512_load_ps(x + r + i));
      s1 = _mm512_add_ps(s1, _mm512_load_ps(x + r + i + 16));
      if (r > b) {
        const int64_t q = kAffine == 3 && (r / kRow) % 2 ? kRow - 32 - i : i;
        out<K, kAffine>(x, y, prev_m, p, q);
        out<K, kAffine>(x, y, prev_m, p, q + 16);
      }
    }
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, _mm512_add_ps(s0, s1));
    float sum = 0;
    for (float v : lanes) sum += v;
    prev_m = _mm512_set1_ps(sum / kRow);
  }
}

using Kernel = void (*)(const float*, float*, int64_t, int64_t);

double time_ms(Kernel f, const float* x, float* y) {
  const auto t0 = std::chrono::steady_clock::now();
  parallel_for(kElems / kRow, 1, [&](int64_t r0, int64_t r1) { f(x, y, r0 * kRow, r1 * kRow); });
  _mm_sfence();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, reps = 21;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--threads") {
      threads = std::atoi(argv[i + 1]);
    } else if (a == "--reps") {
      reps = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "cpu_overlap: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (threads < 1 || reps < 1) {
    std::fprintf(stderr, "cpu_overlap: --threads and --reps must be positive\n");
    return 2;
  }
  if (!__builtin_cpu_supports("avx512f")) {
    std::printf("cpu_overlap: skipped, this CPU has no AVX-512 (the probe's kernels use it)\n");
    return 0;
  }
  set_num_threads(threads);
  const size_t bytes = kElems * sizeof(float);
  std::unique_ptr<float, decltype(&std::free)> x(static_cast<float*>(std::aligned_alloc(64, bytes)),
                                                 &std::free),
      y(static_cast<float*>(std::aligned_alloc(64, bytes)), &std::free);
  if (!x || !y) {
    std::fprintf(stderr, "cpu_overlap: out of memory (2 × 64 MiB)\n");
    return 1;
  }
  std::memset(x.get(), 0, bytes);
  std::memset(y.get(), 0, bytes);
  struct Case {
    const char* shape;
    int k;
    Kernel f;
  };
  const Case cases[] = {
      {"one pass", 4, one_pass<4>},  {"one pass", 8, one_pass<8>},   {"one pass", 12, one_pass<12>},
      {"one pass", 16, one_pass<16>}, {"one pass", 24, one_pass<24>}, {"two passes", 0, two_pass<0>},
      {"two passes", 8, two_pass<8>}, {"two passes", 16, two_pass<16>},
      {"two passes, pipelined", 0, pipelined<0>}, {"two passes, pipelined", 8, pipelined<8>},
      {"two passes, pipelined", 16, pipelined<16>},
      {"two passes, pipelined, · g + b", 0, pipelined<0, 1>},
      {"two passes, pipelined, · g + b", 8, pipelined<8, 1>},
      {"two passes, pipelined, · g + b of 1024 columns", 0, pipelined<0, 2>},
      {"two passes, pipelined, · g + b of 1024 columns", 8, pipelined<8, 2>},
      {"two passes, pipelined, · g + b, alternating", 0, pipelined<0, 3>},
      {"two passes, pipelined, · g + b, alternating", 8, pipelined<8, 3>},
  };
  std::printf("| loop | FMAs a vector | kernel ms | copy ms | copy / kernel |\n|---|---|---|---|---|\n");
  for (const Case& c : cases) {
    std::vector<double> kt, ct, ratio;
    for (int r = 0; r < reps; ++r) {
      const double copy = time_ms(one_pass<0>, x.get(), y.get());
      const double kern = time_ms(c.f, x.get(), y.get());
      ct.push_back(copy);
      kt.push_back(kern);
      ratio.push_back(copy / kern);
    }
    std::printf("| %s | %d | %.3f | %.3f | %.2f |\n", c.shape, c.k, median(kt), median(ct),
                median(ratio));
  }
  return 0;
}
