#include "backends/reference/kernels.h"
#include "ir/dtype_convert.h"
#include "runtime/host_executable.h"

namespace tessel {
namespace reference {

double load_f64(const HostTensor& t, int64_t off) {
  return load_as_f64(t.element_ptr(off), t.dtype);
}
int64_t load_i64(const HostTensor& t, int64_t off) {
  return load_as_i64(t.element_ptr(off), t.dtype);
}
void store_f64(const HostTensor& t, int64_t off, double v) {
  store_from_f64(t.element_ptr(off), t.dtype, v);
}
void store_i64(const HostTensor& t, int64_t off, int64_t v) {
  store_from_i64(t.element_ptr(off), t.dtype, v);
}

namespace {

struct Tables {
  Registry registry;
  Tables() {
#define TESSEL_CATEGORY(e, title) register_##e(registry);
#include "ir/ops.def"
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

class ReferenceBackend : public Backend {
 public:
  const std::string& name() const override { return name_; }
  const ClaimTable& claims() const override { return tables().registry.claims; }
  std::unique_ptr<Executable> compile(const Graph& g,
                                      const CompileOptions& options) const override {
    return std::make_unique<HostExecutable>(
        g, tables().registry, name_,
        HostExecOptions{.zero_outputs = true, .poison_and_guard = options.checked});
  }

 private:
  std::string name_ = "reference";
};

}  // namespace
}  // namespace reference

std::unique_ptr<Backend> make_reference_backend() {
  return std::make_unique<reference::ReferenceBackend>();
}

}  // namespace tessel
