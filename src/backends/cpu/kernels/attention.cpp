// cpu kernels: attention (in progress).
#include "backends/cpu/families.h"

TESSEL_ISA_BEGIN
void register_attention(KernelRegistry&) {}
TESSEL_ISA_END
