#include "runtime/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tessel/error.h"

namespace tessel {
namespace {

thread_local bool t_in_parallel = false;

int default_threads() {
  if (const char* env = std::getenv("TESSEL_NUM_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end == env || *end != '\0' || v < 1 || v > 1024)
      throw_error(ErrorKind::Value, "TESSEL_NUM_THREADS='", env,
                  "' is not a thread count in [1, 1024]");
    return static_cast<int>(v);
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// Spins for up to `limit` while `waiting()` holds; true if it stopped holding. Waiting on a
// condition variable costs a futex wake-up (tens of µs on a VM) per job, which a GEMM with a
// barrier per k-block, or a stream of ~100 µs ops, pays every time; a worker that has just
// finished a job spins a while first, as OpenMP runtimes do, then sleeps.
template <class Pred>
bool spin_while(Pred waiting, std::chrono::microseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  for (int i = 0; waiting(); ++i) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (i % 64 == 63 && std::chrono::steady_clock::now() >= end) return false;
  }
  return true;
}
constexpr std::chrono::microseconds kSpin{200};

// One parallel job: its chunk function, counters and first error. Workers hold it by shared
// pointer, so a worker that joins late (every chunk already handed out) draws from this job's
// exhausted counter — never from the next job's, whose indices it would otherwise run twice and
// whose completion count it would overshoot (a hang).
struct Job {
  const std::function<void(int64_t)>* fn;
  int64_t chunks;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};  // written under Pool::mu_ (the waits' predicate)
  std::exception_ptr error;      // under Pool::mu_
};

// Workers wait for a job generation, then take chunk indices from the job's atomic counter.
class Pool {
 public:
  explicit Pool(int threads) : threads_(threads) {
    for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int threads() const { return threads_; }

  void run(int64_t chunks, const std::function<void(int64_t)>& chunk_fn) {
    auto job = std::make_shared<Job>();
    job->fn = &chunk_fn;
    job->chunks = chunks;
    std::unique_lock lock(mu_);
    job_ = job;
    ++generation_;
    lock.unlock();
    wake_.notify_all();
    drain(*job);
    spin_while([&] { return job->done.load() != chunks; }, kSpin);
    lock.lock();
    finished_.wait(lock, [&] { return job->done.load() == chunks; });
    job_ = nullptr;  // a worker waking now finds no job (its fn is about to go out of scope)
    if (job->error) std::rethrow_exception(job->error);
  }

 private:
  void drain(Job& job) {
    t_in_parallel = true;
    int64_t ran = 0;
    std::exception_ptr err;
    for (int64_t c; (c = job.next.fetch_add(1)) < job.chunks;) {
      try {
        (*job.fn)(c);
      } catch (...) {
        if (!err) err = std::current_exception();
      }
      ++ran;
    }
    t_in_parallel = false;
    if (ran == 0) return;
    std::lock_guard lock(mu_);
    if (err && !job.error) job.error = err;
    if ((job.done += ran) == job.chunks) finished_.notify_all();
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      spin_while([&] { return generation_.load() == seen && !stop_.load(); }, kSpin);
      std::shared_ptr<Job> job;
      {
        std::unique_lock lock(mu_);
        wake_.wait(lock, [&] { return stop_ || (generation_ != seen && job_ != nullptr); });
        if (stop_) return;
        seen = generation_;
        job = job_;
      }
      drain(*job);
    }
  }

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, finished_;
  std::shared_ptr<Job> job_;  // the running job, or null; under mu_
  // Written under mu_; atomic for the spinning reads.
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
};

std::mutex g_pool_mu;  // serializes callers from different user threads
std::unique_ptr<Pool>& pool() {
  static std::unique_ptr<Pool> p = std::make_unique<Pool>(default_threads());
  return p;
}

}  // namespace

int num_threads() { return t_in_parallel ? 1 : pool()->threads(); }

void set_num_threads(int n) {
  if (n < 1) throw_error(ErrorKind::Value, "set_num_threads(", n, "): need at least 1");
  std::lock_guard lock(g_pool_mu);
  if (pool()->threads() != n) pool() = std::make_unique<Pool>(n);
}

void parallel_for(int64_t n, int64_t grain, const RangeFn& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int threads = num_threads();
  int64_t chunks = std::min<int64_t>(threads, (n + grain - 1) / grain);
  if (chunks <= 1) {
    fn(0, n);
    return;
  }
  // A few chunks per thread balance uneven work without much scheduling cost.
  chunks = std::min<int64_t>(n / grain, threads * 4);
  chunks = std::max<int64_t>(chunks, 2);
  int64_t per = n / chunks, extra = n % chunks;
  std::function<void(int64_t)> chunk_fn = [&](int64_t c) {
    int64_t begin = c * per + std::min(c, extra);
    fn(begin, begin + per + (c < extra ? 1 : 0));
  };
  std::lock_guard lock(g_pool_mu);
  pool()->run(chunks, chunk_fn);
}

}  // namespace tessel
