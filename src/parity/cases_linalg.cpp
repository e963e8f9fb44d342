// Parity cases for contractions and the fused composites built on them. Sizes are capped so the
// reference stays quick; operands stay in [-1, 1] so sums keep a moderate scale.
#include <algorithm>

#include "parity/cases.h"

namespace tessel::parity {

std::vector<Case> cases_linalg(OpKind kind, int v, const Draw& d, CaseRng& rng) {
  (void)v;
  const int64_t b = d.b;
  const int64_t M = std::min<int64_t>(d.m, 65), K = std::min<int64_t>(d.k, 129),
                N = std::min<int64_t>(d.n, 257);
  auto u = [&](const Shape& s, double scale = 1) { return uniform(s, rng, -scale, scale); };
  auto all = [](size_t count) { return std::vector<bool>(count, true); };
  switch (kind) {
    case OpKind::MatMul: {
      std::vector<Case> out = {
          make_case("batched", Attrs(), {u({b, M, K}), u({K, N})}, all(2)),
          make_case("trans_b", Attrs().set("transpose_b", true), {u({b, M, K}), u({b, N, K})},
                    all(2)),
          make_case("trans_a", Attrs().set("transpose_a", true), {u({K, M}), u({K, N})}, all(2))};
      if (d.vector || d.scalar)
        out.push_back(make_case("vec", Attrs(), {u({K}), u({K, N})}, all(2)));
      return out;
    }
    case OpKind::DotGeneral:
      return {make_case("batched",
                        Attrs()
                            .set("lhs_batch", Shape{0})
                            .set("rhs_batch", Shape{0})
                            .set("lhs_contract", Shape{2})
                            .set("rhs_contract", Shape{1}),
                        {u({b, M, K}), u({b, K, N})}, all(2)),
              make_case("outer", Attrs(), {u({M}), u({N})}, all(2))};
    case OpKind::GroupedMatMul: {
      int64_t experts = 3, tokens = b * M;
      return {make_case("moe", Attrs(),
                        {u({tokens, K}), u({experts, K, N}), indices({tokens}, rng, 0, experts)},
                        {true, true, false})};
    }
    case OpKind::LoraMatMul:
      return {make_case("r2", Attrs().set("scale", 0.5),
                        {u({b, M, K}), u({K, N}), u({K, 2}), u({2, N})}, all(4))};
    case OpKind::Einsum:
      return {
          make_case("bmm", Attrs().set("equation", "bij,bjk->bik"), {u({b, M, K}), u({b, K, N})},
                    all(2)),
          make_case("matvec_implicit", Attrs().set("equation", "ij,j"), {u({M, K}), u({K})},
                    all(2)),
          make_case("transpose_sum", Attrs().set("equation", "bij->ji"), {u({b, M, N})}, all(1))};
    case OpKind::FusedSwiGLU: {
      int64_t D = std::min<int64_t>(K, 64), F = std::min<int64_t>(N, 96);
      return {make_case("mlp", Attrs(), {u({b, M, D}), u({D, F}), u({D, F}), u({F, D})}, all(4))};
    }
    case OpKind::FusedMatMulBiasAct:
      return {make_case("gelu", Attrs().set("act", ActivationKind::Gelu),
                        {u({b, M, K}), u({K, N}), u({N})}, all(3)),
              make_case("relu_tb_nobias",
                        Attrs().set("act", ActivationKind::Relu).set("transpose_b", true),
                        {u({b, M, K}), u({N, K}), absent()}, {true, true, false})};
    case OpKind::FusedResidualLN:
      return {
          make_case("ln", Attrs(), {u({b, d.m, d.n}), u({b, d.m, d.n}), u({d.n}), u({d.n})},
                    all(4)),
          make_case("no_affine", Attrs(), {u({b, d.m, d.n}), u({b, d.m, d.n}), absent(), absent()},
                    {true, true, false, false})};
    case OpKind::FusedResidualRmsNorm:
      return {make_case("rms", Attrs(), {u({b, d.m, d.n}), u({b, d.m, d.n}), u({d.n})}, all(3))};
    case OpKind::AdaLayerNorm:
      return {make_case("dit", Attrs(), {u({b, d.m, d.n}), u({b, d.n}), u({b, d.n})}, all(3))};
    case OpKind::GatedResidual:
      return {make_case("dit", Attrs(), {u({b, d.m, d.n}), u({b, d.m, d.n}), u({b, d.n})}, all(3))};
    case OpKind::FusedAttentionBlock: {
      int64_t S = std::min<int64_t>(d.m * 3, 33), D = 16;
      return {make_case("gqa", Attrs().set("heads", int64_t{2}).set("kv_heads", int64_t{1}),
                        {u({b, S, D}), u({D, D}, 0.5), u({D, D / 2}, 0.5), u({D, D / 2}, 0.5),
                         u({D, D}, 0.5), absent(), absent(), absent(), absent()},
                        {true, true, true, true, true, false, false, false, false}),
              make_case("causal_bias",
                        Attrs().set("heads", int64_t{4}).set("mask_kind", MaskKind::Causal),
                        {u({b, S, D}), u({D, D}, 0.5), u({D, D}, 0.5), u({D, D}, 0.5),
                         u({D, D}, 0.5), u({D}), u({D}), u({D}), u({D})},
                        all(9))};
    }
    case OpKind::FusedTransformerLayer: {
      int64_t S = std::min<int64_t>(d.m * 2, 17), D = 8;
      auto w = [&](const Shape& s) { return u(s, 0.5); };
      std::vector<bool> cast = {true, true, true, true, true, false, false, false, false,
                                true, true, true, true, true, true,  true,  true};
      return {
          make_case("post_norm", Attrs().set("heads", int64_t{2}),
                    {u({b, S, D}), w({D, D}), w({D, D}), w({D, D}), w({D, D}), absent(), absent(),
                     absent(), absent(), w({D}), w({D}), w({D, 16}), w({16}), w({16, D}), w({D}),
                     w({D}), w({D})},
                    cast),
          make_case("pre_norm_causal",
                    Attrs().set("heads", int64_t{2}).set("norm_first", true).set("causal", true),
                    {u({b, S, D}), w({D, D}), w({D, D}), w({D, D}), w({D, D}), absent(), absent(),
                     absent(), absent(), w({D}), w({D}), w({D, 16}), w({16}), w({16, D}), w({D}),
                     w({D}), w({D})},
                    cast)};
    }
    default:
      return {};
  }
}

}  // namespace tessel::parity
