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

// A frozen batch norm after a convolution with constant weights folds into it (with and without
// the convolution's bias and the norm's affine; grouped); it stays when the convolution's
// output is needed elsewhere too.
TEST(Passes, BatchNormFoldsIntoTheConvolutionBeforeIt) {
  for (int variant = 0; variant < 5; ++variant) {
    const bool bias = variant != 1, affine = variant != 2;
    const int64_t groups = variant == 2 || variant == 4 ? 2 : 1;
    const bool transposed = variant >= 3;  // ConvTranspose2d: w is [C, O/groups, kh, kw]
    const OpKind kind = transposed ? OpKind::ConvTranspose2d : OpKind::Conv;
    Graph g;
    Value x = g.input(DType::F32, {2, 4, 7, 9});
    const Shape w_shape = transposed ? Shape{4, 6 / groups, 2, 3} : Shape{6, 4 / groups, 3, 3};
    Value w = g.constant(random_tensor(DType::F32, w_shape, 1, -1, 1));
    std::vector<Value> conv_in = {x, w};
    if (bias) conv_in.push_back(g.constant(random_tensor(DType::F32, {6}, 2, -1, 1)));
    Attrs attrs = Attrs().set("groups", groups);
    if (transposed)
      attrs.set("strides", std::vector<int64_t>{2, 2});
    else
      attrs.set("pads", std::vector<int64_t>{1, 1});
    Value y = g.add1(kind, attrs, conv_in);
    std::vector<Value> bn_in = {y, g.constant(random_tensor(DType::F32, {6}, 3, -1, 1)),
                                g.constant(random_tensor(DType::F32, {6}, 4, 0.5, 2))};
    if (affine) {
      bn_in.push_back(g.constant(random_tensor(DType::F32, {6}, 5, -2, 2)));
      bn_in.push_back(g.constant(random_tensor(DType::F32, {6}, 6, -1, 1)));
    }
    g.outputs = {g.add1(OpKind::BatchNormInference, Attrs().set("eps", 1e-3), bn_in)};
    Graph folded = eliminate_dead_code(fold_batch_norms(g));
    verify(folded, "fold_batch_norms");
    int bn = 0, conv = 0;
    for (const Node& n : folded.nodes()) {
      bn += n.kind == OpKind::BatchNormInference;
      conv += n.kind == kind;
    }
    EXPECT_EQ(bn, 0) << folded.to_string();
    EXPECT_EQ(conv, 1) << folded.to_string();
    const std::vector<HostTensor> args = {random_tensor(DType::F32, {2, 4, 7, 9}, 7, -2, 2)};
    HostTensor got = compile_for(folded, backend("reference"))->run(args)[0];
    // The unfolded graph straight on the reference backend (compile_for would fold it too).
    HostTensor want = backend("reference").compile(g)->run(args)[0];
    expect_close(got, want, 1e-5, 1e-5, "variant " + std::to_string(variant));
    // The convolution's output also returned: nothing folds.
    g.outputs.push_back(y);
    Graph kept = fold_batch_norms(g);
    int kept_bn = 0;
    for (const Node& n : kept.nodes()) kept_bn += n.kind == OpKind::BatchNormInference;
    EXPECT_EQ(kept_bn, 1);
  }
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
