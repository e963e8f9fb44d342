#include "parity/samples.h"

#include "op_test_util.h"

namespace tessel::testing {
namespace {

HostTensor rnd(const Shape& shape, uint64_t seed, double lo = -2, double hi = 2) {
  return random_tensor(DType::F64, shape, seed, lo, hi);
}
HostTensor ints(const Shape& shape, std::vector<int64_t> v) { return i64(shape, v); }
HostTensor bools(const Shape& shape, uint64_t seed) {
  HostTensor t = random_tensor(DType::F64, shape, seed, 0, 1);
  HostTensor b = HostTensor::empty(DType::Bool, shape);
  for (int64_t i = 0; i < b.numel(); ++i) b.set_i64(i, t.get_f64(i) > 0.4);
  return b;
}

// Builds a sample; `cast` marks which inputs follow the cell dtype.
Sample make(std::string name, Attrs attrs, std::vector<HostTensor> inputs, std::vector<bool> cast) {
  return Sample{std::move(name), std::move(attrs), std::move(inputs), std::move(cast), ""};
}
Sample unary(Attrs attrs, const Shape& shape, double lo = -2, double hi = 2) {
  return make("x" + shape_str(shape), std::move(attrs), {rnd(shape, 1, lo, hi)}, {true});
}
HostTensor absent() { return HostTensor{}; }

std::pair<double, double> activation_domain(ActivationKind k) {
  switch (k) {
    case ActivationKind::Log:
    case ActivationKind::Sqrt:
    case ActivationKind::Rsqrt:
    case ActivationKind::Reciprocal:
      return {0.25, 3};
    case ActivationKind::Acosh:
      return {1.1, 3};
    case ActivationKind::Asin:
    case ActivationKind::Acos:
    case ActivationKind::Atanh:
      return {-0.9, 0.9};
    case ActivationKind::Log1p:
      return {-0.5, 2};
    default:
      return {-2, 2};
  }
}

}  // namespace

std::vector<Sample> samples_for(OpKind kind, int v) {
  auto var = [&](const char* attr) { return Attrs().set(attr, AttrValue(int64_t{v})); };
  switch (kind) {
    case OpKind::Activation: {
      auto [lo, hi] = activation_domain(static_cast<ActivationKind>(v));
      return {unary(var("kind"), {2, 3, 5}, lo, hi)};
    }
    case OpKind::Cast:
      return {unary(Attrs().set("to", DType::F64), {2, 3})};
    case OpKind::StopGradient:
      return {unary(Attrs(), {3, 2})};
    case OpKind::Binary: {
      auto op = static_cast<BinaryOp>(v);
      bool positive_b = op == BinaryOp::Div || op == BinaryOp::Mod || op == BinaryOp::FloorMod;
      // Shifts and integer powers need small non-negative right operands.
      bool small = op == BinaryOp::Shl || op == BinaryOp::Shr || op == BinaryOp::Pow;
      double blo = positive_b ? 0.5 : small ? 0 : -2, bhi = small ? 1 : 2;
      double alo = op == BinaryOp::Pow ? 0.5 : -2;
      return {make("broadcast", var("op"), {rnd({2, 3, 4}, 2, alo, 2), rnd({3, 1}, 3, blo, bhi)},
                   {true, true})};
    }
    case OpKind::Compare:
      return {make("broadcast", var("op"), {rnd({2, 3, 4}, 4), rnd({4}, 5)}, {true, true})};
    case OpKind::Where:
      return {make("broadcast", Attrs(), {bools({2, 3}, 6), rnd({2, 3}, 7), rnd({3}, 8)},
                   {false, true, true})};
    case OpKind::GatedActivation:
      return {unary(var("kind"), {2, 6}, -1, 1)};
    case OpKind::MatMul:
      return {make("batched", Attrs(), {rnd({2, 3, 4}, 9), rnd({4, 5}, 10)}, {true, true})};
    case OpKind::DotGeneral:
      return {make("batched",
                   Attrs()
                       .set("lhs_batch", Shape{0})
                       .set("rhs_batch", Shape{0})
                       .set("lhs_contract", Shape{2})
                       .set("rhs_contract", Shape{1}),
                   {rnd({2, 3, 4}, 11), rnd({2, 4, 5}, 12)}, {true, true})};
    case OpKind::GroupedMatMul:
      return {make("moe", Attrs(),
                   {rnd({5, 3}, 13), rnd({2, 3, 4}, 14), ints({5}, {0, 1, 1, 0, 1})},
                   {true, true, false})};
    case OpKind::LoraMatMul:
      return {make("lora", Attrs().set("scale", 0.5),
                   {rnd({2, 3}, 15), rnd({3, 4}, 16), rnd({3, 2}, 17), rnd({2, 4}, 18)},
                   {true, true, true, true})};
    case OpKind::Einsum:
      return {make("bmm", Attrs().set("equation", "bij,bjk->bik"),
                   {rnd({2, 3, 4}, 19), rnd({2, 4, 5}, 20)}, {true, true})};
    case OpKind::LayerNorm:
      return {make("affine", Attrs(), {rnd({2, 3, 5}, 21), rnd({5}, 22), rnd({5}, 23)},
                   {true, true, true})};
    case OpKind::LayerNorm2d:
      return {make("nchw", Attrs(), {rnd({2, 3, 4, 5}, 24), rnd({3}, 25), rnd({3}, 26)},
                   {true, true, true})};
    case OpKind::GroupNorm:
      return {make("g2", Attrs().set("groups", int64_t{2}),
                   {rnd({2, 4, 3}, 27), rnd({4}, 28), rnd({4}, 29)}, {true, true, true})};
    case OpKind::BatchNormInference:
      return {
          make("nc", Attrs(),
               {rnd({2, 3, 4}, 30), rnd({3}, 31), rnd({3}, 32, 0.5, 2), rnd({3}, 33), rnd({3}, 34)},
               {true, true, true, true, true})};
    case OpKind::RmsNorm:
      return {make("gamma", Attrs(), {rnd({2, 3, 5}, 35), rnd({5}, 36)}, {true, true})};
    case OpKind::Attention: {
      auto mk = static_cast<MaskKind>(v);
      HostTensor mask = mk == MaskKind::Custom ? bools({2, 5}, 37)
                        : mk == MaskKind::Bias ? rnd({2, 1, 3, 5}, 38)
                                               : absent();
      return {make("gqa", var("mask_kind").set("window", int64_t{2}),
                   {rnd({2, 4, 3, 8}, 39), rnd({2, 2, 5, 8}, 40), rnd({2, 2, 5, 6}, 41), mask},
                   {true, true, true, mk == MaskKind::Bias})};
    }
    case OpKind::Rope:
      return {unary(var("style"), {2, 2, 5, 8})};
    case OpKind::AxialRope2d:
      return {unary(Attrs().set("grid_h", int64_t{2}).set("grid_w", int64_t{3}), {2, 6, 8})};
    case OpKind::ALiBi:
      return {unary(Attrs(), {2, 4, 3, 5})};
    case OpKind::Reshape:
      return {unary(Attrs().set("shape", Shape{4, -1}), {2, 3, 4})};
    case OpKind::Transpose:
      return {unary(Attrs().set("perm", Shape{2, 0, 1}), {2, 3, 4})};
    case OpKind::Narrow:
      return {
          unary(Attrs().set("axis", int64_t{1}).set("start", int64_t{1}).set("length", int64_t{2}),
                {2, 4, 3})};
    case OpKind::Concat:
      return {make("axis1", Attrs().set("axis", int64_t{1}), {rnd({2, 3}, 42), rnd({2, 2}, 43)},
                   {true, true})};
    case OpKind::Expand:
      return {unary(Attrs().set("shape", Shape{2, 3, 4}), {3, 1})};
    case OpKind::Gather:
      return {make("take", Attrs(), {rnd({5, 3}, 44), ints({2, 2}, {4, 0, -1, 2})}, {true, false})};
    case OpKind::Reverse:
      return {unary(Attrs().set("axes", Shape{0, 2}), {2, 3, 4})};
    case OpKind::Slice:
      return {unary(
          Attrs().set("starts", Shape{4, 1}).set("ends", Shape{0, 6}).set("steps", Shape{-2, 2}),
          {5, 6})};
    case OpKind::Pad:
      return {unary(var("mode").set("pads", Shape{0, 1, 1, 0, 1, 2}).set("value", 0.5), {2, 3, 4})};
    case OpKind::Clamp:
      return {unary(Attrs().set("min", -0.5).set("max", 0.5), {2, 3})};
    case OpKind::Tile:
      return {unary(Attrs().set("repeats", Shape{2, 1}), {2, 3})};
    case OpKind::Trilu:
      return {unary(Attrs().set("k", int64_t{1}), {2, 4, 5})};
    case OpKind::ScatterAdd:
      return {make("index_add", Attrs(), {rnd({5, 3}, 45), ints({3}, {0, 2, 0}), rnd({3, 3}, 46)},
                   {true, false, true})};
    case OpKind::ScatterNd:
      return {make("rows", var("reduction"),
                   {rnd({4, 3}, 47), ints({2, 1}, {1, 3}), rnd({2, 3}, 48)}, {true, false, true})};
    case OpKind::ScatterElements:
      return {make("axis0", var("reduction"),
                   {rnd({3, 4}, 49), ints({2, 4}, {0, 1, 2, 0, 2, 2, 1, 1}), rnd({2, 4}, 50)},
                   {true, false, true})};
    case OpKind::GatherNd:
      return {make("pairs", Attrs(), {rnd({3, 4}, 51), ints({2, 2}, {0, 1, 2, 3})}, {true, false})};
    case OpKind::GatherElements:
      return {make("axis1", Attrs().set("axis", int64_t{1}),
                   {rnd({3, 4}, 52), ints({3, 2}, {0, 3, 1, 1, 2, 0})}, {true, false})};
    case OpKind::ResizeNearest2x:
      return {unary(Attrs(), {2, 3, 4, 5})};
    case OpKind::Interpolate3d:
      return {unary(Attrs().set("size", Shape{4, 2, 7}), {1, 2, 3, 4, 5})};
    case OpKind::Embedding:
      return {make("lookup", Attrs(), {rnd({6, 4}, 53), ints({2, 3}, {0, 5, 2, 2, 1, 4})},
                   {true, false})};
    case OpKind::OneHot:
      return {make("depth5", Attrs().set("depth", int64_t{5}), {ints({2, 3}, {0, 4, -1, 2, 7, 3})},
                   {false})};
    case OpKind::Range: {
      Sample s =
          make("range", Attrs().set("start", 1.0).set("limit", 9.0).set("delta", 2.0), {}, {});
      s.dtype_attr = "dtype";
      return {s};
    }
    case OpKind::Split:
      return {make("axis1", Attrs().set("axis", int64_t{1}).set("sizes", Shape{3, 4}),
                   {rnd({2, 7}, 54)}, {true})};
    case OpKind::Reduce: {
      Attrs a = var("op").set("axes", Shape{1});
      if (static_cast<ReduceOp>(v) == ReduceOp::Var || static_cast<ReduceOp>(v) == ReduceOp::Std)
        a.set("correction", int64_t{1});
      return {unary(a, {2, 3, 5}, static_cast<ReduceOp>(v) == ReduceOp::Prod ? 0.5 : -2, 2)};
    }
    case OpKind::Softmax:
      return {unary(Attrs().set("axis", int64_t{1}), {2, 3, 5}),
              unary(Attrs().set("axis", int64_t{-1}).set("log", true), {2, 3, 5})};
    case OpKind::Cumsum:
      return {unary(Attrs().set("axis", int64_t{2}).set("exclusive", true), {2, 3, 5})};
    case OpKind::CumProd:
    case OpKind::CumMax:
      return {unary(Attrs().set("axis", int64_t{2}).set("reverse", true), {2, 3, 5})};
    case OpKind::ArgMax:
    case OpKind::ArgMin:
      return {unary(Attrs().set("axis", int64_t{1}), {2, 3, 5})};
    case OpKind::TopK:
      return {unary(Attrs().set("k", int64_t{3}), {2, 7})};
    case OpKind::Sort:
    case OpKind::ArgSort:
      return {unary(Attrs().set("descending", true), {2, 7})};
    case OpKind::Sample:
      return {unary(Attrs().set("seed", int64_t{3}).set("top_k", int64_t{4}), {3, 6})};
    case OpKind::RngNormal:
    case OpKind::RngUniform: {
      Sample s = make("fill", Attrs().set("shape", Shape{3, 4}).set("seed", int64_t{5}), {}, {});
      s.dtype_attr = "dtype";
      return {s};
    }
    case OpKind::Dropout:
      return {unary(Attrs().set("p", 0.3).set("seed", int64_t{1}), {2, 3, 5})};
    case OpKind::Conv:
      return {
          make("2d_groups",
               Attrs()
                   .set("groups", int64_t{2})
                   .set("strides", Shape{2, 1})
                   .set("pads", Shape{1, 1}),
               {rnd({2, 4, 7, 6}, 55), rnd({6, 2, 3, 3}, 56), rnd({6}, 57)}, {true, true, true}),
          make("1d", Attrs().set("dilations", Shape{2}),
               {rnd({2, 3, 9}, 58), rnd({4, 3, 3}, 59), absent()}, {true, true, false}),
          make("3d", Attrs(), {rnd({1, 2, 4, 3, 5}, 60), rnd({3, 2, 2, 2, 2}, 61), absent()},
               {true, true, false})};
    case OpKind::Im2Col:
      return {unary(Attrs().set("kernel", Shape{2, 3}), {2, 3, 5, 6})};
    case OpKind::ConvTranspose2d:
      return {make("s2", Attrs().set("strides", Shape{2, 2}),
                   {rnd({2, 4, 3, 3}, 62), rnd({4, 3, 2, 2}, 63), rnd({3}, 64)},
                   {true, true, true})};
    case OpKind::Pool: {
      auto k = static_cast<PoolKind>(v);
      Attrs a = var("kind");
      if (k == PoolKind::AdaptiveAvg || k == PoolKind::AdaptiveMax)
        a.set("output_size", Shape{3, 2});
      else
        a.set("kernel", Shape{3, 2}).set("strides", Shape{2, 2});
      return {unary(a, {2, 3, 7, 6}, k == PoolKind::Lp ? 0.1 : -2, 2)};
    }
    case OpKind::FusedSwiGLU:
      return {make("mlp", Attrs(),
                   {rnd({2, 3, 4}, 65), rnd({4, 6}, 66), rnd({4, 6}, 67), rnd({6, 5}, 68)},
                   {true, true, true, true})};
    case OpKind::FusedMatMulBiasAct:
      return {make("gelu", Attrs().set("act", ActivationKind::Gelu),
                   {rnd({2, 3, 4}, 69), rnd({4, 5}, 70), rnd({5}, 71)}, {true, true, true})};
    case OpKind::FusedResidualLN:
      return {make("ln", Attrs(),
                   {rnd({2, 3, 5}, 72), rnd({2, 3, 5}, 73), rnd({5}, 74), rnd({5}, 75)},
                   {true, true, true, true})};
    case OpKind::FusedResidualRmsNorm:
      return {make("rms", Attrs(), {rnd({2, 3, 5}, 76), rnd({2, 3, 5}, 77), rnd({5}, 78)},
                   {true, true, true})};
    case OpKind::AdaLayerNorm:
      return {make("dit", Attrs(), {rnd({2, 3, 5}, 79), rnd({2, 5}, 80), rnd({2, 5}, 81)},
                   {true, true, true})};
    case OpKind::GatedResidual:
      return {make("dit", Attrs(), {rnd({2, 3, 5}, 82), rnd({2, 3, 5}, 83), rnd({2, 5}, 84)},
                   {true, true, true})};
    case OpKind::FusedAttentionBlock:
      return {make("gqa", Attrs().set("heads", int64_t{2}).set("kv_heads", int64_t{1}),
                   {rnd({2, 5, 8}, 85, -1, 1), rnd({8, 8}, 86, -0.5, 0.5),
                    rnd({8, 4}, 87, -0.5, 0.5), rnd({8, 4}, 88, -0.5, 0.5),
                    rnd({8, 8}, 89, -0.5, 0.5), absent(), absent(), absent(), absent()},
                   {true, true, true, true, true, false, false, false, false})};
    case OpKind::FusedTransformerLayer: {
      auto w = [&](const Shape& s, uint64_t seed) { return rnd(s, seed, -0.5, 0.5); };
      return {make("post_norm", Attrs().set("heads", int64_t{2}),
                   {rnd({2, 5, 8}, 90), w({8, 8}, 91), w({8, 8}, 92), w({8, 8}, 93), w({8, 8}, 94),
                    absent(), absent(), absent(), absent(), w({8}, 95), w({8}, 96), w({8, 16}, 97),
                    w({16}, 98), w({16, 8}, 99), w({8}, 100), w({8}, 101), w({8}, 102)},
                   {true, true, true, true, true, false, false, false, false, true, true, true,
                    true, true, true, true, true})};
    }
    case OpKind::Loss: {
      auto k = static_cast<LossKind>(v);
      HostTensor in = k == LossKind::BinaryCrossEntropy ? rnd({2, 3}, 103, 0.05, 0.95)
                      : k == LossKind::KlDiv            ? rnd({2, 3}, 103, -3, -0.1)
                                                        : rnd({2, 3}, 103);
      HostTensor target = k == LossKind::BinaryCrossEntropy ||
                                  k == LossKind::BinaryCrossEntropyWithLogits ||
                                  k == LossKind::KlDiv
                              ? rnd({2, 3}, 104, 0, 1)
                              : rnd({2, 3}, 104);
      return {make("mean", var("kind"), {in, target}, {true, true})};
    }
    case OpKind::SoftmaxCrossEntropy:
      return {make("soft", Attrs(), {rnd({3, 5}, 105), rnd({3, 5}, 106, 0, 0.4)}, {true, true})};
    case OpKind::SoftmaxCrossEntropyWithLogits:
      return {make("ids", Attrs(), {rnd({3, 5}, 107), ints({3}, {4, 0, 2})}, {true, false})};
    default:
      return {};
  }
}

}  // namespace tessel::testing
