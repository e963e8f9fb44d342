#include "runtime/host_backend.h"

namespace tessel {

HostBackend::HostBackend(std::string name, KernelRegistry registry, HostExecOptions options)
    : name_(std::move(name)), registry_(std::move(registry)), options_(options) {}

std::unique_ptr<Executable> HostBackend::compile(const Graph& g,
                                                 const CompileOptions& options) const {
  HostExecOptions o = options_;
  o.poison_and_guard = options.checked;
  return std::make_unique<HostExecutable>(g, registry_, name_, o);
}

}  // namespace tessel
