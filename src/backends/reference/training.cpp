// The reference runs the Training kinds by their decompositions: Freeze and Graft are copies;
// OptimizerStep is the update template of src/train/optimizer_update.h: every per-tensor rule,
// float parameters. Lbfgs and Hebbian are not per-tensor steps (the shape rule refuses them), so
// those variants stay unclaimed.
#include "backends/reference/kernels.h"
#include "train/update_rule.h"

namespace tessel::reference {

void register_Training(Registry& r) {
  std::vector<int> per_tensor;
  for (int v = 0; v < op_info(OpKind::OptimizerStep).num_variants(); ++v)
    if (is_per_tensor(static_cast<OptimizerKind>(v))) per_tensor.push_back(v);
  r.decomposed(OpKind::OptimizerStep, dtypes::kFloat, per_tensor);
  // Freeze and Graft are copies (StopGradient) forward.
  r.decomposed(OpKind::Freeze, dtypes::kAll);
  r.decomposed(OpKind::Graft, dtypes::kAll);
}

}  // namespace tessel::reference
