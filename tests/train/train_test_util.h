// Shared pieces of the training tests: the MLP of tests/goldens/gen_optimizers.py (data and
// initial weights from optimizers.json), its loss and gradients through value_and_grad, and an
// f64 implementation of the same MLP written out by hand (the oracle for the rules PyTorch lacks).
#pragma once

#include <string>
#include <vector>

#include "op_test_util.h"
#include "tessel/tessel.h"

namespace tessel::testing {

// x [32, 8], y [32, 4], init = {W1 [8,16], b1 [16], W2 [16,4], b2 [4]}, all f32.
struct MlpData {
  HostTensor x, y;
  std::vector<HostTensor> init;
};
const MlpData& mlp_data();

// The golden case named `name` of optimizers.json.
const nlohmann::json& optimizer_case(const std::string& name);

// A Tensor of `t` converted to `dtype` on `device`.
Tensor on_device(const HostTensor& t, const std::string& device, DType dtype = DType::F32);

// loss(W1, b1, W2, b2, x, y) = mean((tanh(x·W1 + b1)·W2 + b2 − y)²) and its gradients with
// respect to the four parameters: outputs {loss, dW1, db1, dW2, db2}.
Function mlp_value_and_grad();

// The same in f64 by hand: returns the loss and fills `grads` (one per parameter).
double mlp_loss_and_grads_f64(const std::vector<std::vector<double>>& params,
                              std::vector<std::vector<double>>& grads);

}  // namespace tessel::testing
