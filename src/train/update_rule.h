// The static hyperparameters of one per-tensor optimizer update rule (those that do not change
// during training), and the state each rule keeps. Shared by the OptimizerStep shape rule and
// decomposition (src/ops/training.cpp), the update template (train/optimizer_update.h) and the
// public Optimizer (include/tessel/optim.h). The learning rate and the step count are not here:
// they are scalar inputs of the update, so one compiled update serves every step of a schedule.
#pragma once

#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/op.h"

namespace tessel {

struct UpdateRule {
  OptimizerKind kind = OptimizerKind::Sgd;
  // Adam / AdamW / Adamax / LAMB / Lion: β1, β2. RMSprop's alpha and Adadelta's rho are beta2.
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;  // L2 on the gradient; decoupled for AdamW and Lion
  double momentum = 0, dampening = 0;
  bool nesterov = false;
  bool centered = false;            // RMSprop
  bool amsgrad = false;             // Adam / AdamW
  bool maximize = false;            // ascend instead of descend (negates the gradient)
  double lr_decay = 0;              // Adagrad: lr / (1 + (step - 1)·lr_decay)
  double trust_coefficient = 1e-3;  // LARS's η
};

// Lbfgs and Hebbian are not per-tensor gradient updates (see include/tessel/optim.h).
bool is_per_tensor(OptimizerKind kind);

// The names of the state tensors a rule keeps per parameter, each shaped like the parameter,
// in PyTorch's state order ("exp_avg", "exp_avg_sq", ...). Plain SGD / LARS without momentum
// keep none.
std::vector<std::string> state_names(const UpdateRule& rule);

// The value a state starts from (zeros but Adagrad's sum).
double initial_state_value(const UpdateRule& rule, int state, double initial_accumulator_value);

// The rule from OptimizerStep's attributes.
UpdateRule update_rule_from_attrs(const Attrs& attrs);

// Throws a Value error, prefixed by `where`, naming the first hyperparameter out of range.
void check_update_rule(const UpdateRule& rule, const std::string& where);

}  // namespace tessel
