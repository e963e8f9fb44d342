// Helpers for op tests: run one op (or a small graph) on a backend through the real pipeline
// (legalize, compile, run), and compare results.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "passes/passes.h"
#include "runtime/backend.h"

namespace tessel::testing {

// Runs `kind` with `attrs` on `inputs` (absent optional inputs: a default HostTensor{}).
std::vector<HostTensor> run_op(OpKind kind, const Attrs& attrs,
                               const std::vector<HostTensor>& inputs,
                               const std::string& backend_name = "reference");
HostTensor run_op1(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& inputs,
                   const std::string& backend_name = "reference");

inline HostTensor f32(const Shape& shape, const std::vector<double>& v) {
  return HostTensor::from_vector(DType::F32, shape, v);
}
inline HostTensor f64(const Shape& shape, const std::vector<double>& v) {
  return HostTensor::from_vector(DType::F64, shape, v);
}
inline HostTensor i64(const Shape& shape, const std::vector<int64_t>& v) {
  return HostTensor::from_vector(DType::I64, shape, v);
}
// Deterministic pseudo-random values in [lo, hi) (not the op RNG; just test data).
HostTensor random_tensor(DType dtype, const Shape& shape, uint64_t seed, double lo = -1,
                         double hi = 1);
// A non-contiguous view with the same values as `t`: stored transposed, viewed back.
HostTensor non_contiguous(const HostTensor& t);

// Expects same shape and |a - b| <= atol + rtol·|b| elementwise (NaNs must match).
void expect_close(const HostTensor& actual, const HostTensor& expected, double rtol = 1e-6,
                  double atol = 1e-6, const std::string& what = "");
void expect_close(const HostTensor& actual, const std::vector<double>& expected, double rtol = 1e-6,
                  double atol = 1e-6, const std::string& what = "");

}  // namespace tessel::testing

#include <nlohmann/json.hpp>

namespace tessel::testing {

// Goldens written by tests/goldens/gen_<family>.py (PyTorch 1.13, float64) into
// tests/goldens/<family>.json. A tensor is {"dtype": "f32", "shape": [...], "data": [...]}
// (data row-major; NaN/Inf as the strings "nan", "inf", "-inf").
nlohmann::json load_goldens(const std::string& family);
HostTensor tensor_from_json(const nlohmann::json& j);

}  // namespace tessel::testing
