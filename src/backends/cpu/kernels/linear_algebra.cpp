// cpu kernels: linear_algebra (in progress).
#include "backends/cpu/families.h"

TESSEL_ISA_BEGIN
void register_linear_algebra(KernelRegistry&) {}
TESSEL_ISA_END
