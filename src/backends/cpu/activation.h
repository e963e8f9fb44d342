// Activations on contiguous f32 / f64 arrays: the elementwise Activation kernel's core, also the
// epilogue of the fused kinds (FusedMatMulBiasAct, GatedActivation, FusedSwiGLU, ...). `alpha`
// is NaN for the kind's default. y may equal x.
#pragma once

#include "ir/op.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN
void activation_f32(ActivationKind k, float alpha, const float* x, float* y, int64_t n);
void activation_f64(ActivationKind k, double alpha, const double* x, double* y, int64_t n);
TESSEL_ISA_END
