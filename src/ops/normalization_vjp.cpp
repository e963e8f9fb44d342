// VJP rules of the normalization kinds.
#include "ops/vjp_util.h"

namespace tessel {

void register_vjp_normalization(RuleTable& table) { (void)table; }

}  // namespace tessel
