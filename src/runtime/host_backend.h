// A backend whose kernels are its own KernelRegistry's, run by the shared host executor
// (HostExecutable): what every host backend (reference, cpu) is, so each only builds its
// registry.
#pragma once

#include <memory>
#include <string>

#include "runtime/host_executable.h"
#include "runtime/kernel_registry.h"

namespace tessel {

class HostBackend : public Backend {
 public:
  // `options` apply to every compiled graph, except poison_and_guard: CompileOptions::checked
  // sets that one per compile.
  HostBackend(std::string name, KernelRegistry registry, HostExecOptions options = {});
  const std::string& name() const override { return name_; }
  const ClaimTable& claims() const override { return registry_.claims; }
  // The executable refers to this backend's registry: it must not outlive the backend.
  std::unique_ptr<Executable> compile(const Graph& g, const CompileOptions& options) const override;

 private:
  std::string name_;
  KernelRegistry registry_;
  HostExecOptions options_;
};

}  // namespace tessel
