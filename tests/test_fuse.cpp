// The fusion pass: it forms regions / fused GEMM epilogues only where the backend claims them
// natively, and the fused graph computes what the unfused one does.
#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <string>

#include "ir/builder.h"
#include "op_test_util.h"

namespace tessel::testing {
namespace {

int count(const Graph& g, OpKind k) {
  int c = 0;
  for (const Node& n : g.nodes()) c += n.kind == k;
  return c;
}

std::vector<HostTensor> run_graph(const Graph& g, const Backend& be,
                                  const std::vector<HostTensor>& args) {
  return be.compile(g)->run(args);
}

// Two inputs, a chain with a shared input, a value used twice (so it must stay outside), and a
// broadcast operand.
Graph branchy(DType dt, int64_t rows, int64_t cols) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(dt, {rows, cols});
  Value y = g.input(dt, {cols});
  Value a = b.exp(b.neg(x));                           // a is used twice
  Value s = b.activation(ActivationKind::Sigmoid, y);  // [cols], broadcast later
  Value c = b.add(b.mul(a, s), x);                     // x shared
  Value d = b.activation(ActivationKind::Gelu, c);
  Value m = b.where(b.compare(CmpOp::Gt, d, a), d, b.clamp(a, -0.5, 0.5));
  g.outputs = {m, a};
  return g;
}

TEST(Fuse, ElementwiseChainsBecomeOneRegionOnCpu) {
  const Backend& cpu = backend("cpu");
  for (DType dt : {DType::F32, DType::BF16, DType::F16}) {
    Graph legal = legalize(branchy(dt, 37, 129), cpu);
    Graph fused = fuse(legal, cpu);
    verify(fused, "fuse");
    EXPECT_GE(count(fused, OpKind::ElementwiseRegion), 1) << fused.to_string();
    // Only sigmoid(y) stays alone: its [cols] value feeds a [rows, cols] node, and fusing it
    // would recompute it for every row.
    EXPECT_EQ(count(fused, OpKind::Activation) + count(fused, OpKind::Binary) +
                  count(fused, OpKind::Where) + count(fused, OpKind::Compare) +
                  count(fused, OpKind::Clamp),
              1)
        << fused.to_string();
    std::vector<HostTensor> args = {random_tensor(dt, {37, 129}, 1, -2, 2),
                                    random_tensor(dt, {129}, 2, -2, 2)};
    std::vector<HostTensor> want = run_graph(legal, cpu, args);
    std::vector<HostTensor> got = run_graph(fused, cpu, args);
    std::vector<HostTensor> ref =
        compile_for(branchy(dt, 37, 129), backend("reference"))->run(args);
    double tol = dt == DType::F32 ? 1e-6 : 2e-2;
    for (size_t i = 0; i < want.size(); ++i) {
      expect_close(got[i], want[i], tol, tol, dtype_name(dt));
      expect_close(got[i], ref[i], tol, tol, dtype_name(dt));
    }
  }
}

// The cpu region kernel's fast paths: scalar constants filled once per task, contiguous f32
// inputs read in place (one with a size-1 dimension's arbitrary stride), the output written in
// place, vector Compare / Where / Clamp with NaN and ±inf, across block boundaries and tails.
TEST(Fuse, RegionFastPathsMatchTheReference) {
  const Backend& cpu = backend("cpu");
  const int64_t n = 3 * 512 + 7;
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F32, {1, n});
  Value y = g.input(DType::F32, {1, n});
  Value h = b.mul(b.clamp(b.add(x, b.scalar(3, DType::F32)), 0, 6), x);  // HardSwish · 6
  Value m = b.where(b.compare(CmpOp::Le, h, y), h, b.sub(y, b.scalar(0.25, DType::F32)));
  g.outputs = {b.activation(ActivationKind::Tanh, m)};
  Graph fused = fuse(legalize(g, cpu), cpu);
  EXPECT_GE(count(fused, OpKind::ElementwiseRegion), 1) << fused.to_string();
  HostTensor xv = random_tensor(DType::F32, {1, n}, 3, -8, 8);
  for (int64_t i = 0; i < n; i += 97)
    xv.set_f64(i, i % 3 == 0 ? NAN : i % 3 == 1 ? INFINITY : -INFINITY);
  HostTensor yv = random_tensor(DType::F32, {1, n}, 4, -8, 8);
  yv.strides[0] = 12345;  // a size-1 dimension: any stride addresses the same elements
  std::vector<HostTensor> args = {xv, yv};
  HostTensor got = run_graph(fused, cpu, args)[0];
  HostTensor want = compile_for(g, backend("reference"))->run(args)[0];
  expect_close(got, want, 1e-6, 1e-6);
}

// An f32 output of 16 MiB and more is streamed past the cache, by the last step itself (whole
// vectors) and from the block buffer (the last block, of 7 elements): GELU's far tail
// (|x| > 1.3) and tanh's large arguments, NaN and ±inf included.
TEST(Fuse, RegionStreamsLargeOutputs) {
  const Backend& cpu = backend("cpu");
  const int64_t n = (int64_t{4} << 20) + 7;
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F32, {n}), a = g.input(DType::F32, {n}), c = g.input(DType::F32, {n});
  Value h = b.activation(ActivationKind::Gelu, b.add(b.mul(x, a), b.scalar(0.5, DType::F32)));
  g.outputs = {b.activation(ActivationKind::Tanh, b.mul(h, c))};
  Graph fused = fuse(legalize(g, cpu), cpu);
  EXPECT_EQ(count(fused, OpKind::ElementwiseRegion), 1) << fused.to_string();
  HostTensor xv = random_tensor(DType::F32, {n}, 5, -4, 4);
  for (int64_t i = 0; i < n; i += 100003)
    xv.set_f64(i, i % 3 == 0 ? NAN : i % 3 == 1 ? INFINITY : -INFINITY);
  std::vector<HostTensor> args = {xv, random_tensor(DType::F32, {n}, 6, -2, 2),
                                  random_tensor(DType::F32, {n}, 7, -8, 8)};
  HostTensor got = run_graph(fused, cpu, args)[0];
  HostTensor want = compile_for(g, backend("reference"))->run(args)[0];
  expect_close(got, want, 1e-6, 1e-6);
}

// In a region ≫ cache, a step's GELU or tanh written to the block buffer takes its common case
// for every vector first and fixes up the vectors with a lane past it afterwards
// (common_case_first): inputs mostly inside the common cases (|x| <= 1.3 for GELU, 4 for tanh)
// with scattered lanes past them, NaN and ±inf, so that blocks mix both, at either end of a
// block and in the partial last vector.
TEST(Fuse, RegionCommonCaseFirstMatchesTheReference) {
  const Backend& cpu = backend("cpu");
  const int64_t n = (int64_t{4} << 20) + 7;
  for (int body = 0; body < 2; ++body) {
    Graph g;
    GraphBuilder b(g);
    Value x = g.input(DType::F32, {n}), a = g.input(DType::F32, {n}), c = g.input(DType::F32, {n});
    const auto act = [&](ActivationKind k, Value v) { return b.activation(k, v); };
    Value h = body == 0 ? act(ActivationKind::Gelu, b.add(b.mul(x, a), b.scalar(0.5, DType::F32)))
                        : act(ActivationKind::Tanh, b.sub(x, a));
    g.outputs = {act(body == 0 ? ActivationKind::Tanh : ActivationKind::Gelu, b.mul(h, c))};
    Graph fused = fuse(legalize(g, cpu), cpu);
    EXPECT_EQ(count(fused, OpKind::ElementwiseRegion), 1) << fused.to_string();
    HostTensor xv = random_tensor(DType::F32, {n}, 8, -0.6, 0.6);
    const float far[] = {3.0f, -2.0f, 5.0f, -7.0f, 12.0f, NAN, INFINITY, -INFINITY};
    for (int64_t i = 0, k = 0; i < n; i += 389 + (i % 7) * 211, ++k)
      xv.set_f64(i, far[k % std::size(far)]);
    xv.set_f64(n - 1, 9.0);
    xv.set_f64(n - 513, -9.0);  // the first vector of the last whole block
    std::vector<HostTensor> args = {xv, random_tensor(DType::F32, {n}, 9, -1, 1),
                                    random_tensor(DType::F32, {n}, 10, -2, 2)};
    HostTensor got = run_graph(fused, cpu, args)[0];
    HostTensor want = compile_for(g, backend("reference"))->run(args)[0];
    expect_close(got, want, 1e-6, 1e-6,
                 body == 0 ? "tanh(gelu(x·a + 0.5)·c)" : "gelu(tanh(x - a)·c)");
  }
}

TEST(Fuse, ValuesUsedOutsideTheirChainStayMaterialized) {
  const Backend& cpu = backend("cpu");
  Graph fused = fuse(legalize(branchy(DType::F32, 4, 8), cpu), cpu);
  // `a` is a graph output used by three nodes, so it is materialized; `d` is used twice, both
  // times by the chain after it, so it is not: regions {neg, exp} and {mul, add, gelu, compare,
  // clamp, where}.
  EXPECT_EQ(count(fused, OpKind::ElementwiseRegion), 2) << fused.to_string();
}

// A value used several times, every time inside one chain, stays inside its region: an affine
// map feeding HardSwish written out (x' * clamp(x' + 3, 0, 6) / 6, x' used twice), then another
// affine map whose scale is used by two chains (so it stays outside both).
TEST(Fuse, ValuesUsedTwiceInsideOneChainFuse) {
  const Backend& cpu = backend("cpu");
  const int64_t n = 2 * 1024 + 5;
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F32, {3, n}), s = g.input(DType::F32, {1});
  Value t = b.exp(b.neg(s));  // [1], used by both chains: stays outside them
  Value a = b.add(b.mul(t, x), b.scalar(0.25, DType::F32));
  Value h =
      b.div(b.mul(a, b.clamp(b.add(a, b.scalar(3, DType::F32)), 0, 6)), b.scalar(6, DType::F32));
  Value y = b.sub(b.mul(h, h), t);  // h used twice by one node
  g.outputs = {y, b.mul(t, x)};
  Graph fused = fuse(legalize(g, cpu), cpu);
  verify(fused, "fuse");
  // Regions {neg, exp} and the whole chain from t * x to y; t * x alone is the second output.
  EXPECT_EQ(count(fused, OpKind::ElementwiseRegion), 2) << fused.to_string();
  EXPECT_EQ(count(fused, OpKind::Binary) + count(fused, OpKind::Clamp), 1) << fused.to_string();
  std::vector<HostTensor> args = {random_tensor(DType::F32, {3, n}, 8, -9, 9),
                                  random_tensor(DType::F32, {1}, 9, -1, 1)};
  std::vector<HostTensor> got = run_graph(fused, cpu, args);
  std::vector<HostTensor> want = compile_for(g, backend("reference"))->run(args);
  for (size_t i = 0; i < want.size(); ++i) expect_close(got[i], want[i], 1e-6, 1e-6);
}

// HardSwish spelled out (x·clamp(x + 3, 0, 6) / 6, as ONNX exports write it: Max / Min or Clip,
// operands either way round) runs in the cpu region as one HardSwish step; it rounds as the
// unfused steps do, so the fused result is bit for bit the unfused one, NaN, ±inf, ±0 and the
// clamp's corners included. Near misses (a divisor of 6.5, x·clamp(-x + 3, 0, 6) / 6) stay
// steps.
TEST(Fuse, RegionHardSwishSpelledOutIsExact) {
  const Backend& cpu = backend("cpu");
  const int64_t n = 2 * 512 + 9;
  for (int form = 0; form < 4; ++form) {
    Graph g;
    GraphBuilder b(g);
    Value x = g.input(DType::F32, {n});
    auto k = [&](double v) { return b.scalar(v, DType::F32); };
    Value t = form == 1 ? b.add(k(3), x) : b.add(form == 3 ? b.neg(x) : x, k(3));
    Value c = form == 0   ? b.clamp(t, 0, 6)
              : form == 1 ? b.minimum(k(6), b.maximum(k(0), t))
                          : b.minimum(b.maximum(t, k(0)), k(6));
    Value m = form == 1 ? b.mul(c, x) : b.mul(x, c);
    g.outputs = {b.div(m, k(form == 2 ? 6.5 : 6))};
    Graph legal = legalize(g, cpu);
    Graph fused = fuse(legal, cpu);
    EXPECT_EQ(count(fused, OpKind::ElementwiseRegion), 1) << fused.to_string();
    HostTensor xv = random_tensor(DType::F32, {n}, 11, -8, 8);
    const float special[] = {NAN,
                             INFINITY,
                             -INFINITY,
                             0.0f,
                             -0.0f,
                             -3.0f,
                             3.0f,
                             std::nextafter(-3.0f, 0.0f),
                             std::nextafter(-3.0f, -4.0f),
                             std::nextafter(3.0f, 4.0f),
                             1e-30f,
                             -1e-30f,
                             3e38f,
                             -3e38f};
    for (size_t i = 0; i < std::size(special); ++i)
      xv.set_f64(static_cast<int64_t>(37 * i), special[i]);
    std::vector<HostTensor> args = {xv};
    HostTensor got = run_graph(fused, cpu, args)[0];
    HostTensor want = run_graph(legal, cpu, args)[0];
    expect_close(got, want, 0, 0, "form " + std::to_string(form));
  }
  // An empty output: the scalars' views have no element to compare with 6 (this divided by 0).
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F32, {0, 3});
  auto k = [&](double v) { return b.scalar(v, DType::F32); };
  g.outputs = {b.div(b.mul(x, b.clamp(b.add(x, k(3)), 0, 6)), k(6))};
  Graph fused = fuse(legalize(g, cpu), cpu);
  EXPECT_EQ(run_graph(fused, cpu, {HostTensor::empty(DType::F32, {0, 3})})[0].numel(), 0);
}

// An activation whose argument is an Add, Sub or Mul read nowhere else runs inside that step
// in the cpu region, on the vector before its store: the same roundings, so the fused result is
// bit for bit the unfused one, NaN and ±inf included, for each activation merged that way (and a
// partial last vector). A sum read twice keeps its own step; it is the same value either way.
// A multiply-add (form 4) rounds once where the unfused Mul and Add round twice: close, not
// exact.
TEST(Fuse, RegionActivationsInsideTheirStepAreExact) {
  const Backend& cpu = backend("cpu");
  const int64_t n = 2 * 512 + 9;
  const ActivationKind kinds[] = {ActivationKind::Gelu, ActivationKind::Tanh,
                                  ActivationKind::Sigmoid, ActivationKind::Silu,
                                  ActivationKind::Relu};
  for (ActivationKind k : kinds)
    for (int form = 0; form < 5; ++form) {
      Graph g;
      GraphBuilder b(g);
      Value x = g.input(DType::F32, {n}), a = g.input(DType::F32, {n});
      Value t = form == 0   ? b.add(x, a)
                : form == 1 ? b.sub(x, a)
                : form == 4 ? b.add(b.mul(x, a), x)
                            : b.mul(x, a);
      Value act = b.activation(k, t);
      // form 3: t is read twice, so it keeps its step.
      g.outputs = {form == 3 ? b.add(act, t) : b.neg(act)};
      Graph legal = legalize(g, cpu);
      Graph fused = fuse(legal, cpu);
      EXPECT_EQ(count(fused, OpKind::ElementwiseRegion), 1) << fused.to_string();
      HostTensor xv = random_tensor(DType::F32, {n}, 21, -6, 6);
      const float special[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-30f, 3e38f, -3e38f};
      for (size_t i = 0; i < std::size(special); ++i)
        xv.set_f64(static_cast<int64_t>(131 * i), special[i]);
      std::vector<HostTensor> args = {xv, random_tensor(DType::F32, {n}, 22, -2, 2)};
      const double tol = form == 4 ? 1e-5 : 0;
      expect_close(run_graph(fused, cpu, args)[0], run_graph(legal, cpu, args)[0], tol, tol,
                   op_info(OpKind::Activation).variant_name(static_cast<int>(k)) + " form " +
                       std::to_string(form));
    }
}

// A convolution's setup for the fusion tests below: x and w's shapes, strides, pads, groups.
struct ConvSetup {
  Shape x, w;
  std::vector<int64_t> strides, pads;
  int64_t groups;
};

// Conv(x, w, bias) of `c` on three new inputs of g.
Value conv_of(Graph& g, const ConvSetup& c) {
  Value x = g.input(DType::F32, c.x), w = g.input(DType::F32, c.w);
  Value bias = g.input(DType::F32, {c.w[0]});
  return g.add1(OpKind::Conv,
                Attrs().set("strides", c.strides).set("pads", c.pads).set("groups", c.groups),
                {x, w, bias});
}

// g (ending in conv_of(c)'s consumers) fused for cpu: one ConvRegion, run against the reference
// on random x, w and bias.
void expect_one_conv_region(const Graph& g, const ConvSetup& c, const std::string& what) {
  const Backend& cpu = backend("cpu");
  Graph fused = fuse(legalize(g, cpu), cpu);
  verify(fused, "fuse");
  EXPECT_EQ(count(fused, OpKind::ConvRegion), 1) << fused.to_string();
  EXPECT_EQ(count(fused, OpKind::Conv) + count(fused, OpKind::ElementwiseRegion), 0)
      << fused.to_string();
  std::vector<HostTensor> args = {random_tensor(DType::F32, c.x, 1, -2, 2),
                                  random_tensor(DType::F32, c.w, 2, -0.5, 0.5),
                                  random_tensor(DType::F32, {c.w[0]}, 3, -1, 1)};
  HostTensor got = run_graph(fused, cpu, args)[0];
  HostTensor want = compile_for(g, backend("reference"))->run(args)[0];
  expect_close(got, want, 1e-5, 1e-5, shape_str(c.x) + " w" + shape_str(c.w) + " " + what);
}

// A region reading a convolution's output (its only use) and otherwise constants joins it as
// one ConvRegion on cpu, whichever way the convolution runs: 1×1 (x read in place; with few
// output channels threaded by column shares, its epilogue by row strips, run_strips), unstrided
// (B packed from x; 64 → 48 channels by Winograd's transforms), strided (im2col blocks),
// depthwise, grouped, threaded; with a body whose
// other leaves are scalars (run on tiles gathered from short rows) or per-channel constants.
TEST(Fuse, ConvolutionEpiloguesJoinTheConvolution) {
  const std::vector<ConvSetup> setups = {
      {{1, 16, 10, 30}, {24, 16, 1, 1}, {1, 1}, {0, 0}, 1},
      {{2, 8, 12, 40}, {20, 8, 3, 3}, {1, 1}, {1, 1}, 1},
      {{1, 6, 17, 19}, {10, 6, 3, 3}, {2, 2}, {1, 1}, 1},
      {{1, 12, 20, 33}, {12, 1, 3, 3}, {1, 1}, {1, 1}, 12},
      {{2, 8, 9, 24}, {6, 4, 3, 3}, {1, 1}, {0, 1}, 2},
      {{1, 64, 40, 40}, {48, 64, 3, 3}, {1, 1}, {1, 1}, 1},
      {{1, 96, 8, 80}, {480, 96, 1, 1}, {1, 1}, {0, 0}, 1},
      {{1, 32, 20, 80}, {24, 32, 1, 1}, {1, 1}, {0, 0}, 1},
  };
  for (const ConvSetup& c : setups)
    for (bool per_channel : {false, true}) {
      Graph g;
      GraphBuilder b(g);
      Value y = conv_of(g, c);
      auto k = [&](double v) { return b.scalar(v, DType::F32); };
      Value shift =
          per_channel ? g.constant(random_tensor(DType::F32, {1, c.w[0], 1, 1}, 4, -1, 1)) : k(0.1);
      Value a = b.add(b.mul(y, k(0.9)), shift);
      Value h = b.div(b.mul(a, b.clamp(b.add(a, k(3)), 0, 6)), k(6));
      g.outputs = {b.sub(b.mul(h, k(1.1)), k(0.2))};
      expect_one_conv_region(g, c, per_channel ? "per-channel" : "");
    }
}

// A ConvRegion whose body is one activation of the convolution's output runs it as the
// convolution's own epilogue (in place on each finished block): 1×1 in one k block (threaded by
// column shares when the product is large enough: 24 × 32 × 1600, row strips) and past it,
// unstrided 3×3 (implicit GEMM; and Winograd's at 32 → 24 channels, an odd number of output
// rows), strided, depthwise and grouped, each with an activation of default and of given alpha.
TEST(Fuse, ConvolutionActivationEpilogues) {
  const std::vector<ConvSetup> setups = {
      {{1, 16, 12, 70}, {32, 16, 1, 1}, {1, 1}, {0, 0}, 1},
      {{1, 32, 20, 80}, {24, 32, 1, 1}, {1, 1}, {0, 0}, 1},
      {{1, 300, 5, 40}, {20, 300, 1, 1}, {1, 1}, {0, 0}, 1},
      {{1, 8, 14, 30}, {24, 8, 3, 3}, {1, 1}, {1, 1}, 1},
      {{1, 32, 17, 26}, {24, 32, 3, 3}, {1, 1}, {1, 1}, 1},
      {{1, 6, 17, 19}, {10, 6, 3, 3}, {2, 2}, {1, 1}, 1},
      {{1, 12, 20, 33}, {12, 1, 3, 3}, {1, 1}, {1, 1}, 12},
      {{2, 8, 9, 24}, {6, 4, 3, 3}, {1, 1}, {0, 1}, 2},
  };
  const std::vector<std::pair<ActivationKind, double>> acts = {
      {ActivationKind::HardSwish, std::nan("")},
      {ActivationKind::Relu, std::nan("")},
      {ActivationKind::LeakyRelu, 0.3},
      {ActivationKind::Sigmoid, std::nan("")}};
  for (const ConvSetup& c : setups)
    for (const auto& [kind, alpha] : acts) {
      Graph g;
      GraphBuilder b(g);
      g.outputs = {b.activation(kind, conv_of(g, c), alpha)};
      expect_one_conv_region(g, c,
                             op_info(OpKind::Activation).variant_name(static_cast<int>(kind)));
    }
}

// The convolution stays alone when its output is needed elsewhere too (here: returned), or when
// the region reads a tensor that is not a constant.
TEST(Fuse, ConvolutionsWhoseOutputIsNeededElsewhereStayAlone) {
  const Backend& cpu = backend("cpu");
  for (bool second_use : {true, false}) {
    Graph g;
    GraphBuilder b(g);
    Value x = g.input(DType::F32, {1, 4, 8, 20}), w = g.input(DType::F32, {6, 4, 3, 3});
    Value z = g.input(DType::F32, {1, 6, 8, 20});
    Value y = g.add1(OpKind::Conv, Attrs().set("pads", std::vector<int64_t>{1, 1}), {x, w});
    Value r =
        b.activation(ActivationKind::Tanh, b.add(y, second_use ? b.scalar(1, DType::F32) : z));
    g.outputs = {r};
    if (second_use) g.outputs.push_back(y);
    Graph fused = fuse(legalize(g, cpu), cpu);
    EXPECT_EQ(count(fused, OpKind::ConvRegion), 0) << fused.to_string();
    EXPECT_EQ(count(fused, OpKind::Conv), 1) << fused.to_string();
  }
}

TEST(Fuse, NothingFusesIntoKindsTheBackendDoesNotRunNatively) {
  const Backend& ref = backend("reference");  // claims ElementwiseRegion only decomposed
  Graph legal = legalize(branchy(DType::F32, 4, 8), ref);
  Graph fused = fuse(legal, ref);
  EXPECT_EQ(fused.to_string(), legal.to_string());
}

Graph linear_act(bool transpose_b, bool bias, ActivationKind act) {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F32, {3, 5, 7});
  Value w = g.input(DType::F32, transpose_b ? Shape{9, 7} : Shape{7, 9});
  Value y = b.matmul(x, w, false, transpose_b);
  if (bias) y = b.add(y, g.input(DType::F32, {9}));
  g.outputs = {b.activation(act, y)};
  return g;
}

TEST(Fuse, GemmEpiloguesFuseWhenTheBackendClaimsTheFusedKind) {
  const Backend& cpu = backend("cpu");
  for (bool tb : {false, true})
    for (bool bias : {false, true})
      for (ActivationKind act : {ActivationKind::Relu, ActivationKind::Gelu}) {
        Graph legal = legalize(linear_act(tb, bias, act), cpu);
        Graph fused = fuse(legal, cpu);
        verify(fused, "fuse");
        bool claimed = cpu.claims().find(OpKind::FusedMatMulBiasAct, static_cast<int>(act),
                                         DType::F32) == How::Native;
        EXPECT_EQ(count(fused, OpKind::FusedMatMulBiasAct), claimed ? 1 : 0) << fused.to_string();
        std::vector<HostTensor> args = {
            random_tensor(DType::F32, {3, 5, 7}, 3),
            random_tensor(DType::F32, tb ? Shape{9, 7} : Shape{7, 9}, 4)};
        if (bias) args.push_back(random_tensor(DType::F32, {9}, 5));
        expect_close(run_graph(fused, cpu, args).at(0), run_graph(legal, cpu, args).at(0), 1e-5,
                     1e-5, "linear + activation");
      }
}

}  // namespace
}  // namespace tessel::testing
