// cpu losses family against the reference: Loss (every LossKind × Reduction), SoftmaxCrossEntropy
// and SoftmaxCrossEntropyWithLogits over every float dtype, odd / lane-straddling sizes,
// non-contiguous, broadcast and empty inputs, and the bad-input errors.
#include <cmath>
#include <limits>

#include "op_test_util.h"

namespace tessel::testing {
namespace {

constexpr PerFloatDType<Tolerance> kTolerance = {.f32 = {1e-5, 1e-5},
                                                 .f64 = {1e-10, 1e-10},
                                                 .f16 = {2e-3, 2e-3},
                                                 .bf16 = {1.6e-2, 1e-2},
                                                 .f8e4m3fn = {0.13, 0.05},
                                                 .f8e5m2 = {0.26, 0.05}};

void check(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& in,
           const std::string& what, double scale = 2) {
  HostTensor want = run_op1(kind, attrs, in, "reference");
  HostTensor got = run_op1(kind, attrs, in, "cpu");
  ASSERT_EQ(got.dtype, want.dtype) << what;
  Tolerance t = kTolerance.of(want.dtype);
  expect_close(got, want, t.rtol * scale, t.atol * scale, what);
}

const Shape kShapes[] = {{},     {1},       {15},       {17}, {33},   {65},   {129},
                         {3, 5}, {4, 1000}, {2, 3, 17}, {0},  {3, 0}, {40000}};

TEST(CpuLosses, LossEveryKindReductionAndDtype) {
  for (int k = 0; k < 6; ++k) {
    auto kind = static_cast<LossKind>(k);
    bool probs = kind == LossKind::BinaryCrossEntropy;
    for (int r = 0; r < 3; ++r)
      for (DType dt : kFloatDTypes)
        for (const Shape& s : kShapes)
          for (bool log_target : {false, true}) {
            if (log_target && kind != LossKind::KlDiv) continue;
            Attrs a = Attrs()
                          .set("kind", kind)
                          .set("reduction", static_cast<Reduction>(r))
                          .set("delta", 0.7)
                          .set("log_target", log_target);
            uint64_t seed = 31 + static_cast<uint64_t>(shape_numel(s));
            HostTensor x =
                cast_to(random_tensor(DType::F64, s, seed, probs ? 0 : -2, probs ? 1 : 2), dt);
            // KlDiv targets: probabilities (some exactly 0) or log-probabilities.
            HostTensor t =
                cast_to(random_tensor(DType::F64, s, seed + 1, probs ? 0 : -2, probs ? 1 : 2), dt);
            if (kind == LossKind::KlDiv && !log_target)
              t = cast_to(random_tensor(DType::F64, s, seed + 1, -0.2, 1), dt);
            if (kind == LossKind::KlDiv && !log_target) {
              for (int64_t i = 0; i < t.numel(); ++i)
                if (t.get_f64(i) < 0) t.set_f64(i, 0);
            }
            std::string w = "Loss kind " + std::to_string(k) + " red " + std::to_string(r) + " " +
                            shape_str(s) + " " + dtype_name(dt);
            double scale = r == 0 ? 2 : 8;
            check(OpKind::Loss, a, {x, t}, w, scale);
            if (shape_numel(s) > 1)
              check(OpKind::Loss, a, {non_contiguous(x), non_contiguous(t)}, w + " nc", scale);
          }
  }
  // Broadcast operands (stride 0) and edge values.
  HostTensor x = broadcast_view(random_tensor(DType::F32, {1, 40}, 3), {30, 40});
  HostTensor t = random_tensor(DType::F32, {30, 40}, 4);
  for (int k = 0; k < 6; ++k) {
    if (static_cast<LossKind>(k) == LossKind::BinaryCrossEntropy) continue;
    check(OpKind::Loss, Attrs().set("kind", static_cast<LossKind>(k)), {x, t}, "broadcast");
  }
  HostTensor p = f32({4}, {0, 1, 0.5, 1e-30});
  HostTensor q = f32({4}, {1, 0, 0.5, 1});
  check(OpKind::Loss,
        Attrs().set("kind", LossKind::BinaryCrossEntropy).set("reduction", Reduction::None), {p, q},
        "bce clamp");
  expect_error(ErrorKind::Value, [&] {
    run_op(OpKind::Loss, Attrs().set("kind", LossKind::BinaryCrossEntropy),
           {f32({2}, {0.5, 1.5}), f32({2}, {0, 1})}, "cpu");
  });
}

TEST(CpuLosses, SoftmaxCrossEntropy) {
  std::vector<Shape> shapes = {{1},       {17},       {3, 5}, {4, 33},
                               {2, 7, 3}, {64, 1000}, {0, 4}, {2, 65, 5}};
  for (int r = 0; r < 3; ++r)
    for (DType dt : kFloatDTypes)
      for (const Shape& s : shapes)
        for (int64_t axis : {-1, 0, 1}) {
          if (s.size() < 2 && axis == 1) continue;
          if (s[axis < 0 ? s.size() - 1 : axis] == 0) continue;  // needs a class
          Attrs a = Attrs().set("reduction", static_cast<Reduction>(r)).set("axis", axis);
          HostTensor x = cast_to(random_tensor(DType::F64, s, 41, -4, 4), dt);
          HostTensor t = cast_to(random_tensor(DType::F64, s, 42, 0, 1), dt);
          std::string w = "SoftmaxCrossEntropy " + shape_str(s) + " " + dtype_name(dt) + " axis " +
                          std::to_string(axis) + " red " + std::to_string(r);
          check(OpKind::SoftmaxCrossEntropy, a, {x, t}, w, 4);
          check(OpKind::SoftmaxCrossEntropy, a, {non_contiguous(x), non_contiguous(t)}, w + " nc",
                4);
        }
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  HostTensor x = f32({3, 3}, {1, nan, 2, -inf, -inf, -inf, inf, 1, 2});
  HostTensor t = f32({3, 3}, {0.2, 0.3, 0.5, 0.2, 0.3, 0.5, 0, 0.5, 0.5});
  check(OpKind::SoftmaxCrossEntropy, Attrs().set("reduction", Reduction::None), {x, t}, "special");
}

TEST(CpuLosses, SoftmaxCrossEntropyWithLogits) {
  std::vector<Shape> shapes = {{5}, {1, 3}, {4, 17}, {3, 7, 5}, {2, 33, 2, 3}, {64, 1000}, {0, 4}};
  for (int r = 0; r < 3; ++r)
    for (DType dt : kFloatDTypes)
      for (const Shape& s : shapes)
        for (double eps : {0.0, 0.1})
          for (DType lt : {DType::I64, DType::I32, DType::U8}) {
            Shape ls = s;
            ls.erase(ls.begin() + (s.size() == 1 ? 0 : 1));
            int64_t classes = s.size() == 1 ? s[0] : s[1];
            HostTensor labels = cast_to(random_tensor(DType::F64, ls, 51, 0, classes), lt);
            // Some positions ignored (ignore_index 2 when there are more than two classes).
            Attrs a = Attrs()
                          .set("reduction", static_cast<Reduction>(r))
                          .set("label_smoothing", eps)
                          .set("ignore_index", int64_t{classes > 2 ? 2 : -100});
            HostTensor x = cast_to(random_tensor(DType::F64, s, 52, -4, 4), dt);
            std::string w = "CE " + shape_str(s) + " " + dtype_name(dt) + " red " +
                            std::to_string(r) + " eps " + std::to_string(eps);
            check(OpKind::SoftmaxCrossEntropyWithLogits, a, {x, labels}, w, 4);
            check(OpKind::SoftmaxCrossEntropyWithLogits, a,
                  {non_contiguous(x), non_contiguous(labels)}, w + " nc", 4);
          }
  // Every position ignored: Mean is 0/0.
  check(OpKind::SoftmaxCrossEntropyWithLogits, Attrs().set("ignore_index", int64_t{1}),
        {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2}, {1, 1})}, "all ignored");
  expect_error(ErrorKind::Value, [&] {
    run_op(OpKind::SoftmaxCrossEntropyWithLogits, Attrs(),
           {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2}, {0, 3})}, "cpu");
  });
}

}  // namespace
}  // namespace tessel::testing
