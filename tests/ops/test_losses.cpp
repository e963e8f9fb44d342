// Loss, SoftmaxCrossEntropy and SoftmaxCrossEntropyWithLogits on the reference backend: PyTorch
// float64 goldens (tests/goldens/gen_losses.py) for every LossKind × Reduction and both
// cross-entropy kinds, hand-computed edge cases, strided / broadcast inputs, narrow dtypes and
// bad inputs.
#include <cmath>
#include <set>

#include "op_test_util.h"

namespace tessel::testing {
namespace {

Attrs loss_attrs(LossKind kind, Reduction reduction, double delta = 1.0, bool log_target = false) {
  return Attrs()
      .set("kind", kind)
      .set("reduction", reduction)
      .set("delta", delta)
      .set("log_target", log_target);
}

// The tolerances of a case run in `dtype` against a float64 golden.
struct Tol {
  double rtol, atol;
};
Tol tol_for(DType dtype) { return dtype == DType::F64 ? Tol{1e-10, 1e-12} : Tol{1e-4, 1e-4}; }

// Runs one golden case in f64 (contiguous and strided) and in f32.
void check_golden(OpKind kind, const Attrs& attrs, const HostTensor& a, const HostTensor& b,
                  const HostTensor& expected, const std::string& what, bool b_is_labels = false) {
  for (DType dt : {DType::F64, DType::F32}) {
    Tol tol = tol_for(dt);
    HostTensor aa = cast_to(a, dt);
    HostTensor bb = b_is_labels ? b : cast_to(b, dt);
    std::string w = what + " " + dtype_name(dt);
    HostTensor got = run_op1(kind, attrs, {aa, bb});
    EXPECT_EQ(got.dtype, dt) << w;
    expect_close(got, expected, tol.rtol, tol.atol, w);
    got = run_op1(kind, attrs, {non_contiguous(aa), non_contiguous(bb)});
    expect_close(got, expected, tol.rtol, tol.atol, w + " non-contiguous");
  }
}

TEST(Losses, LossMatchesTorchForEveryKindAndReduction) {
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& c : golden_cases_of("losses")) {
    if (c.at("op") != "Loss") continue;
    std::string kind = c.at("kind"), reduction = c.at("reduction");
    Attrs attrs = Attrs()
                      .set("kind", variant_id(VariantEnum::LossKind, kind))
                      .set("reduction", variant_id(VariantEnum::Reduction, reduction))
                      .set("delta", c.at("delta").get<double>())
                      .set("log_target", c.at("log_target").get<bool>());
    HostTensor x = tensor_from_json(c.at("input"));
    std::string what = kind + "/" + reduction + " delta=" + c.at("delta").dump() +
                       " log_target=" + c.at("log_target").dump() + " " + shape_str(x.shape);
    check_golden(OpKind::Loss, attrs, x, tensor_from_json(c.at("target")),
                 tensor_from_json(c.at("expected")), what);
    seen.insert({kind, reduction});
  }
  // Every LossKind × Reduction cell has a golden.
  EXPECT_EQ(seen.size(), 6u * 3u);
  EXPECT_EQ(enum_info(VariantEnum::LossKind).values.size(), 6u);
}

TEST(Losses, SoftmaxCrossEntropyMatchesTorchProbabilityTargets) {
  int n = 0;
  for (const auto& c : golden_cases_of("losses")) {
    if (c.at("op") != "SoftmaxCrossEntropy") continue;
    std::string reduction = c.at("reduction");
    Attrs attrs = Attrs()
                      .set("reduction", variant_id(VariantEnum::Reduction, reduction))
                      .set("axis", c.at("axis").get<int64_t>());
    HostTensor logits = tensor_from_json(c.at("logits"));
    std::string what = "SoftmaxCrossEntropy/" + reduction + " axis=" + c.at("axis").dump() + " " +
                       shape_str(logits.shape);
    check_golden(OpKind::SoftmaxCrossEntropy, attrs, logits, tensor_from_json(c.at("target")),
                 tensor_from_json(c.at("expected")), what);
    ++n;
  }
  EXPECT_GE(n, 18);
}

TEST(Losses, SoftmaxCrossEntropyWithLogitsMatchesTorchClassIds) {
  int n = 0, smoothed = 0, ignored = 0, spatial = 0;
  for (const auto& c : golden_cases_of("losses")) {
    if (c.at("op") != "SoftmaxCrossEntropyWithLogits") continue;
    std::string reduction = c.at("reduction");
    int64_t ignore_index = c.at("ignore_index");
    double eps = c.at("label_smoothing");
    Attrs attrs = Attrs()
                      .set("reduction", variant_id(VariantEnum::Reduction, reduction))
                      .set("ignore_index", ignore_index)
                      .set("label_smoothing", eps);
    HostTensor logits = tensor_from_json(c.at("logits"));
    HostTensor labels = tensor_from_json(c.at("labels"));
    HostTensor expected = tensor_from_json(c.at("expected"));
    std::string what = "SoftmaxCrossEntropyWithLogits/" + reduction +
                       " ignore=" + std::to_string(ignore_index) + " eps=" + std::to_string(eps) +
                       " " + shape_str(logits.shape);
    check_golden(OpKind::SoftmaxCrossEntropyWithLogits, attrs, logits, labels, expected, what,
                 true);
    // Labels of another integer dtype give the same losses.
    expect_close(run_op1(OpKind::SoftmaxCrossEntropyWithLogits, attrs,
                         {logits, cast_to(labels, DType::I32)}),
                 expected, 1e-10, 1e-12, what + " i32 labels");
    ++n;
    smoothed += eps > 0;
    spatial += logits.rank() > 2;
    for (int64_t i = 0; i < labels.numel(); ++i)
      if (labels.get_i64(i) == ignore_index) {
        ++ignored;
        break;
      }
  }
  EXPECT_GE(n, 30);
  EXPECT_GT(smoothed, 0);
  EXPECT_GT(ignored, 0);
  EXPECT_GT(spatial, 0);
}

TEST(Losses, HandComputedPointwiseValues) {
  HostTensor x = f64({3}, {1, 2, 3}), t = f64({3}, {0, 2, 5});
  expect_close(run_op1(OpKind::Loss, loss_attrs(LossKind::Mse, Reduction::None), {x, t}),
               {1, 0, 4});
  expect_close(run_op1(OpKind::Loss, loss_attrs(LossKind::Mse, Reduction::Mean), {x, t}),
               {5.0 / 3});
  expect_close(run_op1(OpKind::Loss, loss_attrs(LossKind::Mse, Reduction::Sum), {x, t}), {5});
  expect_close(run_op1(OpKind::Loss, loss_attrs(LossKind::Mae, Reduction::None), {x, t}),
               {1, 0, 2});

  // Huber: quadratic inside delta, linear outside.
  HostTensor hx = f64({3}, {0.5, -2, 3}), zero = f64({3}, {0, 0, 0});
  expect_close(run_op1(OpKind::Loss, loss_attrs(LossKind::Huber, Reduction::None, 1.0), {hx, zero}),
               {0.125, 1.5, 2.5});
  expect_close(run_op1(OpKind::Loss, loss_attrs(LossKind::Huber, Reduction::None, 2.0), {hx, zero}),
               {0.125, 2.0, 4.0});

  // BCE clamps each log at -100, as torch does.
  HostTensor p = f64({4}, {0, 1, 0.5, 0}), pt = f64({4}, {1, 0, 1, 0});
  expect_close(
      run_op1(OpKind::Loss, loss_attrs(LossKind::BinaryCrossEntropy, Reduction::None), {p, pt}),
      {100, 100, std::log(2.0), 0}, 1e-12, 1e-12);

  // BCE with logits stays finite for large logits.
  HostTensor lx = f64({3}, {100, -100, 0}), lt = f64({3}, {0, 1, 0.5});
  expect_close(
      run_op1(OpKind::Loss, loss_attrs(LossKind::BinaryCrossEntropyWithLogits, Reduction::None),
              {lx, lt}),
      {100, 100, std::log(2.0)}, 1e-12, 1e-12);

  // KL: target 0 contributes 0 even where input is -inf.
  HostTensor kx = f64({2}, {-INFINITY, std::log(0.25)}), kt = f64({2}, {0, 0.5});
  expect_close(run_op1(OpKind::Loss, loss_attrs(LossKind::KlDiv, Reduction::None), {kx, kt}),
               {0, 0.5 * std::log(2.0)}, 1e-12, 1e-12);
  HostTensor klt = f64({2}, {std::log(0.5), std::log(0.5)}),
             klx = f64({2}, {std::log(0.25), std::log(0.5)});
  expect_close(
      run_op1(OpKind::Loss, loss_attrs(LossKind::KlDiv, Reduction::Sum, 1.0, true), {klx, klt}),
      {0.5 * std::log(2.0)}, 1e-12, 1e-12);
}

TEST(Losses, HandComputedCrossEntropy) {
  // p = softmax([0, ln 3]) = [1/4, 3/4].
  HostTensor logits = f64({1, 2}, {0, std::log(3.0)});
  Attrs ce = Attrs().set("reduction", Reduction::Sum);
  expect_close(run_op1(OpKind::SoftmaxCrossEntropyWithLogits, ce, {logits, i64({1}, {1})}),
               {-std::log(0.75)}, 1e-12, 1e-12);
  Attrs smooth = Attrs().set("reduction", Reduction::Sum).set("label_smoothing", 0.5);
  expect_close(run_op1(OpKind::SoftmaxCrossEntropyWithLogits, smooth, {logits, i64({1}, {1})}),
               {0.5 * -std::log(0.75) + 0.5 * -(std::log(0.25) + std::log(0.75)) / 2}, 1e-12,
               1e-12);
  // Soft targets [0.5, 0.5].
  expect_close(run_op1(OpKind::SoftmaxCrossEntropy, Attrs().set("reduction", Reduction::None),
                       {logits, f64({1, 2}, {0.5, 0.5})}),
               {-(std::log(0.25) + std::log(0.75)) / 2}, 1e-12, 1e-12);
  // Mean divides by the non-ignored targets only: (ln 2 + ln 2) / 2, not / 3.
  HostTensor two = f64({3, 2}, {0, 0, 5, 1, 0, 0});
  expect_close(run_op1(OpKind::SoftmaxCrossEntropyWithLogits,
                       Attrs().set("ignore_index", int64_t{7}), {two, i64({3}, {0, 7, 1})}),
               {std::log(2.0)}, 1e-12, 1e-12);
  expect_close(run_op1(OpKind::SoftmaxCrossEntropyWithLogits,
                       Attrs().set("ignore_index", int64_t{7}).set("reduction", Reduction::None),
                       {two, i64({3}, {0, 7, 1})}),
               {std::log(2.0), 0, std::log(2.0)}, 1e-12, 1e-12);
}

// A [rows, n] stride-0 view of a [1, n] row.
HostTensor broadcast_rows(const HostTensor& row, int64_t rows) {
  HostTensor v = row;
  v.shape = {rows, row.shape[1]};
  v.strides = {0, row.strides[1]};
  return v;
}

TEST(Losses, ReadsBroadcastViews) {
  HostTensor x = random_tensor(DType::F32, {3, 5}, 11, -2, 2);
  HostTensor row = random_tensor(DType::F32, {1, 5}, 12, -2, 2);
  HostTensor view = broadcast_rows(row, 3);
  HostTensor dense = view.contiguous();
  for (int k = 0; k < static_cast<int>(enum_info(VariantEnum::LossKind).values.size()); ++k) {
    auto kind = static_cast<LossKind>(k);
    HostTensor xi = x, ti = view, td = dense;
    if (kind == LossKind::BinaryCrossEntropy) {  // probabilities for the input
      xi = random_tensor(DType::F32, {3, 5}, 13, 0.01, 0.99);
    }
    if (kind == LossKind::KlDiv) {  // non-negative targets
      ti = broadcast_rows(random_tensor(DType::F32, {1, 5}, 14, 0, 1), 3);
      td = ti.contiguous();
    }
    HostTensor got = run_op1(OpKind::Loss, loss_attrs(kind, Reduction::None), {xi, ti});
    HostTensor want = run_op1(OpKind::Loss, loss_attrs(kind, Reduction::None), {xi, td});
    expect_close(got, want, 0, 0, "broadcast view, kind " + std::to_string(k));
    // Row r of the view equals row 0 of the target: spot-check the Mse values by hand.
    if (kind == LossKind::Mse)
      for (int64_t i = 0; i < 15; ++i) {
        double d = x.get_f64(i) - row.get_f64(i % 5);
        EXPECT_NEAR(got.get_f64(i), d * d, 1e-5);
      }
  }
  HostTensor logits = random_tensor(DType::F32, {4, 3}, 15, -3, 3);
  HostTensor target_row = f32({1, 3}, {0.2, 0.3, 0.5});
  HostTensor got = run_op1(OpKind::SoftmaxCrossEntropy, Attrs().set("reduction", Reduction::None),
                           {logits, broadcast_rows(target_row, 4)});
  for (int64_t r = 0; r < 4; ++r) {
    double m = -INFINITY, s = 0, loss = 0;
    for (int c = 0; c < 3; ++c) m = std::max(m, logits.get_f64(r * 3 + c));
    for (int c = 0; c < 3; ++c) s += std::exp(logits.get_f64(r * 3 + c) - m);
    for (int c = 0; c < 3; ++c)
      loss -= target_row.get_f64(c) * (logits.get_f64(r * 3 + c) - m - std::log(s));
    EXPECT_NEAR(got.get_f64(r), loss, 1e-5) << "row " << r;
  }
}

TEST(Losses, NarrowDtypesRoundOnce) {
  int n = 0;
  for (const auto& c : golden_cases_of("losses")) {
    if (c.at("op") != "Loss" || c.at("kind") != "Mse") continue;
    Attrs attrs =
        loss_attrs(LossKind::Mse,
                   static_cast<Reduction>(variant_id(VariantEnum::Reduction, c.at("reduction"))));
    HostTensor x = tensor_from_json(c.at("input")), t = tensor_from_json(c.at("target"));
    HostTensor expected = tensor_from_json(c.at("expected"));
    for (DType dt : {DType::F16, DType::BF16}) {
      HostTensor got = run_op1(OpKind::Loss, attrs, {cast_to(x, dt), cast_to(t, dt)});
      EXPECT_EQ(got.dtype, dt);
      expect_close(got, expected, dt == DType::F16 ? 1e-2 : 5e-2, 2e-2,
                   std::string("Mse ") + dtype_name(dt));
    }
    ++n;
  }
  EXPECT_EQ(n, 6);
  // fp8 e4m3: the mean 5/3 is computed in f64 and rounded once to 1.625 (3 mantissa bits).
  HostTensor x = cast_to(f64({3}, {1, 2, 3}), DType::F8E4M3FN),
             t = cast_to(f64({3}, {0, 2, 5}), DType::F8E4M3FN);
  HostTensor mean = run_op1(OpKind::Loss, loss_attrs(LossKind::Mse, Reduction::Mean), {x, t});
  EXPECT_EQ(mean.dtype, DType::F8E4M3FN);
  EXPECT_EQ(mean.get_f64(0), 1.625);
  HostTensor ce = run_op1(OpKind::SoftmaxCrossEntropyWithLogits, Attrs(),
                          {cast_to(f64({2, 2}, {0, 0, 1, 1}), DType::BF16), i64({2}, {0, 1})});
  EXPECT_EQ(ce.dtype, DType::BF16);
  EXPECT_NEAR(ce.get_f64(0), std::log(2.0), 4e-3);
}

TEST(Losses, ReferenceClaimsFloatsOnly) {
  const ClaimTable& claims = backend("reference").claims();
  for (int k = 0; k < 6; ++k)
    for (DType dt :
         {DType::F16, DType::BF16, DType::F32, DType::F64, DType::F8E4M3FN, DType::F8E5M2})
      EXPECT_EQ(claims.find(OpKind::Loss, k, dt), How::Native) << k << " " << dtype_name(dt);
  for (OpKind kind : {OpKind::SoftmaxCrossEntropy, OpKind::SoftmaxCrossEntropyWithLogits}) {
    EXPECT_EQ(claims.find(kind, 0, DType::F32), How::Native) << op_name(kind);
    EXPECT_FALSE(claims.find(kind, 0, DType::I64).has_value()) << op_name(kind);
  }
  EXPECT_FALSE(claims.find(OpKind::Loss, 0, DType::I32).has_value());
}

TEST(Losses, BadLossInputs) {
  HostTensor x = random_tensor(DType::F32, {2, 3}, 1);
  Attrs mse = loss_attrs(LossKind::Mse, Reduction::Mean);
  expect_error(
      ErrorKind::Shape,
      [&] {
        run_op(OpKind::Loss, mse, {x, random_tensor(DType::F32, {3, 2}, 2)});
      },
      "target shape mismatch");
  expect_error(
      ErrorKind::Shape,
      [&] {
        run_op(OpKind::Loss, mse, {x, random_tensor(DType::F32, {1, 3}, 2)});
      },
      "target needing a broadcast");
  expect_error(
      ErrorKind::DType,
      [&] {
        run_op(OpKind::Loss, mse, {x, random_tensor(DType::F64, {2, 3}, 2)});
      },
      "target dtype mismatch");
  expect_error(
      ErrorKind::DType,
      [&] {
        run_op(OpKind::Loss, mse, {i64({2}, {1, 2}), i64({2}, {1, 2})});
      },
      "integer input");
  expect_error(
      ErrorKind::Value,
      [&] {
        run_op(OpKind::Loss, loss_attrs(LossKind::Huber, Reduction::Mean, 0.0), {x, x});
      },
      "Huber delta 0");
  expect_error(
      ErrorKind::Value,
      [&] {
        run_op(OpKind::Loss, loss_attrs(LossKind::Huber, Reduction::Mean, -1.0), {x, x});
      },
      "Huber delta < 0");
  Attrs bce = loss_attrs(LossKind::BinaryCrossEntropy, Reduction::Mean);
  expect_error(
      ErrorKind::Value,
      [&] {
        run_op(OpKind::Loss, bce, {f32({2}, {0.5, 1.5}), f32({2}, {1, 0})});
      },
      "BCE probability > 1");
  expect_error(
      ErrorKind::Value,
      [&] {
        run_op(OpKind::Loss, bce, {f32({2}, {NAN, 0.5}), f32({2}, {1, 0})});
      },
      "BCE NaN probability");
  expect_error(
      ErrorKind::Value,
      [&] {
        run_op(OpKind::Loss, Attrs().set("kind", 17), {x, x});
      },
      "LossKind out of range");
}

TEST(Losses, BadCrossEntropyInputs) {
  HostTensor logits = random_tensor(DType::F32, {4, 5}, 3);
  HostTensor labels = i64({4}, {0, 1, 2, 4});
  Attrs ce;
  run_op(OpKind::SoftmaxCrossEntropyWithLogits, ce, {logits, labels});  // valid
  expect_error(
      ErrorKind::DType,
      [&] {
        run_op(OpKind::SoftmaxCrossEntropyWithLogits, ce, {cast_to(logits, DType::I32), labels});
      },
      "integer logits");
  expect_error(
      ErrorKind::DType,
      [&] {
        run_op(OpKind::SoftmaxCrossEntropyWithLogits, ce, {logits, cast_to(labels, DType::F32)});
      },
      "float labels");
  expect_error(
      ErrorKind::DType,
      [&] {
        run_op(OpKind::SoftmaxCrossEntropyWithLogits, ce, {logits, cast_to(labels, DType::Bool)});
      },
      "bool labels");
  expect_error(
      ErrorKind::Shape,
      [&] {
        run_op(OpKind::SoftmaxCrossEntropyWithLogits, ce, {logits, i64({5}, {0, 1, 2, 3, 4})});
      },
      "labels of the wrong batch");
  expect_error(
      ErrorKind::Shape,
      [&] {
        run_op(OpKind::SoftmaxCrossEntropyWithLogits, ce, {logits, i64({4, 1}, {0, 1, 2, 3})});
      },
      "labels of the wrong rank");
  expect_error(
      ErrorKind::Shape,
      [&] {
        run_op(OpKind::SoftmaxCrossEntropyWithLogits, ce, {f32({}, {1}), i64({}, {0})});
      },
      "scalar logits");
  expect_error(
      ErrorKind::Value,
      [&] {
        run_op(OpKind::SoftmaxCrossEntropyWithLogits, ce, {logits, i64({4}, {0, 1, 5, 2})});
      },
      "label == C");
  expect_error(
      ErrorKind::Value,
      [&] {
        run_op(OpKind::SoftmaxCrossEntropyWithLogits, ce, {logits, i64({4}, {0, -1, 2, 2})});
      },
      "negative label that is not ignore_index");
  expect_error(
      ErrorKind::Value,
      [&] {
        run_op(OpKind::SoftmaxCrossEntropyWithLogits, Attrs().set("label_smoothing", 1.5),
               {logits, labels});
      },
      "label_smoothing > 1");
  expect_error(
      ErrorKind::Value,
      [&] {
        run_op(OpKind::SoftmaxCrossEntropyWithLogits, Attrs().set("label_smoothing", -0.1),
               {logits, labels});
      },
      "label_smoothing < 0");

  HostTensor target = random_tensor(DType::F32, {4, 5}, 4, 0, 1);
  expect_error(
      ErrorKind::Shape,
      [&] {
        run_op(OpKind::SoftmaxCrossEntropy, Attrs(),
               {logits, random_tensor(DType::F32, {4, 4}, 4)});
      },
      "soft target shape mismatch");
  expect_error(
      ErrorKind::DType,
      [&] {
        run_op(OpKind::SoftmaxCrossEntropy, Attrs(), {logits, cast_to(target, DType::F64)});
      },
      "soft target dtype mismatch");
  expect_error(
      ErrorKind::DType,
      [&] {
        run_op(OpKind::SoftmaxCrossEntropy, Attrs(),
               {cast_to(logits, DType::I64), cast_to(target, DType::I64)});
      },
      "integer soft logits");
  expect_error(
      ErrorKind::Shape,
      [&] {
        run_op(OpKind::SoftmaxCrossEntropy, Attrs().set("axis", int64_t{2}), {logits, target});
      },
      "axis out of range");
  expect_error(
      ErrorKind::Shape,
      [&] {
        run_op(OpKind::SoftmaxCrossEntropy, Attrs(), {f32({3, 0}, {}), f32({3, 0}, {})});
      },
      "no classes");
}

}  // namespace
}  // namespace tessel::testing
