// Reverse-mode autodiff against central finite differences in f64 on the reference backend:
// every VJP rule, with broadcasting, non-default attributes and batch > 1; differentiating
// through a decomposition; higher-order gradients; and the errors for what has no rule.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "autodiff/gradient_check.h"
#include "op_test_util.h"
#include "ops/rules.h"
#include "passes/passes.h"

namespace tessel::testing {
namespace {

// Inputs in a range where the activation is smooth and defined.
std::pair<double, double> activation_domain(ActivationKind k) {
  switch (k) {
    case ActivationKind::Log:
    case ActivationKind::Sqrt:
    case ActivationKind::Rsqrt:
    case ActivationKind::Reciprocal:
      return {0.5, 2};
    case ActivationKind::Asin:
    case ActivationKind::Acos:
    case ActivationKind::Atanh:
      return {-0.8, 0.8};
    case ActivationKind::Acosh:
      return {1.2, 3};
    case ActivationKind::Log1p:
      return {-0.5, 2};
    case ActivationKind::HardSigmoid:
    case ActivationKind::HardSwish:
      return {-5, 5};
    default:
      return {-2, 2};
  }
}

TEST(Autodiff, EveryDifferentiableActivation) {
  const OpInfo& info = op_info(OpKind::Activation);
  int tested = 0;
  for (int v = 0; v < info.num_variants(); ++v) {
    if (!info.variant_differentiable(v)) continue;
    const auto k = static_cast<ActivationKind>(v);
    if (k == ActivationKind::Round) continue;  // straight-through: its own test below
    auto [lo, hi] = activation_domain(k);
    HostTensor x = rnd({2, 3, 4}, 100 + v, lo, hi);
    // Keep clear of the kinks (0 for relu-likes, ±3 for the hard ones) by a margin.
    for (int64_t j = 0; j < x.numel(); ++j) {
      double e = x.get_f64(j);
      for (double kink : {0.0, -3.0, 3.0})
        if (std::abs(e - kink) < 1e-3) x.set_f64(j, kink + 0.01);
    }
    // A non-default alpha where the kind reads one.
    const double alpha =
        k == ActivationKind::LeakyRelu ? 0.2 : (k == ActivationKind::Elu ? 0.7 : NAN);
    expect_gradients(
        {x},
        [&](GraphBuilder& b, const std::vector<Value>& in) {
          return std::isnan(alpha) ? b.activation(k, in[0]) : b.activation(k, in[0], alpha);
        },
        std::string("Activation ") + info.variant_name(v));
    ++tested;
  }
  EXPECT_GE(tested, 37);
}

// Round's gradient is straight-through (identity), by its definition in ops.def; finite
// differences would see the step function's zero.
TEST(Autodiff, RoundIsStraightThrough) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F64, {3});
  g.outputs = {b.sum(b.mul(b.activation(ActivationKind::Round, x), x), {})};
  auto out = compile_for(grad_graph(g, {0}), backend("reference"))
                 ->run(std::vector<HostTensor>{f64({3}, {0.2, 1.7, -2.6})});
  expect_close(out[1], {0.2 + 0, 1.7 + 2, -2.6 - 3});  // x + round(x)
}

TEST(Autodiff, EveryDifferentiableBinaryWithBroadcasting) {
  const OpInfo& info = op_info(OpKind::Binary);
  for (int v = 0; v < info.num_variants(); ++v) {
    if (!info.variant_differentiable(v)) continue;
    const auto op = static_cast<BinaryOp>(v);
    const bool positive = op == BinaryOp::Pow || op == BinaryOp::Div || op == BinaryOp::Mod ||
                          op == BinaryOp::FloorMod;
    for (auto [sa, sb] :
         {std::pair<Shape, Shape>{{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 1, 4}, {3, 1}}, {{4}, {}}}) {
      HostTensor a = rnd(sa, 200 + v, positive ? 0.5 : -2, 2);
      HostTensor bt = rnd(sb, 300 + v, positive ? 0.7 : -2, 2);
      expect_gradients(
          {a, bt},
          [&](GraphBuilder& b, const std::vector<Value>& in) { return b.binary(op, in[0], in[1]); },
          std::string("Binary ") + info.variant_name(v) + " " + shape_str(sa) + " " +
              shape_str(sb));
    }
  }
}

TEST(Autodiff, MaxMinTiesSplitTheGradient) {
  Graph g;
  GraphBuilder b(g);
  Value a = g.input(DType::F64, {3}), c = g.input(DType::F64, {3});
  g.outputs = {b.sum(b.maximum(a, c), {})};
  auto out = compile_for(grad_graph(g, {0, 1}), backend("reference"))
                 ->run(std::vector<HostTensor>{f64({3}, {1, 2, 3}), f64({3}, {1, 5, 0})});
  expect_close(out[1], {0.5, 0, 1});
  expect_close(out[2], {0.5, 1, 0});
}

TEST(Autodiff, MatMulTransposesBatchesAndVectors) {
  struct Case {
    Shape a, b;
    bool ta, tb;
  };
  for (const Case& c :
       {Case{{2, 3}, {3, 4}, false, false}, Case{{3, 2}, {3, 4}, true, false},
        Case{{2, 3}, {4, 3}, false, true}, Case{{3, 2}, {4, 3}, true, true},
        Case{{2, 2, 3}, {3, 4}, false, false}, Case{{2, 1, 2, 3}, {3, 3, 4}, false, false},
        Case{{2, 3, 2}, {2, 4, 3}, true, true}, Case{{3}, {3, 4}, false, false},
        Case{{2, 3}, {3}, false, false}, Case{{3}, {3}, false, false},
        Case{{3}, {2, 3, 4}, false, false}}) {
    expect_gradients(
        {rnd(c.a, 1), rnd(c.b, 2)},
        [&](GraphBuilder& b, const std::vector<Value>& in) {
          return b.matmul(in[0], in[1], c.ta, c.tb);
        },
        "MatMul " + shape_str(c.a) + (c.ta ? "ᵀ" : "") + " · " + shape_str(c.b) +
            (c.tb ? "ᵀ" : ""));
  }
}

TEST(Autodiff, EveryReduceOpButProd) {
  const OpInfo& info = op_info(OpKind::Reduce);
  for (int v = 0; v < info.num_variants(); ++v) {
    const auto op = static_cast<ReduceOp>(v);
    if (op == ReduceOp::Prod) continue;
    for (auto axes : {std::vector<int64_t>{}, std::vector<int64_t>{1}, std::vector<int64_t>{0, -1}})
      for (bool keep : {false, true}) {
        const int64_t correction = (op == ReduceOp::Var || op == ReduceOp::Std) ? 1 : 0;
        HostTensor x = rnd({2, 3, 4}, 400 + v, op == ReduceOp::L1 ? 0.1 : -1, 1);
        expect_gradients(
            {x},
            [&](GraphBuilder& b, const std::vector<Value>& in) {
              return b.op1(OpKind::Reduce,
                           Attrs()
                               .set("op", op)
                               .set("axes", axes)
                               .set("keepdims", keep)
                               .set("correction", correction),
                           {in[0]});
            },
            std::string("Reduce ") + info.variant_name(v) + " axes " + shape_str(axes) +
                (keep ? " keepdims" : ""));
      }
  }
}

TEST(Autodiff, ReduceMaxGoesToTheFirstMaximum) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F64, {2, 3});
  g.outputs = {b.sum(b.reduce(ReduceOp::Max, x, {1}), {})};
  auto out = compile_for(grad_graph(g, {0}), backend("reference"))
                 ->run(std::vector<HostTensor>{f64({2, 3}, {1, 4, 4, 7, 2, 7})});
  expect_close(out[1], {0, 1, 0, 1, 0, 0});
}

TEST(Autodiff, SoftmaxAndLogSoftmax) {
  for (int64_t axis : {0, 1, -1})
    for (bool log : {false, true})
      expect_gradients(
          {rnd({3, 4, 2}, 500)},
          [&](GraphBuilder& b, const std::vector<Value>& in) {
            return b.softmax(in[0], axis, log);
          },
          "Softmax axis " + std::to_string(axis) + (log ? " log" : ""));
}

TEST(Autodiff, ShapeAndMovement) {
  auto one = [](std::function<Value(GraphBuilder&, Value)> f) {
    return [f](GraphBuilder& b, const std::vector<Value>& in) { return f(b, in[0]); };
  };
  HostTensor x = rnd({2, 3, 4}, 600);
  expect_gradients({x}, one([](GraphBuilder& b, Value v) {
                     return b.reshape(v, {4, 6});
                   }),
                   "Reshape");
  expect_gradients({x}, one([](GraphBuilder& b, Value v) {
                     return b.transpose(v, {2, 0, 1});
                   }),
                   "Transpose");
  expect_gradients({rnd({3, 1}, 601)}, one([](GraphBuilder& b, Value v) {
                     return b.expand(v, {2, 3, 5});
                   }),
                   "Expand");
  expect_gradients({x}, one([](GraphBuilder& b, Value v) { return b.narrow(v, -1, 1, 2); }),
                   "Narrow");
  expect_gradients(
      {x, rnd({2, 1, 4}, 602)},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        return b.concat({in[0], in[1], in[0]}, 1);
      },
      "Concat (an input twice)");
  expect_gradients({x}, one([](GraphBuilder& b, Value v) {
                     return b.op1(OpKind::Pad, Attrs().set("pads", Shape{0, 1, -1, 1, 0, 2}), {v});
                   }),
                   "Pad constant, with a crop");
  expect_gradients({x}, one([](GraphBuilder& b, Value v) { return b.clamp(v, -0.5, 0.3); }),
                   "Clamp");
  expect_gradients(
      {x, rnd({3, 4}, 603)},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        Value cond = b.compare(CmpOp::Gt, in[0], b.scalar(0, DType::F64));
        return b.where(cond, in[0], in[1]);
      },
      "Where");
}

// A composite without a VJP rule of its own is differentiated through its decomposition.
TEST(Autodiff, ThroughADecomposition) {
  ASSERT_EQ(rules_for(OpKind::FusedMatMulBiasAct).vjp, nullptr);
  ASSERT_NE(rules_for(OpKind::FusedMatMulBiasAct).decompose, nullptr);
  expect_gradients(
      {rnd({2, 3}, 700), rnd({3, 4}, 701), rnd({4}, 702)},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        return b.op1(OpKind::FusedMatMulBiasAct, Attrs().set("act", ActivationKind::Tanh),
                     {in[0], in[1], in[2]});
      },
      "FusedMatMulBiasAct tanh");
}

TEST(Autodiff, ValuesOffThePathAndStopGradientGetZeros) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F64, {3});
  g.input(DType::F64, {2});  // on no path to the loss
  g.outputs = {b.sum(b.mul(x, b.stop_gradient(x)), {})};
  auto out = compile_for(grad_graph(g, {0, 1}), backend("reference"))
                 ->run(std::vector<HostTensor>{f64({3}, {1, 2, 3}), f64({2}, {5, 6})});
  expect_close(out[1], {1, 2, 3});  // d/dx Σ x·sg(x) = sg(x)
  expect_close(out[2], {0, 0});
}

// grad of grad: the backward nodes are ordinary nodes and differentiate again.
TEST(Autodiff, SecondOrder) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F64, {4});
  Value w = g.input(DType::F64, {4, 4});
  Value loss = b.sum(b.activation(ActivationKind::Tanh, b.matmul(w, x)), {});
  Value one = b.scalar(1, DType::F64);
  std::vector<Value> dx =
      vjp(g, std::vector<Value>{loss}, std::vector<Value>{one}, std::vector<Value>{x});
  Value loss2 = b.sum(b.mul(dx[0], dx[0]), {});  // ‖∇x‖²
  std::vector<Value> d2 =
      vjp(g, std::vector<Value>{loss2}, std::vector<Value>{one}, std::vector<Value>{x, w});
  g.outputs = {loss2, d2[0], d2[1]};
  const Backend& ref = backend("reference");
  std::vector<HostTensor> args = {rnd({4}, 800), rnd({4, 4}, 801)};
  auto exe = compile_for(g, ref);
  std::vector<HostTensor> out = exe->run(args);
  const double h = 1e-6;
  for (int i = 0; i < 2; ++i) {
    HostTensor v = args[i].contiguous();
    std::vector<HostTensor> probe = args;
    probe[i] = v;
    for (int64_t j = 0; j < v.numel(); ++j) {
      const double v0 = v.get_f64(j);
      v.set_f64(j, v0 + h);
      const double up = exe->run(probe)[0].get_f64(0);
      v.set_f64(j, v0 - h);
      const double down = exe->run(probe)[0].get_f64(0);
      v.set_f64(j, v0);
      EXPECT_NEAR(out[1 + i].get_f64(j), (up - down) / (2 * h), 1e-6)
          << "d‖∇x‖²/d input " << i << " element " << j;
    }
  }
}

TEST(Autodiff, AKindWithoutARuleIsAnErrorNamingIt) {
  Graph g;
  GraphBuilder b(g);
  // Every ready kind has a way to differentiate; a pending one (Cholesky) has none yet.
  Value x = g.input(DType::F64, {3, 3});
  g.outputs = {b.sum(b.op1(OpKind::Cholesky, Attrs(), {x}), {0, 1})};
  try {
    grad_graph(g, {0});
    FAIL() << "expected an Unsupported error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("Cholesky"), std::string::npos) << e.what();
  }
}

TEST(Autodiff, GradNeedsAScalarLoss) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F64, {3});
  g.outputs = {b.exp(x)};
  expect_error(ErrorKind::Value, [&] { grad_graph(g, {0}); });
  g.outputs = {b.sum(x, {})};
  expect_error(ErrorKind::Value, [&] { grad_graph(g, {3}); });
}

}  // namespace
}  // namespace tessel::testing
