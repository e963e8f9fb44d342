// VJP rules of the ConvPool kinds — Conv (1-D/2-D/3-D), ConvTranspose2d and every PoolKind —
// against central finite differences in f64 on the reference, with a non-default value of every
// attribute (a rule that ignored one would fail); the Backward kinds they emit
// (Conv{2,3}dBackward{Input,Weight}, MaxPool{2,3}dBackward) as ops: hand values, cpu against the
// reference in several dtypes and layouts, each decomposition against the kernels; and the
// gradients against PyTorch autograd goldens (tests/goldens/gen_conv_pool_grad.py) on the
// reference and cpu.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "autodiff/gradient_check.h"
#include "op_test_util.h"
#include "ops/rules.h"
#include "passes/passes.h"

namespace tessel::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Finite differences

// The gradients of a Conv / ConvTranspose2d node w.r.t. x, w and, when given, the bias.
void expect_conv_gradients(OpKind kind, const Attrs& attrs, const Shape& x, const Shape& w,
                           int64_t bias, const std::string& what) {
  std::vector<HostTensor> args = {rnd(x, 1), rnd(w, 2)};
  if (bias > 0) args.push_back(rnd({bias}, 3));
  expect_gradients(
      args,
      [&](GraphBuilder& b, const std::vector<Value>& in) {
        return b.op1(kind, attrs, {in[0], in[1], bias > 0 ? in[2] : Value{}});
      },
      std::string(op_name(kind)) + " " + what);
}

void expect_pool_gradients(PoolKind kind, Attrs attrs, const HostTensor& x,
                           const std::string& what) {
  attrs.set("kind", kind);
  expect_gradients(
      {x},
      [&](GraphBuilder& b, const std::vector<Value>& in) {
        return b.op1(OpKind::Pool, attrs, {in[0]});
      },
      "Pool " + what);
}

TEST(AutodiffConvPool, Conv) {
  struct Case {
    const char* what;
    Shape x, w;
    int64_t bias;
    Attrs attrs;
  };
  auto a = [](int64_t groups) { return Attrs().set("groups", groups); };
  const Case cases[] = {
      {"1d groups stride pad dilation",
       {2, 4, 11},
       {6, 2, 3},
       6,
       a(2).set("strides", Shape{2}).set("pads", Shape{1}).set("dilations", Shape{2})},
      {"1d depthwise asymmetric pads", {3, 3, 9}, {3, 1, 4}, 0, a(3).set("pads", Shape{2, 1})},
      {"2d stride pad dilation",
       {2, 3, 7, 6},
       {4, 3, 3, 2},
       4,
       a(1).set("strides", Shape{2, 1}).set("pads", Shape{1, 0}).set("dilations", Shape{1, 2})},
      {"2d groups stride 3",
       {2, 6, 8, 7},
       {4, 3, 2, 3},
       4,
       a(2).set("strides", Shape{3, 2}).set("pads", Shape{1, 2})},
      {"2d depthwise multiplier 2", {2, 4, 5, 7}, {8, 1, 3, 3}, 8, a(4).set("pads", Shape{1, 1})},
      {"2d asymmetric pads stride 2",
       {2, 3, 6, 5},
       {2, 3, 2, 3},
       0,
       a(1).set("strides", Shape{2, 2}).set("pads", Shape{0, 2, 1, 1})},
      {"3d groups dilation stride",
       {2, 2, 5, 5, 6},
       {4, 1, 2, 3, 2},
       4,
       a(2).set("strides", Shape{1, 2, 1})
           .set("pads", Shape{1, 0, 1})
           .set("dilations", Shape{2, 1, 1})},
      {"3d asymmetric pads",
       {1, 3, 4, 3, 5},
       {2, 3, 2, 2, 3},
       0,
       a(1).set("strides", Shape{2, 1, 2}).set("pads", Shape{1, 0, 0, 0, 1, 2})},
  };
  for (const Case& c : cases)
    expect_conv_gradients(OpKind::Conv, c.attrs, c.x, c.w, c.bias, c.what);
}

TEST(AutodiffConvPool, ConvSomeInputs) {
  const Attrs attrs =
      Attrs().set("groups", int64_t{2}).set("strides", Shape{2, 1}).set("pads", Shape{1, 1});
  const std::vector<HostTensor> args = {rnd({2, 4, 5, 6}, 4), rnd({6, 2, 3, 2}, 5), rnd({6}, 6)};
  for (std::vector<int> wrt : {std::vector<int>{0}, {1}, {2}, {1, 2}})
    expect_gradients(
        args,
        [&](GraphBuilder& b, const std::vector<Value>& in) {
          return b.op1(OpKind::Conv, attrs, {in[0], in[1], in[2]});
        },
        "Conv wrt a subset", wrt);
}

TEST(AutodiffConvPool, ConvTranspose2d) {
  auto a = [](Shape strides, Shape pads, Shape dilations, Shape output_padding, int64_t groups) {
    return Attrs()
        .set("strides", strides)
        .set("pads", pads)
        .set("dilations", dilations)
        .set("output_padding", output_padding)
        .set("groups", groups);
  };
  expect_conv_gradients(OpKind::ConvTranspose2d, a({2, 3}, {1, 0}, {1, 1}, {1, 2}, 2), {2, 4, 3, 5},
                        {4, 3, 3, 2}, 6, "groups, stride, output_padding");
  // output_padding >= stride (allowed below the dilation): rows no convolution of x reaches.
  expect_conv_gradients(OpKind::ConvTranspose2d, a({1, 1}, {0, 1}, {2, 3}, {1, 2}, 1), {1, 3, 4, 4},
                        {3, 2, 3, 3}, 0, "output_padding >= stride");
  expect_conv_gradients(OpKind::ConvTranspose2d, a({2, 2}, {1, 0, 0, 2}, {1, 2}, {1, 0}, 1),
                        {2, 2, 3, 4}, {2, 3, 2, 3}, 3, "asymmetric pads, dilation");
  expect_conv_gradients(OpKind::ConvTranspose2d, Attrs(), {2, 3, 3, 2}, {3, 2, 2, 2}, 2,
                        "defaults");
}

Attrs window(Shape kernel, Shape strides, Shape pads, bool ceil_mode = false) {
  return Attrs()
      .set("kernel", kernel)
      .set("strides", strides)
      .set("pads", pads)
      .set("ceil_mode", ceil_mode);
}

TEST(AutodiffConvPool, MaxPool) {
  expect_pool_gradients(PoolKind::Max, window({3}, {2}, {1}, true).set("dilations", Shape{2}),
                        rnd({2, 3, 10}, 7), "1d ceil_mode dilation");
  expect_pool_gradients(PoolKind::Max, window({3, 2}, {2, 2}, {1, 1}).set("dilations", Shape{2, 1}),
                        rnd({2, 2, 7, 8}, 8), "2d dilation pads");
  expect_pool_gradients(PoolKind::Max, window({3, 3}, {2, 2}, {}, true), rnd({1, 3, 6, 7}, 9),
                        "2d ceil_mode overlapping");
  expect_pool_gradients(PoolKind::Max, window({2, 3}, {}, {}), rnd({2, 2, 6, 7}, 10),
                        "2d default strides");
  expect_pool_gradients(PoolKind::Max, window({3, 2}, {1, 2}, {0, 1, 1, 0}), rnd({2, 2, 5, 6}, 11),
                        "2d asymmetric pads");
  expect_pool_gradients(PoolKind::Max, window({2, 3, 2}, {2, 2, 1}, {1, 1, 0}, true),
                        rnd({2, 2, 5, 6, 4}, 12), "3d ceil_mode pads");
  expect_pool_gradients(PoolKind::Max,
                        window({2, 2, 2}, {1, 2, 1}, {}).set("dilations", Shape{2, 1, 1}),
                        rnd({1, 2, 5, 4, 4}, 13), "3d dilation");
}

TEST(AutodiffConvPool, AvgPool) {
  for (bool include_pad : {false, true}) {
    const std::string pad = include_pad ? " count_include_pad" : " count_exclude_pad";
    auto avg = [&](Attrs a) { return a.set("count_include_pad", include_pad); };
    expect_pool_gradients(PoolKind::Avg, avg(window({3}, {2}, {1}, true)), rnd({2, 2, 7}, 14),
                          "avg 1d ceil_mode clipped" + pad);
    expect_pool_gradients(PoolKind::Avg, avg(window({3, 2}, {2, 2}, {1, 1}, true)),
                          rnd({2, 2, 7, 6}, 15), "avg 2d ceil_mode" + pad);
    expect_pool_gradients(PoolKind::Avg, avg(window({3, 3}, {1, 2}, {1, 0})), rnd({2, 2, 6, 6}, 16),
                          "avg 2d overlapping" + pad);
    expect_pool_gradients(PoolKind::Avg, avg(window({2, 3}, {2, 1}, {1, 0, 0, 1})),
                          rnd({2, 2, 5, 6}, 17), "avg 2d asymmetric pads" + pad);
    expect_pool_gradients(PoolKind::Avg, avg(window({3, 2, 2}, {2, 2, 2}, {1, 1, 0}, true)),
                          rnd({2, 2, 5, 5, 4}, 18), "avg 3d ceil_mode" + pad);
  }
  expect_pool_gradients(PoolKind::Avg, window({2, 2}, {}, {}), rnd({2, 3, 4, 6}, 19),
                        "avg 2d default strides");
}

TEST(AutodiffConvPool, LpPool) {
  // Positive inputs: the p-th root is differentiable there for every p.
  auto lp = [](Attrs a, int64_t p) { return a.set("p", p); };
  expect_pool_gradients(PoolKind::Lp, lp(window({3}, {2}, {}, true), 2), rnd({2, 3, 8}, 20, 0.2, 1),
                        "lp 1d p=2 ceil_mode");
  expect_pool_gradients(PoolKind::Lp, lp(window({2}, {2}, {}), 1), rnd({2, 2, 9}, 21, 0.2, 1),
                        "lp 1d p=1");
  expect_pool_gradients(PoolKind::Lp, lp(window({2, 3}, {2, 2}, {}), 3),
                        rnd({2, 2, 7, 6}, 22, 0.2, 1), "lp 2d p=3");
  expect_pool_gradients(PoolKind::Lp, lp(window({2, 2, 2}, {1, 2, 2}, {}, true), 2),
                        rnd({1, 2, 3, 5, 4}, 23, 0.2, 1), "lp 3d p=2 ceil_mode");
}

TEST(AutodiffConvPool, AdaptivePools) {
  for (PoolKind kind : {PoolKind::AdaptiveAvg, PoolKind::AdaptiveMax}) {
    const std::string name = kind == PoolKind::AdaptiveAvg ? "adaptive avg" : "adaptive max";
    auto size = [](Shape s) { return Attrs().set("output_size", s); };
    expect_pool_gradients(kind, size({3}), rnd({2, 3, 7}, 24), name + " 1d 7 -> 3");
    expect_pool_gradients(kind, size({8}), rnd({2, 2, 5}, 25), name + " 1d upsampling 5 -> 8");
    expect_pool_gradients(kind, size({3, 2}), rnd({2, 2, 7, 5}, 26), name + " 2d");
    expect_pool_gradients(kind, size({2, 3, 3}), rnd({1, 2, 5, 4, 7}, 27), name + " 3d");
  }
}

// ---------------------------------------------------------------------------------------------
// The Backward kinds as ops

struct BackwardCase {
  std::string what;
  OpKind kind;
  Attrs attrs;
  std::vector<HostTensor> inputs;  // f64
};

Attrs conv_attrs(Shape strides, Shape pads, Shape dilations, int64_t groups) {
  return Attrs()
      .set("strides", strides)
      .set("pads", pads)
      .set("dilations", dilations)
      .set("groups", groups);
}

std::vector<BackwardCase> backward_cases() {
  std::vector<BackwardCase> out;
  // Conv2d: x [2,4,7,6] * w [6,2,3,2], groups 2, stride (2,1), pads (1,0,0,1), dilation (1,2)
  // -> dy [2,6,3,5].
  const Attrs c2 = conv_attrs({2, 1}, {1, 0, 0, 1}, {1, 2}, 2);
  out.push_back({"conv2d input",
                 OpKind::Conv2dBackwardInput,
                 Attrs(c2).set("input_shape", Shape{2, 4, 7, 6}),
                 {rnd({2, 6, 3, 5}, 40), rnd({6, 2, 3, 2}, 41)}});
  out.push_back({"conv2d weight",
                 OpKind::Conv2dBackwardWeight,
                 Attrs(c2).set("weight_shape", Shape{6, 2, 3, 2}),
                 {rnd({2, 6, 3, 5}, 42), rnd({2, 4, 7, 6}, 43)}});
  // Depthwise, stride 3 with rows the windows never reach: x [1,3,8,8] * w [3,1,2,2] -> [3,3].
  const Attrs dw = conv_attrs({3, 3}, {}, {}, 3);
  out.push_back({"conv2d depthwise input",
                 OpKind::Conv2dBackwardInput,
                 Attrs(dw).set("input_shape", Shape{1, 3, 8, 8}),
                 {rnd({1, 3, 3, 3}, 44), rnd({3, 1, 2, 2}, 45)}});
  out.push_back({"conv2d depthwise weight",
                 OpKind::Conv2dBackwardWeight,
                 Attrs(dw).set("weight_shape", Shape{3, 1, 2, 2}),
                 {rnd({1, 3, 3, 3}, 46), rnd({1, 3, 8, 8}, 47)}});
  // Conv3d: x [2,2,5,4,6] * w [4,1,2,2,3], groups 2, stride (1,2,2), pads 1, dilation (2,1,1)
  // -> dy [2,4,5,3,3].
  const Attrs c3 = conv_attrs({1, 2, 2}, {1, 1, 1}, {2, 1, 1}, 2);
  out.push_back({"conv3d input",
                 OpKind::Conv3dBackwardInput,
                 Attrs(c3).set("input_shape", Shape{2, 2, 5, 4, 6}),
                 {rnd({2, 4, 5, 3, 3}, 48), rnd({4, 1, 2, 2, 3}, 49)}});
  out.push_back({"conv3d weight",
                 OpKind::Conv3dBackwardWeight,
                 Attrs(c3).set("weight_shape", Shape{4, 1, 2, 2, 3}),
                 {rnd({2, 4, 5, 3, 3}, 50), rnd({2, 2, 5, 4, 6}, 51)}});
  // Max pools: x [2,3,7,8], kernel (3,2), stride (2,2), pads (1,0,0,1), dilation (2,1), ceil.
  const Attrs m2 = window({3, 2}, {2, 2}, {1, 0, 0, 1}, true).set("dilations", Shape{2, 1});
  out.push_back({"max pool 2d",
                 OpKind::MaxPool2dBackward,
                 m2,
                 {rnd({2, 3, 3, 4}, 52), rnd({2, 3, 7, 8}, 53)}});
  out.push_back({"max pool 2d unbatched",
                 OpKind::MaxPool2dBackward,
                 m2,
                 {rnd({3, 3, 4}, 54), rnd({3, 7, 8}, 55)}});
  out.push_back({"max pool 3d",
                 OpKind::MaxPool3dBackward,
                 window({2, 3, 2}, {}, {1, 1, 0}, true),
                 {rnd({2, 2, 3, 3, 2}, 56), rnd({2, 2, 5, 6, 4}, 57)}});
  return out;
}

TEST(ConvPoolBackwardKinds, HandValues) {
  // Max pool 2×2 over a 2×4 plane: each dy element lands on its window's maximum.
  HostTensor x = f64({1, 1, 2, 4}, {1, 5, 2, 0, 3, 4, 9, 9});
  HostTensor dy = f64({1, 1, 1, 2}, {10, 20});
  for (const char* be : {"reference", "cpu"})
    expect_close(
        run_op1(OpKind::MaxPool2dBackward, Attrs().set("kernel", Shape{2, 2}), {dy, x}, be),
        {0, 10, 0, 0, 0, 0, 20, 0}, 0, 0, std::string("max pool ") + be);
  // Conv 1×1 input [1,1,2,2] with w [1,1,2,2]: dx = dy · w, dw = dy · x.
  HostTensor w = f64({1, 1, 2, 2}, {1, 2, 3, 4});
  HostTensor one = f64({1, 1, 1, 1}, {2});
  HostTensor xi = f64({1, 1, 2, 2}, {5, 6, 7, 8});
  for (const char* be : {"reference", "cpu"}) {
    expect_close(run_op1(OpKind::Conv2dBackwardInput, Attrs().set("input_shape", Shape{1, 1, 2, 2}),
                         {one, w}, be),
                 {2, 4, 6, 8}, 0, 0, std::string("conv input ") + be);
    expect_close(run_op1(OpKind::Conv2dBackwardWeight,
                         Attrs().set("weight_shape", Shape{1, 1, 2, 2}), {one, xi}, be),
                 {10, 12, 14, 16}, 0, 0, std::string("conv weight ") + be);
  }
}

TEST(ConvPoolBackwardKinds, CpuMatchesReference) {
  for (const BackwardCase& c : backward_cases())
    for (DType dtype : {DType::F32, DType::F64, DType::BF16}) {
      std::vector<HostTensor> in;
      for (const HostTensor& t : c.inputs) in.push_back(cast_to(t, dtype));
      expect_parity_layouts(c.kind, c.attrs, in, c.what + " " + dtype_name(dtype));
    }
}

TEST(ConvPoolBackwardKinds, DecompositionsMatchKernels) {
  const Backend& ref = backend("reference");
  std::map<OpKind, int> checked;
  for (const BackwardCase& c : backward_cases()) {
    SCOPED_TRACE(c.what);
    Graph g;
    GraphBuilder b(g);
    std::vector<Value> in;
    for (const HostTensor& t : c.inputs) in.push_back(g.input(t.dtype, t.shape));
    g.outputs = {b.op1(c.kind, c.attrs, in)};
    ASSERT_NE(rules_for(c.kind).decompose, nullptr);
    HostTensor native = compile_for(g, ref)->run(c.inputs)[0];
    Graph d = decompose(g);
    for (int id = 0; id < d.size(); ++id) EXPECT_NE(d.node(id).kind, c.kind) << "not decomposed";
    for (const char* be : {"reference", "cpu"})
      expect_close(compile_for(d, backend(be))->run(c.inputs)[0], native, 1e-12, 1e-12,
                   c.what + " decomposed on " + be);
    ++checked[c.kind];
  }
  EXPECT_EQ(checked.size(), 6u);
}

// ---------------------------------------------------------------------------------------------
// PyTorch goldens

TEST(AutodiffConvPoolGoldens, MatchPyTorch) {
  std::map<std::string, int> per_kind;
  for (const auto& c : golden_cases_of("conv_pool_grad")) {
    const std::string name = c.at("name").get<std::string>();
    SCOPED_TRACE(name);
    const OpKind kind = *op_from_name(c.at("kind").get<std::string>());
    Attrs attrs = attrs_from_json(kind, c.at("attrs"));
    if (c.contains("pool"))
      attrs.set("kind", variant_id(VariantEnum::PoolKind, c.at("pool").get<std::string>()));
    std::vector<HostTensor> args;
    std::vector<std::string> grad_names;
    for (const char* k : {"x", "w", "b"})
      if (c.contains(k)) {
        args.push_back(tensor_from_json(c.at(k)));
        grad_names.push_back(std::string("d") + k);
      }
    Graph g;
    GraphBuilder b(g);
    std::vector<Value> in, ins;
    for (const HostTensor& t : args) in.push_back(g.input(t.dtype, t.shape));
    ins = in;
    if (kind != OpKind::Pool) ins.resize(3);  // absent bias: an invalid Value
    Value y = b.op1(kind, attrs, ins);
    const HostTensor dy = tensor_from_json(c.at("dy"));
    Value dy_in = g.input(dy.dtype, dy.shape);
    g.outputs = vjp(g, std::vector<Value>{y}, std::vector<Value>{dy_in}, in);
    args.push_back(dy);
    for (const char* be : {"reference", "cpu"}) {
      std::vector<HostTensor> grads = compile_for(g, backend(be))->run(args);
      for (size_t i = 0; i < grad_names.size(); ++i)
        expect_close(grads[i], tensor_from_json(c.at(grad_names[i])), 1e-10, 1e-10,
                     name + " " + grad_names[i] + " on " + be);
    }
    ++per_kind[c.contains("pool") ? c.at("pool").get<std::string>()
                                  : c.at("kind").get<std::string>()];
  }
  EXPECT_GE(per_kind["Conv"], 8);
  EXPECT_GE(per_kind["ConvTranspose2d"], 3);
  EXPECT_GE(per_kind["Max"], 5);
  EXPECT_GE(per_kind["Avg"], 8);
  EXPECT_GE(per_kind["Lp"], 3);
  EXPECT_GE(per_kind["AdaptiveAvg"], 3);
  EXPECT_GE(per_kind["AdaptiveMax"], 3);
}

}  // namespace
}  // namespace tessel::testing
