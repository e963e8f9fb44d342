// Every (kind, variant, dtype) cell the reference backend claims runs on the parity harness's
// cases, and — where the cell is not f64 and f64 is claimed too — agrees with the f64 run on the
// same input values within the dtype's tolerance. A claimed cell without a case fails.
#include <gtest/gtest.h>

#include "op_test_util.h"
#include "parity/cases.h"
#include "parity/check.h"

namespace tessel::testing {
namespace {

// The dtype computed in vs f64 computed on the same values (not the parity harness's bands,
// which compare two backends computing from the same dtype values).
constexpr PerFloatDType<Tolerance> kTolerance = {.f32 = {1e-4, 1e-5},
                                                 .f16 = {2e-2, 2e-2},
                                                 .bf16 = {8e-2, 8e-2},
                                                 .f8e4m3fn = {0.3, 0.3},
                                                 .f8e5m2 = {0.5, 0.5}};

std::vector<HostTensor> run_case(OpKind kind, const parity::Case& c, DType dt, bool as_f64) {
  Attrs attrs = c.attrs;
  if (!c.dtype_attr.empty()) attrs.set(c.dtype_attr, as_f64 ? DType::F64 : dt);
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.castable[i] || !c.inputs[i].storage) {
      inputs.push_back(c.inputs[i]);
      continue;
    }
    HostTensor cell = parity::to_cell_dtype(c.inputs[i], dt);
    inputs.push_back(as_f64 ? parity::to_cell_dtype(cell, DType::F64) : cell);
  }
  if (c.finalize) {  // attributes that depend on the input types (region bodies)
    std::vector<TensorType> types;
    for (const HostTensor& t : inputs) types.push_back({t.dtype, t.shape});
    c.finalize(attrs, types);
  }
  return run_op(kind, attrs, inputs);
}

TEST(ReferenceClaims, EveryClaimedCellRunsAndAgreesWithF64) {
  const Backend& ref = backend("reference");
  parity::Draw draw;  // small, batch > 1
  draw.family = "batch";
  draw.b = 2, draw.m = 3, draw.n = 5, draw.k = 4;
  int cells = 0, compared = 0;
  for (const OpInfo& op : all_ops()) {
    if (op.category == Category::Sources || !ref.claims().claims_kind(op.kind)) continue;
    for (int v = 0; v < op.num_variants(); ++v) {
      DTypeSet dts = ref.claims().dtypes(op.kind, v);
      if (dts.empty()) continue;
      parity::CaseRng rng(static_cast<uint64_t>(op.kind) * 100 + v);
      std::vector<parity::Case> cases = parity::cases_for(op.kind, v, draw, rng);
      std::string cell_name =
          op.name + (op.variant_enum == VariantEnum::None ? "" : "/" + op.variant_name(v));
      if (cases.empty()) {
        ADD_FAILURE() << cell_name << " is claimed but has no parity case";
        continue;
      }
      for (int d = 0; d < kNumDTypes; ++d) {
        DType dt = static_cast<DType>(d);
        if (!dts.contains(dt) || dtype_support(dt) == DTypeSupport::Storage) continue;
        for (const parity::Case& c : cases) {
          std::string what = cell_name + " " + dtype_name(dt) + " case " + c.name;
          ++cells;
          std::vector<HostTensor> out;
          try {
            out = run_case(op.kind, c, dt, false);
          } catch (const std::exception& e) {
            ADD_FAILURE() << what << ": " << e.what();
            continue;
          }
          if (dt == DType::F64 || !dts.contains(DType::F64) || !is_inexact(dt)) continue;
          std::vector<HostTensor> want = run_case(op.kind, c, dt, true);
          ASSERT_EQ(out.size(), want.size()) << what;
          Tolerance tol = kTolerance.of(dt);
          for (size_t o = 0; o < out.size(); ++o)
            if (is_inexact(out[o].dtype)) expect_close(out[o], want[o], tol.rtol, tol.atol, what);
          ++compared;
        }
      }
    }
  }
  std::cout << "[ cells    ] " << cells << " claimed reference cases ran, " << compared
            << " compared against f64\n";
  EXPECT_GT(cells, 0);
}

}  // namespace
}  // namespace tessel::testing
