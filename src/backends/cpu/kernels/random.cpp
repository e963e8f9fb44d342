// cpu kernels: random (in progress).
#include "backends/cpu/families.h"

TESSEL_ISA_BEGIN
void register_random(KernelRegistry&) {}
TESSEL_ISA_END
