// cpu kernels: normalization (in progress).
#include "backends/cpu/families.h"

TESSEL_ISA_BEGIN
void register_normalization(KernelRegistry&) {}
TESSEL_ISA_END
