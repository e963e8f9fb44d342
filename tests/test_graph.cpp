// Graph construction: arity, attribute and shape errors name the op, the node and what was
// expected; passes (CSE, DCE, constant folding, verify) do what they say.
#include <gtest/gtest.h>

#include "op_test_util.h"

namespace tessel {
namespace {

using namespace testing;

TEST(Graph, WrongArityNamesOpNodeAndSignature) {
  Graph g;
  Value x = g.input(DType::F32, {2});
  std::string m = error_of([&] { g.add(OpKind::MatMul, Attrs(), {x}); }, ErrorKind::Value);
  EXPECT_NE(m.find("[MatMul] node %1"), std::string::npos) << m;
  EXPECT_NE(m.find("got 1 inputs, expected 2"), std::string::npos) << m;
}

TEST(Graph, UnknownAttributeListsTheValidOnes) {
  Graph g;
  Value x = g.input(DType::F32, {2});
  std::string m = error_of([&] { g.add(OpKind::Softmax, Attrs().set("axes", int64_t{0}), {x}); },
                           ErrorKind::Value);
  EXPECT_NE(m.find("unknown attribute 'axes'"), std::string::npos) << m;
  EXPECT_NE(m.find("axis"), std::string::npos) << m;
}

TEST(Graph, MissingRequiredAttribute) {
  Graph g;
  Value x = g.input(DType::F32, {2});
  std::string m = error_of([&] { g.add(OpKind::Activation, Attrs(), {x}); }, ErrorKind::Value);
  EXPECT_NE(m.find("required attribute 'kind' (ActivationKind)"), std::string::npos) << m;
}

TEST(Graph, WrongAttributeTypeAndBadEnumValue) {
  Graph g;
  Value x = g.input(DType::F32, {2});
  error_of([&] { g.add(OpKind::Softmax, Attrs().set("axis", "zero"), {x}); }, ErrorKind::Value);
  std::string m = error_of(
      [&] { g.add(OpKind::Activation, Attrs().set("kind", AttrValue(int64_t{999})), {x}); },
      ErrorKind::Value);
  EXPECT_NE(m.find("not a valid ActivationKind"), std::string::npos) << m;
}

TEST(Graph, DefaultsAreFilledFromTheTable) {
  Graph g;
  Value x = g.input(DType::F32, {2, 3});
  Value y = g.add1(OpKind::LayerNorm, Attrs(), {x});
  const Node& n = g.node(y.node);
  EXPECT_EQ(n.attrs.i("axis"), -1);
  EXPECT_DOUBLE_EQ(n.attrs.f("eps"), 1e-5);
}

TEST(Graph, NegativeInputShapeIsAShapeError) {
  Graph g;
  error_of([&] { g.input(DType::F32, {2, -1}); }, ErrorKind::Shape);
}

TEST(Passes, CseMergesIdenticalNodes) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F32, {3});
  Value a = b.exp(x), c = b.exp(x);
  g.outputs = {b.add(a, c)};
  Graph out = eliminate_common_subexpressions(g);
  int exps = 0;
  for (const Node& n : out.nodes()) exps += n.kind == OpKind::Activation;
  EXPECT_EQ(exps, 1);
}

TEST(Passes, CseKeepsDifferentAttributes) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F32, {3});
  g.outputs = {b.add(b.exp(x), b.log(x))};
  EXPECT_EQ(eliminate_common_subexpressions(g).size(), g.size());
}

TEST(Passes, DceDropsDeadNodesButKeepsArguments) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F32, {3});
  Value unused = g.input(DType::F32, {5});
  (void)b.exp(unused);  // dead
  g.outputs = {b.neg(x)};
  Graph out = eliminate_dead_code(g);
  EXPECT_EQ(out.size(), 3);  // two inputs and the neg
  EXPECT_EQ(out.input_nodes().size(), 2u);
}

TEST(Passes, ConstantFoldingEvaluatesConstantSubgraphs) {
  Graph g;
  GraphBuilder b(g);
  Value c = g.constant(f32({2}, {1, 4}));
  Value x = g.input(DType::F32, {2});
  g.outputs = {b.add(x, b.sqrt(c))};
  Graph out = eliminate_dead_code(fold_constants(g));
  int sqrt_nodes = 0;
  for (const Node& n : out.nodes()) sqrt_nodes += n.kind == OpKind::Activation;
  EXPECT_EQ(sqrt_nodes, 0) << out.to_string();
  auto r = compile_for(out, backend("reference"))->run(std::vector<HostTensor>{f32({2}, {10, 20})});
  expect_close(r[0], {11, 22});
}

TEST(Passes, VerifyAcceptsWellFormedGraphs) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F32, {2, 3});
  g.outputs = {b.softmax(x)};
  EXPECT_NO_THROW(verify(g, "test"));
}

}  // namespace
}  // namespace tessel
