// One or more small, valid sample invocations per (ready kind, variant): the seed of the parity
// harness. Float inputs are marked castable and are converted to the dtype of the claim cell
// under test; index, mask and label inputs keep their dtype.
#pragma once

#include <string>
#include <vector>

#include "ir/attrs.h"
#include "tessel/host_tensor.h"

namespace tessel::testing {

struct Sample {
  std::string name;
  Attrs attrs;
  std::vector<HostTensor> inputs;  // f64 for castable inputs; absent optional = HostTensor{}
  std::vector<bool> castable;
  // For kinds without inputs (sources, RNG): the attribute that carries the output dtype.
  std::string dtype_attr;
};

// Samples for a kind and one value of its variant enum (0 when it has none); empty when the
// kind has no samples yet (the caller reports that as a failure for a claimed cell).
std::vector<Sample> samples_for(OpKind kind, int variant);

}  // namespace tessel::testing
