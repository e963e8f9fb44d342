// Categories whose kinds are all `pending` in ops.def: the reference backend claims nothing in
// them yet. Each function moves to its own <category>.cpp when its issue lands.
#include "backends/reference/kernels.h"

namespace tessel::reference {

void register_QuantInference(Registry&) {}
void register_QuantQat(Registry&) {}
void register_Sequence(Registry&) {}
void register_ControlFlow(Registry&) {}
void register_Complex(Registry&) {}
void register_Signal(Registry&) {}
void register_Splatting(Registry&) {}
void register_UserExtensible(Registry&) {}
void register_Hawkes(Registry&) {}
void register_Vsa(Registry&) {}
void register_ActiveInference(Registry&) {}
void register_PredictiveCoding(Registry&) {}
void register_MarkovBlanket(Registry&) {}
void register_Causal(Registry&) {}
void register_Physics(Registry&) {}

}  // namespace tessel::reference
