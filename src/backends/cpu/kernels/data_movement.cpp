// cpu kernels: data_movement (in progress).
#include "backends/cpu/families.h"

TESSEL_ISA_BEGIN
void register_data_movement(KernelRegistry&) {}
TESSEL_ISA_END
