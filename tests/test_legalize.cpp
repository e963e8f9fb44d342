// Legalization against a restricted, test-only backend that claims a small subset: composites
// are rewritten into claimed kinds and still compute the right values; anything left unclaimed
// fails with one message listing every offending node.
#include <gtest/gtest.h>

#include "op_test_util.h"

namespace tessel {
namespace {

using namespace testing;

// Claims sources, f32 MatMul / Binary (Add, Mul) / Activation (Relu, Gelu) natively; runs the
// legalized graph with the reference's executable (every node it keeps is a reference kernel).
class RestrictedBackend : public Backend {
 public:
  RestrictedBackend() {
    for (OpKind k : {OpKind::Input, OpKind::Param, OpKind::Constant})
      claims_.add({k, dtypes::kEvery, How::Native, {}});
    claims_.add({OpKind::MatMul, {DType::F32}, How::Native, {}});
    claims_.add({OpKind::Binary,
                 {DType::F32},
                 How::Native,
                 {static_cast<int>(BinaryOp::Add), static_cast<int>(BinaryOp::Mul)}});
    claims_.add({OpKind::Activation,
                 {DType::F32},
                 How::Native,
                 {static_cast<int>(ActivationKind::Relu), static_cast<int>(ActivationKind::Gelu)}});
    claims_.add({OpKind::FusedMatMulBiasAct, {DType::F32}, How::Decomposed, {}});
  }
  const std::string& name() const override { return name_; }
  const ClaimTable& claims() const override { return claims_; }
  using Backend::compile;
  std::unique_ptr<Executable> compile(const Graph& g, const CompileOptions& o) const override {
    return backend("reference").compile(g, o);
  }

 private:
  std::string name_ = "restricted";
  ClaimTable claims_;
};

TEST(Legalize, CompositeIsRewrittenIntoClaimedKindsAndMatches) {
  RestrictedBackend be;
  Graph g;
  Value x = g.input(DType::F32, {2, 3});
  Value w = g.input(DType::F32, {3, 2});
  Value b = g.input(DType::F32, {2});
  g.outputs = {
      g.add1(OpKind::FusedMatMulBiasAct, Attrs().set("act", ActivationKind::Relu), {x, w, b})};
  Graph legal = legalize(g, be);
  for (const Node& n : legal.nodes()) EXPECT_NE(n.kind, OpKind::FusedMatMulBiasAct);
  auto out = be.compile(legal)->run(std::vector<HostTensor>{
      f32({2, 3}, {1, 2, 3, -1, -2, -3}), f32({3, 2}, {1, 0, 0, 1, 1, 1}), f32({2}, {0.5, -10})});
  // x·W = [[4, 5], [-4, -5]]; + b = [[4.5, -5], [-3.5, -15]]; relu.
  expect_close(out[0], {4.5, 0, 0, 0});
}

TEST(Legalize, UnclaimedNodesAreAllListed) {
  RestrictedBackend be;
  Graph g;
  Value x = g.input(DType::F64, {2, 3}, "x64");
  Value y = g.input(DType::F32, {2, 3}, "y32");
  Value a = g.add1(OpKind::Binary, Attrs().set("op", BinaryOp::Add), {x, x});  // f64: unclaimed
  Value s = g.add1(OpKind::Sort, Attrs(), {y});  // kind unclaimed, no decomposition
  g.outputs = {a, s};
  try {
    legalize(g, be);
    FAIL() << "legalize accepted unclaimed nodes";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    std::string m = e.what();
    EXPECT_NE(m.find("2 node(s)"), std::string::npos) << m;
    EXPECT_NE(m.find("[Binary] node %2"), std::string::npos) << m;
    EXPECT_NE(m.find("variant Add"), std::string::npos) << m;
    EXPECT_NE(m.find("f64[2,3]"), std::string::npos) << m;
    EXPECT_NE(m.find("claimed for f32 only"), std::string::npos) << m;
    EXPECT_NE(m.find("[Sort] node %3"), std::string::npos) << m;
    EXPECT_NE(m.find("not claimed for any dtype"), std::string::npos) << m;
    EXPECT_NE(m.find("'restricted'"), std::string::npos) << m;
  }
}

TEST(Legalize, SoftmaxDecomposesWhereUnclaimed) {
  // The restricted backend has no Softmax, Reduce or Sub: the decomposition alone cannot make it
  // legal, and the failure names the kinds it produced.
  RestrictedBackend be;
  Graph g;
  Value x = g.input(DType::F32, {2, 3});
  g.outputs = {g.add1(OpKind::Softmax, Attrs(), {x})};
  try {
    legalize(g, be);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[Reduce]"), std::string::npos) << e.what();
  }
  // On the reference, the decomposed graph matches the native kernel and hand values.
  for (bool log : {false, true}) {
    Graph h;
    Value y = h.input(DType::F64, {2, 3});
    h.outputs = {h.add1(OpKind::Softmax, Attrs().set("axis", int64_t{1}).set("log", log), {y})};
    HostTensor in = f64({2, 3}, {1, 2, 3, 0, 0, 1000});
    auto native = compile_for(h, backend("reference"))->run(std::vector<HostTensor>{in});
    auto decomposed =
        compile_for(decompose(h), backend("reference"))->run(std::vector<HostTensor>{in});
    expect_close(decomposed[0], native[0], 1e-12, 1e-12, log ? "log_softmax" : "softmax");
    double z = std::exp(-2.0) + std::exp(-1.0) + 1.0;
    double want = log ? -std::log(z) : 1.0 / z;  // element [0, 2]
    EXPECT_NEAR(decomposed[0].get_f64(2), want, 1e-12);
    EXPECT_NEAR(decomposed[0].get_f64(5), log ? 0.0 : 1.0, 1e-12);  // max-shifted: no overflow
  }
}

TEST(Legalize, UnclaimedVariantIsRejected) {
  RestrictedBackend be;
  Graph g;
  Value x = g.input(DType::F32, {4});
  g.outputs = {g.add1(OpKind::Binary, Attrs().set("op", BinaryOp::Sub), {x, x})};
  EXPECT_THROW(legalize(g, be), Error);
}

TEST(Legalize, NativeClaimsAreKeptAsIs) {
  RestrictedBackend be;
  Graph g;
  Value x = g.input(DType::F32, {2, 2});
  g.outputs = {g.add1(OpKind::MatMul, Attrs(), {x, x})};
  Graph legal = legalize(g, be);
  EXPECT_EQ(legal.to_string(), g.to_string());
}

TEST(Legalize, ReferenceRunsEveryReadyKindItClaims) {
  // The reference backend legalizes a composite by decomposition too.
  Graph g;
  Value x = g.input(DType::F32, {1, 2});
  Value w = g.input(DType::F32, {2, 2});
  g.outputs = {g.add1(OpKind::FusedMatMulBiasAct, Attrs(), {x, w, Value{}})};
  auto out = compile_for(g, backend("reference"))
                 ->run(std::vector<HostTensor>{f32({1, 2}, {1, 2}), f32({2, 2}, {1, 2, 3, 4})});
  expect_close(out[0], {7, 10});
}

TEST(Backends, UnknownDeviceIsAClearError) {
  try {
    backend("tpu9000");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Device);
    EXPECT_NE(std::string(e.what()).find("reference"), std::string::npos);
  }
}

}  // namespace
}  // namespace tessel
