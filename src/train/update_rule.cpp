#include "train/update_rule.h"

#include <cmath>

namespace tessel {

bool is_per_tensor(OptimizerKind kind) {
  return kind != OptimizerKind::Lbfgs && kind != OptimizerKind::Hebbian;
}

std::vector<std::string> state_names(const UpdateRule& r) {
  switch (r.kind) {
    case OptimizerKind::Sgd:
    case OptimizerKind::Lars:
      if (r.momentum > 0) return {"momentum_buffer"};
      return {};
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW:
      if (r.amsgrad) return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
      return {"exp_avg", "exp_avg_sq"};
    case OptimizerKind::Lamb:
      return {"exp_avg", "exp_avg_sq"};
    case OptimizerKind::Adamax:
      return {"exp_avg", "exp_inf"};
    case OptimizerKind::Adagrad:
      return {"sum"};
    case OptimizerKind::Adadelta:
      return {"square_avg", "acc_delta"};
    case OptimizerKind::RmsProp: {
      std::vector<std::string> names{"square_avg"};
      if (r.momentum > 0) names.push_back("momentum_buffer");
      if (r.centered) names.push_back("grad_avg");
      return names;
    }
    case OptimizerKind::Lion:
      return {"exp_avg"};
    case OptimizerKind::Lbfgs:
    case OptimizerKind::Hebbian:
      return {};
  }
  return {};
}

double initial_state_value(const UpdateRule& r, int state, double initial_accumulator_value) {
  return r.kind == OptimizerKind::Adagrad && state == 0 ? initial_accumulator_value : 0.0;
}

UpdateRule update_rule_from_attrs(const Attrs& a) {
  UpdateRule r;
  r.kind = a.e<OptimizerKind>("kind");
  r.beta1 = a.f("beta1");
  r.beta2 = a.f("beta2");
  r.eps = a.f("eps");
  r.weight_decay = a.f("weight_decay");
  r.momentum = a.f("momentum");
  r.dampening = a.f("dampening");
  r.nesterov = a.b("nesterov");
  r.centered = a.b("centered");
  r.amsgrad = a.b("amsgrad");
  r.maximize = a.b("maximize");
  r.lr_decay = a.f("lr_decay");
  r.trust_coefficient = a.f("trust_coefficient");
  return r;
}

void check_update_rule(const UpdateRule& r, const std::string& where) {
  auto at_least = [&](const char* name, double v, double lo) {
    if (!std::isfinite(v) || v < lo)
      throw_error(ErrorKind::Value, where, name, " is ", v, "; expected a finite value >= ", lo);
  };
  auto beta = [&](const char* name, double v) {
    if (!(v >= 0 && v < 1))
      throw_error(ErrorKind::Value, where, name, " is ", v, "; expected 0 <= ", name, " < 1");
  };
  at_least("eps", r.eps, 0);
  at_least("weight_decay", r.weight_decay, 0);
  at_least("momentum", r.momentum, 0);
  at_least("lr_decay", r.lr_decay, 0);
  at_least("trust_coefficient", r.trust_coefficient, 0);
  beta("beta1", r.beta1);
  beta("beta2", r.beta2);
  if (!(r.dampening >= 0 && r.dampening <= 1))
    throw_error(ErrorKind::Value, where, "dampening is ", r.dampening,
                "; expected 0 <= dampening <= 1");
  if (r.nesterov && (!(r.kind == OptimizerKind::Sgd || r.kind == OptimizerKind::Lars) ||
                     !(r.momentum > 0) || r.dampening != 0))
    throw_error(ErrorKind::Value, where,
                "nesterov needs kind Sgd or Lars with momentum > 0 and dampening 0");
  if (r.centered && r.kind != OptimizerKind::RmsProp)
    throw_error(ErrorKind::Value, where, "centered applies to RmsProp only");
  if (r.amsgrad && r.kind != OptimizerKind::Adam && r.kind != OptimizerKind::AdamW)
    throw_error(ErrorKind::Value, where, "amsgrad applies to Adam and AdamW only");
}

}  // namespace tessel
