// FusedComposites: every kind runs on the reference by its decomposition and is checked against
// PyTorch goldens (tests/goldens/gen_fused_composites.py: torch functions and
// nn.TransformerEncoderLayer, never Tessel's decompositions), with contiguous, non-contiguous and
// f32 inputs; every claimed variant has a golden; every claimed dtype legalizes; bad inputs fail
// in the shape rule with the right error kind.
#include <optional>
#include <set>

#include "op_test_util.h"

namespace tessel::testing {
namespace {

using nlohmann::json;

struct GoldenCase {
  std::string name;
  Attrs attrs;
  std::vector<HostTensor> inputs;  // absent optional inputs: HostTensor{}
  std::vector<HostTensor> outputs;
  json raw_attrs;
};

std::vector<GoldenCase> goldens_of(OpKind kind) {
  std::vector<GoldenCase> out;
  for (const json& c : golden_cases_of("fused_composites")) {
    if (c.at("kind") != op_name(kind)) continue;
    GoldenCase g{c.at("name"), attrs_from_json(kind, c.at("attrs")), {}, {}, c.at("attrs")};
    for (const json& t : c.at("inputs"))
      g.inputs.push_back(t.is_null() ? HostTensor{} : tensor_from_json(t));
    for (const json& t : c.at("outputs")) g.outputs.push_back(tensor_from_json(t));
    out.push_back(std::move(g));
  }
  return out;
}

std::vector<HostTensor> map_inputs(const std::vector<HostTensor>& ins,
                                   HostTensor (*fn)(const HostTensor&)) {
  std::vector<HostTensor> out;
  for (const HostTensor& t : ins) out.push_back(fn(t));
  return out;
}

HostTensor to_f32(const HostTensor& t) { return cast_to(t, DType::F32); }

// Floor-like activations jump: an f32 pre-activation may land across a step from the f64 one.
bool discontinuous(const json& attrs) {
  if (!attrs.contains("act")) return false;
  std::string a = attrs.at("act");
  return a == "Round" || a == "Floor" || a == "Ceil" || a == "Sign";
}

void run_goldens(OpKind kind) {
  auto cases = goldens_of(kind);
  EXPECT_GT(cases.size(), 0u) << "no golden cases for " << op_name(kind);
  for (const GoldenCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto check = [&](const std::vector<HostTensor>& ins, double tol, const std::string& what) {
      auto ys = run_op(kind, c.attrs, ins);
      ASSERT_EQ(ys.size(), c.outputs.size());
      for (size_t i = 0; i < ys.size(); ++i)
        expect_close(ys[i], c.outputs[i], tol, tol,
                     c.name + " " + what + " output " + std::to_string(i));
    };
    check(c.inputs, 1e-10, "contiguous f64");
    check(map_inputs(c.inputs, non_contiguous), 1e-10, "non-contiguous f64");
    if (!discontinuous(c.raw_attrs)) check(map_inputs(c.inputs, to_f32), 2e-4, "f32");
  }
}

TEST(FusedCompositesGolden, FusedSwiGLU) { run_goldens(OpKind::FusedSwiGLU); }
TEST(FusedCompositesGolden, FusedMatMulBiasAct) { run_goldens(OpKind::FusedMatMulBiasAct); }
TEST(FusedCompositesGolden, FusedResidualLN) { run_goldens(OpKind::FusedResidualLN); }
TEST(FusedCompositesGolden, FusedResidualRmsNorm) { run_goldens(OpKind::FusedResidualRmsNorm); }
TEST(FusedCompositesGolden, AdaLayerNorm) { run_goldens(OpKind::AdaLayerNorm); }
TEST(FusedCompositesGolden, GatedResidual) { run_goldens(OpKind::GatedResidual); }
TEST(FusedCompositesGolden, FusedAttentionBlock) { run_goldens(OpKind::FusedAttentionBlock); }
TEST(FusedCompositesGolden, FusedTransformerLayer) { run_goldens(OpKind::FusedTransformerLayer); }

// Every variant the reference claims has at least one golden case.
TEST(FusedCompositesGolden, EveryClaimedVariantHasAGolden) {
  const Backend& ref = backend("reference");
  for (OpKind kind :
       {OpKind::FusedMatMulBiasAct, OpKind::FusedTransformerLayer, OpKind::FusedAttentionBlock}) {
    const OpInfo& info = op_info(kind);
    const std::string attr = info.attrs[info.variant_attr].name;
    std::set<std::string> seen;
    for (const GoldenCase& c : goldens_of(kind))
      if (c.raw_attrs.contains(attr)) seen.insert(c.raw_attrs.at(attr).get<std::string>());
    for (int v = 0; v < info.num_variants(); ++v) {
      if (ref.claims().dtypes(kind, v).empty()) continue;
      EXPECT_TRUE(seen.count(info.variant_name(v)))
          << info.name << " variant " << info.variant_name(v) << " is claimed but has no golden";
    }
  }
}

// Every claimed (kind, dtype) legalizes into kinds the reference runs natively, and runs; f16 and
// bf16 stay near the f64 golden.
TEST(FusedCompositesClaims, EveryClaimedDtypeLegalizesAndRuns) {
  const Backend& ref = backend("reference");
  int cells = 0;
  for (const OpInfo& info : all_ops()) {
    if (info.category != Category::FusedComposites) continue;
    auto cases = goldens_of(info.kind);
    ASSERT_FALSE(cases.empty()) << info.name;
    const GoldenCase& c = cases.front();
    for (DType dt :
         {DType::F16, DType::BF16, DType::F32, DType::F64, DType::F8E4M3FN, DType::F8E5M2}) {
      SCOPED_TRACE(std::string(info.name) + " " + dtype_name(dt));
      Attrs normalized = c.attrs;
      normalized.normalize(info, info.name);
      if (!ref.claims().find(info.kind, variant_of(info, normalized), dt)) continue;
      ++cells;
      std::vector<HostTensor> ins;
      for (const HostTensor& t : c.inputs) ins.push_back(cast_to(t, dt));
      std::vector<HostTensor> ys;
      try {
        ys = run_op(info.kind, c.attrs, ins);
      } catch (const Error& e) {
        ADD_FAILURE() << "claimed but does not run: " << e.what();
        continue;
      }
      ASSERT_EQ(ys.size(), c.outputs.size());
      for (size_t i = 0; i < ys.size(); ++i) {
        EXPECT_EQ(ys[i].dtype, dt);
        double tol = dt == DType::F16 ? 3e-2 : dt == DType::BF16 ? 0.25 : 1e-4;
        if (dt != DType::F8E4M3FN && dt != DType::F8E5M2)
          expect_close(ys[i], c.outputs[i], tol, tol, c.name);
      }
    }
  }
  // The reference claims every composite for all six float dtypes: 8 kinds x 6.
  EXPECT_EQ(cells, 48);
}

// ---------------------------------------------------------------------------------------------
// Hand-computed

TEST(FusedCompositesHand, AdaLayerNormAndGatedResidual) {
  // Rows [1, 3] and [5, 7] normalize to [-1, 1] (eps 0); with scale [1, 0] and shift [0, 5]
  // for the one batch: [-1·2 + 0, 1·1 + 5] = [-2, 6] for both rows.
  auto y = run_op1(OpKind::AdaLayerNorm, Attrs().set("eps", 0.0),
                   {f64({1, 2, 2}, {1, 3, 5, 7}), f64({1, 2}, {1, 0}), f64({1, 2}, {0, 5})});
  expect_close(y, {-2, 6, -2, 6}, 1e-15, 0);
  // GatedResidual with gate [B,D] = [[2, 3]]: out = x + gate·y.
  auto g =
      run_op1(OpKind::GatedResidual, Attrs(),
              {f64({1, 2, 2}, {1, 1, 1, 1}), f64({1, 2, 2}, {1, 2, 3, 4}), f64({1, 2}, {2, 3})});
  expect_close(g, {3, 7, 7, 13}, 0, 0);
}

TEST(FusedCompositesHand, ResidualRmsNormReturnsTheSum) {
  // sum = [3, 4] -> rms = sqrt(12.5); y = sum / rms · gamma.
  auto ys = run_op(OpKind::FusedResidualRmsNorm, Attrs().set("eps", 0.0),
                   {f64({2}, {1, 1}), f64({2}, {2, 3}), f64({2}, {1, 2})});
  ASSERT_EQ(ys.size(), 2u);
  double r = std::sqrt(12.5);
  expect_close(ys[0], {3 / r, 8 / r}, 1e-15, 0);
  expect_close(ys[1], {3, 4}, 0, 0);
}

TEST(FusedCompositesHand, MatMulBiasActLinearLayout) {
  // torch.nn.Linear layout, w [N,K] = [[1,1],[-1,-1]]: relu([1,2]·wᵀ + [1,1]) = relu([4,-2]).
  auto y = run_op1(OpKind::FusedMatMulBiasAct,
                   Attrs().set("act", ActivationKind::Relu).set("transpose_b", true),
                   {f64({2}, {1, 2}), f64({2, 2}, {1, 1, -1, -1}), f64({2}, {1, 1})});
  expect_close(y, {4, 0}, 0, 0);
}

// ---------------------------------------------------------------------------------------------
// Bad inputs

using Types = std::vector<std::optional<TensorType>>;

TensorType f(Shape s) { return {DType::F32, std::move(s)}; }

TEST(FusedCompositesBadInputs, MlpAndProjection) {
  auto swiglu = [](Types t) { return [=] { infer_type(OpKind::FusedSwiGLU, Attrs(), t); }; };
  EXPECT_EQ(
      infer_type(OpKind::FusedSwiGLU, Attrs(), {f({2, 3, 5}), f({5, 7}), f({5, 7}), f({7, 4})}),
      f({2, 3, 4}));
  expect_error(ErrorKind::Shape, swiglu({f({2, 5}), f({4, 7}), f({4, 7}), f({7, 4})}), "",
               "w_gate");
  expect_error(ErrorKind::Shape, swiglu({f({2, 5}), f({5, 7}), f({5, 6}), f({7, 4})}), "", "w_up");
  expect_error(ErrorKind::Shape, swiglu({f({2, 5}), f({5, 7}), f({5, 7}), f({6, 4})}), "",
               "w_down");
  expect_error(ErrorKind::DType,
               swiglu({f({2, 5}), f({5, 7}), TensorType{DType::F64, {5, 7}}, f({7, 4})}));
  expect_error(ErrorKind::DType,
               swiglu({TensorType{DType::I32, {2, 5}}, TensorType{DType::I32, {5, 7}},
                       TensorType{DType::I32, {5, 7}}, TensorType{DType::I32, {7, 4}}}));

  auto lin = [](bool tb, Types t) {
    return [=] { infer_type(OpKind::FusedMatMulBiasAct, Attrs().set("transpose_b", tb), t); };
  };
  EXPECT_EQ(infer_type(OpKind::FusedMatMulBiasAct, Attrs().set("transpose_b", true),
                       {f({3, 5}), f({4, 5}), std::nullopt}),
            f({3, 4}));
  expect_error(ErrorKind::Shape, lin(false, {f({3, 5}), f({4, 5}), std::nullopt}), "", "[K,N]");
  expect_error(ErrorKind::Shape, lin(true, {f({3, 5}), f({5, 4}), std::nullopt}), "", "[N,K]");
  expect_error(ErrorKind::Shape, lin(false, {f({3, 5}), f({5, 4}), f({5})}), "", "b must be [4]");
  expect_error(ErrorKind::Shape, lin(false, {f({}), f({5, 4}), std::nullopt}));
}

TEST(FusedCompositesBadInputs, NormsAndModulation) {
  auto res = [](OpKind k, double eps, Types t) {
    return [=] { infer_type(k, Attrs().set("eps", eps), t); };
  };
  for (OpKind k : {OpKind::FusedResidualLN, OpKind::FusedResidualRmsNorm}) {
    SCOPED_TRACE(op_name(k));
    expect_error(ErrorKind::Shape, res(k, 1e-5, {f({2, 6}), f({3, 6})}), "", "broadcast");
    expect_error(ErrorKind::Shape, res(k, 1e-5, {f({2, 6}), f({2, 6}), f({5})}), "", "gamma");
    expect_error(ErrorKind::Value, res(k, -1.0, {f({2, 6}), f({2, 6})}), "", "eps");
    expect_error(ErrorKind::DType, res(k, 1e-5, {f({2, 6}), TensorType{DType::F16, {2, 6}}}));
  }
  expect_error(ErrorKind::Shape,
               res(OpKind::FusedResidualLN, 1e-5, {f({2, 6}), f({2, 6}), f({6}), f({2, 6})}), "",
               "beta");

  auto ada = [](Types t) { return [=] { infer_type(OpKind::AdaLayerNorm, Attrs(), t); }; };
  EXPECT_EQ(infer_type(OpKind::AdaLayerNorm, Attrs(), {f({2, 5, 6}), f({2, 6}), f({1, 6})}),
            f({2, 5, 6}));
  expect_error(ErrorKind::Shape, ada({f({5, 6}), f({5, 6}), f({5, 6})}), "", "[B,S,D]");
  expect_error(ErrorKind::Shape, ada({f({2, 5, 6}), f({3, 6}), f({2, 6})}), "", "scale");
  expect_error(ErrorKind::Shape, ada({f({2, 5, 6}), f({2, 6}), f({2, 5})}), "", "shift");
  expect_error(
      ErrorKind::Value,
      [] {
        infer_type(OpKind::AdaLayerNorm, Attrs().set("eps", NAN),
                   {f({2, 5, 6}), f({2, 6}), f({2, 6})});
      },
      "", "eps");

  auto gated = [](Types t) { return [=] { infer_type(OpKind::GatedResidual, Attrs(), t); }; };
  EXPECT_EQ(infer_type(OpKind::GatedResidual, Attrs(), {f({2, 5, 6}), f({2, 5, 6}), f({6})}),
            f({2, 5, 6}));
  expect_error(ErrorKind::Shape, gated({f({2, 5, 6}), f({2, 5, 5}), f({2, 6})}), "", "y must");
  expect_error(ErrorKind::Shape, gated({f({2, 5, 6}), f({2, 5, 6}), f({5, 6})}), "", "gate");
  expect_error(ErrorKind::Shape, gated({f({2, 5, 6}), f({2, 5, 6}), f({2, 2, 5, 6})}), "", "gate");
}

// x [2,5,8], wq [8,8], wk/wv [8,8/heads·kv], wo [8,8].
Types block_inputs(int64_t heads, int64_t kv_heads, int64_t dout = 8) {
  int64_t kv_cols = 8 / heads * kv_heads;
  return {f({2, 5, 8}), f({8, 8}), f({8, kv_cols}), f({8, kv_cols}), f({8, dout})};
}

Attrs block_attrs(int64_t heads, int64_t kv_heads, MaskKind mask = MaskKind::None,
                  int64_t window = 0) {
  return Attrs()
      .set("heads", heads)
      .set("kv_heads", kv_heads)
      .set("mask_kind", mask)
      .set("window", window);
}

TEST(FusedCompositesBadInputs, AttentionBlock) {
  EXPECT_EQ(infer_type(OpKind::FusedAttentionBlock, block_attrs(4, 2), block_inputs(4, 2, 6)),
            f({2, 5, 6}));
  auto blk = [](Attrs a, Types t) {
    return [=] { infer_type(OpKind::FusedAttentionBlock, a, t); };
  };
  expect_error(ErrorKind::Value, blk(block_attrs(2, 0, MaskKind::Custom), block_inputs(2, 2)), "",
               "mask input");
  expect_error(ErrorKind::Value, blk(block_attrs(2, 0, MaskKind::Bias), block_inputs(2, 2)), "",
               "mask input");
  expect_error(ErrorKind::Value,
               blk(block_attrs(2, 0, MaskKind::SlidingWindow, -1), block_inputs(2, 2)), "",
               "window");
  expect_error(ErrorKind::Value, blk(block_attrs(0, 0), block_inputs(2, 2)), "", "heads");
  expect_error(ErrorKind::Value, blk(block_attrs(4, 3), block_inputs(4, 2)), "", "kv_heads");
  expect_error(ErrorKind::Value, blk(block_attrs(4, -1), block_inputs(4, 2)), "", "kv_heads");
  expect_error(ErrorKind::Shape,
               blk(block_attrs(3, 0), {f({2, 5, 8}), f({8, 8}), f({8, 8}), f({8, 8}), f({8, 8})}),
               "", "multiple of heads");
  expect_error(ErrorKind::Shape, blk(block_attrs(4, 2), block_inputs(4, 4)), "", "kv_heads·Dh");
  expect_error(ErrorKind::Shape,
               blk(block_attrs(2, 0), {f({2, 5, 8}), f({7, 8}), f({8, 8}), f({8, 8}), f({8, 8})}),
               "", "wq");
  expect_error(ErrorKind::Shape,
               blk(block_attrs(2, 0), {f({2, 5, 8}), f({8, 8}), f({8, 8}), f({8, 8}), f({6, 8})}),
               "", "wo");
  expect_error(ErrorKind::Shape,
               blk(block_attrs(2, 0), {f({5, 8}), f({8, 8}), f({8, 8}), f({8, 8}), f({8, 8})}), "",
               "[B,S,D]");
  Types with_bias = block_inputs(2, 2);
  with_bias.insert(with_bias.end(), {f({8}), f({8}), f({8}), f({7})});
  expect_error(ErrorKind::Shape, blk(block_attrs(2, 0), with_bias), "", "bo");
  Types wrong_dtype = block_inputs(2, 2);
  wrong_dtype[3] = TensorType{DType::F64, {8, 8}};
  expect_error(ErrorKind::DType, blk(block_attrs(2, 0), wrong_dtype));
}

TEST(FusedCompositesBadInputs, TransformerLayer) {
  // x [2,5,8], D = 8, F = 16; inputs in ops.def order with the optional ones absent.
  auto layer = [](Shape wo, Shape w1, Shape w2, std::optional<TensorType> ln1g = std::nullopt) {
    Types t = {f({2, 5, 8}), f({8, 8}),        f({8, 8}),    f({8, 8}),       f(std::move(wo)),
               std::nullopt, std::nullopt,     std::nullopt, std::nullopt,    ln1g,
               std::nullopt, f(std::move(w1)), std::nullopt, f(std::move(w2))};
    return t;
  };
  Attrs a = Attrs().set("heads", 2);
  EXPECT_EQ(infer_type(OpKind::FusedTransformerLayer, a, layer({8, 8}, {8, 16}, {16, 8})),
            f({2, 5, 8}));
  auto bad = [&](Types t) { return [=] { infer_type(OpKind::FusedTransformerLayer, a, t); }; };
  expect_error(ErrorKind::Shape, bad(layer({8, 6}, {8, 16}, {16, 8})), "", "model width");
  expect_error(ErrorKind::Shape, bad(layer({8, 8}, {7, 16}, {16, 8})), "", "w1");
  expect_error(ErrorKind::Shape, bad(layer({8, 8}, {8, 16}, {15, 8})), "", "w2");
  expect_error(ErrorKind::Shape, bad(layer({8, 8}, {8, 16}, {16, 7})), "", "w2");
  expect_error(ErrorKind::Shape, bad(layer({8, 8}, {8, 16}, {16, 8}, f({7}))), "", "ln1_gamma");
  expect_error(
      ErrorKind::Shape,
      [&] {
        infer_type(OpKind::FusedTransformerLayer, Attrs().set("heads", 3),
                   layer({8, 8}, {8, 16}, {16, 8}));
      },
      "", "heads");
  expect_error(
      ErrorKind::Value,
      [&] {
        infer_type(OpKind::FusedTransformerLayer, Attrs().set("heads", 2).set("eps", -1.0),
                   layer({8, 8}, {8, 16}, {16, 8}));
      },
      "", "eps");
}

}  // namespace
}  // namespace tessel::testing
