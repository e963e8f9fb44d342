// VJP rules of the variants that came last, against finite differences: Reduce Prod (zeros in a
// slice included), Pad's reflect / replicate / circular modes (with cropping), the Mul / Max / Min
// scatter reductions (ties split evenly), GatherNd with batch_dims, and Mod / FloorMod in b.
#include <gtest/gtest.h>

#include "autodiff/gradient_check.h"
#include "op_test_util.h"
#include "passes/passes.h"

namespace tessel::testing {
namespace {

HostTensor ids(const Shape& s, const std::vector<int64_t>& v) {
  return HostTensor::from_vector(DType::I64, s, v);
}

// t with the elements at flat positions `at` set to 0.
HostTensor with_zeros(HostTensor t, const std::vector<int64_t>& at) {
  t = t.contiguous();
  for (int64_t i : at) t.set_f64(i, 0);
  return t;
}

TEST(AutodiffVariants, ReduceProdAnyAxesAndKeepdims) {
  struct Case {
    std::vector<int64_t> axes;
    bool keepdims;
  };
  for (const Case& c : {Case{{}, false}, Case{{1}, true}, Case{{0, 2}, false}, Case{{-1}, true},
                        Case{{2, 0}, true}})
    expect_gradients(
        {non_contiguous(rnd({3, 4, 5}, 1, 0.5, 1.5))},
        [&](GraphBuilder& b, const std::vector<Value>& in) {
          return b.reduce(ReduceOp::Prod, in[0], c.axes, c.keepdims);
        },
        "Reduce Prod axes " + shape_str(c.axes) + (c.keepdims ? " keepdims" : ""));
}

// The product is linear in each element, so central differences are exact at zeros too: one
// zero in a slice gets the product of the others, the others 0; two zeros give all of it 0.
TEST(AutodiffVariants, ReduceProdWithZeros) {
  // [3,4] reduced over axis 1: row 0 one zero, row 1 two zeros, row 2 none.
  HostTensor x = with_zeros(rnd({3, 4}, 2, -1.5, 1.5), {1, 4, 6});
  for (int64_t axis : {1, 0})
    expect_gradients(
        {non_contiguous(x)},
        [&](GraphBuilder& b, const std::vector<Value>& in) {
          return b.reduce(ReduceOp::Prod, in[0], {axis}, false);
        },
        "Reduce Prod with zeros, axis " + std::to_string(axis));
  for (const std::vector<int64_t>& zeros : {std::vector<int64_t>{7}, {3, 17}, {0, 5, 23}})
    expect_gradients(
        {with_zeros(rnd({2, 3, 4}, 3, 0.5, 1.5), zeros)},
        [&](GraphBuilder& b, const std::vector<Value>& in) {
          return b.reduce(ReduceOp::Prod, in[0], {}, true);
        },
        "Reduce Prod over everything, zeros at " + shape_str(zeros));
  // Exact values: d/dx of Π over [0, 2, 3] is [6, 0, 0].
  Graph g;
  GraphBuilder b(g);
  Value in = g.input(DType::F64, {3});
  g.outputs = {b.reduce(ReduceOp::Prod, in, {}, false)};
  const Graph gg = grad_graph(g, {0});
  for (const char* name : {"reference", "cpu"}) {
    const std::vector<HostTensor> args = {f64({3}, {0, 2, 3})};
    std::vector<HostTensor> out = compile_for(gg, backend(name))->run(args);
    expect_close(out[1], std::vector<double>{6, 0, 0}, 0, 0,
                 std::string("Reduce Prod at one zero on ") + name);
  }
}

TEST(AutodiffVariants, PadModesWithCropping) {
  struct Case {
    std::vector<int64_t> pads;  // [begins..., ends...] of a [2, 4, 5] input
  };
  for (PadMode mode : {PadMode::Reflect, PadMode::Replicate, PadMode::Circular})
    for (const Case& c :
         {Case{{0, 1, 2, 0, 3, 4}}, Case{{1, -1, 3, 0, 2, -2}}, Case{{0, 0, -2, 0, 0, -1}}}) {
      std::vector<int64_t> pads = c.pads;
      Attrs a = Attrs().set("pads", pads).set("mode", mode);
      const std::string name = mode == PadMode::Reflect     ? "Reflect"
                               : mode == PadMode::Replicate ? "Replicate"
                                                            : "Circular";
      expect_gradients(
          {non_contiguous(rnd({2, 4, 5}, 4))},
          [&](GraphBuilder& b, const std::vector<Value>& in) {
            return b.op1(OpKind::Pad, a, {in[0]});
          },
          "Pad " + name + " pads " + shape_str(pads));
    }
}

const char* reduction_name(ScatterReduction red) {
  switch (red) {
    case ScatterReduction::Mul:
      return "Mul";
    case ScatterReduction::Max:
      return "Max";
    case ScatterReduction::Min:
      return "Min";
    default:
      return "other";
  }
}

// Repeated indices: several updates meet at one position with data's own element.
TEST(AutodiffVariants, ScatterMulMaxMin) {
  for (ScatterReduction red :
       {ScatterReduction::Mul, ScatterReduction::Max, ScatterReduction::Min}) {
    const std::string name = reduction_name(red);
    for (int64_t axis : {1, 0, -1}) {
      // Indices in range of data [2,4,4] along the axis; several meet at one position.
      const std::vector<int64_t> v =
          axis == 0 ? std::vector<int64_t>{0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 1, 1, 0, 0, 0, 0, 1, 1}
                    : std::vector<int64_t>{0, 3, 0, 1, 1, 2, 3, 3, 3, 2, 2, 0, 1, 3, 1, 0, 0, 2};
      expect_gradients(
          {non_contiguous(rnd({2, 4, 4}, 5, -2, 2)), ids({2, 3, 3}, v), rnd({2, 3, 3}, 6, -2, 2)},
          [&](GraphBuilder& b, const std::vector<Value>& in) {
            return b.op1(OpKind::ScatterElements, Attrs().set("axis", axis).set("reduction", red),
                         {b.transpose(in[0], {0, 2, 1}), in[1], in[2]});
          },
          "ScatterElements " + name + " axis " + std::to_string(axis));
    }
    expect_gradients(
        {rnd({2, 4, 3}, 7, -2, 2), ids({4, 2}, {1, 3, 0, 1, 1, 3, 1, 0}),
         non_contiguous(rnd({4, 3}, 8, -2, 2))},
        [&](GraphBuilder& b, const std::vector<Value>& in) {
          return b.op1(OpKind::ScatterNd, Attrs().set("reduction", red), {in[0], in[1], in[2]});
        },
        "ScatterNd " + name);
  }
}

// Mul at zeros (linear in each contributor, so finite differences are exact): data zero, one zero
// update at a position, two zero updates at a position.
TEST(AutodiffVariants, ScatterMulWithZeros) {
  // Row r of data [3,4] takes updates at columns idx[r]: row 0 data zero at col 0 where two
  // updates meet; row 1 one zero update among two at col 1; row 2 two zero updates at col 3.
  HostTensor data = with_zeros(rnd({3, 4}, 9, 0.5, 1.5), {0});
  HostTensor upd = with_zeros(rnd({3, 3}, 10, 0.5, 1.5), {4, 6, 8});
  expect_gradients(
      {data, ids({3, 3}, {0, 0, 2, 1, 1, 2, 3, 0, 3}), upd},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        return b.op1(OpKind::ScatterElements,
                     Attrs().set("axis", int64_t{1}).set("reduction", ScatterReduction::Mul),
                     {in[0], in[1], in[2]});
      },
      "ScatterElements Mul with zeros");
  expect_gradients(
      {with_zeros(rnd({4, 2}, 11, 0.5, 1.5), {2}), ids({4, 1}, {1, 1, 3, 3}),
       with_zeros(rnd({4, 2}, 12, 0.5, 1.5), {0, 4, 6})},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        return b.op1(OpKind::ScatterNd, Attrs().set("reduction", ScatterReduction::Mul),
                     {in[0], in[1], in[2]});
      },
      "ScatterNd Mul with zeros");
}

// Ties of Max / Min share the cotangent evenly among the contributors equal to the result, as
// PyTorch's scatter_reduce amax / amin.
TEST(AutodiffVariants, ScatterMaxMinTiesSplitEvenly) {
  for (ScatterReduction red : {ScatterReduction::Max, ScatterReduction::Min}) {
    const double s = red == ScatterReduction::Max ? 1 : -1;
    Graph g;
    GraphBuilder b(g);
    Value data = g.input(DType::F64, {4}), idx = g.input(DType::I64, {4}),
          upd = g.input(DType::F64, {4});
    g.outputs = {
        b.sum(b.op1(OpKind::ScatterElements, Attrs().set("reduction", red), {data, idx, upd}), {})};
    const Graph gg = grad_graph(g, {0, 2});
    // Position 0: data and two updates tie (1/3 each); 1: one update ties data (1/2 each);
    // 2: an update below data (data gets 1); 3: untouched.
    std::vector<HostTensor> args = {f64({4}, {2 * s, 5 * s, 3 * s, 7 * s}), ids({4}, {0, 0, 1, 2}),
                                    f64({4}, {2 * s, 2 * s, 5 * s, 1 * s})};
    for (const char* name : {"reference", "cpu"}) {
      std::vector<HostTensor> out = compile_for(gg, backend(name))->run(args);
      const std::string what = std::string(reduction_name(red)) + " ties on " + name;
      expect_close(out[1], std::vector<double>{1.0 / 3, 0.5, 1, 1}, 1e-12, 1e-12,
                   what + ", d/d data");
      expect_close(out[2], std::vector<double>{1.0 / 3, 1.0 / 3, 0.5, 0}, 1e-12, 1e-12,
                   what + ", d/d updates");
    }
  }
}

TEST(AutodiffVariants, GatherNdWithBatchDims) {
  expect_gradients(
      {non_contiguous(rnd({2, 4, 3}, 13)), ids({2, 3, 1}, {1, 3, 1, 0, 0, -1})},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        return b.op1(OpKind::GatherNd, Attrs().set("batch_dims", int64_t{1}), {in[0], in[1]});
      },
      "GatherNd batch_dims 1");
  expect_gradients(
      {rnd({2, 3, 4, 2}, 14), ids({2, 3, 2, 2}, {0, 1, 3, 1, 2, 0, 2, 0, 1, 1, 1, 1,  //
                                                 3, 0, 0, 0, 2, 1, 2, 1, 0, 0, 3, 1})},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        return b.op1(OpKind::GatherNd, Attrs().set("batch_dims", int64_t{2}), {in[0], in[1]});
      },
      "GatherNd batch_dims 2");
}

// d/db = -trunc(a/b) (Mod, C fmod) or -floor(a/b) (FloorMod): they differ where a/b < 0.
// Sample points keep a/b away from integers (the jumps).
TEST(AutodiffVariants, ModAndFloorModInB) {
  HostTensor a = f64({2, 3}, {5.3, -5.3, 2.2, -7.9, 0.4, 3.7});
  HostTensor bv = f64({2, 3}, {1.5, 1.5, -0.9, -2.1, 0.7, -1.1});
  for (BinaryOp op : {BinaryOp::Mod, BinaryOp::FloorMod}) {
    const std::string name = op == BinaryOp::Mod ? "Mod" : "FloorMod";
    expect_gradients(
        {non_contiguous(a), bv},
        [&](GraphBuilder& b, const std::vector<Value>& in) { return b.binary(op, in[0], in[1]); },
        "Binary " + name);
    expect_gradients(
        {a, f64({3}, {1.5, -0.9, 1.3})},
        [&](GraphBuilder& b, const std::vector<Value>& in) { return b.binary(op, in[0], in[1]); },
        "Binary " + name + " broadcast b");
  }
}

}  // namespace
}  // namespace tessel::testing
