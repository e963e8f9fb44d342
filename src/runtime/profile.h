// Profiling a compiled graph: per-op time (mean over runs) and memory (the liveness plan's
// arena against no reuse, and the allocator's peak while running). Backs `tessel profile`.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "passes/passes.h"

namespace tessel {

struct OpProfile {
  int node;
  OpKind kind;
  std::string what;  // "Activation(kind=Gelu) -> f32[8,128,1024]"
  double seconds;    // mean per run
};

struct ProfileReport {
  std::string backend;
  int runs = 0, threads = 0;
  double seconds_per_run = 0;  // wall time of a whole run, mean
  std::vector<OpProfile> ops;  // in execution order
  size_t peak_bytes = 0;       // allocator peak during the runs, above what was in use before
  size_t arena_bytes = 0, naive_bytes = 0;  // host backends' memory plan
  int nodes_before = 0, nodes_after = 0;    // graph size before and after the passes
};

// Compiles `g` for `backend` (the standard pipeline), runs it once to warm up, then `runs` times.
ProfileReport profile(const Graph& g, const Backend& backend, std::span<const HostTensor> args,
                      int runs);
std::string profile_text(const ProfileReport& r);  // a table, slowest kinds first
std::string profile_json(const ProfileReport& r);

}  // namespace tessel
