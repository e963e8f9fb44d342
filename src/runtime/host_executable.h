// Runs a legalized graph node by node on host kernels from a KernelRegistry. Shared by every
// host backend (reference, cpu). Intermediate buffers come from a liveness-based memory plan:
// buffers whose lifetimes do not overlap share bytes of one arena, taken from the caching
// allocator once per run; graph outputs get storage of their own. A Reshape of a kernel's output
// is a view of that output's bytes (reshape_aliases), which then stay live while it is read.
#pragma once

#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/derived_constants.h"
#include "runtime/kernel_registry.h"

namespace tessel {

struct HostExecOptions {
  // Zero every output before its kernel runs (kernels that accumulate into their output).
  bool zero_outputs = false;
  // Checked mode (the parity harness): every output gets storage of its own, filled with 0xFF
  // bytes (NaN for floats, -1 for integers) so unwritten elements show, between guard regions
  // that must be intact after the kernel or the run fails naming the node.
  bool poison_and_guard = false;
};

// Where each intermediate value lives in the arena.
struct MemoryPlan {
  struct Buffer {
    int node, index;    // the value
    size_t bytes;       // its size
    int first, last;    // node ids where it is written and last read
    size_t offset = 0;  // in the arena
  };
  std::vector<Buffer> buffers;
  size_t arena_bytes = 0;  // what the plan needs
  size_t naive_bytes = 0;  // sum of all buffers (no reuse)
};
MemoryPlan plan_memory(const Graph& g);
// The Reshapes that run as views of their input's bytes (no copy, no buffer of their own): those
// of a kernel's only output (contiguous) or of another such view, unless they are graph outputs
// (which get storage of their own, not a piece of the arena).
std::vector<bool> reshape_aliases(const Graph& g);

class HostExecutable : public Executable {
 public:
  HostExecutable(const Graph& g, const KernelRegistry& kernels, std::string backend_name,
                 HostExecOptions options);
  std::vector<HostTensor> run(std::span<const HostTensor> args) override;
  const MemoryPlan& memory_plan() const { return plan_; }
  // What node `id`'s kernel has derived from its constant inputs (derived_constants.h).
  const DerivedSlot& derived(int id) const { return derived_[static_cast<size_t>(id)]; }
  const Graph& graph() const { return g_; }

 private:
  Graph g_;
  const KernelRegistry& kernels_;
  std::string backend_name_;
  HostExecOptions options_;
  MemoryPlan plan_;
  std::vector<bool> alias_;  // reshape_aliases, none in checked mode
  std::vector<int> last_use_;
  std::vector<std::vector<int>> planned_;           // [node][output] -> buffer index or -1
  std::vector<std::vector<bool>> constant_inputs_;  // [node][input]: a Constant node's output
  std::vector<DerivedSlot> derived_;                // [node]
};

}  // namespace tessel
