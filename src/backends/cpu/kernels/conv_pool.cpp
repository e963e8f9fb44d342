// cpu kernels: conv_pool (in progress).
#include "backends/cpu/families.h"

TESSEL_ISA_BEGIN
void register_conv_pool(KernelRegistry&) {}
TESSEL_ISA_END
