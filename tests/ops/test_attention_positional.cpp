// AttentionPositional: Attention (every MaskKind, GQA/MQA), Rope (NeoX, GptJ), AxialRope2d and
// ALiBi on the reference backend, against PyTorch goldens
// (tests/goldens/gen_attention_positional.py) and hand-computed values, with non-contiguous and
// broadcast inputs and bad-input errors.
#include <cmath>
#include <map>

#include "op_test_util.h"

namespace tessel::testing {
namespace {

using nlohmann::json;

auto runner(OpKind k, Attrs a, std::vector<HostTensor> in) {
  return [=] { run_op1(k, a, in); };
}

struct Case {
  OpKind kind;
  Attrs attrs;
  std::vector<HostTensor> inputs;
};

Case make_case(const json& c) {
  const std::string op = c.at("op");
  if (op == "Attention") {
    Attrs a;
    a.set("mask_kind", variant_id(VariantEnum::MaskKind, c.at("mask_kind")));
    a.set("scale", c.at("scale").get<double>()).set("window", c.at("window").get<int64_t>());
    return {OpKind::Attention,
            a,
            {tensor_from_json(c.at("q")), tensor_from_json(c.at("k")), tensor_from_json(c.at("v")),
             optional_tensor(c, "mask")}};
  }
  if (op == "Rope") {
    Attrs a;
    a.set("style", variant_id(VariantEnum::RopeStyle, c.at("style")));
    a.set("base", c.at("base").get<double>()).set("rotary_dim", c.at("rotary_dim").get<int64_t>());
    return {OpKind::Rope, a, {tensor_from_json(c.at("x")), optional_tensor(c, "positions")}};
  }
  if (op == "AxialRope2d") {
    Attrs a;
    a.set("grid_h", c.at("grid_h").get<int64_t>()).set("grid_w", c.at("grid_w").get<int64_t>());
    a.set("base", c.at("base").get<double>());
    return {OpKind::AxialRope2d, a, {tensor_from_json(c.at("x"))}};
  }
  if (op == "ALiBi")
    return {OpKind::ALiBi,
            Attrs().set("max_bias", c.at("max_bias").get<double>()),
            {tensor_from_json(c.at("scores"))}};
  throw std::runtime_error("unknown golden op " + op);
}

TEST(AttentionPositional, MatchesTorchGoldens) {
  std::map<std::string, int> counts;
  for (const json& c : golden_cases_of("attention_positional")) {
    Case k = make_case(c);
    HostTensor expected = tensor_from_json(c.at("y"));
    std::string what = c.at("op").get<std::string>() + " " + c.value("name", std::string());
    expect_golden_layouts(k.kind, k.attrs, k.inputs, expected, 1e-12, what);
    std::string key = c.at("op");
    if (key == "Attention") key += "/" + c.at("mask_kind").get<std::string>();
    if (key == "Rope") key += "/" + c.at("style").get<std::string>();
    ++counts[key];
  }
  // Every variant of every kind is covered.
  for (const char* key :
       {"Attention/None", "Attention/Causal", "Attention/SlidingWindow", "Attention/Custom",
        "Attention/Bias", "Rope/NeoX", "Rope/GptJ", "AxialRope2d", "ALiBi"})
    EXPECT_GE(counts[key], 2) << key << " has too few golden cases";
}

TEST(AttentionPositional, GoldensInFloat32) {
  for (const json& c : golden_cases_of("attention_positional")) {
    Case k = make_case(c);
    expect_golden_in(DType::F32, k.kind, k.attrs, k.inputs, tensor_from_json(c.at("y")), 1e-5, 1e-5,
                     c.at("op").get<std::string>() + " " + c.value("name", std::string()));
  }
}

// ---------------------------------------------------------------------------------------------
// Attention

TEST(AttentionPositional, AttentionHandComputed) {
  // D = 1, scale 1: scores [0, ln 3] -> probs [1/4, 3/4]; v [4, 8] -> 1 + 6 = 7.
  HostTensor q = f64({1, 1, 1, 1}, {1}), k = f64({1, 1, 2, 1}, {0, std::log(3.0)});
  HostTensor v = f64({1, 1, 2, 1}, {4, 8});
  expect_close(run_op1(OpKind::Attention, Attrs().set("scale", 1.0), {q, k, v}), {7}, 1e-14, 1e-14);
  // scale 0 means 1/sqrt(D): D = 4, q·k = 4·ln 3 · 1/2 per key 1 -> scores [0, 2 ln 3] -> [1/10,
  // 9/10].
  HostTensor q4 = f64({1, 1, 1, 4}, {1, 1, 1, 1});
  double l = std::log(3.0);
  HostTensor k4 = f64({1, 1, 2, 4}, {0, 0, 0, 0, l, l, l, l});
  expect_close(run_op1(OpKind::Attention, Attrs(), {q4, k4, v}), {0.4 + 7.2}, 1e-14, 1e-14);
  // A Bias mask adds to the scores: bias [ln 3, 0] cancels the score gap -> probs [1/2, 1/2].
  HostTensor bias = f64({1, 1, 1, 2}, {l, 0});
  expect_close(run_op1(OpKind::Attention,
                       Attrs().set("scale", 1.0).set("mask_kind", MaskKind::Bias), {q, k, v, bias}),
               {6}, 1e-14, 1e-14);
}

TEST(AttentionPositional, RowsWithNoVisibleKeyAreZero) {
  // Causal, Sq = 3 > Sk = 2: query i sees keys j <= i - 1, so row 0 sees nothing (zeros, not
  // NaN), row 1 sees key 0 only (= v[0]) and row 2 sees both (a weighted mean).
  HostTensor q = random_tensor(DType::F64, {1, 1, 3, 2}, 1);
  HostTensor k = random_tensor(DType::F64, {1, 1, 2, 2}, 2);
  HostTensor v = f64({1, 1, 2, 2}, {1, 2, 3, 4});
  HostTensor y = run_op1(OpKind::Attention, Attrs().set("mask_kind", MaskKind::Causal), {q, k, v});
  ASSERT_EQ(y.shape, (Shape{1, 1, 3, 2}));
  EXPECT_EQ(y.get_f64(0), 0.0);
  EXPECT_EQ(y.get_f64(1), 0.0);
  EXPECT_DOUBLE_EQ(y.get_f64(2), 1.0);
  EXPECT_DOUBLE_EQ(y.get_f64(3), 2.0);
  EXPECT_GT(y.get_f64(4), 1.0);
  EXPECT_LT(y.get_f64(4), 3.0);
  // A Custom mask that hides every key, and a Bias of -inf everywhere, also give zeros.
  HostTensor none = HostTensor::empty(DType::Bool, {1, 1, 1, 2});
  HostTensor y2 =
      run_op1(OpKind::Attention, Attrs().set("mask_kind", MaskKind::Custom), {q, k, v, none});
  for (int64_t i = 0; i < y2.numel(); ++i) EXPECT_EQ(y2.get_f64(i), 0.0) << i;
  HostTensor neg_inf = f64({2}, {-INFINITY, -INFINITY});
  HostTensor y3 =
      run_op1(OpKind::Attention, Attrs().set("mask_kind", MaskKind::Bias), {q, k, v, neg_inf});
  for (int64_t i = 0; i < y3.numel(); ++i) EXPECT_EQ(y3.get_f64(i), 0.0) << i;
}

TEST(AttentionPositional, GroupedQueryHeadsReadTheirKvHead) {
  // Sk = 1: each output is its kv head's single value row. Hq = 4, Hkv = 2: heads 0, 1 read kv
  // head 0 and heads 2, 3 read kv head 1.
  HostTensor q = random_tensor(DType::F64, {2, 4, 3, 2}, 3);
  HostTensor k = random_tensor(DType::F64, {2, 2, 1, 2}, 4);
  HostTensor v = f64({2, 2, 1, 1}, {10, 20, 30, 40});
  HostTensor y = run_op1(OpKind::Attention, Attrs(), {q, k, v});
  ASSERT_EQ(y.shape, (Shape{2, 4, 3, 1}));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t i = 0; i < 3; ++i)
        EXPECT_DOUBLE_EQ(y.get_f64((b * 4 + h) * 3 + i), 10.0 * (2 * b + h / 2 + 1));
}

TEST(AttentionPositional, AttentionBroadcastInputs) {
  // k and v broadcast over the batch (stride 0) must equal materialized copies.
  HostTensor q = random_tensor(DType::F64, {3, 2, 4, 3}, 5);
  HostTensor k1 = random_tensor(DType::F64, {1, 1, 5, 3}, 6);
  HostTensor v1 = random_tensor(DType::F64, {1, 1, 5, 2}, 7);
  HostTensor kb = broadcast_view(k1, {3, 1, 5, 3}), vb = broadcast_view(v1, {3, 1, 5, 2});
  Attrs a = Attrs().set("mask_kind", MaskKind::SlidingWindow).set("window", 1);
  expect_close(run_op1(OpKind::Attention, a, {q, kb, vb}),
               run_op1(OpKind::Attention, a, {q, kb.contiguous(), vb.contiguous()}), 0, 0);
  // A broadcast mask view equals its materialized copy.
  HostTensor m = broadcast_view(random_tensor(DType::F64, {4, 5}, 8, -2, 2), {3, 2, 4, 5});
  Attrs bias = Attrs().set("mask_kind", MaskKind::Bias);
  expect_close(run_op1(OpKind::Attention, bias, {q, kb, vb, m}),
               run_op1(OpKind::Attention, bias, {q, kb, vb, m.contiguous()}), 0, 0);
}

TEST(AttentionPositional, AttentionBadInputs) {
  HostTensor q = random_tensor(DType::F32, {2, 4, 3, 5}, 1);
  HostTensor k = random_tensor(DType::F32, {2, 2, 6, 5}, 2);
  HostTensor v = random_tensor(DType::F32, {2, 2, 6, 4}, 3);
  HostTensor mask = HostTensor::empty(DType::Bool, {2, 1, 3, 6});
  Attrs custom = Attrs().set("mask_kind", MaskKind::Custom);
  Attrs bias = Attrs().set("mask_kind", MaskKind::Bias);
  expect_error(ErrorKind::Shape,
               runner(OpKind::Attention, Attrs(), {random_tensor(DType::F32, {4, 3, 5}, 4), k, v}),
               "rank-3 q");
  expect_error(
      ErrorKind::Shape,
      runner(OpKind::Attention, Attrs(), {random_tensor(DType::F32, {2, 3, 3, 5}, 4), k, v}),
      "Hq % Hkv != 0");
  expect_error(
      ErrorKind::Shape,
      runner(OpKind::Attention, Attrs(), {random_tensor(DType::F32, {2, 4, 3, 4}, 4), k, v}),
      "q and k head sizes differ");
  expect_error(
      ErrorKind::Shape,
      runner(OpKind::Attention, Attrs(), {q, k, random_tensor(DType::F32, {2, 2, 5, 4}, 4)}),
      "k and v lengths differ");
  expect_error(
      ErrorKind::Shape,
      runner(OpKind::Attention, Attrs(), {q, k, random_tensor(DType::F32, {1, 2, 6, 4}, 4)}),
      "batch sizes differ");
  expect_error(
      ErrorKind::DType,
      runner(OpKind::Attention, Attrs(), {q, k, random_tensor(DType::F64, {2, 2, 6, 4}, 4)}),
      "v of another dtype");
  expect_error(ErrorKind::DType,
               runner(OpKind::Attention, Attrs(),
                      {random_tensor(DType::I32, {2, 4, 3, 5}, 4, 0, 5),
                       random_tensor(DType::I32, {2, 2, 6, 5}, 4, 0, 5),
                       random_tensor(DType::I32, {2, 2, 6, 4}, 4, 0, 5)}),
               "integer attention");
  expect_error(ErrorKind::Value, runner(OpKind::Attention, custom, {q, k, v}),
               "Custom without mask");
  expect_error(ErrorKind::Value, runner(OpKind::Attention, bias, {q, k, v}), "Bias without mask");
  expect_error(ErrorKind::Value, runner(OpKind::Attention, Attrs(), {q, k, v, mask}),
               "a mask with mask_kind None");
  expect_error(
      ErrorKind::Value,
      runner(OpKind::Attention, Attrs().set("mask_kind", MaskKind::Causal), {q, k, v, mask}),
      "a mask with mask_kind Causal");
  expect_error(
      ErrorKind::Shape,
      runner(OpKind::Attention, custom, {q, k, v, HostTensor::empty(DType::Bool, {2, 1, 3, 5})}),
      "mask of the wrong Sk");
  expect_error(ErrorKind::Shape,
               runner(OpKind::Attention, custom, {q, k, v, HostTensor::empty(DType::Bool, {3, 6})}),
               "rank-2 mask whose batch is not B");
  expect_error(ErrorKind::DType, runner(OpKind::Attention, bias, {q, k, v, mask}), "bool Bias");
  expect_error(
      ErrorKind::Value,
      runner(OpKind::Attention, Attrs().set("mask_kind", MaskKind::SlidingWindow).set("window", -1),
             {q, k, v}),
      "negative window");
  // A rank-2 [B, Sk] mask and a rank-1 [Sk] mask are accepted.
  EXPECT_NO_THROW(
      run_op1(OpKind::Attention, custom, {q, k, v, HostTensor::empty(DType::Bool, {2, 6})}));
  EXPECT_NO_THROW(run_op1(OpKind::Attention, bias, {q, k, v, random_tensor(DType::F32, {6}, 9)}));
}

// ---------------------------------------------------------------------------------------------
// Rope / AxialRope2d

TEST(AttentionPositional, RopeHandComputed) {
  // D = 4, S = 1 at position 2, base 100: θ_0 = 2, θ_1 = 2 · 100^(-1/2) = 0.2.
  HostTensor x = f64({1, 4}, {1, 2, 3, 4});
  HostTensor pos = HostTensor::from_vector(DType::I32, {1}, std::vector<int32_t>{2});
  auto rot = [](double a, double b, double t) {
    return std::pair{a * std::cos(t) - b * std::sin(t), a * std::sin(t) + b * std::cos(t)};
  };
  Attrs neox = Attrs().set("base", 100.0);
  auto [a0, b0] = rot(1, 3, 2.0);  // NeoX pairs (0, 2), (1, 3)
  auto [a1, b1] = rot(2, 4, 0.2);
  expect_close(run_op1(OpKind::Rope, neox, {x, pos}), {a0, a1, b0, b1}, 1e-14, 1e-14);
  Attrs gptj = Attrs().set("base", 100.0).set("style", RopeStyle::GptJ);
  auto [c0, d0] = rot(1, 2, 2.0);  // GPT-J pairs (0, 1), (2, 3)
  auto [c1, d1] = rot(3, 4, 0.2);
  expect_close(run_op1(OpKind::Rope, gptj, {x, pos}), {c0, d0, c1, d1}, 1e-14, 1e-14);
  // rotary_dim 2: only (0, 1) rotates, by θ_0 = 2 in either style; channels 2, 3 pass through.
  auto [e0, f0] = rot(1, 2, 2.0);
  for (RopeStyle s : {RopeStyle::NeoX, RopeStyle::GptJ})
    expect_close(run_op1(OpKind::Rope, Attrs().set("rotary_dim", 2).set("style", s), {x, pos}),
                 {e0, f0, 3, 4}, 1e-14, 1e-14);
  // Position 0 (the default for row 0) is the identity.
  expect_close(run_op1(OpKind::Rope, neox, {x}), {1, 2, 3, 4}, 0, 0);
}

TEST(AttentionPositional, RopeBroadcastAndPositionDTypes) {
  // x broadcast over a leading axis; i64, i32 and f32 positions agree.
  HostTensor row = random_tensor(DType::F64, {1, 5, 6}, 12);
  HostTensor x = broadcast_view(row, {3, 5, 6});
  HostTensor p64 = i64({5}, {4, 1, 0, 9, 2});
  HostTensor p32 = HostTensor::from_vector(DType::I32, {5}, std::vector<int32_t>{4, 1, 0, 9, 2});
  HostTensor pf = f32({5}, {4, 1, 0, 9, 2});
  for (RopeStyle s : {RopeStyle::NeoX, RopeStyle::GptJ}) {
    Attrs a = Attrs().set("style", s);
    HostTensor y = run_op1(OpKind::Rope, a, {x, p64});
    HostTensor one = run_op1(OpKind::Rope, a, {row, p64});
    for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(y.get_f64(i), one.get_f64(i % 30)) << i;
    expect_close(run_op1(OpKind::Rope, a, {x, p32}), y, 0, 0);
    expect_close(run_op1(OpKind::Rope, a, {x, pf}), y, 0, 0);
  }
}

TEST(AttentionPositional, AxialRopeMatchesGptJRopePerHalf) {
  // grid_w = 1: token n sits at row n, column 0, so the first D/2 channels are GPT-J RoPE over
  // D/2 at position n (Rope with rotary_dim = D/2 uses the same base^(-2i/(D/2)) frequencies) and
  // the second half is unchanged. grid_h = 1: the first half is unchanged, the second is rotated.
  HostTensor x = random_tensor(DType::F64, {2, 5, 8}, 21);
  Attrs gptj = Attrs().set("style", RopeStyle::GptJ).set("base", 50.0);
  HostTensor rope4 = run_op1(OpKind::Rope, Attrs(gptj).set("rotary_dim", 4), {x});
  HostTensor rows = run_op1(OpKind::AxialRope2d,
                            Attrs().set("grid_h", 5).set("grid_w", 1).set("base", 50.0), {x});
  expect_close(rows, rope4, 1e-14, 1e-14, "grid_w = 1");
  HostTensor cols = run_op1(OpKind::AxialRope2d,
                            Attrs().set("grid_h", 1).set("grid_w", 5).set("base", 50.0), {x});
  HostTensor upper = HostTensor::empty(DType::F64, {2, 5, 4});
  for (int64_t r = 0; r < 10; ++r)
    for (int64_t c = 0; c < 4; ++c) upper.set_f64(r * 4 + c, x.get_f64(r * 8 + 4 + c));
  HostTensor upper_rot = run_op1(OpKind::Rope, gptj, {upper});
  for (int64_t r = 0; r < 10; ++r)
    for (int64_t c = 0; c < 4; ++c) {
      EXPECT_EQ(cols.get_f64(r * 8 + c), x.get_f64(r * 8 + c)) << r << "," << c;
      EXPECT_NEAR(cols.get_f64(r * 8 + 4 + c), upper_rot.get_f64(r * 4 + c), 1e-14);
    }
}

TEST(AttentionPositional, RopeBadInputs) {
  HostTensor x = random_tensor(DType::F32, {2, 5, 6}, 1);
  expect_error(ErrorKind::Value, runner(OpKind::Rope, Attrs().set("rotary_dim", 3), {x}),
               "odd rotary_dim");
  expect_error(ErrorKind::Value, runner(OpKind::Rope, Attrs().set("rotary_dim", 8), {x}),
               "rotary_dim > D");
  expect_error(ErrorKind::Value, runner(OpKind::Rope, Attrs().set("rotary_dim", -2), {x}),
               "negative rotary_dim");
  expect_error(ErrorKind::Shape,
               runner(OpKind::Rope, Attrs(), {random_tensor(DType::F32, {5, 7}, 2)}),
               "odd D with rotary_dim 0");
  EXPECT_NO_THROW(
      run_op1(OpKind::Rope, Attrs().set("rotary_dim", 6), {random_tensor(DType::F32, {5, 7}, 2)}));
  expect_error(ErrorKind::Shape, runner(OpKind::Rope, Attrs(), {x, i64({4}, {0, 1, 2, 3})}),
               "positions of the wrong length");
  expect_error(ErrorKind::Shape, runner(OpKind::Rope, Attrs(), {x, i64({1, 5}, {0, 1, 2, 3, 4})}),
               "positions of rank 2");
  expect_error(ErrorKind::DType,
               runner(OpKind::Rope, Attrs(), {x, HostTensor::empty(DType::Bool, {5})}),
               "bool positions");
  expect_error(ErrorKind::Shape, runner(OpKind::Rope, Attrs(), {f32({4}, {1, 2, 3, 4})}),
               "rank-1 x");
  expect_error(ErrorKind::Value, runner(OpKind::Rope, Attrs().set("base", 0.0), {x}), "base 0");
  expect_error(ErrorKind::DType, runner(OpKind::Rope, Attrs(), {i64({1, 2}, {1, 2})}), "integer x");
  HostTensor img = random_tensor(DType::F32, {2, 6, 8}, 3);
  auto axial = [](int64_t h, int64_t w) { return Attrs().set("grid_h", h).set("grid_w", w); };
  expect_error(ErrorKind::Shape, runner(OpKind::AxialRope2d, axial(2, 2), {img}), "N != h·w");
  expect_error(ErrorKind::Shape,
               runner(OpKind::AxialRope2d, axial(2, 3), {random_tensor(DType::F32, {6, 6}, 4)}),
               "D % 4 != 0");
  expect_error(ErrorKind::Value, runner(OpKind::AxialRope2d, axial(0, 6), {img}), "grid_h 0");
  expect_error(ErrorKind::Value, runner(OpKind::AxialRope2d, axial(6, 1).set("base", -1.0), {img}),
               "negative base");
  expect_error(ErrorKind::Value, runner(OpKind::AxialRope2d, Attrs().set("grid_h", 6), {img}),
               "missing grid_w");
}

// ---------------------------------------------------------------------------------------------
// ALiBi

TEST(AttentionPositional, AlibiHandComputed) {
  // max_bias 4, H = 3: n = 2, m0 = 2^-2, m1 = 2^-1; slopes [1/4, 1/16, 1/2].
  // Sq = 1, Sk = 3: distance j - i - (Sk - Sq) = [-2, -1, 0].
  HostTensor s = HostTensor::empty(DType::F64, {1, 3, 1, 3});
  expect_close(run_op1(OpKind::ALiBi, Attrs().set("max_bias", 4.0), {s}),
               {-0.5, -0.25, 0, -0.125, -0.0625, 0, -1, -0.5, 0}, 0, 0);
  // H = 8, max_bias 8: slopes 2^-1 .. 2^-8; Sq = Sk = 2, query 1 vs key 0 -> -slope.
  HostTensor s8 = HostTensor::empty(DType::F64, {1, 8, 2, 2});
  HostTensor y8 = run_op1(OpKind::ALiBi, Attrs(), {s8});
  for (int h = 0; h < 8; ++h) {
    EXPECT_DOUBLE_EQ(y8.get_f64(h * 4 + 2), -std::ldexp(1.0, -(h + 1))) << h;
    EXPECT_DOUBLE_EQ(y8.get_f64(h * 4 + 1), std::ldexp(1.0, -(h + 1))) << h;  // j > i: positive
    EXPECT_EQ(y8.get_f64(h * 4 + 0), 0.0);
  }
  // max_bias 0: every slope is 1.
  expect_close(run_op1(OpKind::ALiBi, Attrs().set("max_bias", 0.0), {s}),
               {-2, -1, 0, -2, -1, 0, -2, -1, 0}, 0, 0);
}

TEST(AttentionPositional, AlibiBroadcastInput) {
  HostTensor one = random_tensor(DType::F64, {1, 1, 4, 5}, 30);
  HostTensor s = broadcast_view(one, {2, 6, 4, 5});
  expect_close(run_op1(OpKind::ALiBi, Attrs(), {s}),
               run_op1(OpKind::ALiBi, Attrs(), {s.contiguous()}), 0, 0);
}

TEST(AttentionPositional, AlibiBadInputs) {
  expect_error(ErrorKind::Shape,
               runner(OpKind::ALiBi, Attrs(), {random_tensor(DType::F32, {2, 3, 4}, 1)}), "rank 3");
  expect_error(ErrorKind::Value,
               runner(OpKind::ALiBi, Attrs().set("max_bias", -1.0),
                      {random_tensor(DType::F32, {1, 2, 3, 4}, 1)}),
               "negative max_bias");
  expect_error(ErrorKind::DType,
               runner(OpKind::ALiBi, Attrs(), {random_tensor(DType::I64, {1, 2, 3, 4}, 1, 0, 9)}),
               "integer scores");
}

}  // namespace
}  // namespace tessel::testing
