// The scalar definition of each activation, float binary op and comparison: what the reference
// backend computes and what other backends' scalar paths (f64, tails) call, so each function's
// semantics (NaN handling, defaults, PyTorch's formulas) is written once.
#pragma once

#include <cmath>

#include "ir/op.h"

namespace tessel {

// Round half to even, independent of the FPU rounding mode.
double round_half_even(double x);
// PyTorch's definition of activation `k` at x; `alpha` is NaN for the kind's default.
double activation_f64(ActivationKind k, double x, double alpha);
// Python's / torch's float remainder: fmod, moved into the divisor's sign when they differ.
template <class T>
T floor_mod(T a, T b) {
  T r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
// Binary op `op` on floats (the bitwise ops are integer-only and rejected by the shape rule).
double binary_f64(BinaryOp op, double a, double b);

// Calls run(pred) with the predicate of `op` as a generic lambda (a, b) -> a OP b, so one
// instantiation per comparison works on scalars and on vectors alike.
template <class Run>
decltype(auto) dispatch_cmp(CmpOp op, Run&& run) {
  switch (op) {
    case CmpOp::Eq:
      return run([](auto a, auto b) { return a == b; });
    case CmpOp::Ne:
      return run([](auto a, auto b) { return a != b; });
    case CmpOp::Lt:
      return run([](auto a, auto b) { return a < b; });
    case CmpOp::Le:
      return run([](auto a, auto b) { return a <= b; });
    case CmpOp::Gt:
      return run([](auto a, auto b) { return a > b; });
    case CmpOp::Ge:
      break;
  }
  return run([](auto a, auto b) { return a >= b; });
}

// Comparison `op` of two values of one type (a NaN makes only Ne true).
template <class T>
bool compare_values(CmpOp op, T a, T b) {
  switch (op) {
    case CmpOp::Eq:
      return a == b;
    case CmpOp::Ne:
      return a != b;
    case CmpOp::Lt:
      return a < b;
    case CmpOp::Le:
      return a <= b;
    case CmpOp::Gt:
      return a > b;
    case CmpOp::Ge:
      return a >= b;
  }
  return false;
}

}  // namespace tessel
