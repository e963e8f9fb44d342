#include "backends/reference/kernels.h"
#include "ir/dtype_convert.h"
#include "runtime/host_backend.h"

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

}  // namespace reference

std::unique_ptr<Backend> make_reference_backend() {
  reference::Registry r;
#define TESSEL_CATEGORY(e, title) reference::register_##e(r);
#include "ir/ops.def"
  // Kernels may accumulate into their outputs.
  return std::make_unique<HostBackend>("reference", std::move(r),
                                       HostExecOptions{.zero_outputs = true});
}

}  // namespace tessel
