#include "ops/rules.h"

namespace tessel {

const RuleTable& rules() {
  static const RuleTable table = [] {
    RuleTable t;
#define TESSEL_CATEGORY(e, title) register_rules_##e(t);
#include "ir/ops.def"
    return t;
  }();
  return table;
}

}  // namespace tessel
