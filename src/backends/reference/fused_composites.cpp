// The reference runs every fused composite by its decomposition (src/ops/fused_composites.cpp):
// the decomposition is the definition, and a fused kernel elsewhere is proven against it.
#include "backends/reference/kernels.h"

namespace tessel::reference {
namespace {

// Every activation but Not, which is bitwise / logical and has no float meaning.
std::vector<int> float_activations() {
  std::vector<int> v;
  for (int i = 0; i < op_info(OpKind::Activation).num_variants(); ++i)
    if (static_cast<ActivationKind>(i) != ActivationKind::Not) v.push_back(i);
  return v;
}

}  // namespace

void register_FusedComposites(Registry& r) {
  r.decomposed(OpKind::FusedSwiGLU, kFloats);
  r.decomposed(OpKind::FusedMatMulBiasAct, kFloats, float_activations());
  r.decomposed(OpKind::FusedResidualLN, kFloats);
  r.decomposed(OpKind::FusedResidualRmsNorm, kFloats);
  r.decomposed(OpKind::AdaLayerNorm, kFloats);
  r.decomposed(OpKind::GatedResidual, kFloats);
  // Custom and Bias masks need a mask input the block does not take (a shape-rule error).
  r.decomposed(OpKind::FusedAttentionBlock, kFloats,
               {static_cast<int>(MaskKind::None), static_cast<int>(MaskKind::Causal),
                static_cast<int>(MaskKind::SlidingWindow)});
  r.decomposed(OpKind::FusedTransformerLayer, kFloats, float_activations());
}

}  // namespace tessel::reference
