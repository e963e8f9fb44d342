// The caching host allocator. Freed blocks go back to per-size free lists instead of the OS, so
// steady-state runs touch no fresh pages (on this VM a first touch costs far more than the
// arithmetic on it). Blocks come from allocate_host_bytes (64-byte aligned; from 4 MiB, on huge
// pages where the OS agrees) and are rounded up to a size class; contents of a reused block are
// whatever was there. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "tessel/host_tensor.h"

namespace tessel {

struct HostMemoryStats {
  size_t in_use = 0;       // bytes handed out and not yet returned
  size_t peak_in_use = 0;  // since the last reset_peak
  size_t cached = 0;       // bytes held in free lists
};

// Uninitialized storage of at least `bytes` bytes from the cache; OutOfMemory on failure.
std::shared_ptr<Storage> host_allocate(size_t bytes);
// A contiguous tensor on cached, uninitialized storage.
HostTensor host_empty(DType dtype, const Shape& shape);

HostMemoryStats host_memory_stats();
void host_memory_reset_peak();
// Returns every cached block to the OS.
void host_memory_release_cache();

}  // namespace tessel
