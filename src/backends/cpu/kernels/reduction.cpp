// cpu kernels: reduction (in progress).
#include "backends/cpu/families.h"

TESSEL_ISA_BEGIN
void register_reduction(KernelRegistry&) {}
TESSEL_ISA_END
