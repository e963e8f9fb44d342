// Helpers for op tests: run one op (or a small graph) on a backend through the real pipeline
// (legalize, compile, run), and compare results.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/builder.h"
#include "passes/passes.h"
#include "runtime/backend.h"

namespace tessel::testing {

// Runs `kind` with `attrs` on `inputs` (absent optional inputs: a default HostTensor{}) on
// `backend_name`, compiled with `options` (e.g. {.checked = true}: outputs poisoned, guarded).
std::vector<HostTensor> run_op(OpKind kind, const Attrs& attrs,
                               const std::vector<HostTensor>& inputs,
                               const std::string& backend_name = "reference",
                               const CompileOptions& options = {});
HostTensor run_op1(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& inputs,
                   const std::string& backend_name = "reference",
                   const CompileOptions& options = {});

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
// Test data of `dtype`: a float dtype gets values in [lo, hi) rounded once into it; an integer
// dtype ignores lo / hi and gets [0, 250) (u8) or [-120, 120), which every integer dtype holds.
HostTensor random_values(DType dtype, const Shape& shape, uint64_t seed, double lo = -1,
                         double hi = 1);

// A non-contiguous view with the same values as `t`: stored transposed, viewed back. An absent
// tensor (no storage) stays absent.
HostTensor non_contiguous(const HostTensor& t);
// non_contiguous of each of `ts`.
std::vector<HostTensor> non_contiguous_all(const std::vector<HostTensor>& ts);
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
// Runs fn and expects a tessel::Error of `kind`; returns its message ("" and a test failure
// when nothing is thrown).
std::string error_of(const std::function<void()>& fn, ErrorKind kind);
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

// The float dtypes with arithmetic and the integer dtypes, for dtype sweeps.
inline constexpr DType kFloatDTypes[] = {DType::F32,  DType::F64,      DType::F16,
                                         DType::BF16, DType::F8E4M3FN, DType::F8E5M2};
inline constexpr DType kIntDTypes[] = {DType::U8, DType::I8, DType::I16, DType::I32, DType::I64};

// A value per float dtype (a tolerance, say); every other dtype gets `other`.
template <class T>
struct PerFloatDType {
  T f32{}, f64{}, f16{}, bf16{}, f8e4m3fn{}, f8e5m2{}, other{};

  constexpr T of(DType dtype) const {
    switch (dtype) {
      case DType::F32:
        return f32;
      case DType::F64:
        return f64;
      case DType::F16:
        return f16;
      case DType::BF16:
        return bf16;
      case DType::F8E4M3FN:
        return f8e4m3fn;
      case DType::F8E5M2:
        return f8e5m2;
      default:
        return other;
    }
  }
};

struct Tolerance {
  double rtol = 0, atol = 0;
};
// About one rounding of the dtype at the outputs' magnitude (a few units); other dtypes exact.
inline constexpr PerFloatDType<Tolerance> kOneRounding = {.f32 = {2e-5, 2e-5},
                                                          .f64 = {1e-10, 1e-10},
                                                          .f16 = {2e-3, 4e-3},
                                                          .bf16 = {1.6e-2, 3e-2},
                                                          .f8e4m3fn = {0.13, 0.05},
                                                          .f8e5m2 = {0.26, 0.1}};

// Runs `kind` on `backend_name` in checked mode (outputs poisoned, guarded, so an unwritten
// element or a stray write fails) and on the reference; expects as many outputs, each of the
// first input's dtype and within that dtype's kOneRounding of the reference's.
void expect_parity(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& inputs,
                   const std::string& what, const std::string& backend_name = "cpu");
// expect_parity on `inputs` as given and with every input non-contiguous.
void expect_parity_layouts(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& inputs,
                           const std::string& what, const std::string& backend_name = "cpu");

// Attributes of MatMul and DotGeneral, for the linear-algebra tests.
inline Attrs matmul_attrs(bool transpose_a = false, bool transpose_b = false) {
  return Attrs().set("transpose_a", transpose_a).set("transpose_b", transpose_b);
}
inline Attrs dot_general_attrs(std::vector<int64_t> lhs_batch, std::vector<int64_t> rhs_batch,
                               std::vector<int64_t> lhs_contract,
                               std::vector<int64_t> rhs_contract) {
  return Attrs()
      .set("lhs_batch", std::move(lhs_batch))
      .set("rhs_batch", std::move(rhs_batch))
      .set("lhs_contract", std::move(lhs_contract))
      .set("rhs_contract", std::move(rhs_contract));
}

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
