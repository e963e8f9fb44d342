// Elementwise: Activation, Cast, StopGradient, Binary, Compare, Where, GatedActivation on the
// reference backend, against PyTorch goldens (tests/goldens/gen_elementwise.py) and hand-computed
// values; contiguous, non-contiguous and stride-0 broadcast inputs; every variant; claims agree
// with shape rules; bad inputs raise the right error kind.
#include <cmath>
#include <map>
#include <set>

#include "ir/dtype_convert.h"
#include "op_test_util.h"

namespace tessel::testing {
namespace {

using nlohmann::json;

HostTensor tensor(DType t, const Shape& shape, const std::vector<double>& v) {
  return HostTensor::from_vector(t, shape, v);
}

// One golden case as (kind, attrs, inputs in ops.def order, expected output).
struct Case {
  OpKind kind;
  Attrs attrs;
  std::vector<HostTensor> inputs;
  HostTensor expected;
  std::string variant;  // "Activation Gelu", "Where", ...
  std::string what;
};

Case make_case(const json& c) {
  const std::string op = c.at("op");
  Case k;
  k.expected = tensor_from_json(c.at("y"));
  if (op == "Activation") {
    k.kind = OpKind::Activation;
    k.attrs.set("kind", int64_t{variant_id(VariantEnum::ActivationKind, c.at("kind"))});
    if (!c.at("alpha").is_null()) k.attrs.set("alpha", c.at("alpha").get<double>());
    k.inputs = {tensor_from_json(c.at("x"))};
    k.what = "Activation " + c.at("kind").get<std::string>();
  } else if (op == "Binary") {
    k.kind = OpKind::Binary;
    k.attrs.set("op", int64_t{variant_id(VariantEnum::BinaryOp, c.at("bop"))});
    k.inputs = {tensor_from_json(c.at("a")), tensor_from_json(c.at("b"))};
    k.what = "Binary " + c.at("bop").get<std::string>();
  } else if (op == "Compare") {
    k.kind = OpKind::Compare;
    k.attrs.set("op", int64_t{variant_id(VariantEnum::CmpOp, c.at("cop"))});
    k.inputs = {tensor_from_json(c.at("a")), tensor_from_json(c.at("b"))};
    k.what = "Compare " + c.at("cop").get<std::string>();
  } else if (op == "Where") {
    k.kind = OpKind::Where;
    k.inputs = {tensor_from_json(c.at("cond")), tensor_from_json(c.at("a")),
                tensor_from_json(c.at("b"))};
    k.what = "Where";
  } else if (op == "GatedActivation") {
    k.kind = OpKind::GatedActivation;
    k.attrs.set("kind", int64_t{variant_id(VariantEnum::ActivationKind, c.at("kind"))});
    k.attrs.set("axis", c.at("axis").get<int64_t>());
    k.inputs = {tensor_from_json(c.at("x"))};
    k.what = "GatedActivation " + c.at("kind").get<std::string>();
  } else {
    throw std::runtime_error("unknown golden op " + op);
  }
  k.variant = k.what;
  k.what += " " + std::string(dtype_name(k.inputs.back().dtype)) + shape_str(k.inputs[0].shape);
  return k;
}

// f64 results may differ from PyTorch's libm by an ulp or so; results rounded to a narrower
// dtype (and integers, and bools) must match exactly.
std::pair<double, double> tolerance(DType t) {
  return t == DType::F64 ? std::pair{1e-12, 1e-14} : std::pair{0.0, 0.0};
}

void check_case(const Case& k, const std::vector<HostTensor>& inputs, const std::string& layout) {
  HostTensor y = run_op1(k.kind, k.attrs, inputs);
  EXPECT_EQ(y.dtype, k.expected.dtype) << k.what;
  auto [rtol, atol] = tolerance(k.expected.dtype);
  expect_close(y, k.expected, rtol, atol, k.what + " (" + layout + ")");
}

std::vector<Case> golden_cases(const std::string& op) {
  std::vector<Case> cases;
  for (const json& c : golden_cases_of("elementwise"))
    if (c.at("op") == op) cases.push_back(make_case(c));
  return cases;
}

// Runs every golden case of `op` contiguous, non-contiguous, and with every input a stride-0
// broadcast view of itself; returns the variant names seen.
std::set<std::string> check_goldens(const std::string& op) {
  std::set<std::string> seen;
  for (const Case& k : golden_cases(op)) {
    check_case(k, k.inputs, "contiguous");
    std::vector<HostTensor> strided, broadcast;
    for (const HostTensor& t : k.inputs) {
      strided.push_back(non_contiguous(t));
      broadcast.push_back(broadcast_view(non_contiguous(t), k.expected.shape));
    }
    check_case(k, strided, "non-contiguous");
    if (k.kind != OpKind::GatedActivation) check_case(k, broadcast, "broadcast views");
    seen.insert(k.variant);
  }
  return seen;
}

void expect_every_variant(const std::set<std::string>& seen, const std::string& prefix,
                          VariantEnum e, std::initializer_list<std::string> missing_ok = {}) {
  for (const VariantInfo& v : enum_info(e).values) {
    if (std::find(missing_ok.begin(), missing_ok.end(), v.name) != missing_ok.end()) continue;
    EXPECT_TRUE(seen.count(prefix + " " + v.name)) << prefix << " " << v.name << " has no golden";
  }
}

// ---- Goldens --------------------------------------------------------------------------------

TEST(Elementwise, ActivationMatchesTorchGoldens) {
  auto seen = check_goldens("Activation");
  expect_every_variant(seen, "Activation", VariantEnum::ActivationKind);
}

TEST(Elementwise, BinaryMatchesTorchGoldens) {
  auto seen = check_goldens("Binary");
  expect_every_variant(seen, "Binary", VariantEnum::BinaryOp);
}

TEST(Elementwise, CompareMatchesTorchGoldens) {
  auto seen = check_goldens("Compare");
  expect_every_variant(seen, "Compare", VariantEnum::CmpOp);
}

TEST(Elementwise, WhereMatchesTorchGoldens) { EXPECT_EQ(check_goldens("Where").size(), 1u); }

TEST(Elementwise, GatedActivationMatchesTorchGoldens) {
  auto seen = check_goldens("GatedActivation");
  expect_every_variant(seen, "GatedActivation", VariantEnum::ActivationKind, {"Not"});
}

TEST(Elementwise, GatedActivationGoldensInF32) {
  // f64 goldens rerun on f32 inputs: close to the f64 value.
  for (const Case& k : golden_cases("GatedActivation")) {
    std::vector<HostTensor> ins;
    HostTensor x = HostTensor::empty(DType::F32, k.inputs[0].shape);
    for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, k.inputs[0].get_f64(i));
    HostTensor y = run_op1(k.kind, k.attrs, {x});
    EXPECT_EQ(y.dtype, DType::F32);
    expect_close(y, k.expected, 1e-5, 1e-6, k.what + " in f32");
  }
}

// The decomposition (Narrow ×2 + Activation + Binary Mul) checked against the same goldens, not
// against the native kernel.
TEST(Elementwise, GatedActivationDecompositionMatchesGoldens) {
  const Backend& ref = backend("reference");
  if (!ref.claims().claims_kind(OpKind::Narrow))
    GTEST_SKIP() << "skipped: the reference backend has no Narrow kernel yet, so the "
                    "GatedActivation decomposition cannot run";
  int checked = 0;
  for (const Case& k : golden_cases("GatedActivation")) {
    Graph g;
    Value x = g.input(k.inputs[0].dtype, k.inputs[0].shape);
    g.outputs = {g.add1(k.kind, k.attrs, {x})};
    Graph d = decompose(g);
    std::map<OpKind, int> counts;
    for (const Node& n : d.nodes()) ++counts[n.kind];
    EXPECT_EQ(counts[OpKind::GatedActivation], 0) << k.what;
    EXPECT_EQ(counts[OpKind::Narrow], 2) << k.what;
    EXPECT_EQ(counts[OpKind::Activation], 1) << k.what;
    EXPECT_EQ(counts[OpKind::Binary], 1) << k.what;
    for (const HostTensor& in : {k.inputs[0], non_contiguous(k.inputs[0])}) {
      HostTensor y = compile_for(d, ref)->run(std::vector<HostTensor>{in}).at(0);
      expect_close(y, k.expected, 1e-12, 1e-14, k.what + " decomposed");
    }
    ++checked;
  }
  EXPECT_GE(checked, 41);  // every gate kind
}

// ---- Claims agree with shape rules ----------------------------------------------------------

// True when the shape rule accepts a node of `kind` with inputs of these dtypes; a rejection
// must be a DType error.
bool rule_accepts(OpKind kind, const Attrs& attrs, const std::vector<DType>& dtypes,
                  const Shape& shape = {4}) {
  Graph g;
  std::vector<Value> ins;
  for (DType t : dtypes) ins.push_back(g.input(t, shape));
  try {
    g.add(kind, attrs, ins);
    return true;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::DType) << e.what();
    return false;
  }
}

TEST(ElementwiseClaims, AgreeWithShapeRulesForEveryVariantAndDType) {
  const ClaimTable& claims = backend("reference").claims();
  int accepted_cells = 0;
  struct Kind {
    OpKind kind;
    const char* attr;
    int inputs;
  };
  for (Kind k : {Kind{OpKind::Activation, "kind", 1}, Kind{OpKind::Binary, "op", 2},
                 Kind{OpKind::Compare, "op", 2}, Kind{OpKind::GatedActivation, "kind", 1},
                 Kind{OpKind::Cast, nullptr, 1}, Kind{OpKind::StopGradient, nullptr, 1}}) {
    const OpInfo& info = op_info(k.kind);
    for (int v = 0; v < info.num_variants(); ++v) {
      for (int d = 0; d < kNumDTypes; ++d) {
        auto t = static_cast<DType>(d);
        Attrs a;
        if (k.attr) a.set(k.attr, int64_t{v});
        if (k.kind == OpKind::Cast) a.set("to", DType::F32);
        bool accepted = rule_accepts(k.kind, a, std::vector<DType>(k.inputs, t));
        bool claimed = claims.find(k.kind, v, t).has_value();
        EXPECT_EQ(accepted, claimed) << info.name << " " << info.variant_name(v) << " on "
                                     << dtype_name(t) << ": rule and claim disagree";
        accepted_cells += accepted;
      }
    }
  }
  EXPECT_GT(accepted_cells, 400);
  // Where is claimed by its data dtype (claim_dtype skips the bool condition): every data dtype
  // the rule accepts is claimed, and a non-bool condition is a DType error.
  for (int d = 0; d < kNumDTypes; ++d) {
    auto t = static_cast<DType>(d);
    Graph g;
    Value c = g.input(DType::Bool, {3}), a = g.input(t, {3});
    bool accepted = true;
    try {
      g.outputs = {g.add1(OpKind::Where, Attrs(), {c, a, a})};
      EXPECT_EQ(claim_dtype(g, g.node(g.outputs[0].node)), t);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::DType);
      accepted = false;
    }
    EXPECT_EQ(accepted, claims.find(OpKind::Where, 0, t).has_value()) << dtype_name(t);
    if (t == DType::Bool) continue;
    Graph bad;
    Value bc = bad.input(t, {3}), ba = bad.input(DType::F32, {3});
    try {
      bad.add(OpKind::Where, Attrs(), {bc, ba, ba});
      ADD_FAILURE() << "Where accepted a " << dtype_name(t) << " condition";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::DType);
    }
  }
}

// ---- Activation: hand-computed --------------------------------------------------------------

HostTensor act(ActivationKind k, const HostTensor& x, double alpha = NAN) {
  Attrs a;
  a.set("kind", k);
  if (!std::isnan(alpha)) a.set("alpha", alpha);
  return run_op1(OpKind::Activation, a, {x});
}

TEST(ElementwiseActivation, AlphaDefaultsAndOverrides) {
  HostTensor x = f64({3}, {-2.0, 0.0, 3.0});
  expect_close(act(ActivationKind::LeakyRelu, x), {-0.02, 0.0, 3.0}, 0, 1e-15);
  expect_close(act(ActivationKind::LeakyRelu, x, 0.3), {-0.6, 0.0, 3.0}, 0, 1e-15);
  expect_close(act(ActivationKind::Elu, x), {std::expm1(-2.0), 0.0, 3.0}, 0, 1e-15);
  expect_close(act(ActivationKind::Elu, x, 2.0), {2 * std::expm1(-2.0), 0.0, 3.0}, 0, 1e-15);
  // Kinds without an alpha ignore it.
  expect_close(act(ActivationKind::Relu, x, 5.0), {0.0, 0.0, 3.0}, 0, 0);
}

TEST(ElementwiseActivation, SeluConstantsAndHardFunctions) {
  HostTensor x = f64({4}, {-1.0, 1.0, -4.0, 2.0});
  const double scale = 1.0507009873554804934193349852946, alpha = 1.6732632423543772848170429916717;
  expect_close(
      act(ActivationKind::Selu, x),
      {scale * alpha * std::expm1(-1.0), scale, scale * alpha * std::expm1(-4.0), 2 * scale}, 1e-15,
      0);
  expect_close(act(ActivationKind::HardSigmoid, x), {2.0 / 6, 4.0 / 6, 0.0, 5.0 / 6}, 1e-15, 0);
  expect_close(act(ActivationKind::HardSwish, x), {-2.0 / 6, 4.0 / 6, -0.0, 10.0 / 6}, 1e-15, 0);
}

TEST(ElementwiseActivation, RoundsOnceToLowPrecisionDTypes) {
  // exp(1) = 2.718281828...: f16 2.71875, bf16 2.71875, e4m3fn 2.75, e5m2 2.5.
  for (auto [t, want] : {std::pair{DType::F16, 2.71875}, std::pair{DType::BF16, 2.71875},
                         std::pair{DType::F8E4M3FN, 2.75}, std::pair{DType::F8E5M2, 2.5}}) {
    HostTensor y = act(ActivationKind::Exp, tensor(t, {1}, {1.0}));
    EXPECT_EQ(y.dtype, t);
    EXPECT_EQ(y.get_f64(0), want) << dtype_name(t);
  }
  // fp8 inputs through every other arithmetic path: Neg, Abs, Square on e4m3fn.
  HostTensor x = tensor(DType::F8E4M3FN, {3}, {-1.5, 0.25, 3.0});
  expect_close(act(ActivationKind::Neg, x), {1.5, -0.25, -3.0}, 0, 0);
  expect_close(act(ActivationKind::Abs, x), {1.5, 0.25, 3.0}, 0, 0);
  expect_close(act(ActivationKind::Square, x), {2.25, 0.0625, 9.0}, 0, 0);
}

TEST(ElementwiseActivation, IntegerAndBoolVariants) {
  HostTensor x = HostTensor::from_vector(DType::I8, {5}, std::vector<int64_t>{-128, -3, 0, 5, 127});
  expect_close(act(ActivationKind::Neg, x), {-128, 3, 0, -5, -127}, 0, 0);
  expect_close(act(ActivationKind::Abs, x), {-128, 3, 0, 5, 127}, 0, 0);
  expect_close(act(ActivationKind::Square, x), {0, 9, 0, 25, 1}, 0, 0);
  expect_close(act(ActivationKind::Sign, x), {-1, -1, 0, 1, 1}, 0, 0);
  expect_close(act(ActivationKind::Relu, x), {0, 0, 0, 5, 127}, 0, 0);
  expect_close(act(ActivationKind::Not, x), {127, 2, -1, -6, -128}, 0, 0);
  HostTensor b = HostTensor::from_vector(DType::Bool, {3}, std::vector<int64_t>{1, 0, 1});
  HostTensor nb = act(ActivationKind::Not, non_contiguous(b));
  EXPECT_EQ(nb.dtype, DType::Bool);
  expect_close(nb, {0, 1, 0}, 0, 0);
  expect_close(act(ActivationKind::Identity, b), {1, 0, 1}, 0, 0);
  HostTensor big = i64({2}, {std::numeric_limits<int64_t>::min(), 3037000500});
  expect_close(act(ActivationKind::Neg, big),
               {static_cast<double>(std::numeric_limits<int64_t>::min()), -3037000500.0}, 0, 0);
  EXPECT_EQ(act(ActivationKind::Square, big).get_i64(1),
            static_cast<int64_t>(3037000500ull * 3037000500ull));  // wraps past 2^63
}

TEST(ElementwiseActivation, BadInputs) {
  expect_error(
      ErrorKind::DType,
      [] {
        act(ActivationKind::Not, f32({2}, {1, 2}));
      },
      "Not on f32", "Not");
  expect_error(
      ErrorKind::DType,
      [] {
        act(ActivationKind::Exp, i64({2}, {1, 2}));
      },
      "Exp on i64", "i64");
  expect_error(
      ErrorKind::DType, [] { act(ActivationKind::Neg, HostTensor::empty(DType::Bool, {2})); },
      "Neg on bool");
  expect_error(
      ErrorKind::DType, [] { act(ActivationKind::Identity, HostTensor::empty(DType::C64, {2})); },
      "Identity on c64");
  expect_error(
      ErrorKind::DType, [] { act(ActivationKind::Relu, HostTensor::empty(DType::U16, {2})); },
      "Relu on storage-only u16");
  expect_error(
      ErrorKind::Value, [] { act(ActivationKind::LeakyRelu, f32({1}, {1}), INFINITY); },
      "infinite alpha");
}

// ---- Binary: hand-computed ------------------------------------------------------------------

HostTensor bin(BinaryOp op, const HostTensor& a, const HostTensor& b) {
  return run_op1(OpKind::Binary, Attrs().set("op", op), {a, b});
}

HostTensor ints(DType t, const Shape& shape, const std::vector<int64_t>& v) {
  return HostTensor::from_vector(t, shape, v);
}

TEST(ElementwiseBinary, BroadcastsOddShapesWithBatch) {
  // [3,1,5] - [1,7,1] -> [3,7,5]: y[i,j,k] = 100 i + k - 10 j.
  HostTensor a = HostTensor::empty(DType::F32, {3, 1, 5}),
             b = HostTensor::empty(DType::F32, {1, 7, 1});
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 5; ++k) a.set_f64(i * 5 + k, 100 * i + k);
  for (int j = 0; j < 7; ++j) b.set_f64(j, 10 * j);
  HostTensor y = bin(BinaryOp::Sub, non_contiguous(a), b);
  ASSERT_EQ(y.shape, (Shape{3, 7, 5}));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 7; ++j)
      for (int k = 0; k < 5; ++k) EXPECT_EQ(y.get_f64((i * 7 + j) * 5 + k), 100 * i + k - 10 * j);
}

TEST(ElementwiseBinary, RoundsOnceInNarrowFloats) {
  // 1 + 0.125 is a tie between e5m2's 1.0 and 1.25: to even, 1.0; 1 + 0.375 ties to 1.5.
  HostTensor y = bin(BinaryOp::Add, tensor(DType::F8E5M2, {2}, {1.0, 1.0}),
                     tensor(DType::F8E5M2, {2}, {0.125, 0.375}));
  expect_close(y, {1.0, 1.5}, 0, 0);
  // f16: 2049 is not representable (spacing 2 above 2048); 2048 + 1 ties to even 2048,
  // 2048 + 3 = 2051 ties to 2052.
  expect_close(
      bin(BinaryOp::Add, tensor(DType::F16, {2}, {2048, 2048}), tensor(DType::F16, {2}, {1, 3})),
      {2048, 2052}, 0, 0);
  // Max / Min propagate NaN from either side.
  HostTensor m = bin(BinaryOp::Max, f32({2}, {NAN, 1}), f32({2}, {1, NAN}));
  EXPECT_TRUE(std::isnan(m.get_f64(0)) && std::isnan(m.get_f64(1)));
}

TEST(ElementwiseBinary, IntegerSemantics) {
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  HostTensor a = i64({4}, {-7, 7, kMin, kMin}), b = i64({4}, {2, -2, -1, 1});
  expect_close(bin(BinaryOp::Div, a, b),
               {-3, -3, static_cast<double>(kMin), static_cast<double>(kMin)}, 0, 0);
  HostTensor ma = i64({4}, {5, -5, 5, -5}), mb = i64({4}, {3, 3, -3, -3});
  expect_close(bin(BinaryOp::Mod, ma, mb), {2, -2, 2, -2}, 0, 0);
  expect_close(bin(BinaryOp::FloorMod, ma, mb), {2, 1, -1, -2}, 0, 0);
  EXPECT_EQ(bin(BinaryOp::Mod, i64({1}, {kMin}), i64({1}, {-1})).get_i64(0), 0);
  // Wraparound at the dtype's width.
  expect_close(bin(BinaryOp::Add, ints(DType::I8, {2}, {127, -128}), ints(DType::I8, {2}, {1, -1})),
               {-128, 127}, 0, 0);
  expect_close(bin(BinaryOp::Sub, ints(DType::U8, {1}, {3}), ints(DType::U8, {1}, {5})), {254}, 0,
               0);
  expect_close(
      bin(BinaryOp::Pow, ints(DType::I8, {3}, {3, 2, -2}), ints(DType::I8, {3}, {5, 7, 7})),
      {-13, -128, -128}, 0, 0);
  EXPECT_EQ(bin(BinaryOp::Pow, i64({1}, {3}), i64({1}, {45})).get_i64(0), 2833654757305440083);
  EXPECT_EQ(bin(BinaryOp::Pow, i64({1}, {0}), i64({1}, {0})).get_i64(0), 1);
  // Shifts at and past the width: 0, or -1 for a negative value shifted right.
  expect_close(
      bin(BinaryOp::Shl, ints(DType::I8, {3}, {1, 1, -1}), ints(DType::I8, {3}, {7, 8, 100})),
      {-128, 0, 0}, 0, 0);
  expect_close(
      bin(BinaryOp::Shr, ints(DType::I8, {3}, {-1, 64, -128}), ints(DType::I8, {3}, {8, 9, 7})),
      {-1, 0, -1}, 0, 0);
  expect_close(bin(BinaryOp::Shr, ints(DType::U8, {2}, {200, 200}), ints(DType::U8, {2}, {7, 8})),
               {1, 0}, 0, 0);
  expect_close(bin(BinaryOp::Shl, i64({2}, {1, 1}), i64({2}, {63, 64})),
               {static_cast<double>(kMin), 0}, 0, 0);
  expect_close(bin(BinaryOp::Shr, i64({2}, {-5, 5}), i64({2}, {64, 64})), {-1, 0}, 0, 0);
  // Bool logic.
  HostTensor t = ints(DType::Bool, {4}, {0, 0, 1, 1}), u = ints(DType::Bool, {4}, {0, 1, 0, 1});
  expect_close(bin(BinaryOp::BitAnd, t, u), {0, 0, 0, 1}, 0, 0);
  expect_close(bin(BinaryOp::BitOr, t, u), {0, 1, 1, 1}, 0, 0);
  expect_close(bin(BinaryOp::BitXor, t, u), {0, 1, 1, 0}, 0, 0);
}

TEST(ElementwiseBinary, RunTimeValueErrorsNameTheNode) {
  for (BinaryOp op : {BinaryOp::Div, BinaryOp::Mod, BinaryOp::FloorMod})
    expect_error(
        ErrorKind::Value,
        [&] {
          bin(op, i64({3}, {1, 2, 3}), i64({3}, {1, 0, 1}));
        },
        "integer division by zero", "[Binary] node");
  expect_error(
      ErrorKind::Value,
      [] {
        bin(BinaryOp::Div, ints(DType::U8, {2}, {4, 4}), ints(DType::U8, {1}, {0}));
      },
      "u8 division by zero");
  expect_error(
      ErrorKind::Value,
      [] {
        bin(BinaryOp::Pow, i64({2}, {2, 1}), i64({2}, {1, -1}));
      },
      "negative integer exponent", "negative exponent");
  expect_error(
      ErrorKind::Value,
      [] { bin(BinaryOp::Shl, ints(DType::I32, {1}, {1}), ints(DType::I32, {1}, {-1})); },
      "negative shift", "shift");
  expect_error(
      ErrorKind::Value,
      [] { bin(BinaryOp::Shr, ints(DType::I32, {1}, {1}), ints(DType::I32, {1}, {-3})); },
      "negative shift right");
  // Float division by zero is IEEE, not an error.
  HostTensor y = bin(BinaryOp::Div, f32({2}, {1, -1}), f32({2}, {0, 0}));
  EXPECT_EQ(y.get_f64(0), INFINITY);
  EXPECT_EQ(y.get_f64(1), -INFINITY);
}

TEST(ElementwiseBinary, BadInputs) {
  expect_error(
      ErrorKind::DType,
      [] {
        bin(BinaryOp::Add, f32({2}, {1, 2}), f64({2}, {1, 2}));
      },
      "mixed dtypes", "f32");
  expect_error(
      ErrorKind::Shape,
      [] {
        bin(BinaryOp::Add, HostTensor::empty(DType::F32, {3, 4}),
            HostTensor::empty(DType::F32, {2, 4}));
      },
      "non-broadcastable", "[3,4] and [2,4]");
  expect_error(
      ErrorKind::DType, [] { bin(BinaryOp::Atan2, i64({1}, {1}), i64({1}, {1})); },
      "Atan2 on ints");
  expect_error(
      ErrorKind::DType, [] { bin(BinaryOp::BitAnd, f32({1}, {1}), f32({1}, {1})); },
      "BitAnd on f32");
  HostTensor b = ints(DType::Bool, {1}, {1});
  expect_error(
      ErrorKind::DType, [&] { bin(BinaryOp::Shl, b, b); }, "Shl on bool");
  expect_error(
      ErrorKind::DType, [&] { bin(BinaryOp::Add, b, b); }, "Add on bool");
  HostTensor c = HostTensor::empty(DType::C64, {1});
  expect_error(
      ErrorKind::DType, [&] { bin(BinaryOp::Mul, c, c); }, "Mul on c64");
  HostTensor s = HostTensor::empty(DType::U32, {1});
  expect_error(
      ErrorKind::DType, [&] { bin(BinaryOp::Add, s, s); }, "Add on storage-only u32");
}

// ---- Compare / Where ------------------------------------------------------------------------

HostTensor cmp(CmpOp op, const HostTensor& a, const HostTensor& b) {
  return run_op1(OpKind::Compare, Attrs().set("op", op), {a, b});
}

TEST(ElementwiseCompare, NaNAndComplexAndFp8) {
  HostTensor a = f32({3}, {NAN, 1, NAN}), b = f32({3}, {NAN, NAN, 1});
  for (CmpOp op : {CmpOp::Eq, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge}) {
    HostTensor y = cmp(op, a, b);
    EXPECT_EQ(y.dtype, DType::Bool);
    expect_close(y, {0, 0, 0}, 0, 0, "NaN compares false");
  }
  expect_close(cmp(CmpOp::Ne, a, b), {1, 1, 1}, 0, 0, "NaN != anything");
  HostTensor c = HostTensor::empty(DType::C64, {3}), d = HostTensor::empty(DType::C64, {3});
  c.set_c128(0, {1, 2});
  d.set_c128(0, {1, 2});
  c.set_c128(1, {1, 2});
  d.set_c128(1, {1, 3});
  c.set_c128(2, {4, 0});
  d.set_c128(2, {4, 0});
  expect_close(cmp(CmpOp::Eq, c, d), {1, 0, 1}, 0, 0);
  expect_close(cmp(CmpOp::Ne, c, d), {0, 1, 0}, 0, 0);
  expect_error(
      ErrorKind::DType, [&] { cmp(CmpOp::Lt, c, d); }, "Lt on c64");
  expect_close(
      cmp(CmpOp::Lt, tensor(DType::F8E4M3FN, {2}, {-448, 2}), tensor(DType::F8E4M3FN, {2}, {1, 2})),
      {1, 0}, 0, 0);
  expect_error(
      ErrorKind::DType, [] { cmp(CmpOp::Eq, f32({1}, {1}), i64({1}, {1})); }, "mixed dtypes");
  expect_error(
      ErrorKind::Shape,
      [] {
        cmp(CmpOp::Eq, HostTensor::empty(DType::F32, {3}), HostTensor::empty(DType::F32, {4}));
      },
      "non-broadcastable", "[3] and [4]");
}

TEST(ElementwiseWhere, SelectsBitsAndBroadcastsThreeWays) {
  HostTensor c = ints(DType::Bool, {2, 1}, {1, 0});
  HostTensor a = HostTensor::empty(DType::C64, {3}), b = HostTensor::empty(DType::C64, {});
  for (int i = 0; i < 3; ++i) a.set_c128(i, {double(i), -double(i)});
  b.set_c128(0, {9, 9});
  HostTensor y = run_op1(OpKind::Where, Attrs(), {c, a, b});
  ASSERT_EQ(y.shape, (Shape{2, 3}));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(y.get_c128(i), std::complex<double>(i, -i));
    EXPECT_EQ(y.get_c128(3 + i), std::complex<double>(9, 9));
  }
  expect_error(
      ErrorKind::DType,
      [] {
        run_op1(OpKind::Where, Attrs(), {f32({1}, {1}), f32({1}, {1}), f32({1}, {1})});
      },
      "float condition", "cond");
  expect_error(
      ErrorKind::DType,
      [] {
        run_op1(OpKind::Where, Attrs(),
                {ints(DType::Bool, {1}, {1}), f32({1}, {1}), f64({1}, {1})});
      },
      "a and b differ");
  expect_error(
      ErrorKind::Shape,
      [] {
        run_op1(OpKind::Where, Attrs(),
                {ints(DType::Bool, {2}, {1, 0}), f32({3}, {1, 2, 3}), f32({1}, {1})});
      },
      "non-broadcastable", "[2] and [3]");
}

// ---- GatedActivation ------------------------------------------------------------------------

TEST(ElementwiseGated, HandComputedAndBadInputs) {
  // x [2, 4] along axis 1: a = x[:, :2], b = x[:, 2:]; Relu(a) · b.
  HostTensor x = f32({2, 4}, {-1, 2, 3, 4, 5, -6, 7, 8});
  HostTensor y = run_op1(OpKind::GatedActivation, Attrs().set("kind", ActivationKind::Relu),
                         {non_contiguous(x)});
  ASSERT_EQ(y.shape, (Shape{2, 2}));
  expect_close(y, {0, 8, 35, 0}, 0, 0);
  // The default kind is Silu (SwiGLU) on the last axis.
  HostTensor s = run_op1(OpKind::GatedActivation, Attrs(), {f64({2}, {1.0, 3.0})});
  expect_close(s, {3.0 / (1.0 + std::exp(-1.0))}, 1e-15, 0);
  expect_error(
      ErrorKind::Shape,
      [] {
        run_op1(OpKind::GatedActivation, Attrs(), {HostTensor::empty(DType::F32, {2, 5})});
      },
      "odd split size", "odd");
  expect_error(
      ErrorKind::Shape,
      [] {
        run_op1(OpKind::GatedActivation, Attrs().set("axis", 2),
                {HostTensor::empty(DType::F32, {2, 4})});
      },
      "axis out of range");
  expect_error(
      ErrorKind::Shape, [] { run_op1(OpKind::GatedActivation, Attrs(), {f32({}, {1})}); },
      "rank 0");
  expect_error(
      ErrorKind::DType,
      [] {
        run_op1(OpKind::GatedActivation, Attrs().set("kind", ActivationKind::Not),
                {HostTensor::empty(DType::F32, {4})});
      },
      "Not gate");
  expect_error(
      ErrorKind::DType,
      [] {
        run_op1(OpKind::GatedActivation, Attrs(), {i64({2}, {1, 2})});
      },
      "integer input");
}

// ---- Cast / StopGradient --------------------------------------------------------------------

HostTensor cast(const HostTensor& x, DType to, bool saturate = true) {
  return run_op1(OpKind::Cast, Attrs().set("to", to).set("saturate", saturate), {x});
}

TEST(ElementwiseCast, FloatToIntegerTruncatesAndWraps) {
  HostTensor y =
      cast(non_contiguous(f32({2, 3}, {-2.7, 2.7, -0.5, 3e9, NAN, INFINITY})), DType::I32);
  EXPECT_EQ(y.dtype, DType::I32);
  expect_close(y, {-2, 2, 0, 3e9 - 4294967296.0, 0, 0}, 0, 0);
  expect_close(cast(f64({2}, {300.9, -1.5}), DType::U8), {44, 255}, 0, 0);
  expect_close(cast(f32({4}, {0, -0.0, 0.1, NAN}), DType::Bool), {0, 0, 1, 1}, 0, 0);
}

TEST(ElementwiseCast, RoundsOnceToNearestEven) {
  HostTensor y = cast(f64({4}, {1 + std::ldexp(1, -11), 1 + 3 * std::ldexp(1, -11), 65519, 65520}),
                      DType::F16);
  expect_close(y, {1.0, 1 + std::ldexp(1, -9), 65504, INFINITY}, 0, 0);
  // i64 2^62 + 2^38 + 1 to f32: exactly rounded is 2^62 + 2^39; via f64 it would tie to 2^62.
  HostTensor big = i64({1}, {(int64_t{1} << 62) + (int64_t{1} << 38) + 1});
  EXPECT_EQ(cast(big, DType::F32).get_f64(0), std::ldexp(1, 62) + std::ldexp(1, 39));
  // u64 (storage-only) above 2^63, read as unsigned: 2^63 + 2^39 + 1 -> 2^63 + 2^40 in f32.
  HostTensor u = HostTensor::empty(DType::U64, {2});
  u.set_i64(0, static_cast<int64_t>((uint64_t{1} << 63) + (uint64_t{1} << 39) + 1));
  u.set_i64(1, -1);  // 2^64 - 1
  HostTensor uf = cast(u, DType::F32);
  EXPECT_EQ(uf.get_f64(0), std::ldexp(1, 63) + std::ldexp(1, 40));
  EXPECT_EQ(uf.get_f64(1), std::ldexp(1, 64));
  EXPECT_EQ(cast(u, DType::F64).get_f64(1), std::ldexp(1, 64));
  expect_close(cast(i64({2}, {65519, 70000}), DType::F16), {65504, INFINITY}, 0, 0);
}

TEST(ElementwiseCast, Fp8Saturation) {
  HostTensor x = f32({4}, {500, INFINITY, 464, NAN});
  HostTensor sat = cast(x, DType::F8E4M3FN, true), raw = cast(x, DType::F8E4M3FN, false);
  expect_close(sat, {448, 448, 448, NAN}, 0, 0);
  expect_close(raw, {NAN, NAN, 448, NAN}, 0, 0);
  expect_close(cast(f32({2}, {1e6, -INFINITY}), DType::F8E5M2, true), {57344, -57344}, 0, 0);
  expect_close(cast(f32({2}, {1e6, -INFINITY}), DType::F8E5M2, false), {INFINITY, -INFINITY}, 0, 0);
  expect_close(cast(i64({2}, {1000, -3}), DType::F8E4M3FN, false), {NAN, -3}, 0, 0);
  expect_close(cast(i64({2}, {1000, -3}), DType::F8E4M3FN, true), {448, -3}, 0, 0);
}

TEST(ElementwiseCast, IntegersBoolsAndComplex) {
  expect_close(cast(ints(DType::I8, {2}, {-1, 5}), DType::U8), {255, 5}, 0, 0);
  expect_close(cast(ints(DType::U8, {2}, {200, 5}), DType::I8), {-56, 5}, 0, 0);
  expect_close(cast(i64({2}, {70000, -1}), DType::I16), {4464, -1}, 0, 0);
  expect_close(cast(i64({3}, {0, 5, -1}), DType::Bool), {0, 1, 1}, 0, 0);
  expect_close(cast(ints(DType::Bool, {2}, {1, 0}), DType::F32), {1, 0}, 0, 0);
  HostTensor c = HostTensor::empty(DType::C64, {3});
  c.set_c128(0, {1.5, -2});
  c.set_c128(1, {0, 1});
  c.set_c128(2, {0, 0});
  expect_close(cast(c, DType::F32), {1.5, 0, 0}, 0, 0, "complex -> real keeps the real part");
  expect_close(cast(c, DType::Bool), {1, 1, 0}, 0, 0, "complex -> bool: nonzero");
  HostTensor cc = cast(c, DType::C128);
  EXPECT_EQ(cc.get_c128(0), std::complex<double>(1.5, -2));
  HostTensor fc = cast(f32({1}, {2.5}), DType::C64);
  EXPECT_EQ(fc.get_c128(0), std::complex<double>(2.5, 0));
}

TEST(ElementwiseCast, StorageOnlyDTypesCastBothWays) {
  HostTensor x = f32({4}, {2.7, -1.0, 0.4, 7.0});
  expect_close(cast(cast(x, DType::F4E2M1FNx2), DType::F32), {3.0, -1.0, 0.5, 6.0}, 0, 0);
  expect_close(cast(cast(x, DType::U16), DType::F32), {2, 65535, 0, 7}, 0, 0);
  expect_close(cast(cast(x, DType::F8E4M3FNUZ), DType::F64), {2.75, -1.0, 0.40625, 7.0}, 0, 0);
  expect_close(cast(cast(f32({2}, {4.0, 0.3}), DType::F8E8M0FNU), DType::F32), {4.0, 0.25}, 0, 0);
  HostTensor u = cast(x, DType::U64);
  EXPECT_EQ(u.get_i64(1), -1);  // -1.0 wraps to 2^64 - 1
}

TEST(ElementwiseStopGradient, CopiesEveryDTypeBitForBit) {
  HostTensor x = f32({2, 3}, {1, -2, NAN, 4, 5, -0.0});
  HostTensor y = run_op1(OpKind::StopGradient, Attrs(), {non_contiguous(x)});
  expect_close(y, x, 0, 0);
  EXPECT_TRUE(std::signbit(y.get_f64(5)));
  HostTensor u = HostTensor::empty(DType::U16, {3});
  for (int i = 0; i < 3; ++i) u.set_i64(i, 65535 - i);
  HostTensor uy = run_op1(OpKind::StopGradient, Attrs(), {u});
  EXPECT_EQ(uy.dtype, DType::U16);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(uy.get_i64(i), 65535 - i);
}

}  // namespace
}  // namespace tessel::testing
