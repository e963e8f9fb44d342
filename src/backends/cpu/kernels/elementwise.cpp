// cpu kernels: elementwise (in progress).
#include "backends/cpu/families.h"

TESSEL_ISA_BEGIN
void register_elementwise(KernelRegistry&) {}
TESSEL_ISA_END
