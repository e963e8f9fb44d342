// The cpu backend's kernel families: one file each in kernels/, compiled once per ISA. Each
// registers its kernels (native claims) and the kinds it runs by decomposition.
#pragma once

#include "runtime/kernel_registry.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

#define TESSEL_CPU_FAMILIES(X) \
  X(elementwise)               \
  X(reduction)                 \
  X(linear_algebra)            \
  X(conv_pool)                 \
  X(normalization)             \
  X(attention)                 \
  X(data_movement)             \
  X(random)                    \
  X(losses)                    \
  X(backward)                  \
  X(fusion_regions)

TESSEL_ISA_BEGIN
#define TESSEL_CPU_DECLARE(family) void register_##family(KernelRegistry& r);
TESSEL_CPU_FAMILIES(TESSEL_CPU_DECLARE)
#undef TESSEL_CPU_DECLARE
// Every family of this ISA.
void register_all(KernelRegistry& r);
TESSEL_ISA_END
