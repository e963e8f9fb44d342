// cpu kernels: losses (in progress).
#include "backends/cpu/families.h"

TESSEL_ISA_BEGIN
void register_losses(KernelRegistry&) {}
TESSEL_ISA_END
