// The scalar definition of each activation and float binary op, in f64: what the reference backend
// computes and what other backends' scalar paths (f64, tails) call, so each function's semantics
// (NaN handling, defaults, PyTorch's formulas) is written once.
#pragma once

#include "ir/op.h"

namespace tessel {

// Round half to even, independent of the FPU rounding mode.
double round_half_even(double x);
// PyTorch's definition of activation `k` at x; `alpha` is NaN for the kind's default.
double activation_f64(ActivationKind k, double x, double alpha);
// Binary op `op` on floats (the bitwise ops are integer-only and rejected by the shape rule).
double binary_f64(BinaryOp op, double a, double b);

}  // namespace tessel
