// VJP rules of the indexing kinds against finite differences: gathers (repeated and negative
// indices accumulate), scatters, Slice with steps, Trilu, Cumsum, ALiBi.
#include <gtest/gtest.h>

#include "autodiff/gradient_check.h"
#include "op_test_util.h"

namespace tessel::testing {
namespace {

HostTensor ids(const Shape& s, const std::vector<int64_t>& v) {
  return HostTensor::from_vector(DType::I64, s, v);
}

TEST(AutodiffIndexing, GatherWithRepeatedAndNegativeIndices) {
  for (int64_t axis : {0, 1, -1})
    expect_gradients(
        {rnd({4, 5, 3}, 1), ids({2, 3}, {0, 2, -1, 2, 2, 1})},
        [&](GraphBuilder& b, const std::vector<Value>& in) { return b.gather(in[0], in[1], axis); },
        "Gather axis " + std::to_string(axis));
  expect_gradients(
      {rnd({4, 3}, 2), ids({}, {2})},
      [](GraphBuilder& b, const std::vector<Value>& in) { return b.gather(in[0], in[1], 0); },
      "Gather with a scalar index");
}

TEST(AutodiffIndexing, Embedding) {
  expect_gradients(
      {rnd({6, 4}, 3), ids({2, 3}, {5, 0, 5, 2, 2, 5})},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        return b.op1(OpKind::Embedding, Attrs(), {in[0], in[1]});
      },
      "Embedding");
}

TEST(AutodiffIndexing, GatherElementsAndGatherNd) {
  expect_gradients(
      {rnd({3, 4}, 4), ids({3, 2}, {0, 3, 3, 3, 1, -2})},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        return b.op1(OpKind::GatherElements, Attrs().set("axis", int64_t{1}), {in[0], in[1]});
      },
      "GatherElements");
  expect_gradients(
      {rnd({3, 4, 2}, 5), ids({3, 2}, {0, 1, 2, 3, 0, 1})},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        return b.op1(OpKind::GatherNd, Attrs(), {in[0], in[1]});
      },
      "GatherNd");
}

TEST(AutodiffIndexing, Scatters) {
  expect_gradients(
      {rnd({4, 3}, 6), ids({3}, {1, 3, 1}), rnd({4, 3}, 7).contiguous()},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        Value upd = b.narrow(in[2], 0, 0, 3);
        return b.op1(OpKind::ScatterAdd, Attrs().set("axis", int64_t{0}), {in[0], in[1], upd});
      },
      "ScatterAdd");
  for (ScatterReduction red : {ScatterReduction::None, ScatterReduction::Add}) {
    const std::string name = red == ScatterReduction::None ? "None" : "Add";
    expect_gradients(
        {rnd({3, 4}, 8), ids({3, 2}, {0, 3, 2, 1, 1, 0}), rnd({3, 2}, 9)},
        [&](GraphBuilder& b, const std::vector<Value>& in) {
          return b.op1(OpKind::ScatterElements,
                       Attrs().set("axis", int64_t{1}).set("reduction", red),
                       {in[0], in[1], in[2]});
        },
        "ScatterElements " + name);
    expect_gradients(
        {rnd({4, 3}, 10), ids({2, 1}, {3, 1}), rnd({2, 3}, 11)},
        [&](GraphBuilder& b, const std::vector<Value>& in) {
          return b.op1(OpKind::ScatterNd, Attrs().set("reduction", red), {in[0], in[1], in[2]});
        },
        "ScatterNd " + name);
  }
}

TEST(AutodiffIndexing, SliceWithStepsAndNegativeSteps) {
  struct Case {
    std::vector<int64_t> starts, ends, axes, steps;
  };
  for (const Case& c : {Case{{1}, {4}, {1}, {}}, Case{{0, 5}, {3, 0}, {0, 2}, {2, -2}},
                        Case{{-1, 1}, {-100, 100}, {1, 0}, {-1, 3}}}) {
    Attrs a = Attrs().set("starts", c.starts).set("ends", c.ends).set("axes", c.axes);
    if (!c.steps.empty()) a.set("steps", c.steps);
    expect_gradients(
        {rnd({4, 5, 6}, 12)},
        [&](GraphBuilder& b, const std::vector<Value>& in) {
          return b.op1(OpKind::Slice, a, {in[0]});
        },
        "Slice starts " + shape_str(c.starts) + " steps " + shape_str(c.steps));
  }
}

TEST(AutodiffIndexing, TriluCumsumAlibi) {
  for (bool upper : {true, false})
    expect_gradients(
        {rnd({2, 4, 5}, 13)},
        [&](GraphBuilder& b, const std::vector<Value>& in) {
          return b.op1(OpKind::Trilu, Attrs().set("upper", upper).set("k", int64_t{-1}), {in[0]});
        },
        upper ? "Trilu upper k -1" : "Trilu lower k -1");
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true})
      expect_gradients(
          {rnd({3, 5}, 14)},
          [&](GraphBuilder& b, const std::vector<Value>& in) {
            return b.op1(
                OpKind::Cumsum,
                Attrs().set("axis", int64_t{1}).set("exclusive", exclusive).set("reverse", reverse),
                {in[0]});
          },
          std::string("Cumsum") + (exclusive ? " exclusive" : "") + (reverse ? " reverse" : ""));
  expect_gradients(
      {rnd({1, 2, 3, 4}, 15)},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        return b.op1(OpKind::ALiBi, Attrs().set("max_bias", 4.0), {in[0]});
      },
      "ALiBi");
}

TEST(AutodiffIndexing, TopKAndSort) {
  for (int64_t axis : {0, -1})
    for (bool largest : {true, false}) {
      expect_gradients(
          {rnd({4, 5}, 18)},
          [&](GraphBuilder& b, const std::vector<Value>& in) {
            return b.graph().add(
                OpKind::TopK,
                Attrs().set("k", int64_t{3}).set("axis", axis).set("largest", largest), {in[0]})[0];
          },
          "TopK 3 axis " + std::to_string(axis) + (largest ? " largest" : ""));
      expect_gradients(
          {rnd({4, 5}, 19)},
          [&](GraphBuilder& b, const std::vector<Value>& in) {
            return b.op1(OpKind::Sort, Attrs().set("axis", axis).set("descending", largest),
                         {in[0]});
          },
          "Sort axis " + std::to_string(axis) + (largest ? " descending" : ""));
    }
}

// Rope is a rotation: its VJP rotates back, with default and explicit (negative too) positions,
// both styles and a partial rotary_dim; float positions get d/dθ = f·(−b, a) per pair.
TEST(AutodiffIndexing, Rope) {
  for (RopeStyle style : {RopeStyle::NeoX, RopeStyle::GptJ})
    for (int64_t rotary : {0, 4}) {
      Attrs a = Attrs().set("style", style).set("rotary_dim", rotary).set("base", 100.0);
      const std::string what = std::string(style == RopeStyle::NeoX ? "NeoX" : "GptJ") +
                               " rotary_dim " + std::to_string(rotary);
      expect_gradients(
          {rnd({2, 3, 5, 6}, 16)},
          [&](GraphBuilder& b, const std::vector<Value>& in) {
            return b.op1(OpKind::Rope, a, {in[0]});
          },
          "Rope " + what);
      expect_gradients(
          {rnd({2, 5, 6}, 17), ids({5}, {3, -1, 7, 0, 2})},
          [&](GraphBuilder& b, const std::vector<Value>& in) {
            return b.op1(OpKind::Rope, a, {in[0], in[1]});
          },
          "Rope with positions " + what);
      // Float (fractional) positions are differentiable too.
      expect_gradients(
          {rnd({2, 3, 5, 6}, 18), rnd({5}, 19, -4, 4)},
          [&](GraphBuilder& b, const std::vector<Value>& in) {
            return b.op1(OpKind::Rope, a, {in[0], in[1]});
          },
          "Rope with float positions " + what);
    }
}

}  // namespace
}  // namespace tessel::testing
