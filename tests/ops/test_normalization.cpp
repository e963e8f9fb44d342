// Normalization: LayerNorm, LayerNorm2d, GroupNorm, BatchNormInference, RmsNorm on the reference
// backend, against PyTorch goldens (tests/goldens/gen_normalization.py) and hand-computed values,
// with non-contiguous and broadcast inputs and bad-input errors.
#include <map>

#include "op_test_util.h"

namespace tessel::testing {
namespace {

using nlohmann::json;

// The golden case as (kind, attrs, inputs in ops.def order).
struct Case {
  OpKind kind;
  Attrs attrs;
  std::vector<HostTensor> inputs;
};

Case make_case(const json& c) {
  const std::string op = c.at("op");
  Attrs a;
  a.set("eps", c.at("eps").get<double>());
  HostTensor x = tensor_from_json(c.at("x"));
  if (op == "LayerNorm") {
    a.set("axis", c.at("axis").get<int64_t>());
    return {OpKind::LayerNorm, a, {x, optional_tensor(c, "gamma"), optional_tensor(c, "beta")}};
  }
  if (op == "LayerNorm2d")
    return {OpKind::LayerNorm2d, a, {x, optional_tensor(c, "gamma"), optional_tensor(c, "beta")}};
  if (op == "GroupNorm") {
    a.set("groups", c.at("groups").get<int64_t>());
    return {OpKind::GroupNorm, a, {x, optional_tensor(c, "gamma"), optional_tensor(c, "beta")}};
  }
  if (op == "BatchNormInference")
    return {OpKind::BatchNormInference,
            a,
            {x, tensor_from_json(c.at("mean")), tensor_from_json(c.at("var")),
             optional_tensor(c, "gamma"), optional_tensor(c, "beta")}};
  if (op == "RmsNorm") {
    a.set("axis", c.at("axis").get<int64_t>());
    return {OpKind::RmsNorm, a, {x, optional_tensor(c, "gamma")}};
  }
  throw std::runtime_error("unknown golden op " + op);
}

TEST(Normalization, MatchesTorchGoldens) {
  std::map<std::string, int> counts;
  for (const json& c : golden_cases_of("normalization")) {
    Case k = make_case(c);
    HostTensor expected = tensor_from_json(c.at("y"));
    std::string what = c.at("op").get<std::string>() + " x" + shape_str(k.inputs[0].shape);
    expect_golden_layouts(k.kind, k.attrs, k.inputs, expected, 1e-12, what);
    ++counts[c.at("op")];
  }
  for (const char* op : {"LayerNorm", "LayerNorm2d", "GroupNorm", "BatchNormInference", "RmsNorm"})
    EXPECT_GE(counts[op], 2) << op << " has too few golden cases";
}

TEST(Normalization, GoldensInLowPrecisionDTypes) {
  for (const json& c : golden_cases_of("normalization")) {
    Case k = make_case(c);
    HostTensor expected = tensor_from_json(c.at("y"));
    double max_abs = 0;
    for (double v : k.inputs[0].to_f64()) max_abs = std::max(max_abs, std::abs(v));
    for (auto [dtype, tol] : {std::pair{DType::F32, 1e-5}, std::pair{DType::BF16, 6e-2}}) {
      // bf16 cannot hold 1000 ± 2 (its spacing there is 4): that case is for f32 and up.
      if (dtype == DType::BF16 && max_abs > 100) continue;
      // bf16 inputs are rounded before normalizing, so compare loosely (absolute).
      expect_golden_in(dtype, k.kind, k.attrs, k.inputs, expected, tol, tol * 4, c.at("op"));
    }
  }
}

TEST(Normalization, LayerNormHandComputed) {
  // mean 2.5, biased variance 1.25, eps 0: (x - 2.5) / sqrt(1.25).
  HostTensor x = f64({2, 4}, {1, 2, 3, 4, 10, 10, 10, 14});
  Attrs a = Attrs().set("eps", 0.0);
  double s = std::sqrt(1.25);
  double s2 = std::sqrt(3.0);  // second row: mean 11, variance (1+1+1+9)/4 = 3
  expect_close(run_op1(OpKind::LayerNorm, a, {x}),
               {-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s, -1 / s2, -1 / s2, -1 / s2, 3 / s2}, 1e-14,
               1e-14);
  // gamma and beta per element.
  HostTensor gamma = f64({4}, {1, 2, 3, 4}), beta = f64({4}, {0, 1, 0, -1});
  expect_close(
      run_op1(OpKind::LayerNorm, a, {x, gamma, beta}),
      {-1.5 / s, -1 / s + 1, 1.5 / s, 6 / s - 1, -1 / s2, -2 / s2 + 1, -3 / s2, 12 / s2 - 1}, 1e-14,
      1e-14);
}

TEST(Normalization, RmsNormHandComputed) {
  // rms of [3, 4] = sqrt(12.5).
  HostTensor x = f64({1, 2}, {3, 4});
  double r = std::sqrt(12.5);
  expect_close(run_op1(OpKind::RmsNorm, Attrs().set("eps", 0.0), {x}), {3 / r, 4 / r}, 1e-14,
               1e-14);
  expect_close(run_op1(OpKind::RmsNorm, Attrs().set("eps", 0.0), {x, f64({2}, {2, -1})}),
               {6 / r, -4 / r}, 1e-14, 1e-14);
  // eps is added to the mean square: [1, 1] with eps 3 -> 1 / 2.
  expect_close(run_op1(OpKind::RmsNorm, Attrs().set("eps", 3.0), {f64({2}, {1, 1})}), {0.5, 0.5},
               1e-14, 1e-14);
}

TEST(Normalization, GroupAndBatchNormHandComputed) {
  // GroupNorm [1, 4, 2], 2 groups of 2 channels: group 0 = {0, 2, 4, 6} (mean 3, var 5).
  HostTensor x = f64({1, 4, 2}, {0, 2, 4, 6, 1, 1, 1, 5});
  double s = std::sqrt(5.0), t = std::sqrt(3.0);  // group 1 = {1,1,1,5}: mean 2, var 3
  expect_close(run_op1(OpKind::GroupNorm, Attrs().set("groups", 2).set("eps", 0.0), {x}),
               {-3 / s, -1 / s, 1 / s, 3 / s, -1 / t, -1 / t, -1 / t, 3 / t}, 1e-14, 1e-14);
  // BatchNormInference, N=2, C=2: mean [1, 2], var [4, 1], gamma [2, 3], beta [1, -1].
  HostTensor b = f64({2, 2}, {1, 2, 3, 4});
  Attrs a = Attrs().set("eps", 0.0);
  expect_close(
      run_op1(OpKind::BatchNormInference, a,
              {b, f64({2}, {1, 2}), f64({2}, {4, 1}), f64({2}, {2, 3}), f64({2}, {1, -1})}),
      {1, -1, 3, 5}, 1e-14, 1e-14);
  expect_close(run_op1(OpKind::BatchNormInference, a, {b, f64({2}, {1, 2}), f64({2}, {4, 1})}),
               {0, 0, 1, 2}, 1e-14, 1e-14);
  // LayerNorm2d normalizes across C per pixel: [1, 2, 1, 2] pixel 0 = {1, 3}, pixel 1 = {5, 5}.
  HostTensor img = f64({1, 2, 1, 2}, {1, 2, 3, 6});  // pixel 1 = {2, 6}
  expect_close(run_op1(OpKind::LayerNorm2d, Attrs().set("eps", 0.0), {img}), {-1, -1, 1, 1}, 1e-14,
               1e-14);
  // With gamma [2, 3], beta [0, 1] per channel, and eps keeping a constant pixel finite.
  HostTensor flat = f64({1, 2, 1, 2}, {1, 4, 3, 4});  // pixel 1 = {4, 4}: variance 0
  expect_close(run_op1(OpKind::LayerNorm2d, Attrs().set("eps", 1e-2),
                       {flat, f64({2}, {2, 3}), f64({2}, {0, 1})}),
               {-2 / std::sqrt(1.01), 0, 3 / std::sqrt(1.01) + 1, 1}, 1e-14, 1e-14);
}

TEST(Normalization, BroadcastInputs) {
  // x is one row broadcast (stride 0) to 3 rows: every output row equals the one-row result.
  HostTensor row = random_tensor(DType::F64, {1, 5}, 11);
  HostTensor x = broadcast_view(row, {3, 5});
  HostTensor gamma = broadcast_view(f64({1}, {2.0}), {5});  // stride-0 gamma
  HostTensor one = run_op1(OpKind::LayerNorm, Attrs(), {row, gamma});
  HostTensor three = run_op1(OpKind::LayerNorm, Attrs(), {x, gamma});
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t j = 0; j < 5; ++j) EXPECT_DOUBLE_EQ(three.get_f64(r * 5 + j), one.get_f64(j));
  HostTensor rms = run_op1(OpKind::RmsNorm, Attrs(), {x});
  for (int64_t j = 0; j < 5; ++j) EXPECT_DOUBLE_EQ(rms.get_f64(10 + j), rms.get_f64(j));
}

TEST(Normalization, OutputIsWrittenInTheInputDType) {
  HostTensor x = random_tensor(DType::F16, {2, 3, 4}, 3);
  EXPECT_EQ(run_op1(OpKind::LayerNorm, Attrs(), {x}).dtype, DType::F16);
  EXPECT_EQ(run_op1(OpKind::GroupNorm, Attrs().set("groups", 3), {x}).dtype, DType::F16);
  HostTensor y = run_op1(OpKind::RmsNorm, Attrs(), {random_tensor(DType::F8E4M3FN, {2, 4}, 5)});
  EXPECT_EQ(y.dtype, DType::F8E4M3FN);
}

TEST(Normalization, BadInputs) {
  HostTensor x = random_tensor(DType::F32, {2, 3, 5}, 1);
  auto run = [](OpKind k, Attrs a, std::vector<HostTensor> in) {
    return [=] { run_op1(k, a, in); };
  };
  expect_error(ErrorKind::Shape, run(OpKind::LayerNorm, Attrs(), {x, f32({4}, {1, 1, 1, 1})}),
               "LayerNorm gamma of the wrong shape");
  expect_error(
      ErrorKind::Shape,
      run(OpKind::LayerNorm, Attrs().set("axis", 1), {x, {}, random_tensor(DType::F32, {2, 5}, 8)}),
      "LayerNorm beta [2,5] for normalized shape [3,5]");
  expect_error(
      ErrorKind::Shape,
      run(OpKind::LayerNorm, Attrs().set("axis", 2), {x, random_tensor(DType::F32, {3, 5}, 2)}),
      "LayerNorm gamma of higher rank than the normalized axes");
  expect_error(ErrorKind::DType, run(OpKind::LayerNorm, Attrs(), {x, f64({5}, {1, 1, 1, 1, 1})}),
               "LayerNorm gamma dtype differs from x");
  expect_error(ErrorKind::Shape, run(OpKind::LayerNorm, Attrs().set("axis", 3), {x}),
               "LayerNorm axis out of range");
  expect_error(ErrorKind::DType, run(OpKind::LayerNorm, Attrs(), {i64({2}, {1, 2})}),
               "LayerNorm on integers");
  expect_error(ErrorKind::Value, run(OpKind::LayerNorm, Attrs().set("eps", -1.0), {x}),
               "LayerNorm negative eps");
  expect_error(ErrorKind::Shape, run(OpKind::LayerNorm2d, Attrs(), {x}), "LayerNorm2d rank 3");
  HostTensor img = random_tensor(DType::F32, {2, 3, 2, 2}, 4);
  expect_error(ErrorKind::Shape, run(OpKind::LayerNorm2d, Attrs(), {img, f32({2}, {1, 1})}),
               "LayerNorm2d gamma not [C]");
  HostTensor x6 = random_tensor(DType::F32, {2, 6, 3}, 5);
  expect_error(ErrorKind::Shape, run(OpKind::GroupNorm, Attrs().set("groups", 4), {x6}),
               "GroupNorm groups not dividing C");
  expect_error(ErrorKind::Value, run(OpKind::GroupNorm, Attrs().set("groups", 0), {x6}),
               "GroupNorm zero groups");
  expect_error(ErrorKind::Shape,
               run(OpKind::GroupNorm, Attrs().set("groups", 1), {f32({3}, {1, 2, 3})}),
               "GroupNorm rank 1");
  expect_error(
      ErrorKind::Shape,
      run(OpKind::GroupNorm, Attrs().set("groups", 3), {x6, random_tensor(DType::F32, {3}, 6)}),
      "GroupNorm gamma of G instead of C");
  HostTensor c3 = f32({3}, {0, 0, 0});
  expect_error(ErrorKind::Shape,
               run(OpKind::BatchNormInference, Attrs(), {x, f32({5}, {0, 0, 0, 0, 0}), c3}),
               "BatchNorm mean not [C]");
  expect_error(ErrorKind::Value, run(OpKind::BatchNormInference, Attrs(), {x, c3, {}}),
               "BatchNorm without var");
  expect_error(ErrorKind::Shape,
               run(OpKind::BatchNormInference, Attrs(), {f32({3}, {1, 2, 3}), c3, c3}),
               "BatchNorm rank 1");
  expect_error(ErrorKind::Shape,
               run(OpKind::RmsNorm, Attrs(), {x, random_tensor(DType::F32, {3}, 7)}),
               "RmsNorm gamma of the wrong shape");
  expect_error(ErrorKind::Value, run(OpKind::GroupNorm, Attrs(), {x6}), "GroupNorm without groups");
}

}  // namespace
}  // namespace tessel::testing
