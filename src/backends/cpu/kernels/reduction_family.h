// The reduction family's parts in other files, registered from register_reduction.
#pragma once

#include "backends/cpu/families.h"

TESSEL_ISA_BEGIN
// Softmax, Cumsum, CumProd, CumMax, ArgMax, ArgMin (reduction_softmax_scan.cpp).
void register_softmax_scan(KernelRegistry& r);
// TopK, Sort, ArgSort, Sample (reduction_sort.cpp).
void register_orderings(KernelRegistry& r);
TESSEL_ISA_END
