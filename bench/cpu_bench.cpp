// The cpu benchmark's native side (bench/cpu/run.sh drives it): the machine's measured f32 FMA
// peak and copy bandwidth, then every workload of bench/cpu/workloads.txt on Tessel's cpu
// backend and, for GEMM, on OpenBLAS (loaded with dlopen, so its environment is whatever this
// process was started with), alternating in this process with the same inputs and threads; for
// the memory-bound kinds, a streaming copy of the same bytes (impl "copy") alternates with
// Tessel, and for f32 GEMM the FMA peak loop for the same flops (impl "fma-peak").
// Prints one JSON object per line: {"workload", "impl", "ms", "threads"} for timings (the
// median over repetitions), {"machine": ...} records for the limits.
//
//   build/bench/cpu_bench [--threads N] [--reps R] [--filter SUBSTR] [--impl tessel|openblas]
//                         [--cold] [--openblas-impl NAME] [--cpu-time] [--constant-weights]
//                         bench/cpu/workloads.txt
// --cpu-time times with the process's CPU time instead of the wall clock: with --threads 1 on a
// busy machine it leaves out the time the thread was not scheduled (for tuning kernels; the
// reported results use the wall clock).
// --constant-weights makes the convolutions' weights and bias graph constants, as an imported
// model's are (what kernels derive from them, such as Winograd's transformed weights, is then made
// on the first run only); otherwise they are arguments, like the input.
#include <dlfcn.h>
#include <immintrin.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/isa.h"
#include "ir/builder.h"
#include "passes/passes.h"
#include "runtime/rng.h"
#include "runtime/thread_pool.h"

using namespace tessel;

namespace {

using Clock = std::chrono::steady_clock;
bool g_cpu_time = false;

// Milliseconds now, on the wall clock or (--cpu-time) the process's CPU clock.
double now_ms() {
  if (!g_cpu_time)
    return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Milliseconds per call of `fn`: one warm-up call, then calls until both `min_calls` and
// 50 ms are reached (at most 1000), and the median of per-call times.
// --cold: before each timed call, 64 MiB are written, so the call finds its operands in memory
// rather than in the 32 MiB L3 (as a layer of a model does; the hot repetitions of a workload
// that fits in L3 understate its memory traffic).
std::vector<char> g_evict;
void evict_caches() {
  static char v = 0;
  if (!g_evict.empty()) std::memset(g_evict.data(), ++v, g_evict.size());
}

double time_ms(const std::function<void()>& fn, int min_calls) {
  fn();
  std::vector<double> t;
  const double start = now_ms();
  double evicting = 0;
  while (static_cast<int>(t.size()) < 1000) {
    const double e0 = now_ms();
    evict_caches();
    evicting += now_ms() - e0;
    const double t0 = now_ms();
    fn();
    t.push_back(now_ms() - t0);
    if (static_cast<int>(t.size()) >= min_calls && now_ms() - start - evicting > 50) break;
  }
  return median(t);
}

// --- the machine's limits --------------------------------------------------------------------

// Independent chains of FMAs at the CPU's widest vector (4-cycle latency × 2 pipes needs 8;
// more hide any scheduling slack), `iters` rounds of them: 16 chains of 512-bit vectors where
// the CPU has AVX-512F (512 flops a round), else 12 of 256-bit ones (AVX2 has 16 registers; 192
// flops a round).
bool has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes;
}
__attribute__((target("avx512f"))) void fma_chains_512(int64_t iters) {
  constexpr int kChains = 16;
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it)
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 sum = acc[0];
  for (int i = 1; i < kChains; ++i) sum = _mm512_add_ps(sum, acc[i]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  volatile float sink = lanes[0];
  (void)sink;
}
__attribute__((target("avx2,fma"))) void fma_chains_256(int64_t iters) {
  constexpr int kChains = 12;
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it)
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  __m256 sum = acc[0];
  for (int i = 1; i < kChains; ++i) sum = _mm256_add_ps(sum, acc[i]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  volatile float sink = lanes[0];
  (void)sink;
}
double flops_per_fma_round() { return has_avx512() ? 2.0 * 16 * 16 : 2.0 * 12 * 8; }
void fma_chains(int64_t iters) {
  if (has_avx512())
    fma_chains_512(iters);
  else
    fma_chains_256(iters);
}

// GFLOP/s of one thread running fma_chains.
double fma_gflops_one_thread() {
  const int64_t iters = 20'000'000;
  const auto t0 = Clock::now();
  fma_chains(iters);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return flops_per_fma_round() * static_cast<double>(iters) / s / 1e9;
}

// `flops` of fma_chains split evenly between the pool's threads (as parallel_copy is, so the
// peak and the GEMM it is compared with run on the same threads).
void parallel_fma(double flops) {
  const int64_t parts = num_threads();
  const auto iters =
      static_cast<int64_t>(flops / flops_per_fma_round() / static_cast<double>(parts));
  parallel_for(parts, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) fma_chains(iters);
  });
}

// Best of `reps` runs of `threads` threads each running fn at once; returns the per-thread
// results summed for the best run.
double run_threads(int threads, int reps, const std::function<double()>& fn) {
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    std::vector<double> got(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { got[t] = fn(); });
    for (auto& th : pool) th.join();
    double total = 0;
    for (double g : got) total += g;
    best = std::max(best, total);
  }
  return best;
}

// dst = src over n bytes (both 64-byte aligned, n a multiple of 256) by the widest loads and
// non-temporal stores. 512-bit: reading 4 KiB ahead, ~50 GB/s on 2 threads on the AVX-512 host,
// where glibc's memcpy (rep movsb at these sizes) moves ~30.
__attribute__((target("avx512f"))) void stream_copy_512(char* dst, const char* src, size_t n) {
  for (size_t i = 0; i < n; i += 256) {
    __builtin_prefetch(src + i + 4096, 0, 1);
    const __m512 a = _mm512_load_ps(src + i), b = _mm512_load_ps(src + i + 64);
    const __m512 c = _mm512_load_ps(src + i + 128), d = _mm512_load_ps(src + i + 192);
    _mm512_stream_ps(reinterpret_cast<float*>(dst + i), a);
    _mm512_stream_ps(reinterpret_cast<float*>(dst + i + 64), b);
    _mm512_stream_ps(reinterpret_cast<float*>(dst + i + 128), c);
    _mm512_stream_ps(reinterpret_cast<float*>(dst + i + 192), d);
  }
  _mm_sfence();
}
// 256-bit vectors: a line a step (its two halves stored back to back), no requests ahead. On the
// Zen 3 host, two threads, in this harness (three alternating runs, the 128 MiB copy beside the
// elementwise chain): 5.6–6.9 ms, against 5.9–7.0 with two requests 8 KiB on a line (layer
// norm's loop) and 8.0–8.3 for two lines a step without requests (the fastest of these in a
// one-off program outside this harness: mixed).
__attribute__((target("avx2"))) void stream_copy_256(char* dst, const char* src, size_t n) {
  for (size_t i = 0; i < n; i += 64) {
    const __m256 a = _mm256_load_ps(reinterpret_cast<const float*>(src + i));
    const __m256 b = _mm256_load_ps(reinterpret_cast<const float*>(src + i + 32));
    _mm256_stream_ps(reinterpret_cast<float*>(dst + i), a);
    _mm256_stream_ps(reinterpret_cast<float*>(dst + i + 32), b);
  }
  _mm_sfence();
}
void stream_copy(char* dst, const char* src, size_t n) {
  if (has_avx512())
    stream_copy_512(dst, src, n);
  else
    stream_copy_256(dst, src, n);
}

// A byte buffer from the allocator of Tessel's tensors (allocate_host_bytes: 64-byte aligned,
// huge pages from 4 MiB), so that the copies and Tessel run on the same pages (on 4 KiB pages a
// copy moved ~0.8× as many bytes a second).
struct Bytes {
  explicit Bytes(size_t n, char fill)
      : p(static_cast<char*>(
            tessel::allocate_host_bytes((std::max<size_t>(n, 1) + 255) / 256 * 256))) {
    if (p == nullptr) std::abort();
    std::memset(p, fill, n);
  }
  ~Bytes() { tessel::free_host_bytes(p); }
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;
  char* p;
};

// stream_copy over whole 256-byte units, else memcpy.
void best_copy(char* dst, const char* src, size_t n) {
  if (n % 256 == 0 && __builtin_cpu_supports("avx2"))
    stream_copy(dst, src, n);
  else
    std::memcpy(dst, src, n);
}

// Copy bandwidth (bytes read + bytes written per second, as STREAM's Copy counts them) of
// `threads` threads each copying its share of a 512 MiB buffer, by memcpy and by stream_copy;
// the best pass of either.
double copy_gbs(int threads) {
  const size_t bytes = size_t{512} << 20;
  Bytes src(bytes, 1), dst(bytes, 0);
  double best = 0;
  for (int pass = 0; pass < 14; ++pass) {
    std::atomic<int> ready{0};
    std::vector<double> secs(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        // Shares in whole 256-byte lines (stream_copy's unit).
        const size_t lo = bytes / 256 * t / threads * 256,
                     hi = bytes / 256 * (t + 1) / threads * 256;
        ready.fetch_add(1);
        while (ready.load() < threads) {
        }
        const auto t0 = Clock::now();
        if (pass % 2 == 0)
          std::memcpy(dst.p + lo, src.p + lo, hi - lo);
        else
          best_copy(dst.p + lo, src.p + lo, hi - lo);
        secs[t] = std::chrono::duration<double>(Clock::now() - t0).count();
      });
    for (auto& th : pool) th.join();
    best = std::max(best, 2.0 * bytes / *std::max_element(secs.begin(), secs.end()) / 1e9);
  }
  return best;
}

// --- OpenBLAS through dlopen -----------------------------------------------------------------

struct OpenBlas {
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);
  using SetThreads = void (*)(int);
  using Config = char* (*)();
  Sgemm sgemm = nullptr;
  SetThreads set_threads = nullptr;
  Config config = nullptr;
  std::string core;

  bool load() {
    void* h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return false;
    sgemm = reinterpret_cast<Sgemm>(dlsym(h, "cblas_sgemm"));
    set_threads = reinterpret_cast<SetThreads>(dlsym(h, "openblas_set_num_threads"));
    config = reinterpret_cast<Config>(dlsym(h, "openblas_get_config"));
    auto corename = reinterpret_cast<Config>(dlsym(h, "openblas_get_corename"));
    if (corename != nullptr) core = corename();
    return sgemm != nullptr && set_threads != nullptr;
  }
};
constexpr int kRowMajor = 101, kNoTrans = 111;

// --- workloads -------------------------------------------------------------------------------

HostTensor random_input(DType dt, const Shape& shape, uint64_t seed) {
  HostTensor f = HostTensor::empty(DType::F32, shape);
  auto* p = reinterpret_cast<float*>(f.data());
  for (int64_t i = 0; i < f.numel(); ++i) p[i] = static_cast<float>(2 * rng::uniform(seed, i) - 1);
  if (dt == DType::F32) return f;
  HostTensor t = HostTensor::empty(dt, shape);
  for (int64_t i = 0; i < f.numel(); ++i) t.set_f64(i, p[i]);
  return t;
}

struct Workload {
  std::string id, kind;
  std::vector<int64_t> n;  // the numeric fields
  std::string dtype = "f32";
};

std::vector<Workload> read_workloads(const std::string& path) {
  std::ifstream f(path);
  if (!f) {
    std::fprintf(stderr, "cpu_bench: cannot read %s\n", path.c_str());
    std::exit(2);
  }
  std::vector<Workload> out;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream is(line);
    Workload w;
    is >> w.kind >> w.id;
    if (w.kind == "gemm") is >> w.dtype;
    for (int64_t v; is >> v;) w.n.push_back(v);
    const size_t want = w.kind == "gemm"                               ? 3
                        : w.kind == "conv" || w.kind == "convact"      ? 10
                        : w.kind == "softmax" || w.kind == "layernorm" ? 2
                        : w.kind == "eltwise"                          ? 1
                        : w.kind == "attention"                        ? 4
                                                                       : 0;
    if (want == 0 || w.n.size() != want || !is.eof()) {
      std::fprintf(stderr, "cpu_bench: malformed workload line: %s\n", line.c_str());
      std::exit(2);
    }
    out.push_back(w);
  }
  return out;
}

// Bytes a memory-bound workload moves, as a copy would move them: half read, half written
// (softmax and layer norm read x and write y; the elementwise chain reads three inputs and
// writes one). 0 for the compute-bound kinds.
int64_t copy_bytes(const Workload& w) {
  if (w.kind == "softmax" || w.kind == "layernorm") return 4 * w.n[0] * w.n[1];
  if (w.kind == "eltwise") return 2 * 4 * w.n[0];
  return 0;
}

// dst = src over `bytes` by best_copy, split between the pool's threads (Tessel's own
// workers, so the copy and the workload it is compared with run on the same threads).
void parallel_copy(char* dst, const char* src, int64_t bytes) {
  const int64_t parts = num_threads(), lines = bytes / 256;
  parallel_for(parts, 1, [&](int64_t b, int64_t e) {
    const int64_t lo = lines * b / parts * 256, hi = e == parts ? bytes : lines * e / parts * 256;
    best_copy(dst + lo, src + lo, static_cast<size_t>(hi - lo));
  });
}

// The workload as a graph on random inputs.
struct Built {
  Graph g;
  std::vector<HostTensor> args;
};

bool g_constant_weights = false;

Built build(const Workload& w) {
  Built b;
  Graph& g = b.g;
  GraphBuilder gb(g);
  auto input = [&](DType dt, const Shape& s) {
    b.args.push_back(random_input(dt, s, b.args.size() + 1));
    return g.input(dt, s);
  };
  const auto& n = w.n;
  if (w.kind == "gemm") {
    const DType dt = w.dtype == "bf16" ? DType::BF16 : DType::F32;
    Value x = input(dt, {n[0], n[1]}), y = input(dt, {n[1], n[2]});
    g.outputs = {gb.matmul(x, y)};
  } else if (w.kind == "conv" || w.kind == "convact") {
    const int64_t N = n[0], C = n[1], H = n[2], W = n[3], O = n[4], kh = n[5], kw = n[6], s = n[7],
                  p = n[8], groups = n[9];
    Value x = input(DType::F32, {N, C, H, W});
    uint64_t seed = 100;
    auto weights = [&](const Shape& shape) {
      return g_constant_weights ? g.constant(random_input(DType::F32, shape, seed++))
                                : input(DType::F32, shape);
    };
    Value wt = weights({O, C / groups, kh, kw});
    Value bias = weights({O});
    g.outputs = {gb.op1(OpKind::Conv,
                        Attrs()
                            .set("strides", std::vector<int64_t>{s, s})
                            .set("pads", std::vector<int64_t>{p, p, p, p})
                            .set("groups", groups),
                        {x, wt, bias})};
    // convact: followed by HardSwish, as in PaddleOCR det's backbone (fused into a ConvRegion).
    if (w.kind == "convact") g.outputs = {gb.activation(ActivationKind::HardSwish, g.outputs[0])};
  } else if (w.kind == "softmax") {
    g.outputs = {gb.softmax(input(DType::F32, {n[0], n[1]}), -1)};
  } else if (w.kind == "layernorm") {
    Value x = input(DType::F32, {n[0], n[1]});
    Value gamma = input(DType::F32, {n[1]}), beta = input(DType::F32, {n[1]});
    g.outputs = {gb.layer_norm(x, gamma, beta, -1, 1e-5)};
  } else if (w.kind == "eltwise") {
    Value x = input(DType::F32, {n[0]}), a = input(DType::F32, {n[0]}),
          c = input(DType::F32, {n[0]});
    Value h = gb.activation(ActivationKind::Gelu, gb.add(gb.mul(x, a), gb.scalar(0.5, DType::F32)));
    g.outputs = {gb.activation(ActivationKind::Tanh, gb.mul(h, c))};
  } else {  // attention
    const Shape s = {n[0], n[1], n[2], n[3]};
    Value q = input(DType::F32, s), k = input(DType::F32, s), v = input(DType::F32, s);
    g.outputs = {gb.op1(OpKind::Attention, Attrs(), {q, k, v})};
  }
  return b;
}

// The round of the workload list being run (--rounds), recorded with each time.
int g_round = 0;

void emit(const std::string& id, const std::string& impl, double ms, int threads,
          const std::string& note = "") {
  std::printf(
      "{\"workload\": \"%s\", \"impl\": \"%s\", \"ms\": %.4f, \"threads\": %d, \"round\": "
      "%d%s%s%s}\n",
      id.c_str(), impl.c_str(), ms, threads, g_round, note.empty() ? "" : ", \"note\": \"",
      note.c_str(), note.empty() ? "" : "\"");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, reps = 7, rounds = 1;
  std::string filter, only, path, openblas_name = "openblas";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "cpu_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--threads")
      threads = std::atoi(next().c_str());
    else if (a == "--cold")
      g_evict.resize(size_t{64} << 20);
    else if (a == "--reps")
      reps = std::atoi(next().c_str());
    else if (a == "--rounds")
      rounds = std::atoi(next().c_str());
    else if (a == "--filter")
      filter = next();
    else if (a == "--impl")
      only = next();
    else if (a == "--openblas-impl")
      openblas_name = next();
    else if (a == "--cpu-time")
      g_cpu_time = true;
    else if (a == "--constant-weights")
      g_constant_weights = true;
    else
      path = a;
  }
  if (path.empty() || threads < 1 || reps < 1 || rounds < 1) {
    std::fprintf(stderr,
                 "usage: cpu_bench [--threads N] [--reps R] [--rounds K] [--filter S] [--impl I] "
                 "[--openblas-impl NAME] [--cold] [--cpu-time] [--constant-weights] WORKLOADS\n");
    return 2;
  }
  const bool run_tessel = only.empty() || only == "tessel";
  const bool run_blas = only.empty() || only == "openblas";
  OpenBlas blas;
  if (run_blas && !blas.load()) {
    std::fprintf(stderr, "cpu_bench: libopenblas.so.0 not found (apt install libopenblas0)\n");
    return 2;
  }
  if (run_blas) blas.set_threads(threads);
  set_num_threads(threads);
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  if (run_blas)
    std::printf(
        "{\"machine\": \"%s\", \"openblas_config\": \"%s\", \"openblas_core\": \"%s\", "
        "\"OPENBLAS_CORETYPE\": \"%s\"}\n",
        openblas_name.c_str(), blas.config ? blas.config() : "?", blas.core.c_str(),
        coretype ? coretype : "");
  if (run_tessel && filter.empty()) {
    const double peak1 = run_threads(1, 5, fma_gflops_one_thread);
    const double peakn = run_threads(threads, 5, fma_gflops_one_thread);
    std::printf(
        "{\"machine\": \"fma_peak\", \"gflops_1\": %.1f, \"gflops_n\": %.1f, "
        "\"threads\": %d}\n",
        peak1, peakn, threads);
    std::printf(
        "{\"machine\": \"copy_bandwidth\", \"gbs_1\": %.1f, \"gbs_n\": %.1f, "
        "\"threads\": %d}\n",
        copy_gbs(1), copy_gbs(threads), threads);
    std::printf("{\"machine\": \"tessel_isa\", \"isa\": \"%s\"}\n",
                cpu::isa_name(cpu::active_isa()));
    std::fflush(stdout);
  }
  const Backend& cpu = backend("cpu");
  // The whole list runs `rounds` times: each workload's rounds then fall minutes apart, in
  // different spells of the shared machine, and the report takes their median.
  const std::vector<Workload> workloads = read_workloads(path);
  for (g_round = 0; g_round < rounds; ++g_round) {
    for (const Workload& w : workloads) {
      if (!filter.empty() && w.id.find(filter) == std::string::npos) continue;
      const bool blas_peer = run_blas && w.kind == "gemm" && w.dtype == "f32";
      if (!run_tessel && !blas_peer) continue;
      Built b = build(w);
      std::unique_ptr<Executable> exe;
      if (run_tessel) exe = compile_for(b.g, cpu);
      std::vector<float> c;
      if (blas_peer) c.resize(static_cast<size_t>(w.n[0] * w.n[2]));
      // Repetitions alternate between the implementations, so a slow spell of the shared machine
      // hits both alike; each reports the median of its repetitions. Both thread pools spin a
      // while after a call before they sleep (OpenBLAS's for up to 2^28 cycles): a pause at each
      // switch keeps one's spinning workers from taking the other's cores.
      auto settle = [&] {
        if (run_tessel && blas_peer) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      };
      // Memory-bound workloads: a streaming copy of the same bytes alternates with Tessel's
      // repetitions, so that "% of copy" compares medians taken in the same spells of the shared
      // machine.
      const int64_t cb = run_tessel ? copy_bytes(w) : 0;
      Bytes csrc(static_cast<size_t>(cb), 1), cdst(static_cast<size_t>(cb), 0);
      // f32 GEMMs: the FMA peak for the same flops alternates likewise ("% of the same spells'
      // peak"), beside the best-of-run peak measured once above.
      const double peak_flops =
          run_tessel && w.kind == "gemm" && w.dtype == "f32" ? 2.0 * w.n[0] * w.n[1] * w.n[2] : 0;
      std::vector<double> tt, tb, tc, tp;
      for (int r = 0; r < reps; ++r) {
        settle();
        if (run_tessel) tt.push_back(time_ms([&] { exe->run(b.args); }, 3));
        if (cb > 0) tc.push_back(time_ms([&] { parallel_copy(cdst.p, csrc.p, cb); }, 3));
        if (peak_flops > 0) tp.push_back(time_ms([&] { parallel_fma(peak_flops); }, 3));
        settle();
        if (blas_peer) {
          const int M = static_cast<int>(w.n[0]), K = static_cast<int>(w.n[1]),
                    N = static_cast<int>(w.n[2]);
          const auto* x = reinterpret_cast<const float*>(b.args[0].data());
          const auto* y = reinterpret_cast<const float*>(b.args[1].data());
          tb.push_back(time_ms(
              [&] {
                blas.sgemm(kRowMajor, kNoTrans, kNoTrans, M, N, K, 1.0f, x, K, y, N, 0.0f, c.data(),
                           N);
              },
              3));
        }
      }
      if (run_tessel) emit(w.id, "tessel", median(tt), threads);
      if (cb > 0)
        emit(w.id, "copy", median(tc), threads, "a streaming copy of the same bytes, alternating");
      if (peak_flops > 0)
        emit(w.id, "fma-peak", median(tp), threads, "the FMA peak for the same flops, alternating");
      if (blas_peer) emit(w.id, openblas_name, median(tb), threads);
    }
  }
  return 0;
}
