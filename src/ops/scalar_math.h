// The scalar definition of each activation, in f64: what the reference backend computes and what
// other backends' scalar paths (f64, tails) call, so each function's semantics (NaN handling,
// defaults, PyTorch's formulas) is written once.
#pragma once

#include "ir/op.h"

namespace tessel {

// Round half to even, independent of the FPU rounding mode.
double round_half_even(double x);
// PyTorch's definition of activation `k` at x; `alpha` is NaN for the kind's default.
double activation_f64(ActivationKind k, double x, double alpha);

}  // namespace tessel
