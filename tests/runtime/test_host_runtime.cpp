// The host runtime under every host backend: thread pool, caching allocator, liveness memory
// plan, ISA selection.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "backends/cpu/isa.h"
#include "ir/builder.h"
#include "op_test_util.h"
#include "runtime/derived_constants.h"
#include "runtime/host_allocator.h"
#include "runtime/host_executable.h"
#include "runtime/thread_pool.h"

namespace tessel::testing {
namespace {

TEST(ThreadPool, EveryIndexRunsExactlyOnce) {
  for (int64_t n : {0, 1, 2, 7, 100, 1001, 100000})
    for (int64_t grain : {1, 3, 64, 1 << 20}) {
      std::vector<std::atomic<int>> hits(n);
      parallel_for(n, grain, [&](int64_t b, int64_t e) {
        ASSERT_LE(0, b);
        ASSERT_LE(b, e);
        ASSERT_LE(e, n);
        for (int64_t i = b; i < e; ++i) hits[i]++;
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << grain << " " << i;
    }
}

// A worker that joins a job late (every chunk already taken) must not take a chunk of the next
// job: with more threads than cores, workers are preempted between jobs all the time. Jobs of 2
// and 16 chunks alternate, so a late worker's stale counter (>= 2) is a valid index of the next
// job; each index must still run exactly once, and every job must end (a watchdog aborts a
// hang).
TEST(ThreadPool, LateWorkersNeverTakeTheNextJobsChunks) {
  int saved = num_threads();
  set_num_threads(4);
  std::atomic<bool> finished{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 1200 && !finished.load(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!finished.load()) {
      std::fprintf(stderr, "ThreadPool stress: a job never finished (hang)\n");
      std::abort();
    }
  });
  int64_t wrong = 0;
  for (int job = 0; job < 100000 && wrong == 0; ++job) {
    const int64_t n = job % 2 ? 16 : 2;
    std::array<std::atomic<int>, 16> hits{};
    parallel_for(n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
    for (int64_t i = 0; i < n; ++i) wrong += hits[i].load() != 1;
  }
  finished = true;
  watchdog.join();
  EXPECT_EQ(wrong, 0) << "an index ran twice or not at all";
  set_num_threads(saved);
}

TEST(ThreadPool, UsesSeveralThreadsAndNestedCallsRunInline) {
  int saved = num_threads();
  set_num_threads(4);
  std::mutex mu;
  std::vector<std::thread::id> ids;
  std::atomic<int64_t> inner{0};
  parallel_for(64, 1, [&](int64_t b, int64_t e) {
    {
      std::lock_guard lock(mu);
      if (std::find(ids.begin(), ids.end(), std::this_thread::get_id()) == ids.end())
        ids.push_back(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    parallel_for(10, 1, [&](int64_t ib, int64_t ie) { inner += ie - ib; });
  });
  EXPECT_GT(ids.size(), 1u);
  EXPECT_EQ(inner.load(), 10 * std::min<int64_t>(64, 16));  // 16 chunks for 4 threads
  set_num_threads(saved);
}

TEST(ThreadPool, ExceptionsReachTheCaller) {
  EXPECT_THROW(parallel_for(1000, 1,
                            [](int64_t b, int64_t) {
                              if (b > 0) throw_error(ErrorKind::Value, "chunk failed");
                            }),
               Error);
  // The pool still works afterwards.
  std::atomic<int64_t> sum{0};
  parallel_for(1000, 1, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 1000);
  EXPECT_THROW(set_num_threads(0), Error);
}

TEST(HostAllocator, ReusesFreedBlocksAndTracksPeak) {
  host_memory_reset_peak();
  size_t before = host_memory_stats().in_use;
  uint8_t* first;
  {
    auto s = host_allocate(1 << 20);
    first = s->bytes.get();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
    EXPECT_GE(host_memory_stats().in_use, before + (1 << 20));
  }
  EXPECT_EQ(host_memory_stats().in_use, before);
  auto again = host_allocate(1 << 20);
  EXPECT_EQ(again->bytes.get(), first) << "a freed block of the same class is reused";
  EXPECT_GE(host_memory_stats().peak_in_use, before + (1 << 20));
  HostTensor t = host_empty(DType::F32, {3, 5});
  EXPECT_EQ(t.numel(), 15);
  EXPECT_TRUE(t.is_contiguous());
}

// Tensors a user makes are cache-line aligned and zero-filled, like the runtime's own: the cpu
// kernels' 64-byte vector loads of them do not straddle lines.
TEST(HostAllocator, UserTensorsAreCacheLineAlignedAndZeroed) {
  for (int64_t n : {0, 1, 3, 17, 1000, 1 << 20}) {
    HostTensor t = HostTensor::empty(DType::F32, {n});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u) << n;
    for (int64_t i = 0; i < n; i += 97) EXPECT_EQ(t.get_f64(i), 0.0) << i;
  }
}

// Whether the mapping holding address p may be backed by transparent huge pages, as
// /proc/self/smaps reports it ("THPeligible: 1"); -1 where that cannot be read.
int thp_eligible(const void* p) {
  FILE* f = std::fopen("/proc/self/smaps", "r");
  if (f == nullptr) return -1;
  const auto a = reinterpret_cast<uintptr_t>(p);
  char line[512];
  bool inside = false;
  int found = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && std::strchr(line, '-') < line + 17) {
      inside = a >= lo && a < hi;
      continue;
    }
    int v = 0;
    if (inside && std::sscanf(line, "THPeligible: %d", &v) == 1) {
      found = v;
      break;
    }
  }
  std::fclose(f);
  return found;
}

// Blocks of 4 MiB and more, a user's tensors and the runtime's buffers alike, start on a 2 MiB
// boundary and are advised as huge-page backed (madvise), so that the OS, unless its
// transparent huge pages are off, backs them with 2 MiB pages.
TEST(HostAllocator, LargeBlocksAreHugePageAlignedAndAdvised) {
  HostTensor t = HostTensor::empty(DType::F32, {1 << 20});  // 4 MiB
  auto s = host_allocate(size_t{6} << 20);
  for (const void* p :
       {static_cast<const void*>(t.data()), static_cast<const void*>(s->bytes.get())})
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (size_t{2} << 20), 0u);
  EXPECT_EQ(t.get_f64((1 << 20) - 1), 0.0);
  FILE* mode = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  char buf[128] = {};
  if (mode != nullptr) {
    if (std::fgets(buf, sizeof buf, mode) == nullptr) buf[0] = 0;
    std::fclose(mode);
  }
  if (mode == nullptr || std::strstr(buf, "[never]") != nullptr || thp_eligible(t.data()) < 0)
    GTEST_SKIP() << "transparent huge pages are off or not reported here: nothing to advise";
  EXPECT_EQ(thp_eligible(t.data()), 1);
  EXPECT_EQ(thp_eligible(s->bytes.get()), 1);
}

TEST(HostAllocator, ImpossibleSizeIsOutOfMemory) {
  expect_error(ErrorKind::OutOfMemory, [] { host_allocate(size_t{1} << 60); });
}

// The limit caps every host allocation path (the caching allocator and plain Storage); 0
// restores the default (physical memory).
TEST(HostAllocator, AllocationLimitIsOutOfMemory) {
  set_host_allocation_limit(size_t{1} << 20);
  EXPECT_EQ(host_allocation_limit(), size_t{1} << 20);
  EXPECT_NO_THROW(host_allocate(size_t{1} << 20));
  expect_error(ErrorKind::OutOfMemory, [] { host_allocate((size_t{1} << 20) + 1); });
  expect_error(ErrorKind::OutOfMemory, [] { HostTensor::empty(DType::F32, {1 << 19}); });
  set_host_allocation_limit(0);
  EXPECT_GT(host_allocation_limit(), size_t{1} << 20);
  EXPECT_NO_THROW(HostTensor::empty(DType::F32, {1 << 19}));
}

// x -> a = exp(x) -> b = a * 2 -> c = b + 1 -> d = tanh(c): a and c can share bytes, b and d too.
Graph chain(int64_t n) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F32, {n});
  Value two = g.constant(f32({1}, {2}));
  Value one = g.constant(f32({1}, {1}));
  Value a = b.activation(ActivationKind::Exp, x);
  Value m = b.mul(a, two);
  Value c = b.add(m, one);
  Value d = b.activation(ActivationKind::Tanh, c);
  Value e = b.activation(ActivationKind::Neg, d);
  g.outputs = {e};
  return g;
}

TEST(MemoryPlan, BuffersWithDisjointLifetimesShareBytes) {
  Graph g = chain(1000);
  MemoryPlan plan = plan_memory(g);
  ASSERT_EQ(plan.buffers.size(), 4u);  // exp, mul, add, tanh (neg is the output)
  EXPECT_EQ(plan.naive_bytes, 4 * 4032u);
  EXPECT_EQ(plan.arena_bytes, 2 * 4032u);
  for (const auto& a : plan.buffers)
    for (const auto& b : plan.buffers) {
      if (&a == &b || a.last < b.first || b.last < a.first) continue;
      bool disjoint = a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset;
      EXPECT_TRUE(disjoint) << "live at the same time yet overlapping: %" << a.node << " %"
                            << b.node;
    }
}

TEST(MemoryPlan, PlannedRunsGiveTheSameResultsRepeatedly) {
  Graph g = chain(1000);
  HostTensor x = random_tensor(DType::F32, {1000}, 7);
  for (const char* be : {"reference", "cpu"}) {
    auto exe = compile_for(g, backend(be));
    HostTensor first = exe->run(std::vector<HostTensor>{x}).at(0);
    HostTensor second = exe->run(std::vector<HostTensor>{x}).at(0);
    expect_close(second, first, 0, 0, be);
    for (int64_t i = 0; i < 1000; i += 97)
      EXPECT_NEAR(first.get_f64(i), -std::tanh(std::exp(x.get_f64(i)) * 2 + 1), 1e-6) << be;
  }
}

// a = exp(x) is read last by the Reshape r, but r is a view of a's bytes read after b = -x is
// written: a's buffer must stay live through r's reads, or b takes its bytes.
TEST(MemoryPlan, AReshapeIsAViewThatKeepsItsInputsBytesLive) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F32, {6, 40});
  Value a = b.activation(ActivationKind::Exp, x);
  Value r = b.reshape(b.reshape(a, {240}), {40, 6});  // a view of a view
  Value nx = b.neg(b.reshape(x, {40, 6}));            // of an input: copied
  Value c = b.add(r, nx);
  Value out = b.reshape(b.activation(ActivationKind::Tanh, c), {240});  // an output: copied
  g.outputs = {out};
  const std::vector<bool> alias = reshape_aliases(g);
  EXPECT_FALSE(alias[out.node]);  // a graph output
  EXPECT_TRUE(alias[r.node]);
  EXPECT_TRUE(alias[g.node(r.node).inputs[0].node]);
  EXPECT_FALSE(alias[g.node(nx.node).inputs[0].node]);
  MemoryPlan plan = plan_memory(g);
  int last_of_a = -1;
  for (const auto& buf : plan.buffers) {
    EXPECT_FALSE(alias[buf.node]) << "a view has no buffer: %" << buf.node;
    if (buf.node == a.node) last_of_a = buf.last;
  }
  EXPECT_EQ(last_of_a, c.node);  // read through r
  HostTensor xs = random_tensor(DType::F32, {6, 40}, 3);
  for (const char* be : {"reference", "cpu"}) {
    auto exe = compile_for(g, backend(be));
    std::vector<HostTensor> y = exe->run(std::vector<HostTensor>{xs});
    ASSERT_EQ(y.at(0).shape, (Shape{240})) << be;
    for (int64_t i = 0; i < 240; ++i) {
      const double e = std::exp(xs.get_f64(i));
      EXPECT_NEAR(y[0].get_f64(i), std::tanh(e - xs.get_f64(i)), 1e-6) << be << " " << i;
    }
  }
}

// Derived data is kept only for constant inputs, made once per tag, inside a scope; scopes nest,
// and an inner one's end gives the outer one back.
TEST(DerivedConstants, KeptForConstantInputsOnlyAndScopesNest) {
  int made = 0;
  auto make = [&] { return std::make_shared<const int>(++made); };
  EXPECT_FALSE(constant_input(0));
  EXPECT_EQ(derived_from_constant<int>(0, 1, make), nullptr);  // no scope
  const std::vector<bool> outer_constant = {false, true}, inner_constant = {true};
  DerivedSlot outer_slot, inner_slot;
  {
    DerivedScope outer(outer_constant, outer_slot);
    EXPECT_FALSE(constant_input(0));
    EXPECT_TRUE(constant_input(1));
    EXPECT_FALSE(constant_input(2));
    EXPECT_EQ(derived_from_constant<int>(0, 1, make), nullptr);
    EXPECT_EQ(*derived_from_constant<int>(1, 1, make), 1);
    EXPECT_EQ(*derived_from_constant<int>(1, 1, make), 1);  // kept
    EXPECT_EQ(*derived_from_constant<int>(1, 2, make), 2);  // another tag
    {
      DerivedScope inner(inner_constant, inner_slot);
      EXPECT_TRUE(constant_input(0));
      EXPECT_FALSE(constant_input(1));
      EXPECT_EQ(*derived_from_constant<int>(0, 1, make), 3);  // the inner node's own slot
    }
    EXPECT_FALSE(constant_input(0));
    EXPECT_EQ(*derived_from_constant<int>(1, 1, make), 1);
  }
  EXPECT_FALSE(constant_input(1));
  EXPECT_EQ(made, 3);
  EXPECT_EQ(outer_slot.size(), 2u);
  EXPECT_EQ(inner_slot.size(), 1u);
}

TEST(CpuIsa, TheActiveIsaIsSupported) {
  EXPECT_TRUE(cpu::cpu_supports(cpu::Isa::Portable));
  EXPECT_TRUE(cpu::cpu_supports(cpu::active_isa()));
  std::cout << "[ isa      ] cpu kernels use " << cpu::isa_name(cpu::active_isa()) << "\n";
}

}  // namespace
}  // namespace tessel::testing
