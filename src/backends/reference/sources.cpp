// Sources are bound by the executor itself (arguments and literals); claimed for every dtype.
#include "backends/reference/kernels.h"

namespace tessel::reference {

void register_Sources(Registry& r) {
  for (OpKind k : {OpKind::Input, OpKind::Param, OpKind::Constant})
    r.claims.add({k, dtypes::kEvery, How::Native, {}});
}

}  // namespace tessel::reference
