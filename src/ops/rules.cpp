#include "ops/rules.h"

namespace tessel {

const RuleTable& rules() {
  static const RuleTable table = [] {
    RuleTable t;
#define TESSEL_CATEGORY(e, title) register_rules_##e(t);
#include "ir/ops.def"
    register_vjp_elementwise(t);
    register_vjp_linear_algebra(t);
    register_vjp_reduction(t);
    register_vjp_shape_movement(t);
    register_vjp_indexing(t);
    register_vjp_normalization(t);
    register_vjp_losses(t);
    register_vjp_positional(t);
    register_vjp_conv_pool(t);
    register_vjp_attention(t);
    return t;
  }();
  return table;
}

}  // namespace tessel
