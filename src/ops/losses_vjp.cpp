// VJP rules of the loss kinds.
#include "ops/vjp_util.h"

namespace tessel {

void register_vjp_losses(RuleTable& table) { (void)table; }

}  // namespace tessel
