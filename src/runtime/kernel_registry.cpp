#include "runtime/kernel_registry.h"

namespace tessel {

void KernelRegistry::native(OpKind kind, HostKernel fn, DTypeSet dtypes,
                            std::vector<int> variants) {
  HostKernel& slot = kernels_[static_cast<size_t>(kind)];
  TESSEL_ASSERT(slot == nullptr || slot == fn, "two kernels for ", op_name(kind));
  slot = fn;
  claims.add({kind, dtypes, How::Native, std::move(variants)});
}

void KernelRegistry::decomposed(OpKind kind, DTypeSet dtypes, std::vector<int> variants) {
  claims.add({kind, dtypes, How::Decomposed, std::move(variants)});
}

}  // namespace tessel
