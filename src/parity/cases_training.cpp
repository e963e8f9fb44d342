// Parity cases for Freeze and Graft (copies), and for OptimizerStep: every per-tensor rule at step
// 3 with weight decay, states in their domains (second moments positive, RMSprop's square_avg above
// grad_avg²). Lion's momentum and gradient share a sign per element so sign(β1·m + (1−β1)·g) is
// never a tie that rounding could flip.
#include "parity/cases.h"
#include "train/update_rule.h"

namespace tessel::parity {
namespace {

Attrs attrs_of(const UpdateRule& r, double lr) {
  return Attrs()
      .set("kind", r.kind)
      .set("lr", lr)
      .set("step", int64_t{3})
      .set("beta1", r.beta1)
      .set("beta2", r.beta2)
      .set("eps", r.eps)
      .set("weight_decay", r.weight_decay)
      .set("momentum", r.momentum)
      .set("dampening", r.dampening)
      .set("nesterov", r.nesterov)
      .set("centered", r.centered)
      .set("amsgrad", r.amsgrad)
      .set("maximize", r.maximize)
      .set("lr_decay", r.lr_decay)
      .set("trust_coefficient", r.trust_coefficient);
}

Case optimizer_case(const std::string& name, const UpdateRule& r, const Shape& s, CaseRng& rng) {
  std::vector<HostTensor> in{uniform(s, rng, -2, 2), uniform(s, rng, -1, 1)};
  std::vector<std::string> names = state_names(r);
  for (const std::string& st : names) {
    bool positive = st == "exp_avg_sq" || st == "max_exp_avg_sq" || st == "exp_inf" ||
                    st == "sum" || st == "acc_delta" || st == "square_avg";
    if (r.kind == OptimizerKind::RmsProp && st == "square_avg")
      in.push_back(uniform(s, rng, 1, 2));
    else if (st == "grad_avg")
      in.push_back(uniform(s, rng, -0.5, 0.5));
    else
      in.push_back(positive ? uniform(s, rng, 0.1, 1) : uniform(s, rng, -1, 1));
  }
  if (names.empty()) in.push_back(uniform(s, rng, -1, 1));  // the pass-through state
  if (r.kind == OptimizerKind::Lion) {
    auto* g = reinterpret_cast<double*>(in[1].data());
    auto* m = reinterpret_cast<double*>(in[2].data());
    for (int64_t i = 0; i < in[1].numel(); ++i) {
      double sign = rng.uniform(0, 1) < 0.5 ? -1 : 1;
      g[i] = sign * rng.uniform(0.2, 1);
      m[i] = sign * rng.uniform(0.5, 1.5);
    }
  }
  double lr = r.kind == OptimizerKind::Lion ? 0.01 : 0.05;
  std::vector<bool> castable(in.size(), true);
  return make_case(name, attrs_of(r, lr), std::move(in), std::move(castable));
}

}  // namespace

std::vector<Case> cases_training(OpKind kind, int v, const Draw& d, CaseRng& rng) {
  if (kind == OpKind::Freeze) {
    Shape s = elem_shape(d);
    HostTensor mask = HostTensor::empty(DType::Bool, s);
    for (int64_t i = 0; i < mask.numel(); ++i) mask.set_i64(i, rng.below(2));
    return {make_case("mask", Attrs(), {uniform(s, rng, -2, 2), mask}, {true, false}),
            make_case("all", Attrs(), {uniform(s, rng, -2, 2), absent()}, {true, false})};
  }
  if (kind == OpKind::Graft) {
    Shape s = elem_shape(d);
    return {
        make_case("copy", Attrs(), {uniform(s, rng, -2, 2), uniform(s, rng, -2, 2)}, {true, true})};
  }
  if (kind != OpKind::OptimizerStep) return {};
  UpdateRule r;
  r.kind = static_cast<OptimizerKind>(v);
  if (!is_per_tensor(r.kind)) return {};
  Shape s = elem_shape(d);
  r.weight_decay = 0.01;
  std::vector<Case> cases;
  switch (r.kind) {
    case OptimizerKind::Sgd:
    case OptimizerKind::Lars:
      cases.push_back(optimizer_case("plain", r, s, rng));
      r.momentum = 0.9;
      r.nesterov = true;
      cases.push_back(optimizer_case("nesterov", r, s, rng));
      r.nesterov = false;
      r.dampening = 0.3;
      cases.push_back(optimizer_case("dampened", r, s, rng));
      break;
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW:
      cases.push_back(optimizer_case("plain", r, s, rng));
      r.amsgrad = true;
      cases.push_back(optimizer_case("amsgrad", r, s, rng));
      break;
    case OptimizerKind::Adagrad:
      r.lr_decay = 0.1;
      cases.push_back(optimizer_case("lr_decay", r, s, rng));
      break;
    case OptimizerKind::Adadelta:
    case OptimizerKind::Adamax:
    case OptimizerKind::Lamb:
      r.beta2 = r.kind == OptimizerKind::Adadelta ? 0.9 : r.beta2;
      cases.push_back(optimizer_case("plain", r, s, rng));
      break;
    case OptimizerKind::RmsProp:
      r.beta2 = 0.99;
      cases.push_back(optimizer_case("plain", r, s, rng));
      r.momentum = 0.9;
      r.centered = true;
      cases.push_back(optimizer_case("centered_momentum", r, s, rng));
      break;
    case OptimizerKind::Lion:
      r.beta2 = 0.99;
      r.maximize = true;
      cases.push_back(optimizer_case("maximize", r, s, rng));
      break;
    case OptimizerKind::Lbfgs:
    case OptimizerKind::Hebbian:
      break;
  }
  return cases;
}

}  // namespace tessel::parity
