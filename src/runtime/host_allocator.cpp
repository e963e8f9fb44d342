#include "runtime/host_allocator.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <vector>

namespace tessel {
namespace {

constexpr size_t kAlign = 64;
// Cached blocks above this total are freed instead of kept.
constexpr size_t kMaxCached = size_t{4} << 30;

// Size classes: multiples of 64 B up to 4 KiB, then 4 steps per power of two (<= 25% waste).
size_t size_class(size_t bytes) {
  bytes = std::max<size_t>(bytes, kAlign);
  if (bytes <= 4096) return (bytes + kAlign - 1) / kAlign * kAlign;
  size_t p = std::bit_floor(bytes);
  size_t step = p / 4;
  return (bytes + step - 1) / step * step;
}

class Cache {
 public:
  ~Cache() { release(); }  // at exit; blocks still in use are freed by their owners

  uint8_t* get(size_t cls) {
    {
      std::lock_guard lock(mu_);
      auto it = free_.find(cls);
      if (it != free_.end() && !it->second.empty()) {
        uint8_t* p = it->second.back();
        it->second.pop_back();
        stats_.cached -= cls;
        note_use(cls);
        return p;
      }
    }
    void* p = allocate_host_bytes(cls);
    if (!p) {
      release();  // retry once with the cache emptied
      p = allocate_host_bytes(cls);
    }
    if (!p) throw_error(ErrorKind::OutOfMemory, "host allocation of ", cls, " bytes failed");
    std::lock_guard lock(mu_);
    note_use(cls);
    return static_cast<uint8_t*>(p);
  }

  void put(uint8_t* p, size_t cls) {
    std::lock_guard lock(mu_);
    stats_.in_use -= cls;
    if (stats_.cached + cls > kMaxCached) {
      free_host_bytes(p);
      return;
    }
    free_[cls].push_back(p);
    stats_.cached += cls;
  }

  void release() {
    std::lock_guard lock(mu_);
    for (auto& [cls, blocks] : free_)
      for (uint8_t* p : blocks) free_host_bytes(p);
    free_.clear();
    stats_.cached = 0;
  }

  HostMemoryStats stats() {
    std::lock_guard lock(mu_);
    return stats_;
  }
  void reset_peak() {
    std::lock_guard lock(mu_);
    stats_.peak_in_use = stats_.in_use;
  }

 private:
  void note_use(size_t cls) {
    stats_.in_use += cls;
    stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
  }

  std::mutex mu_;
  std::map<size_t, std::vector<uint8_t*>> free_;
  HostMemoryStats stats_;
};

// Leaked on purpose: storages may be destroyed after static destructors have run.
Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

}  // namespace

std::shared_ptr<Storage> host_allocate(size_t bytes) {
  check_host_allocation(bytes, "host allocation");
  size_t cls = size_class(bytes);
  uint8_t* p = cache().get(cls);
  auto s = std::make_shared<Storage>();
  s->bytes = std::shared_ptr<uint8_t[]>(p, [cls](uint8_t* q) { cache().put(q, cls); });
  s->size = bytes;
  return s;
}

HostTensor host_empty(DType dtype, const Shape& shape) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = contiguous_strides(shape);
  t.storage = host_allocate(static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype));
  return t;
}

HostMemoryStats host_memory_stats() { return cache().stats(); }
void host_memory_reset_peak() { cache().reset_peak(); }
void host_memory_release_cache() { cache().release(); }

}  // namespace tessel
