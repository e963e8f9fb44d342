// A host backend's kernels and claims, filled by its per-category registration functions: each
// native claim comes with the kernel that runs it, each decomposed claim with none (the kind's
// decomposition in src/ops/ rewrites it into kinds claimed natively).
#pragma once

#include <span>
#include <vector>

#include "ir/graph.h"
#include "runtime/backend.h"

namespace tessel {

// Outputs arrive allocated (contiguous, typed as the node says; contents unspecified unless the
// executor says otherwise); absent optional inputs are HostTensors without storage.
using HostKernel = void (*)(const Node& node, std::span<const HostTensor> in,
                            std::span<HostTensor> out);

class KernelRegistry {
 public:
  void native(OpKind kind, HostKernel fn, DTypeSet dtypes, std::vector<int> variants = {});
  void decomposed(OpKind kind, DTypeSet dtypes, std::vector<int> variants = {});
  HostKernel kernel(OpKind kind) const { return kernels_[static_cast<size_t>(kind)]; }

  ClaimTable claims;

 private:
  std::vector<HostKernel> kernels_ = std::vector<HostKernel>(kNumOpKinds, nullptr);
};

}  // namespace tessel
