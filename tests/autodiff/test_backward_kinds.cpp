// Each Backward kind built directly (not through a VJP rule) equals the vector-Jacobian product of
// its forward kind by central finite differences in f64 on the reference, and runs the same on
// the reference and cpu (checked: outputs poisoned, guarded).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "autodiff/gradient_check.h"
#include "op_test_util.h"

namespace tessel::testing {
namespace {

struct Forward {
  OpKind kind;
  Attrs attrs;
  std::vector<HostTensor> inputs;  // absent optional inputs: HostTensor{}
};

// d/d fwd.inputs[wrt] of Σ dy·fwd(inputs)[0], by central differences.
HostTensor numeric_vjp(const Forward& fwd, const HostTensor& dy, int wrt) {
  auto loss = [&](const std::vector<HostTensor>& in) {
    HostTensor y = run_op(fwd.kind, fwd.attrs, in)[0];
    double s = 0;
    for (int64_t j = 0; j < y.numel(); ++j) s += y.get_f64(j) * dy.get_f64(j);
    return s;
  };
  std::vector<HostTensor> in = fwd.inputs;
  HostTensor x = in[wrt].contiguous();
  in[wrt] = x;
  HostTensor out = HostTensor::empty(DType::F64, x.shape);
  const double h = 1e-6;
  for (int64_t j = 0; j < x.numel(); ++j) {
    const double x0 = x.get_f64(j);
    x.set_f64(j, x0 + h);
    const double up = loss(in);
    x.set_f64(j, x0 - h);
    const double down = loss(in);
    x.set_f64(j, x0);
    out.set_f64(j, (up - down) / (2 * h));
  }
  return out;
}

// Output `out` of Backward kind `kind` on `operands` (dy first) equals the VJP of `fwd` w.r.t.
// its input `wrt`, on both backends.
void expect_backward(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& operands,
                     int out, const Forward& fwd, int wrt, const std::string& what,
                     double tol = 1e-6) {
  SCOPED_TRACE(std::string(op_name(kind)) + " " + what);
  const HostTensor want = numeric_vjp(fwd, operands[0], wrt);
  for (const char* be : {"reference", "cpu"}) {
    HostTensor got = run_op(kind, attrs, operands, be, {.checked = true})[out];
    expect_close(got, want, tol, tol, std::string(be) + ", output " + std::to_string(out));
  }
}

HostTensor absent() { return HostTensor{}; }

TEST(BackwardKinds, ReluAndActivation) {
  HostTensor x = rnd({2, 3, 4}, 1, -2, 2), dy = rnd({2, 3, 4}, 2);
  for (int64_t j = 0; j < x.numel(); ++j)
    if (std::abs(x.get_f64(j)) < 0.05) x.set_f64(j, 0.3);  // off the kink
  const Attrs relu = Attrs().set("kind", ActivationKind::Relu);
  expect_backward(OpKind::ReluBackward, Attrs(), {dy, x}, 0, {OpKind::Activation, relu, {x}}, 0,
                  "relu");
  for (auto [k, alpha] : {std::pair{ActivationKind::Gelu, NAN},
                          {ActivationKind::GeluApprox, NAN},
                          {ActivationKind::Silu, NAN},
                          {ActivationKind::Tanh, NAN},
                          {ActivationKind::Sigmoid, NAN},
                          {ActivationKind::Exp, NAN},
                          {ActivationKind::Elu, 0.7},
                          {ActivationKind::LeakyRelu, 0.2},
                          {ActivationKind::Softplus, NAN},
                          {ActivationKind::Relu, NAN}}) {
    const Attrs a = Attrs().set("kind", k).set("alpha", alpha);
    expect_backward(OpKind::ActivationBackward, a, {dy, x}, 0, {OpKind::Activation, a, {x}}, 0,
                    "kind " + std::to_string(static_cast<int>(k)));
  }
}

TEST(BackwardKinds, LayerNormAndRmsNorm) {
  HostTensor x = rnd({2, 3, 4}, 3, -2, 2), dy = rnd({2, 3, 4}, 4);
  HostTensor gamma = rnd({3, 4}, 5, 0.5, 1.5), beta = rnd({3, 4}, 6);
  const Attrs a = Attrs().set("axis", int64_t{1}).set("eps", 1e-3);
  const Forward ln{OpKind::LayerNorm, a, {x, gamma, beta}};
  expect_backward(OpKind::LayerNormBackwardInput, a, {dy, x, gamma}, 0, ln, 0, "dx");
  expect_backward(OpKind::LayerNormBackwardInput, a, {dy, x, absent()}, 0,
                  {OpKind::LayerNorm, a, {x, absent(), absent()}}, 0, "dx without gamma");
  expect_backward(OpKind::LayerNormBackwardGamma, a, {dy, x}, 0, ln, 1, "dgamma");
  const Forward rms{OpKind::RmsNorm, a, {x, gamma}};
  expect_backward(OpKind::RmsNormBackwardInput, a, {dy, x, gamma}, 0, rms, 0, "dx");
  expect_backward(OpKind::RmsNormBackwardGamma, a, {dy, x}, 0, rms, 1, "dgamma");
  // RmsNorm has no beta: its gradient is LayerNorm's (dy summed over the leading axes).
  expect_backward(OpKind::RmsNormBackwardBeta, Attrs().set("axis", int64_t{1}), {dy}, 0, ln, 2,
                  "dbeta");
}

TEST(BackwardKinds, GroupNormAndBatchNorm) {
  HostTensor x = rnd({2, 4, 5}, 7, -2, 2), dy = rnd({2, 4, 5}, 8);
  HostTensor gamma = rnd({4}, 9, 0.5, 1.5), beta = rnd({4}, 10);
  const Attrs gn = Attrs().set("groups", int64_t{2}).set("eps", 1e-3);
  const Forward group{OpKind::GroupNorm, gn, {x, gamma, beta}};
  expect_backward(OpKind::GroupNormBackwardInput, gn, {dy, x, gamma}, 0, group, 0, "dx");
  expect_backward(OpKind::GroupNormBackwardGamma, gn, {dy, x}, 0, group, 1, "dgamma");
  expect_backward(OpKind::GroupNormBackwardBeta, Attrs(), {dy}, 0, group, 2, "dbeta");
  HostTensor mean = rnd({4}, 11), var = rnd({4}, 12, 0.5, 2);
  const Attrs bn = Attrs().set("eps", 1e-3);
  const Forward batch{OpKind::BatchNormInference, bn, {x, mean, var, gamma, beta}};
  expect_backward(OpKind::BatchNormInferenceBackwardInput, bn, {dy, var, gamma}, 0, batch, 0, "dx");
  expect_backward(OpKind::BatchNormInferenceBackwardGamma, bn, {dy, x, mean, var}, 0, batch, 3,
                  "dgamma");
  expect_backward(OpKind::BatchNormInferenceBackwardBeta, Attrs(), {dy}, 0, batch, 4, "dbeta");
}

TEST(BackwardKinds, Attention) {
  HostTensor q = rnd({2, 4, 3, 4}, 13), k = rnd({2, 2, 5, 4}, 14), v = rnd({2, 2, 5, 3}, 15);
  HostTensor dy = rnd({2, 4, 3, 3}, 16);
  for (auto mk : {MaskKind::Causal, MaskKind::SlidingWindow, MaskKind::Bias}) {
    Attrs a = Attrs().set("mask_kind", mk).set("scale", 0.6).set("window", int64_t{2});
    HostTensor mask = mk == MaskKind::Bias ? rnd({2, 1, 3, 5}, 17) : absent();
    const Forward fwd{OpKind::Attention, a, {q, k, v, mask}};
    int wrt = 0;
    for (auto w : {AttentionBwdWrt::Query, AttentionBwdWrt::Key, AttentionBwdWrt::Value}) {
      Attrs b = a;
      b.set("wrt", w);
      expect_backward(OpKind::AttentionBackward, b, {dy, q, k, v, mask}, 0, fwd, wrt++,
                      "mask kind " + std::to_string(static_cast<int>(mk)));
    }
  }
}

TEST(BackwardKinds, RopeCumsumGather) {
  HostTensor x = rnd({2, 3, 8}, 18), dy = rnd({2, 3, 8}, 19);
  HostTensor pos = HostTensor::from_vector(DType::I64, {3}, std::vector<int64_t>{4, 0, 9});
  const Attrs rope =
      Attrs().set("style", RopeStyle::GptJ).set("base", 100.0).set("rotary_dim", int64_t{6});
  expect_backward(OpKind::RopeBackward, rope, {dy, pos}, 0, {OpKind::Rope, rope, {x, pos}}, 0,
                  "explicit positions");
  expect_backward(OpKind::RopeBackward, rope, {dy, absent()}, 0,
                  {OpKind::Rope, rope, {x, absent()}}, 0, "default positions");
  const Attrs cs = Attrs().set("axis", int64_t{1}).set("exclusive", true).set("reverse", true);
  expect_backward(OpKind::CumsumBackward, cs, {dy}, 0, {OpKind::Cumsum, cs, {x}}, 0,
                  "exclusive reverse");
  HostTensor idx = HostTensor::from_vector(DType::I64, {2, 2}, std::vector<int64_t>{2, 0, 2, -1});
  HostTensor gdy = rnd({2, 2, 2, 8}, 20);
  expect_backward(OpKind::GatherBackward,
                  Attrs().set("axis", int64_t{1}).set("input_shape", Shape{2, 3, 8}), {gdy, idx}, 0,
                  {OpKind::Gather, Attrs().set("axis", int64_t{1}), {x, idx}}, 0,
                  "repeated and negative indices");
}

TEST(BackwardKinds, Losses) {
  HostTensor logits = rnd({5, 4}, 21, -2, 2);
  HostTensor labels =
      HostTensor::from_vector(DType::I64, {5}, std::vector<int64_t>{1, -100, 3, 0, 3});
  HostTensor dl = HostTensor::from_vector(DType::F64, {}, std::vector<double>{0.7});
  const Attrs ce = Attrs().set("reduction", Reduction::Mean).set("label_smoothing", 0.1);
  expect_backward(OpKind::SoftmaxCrossEntropyBackward, ce, {dl, logits, labels}, 0,
                  {OpKind::SoftmaxCrossEntropyWithLogits, ce, {logits, labels}}, 0, "mean");
  HostTensor x = rnd({3, 4}, 22, 0.1, 0.9), t = rnd({3, 4}, 23, 0, 1);
  for (auto k : {LossKind::Huber, LossKind::BinaryCrossEntropy, LossKind::KlDiv}) {
    for (auto r : {Reduction::Sum, Reduction::None}) {
      const Attrs a = Attrs().set("kind", k).set("reduction", r).set("delta", 0.3);
      HostTensor d = r == Reduction::None ? rnd({3, 4}, 24) : dl;
      expect_backward(OpKind::LossBackward, a, {d, x, t}, 0, {OpKind::Loss, a, {x, t}}, 0,
                      "kind " + std::to_string(static_cast<int>(k)));
    }
  }
}

TEST(BackwardKinds, DitBlocks) {
  HostTensor x = rnd({2, 3, 4}, 25, -2, 2), y = rnd({2, 3, 4}, 26), dy = rnd({2, 3, 4}, 27);
  HostTensor scale = rnd({2, 4}, 28), shift = rnd({2, 4}, 29);
  const Attrs ada = Attrs().set("eps", 1e-3);
  for (int i = 0; i < 3; ++i)
    expect_backward(OpKind::AdaLayerNormBackward, ada, {dy, x, scale, shift}, i,
                    {OpKind::AdaLayerNorm, ada, {x, scale, shift}}, i, "AdaLayerNorm");
  for (int i = 0; i < 3; ++i)
    expect_backward(OpKind::GatedResidualBackward, Attrs(), {dy, x, y, scale}, i,
                    {OpKind::GatedResidual, Attrs(), {x, y, scale}}, i, "GatedResidual");
}

// The VJP rules emit the Backward kinds (legalized by decomposition, or run by a native kernel).
TEST(BackwardKinds, VjpRulesEmitThem) {
  struct Case {
    OpKind kind;
    Attrs attrs;
    std::vector<HostTensor> in;
    std::vector<OpKind> emitted;
  };
  HostTensor x = rnd({2, 4, 6}, 30), c4 = rnd({4}, 31), c6 = rnd({6}, 32), bd = rnd({2, 6}, 33);
  HostTensor q = rnd({1, 2, 3, 4}, 34);
  HostTensor ids = HostTensor::from_vector(DType::I64, {2}, std::vector<int64_t>{1, 0});
  const Attrs eps = Attrs().set("eps", 1e-3);
  const std::vector<Case> cases = {
      {OpKind::Activation, Attrs().set("kind", ActivationKind::Relu), {x}, {OpKind::ReluBackward}},
      {OpKind::Activation,
       Attrs().set("kind", ActivationKind::Gelu),
       {x},
       {OpKind::ActivationBackward}},
      {OpKind::LayerNorm,
       eps,
       {x, c6, c6},
       {OpKind::LayerNormBackwardInput, OpKind::LayerNormBackwardGamma}},
      {OpKind::RmsNorm, eps, {x, c6}, {OpKind::RmsNormBackwardInput, OpKind::RmsNormBackwardGamma}},
      {OpKind::GroupNorm,
       Attrs().set("groups", int64_t{2}),
       {x, c4, c4},
       {OpKind::GroupNormBackwardInput, OpKind::GroupNormBackwardGamma,
        OpKind::GroupNormBackwardBeta}},
      {OpKind::BatchNormInference,
       eps,
       {x, c4, rnd({4}, 35, 0.5, 2), c4, c4},
       {OpKind::BatchNormInferenceBackwardInput, OpKind::BatchNormInferenceBackwardGamma,
        OpKind::BatchNormInferenceBackwardBeta}},
      {OpKind::Attention, Attrs(), {q, q, q}, {OpKind::AttentionBackward}},
      {OpKind::Rope, Attrs(), {x}, {OpKind::RopeBackward}},
      {OpKind::Cumsum, Attrs().set("axis", int64_t{1}), {x}, {OpKind::CumsumBackward}},
      {OpKind::Gather, Attrs().set("axis", int64_t{1}), {x, ids}, {OpKind::GatherBackward}},
      {OpKind::Loss, Attrs().set("kind", LossKind::Mse), {x, x}, {OpKind::LossBackward}},
      {OpKind::SoftmaxCrossEntropyWithLogits,
       Attrs(),
       {rnd({2, 4}, 36), ids},
       {OpKind::SoftmaxCrossEntropyBackward}},
      {OpKind::AdaLayerNorm, eps, {x, bd, bd}, {OpKind::AdaLayerNormBackward}},
      {OpKind::GatedResidual, Attrs(), {x, x, bd}, {OpKind::GatedResidualBackward}},
  };
  for (const Case& c : cases) {
    Problem p = make_problem(
        c.in,
        [&](GraphBuilder& b, const std::vector<Value>& in) { return b.op1(c.kind, c.attrs, in); },
        1);
    std::vector<int> wrt;
    for (int i = 0; i < static_cast<int>(c.in.size()); ++i)
      if (is_float(c.in[i].dtype)) wrt.push_back(i);
    const Graph gg = grad_graph(p.g, wrt);
    for (OpKind k : c.emitted) {
      bool found = false;
      for (const Node& n : gg.nodes()) found = found || n.kind == k;
      EXPECT_TRUE(found) << op_name(c.kind) << "'s VJP rule did not emit " << op_name(k);
    }
  }
}

}  // namespace
}  // namespace tessel::testing
