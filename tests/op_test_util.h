// Helpers for op tests: run one op (or a small graph) on a backend through the real pipeline
// (legalize, compile, run), and compare results.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
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
// A non-contiguous view with the same values as `t`: stored transposed, viewed back. An absent
// tensor (no storage) stays absent.
HostTensor non_contiguous(const HostTensor& t);
// A stride-0 view of `t` broadcast (numpy rules) to `shape`.
HostTensor broadcast_view(const HostTensor& t, const Shape& shape);
// A contiguous copy of `t` converted to `dtype` element by element: exactly (as int64) into an
// integer dtype, through f64 into any other. An absent tensor (no storage) stays absent.
HostTensor cast_to(const HostTensor& t, DType dtype);

// The output types the shape rule gives a `kind` node on inputs of these types (nullopt: an
// absent optional input); throws what adding the node throws.
std::vector<TensorType> infer_types(OpKind kind, const Attrs& attrs,
                                    const std::vector<std::optional<TensorType>>& inputs);
// The first of them.
TensorType infer_type(OpKind kind, const Attrs& attrs,
                      const std::vector<std::optional<TensorType>>& inputs);

// Expects `fn` to throw tessel::Error of `kind` and, unless `needle` is empty, a message
// containing `needle`. `what` names the case in failure messages (may be empty).
void expect_error(ErrorKind kind, const std::function<void()>& fn, const std::string& what = "",
                  const std::string& needle = "");

// Golden checks of a single-output op against `expected` (a float64 golden).
// Runs `inputs` as given and as non-contiguous views; each output within `tol` (rtol and atol).
void expect_golden_layouts(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& inputs,
                           const HostTensor& expected, double tol, const std::string& what);
// Runs with the float inputs cast to `dtype`; expects a `dtype` output within rtol / atol.
void expect_golden_in(DType dtype, OpKind kind, const Attrs& attrs,
                      const std::vector<HostTensor>& inputs, const HostTensor& expected,
                      double rtol, double atol, const std::string& what);

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

// The "cases" array of tests/goldens/<family>.json, parsed once and kept for the whole run, so a
// range-for over it (or a reference into it) never outlives the JSON.
const nlohmann::json& golden_cases_of(const std::string& family);
HostTensor tensor_from_json(const nlohmann::json& j);
// c[key] as a tensor; HostTensor{} (an absent optional input) when the key is missing or null.
HostTensor optional_tensor(const nlohmann::json& c, const char* key);
// The value of variant `name` of enum `e`; throws for an unknown name.
int variant_id(VariantEnum e, const std::string& name);
// A golden case's attributes ({"name": value}), typed by `kind`'s schema; enums by variant name,
// dtypes by dtype name. Throws for an attribute the schema lacks or cannot come from JSON.
Attrs attrs_from_json(OpKind kind, const nlohmann::json& attrs);

}  // namespace tessel::testing
