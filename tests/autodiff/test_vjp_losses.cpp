// VJP rules of the loss kinds against central finite differences in f64 on the reference backend:
// every LossKind × every reduction (gradients for input and target), soft-label and class-id
// softmax cross-entropy with their attributes and spatial dims, and the cpu backend's gradient
// graphs against the reference's.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gradient_check.h"
#include "op_test_util.h"
#include "passes/passes.h"

namespace tessel::testing {
namespace {

constexpr Reduction kReductions[] = {Reduction::None, Reduction::Mean, Reduction::Sum};

std::string reduction_name(Reduction r) {
  return enum_info(VariantEnum::Reduction).values[static_cast<size_t>(r)].name;
}

Value loss(GraphBuilder& b, LossKind kind, Reduction r, Value x, Value t, double delta = 1,
           bool log_target = false) {
  return b.op1(OpKind::Loss,
               Attrs()
                   .set("kind", kind)
                   .set("reduction", r)
                   .set("delta", delta)
                   .set("log_target", log_target),
               {x, t});
}

Value soft_cross_entropy(GraphBuilder& b, Reduction r, int64_t axis, Value x, Value t) {
  return b.op1(OpKind::SoftmaxCrossEntropy, Attrs().set("reduction", r).set("axis", axis), {x, t});
}

Value cross_entropy(GraphBuilder& b, Reduction r, int64_t ignore_index, double smoothing, Value x,
                    Value labels) {
  return b.op1(OpKind::SoftmaxCrossEntropyWithLogits,
               Attrs()
                   .set("reduction", r)
                   .set("ignore_index", ignore_index)
                   .set("label_smoothing", smoothing),
               {x, labels});
}

// One Loss case: its attributes and inputs in a range where the loss is smooth.
struct LossCase {
  LossKind kind;
  double delta = 1;
  bool log_target = false;
  std::string name;
};

// x and t for `c`, each element of x - t at least 0.01 from the kinks (0 for Mae, ±delta for
// Huber).
std::pair<HostTensor, HostTensor> loss_inputs(const LossCase& c, const Shape& s, uint64_t seed) {
  HostTensor x, t;
  switch (c.kind) {
    case LossKind::Mse:
    case LossKind::Mae:
    case LossKind::Huber:
      x = rnd(s, seed, -2, 2);
      t = rnd(s, seed + 1, -2, 2);
      break;
    case LossKind::BinaryCrossEntropy:
      x = rnd(s, seed, 0.05, 0.95);
      t = rnd(s, seed + 1, 0, 1);
      break;
    case LossKind::BinaryCrossEntropyWithLogits:
      x = rnd(s, seed, -3, 3);
      t = rnd(s, seed + 1, 0, 1);
      break;
    case LossKind::KlDiv:  // input: log-probabilities; target: probabilities or their logs
      x = rnd(s, seed, -3, 0);
      t = c.log_target ? rnd(s, seed + 1, -3, 0) : rnd(s, seed + 1, 0.05, 1);
      break;
  }
  for (int64_t j = 0; j < x.numel(); ++j) {
    const double d = x.get_f64(j) - t.get_f64(j);
    for (double kink : {0.0, c.delta, -c.delta})
      if ((c.kind == LossKind::Mae || c.kind == LossKind::Huber) && std::abs(d - kink) < 0.01)
        x.set_f64(j, t.get_f64(j) + kink + 0.05);
  }
  return {x, t};
}

TEST(AutodiffLosses, EveryLossKindAndReductionForInputAndTarget) {
  const OpInfo& info = op_info(OpKind::Loss);
  std::vector<LossCase> cases;
  for (int v = 0; v < info.num_variants(); ++v) {
    const auto k = static_cast<LossKind>(v);
    cases.push_back({k, 1, false, info.variant_name(v)});
    if (k == LossKind::Huber) cases.push_back({k, 0.4, false, "Huber delta 0.4"});
    if (k == LossKind::KlDiv) cases.push_back({k, 1, true, "KlDiv log_target"});
  }
  int tested = 0;
  for (const LossCase& c : cases)
    for (Reduction r : kReductions) {
      auto [x, t] = loss_inputs(c, {2, 3, 4}, 900 + tested);
      expect_gradients(
          {x, t},
          [&](GraphBuilder& b, const std::vector<Value>& in) {
            return loss(b, c.kind, r, in[0], in[1], c.delta, c.log_target);
          },
          "Loss " + c.name + " reduction " + reduction_name(r));
      ++tested;
    }
  EXPECT_EQ(tested, 3 * (info.num_variants() + 2));
}

// Huber with a delta that puts elements on both sides of it, and in both tails.
TEST(AutodiffLosses, HuberBothBranches) {
  HostTensor x = f64({6}, {-2.0, -0.3, 0.1, 0.45, 1.2, 3.0});
  HostTensor t = f64({6}, {0.0, 0.0, 0.0, 0.0, 0.0, 0.0});
  expect_gradients(
      {x, t},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        return loss(b, LossKind::Huber, Reduction::Sum, in[0], in[1], 0.5);
      },
      "Huber delta 0.5 both branches");
}

// The reference's gradients of Loss `kind` w.r.t. x and t (outputs 1 and 2) at x, t.
std::vector<HostTensor> loss_gradients_at(LossKind kind, Reduction r, const HostTensor& x,
                                          const HostTensor& t) {
  Graph g;
  GraphBuilder b(g);
  Value xv = g.input(x.dtype, x.shape), tv = g.input(t.dtype, t.shape);
  g.outputs = {loss(b, kind, r, xv, tv)};
  return compile_for(grad_graph(g, {0, 1}), backend("reference"))
      ->run(std::vector<HostTensor>{x, t});
}

// KL divergence defines the loss as 0 where the target is 0: the target's gradient is 0 there
// (PyTorch), and the input's is -t = 0.
TEST(AutodiffLosses, KlDivZeroTargetGetsZeroGradients) {
  auto out = loss_gradients_at(LossKind::KlDiv, Reduction::Sum, f64({3}, {-1, -2, -0.5}),
                               f64({3}, {0, 0.5, 0}));
  expect_close(out[1], {0, -0.5, 0});
  expect_close(out[2], {0, std::log(0.5) + 2 + 1, 0});
}

// Mae's gradient at x == t is sign(0) = 0, as PyTorch's l1_loss.
TEST(AutodiffLosses, MaeAtEqualityIsZero) {
  auto out =
      loss_gradients_at(LossKind::Mae, Reduction::Mean, f64({3}, {1, 2, 3}), f64({3}, {1, 0, 4}));
  expect_close(out[1], {0, 1.0 / 3, -1.0 / 3});
  expect_close(out[2], {0, -1.0 / 3, 1.0 / 3});
}

TEST(AutodiffLosses, SoftmaxCrossEntropySoftTargetsEveryReductionAndAxis) {
  for (Reduction r : kReductions)
    for (int64_t axis : {1, 0, -1}) {
      // Soft targets that do not sum to 1 along the axis: the rule must not assume they do.
      HostTensor x = rnd({2, 3, 4}, 1000, -2, 2);
      HostTensor t = rnd({2, 3, 4}, 1001, 0, 1);
      expect_gradients(
          {x, t},
          [&](GraphBuilder& b, const std::vector<Value>& in) {
            return soft_cross_entropy(b, r, axis, in[0], in[1]);
          },
          "SoftmaxCrossEntropy reduction " + reduction_name(r) + " axis " + std::to_string(axis));
    }
  expect_gradients(
      {rnd({5}, 1002, -2, 2), rnd({5}, 1003, 0, 1)},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        return soft_cross_entropy(b, Reduction::Mean, 0, in[0], in[1]);
      },
      "SoftmaxCrossEntropy unbatched [C]");
}

// Class ids [N, d] for logits [N, C, d]: every class appears, and `ignored` of them are
// ignore_index.
HostTensor labels_with(const Shape& s, int64_t classes, int64_t ignore_index, int ignored) {
  std::vector<int64_t> v;
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  for (int64_t j = 0; j < n; ++j) v.push_back((j * 7 + 3) % classes);
  for (int k = 0; k < ignored; ++k) v[(k * 5 + 1) % n] = ignore_index;
  return i64(s, v);
}

TEST(AutodiffLosses, CrossEntropyWithClassIds) {
  struct Case {
    Shape logits, labels;
    int64_t ignore_index;
    int ignored;
    double smoothing;
  };
  int tested = 0;
  for (const Case& c : {Case{{3, 4, 2}, {3, 2}, -100, 0, 0},  // [N,C,d], nothing ignored
                        Case{{3, 4, 2}, {3, 2}, -100, 2, 0.1},
                        Case{{3, 4, 2}, {3, 2}, 2, 2, 0},  // ignore_index a real class id
                        Case{{4, 5}, {4}, 1, 1, 0.1}, Case{{2, 3, 2, 2}, {2, 2, 2}, -1, 3, 0.1},
                        Case{{5}, {}, -100, 0, 0.1}})  // unbatched [C] with a scalar label
    for (Reduction r : kReductions) {
      const int64_t classes = c.logits.size() == 1 ? c.logits[0] : c.logits[1];
      HostTensor labels = labels_with(c.labels, classes, c.ignore_index, c.ignored);
      expect_gradients(
          {rnd(c.logits, 1100 + tested, -2, 2), labels},
          [&](GraphBuilder& b, const std::vector<Value>& in) {
            return cross_entropy(b, r, c.ignore_index, c.smoothing, in[0], in[1]);
          },
          "SoftmaxCrossEntropyWithLogits " + shape_str(c.logits) + " reduction " +
              reduction_name(r) + " ignore_index " + std::to_string(c.ignore_index) + " (" +
              std::to_string(c.ignored) + " ignored) label_smoothing " +
              std::to_string(c.smoothing));
      ++tested;
    }
  EXPECT_EQ(tested, 18);
}

// Class ids of a narrower integer dtype compare with ignore_index as i64.
TEST(AutodiffLosses, CrossEntropyWithI32Labels) {
  HostTensor labels = cast_to(labels_with({4, 3}, 5, 3, 2), DType::I32);
  expect_gradients(
      {rnd({4, 5, 3}, 1200, -2, 2), labels},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        return cross_entropy(b, Reduction::Mean, 3, 0.1, in[0], in[1]);
      },
      "SoftmaxCrossEntropyWithLogits i32 labels");
}

// Every position ignored: Mean's loss is 0/0 = NaN (as torch), the logits' gradient all zeros.
TEST(AutodiffLosses, CrossEntropyAllIgnoredGivesZeroGradient) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F64, {2, 3}), labels = g.input(DType::I64, {2});
  g.outputs = {cross_entropy(b, Reduction::Mean, -100, 0.1, x, labels)};
  auto out = compile_for(grad_graph(g, {0}), backend("reference"))
                 ->run(std::vector<HostTensor>{rnd({2, 3}, 1300), i64({2}, {-100, -100})});
  EXPECT_TRUE(std::isnan(out[0].get_f64(0)));
  expect_close(out[1], {0, 0, 0, 0, 0, 0});
}

// The loss gradient graphs compiled for the cpu backend, in f64, give the reference's gradients.
TEST(AutodiffLosses, CpuGradientsMatchTheReference) {
  HostTensor logits = rnd({3, 4, 2}, 1400, -2, 2);
  HostTensor labels = labels_with({3, 2}, 4, 1, 2);
  HostTensor soft = rnd({3, 4, 2}, 1401, 0, 1);
  HostTensor p = rnd({3, 4, 2}, 1402, 0.05, 0.95);
  // Σ of one loss of each kind, so one graph covers every rule.
  const Body body = [](GraphBuilder& b, const std::vector<Value>& in) {
    Value x = in[0], t = in[2], q = in[3];
    Value total = cross_entropy(b, Reduction::Mean, 1, 0.1, x, in[1]);
    total = b.add(total, soft_cross_entropy(b, Reduction::Sum, 1, x, t));
    const OpInfo& info = op_info(OpKind::Loss);
    for (int v = 0; v < info.num_variants(); ++v) {
      const auto k = static_cast<LossKind>(v);
      Value input = k == LossKind::BinaryCrossEntropy || k == LossKind::KlDiv ? q : x;
      total = b.add(total, loss(b, k, Reduction::Mean, input, t, 0.7));
    }
    return total;
  };
  Problem prob = make_problem({logits, labels, soft, p}, body, 78);
  Graph grads = grad_graph(prob.g, {0, 2, 3});
  std::vector<HostTensor> want = compile_for(grads, backend("reference"))->run(prob.args);
  std::vector<HostTensor> got = compile_for(grads, backend("cpu"))->run(prob.args);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    expect_close(got[i], want[i], 1e-10, 1e-12, "output " + std::to_string(i));
}

}  // namespace
}  // namespace tessel::testing
