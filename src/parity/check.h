// Internals of the parity harness: input preparation (cast to the cell dtype, non-contiguous and
// stride-0 views) and the comparison of a backend's outputs with the reference's.
#pragma once

#include <optional>

#include "parity/parity.h"
#include "tessel/host_tensor.h"

namespace tessel::parity {

// `t` (f64 test data, or exact integers) converted to `dtype`: floats round to the dtype;
// integer dtypes take round(3·v) from f64 data (a spread of small integers) and integer data
// exactly; bool is v > 0; complex gets a made-up imaginary part. Absent stays absent.
HostTensor to_cell_dtype(const HostTensor& t, DType dtype);
// The same values stored with reversed axes and a leading pad (non-unit strides, non-zero offset).
HostTensor strided_view(const HostTensor& t);
// Row 0 of axis 0 repeated through a stride-0 view (nullopt when rank < 2 or dim 0 < 2).
std::optional<HostTensor> stride0_view(const HostTensor& t);

struct Tolerance {
  double rtol = 0, atol = 0, nmse = 0;  // atol is relative to the reference's max |value|
  bool exact() const { return rtol == 0 && atol == 0; }
};
// Per dtype; decomposed cells of low-precision dtypes round every intermediate, so they get a
// wider band (a factor of 4).
Tolerance tolerance(DType dtype, How how);

struct Comparison {
  std::optional<CaseFailure> failure;  // kind, output, index, got, want, max_abs, nmse filled
  double max_abs = 0, nmse = 0;
};
// Compares one output (same dtype and shape checked by the caller).
Comparison compare_output(const HostTensor& got, const HostTensor& want, const Tolerance& tol);

}  // namespace tessel::parity
