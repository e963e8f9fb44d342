// Sources are bound by the executor itself (arguments and literals); claimed for every dtype.
#include "backends/reference/kernels.h"

namespace tessel::reference {

void register_Sources(Registry& r) {
  DTypeSet every;
  for (int i = 0; i < kNumDTypes; ++i) every = every | DTypeSet{static_cast<DType>(i)};
  for (OpKind k : {OpKind::Input, OpKind::Param, OpKind::Constant})
    r.claims.add({k, every, How::Native, {}});
}

}  // namespace tessel::reference
