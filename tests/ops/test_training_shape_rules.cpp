// Shape rules of the kinds of Backward, LossesMetrics and Training: a
// gradient has the shape and dtype of what it differentiates, and every inconsistency is a
// Shape / DType / Value error naming what was wrong.
#include <optional>

#include "op_test_util.h"
#include "ops/rules.h"

namespace tessel::testing {
namespace {

using In = std::optional<TensorType>;

TensorType T(DType d, Shape s) { return TensorType{d, std::move(s)}; }
TensorType F32(Shape s) { return T(DType::F32, std::move(s)); }

TensorType infer1(OpKind kind, const Attrs& attrs, const std::vector<In>& ins) {
  auto t = infer_types(kind, attrs, ins);
  EXPECT_EQ(t.size(), 1u) << op_name(kind);
  return t.at(0);
}

// Expects adding the node to fail with `kind`.
void expect_rule_error(ErrorKind kind, OpKind op, const Attrs& attrs, const std::vector<In>& ins,
                       const std::string& what) {
  expect_error(
      kind, [&] { infer_types(op, attrs, ins); }, std::string(op_name(op)) + " " + what);
}

TEST(TrainingShapeRules, EveryKindHasARuleAndPendingKindsAreUnclaimed) {
  const Backend& ref = backend("reference");
  int pending = 0;
  for (const OpInfo& op : all_ops()) {
    if (op.category != Category::Backward && op.category != Category::LossesMetrics &&
        op.category != Category::Training)
      continue;
    EXPECT_NE(rules_for(op.kind).infer, nullptr) << op.name;
    if (op.status == OpStatus::Pending) {
      ++pending;
      EXPECT_FALSE(ref.claims().claims_kind(op.kind)) << op.name;
    }
  }
  EXPECT_EQ(pending, 0);
}

TEST(TrainingShapeRules, PointwiseBackward) {
  In dy = F32({2, 3}), x = F32({2, 3});
  EXPECT_EQ(infer1(OpKind::ReluBackward, Attrs(), {dy, x}), F32({2, 3}));
  expect_rule_error(ErrorKind::Shape, OpKind::ReluBackward, Attrs(), {F32({3, 2}), x}, "dy shape");
  expect_rule_error(ErrorKind::DType, OpKind::ReluBackward, Attrs(), {T(DType::F64, {2, 3}), x},
                    "dy dtype");
  expect_rule_error(ErrorKind::DType, OpKind::ReluBackward, Attrs(),
                    {T(DType::I32, {2, 3}), T(DType::I32, {2, 3})}, "integer x");

  const EnumInfo& kinds = enum_info(VariantEnum::ActivationKind);
  int differentiable = 0, not_differentiable = 0;
  for (int v = 0; v < static_cast<int>(kinds.values.size()); ++v) {
    Attrs a = Attrs().set("kind", v);
    if (kinds.values[v].differentiable) {
      ++differentiable;
      EXPECT_EQ(infer1(OpKind::ActivationBackward, a, {T(DType::BF16, {5}), T(DType::BF16, {5})}),
                T(DType::BF16, {5}))
          << kinds.values[v].name;
    } else {
      ++not_differentiable;
      expect_rule_error(ErrorKind::Value, OpKind::ActivationBackward, a, {dy, x},
                        kinds.values[v].name);
    }
  }
  EXPECT_GT(differentiable, 0);
  EXPECT_GT(not_differentiable, 0);

  Attrs cum = Attrs().set("axis", int64_t{1});
  EXPECT_EQ(infer1(OpKind::CumsumBackward, cum, {F32({3, 4})}), F32({3, 4}));
  expect_rule_error(ErrorKind::Shape, OpKind::CumsumBackward, Attrs().set("axis", int64_t{2}),
                    {F32({3, 4})}, "axis");
}

TEST(TrainingShapeRules, GatherBackward) {
  Attrs a = Attrs().set("axis", int64_t{1}).set("input_shape", Shape{5, 6, 7});
  In idx = T(DType::I64, {2, 3});
  EXPECT_EQ(infer1(OpKind::GatherBackward, a, {F32({5, 2, 3, 7}), idx}), F32({5, 6, 7}));
  EXPECT_EQ(infer1(OpKind::GatherBackward,
                   Attrs().set("axis", int64_t{-1}).set("input_shape", Shape{5, 6, 7}),
                   {F32({5, 6, 4}), T(DType::I32, {4})}),
            F32({5, 6, 7}));
  expect_rule_error(ErrorKind::Shape, OpKind::GatherBackward, a, {F32({5, 6, 7}), idx},
                    "dy not Gather's output");
  expect_rule_error(ErrorKind::DType, OpKind::GatherBackward, a, {F32({5, 2, 3, 7}), F32({2, 3})},
                    "float indices");
  expect_rule_error(ErrorKind::Shape, OpKind::GatherBackward,
                    Attrs().set("axis", int64_t{3}).set("input_shape", Shape{5, 6, 7}),
                    {F32({5, 2, 3, 7}), idx}, "axis");
  expect_rule_error(ErrorKind::Shape, OpKind::GatherBackward, Attrs().set("input_shape", Shape{}),
                    {F32({2, 3}), idx}, "scalar input_shape");
  expect_rule_error(ErrorKind::Value, OpKind::GatherBackward,
                    Attrs().set("input_shape", Shape{-1, 3}), {F32({2, 3, 3}), idx},
                    "negative input_shape");
}

TEST(TrainingShapeRules, MaxPoolBackward) {
  Attrs k32 = Attrs().set("kernel", Shape{3, 2});  // strides default to the kernel
  EXPECT_EQ(infer1(OpKind::MaxPool2dBackward, k32, {F32({2, 3, 2, 3}), F32({2, 3, 7, 6})}),
            F32({2, 3, 7, 6}));
  EXPECT_EQ(infer1(OpKind::MaxPool2dBackward, k32, {F32({3, 2, 3}), F32({3, 7, 6})}),
            F32({3, 7, 6}));
  // torch: max_pool2d(5x5, kernel 2, stride 2, padding 1, ceil_mode=True) is 3x3 (the 4th window
  // would start in the right padding).
  Attrs ceil = Attrs().set("kernel", Shape{2, 2}).set("pads", Shape{1, 1}).set("ceil_mode", true);
  EXPECT_EQ(infer1(OpKind::MaxPool2dBackward, ceil, {F32({1, 1, 3, 3}), F32({1, 1, 5, 5})}),
            F32({1, 1, 5, 5}));
  Attrs ceil2 = Attrs().set("kernel", Shape{2, 2}).set("ceil_mode", true);
  EXPECT_EQ(infer1(OpKind::MaxPool2dBackward, ceil2, {F32({1, 1, 3, 3}), F32({1, 1, 5, 5})}),
            F32({1, 1, 5, 5}));
  Attrs dil =
      Attrs().set("kernel", Shape{3, 3}).set("strides", Shape{1, 1}).set("dilations", Shape{2, 1});
  EXPECT_EQ(infer1(OpKind::MaxPool2dBackward, dil, {F32({1, 2, 3, 5}), F32({1, 2, 7, 7})}),
            F32({1, 2, 7, 7}));
  expect_rule_error(ErrorKind::Shape, OpKind::MaxPool2dBackward, k32,
                    {F32({2, 3, 3, 3}), F32({2, 3, 7, 6})}, "dy");
  expect_rule_error(ErrorKind::Value, OpKind::MaxPool2dBackward,
                    Attrs().set("kernel", Shape{3, 2, 2}), {F32({2, 3, 2, 3}), F32({2, 3, 7, 6})},
                    "kernel length");
  expect_rule_error(ErrorKind::Value, OpKind::MaxPool2dBackward, Attrs().set("kernel", Shape{0, 2}),
                    {F32({2, 3, 2, 3}), F32({2, 3, 7, 6})}, "kernel 0");
  expect_rule_error(ErrorKind::Value, OpKind::MaxPool2dBackward,
                    Attrs().set("kernel", Shape{2, 2}).set("pads", Shape{2, 0}),
                    {F32({2, 3, 5, 3}), F32({2, 3, 7, 6})}, "pad > kernel/2");
  expect_rule_error(ErrorKind::Shape, OpKind::MaxPool2dBackward, k32, {F32({2, 3}), F32({7, 6})},
                    "rank 2 x");
  expect_rule_error(ErrorKind::Shape, OpKind::MaxPool2dBackward, Attrs().set("kernel", Shape{9, 2}),
                    {F32({2, 3, 0, 3}), F32({2, 3, 7, 6})}, "kernel larger than input");
  expect_rule_error(ErrorKind::DType, OpKind::MaxPool2dBackward, k32,
                    {T(DType::F16, {2, 3, 2, 3}), F32({2, 3, 7, 6})}, "dy dtype");

  Attrs k3 = Attrs().set("kernel", Shape{2, 3, 2}).set("strides", Shape{1, 2, 3});
  EXPECT_EQ(infer1(OpKind::MaxPool3dBackward, k3, {F32({2, 2, 4, 2, 2}), F32({2, 2, 5, 6, 7})}),
            F32({2, 2, 5, 6, 7}));
  expect_rule_error(ErrorKind::Shape, OpKind::MaxPool3dBackward, k3,
                    {F32({2, 4, 2, 2}), F32({2, 5, 6, 7, 1, 1})}, "rank 6 x");
}

TEST(TrainingShapeRules, ConvBackward) {
  // x [2,4,7,9] * w [6,2,3,3], groups 2, strides [2,1], ONNX pads [hb, wb, he, we] = [1,0,1,2].
  Attrs a = Attrs()
                .set("input_shape", Shape{2, 4, 7, 9})
                .set("strides", Shape{2, 1})
                .set("pads", Shape{1, 0, 1, 2})
                .set("groups", 2);
  In w = F32({6, 2, 3, 3});
  EXPECT_EQ(infer1(OpKind::Conv2dBackwardInput, a, {F32({2, 6, 4, 9}), w}), F32({2, 4, 7, 9}));
  expect_rule_error(ErrorKind::Shape, OpKind::Conv2dBackwardInput, a, {F32({2, 6, 4, 8}), w},
                    "dy spatial");
  expect_rule_error(ErrorKind::Shape, OpKind::Conv2dBackwardInput, a, {F32({3, 6, 4, 9}), w},
                    "dy batch");
  expect_rule_error(ErrorKind::Shape, OpKind::Conv2dBackwardInput, a,
                    {F32({2, 6, 4, 9}), F32({6, 3, 3, 3})}, "w channels per group");
  Attrs g3 = a;
  g3.set("groups", 3);
  expect_rule_error(ErrorKind::Shape, OpKind::Conv2dBackwardInput, g3, {F32({2, 6, 4, 9}), w},
                    "groups not dividing C");
  Attrs bad_shape = a;
  bad_shape.set("input_shape", Shape{2, 4, 7});
  expect_rule_error(ErrorKind::Value, OpKind::Conv2dBackwardInput, bad_shape,
                    {F32({2, 6, 4, 9}), w}, "input_shape rank");
  Attrs bad_stride = a;
  bad_stride.set("strides", Shape{0, 1});
  expect_rule_error(ErrorKind::Value, OpKind::Conv2dBackwardInput, bad_stride,
                    {F32({2, 6, 4, 9}), w}, "stride 0");
  Attrs bad_pads = a;
  bad_pads.set("pads", Shape{1, 0, 1});
  expect_rule_error(ErrorKind::Value, OpKind::Conv2dBackwardInput, bad_pads, {F32({2, 6, 4, 9}), w},
                    "pads length");
  expect_rule_error(ErrorKind::DType, OpKind::Conv2dBackwardInput, a,
                    {T(DType::F64, {2, 6, 4, 9}), w}, "dtype mix");
  expect_rule_error(ErrorKind::Shape, OpKind::Conv2dBackwardInput, a, {F32({2, 6, 4}), w},
                    "dy rank");
  // Dilation 2, symmetric pads: H = (7 + 2 - 4 - 1)/1 + 1 = 5.
  Attrs d = Attrs()
                .set("input_shape", Shape{1, 2, 7, 7})
                .set("pads", Shape{1, 1})
                .set("dilations", Shape{2, 2});
  EXPECT_EQ(infer1(OpKind::Conv2dBackwardInput, d, {F32({1, 5, 5, 5}), F32({5, 2, 3, 3})}),
            F32({1, 2, 7, 7}));

  Attrs wonly = Attrs()
                    .set("weight_shape", Shape{6, 2, 3, 3})
                    .set("strides", Shape{2, 1})
                    .set("pads", Shape{1, 0, 1, 2})
                    .set("groups", 2);
  EXPECT_EQ(infer1(OpKind::Conv2dBackwardWeight, wonly, {F32({2, 6, 4, 9}), F32({2, 4, 7, 9})}),
            F32({6, 2, 3, 3}));
  Attrs wbad = wonly;
  wbad.set("weight_shape", Shape{6, 4, 3, 3});
  expect_rule_error(ErrorKind::Shape, OpKind::Conv2dBackwardWeight, wbad,
                    {F32({2, 6, 4, 9}), F32({2, 4, 7, 9})}, "weight_shape channels");
  expect_rule_error(ErrorKind::Shape, OpKind::Conv2dBackwardWeight, wonly,
                    {F32({2, 6, 5, 9}), F32({2, 4, 7, 9})}, "dy spatial");

  Attrs c3 = Attrs().set("input_shape", Shape{1, 3, 4, 5, 6});
  EXPECT_EQ(infer1(OpKind::Conv3dBackwardInput, c3, {F32({1, 2, 3, 4, 5}), F32({2, 3, 2, 2, 2})}),
            F32({1, 3, 4, 5, 6}));
  Attrs w3 = Attrs().set("weight_shape", Shape{2, 3, 2, 2, 2});
  EXPECT_EQ(infer1(OpKind::Conv3dBackwardWeight, w3, {F32({1, 2, 3, 4, 5}), F32({1, 3, 4, 5, 6})}),
            F32({2, 3, 2, 2, 2}));
  expect_rule_error(ErrorKind::Shape, OpKind::Conv3dBackwardWeight, w3,
                    {F32({1, 2, 3, 4}), F32({1, 3, 4, 5, 6})}, "dy rank 4");
}

TEST(TrainingShapeRules, SoftmaxCrossEntropyBackward) {
  In logits = F32({4, 5}), labels = T(DType::I64, {4});
  EXPECT_EQ(infer1(OpKind::SoftmaxCrossEntropyBackward, Attrs(), {F32({}), logits, labels}),
            F32({4, 5}));
  Attrs none = Attrs().set("reduction", Reduction::None);
  EXPECT_EQ(infer1(OpKind::SoftmaxCrossEntropyBackward, none,
                   {F32({2, 4}), F32({2, 3, 4}), T(DType::I32, {2, 4})}),
            F32({2, 3, 4}));
  expect_rule_error(ErrorKind::Shape, OpKind::SoftmaxCrossEntropyBackward, none,
                    {F32({}), logits, labels}, "dloss of a reduced loss with reduction None");
  expect_rule_error(ErrorKind::DType, OpKind::SoftmaxCrossEntropyBackward, Attrs(),
                    {F32({}), logits, F32({4})}, "float labels");
  expect_rule_error(ErrorKind::DType, OpKind::SoftmaxCrossEntropyBackward, Attrs(),
                    {T(DType::F64, {}), logits, labels}, "dloss dtype");
  expect_rule_error(ErrorKind::Value, OpKind::SoftmaxCrossEntropyBackward,
                    Attrs().set("label_smoothing", 2.0), {F32({}), logits, labels},
                    "label_smoothing");
}

TEST(TrainingShapeRules, AttentionBackward) {
  In q = F32({2, 4, 5, 3}), k = F32({2, 2, 7, 3}), v = F32({2, 2, 7, 6}), dy = F32({2, 4, 5, 6});
  auto wrt = [](AttentionBwdWrt w) { return Attrs().set("wrt", w); };
  EXPECT_EQ(infer1(OpKind::AttentionBackward, wrt(AttentionBwdWrt::Query), {dy, q, k, v}), *q);
  EXPECT_EQ(infer1(OpKind::AttentionBackward, wrt(AttentionBwdWrt::Key), {dy, q, k, v}), *k);
  EXPECT_EQ(infer1(OpKind::AttentionBackward, wrt(AttentionBwdWrt::Value), {dy, q, k, v}), *v);
  Attrs custom = wrt(AttentionBwdWrt::Query).set("mask_kind", MaskKind::Custom);
  EXPECT_EQ(infer1(OpKind::AttentionBackward, custom, {dy, q, k, v, T(DType::Bool, {2, 7})}), *q);
  EXPECT_EQ(infer1(OpKind::AttentionBackward, custom, {dy, q, k, v, T(DType::Bool, {2, 1, 5, 7})}),
            *q);
  Attrs bias = wrt(AttentionBwdWrt::Key).set("mask_kind", MaskKind::Bias);
  EXPECT_EQ(infer1(OpKind::AttentionBackward, bias, {dy, q, k, v, F32({1, 4, 5, 7})}), *k);
  Attrs window = wrt(AttentionBwdWrt::Value)
                     .set("mask_kind", MaskKind::SlidingWindow)
                     .set("window", int64_t{2});
  EXPECT_EQ(infer1(OpKind::AttentionBackward, window, {dy, q, k, v}), *v);

  Attrs plain = wrt(AttentionBwdWrt::Query);
  expect_rule_error(ErrorKind::Value, OpKind::AttentionBackward, plain, {dy, q, k, v, F32({2, 7})},
                    "mask without kind");
  expect_rule_error(ErrorKind::Value, OpKind::AttentionBackward, custom, {dy, q, k, v},
                    "Custom without mask");
  expect_rule_error(ErrorKind::Shape, OpKind::AttentionBackward, custom,
                    {dy, q, k, v, T(DType::Bool, {3, 7})}, "mask shape");
  expect_rule_error(ErrorKind::DType, OpKind::AttentionBackward, bias,
                    {dy, q, k, v, T(DType::Bool, {2, 7})}, "bool bias");
  expect_rule_error(ErrorKind::Shape, OpKind::AttentionBackward, plain,
                    {dy, q, F32({2, 3, 7, 3}), F32({2, 3, 7, 6})}, "kv heads not dividing");
  expect_rule_error(ErrorKind::Shape, OpKind::AttentionBackward, plain,
                    {F32({2, 4, 5, 3}), q, k, v}, "dy");
  expect_rule_error(ErrorKind::Shape, OpKind::AttentionBackward, plain,
                    {dy, q, F32({2, 2, 7, 4}), v}, "k head dim");
  expect_rule_error(ErrorKind::Shape, OpKind::AttentionBackward, plain,
                    {dy, q, k, F32({2, 2, 6, 6})}, "v length");
  expect_rule_error(ErrorKind::Shape, OpKind::AttentionBackward, plain,
                    {F32({4, 5, 6}), F32({4, 5, 3}), k, v}, "rank 3");
  expect_rule_error(ErrorKind::DType, OpKind::AttentionBackward, plain,
                    {dy, q, T(DType::F16, {2, 2, 7, 3}), v}, "k dtype");
  Attrs neg = plain;
  neg.set("window", int64_t{-1});
  expect_rule_error(ErrorKind::Value, OpKind::AttentionBackward, neg, {dy, q, k, v}, "window < 0");
}

TEST(TrainingShapeRules, NormBackward) {
  In x = F32({2, 3, 4});
  for (OpKind input : {OpKind::LayerNormBackwardInput, OpKind::RmsNormBackwardInput}) {
    EXPECT_EQ(infer1(input, Attrs(), {x, x, F32({4})}), *x) << op_name(input);
    EXPECT_EQ(infer1(input, Attrs(), {x, x, std::nullopt}), *x) << op_name(input);
    EXPECT_EQ(infer1(input, Attrs().set("axis", int64_t{1}), {x, x, F32({3, 4})}), *x)
        << op_name(input);
    expect_rule_error(ErrorKind::Shape, input, Attrs(), {x, x, F32({3})}, "gamma");
    expect_rule_error(ErrorKind::Shape, input, Attrs().set("axis", int64_t{3}), {x, x, F32({4})},
                      "axis");
    expect_rule_error(ErrorKind::Value, input, Attrs().set("eps", -1.0), {x, x, F32({4})}, "eps");
    expect_rule_error(ErrorKind::Shape, input, Attrs(), {F32({2, 3, 5}), x, F32({4})}, "dy");
    expect_rule_error(ErrorKind::Shape, input, Attrs(), {F32({}), F32({}), std::nullopt},
                      "scalar x");
  }
  for (OpKind gamma : {OpKind::LayerNormBackwardGamma, OpKind::RmsNormBackwardGamma}) {
    EXPECT_EQ(infer1(gamma, Attrs(), {x, x}), F32({4})) << op_name(gamma);
    EXPECT_EQ(infer1(gamma, Attrs().set("axis", int64_t{1}), {x, x}), F32({3, 4}))
        << op_name(gamma);
    expect_rule_error(ErrorKind::DType, gamma, Attrs(), {T(DType::F64, {2, 3, 4}), x}, "dy dtype");
  }
  EXPECT_EQ(infer1(OpKind::RmsNormBackwardBeta, Attrs().set("axis", int64_t{-2}), {x}),
            F32({3, 4}));

  In gx = F32({2, 6, 5});
  Attrs g3 = Attrs().set("groups", 3);
  EXPECT_EQ(infer1(OpKind::GroupNormBackwardInput, g3, {gx, gx, F32({6})}), *gx);
  EXPECT_EQ(infer1(OpKind::GroupNormBackwardGamma, g3, {gx, gx}), F32({6}));
  EXPECT_EQ(infer1(OpKind::GroupNormBackwardBeta, Attrs(), {gx}), F32({6}));
  expect_rule_error(ErrorKind::Shape, OpKind::GroupNormBackwardInput, Attrs().set("groups", 4),
                    {gx, gx, F32({6})}, "groups not dividing C");
  expect_rule_error(ErrorKind::Value, OpKind::GroupNormBackwardGamma, Attrs().set("groups", 0),
                    {gx, gx}, "groups 0");
  expect_rule_error(ErrorKind::Shape, OpKind::GroupNormBackwardInput, g3, {gx, gx, F32({3})},
                    "gamma");
  expect_rule_error(ErrorKind::Shape, OpKind::GroupNormBackwardBeta, Attrs(), {F32({6})}, "rank 1");

  In bx = F32({2, 3, 4, 4});
  EXPECT_EQ(infer1(OpKind::BatchNormInferenceBackwardInput, Attrs(), {bx, F32({3}), F32({3})}),
            *bx);
  EXPECT_EQ(infer1(OpKind::BatchNormInferenceBackwardInput, Attrs(), {bx, F32({3}), std::nullopt}),
            *bx);
  EXPECT_EQ(infer1(OpKind::BatchNormInferenceBackwardGamma, Attrs(), {bx, bx, F32({3}), F32({3})}),
            F32({3}));
  EXPECT_EQ(infer1(OpKind::BatchNormInferenceBackwardBeta, Attrs(), {bx}), F32({3}));
  expect_rule_error(ErrorKind::Shape, OpKind::BatchNormInferenceBackwardInput, Attrs(),
                    {bx, F32({4}), F32({3})}, "var");
  expect_rule_error(ErrorKind::Shape, OpKind::BatchNormInferenceBackwardGamma, Attrs(),
                    {bx, bx, F32({3, 1}), F32({3})}, "mean");
  expect_rule_error(ErrorKind::DType, OpKind::BatchNormInferenceBackwardGamma, Attrs(),
                    {bx, bx, F32({3}), T(DType::F64, {3})}, "var dtype");
}

TEST(TrainingShapeRules, RopeBackward) {
  In dy = F32({2, 3, 5, 8});
  EXPECT_EQ(infer1(OpKind::RopeBackward, Attrs(), {dy, std::nullopt}), *dy);
  EXPECT_EQ(
      infer1(OpKind::RopeBackward, Attrs().set("rotary_dim", int64_t{4}), {dy, T(DType::I64, {5})}),
      *dy);
  EXPECT_EQ(infer1(OpKind::RopeBackward, Attrs().set("style", RopeStyle::GptJ), {dy, F32({5})}),
            *dy);
  expect_rule_error(ErrorKind::Value, OpKind::RopeBackward, Attrs().set("rotary_dim", int64_t{3}),
                    {dy, std::nullopt}, "odd rotary_dim");
  expect_rule_error(ErrorKind::Value, OpKind::RopeBackward, Attrs().set("rotary_dim", int64_t{10}),
                    {dy, std::nullopt}, "rotary_dim > D");
  expect_rule_error(ErrorKind::Value, OpKind::RopeBackward, Attrs(), {F32({5, 7}), std::nullopt},
                    "odd D");
  expect_rule_error(ErrorKind::Value, OpKind::RopeBackward, Attrs().set("base", 0.0),
                    {dy, std::nullopt}, "base 0");
  expect_rule_error(ErrorKind::Shape, OpKind::RopeBackward, Attrs(), {dy, T(DType::I64, {4})},
                    "positions length");
  expect_rule_error(ErrorKind::Shape, OpKind::RopeBackward, Attrs(), {F32({8}), std::nullopt},
                    "rank 1");
}

TEST(TrainingShapeRules, DitBackward) {
  In x = F32({2, 5, 8}), bd = F32({2, 8});
  auto ada = infer_types(OpKind::AdaLayerNormBackward, Attrs(), {x, x, bd, bd});
  ASSERT_EQ(ada.size(), 3u);
  EXPECT_EQ(ada[0], *x);
  EXPECT_EQ(ada[1], *bd);
  EXPECT_EQ(ada[2], *bd);
  expect_rule_error(ErrorKind::Shape, OpKind::AdaLayerNormBackward, Attrs(),
                    {x, x, F32({5, 8}), bd}, "scale");
  expect_rule_error(ErrorKind::Shape, OpKind::AdaLayerNormBackward, Attrs(),
                    {F32({5, 8}), F32({5, 8}), bd, bd}, "rank 2");
  expect_rule_error(ErrorKind::DType, OpKind::AdaLayerNormBackward, Attrs(),
                    {x, x, bd, T(DType::F64, {2, 8})}, "shift");

  auto gr = infer_types(OpKind::GatedResidualBackward, Attrs(), {x, x, x, bd});
  ASSERT_EQ(gr.size(), 3u);
  EXPECT_EQ(gr[0], *x);
  EXPECT_EQ(gr[1], *x);
  EXPECT_EQ(gr[2], *bd);
  EXPECT_EQ(infer_types(OpKind::GatedResidualBackward, Attrs(), {x, x, x, F32({2, 1, 8})})[2],
            F32({2, 1, 8}));
  EXPECT_EQ(infer_types(OpKind::GatedResidualBackward, Attrs(), {x, x, x, F32({8})})[2], F32({8}));
  expect_rule_error(ErrorKind::Shape, OpKind::GatedResidualBackward, Attrs(),
                    {x, x, x, F32({5, 8})}, "gate [S,D]");
  expect_rule_error(ErrorKind::Shape, OpKind::GatedResidualBackward, Attrs(),
                    {x, x, F32({2, 5, 7}), bd}, "y");
  expect_rule_error(ErrorKind::Shape, OpKind::GatedResidualBackward, Attrs(),
                    {x, x, x, F32({3, 5, 8})}, "gate grows x");
}

TEST(TrainingShapeRules, LossBackwardAndMetric) {
  In x = F32({3, 4});
  Attrs mse = Attrs().set("kind", LossKind::Mse);
  EXPECT_EQ(infer1(OpKind::LossBackward, mse, {F32({}), x, x}), *x);
  Attrs none = Attrs().set("kind", LossKind::KlDiv).set("reduction", Reduction::None);
  EXPECT_EQ(infer1(OpKind::LossBackward, none, {x, x, x}), *x);
  expect_rule_error(ErrorKind::Shape, OpKind::LossBackward, none, {F32({}), x, x},
                    "dloss for reduction None");
  expect_rule_error(ErrorKind::Shape, OpKind::LossBackward, mse, {F32({}), x, F32({4, 3})},
                    "target");
  expect_rule_error(ErrorKind::DType, OpKind::LossBackward, mse,
                    {T(DType::I64, {}), T(DType::I64, {3, 4}), T(DType::I64, {3, 4})},
                    "integer input");
  expect_rule_error(ErrorKind::Value, OpKind::LossBackward,
                    Attrs().set("kind", LossKind::Huber).set("delta", 0.0), {F32({}), x, x},
                    "Huber delta");

  In logits = F32({6, 4}), labels = T(DType::I64, {6});
  for (int k = 0; k < 3; ++k)
    for (int avg = 0; avg < 3; ++avg)
      EXPECT_EQ(
          infer1(OpKind::Metric, Attrs().set("kind", k).set("average", avg), {logits, labels}),
          F32({}));
  EXPECT_EQ(infer1(OpKind::Metric, Attrs().set("kind", MetricKind::Accuracy),
                   {T(DType::I32, {6}), labels}),
            F32({}));
  EXPECT_EQ(
      infer1(OpKind::Metric, Attrs().set("kind", MetricKind::F1).set("num_classes", int64_t{4}),
             {T(DType::I64, {6}), labels}),
      F32({}));
  expect_rule_error(ErrorKind::DType, OpKind::Metric, Attrs().set("kind", MetricKind::Perplexity),
                    {T(DType::I64, {6}), labels}, "perplexity of class ids");
  expect_rule_error(ErrorKind::Shape, OpKind::Metric, Attrs().set("kind", MetricKind::Accuracy),
                    {logits, T(DType::I64, {5})}, "row count");
  expect_rule_error(ErrorKind::Shape, OpKind::Metric,
                    Attrs().set("kind", MetricKind::F1).set("num_classes", int64_t{3}),
                    {logits, labels}, "num_classes vs C");
  expect_rule_error(ErrorKind::Value, OpKind::Metric,
                    Attrs().set("kind", MetricKind::F1).set("num_classes", int64_t{-1}),
                    {logits, labels}, "negative num_classes");
  expect_rule_error(ErrorKind::DType, OpKind::Metric, Attrs().set("kind", MetricKind::Accuracy),
                    {logits, F32({6})}, "float labels");
  expect_rule_error(ErrorKind::Shape, OpKind::Metric, Attrs().set("kind", MetricKind::Accuracy),
                    {F32({6, 4, 2}), labels}, "rank-3 logits");
}

TEST(TrainingShapeRules, OptimizerStep) {
  In p = F32({3, 4});
  auto step = [&](OptimizerKind kind, int states, Attrs extra = Attrs()) {
    extra.set("kind", kind).set("lr", 0.1);
    std::vector<In> ins{p, p};
    for (int i = 0; i < states; ++i) ins.push_back(p);
    return infer_types(OpKind::OptimizerStep, extra, ins);
  };
  struct Case {
    OptimizerKind kind;
    int states;
  };
  // SGD and LARS without momentum keep no state: their one state input passes through.
  for (Case c :
       {Case{OptimizerKind::Sgd, 1}, Case{OptimizerKind::Adam, 2}, Case{OptimizerKind::AdamW, 2},
        Case{OptimizerKind::Adamax, 2}, Case{OptimizerKind::Adagrad, 1},
        Case{OptimizerKind::Adadelta, 2}, Case{OptimizerKind::RmsProp, 1},
        Case{OptimizerKind::Lion, 1}, Case{OptimizerKind::Lamb, 2}, Case{OptimizerKind::Lars, 1}}) {
    auto outs = step(c.kind, c.states);
    ASSERT_EQ(outs.size(), static_cast<size_t>(1 + c.states)) << static_cast<int>(c.kind);
    for (const TensorType& t : outs) EXPECT_EQ(t, *p);
  }
  EXPECT_EQ(step(OptimizerKind::RmsProp, 2, Attrs().set("momentum", 0.9)).size(), 3u);
  EXPECT_EQ(
      step(OptimizerKind::RmsProp, 3, Attrs().set("momentum", 0.9).set("centered", true)).size(),
      4u);
  EXPECT_EQ(step(OptimizerKind::Adam, 3, Attrs().set("amsgrad", true)).size(), 4u);
  EXPECT_EQ(step(OptimizerKind::Sgd, 1, Attrs().set("momentum", 0.9).set("nesterov", true)).size(),
            2u);
  // States may be wider than the parameter.
  auto mixed =
      infer_types(OpKind::OptimizerStep, Attrs().set("kind", OptimizerKind::Adam).set("lr", 1e-3),
                  {T(DType::BF16, {8}), T(DType::BF16, {8}), F32({8}), F32({8})});
  ASSERT_EQ(mixed.size(), 3u);
  EXPECT_EQ(mixed[0], T(DType::BF16, {8}));
  EXPECT_EQ(mixed[1], F32({8}));
  // L-BFGS and Hebbian are not per-tensor gradient steps: refused, naming the API to use.
  expect_error(
      ErrorKind::Unsupported, [&] { step(OptimizerKind::Lbfgs, 3); }, "Lbfgs", "tessel::LBFGS");
  expect_error(
      ErrorKind::Unsupported, [&] { step(OptimizerKind::Hebbian, 1); }, "Hebbian",
      "tessel::hebbian_update");

  Attrs adam = Attrs().set("kind", OptimizerKind::Adam).set("lr", 0.1);
  expect_rule_error(ErrorKind::Value, OpKind::OptimizerStep, adam, {p, p, p},
                    "Adam with one state");
  expect_rule_error(ErrorKind::Value, OpKind::OptimizerStep, adam, {p, p, p, p, p},
                    "Adam with three states");
  expect_rule_error(
      ErrorKind::Value, OpKind::OptimizerStep,
      Attrs().set("kind", OptimizerKind::RmsProp).set("lr", 0.1).set("centered", true), {p, p, p},
      "centered RMSprop with one state");
  expect_rule_error(ErrorKind::Shape, OpKind::OptimizerStep, adam, {p, F32({4, 3}), p, p},
                    "grad shape");
  expect_rule_error(ErrorKind::DType, OpKind::OptimizerStep, adam, {p, T(DType::F64, {3, 4}), p, p},
                    "grad dtype");
  expect_rule_error(ErrorKind::Shape, OpKind::OptimizerStep, adam, {p, p, p, F32({3})},
                    "state shape");
  expect_rule_error(ErrorKind::DType, OpKind::OptimizerStep, adam,
                    {T(DType::I32, {3, 4}), T(DType::I32, {3, 4}), p, p}, "integer param");
  expect_rule_error(ErrorKind::DType, OpKind::OptimizerStep, adam,
                    {T(DType::F8E4M3FN, {3, 4}), T(DType::F8E4M3FN, {3, 4}), p, p}, "fp8 param");
  expect_rule_error(ErrorKind::Value, OpKind::OptimizerStep, adam, {p, p, std::nullopt, p},
                    "absent state");
  Attrs neg_lr = adam;
  neg_lr.set("lr", -1.0);
  expect_rule_error(ErrorKind::Value, OpKind::OptimizerStep, neg_lr, {p, p, p, p}, "negative lr");
  Attrs beta = adam;
  beta.set("beta1", 1.0);
  expect_rule_error(ErrorKind::Value, OpKind::OptimizerStep, beta, {p, p, p, p}, "beta1 = 1");
  Attrs nesterov = adam;
  nesterov.set("nesterov", true);
  expect_rule_error(ErrorKind::Value, OpKind::OptimizerStep, nesterov, {p, p, p, p},
                    "nesterov with Adam");
  expect_rule_error(ErrorKind::Value, OpKind::OptimizerStep,
                    Attrs().set("kind", OptimizerKind::Sgd).set("lr", 0.1).set("nesterov", true),
                    {p, p, p}, "nesterov without momentum");
  Attrs amsgrad = Attrs().set("kind", OptimizerKind::Lion).set("lr", 0.1).set("amsgrad", true);
  expect_rule_error(ErrorKind::Value, OpKind::OptimizerStep, amsgrad, {p, p, p}, "amsgrad Lion");
  Attrs step0 = adam;
  step0.set("step", int64_t{0});
  expect_rule_error(ErrorKind::Value, OpKind::OptimizerStep, step0, {p, p, p, p}, "step 0");
}

TEST(TrainingShapeRules, FreezeAndGraft) {
  In x = F32({2, 3});
  EXPECT_EQ(infer1(OpKind::Freeze, Attrs(), {x, std::nullopt}), *x);
  EXPECT_EQ(infer1(OpKind::Freeze, Attrs(), {x, T(DType::Bool, {3})}), *x);
  EXPECT_EQ(infer1(OpKind::Freeze, Attrs(), {T(DType::I64, {2, 3}), T(DType::Bool, {2, 1})}),
            T(DType::I64, {2, 3}));
  expect_rule_error(ErrorKind::Shape, OpKind::Freeze, Attrs(), {x, T(DType::Bool, {4})},
                    "mask not broadcasting");
  expect_rule_error(ErrorKind::Shape, OpKind::Freeze, Attrs(), {x, T(DType::Bool, {2, 2, 3})},
                    "mask growing x");
  expect_rule_error(ErrorKind::DType, OpKind::Freeze, Attrs(), {x, T(DType::C64, {2, 3})},
                    "complex mask");

  EXPECT_EQ(infer1(OpKind::Graft, Attrs(), {x, x}), *x);
  EXPECT_EQ(infer1(OpKind::Graft, Attrs(), {T(DType::I8, {4}), T(DType::I8, {4})}),
            T(DType::I8, {4}));
  expect_rule_error(ErrorKind::Shape, OpKind::Graft, Attrs(), {x, F32({3, 2})}, "src shape");
  expect_rule_error(ErrorKind::DType, OpKind::Graft, Attrs(), {x, T(DType::F64, {2, 3})},
                    "src dtype");
}

}  // namespace
}  // namespace tessel::testing
