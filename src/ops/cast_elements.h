// Cast's definition element by element: what the reference computes, and what other backends
// run for the dtypes they do not stage (complex, storage-only), so the rules are written once.
#pragma once

#include <cstdint>

#include "tessel/host_tensor.h"

namespace tessel {

// |m| rounded to 53 bits with round-to-odd (sticky): a later round-to-nearest to any format of
// at most 51 bits then gives the correctly rounded value of the integer, with no double rounding.
double round_to_odd_f64(uint64_t m);

// y[i] = x[i] converted to y's dtype for every element (same shape; any strides). Complex to
// real drops the imaginary part (to bool: nonzero); integers wrap as two's complement; integers
// to floats round once; floats to integers truncate toward zero, then wrap. `saturate` applies
// to the fp8 / e8m0 targets as in ONNX Cast.
void cast_elements(const HostTensor& x, const HostTensor& y, bool saturate);

}  // namespace tessel
