// Fusion regions on the reference: an ElementwiseRegion runs as its inlined body (numeric dtypes;
// legalization then checks each body node's own claim).
#include "backends/reference/kernels.h"

namespace tessel::reference {

void register_FusionRegions(Registry& r) {
  r.decomposed(OpKind::ElementwiseRegion, kNumbers);
  r.decomposed(OpKind::ConvRegion, kFloats);
}

}  // namespace tessel::reference
