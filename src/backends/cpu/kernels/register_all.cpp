#include "backends/cpu/families.h"

TESSEL_ISA_BEGIN
void register_all(KernelRegistry& r) {
#define TESSEL_CPU_REGISTER(family) register_##family(r);
  TESSEL_CPU_FAMILIES(TESSEL_CPU_REGISTER)
#undef TESSEL_CPU_REGISTER
}
TESSEL_ISA_END
