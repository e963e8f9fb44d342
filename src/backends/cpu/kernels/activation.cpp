// Activations on contiguous arrays (activation.h). Scalar for now: each element through the one
// scalar definition in ops/scalar_math.h.
#include "backends/cpu/activation.h"

#include "ops/scalar_math.h"

TESSEL_ISA_BEGIN
void activation_f32(ActivationKind k, float alpha, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(tessel::activation_f64(k, x[i], alpha));
}
void activation_f64(ActivationKind k, double alpha, const double* x, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = tessel::activation_f64(k, x[i], alpha);
}
TESSEL_ISA_END
