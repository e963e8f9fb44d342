// Every (kind, variant, dtype) cell the reference backend claims runs on a sample, and — where
// the cell is not f64 and f64 is claimed too — agrees with the f64 run on the same input
// values within the dtype's tolerance. A claimed cell without a sample fails.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"
#include "parity/samples.h"

namespace tessel::testing {
namespace {

HostTensor to_dtype(const HostTensor& src, DType dt) {
  HostTensor out = HostTensor::empty(dt, src.shape);
  for (int64_t i = 0; i < src.numel(); ++i) {
    double v = src.get_f64(i);
    if (dt == DType::Bool)
      out.set_i64(i, v > 0);
    else if (is_integer(dt))
      out.set_i64(i, static_cast<int64_t>(std::llround(v * 3)));
    else
      out.set_f64(i, v);
  }
  return out;
}

struct Tolerance {
  double rtol, atol;
};
Tolerance tolerance(DType dt) {
  switch (dt) {
    case DType::F32:
      return {1e-4, 1e-5};
    case DType::F16:
      return {2e-2, 2e-2};
    case DType::BF16:
      return {8e-2, 8e-2};
    case DType::F8E4M3FN:
      return {0.3, 0.3};
    case DType::F8E5M2:
      return {0.5, 0.5};
    default:
      return {0, 0};
  }
}

std::vector<HostTensor> run_sample(OpKind kind, const Sample& s, DType dt, bool as_f64) {
  Attrs attrs = s.attrs;
  if (!s.dtype_attr.empty()) attrs.set(s.dtype_attr, as_f64 ? DType::F64 : dt);
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    if (!s.castable[i] || !s.inputs[i].storage) {
      inputs.push_back(s.inputs[i]);
      continue;
    }
    HostTensor cell = to_dtype(s.inputs[i], dt);
    inputs.push_back(as_f64 ? to_dtype(cell, DType::F64) : cell);
  }
  return run_op(kind, attrs, inputs);
}

TEST(ReferenceClaims, EveryClaimedCellRunsAndAgreesWithF64) {
  const Backend& ref = backend("reference");
  int cells = 0, compared = 0;
  for (const OpInfo& op : all_ops()) {
    if (op.category == Category::Sources || !ref.claims().claims_kind(op.kind)) continue;
    for (int v = 0; v < op.num_variants(); ++v) {
      DTypeSet dts = ref.claims().dtypes(op.kind, v);
      if (dts.empty()) continue;
      std::vector<Sample> samples = samples_for(op.kind, v);
      std::string cell_name =
          op.name + (op.variant_enum == VariantEnum::None ? "" : "/" + op.variant_name(v));
      if (samples.empty()) {
        ADD_FAILURE() << cell_name << " is claimed but has no sample";
        continue;
      }
      for (int d = 0; d < kNumDTypes; ++d) {
        DType dt = static_cast<DType>(d);
        if (!dts.contains(dt) || dtype_support(dt) == DTypeSupport::Storage) continue;
        for (const Sample& s : samples) {
          std::string what = cell_name + " " + dtype_name(dt) + " sample " + s.name;
          ++cells;
          std::vector<HostTensor> out;
          try {
            out = run_sample(op.kind, s, dt, false);
          } catch (const std::exception& e) {
            ADD_FAILURE() << what << ": " << e.what();
            continue;
          }
          if (dt == DType::F64 || !dts.contains(DType::F64) || !is_inexact(dt)) continue;
          std::vector<HostTensor> want = run_sample(op.kind, s, dt, true);
          ASSERT_EQ(out.size(), want.size()) << what;
          Tolerance tol = tolerance(dt);
          for (size_t o = 0; o < out.size(); ++o)
            expect_close(out[o], want[o], tol.rtol, tol.atol, what);
          ++compared;
        }
      }
    }
  }
  std::cout << "[ cells    ] " << cells << " claimed reference cells ran, " << compared
            << " compared against f64\n";
  EXPECT_GT(cells, 0);
}

}  // namespace
}  // namespace tessel::testing
