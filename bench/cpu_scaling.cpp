// Thread scaling of the cpu backend: GEMM, softmax and a fused elementwise chain, each compiled
// once and timed on 1 thread and on N threads (default 2), alternating, in this process. Prints a markdown
// table of median times and the speed-up; exits 1 if a speed-up is below --min (default 0, so
// the program never fails on a noisy machine unless asked to).
//
//   build/bench/cpu_scaling [--threads N] [--reps R] [--min X]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cpu/isa.h"
#include "ir/builder.h"
#include "passes/passes.h"
#include "runtime/rng.h"
#include "runtime/thread_pool.h"

using namespace tessel;

namespace {

HostTensor random_input(const Shape& shape, uint64_t seed) {
  HostTensor t = HostTensor::empty(DType::F32, shape);
  auto* p = reinterpret_cast<float*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(2 * rng::uniform(seed, i) - 1);
  return t;
}

struct Workload {
  std::string name;
  Graph graph;
  std::vector<HostTensor> args;
  double work;  // flops or bytes per run, for the rate column
  const char* unit;
};

Workload gemm(int64_t n) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F32, {n, n});
  Value w = g.input(DType::F32, {n, n});
  g.outputs = {b.matmul(x, w)};
  return {"MatMul f32 " + std::to_string(n) + "³", g,
          {random_input({n, n}, 1), random_input({n, n}, 2)}, 2.0 * n * n * n, "GFLOP/s"};
}

Workload softmax(int64_t rows, int64_t cols) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F32, {rows, cols});
  g.outputs = {b.softmax(x, -1)};
  return {"Softmax f32 [" + std::to_string(rows) + "," + std::to_string(cols) + "]", g,
          {random_input({rows, cols}, 3)}, 8.0 * rows * cols, "GB/s"};
}

// y = tanh(gelu(x·a + b) · c): four elementwise ops fused into one region on cpu.
Workload chain(int64_t n) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F32, {n});
  Value a = g.input(DType::F32, {n});
  Value c = g.input(DType::F32, {n});
  Value s = g.constant(HostTensor::from_vector<float>(DType::F32, {1}, {0.5f}));
  Value h = b.activation(ActivationKind::Gelu, b.add(b.mul(x, a), s));
  g.outputs = {b.activation(ActivationKind::Tanh, b.mul(h, c))};
  return {"Elementwise chain f32 (mul, add, gelu, mul, tanh) " + std::to_string(n), g,
          {random_input({n}, 4), random_input({n}, 5), random_input({n}, 6)}, 16.0 * n, "GB/s"};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Seconds of `runs` runs on `threads` threads, after one warm-up run.
double seconds(Executable& exe, const std::vector<HostTensor>& args, int threads, int runs) {
  set_num_threads(threads);
  exe.run(args);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) exe.run(args);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / runs;
}

struct Timing {
  double t1, tn, speedup;  // medians of the 1-thread and n-thread times and of their ratios
};

// The 1-thread and n-thread measurements alternate, so a slow spell of a shared (virtual)
// machine slows both alike; each repetition is a ratio of neighbouring measurements.
Timing measure(Executable& exe, const std::vector<HostTensor>& args, int threads, int reps) {
  const int runs = 3;
  std::vector<double> t1, tn, ratio;
  for (int i = 0; i < reps; ++i) {
    t1.push_back(seconds(exe, args, 1, runs));
    tn.push_back(seconds(exe, args, threads, runs));
    ratio.push_back(t1.back() / tn.back());
  }
  return {median(t1), median(tn), median(ratio)};
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, reps = 15;
  double min_speedup = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--threads") threads = std::atoi(argv[i + 1]);
    else if (a == "--reps") reps = std::atoi(argv[i + 1]);
    else if (a == "--min") min_speedup = std::atof(argv[i + 1]);
  }
  const Backend& cpu = backend("cpu");
  std::vector<Workload> work = {gemm(1024), softmax(4096, 1024), chain(1 << 22)};
  std::printf(
      "cpu kernels: %s; %d repetitions of (3 runs on 1 thread, 3 runs on %d), medians; the "
      "speed-up is the median of the repetitions' ratios\n\n",
      cpu::isa_name(cpu::active_isa()), reps, threads);
  std::printf("| workload | 1 thread | %d threads | speed-up | rate (1 / %d) |\n", threads, threads);
  std::printf("|---|---|---|---|---|\n");
  bool ok = true;
  for (Workload& w : work) {
    auto exe = compile_for(w.graph, cpu);
    const auto [t1, tn, speedup] = measure(*exe, w.args, threads, reps);
    ok = ok && speedup >= min_speedup;
    std::printf("| %s | %.3f ms | %.3f ms | %.2f× | %.1f / %.1f %s |\n", w.name.c_str(), t1 * 1e3,
                tn * 1e3, speedup, w.work / t1 / 1e9, w.work / tn / 1e9, w.unit);
  }
  return ok ? 0 : 1;
}
