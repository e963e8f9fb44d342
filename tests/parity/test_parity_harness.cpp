// The parity harness catches broken kernels: fake backends wrapping a correct Neg kernel with
// one defect each must be reported with the right failure kind; a correct one passes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "parity/parity.h"
#include "runtime/host_backend.h"

namespace tessel::testing {
namespace {

enum class Defect { None, Unwritten, OutOfBounds, Zeros, SlightlyWrong, Nan, Throws };

template <Defect D>
void neg_kernel(const Node&, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  int64_t n = y.numel();
  auto* p = reinterpret_cast<float*>(y.data());
  if constexpr (D == Defect::Throws) throw_error(ErrorKind::Internal, "[fake] kernel failed");
  for (int64_t i = 0; i < n; ++i) {
    double v = -x.get_f64(i);
    if constexpr (D == Defect::Unwritten)
      if (i == n - 1) continue;
    if constexpr (D == Defect::Zeros) v = 0;
    if constexpr (D == Defect::SlightlyWrong) v *= 1 + 1e-3;
    if constexpr (D == Defect::Nan)
      if (i == 0) v = std::numeric_limits<double>::quiet_NaN();
    p[i] = static_cast<float>(v);
  }
  if constexpr (D == Defect::OutOfBounds) p[n] = 0;  // one past the end
}

// A host backend claiming only f32 Activation/Neg, run by `kernel`.
HostBackend fake_backend(HostKernel kernel) {
  KernelRegistry r;
  for (OpKind k : {OpKind::Input, OpKind::Param, OpKind::Constant})
    r.claims.add({k, dtypes::kEvery, How::Native, {}});
  r.native(OpKind::Activation, kernel, {DType::F32}, {static_cast<int>(ActivationKind::Neg)});
  return HostBackend("fake", std::move(r));
}

parity::Report run_fake(HostKernel kernel) {
  return parity::run(fake_backend(kernel), parity::Options{});
}

// The one cell's first recorded failure kind (the cell must have failed).
parity::FailureKind first_failure(const parity::Report& r) {
  EXPECT_EQ(r.cells.size(), 1u);
  EXPECT_EQ(r.failed, 1);
  EXPECT_FALSE(r.ok());
  if (r.cells.empty() || r.cells[0].failures.empty()) {
    ADD_FAILURE() << "no failure recorded\n" << parity::report_text(r);
    return parity::FailureKind::NoCases;
  }
  return r.cells[0].failures[0].kind;
}

TEST(ParityHarness, CorrectKernelPasses) {
  parity::Report r = run_fake(neg_kernel<Defect::None>);
  ASSERT_EQ(r.cells.size(), 1u);
  EXPECT_EQ(r.cells[0].status, parity::CellStatus::Pass) << parity::report_text(r);
  EXPECT_GT(r.cells[0].cases_run, 3);
  EXPECT_TRUE(r.ok());
}

TEST(ParityHarness, UnwrittenElementIsCaught) {
  EXPECT_EQ(first_failure(run_fake(neg_kernel<Defect::Unwritten>)), parity::FailureKind::Unwritten);
}

TEST(ParityHarness, OutOfBoundsWriteIsCaught) {
  EXPECT_EQ(first_failure(run_fake(neg_kernel<Defect::OutOfBounds>)),
            parity::FailureKind::OutOfBounds);
}

TEST(ParityHarness, AllZeroOutputIsCaught) {
  EXPECT_EQ(first_failure(run_fake(neg_kernel<Defect::Zeros>)), parity::FailureKind::AllZero);
}

TEST(ParityHarness, SlightlyWrongValuesAreCaught) {
  parity::Report r = run_fake(neg_kernel<Defect::SlightlyWrong>);
  EXPECT_EQ(first_failure(r), parity::FailureKind::Mismatch);
  ASSERT_FALSE(r.cells.empty());
  ASSERT_FALSE(r.cells[0].failures.empty());
  const parity::CaseFailure& f = r.cells[0].failures[0];
  EXPECT_GE(f.index, 0);
  EXPECT_GT(f.max_abs, 0);
  EXPECT_NEAR(f.got, f.want * (1 + 1e-3), std::abs(f.want) * 1e-6 + 1e-6);
}

TEST(ParityHarness, NanWhereReferenceIsNotIsCaught) {
  EXPECT_EQ(first_failure(run_fake(neg_kernel<Defect::Nan>)), parity::FailureKind::NanMismatch);
}

TEST(ParityHarness, ThrowingKernelIsAnError) {
  EXPECT_EQ(first_failure(run_fake(neg_kernel<Defect::Throws>)), parity::FailureKind::Error);
}

TEST(ParityHarness, JsonNamesTheFailure) {
  auto j = nlohmann::json::parse(parity::report_json(run_fake(neg_kernel<Defect::Unwritten>)));
  EXPECT_EQ(j["failed"], 1);
  ASSERT_EQ(j["cells"].size(), 1u);
  EXPECT_EQ(j["cells"][0]["kind"], "Activation");
  EXPECT_EQ(j["cells"][0]["variant"], "Neg");
  EXPECT_EQ(j["cells"][0]["status"], "fail");
  EXPECT_EQ(j["cells"][0]["failures"][0]["kind"], "unwritten element");
}

TEST(ParityHarness, ReferenceAgreesWithItself) {
  parity::Options opt;
  opt.backend = "reference";
  opt.kinds = {OpKind::Binary, OpKind::Reduce, OpKind::Gather};
  opt.dtypes = {DType::F32, DType::I32, DType::BF16};
  parity::Report r = parity::run(opt);
  EXPECT_GT(r.passed, 10);
  EXPECT_EQ(r.failed, 0) << parity::report_text(r);
}

TEST(ParityHarness, KindFilterSelectsCells) {
  HostBackend fake = fake_backend(neg_kernel<Defect::None>);
  // The fake claims only Activation/Neg: filtering to another kind leaves no cells.
  parity::Options opt;
  opt.kinds = {OpKind::Binary};
  parity::Report r = parity::run(fake, opt);
  EXPECT_TRUE(r.cells.empty());
  EXPECT_TRUE(r.ok());
}

}  // namespace
}  // namespace tessel::testing
