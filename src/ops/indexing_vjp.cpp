// VJP rules of the indexing kinds.
#include "ops/vjp_util.h"

namespace tessel {

void register_vjp_indexing(RuleTable& table) { (void)table; }

}  // namespace tessel
