// VJP rules of Attention (every mask kind, explicit masks, scale, window, GQA / MQA), Einsum
// (contractions, diagonals, summed-out and broadcast labels, ellipses, three operands), CumProd
// (with zeros, reverse), CumMax (ties, reverse) and AxialRope2d, against central finite
// differences in f64 on the reference; every gradient graph also runs on cpu.
#include <gtest/gtest.h>

#include <string>

#include "autodiff/gradient_check.h"
#include "op_test_util.h"

namespace tessel::testing {
namespace {

// Attention on q [B,Hq,Sq,D], k / v [B,Hkv,Sk,·], with an optional mask (differentiated only
// when `mask_grad`: an additive bias).
void expect_attention_gradients(const Attrs& attrs, const Shape& q, const Shape& k, int64_t dv,
                                std::optional<HostTensor> mask, const std::string& what,
                                bool mask_grad = false) {
  std::vector<HostTensor> args = {rnd(q, 1, -1.5, 1.5), rnd(k, 2, -1.5, 1.5),
                                  rnd({k[0], k[1], k[2], dv}, 3)};
  if (mask) args.push_back(*mask);
  expect_gradients(
      args,
      [&](GraphBuilder& b, const std::vector<Value>& in) {
        std::vector<Value> ins(in.begin(), in.begin() + 3);
        if (mask) ins.push_back(in[3]);
        return b.op1(OpKind::Attention, attrs, ins);
      },
      "Attention " + what, mask_grad ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{0, 1, 2});
}

Attrs attention_attrs(MaskKind kind, double scale = 0, int64_t window = 0) {
  return Attrs().set("mask_kind", kind).set("scale", scale).set("window", window);
}

TEST(AutodiffAttention, PositionalMasks) {
  for (auto kind : {MaskKind::None, MaskKind::Causal, MaskKind::SlidingWindow}) {
    const std::string name = "mask kind " + std::to_string(static_cast<int>(kind));
    expect_attention_gradients(attention_attrs(kind, 0, 1), {2, 2, 3, 4}, {2, 2, 3, 4}, 5,
                               std::nullopt, name);
    // Sq < Sk (queries aligned to the last keys), a non-default scale, GQA (4 q heads, 2 kv).
    expect_attention_gradients(attention_attrs(kind, 0.3, 2), {1, 4, 2, 3}, {1, 2, 5, 3}, 2,
                               std::nullopt, name + ", gqa");
  }
  // MQA, and Sq > Sk: the first query rows see no key (zero output and gradient).
  expect_attention_gradients(attention_attrs(MaskKind::Causal), {2, 3, 4, 2}, {2, 1, 2, 2}, 3,
                             std::nullopt, "causal, mqa, rows without keys");
}

TEST(AutodiffAttention, ExplicitMasks) {
  // Custom: nonzero keeps, broadcast [1,1,Sq,Sk]; a row fully masked.
  HostTensor keep = HostTensor::from_vector(DType::Bool, {1, 1, 3, 4},
                                            std::vector<int>{1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1});
  expect_attention_gradients(attention_attrs(MaskKind::Custom), {2, 2, 3, 3}, {2, 2, 4, 3}, 2, keep,
                             "custom bool mask");
  // Custom f64 [B,Sk] key padding.
  HostTensor pad =
      HostTensor::from_vector(DType::F64, {2, 4}, std::vector<double>{1, 1, 0, 1, 1, 0, 0, 0.5});
  expect_attention_gradients(attention_attrs(MaskKind::Custom), {2, 2, 3, 3}, {2, 1, 4, 3}, 2, pad,
                             "custom [B,Sk] mask, mqa");
  // Bias: additive, with a -inf that masks one key.
  HostTensor bias = rnd({2, 1, 3, 4}, 9);
  bias.set_f64(1, -INFINITY);
  expect_attention_gradients(attention_attrs(MaskKind::Bias, 0.5), {2, 2, 3, 3}, {2, 2, 4, 3}, 2,
                             bias, "bias mask");
  // The bias's own gradient: dS summed over the axes it broadcasts along — per head and query
  // [B,H,Sq,Sk], shared by heads [B,1,Sq,Sk], per key [B,Sk]; with GQA.
  expect_attention_gradients(attention_attrs(MaskKind::Bias), {2, 2, 3, 3}, {2, 2, 4, 3}, 2,
                             rnd({2, 2, 3, 4}, 10), "bias gradient, full", true);
  expect_attention_gradients(attention_attrs(MaskKind::Bias, 0.7), {2, 4, 3, 3}, {2, 2, 4, 3}, 2,
                             rnd({2, 1, 3, 4}, 11), "bias gradient, shared by heads, gqa", true);
  expect_attention_gradients(attention_attrs(MaskKind::Bias), {2, 2, 3, 3}, {2, 2, 4, 3}, 2,
                             rnd({2, 4}, 12), "bias gradient, [B,Sk] key bias", true);
}

void expect_einsum_gradients(const std::string& equation, const std::vector<Shape>& shapes) {
  std::vector<HostTensor> args;
  for (size_t i = 0; i < shapes.size(); ++i) args.push_back(rnd(shapes[i], 40 + i));
  expect_gradients(
      args,
      [&](GraphBuilder& b, const std::vector<Value>& in) {
        return b.op1(OpKind::Einsum, Attrs().set("equation", equation), in);
      },
      "Einsum " + equation);
}

TEST(AutodiffEinsum, Equations) {
  expect_einsum_gradients("ij,jk->ik", {{2, 3}, {3, 4}});
  expect_einsum_gradients("bij,bjk->bik", {{2, 2, 3}, {2, 3, 2}});
  expect_einsum_gradients("ij,jk", {{2, 3}, {3, 4}});      // implicit output
  expect_einsum_gradients("ii->i", {{3, 3}});              // diagonal
  expect_einsum_gradients("ii", {{3, 3}});                 // trace
  expect_einsum_gradients("iij->ij", {{2, 2, 3}});         // a diagonal kept with another axis
  expect_einsum_gradients("ij->", {{2, 3}});               // sum of everything
  expect_einsum_gradients("ij,k->ik", {{2, 3}, {4}});      // j only in operand 0
  expect_einsum_gradients("ij,ij->ij", {{2, 1}, {2, 3}});  // a size-1 axis broadcast
  expect_einsum_gradients("...ij,...jk->...ik", {{2, 2, 3}, {3, 2}});  // ellipsis broadcast
  expect_einsum_gradients("ij,jk,kl->il", {{2, 3}, {3, 2}, {2, 2}});   // three operands
  expect_einsum_gradients("i,i->", {{4}, {4}});                        // dot
  expect_einsum_gradients("i,j->ij", {{2}, {3}});                      // outer
  expect_einsum_gradients("ji->ij", {{2, 3}});                         // transpose
}

TEST(AutodiffScans, CumProdWithZeros) {
  for (bool reverse : {false, true}) {
    HostTensor x = rnd({3, 5}, 50, 0.5, 1.5);
    x.set_f64(1, 0);  // row 0: one zero
    x.set_f64(6, 0);  // row 1: two zeros
    x.set_f64(8, 0);
    x.set_f64(10, 0);  // row 2: zeros at both ends
    x.set_f64(14, 0);
    for (int64_t axis : {1, -1})
      expect_gradients(
          {x},
          [&](GraphBuilder& b, const std::vector<Value>& in) {
            return b.op1(OpKind::CumProd, Attrs().set("axis", axis).set("reverse", reverse), in);
          },
          std::string("CumProd reverse=") + (reverse ? "1" : "0"));
  }
  // Along axis 0 of a 3-D tensor, no zeros.
  expect_gradients(
      {rnd({4, 2, 3}, 51, -1.5, 1.5)},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        return b.op1(OpKind::CumProd, Attrs().set("axis", int64_t{0}), in);
      },
      "CumProd axis 0");
}

TEST(AutodiffScans, CumMax) {
  for (bool reverse : {false, true}) {
    expect_gradients(
        {rnd({3, 6}, 60)},
        [&](GraphBuilder& b, const std::vector<Value>& in) {
          return b.op1(OpKind::CumMax, Attrs().set("axis", int64_t{1}).set("reverse", reverse), in);
        },
        std::string("CumMax reverse=") + (reverse ? "1" : "0"));
    expect_gradients(
        {rnd({4, 2, 3}, 61)},
        [&](GraphBuilder& b, const std::vector<Value>& in) {
          return b.op1(OpKind::CumMax, Attrs().set("axis", int64_t{0}).set("reverse", reverse), in);
        },
        "CumMax axis 0");
  }
}

// Ties go to the latest position in scan order (PyTorch's cummax indices): checked exactly,
// since finite differences are not defined at a tie.
TEST(AutodiffScans, CumMaxTiesGoToTheLatestPosition) {
  for (bool reverse : {false, true}) {
    Graph g;
    GraphBuilder b(g);
    Value x = g.input(DType::F64, {5});
    Value y = b.op1(OpKind::CumMax, Attrs().set("axis", int64_t{0}).set("reverse", reverse), {x});
    g.outputs = {b.sum(y, {})};
    Graph gg = grad_graph(g, {0});
    HostTensor xv = HostTensor::from_vector(DType::F64, {5}, std::vector<double>{1, 3, 3, 2, 3});
    // forward y = 1 3 3 3 3, sources 0 1 2 2 4; reverse y = 3 3 3 3 3, sources 1 1 2 4 4.
    std::vector<double> expected =
        reverse ? std::vector<double>{0, 2, 1, 0, 2} : std::vector<double>{1, 1, 2, 0, 1};
    for (const char* be : {"reference", "cpu"}) {
      HostTensor dx = compile_for(gg, backend(be))->run(std::vector<HostTensor>{xv})[1];
      for (int i = 0; i < 5; ++i) EXPECT_EQ(dx.get_f64(i), expected[i]) << be << " " << i;
    }
  }
}

TEST(AutodiffPositional, AxialRope2d) {
  for (auto [gh, gw] : {std::pair<int64_t, int64_t>{2, 3}, {3, 1}}) {
    const Attrs attrs = Attrs().set("grid_h", gh).set("grid_w", gw).set("base", 100.0);
    expect_gradients(
        {rnd({2, 2, gh * gw, 8}, 70)},
        [&](GraphBuilder& b, const std::vector<Value>& in) {
          return b.op1(OpKind::AxialRope2d, attrs, in);
        },
        "AxialRope2d " + std::to_string(gh) + "x" + std::to_string(gw));
  }
}

}  // namespace
}  // namespace tessel::testing
