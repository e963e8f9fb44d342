// VJP rules of the normalization kinds against central finite differences in f64 on the
// reference backend: every kind with non-default attributes, batch > 1, with and without the
// optional gamma / beta (also as shapes that broadcast), gradients w.r.t. every float input and
// w.r.t. some of them; and one gradient graph run on the cpu backend against the reference.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "autodiff/gradient_check.h"
#include "op_test_util.h"
#include "passes/passes.h"

namespace tessel::testing {
namespace {

using Inputs = std::vector<std::optional<HostTensor>>;  // nullopt: an absent optional input

// Checks the gradients of one `kind` node on `inputs` w.r.t. `wrt` (indices among the present
// inputs; default: all of them).
void expect_norm_gradients(OpKind kind, const Attrs& attrs, const Inputs& inputs,
                           const std::string& what, std::vector<int> wrt = {}) {
  std::vector<HostTensor> args;
  std::string present;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i]) {
      args.push_back(*inputs[i]);
      present += " " + std::to_string(i) + shape_str(inputs[i]->shape);
    }
  expect_gradients(
      args,
      [&](GraphBuilder& b, const std::vector<Value>& in) {
        std::vector<Value> ins;
        size_t k = 0;
        for (const auto& t : inputs) ins.push_back(t ? in[k++] : Value{});
        return b.op1(kind, attrs, ins);
      },
      std::string(op_name(kind)) + " " + what + ", inputs" + present, wrt);
}

// [gamma, beta] present or absent in every combination, from `gamma` and `beta`.
std::vector<std::pair<std::optional<HostTensor>, std::optional<HostTensor>>> affine_combinations(
    const HostTensor& gamma, const HostTensor& beta) {
  return {{std::nullopt, std::nullopt}, {gamma, std::nullopt}, {std::nullopt, beta}, {gamma, beta}};
}

TEST(AutodiffNormalization, LayerNorm) {
  struct Case {
    Shape x, affine;
    int64_t axis;
  };
  for (const Case& c : {Case{{3, 5}, {5}, -1}, Case{{2, 3, 4}, {4}, -1}, Case{{2, 3, 4}, {3, 4}, 1},
                        Case{{2, 3, 4}, {4}, 1},  // gamma broadcasts
                        Case{{2, 3, 4}, {1, 4}, -2}, Case{{2, 3}, {2, 3}, 0}}) {
    const Attrs attrs = Attrs().set("axis", c.axis).set("eps", 1e-3);
    for (auto [gamma, beta] : affine_combinations(rnd(c.affine, 11, 0.5, 1.5), rnd(c.affine, 12)))
      expect_norm_gradients(OpKind::LayerNorm, attrs, {rnd(c.x, 10, -2, 2), gamma, beta},
                            "axis " + std::to_string(c.axis));
  }
}

TEST(AutodiffNormalization, LayerNormSomeInputs) {
  const Attrs attrs = Attrs().set("axis", int64_t{1}).set("eps", 1e-4);
  const Inputs in = {rnd({2, 3, 4}, 20, -2, 2), rnd({3, 4}, 21, 0.5, 1.5), rnd({3, 4}, 22)};
  for (std::vector<int> wrt : {std::vector<int>{0}, {1}, {2}, {1, 2}, {0, 2}})
    expect_norm_gradients(OpKind::LayerNorm, attrs, in, "axis 1, wrt a subset", wrt);
}

TEST(AutodiffNormalization, RmsNorm) {
  struct Case {
    Shape x, gamma;
    int64_t axis;
  };
  for (const Case& c : {Case{{3, 5}, {5}, -1}, Case{{2, 3, 4}, {3, 4}, 1},
                        Case{{2, 3, 4}, {1, 4}, 1}, Case{{2, 3, 4}, {4}, -1}}) {
    const Attrs attrs = Attrs().set("axis", c.axis).set("eps", 1e-3);
    HostTensor x = rnd(c.x, 30, -2, 2);
    expect_norm_gradients(OpKind::RmsNorm, attrs, {x}, "axis " + std::to_string(c.axis));
    expect_norm_gradients(OpKind::RmsNorm, attrs, {x, rnd(c.gamma, 31, 0.5, 1.5)},
                          "axis " + std::to_string(c.axis));
  }
  const Inputs in = {rnd({2, 3, 4}, 32, -2, 2), rnd({3, 4}, 33, 0.5, 1.5)};
  for (std::vector<int> wrt : {std::vector<int>{0}, {1}})
    expect_norm_gradients(OpKind::RmsNorm, Attrs().set("axis", int64_t{1}).set("eps", 1e-4), in,
                          "axis 1, wrt a subset", wrt);
}

TEST(AutodiffNormalization, LayerNorm2d) {
  const Attrs attrs = Attrs().set("eps", 1e-3);
  for (Shape affine : {Shape{3}, Shape{1}})
    for (auto [gamma, beta] : affine_combinations(rnd(affine, 41, 0.5, 1.5), rnd(affine, 42)))
      expect_norm_gradients(OpKind::LayerNorm2d, attrs, {rnd({2, 3, 2, 3}, 40, -2, 2), gamma, beta},
                            "affine " + shape_str(affine));
}

TEST(AutodiffNormalization, GroupNorm) {
  struct Case {
    Shape x;
    int64_t groups;
  };
  for (const Case& c : {Case{{2, 4, 3}, 2}, Case{{2, 4, 3}, 4}, Case{{2, 8, 2, 2}, 2},
                        Case{{3, 4, 2, 2}, 4}, Case{{2, 6}, 2}}) {
    const Attrs attrs = Attrs().set("groups", c.groups).set("eps", 1e-3);
    const Shape affine = {c.x[1]};
    for (auto [gamma, beta] : affine_combinations(rnd(affine, 51, 0.5, 1.5), rnd(affine, 52)))
      expect_norm_gradients(OpKind::GroupNorm, attrs, {rnd(c.x, 50, -2, 2), gamma, beta},
                            "groups " + std::to_string(c.groups));
  }
  // gamma / beta of shape [1], broadcast over the channels.
  expect_norm_gradients(OpKind::GroupNorm, Attrs().set("groups", int64_t{2}).set("eps", 1e-2),
                        {rnd({2, 4, 3}, 53, -2, 2), rnd({1}, 54, 0.5, 1.5), rnd({1}, 55)},
                        "groups 2, affine [1]");
}

TEST(AutodiffNormalization, BatchNormInference) {
  const Attrs attrs = Attrs().set("eps", 1e-2);
  for (Shape x : {Shape{2, 3, 2, 2}, Shape{4, 3}, Shape{2, 3, 5}})
    for (auto [gamma, beta] : affine_combinations(rnd({3}, 63, 0.5, 1.5), rnd({3}, 64)))
      expect_norm_gradients(OpKind::BatchNormInference, attrs,
                            {rnd(x, 60, -2, 2), rnd({3}, 61), rnd({3}, 62, 0.5, 2), gamma, beta},
                            "eps 1e-2");
  // Statistics and affine of shape [1], broadcast over the channels.
  const Inputs broadcast = {rnd({2, 3, 2}, 65, -2, 2), rnd({1}, 66), rnd({1}, 67, 0.5, 2),
                            rnd({1}, 68, 0.5, 1.5), rnd({1}, 69)};
  expect_norm_gradients(OpKind::BatchNormInference, attrs, broadcast, "per-channel inputs [1]");
  const Inputs in = {rnd({2, 3, 2}, 70, -2, 2), rnd({3}, 71), rnd({3}, 72, 0.5, 2),
                     rnd({3}, 73, 0.5, 1.5), rnd({3}, 74)};
  for (std::vector<int> wrt : {std::vector<int>{0}, {1}, {2}, {3}, {4}, {1, 2}, {0, 3}})
    expect_norm_gradients(OpKind::BatchNormInference, attrs, in, "wrt a subset", wrt);
}

// The normalization gradient graphs compile for the cpu backend and agree with the reference.
TEST(AutodiffNormalization, GradientGraphsOnCpuMatchTheReference) {
  struct Case {
    OpKind kind;
    Attrs attrs;
    std::vector<HostTensor> args;
  };
  const std::vector<Case> cases = {
      {OpKind::LayerNorm,
       Attrs().set("axis", int64_t{1}).set("eps", 1e-3),
       {rnd({2, 3, 4}, 80, -2, 2), rnd({3, 4}, 81, 0.5, 1.5), rnd({3, 4}, 82)}},
      {OpKind::RmsNorm,
       Attrs().set("axis", int64_t{-1}).set("eps", 1e-3),
       {rnd({3, 8}, 83, -2, 2), rnd({8}, 84, 0.5, 1.5)}},
      {OpKind::GroupNorm,
       Attrs().set("groups", int64_t{2}).set("eps", 1e-3),
       {rnd({2, 4, 2, 2}, 85, -2, 2), rnd({4}, 86, 0.5, 1.5), rnd({4}, 87)}},
      {OpKind::BatchNormInference,
       Attrs().set("eps", 1e-3),
       {rnd({2, 3, 2, 2}, 88, -2, 2), rnd({3}, 89), rnd({3}, 90, 0.5, 2), rnd({3}, 91, 0.5, 1.5),
        rnd({3}, 92)}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(op_name(c.kind));
    Problem p = make_problem(
        c.args,
        [&](GraphBuilder& b, const std::vector<Value>& in) { return b.op1(c.kind, c.attrs, in); },
        7);
    std::vector<int> wrt;
    for (int i = 0; i < static_cast<int>(c.args.size()); ++i) wrt.push_back(i);
    const Graph grads = grad_graph(p.g, wrt);
    std::vector<HostTensor> want = compile_for(grads, backend("reference"))->run(p.args);
    std::vector<HostTensor> got = compile_for(grads, backend("cpu"))->run(p.args);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].dtype, DType::F64);
      expect_close(got[i], want[i], 1e-10, 1e-10,
                   std::string(op_name(c.kind)) + " output " + std::to_string(i));
    }
  }
}

}  // namespace
}  // namespace tessel::testing
