// tessel::Optimizer: one compiled update graph over all parameters, built from the update
// template (train/optimizer_update.h), with lr and step as scalar f64 inputs.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <span>

#include "tessel/ops.h"
#include "tessel/optim.h"
#include "train/optimizer_update.h"
#include "train/tensor_builder.h"

namespace tessel {

// Each factory sets its rule's fields (designated, in declaration order); the rest keep their
// defaults, which the rule does not read.
OptimizerOptions OptimizerOptions::sgd(double lr, double momentum, double dampening,
                                       double weight_decay, bool nesterov) {
  return {.kind = "Sgd",
          .lr = lr,
          .weight_decay = weight_decay,
          .momentum = momentum,
          .dampening = dampening,
          .nesterov = nesterov};
}

OptimizerOptions OptimizerOptions::adam(double lr, double beta1, double beta2, double eps,
                                        double weight_decay, bool amsgrad) {
  return {.kind = "Adam",
          .lr = lr,
          .beta1 = beta1,
          .beta2 = beta2,
          .eps = eps,
          .weight_decay = weight_decay,
          .amsgrad = amsgrad};
}

OptimizerOptions OptimizerOptions::adamw(double lr, double beta1, double beta2, double eps,
                                         double weight_decay, bool amsgrad) {
  OptimizerOptions o = adam(lr, beta1, beta2, eps, weight_decay, amsgrad);
  o.kind = "AdamW";
  return o;
}

OptimizerOptions OptimizerOptions::adamax(double lr, double beta1, double beta2, double eps,
                                          double weight_decay) {
  OptimizerOptions o = adam(lr, beta1, beta2, eps, weight_decay);
  o.kind = "Adamax";
  return o;
}

OptimizerOptions OptimizerOptions::adagrad(double lr, double lr_decay, double weight_decay,
                                           double initial_accumulator_value, double eps) {
  return {.kind = "Adagrad",
          .lr = lr,
          .eps = eps,
          .weight_decay = weight_decay,
          .lr_decay = lr_decay,
          .initial_accumulator_value = initial_accumulator_value};
}

OptimizerOptions OptimizerOptions::adadelta(double lr, double rho, double eps,
                                            double weight_decay) {
  return {.kind = "Adadelta", .lr = lr, .beta2 = rho, .eps = eps, .weight_decay = weight_decay};
}

OptimizerOptions OptimizerOptions::rmsprop(double lr, double alpha, double eps, double weight_decay,
                                           double momentum, bool centered) {
  return {.kind = "RmsProp",
          .lr = lr,
          .beta2 = alpha,
          .eps = eps,
          .weight_decay = weight_decay,
          .momentum = momentum,
          .centered = centered};
}

OptimizerOptions OptimizerOptions::lion(double lr, double beta1, double beta2,
                                        double weight_decay) {
  return {.kind = "Lion", .lr = lr, .beta1 = beta1, .beta2 = beta2, .weight_decay = weight_decay};
}

OptimizerOptions OptimizerOptions::lamb(double lr, double beta1, double beta2, double eps,
                                        double weight_decay) {
  OptimizerOptions o = adam(lr, beta1, beta2, eps, weight_decay);
  o.kind = "Lamb";
  return o;
}

OptimizerOptions OptimizerOptions::lars(double lr, double momentum, double weight_decay,
                                        double trust_coefficient, double eps, bool nesterov) {
  return {.kind = "Lars",
          .lr = lr,
          .eps = eps,
          .weight_decay = weight_decay,
          .momentum = momentum,
          .nesterov = nesterov,
          .trust_coefficient = trust_coefficient};
}

namespace {

constexpr const char* kWhere = "[Optimizer] ";

OptimizerKind parse_kind(const std::string& name) {
  const EnumInfo& info = enum_info(VariantEnum::OptimizerKind);
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  std::string want = lower(name);
  const std::string prefix = "train.optimizer.";
  if (want.rfind(prefix, 0) == 0) want = want.substr(prefix.size());
  std::string known;
  for (size_t i = 0; i < info.values.size(); ++i) {
    std::string v = info.values[i].name;
    if (lower(v) == want) return static_cast<OptimizerKind>(i);
    known += (known.empty() ? "" : ", ") + v;
  }
  throw_error(ErrorKind::Value, kWhere, "unknown kind '", name, "'; expected one of ", known);
}

void check_lr(double lr, const char* where) {
  if (!std::isfinite(lr) || lr < 0)
    throw_error(ErrorKind::Value, where, "lr is ", lr, "; expected a finite value >= 0");
}

UpdateRule rule_from(const OptimizerOptions& o) {
  UpdateRule r;
  r.kind = parse_kind(o.kind);
  if (r.kind == OptimizerKind::Lbfgs)
    throw_error(ErrorKind::Value, kWhere,
                "Lbfgs needs a closure that re-evaluates the loss: use tessel::LBFGS");
  if (r.kind == OptimizerKind::Hebbian)
    throw_error(ErrorKind::Value, kWhere,
                "Hebbian learns from activities, not gradients: use tessel::hebbian_update");
  r.beta1 = o.beta1;
  r.beta2 = o.beta2;
  r.eps = o.eps;
  r.weight_decay = o.weight_decay;
  r.momentum = o.momentum;
  r.dampening = o.dampening;
  r.nesterov = o.nesterov;
  r.centered = o.centered;
  r.amsgrad = o.amsgrad;
  r.maximize = o.maximize;
  r.lr_decay = o.lr_decay;
  r.trust_coefficient = o.trust_coefficient;
  check_update_rule(r, kWhere);
  check_lr(o.lr, kWhere);
  if (!std::isfinite(o.initial_accumulator_value) || o.initial_accumulator_value < 0)
    throw_error(ErrorKind::Value, kWhere, "initial_accumulator_value is ",
                o.initial_accumulator_value, "; expected a finite value >= 0");
  return r;
}

}  // namespace

struct Optimizer::Impl {
  OptimizerOptions options;
  UpdateRule rule;
  std::vector<Tensor> params;
  std::vector<std::string> names;
  std::vector<std::string> state_names;
  std::vector<std::vector<Tensor>> states;  // [param][state]
  int64_t steps = 0;
  std::string device;
  Function update{nullptr};

  // The update graph's arguments: lr, step, params, grads, states (param-major) → new params,
  // new states.
  std::vector<Tensor> trace(const std::vector<Tensor>& a) const {
    size_t n = params.size(), k = state_names.size();
    TensorBuilder b(a[0].device());
    std::vector<Tensor> new_params, new_states;
    for (size_t i = 0; i < n; ++i) {
      std::span<const Tensor> s(a.data() + 2 + 2 * n + i * k, k);
      std::vector<Tensor> out = optimizer_update(b, rule, a[0], a[1], a[2 + i], a[2 + n + i], s);
      new_params.push_back(out[0]);
      new_states.insert(new_states.end(), out.begin() + 1, out.end());
    }
    new_params.insert(new_params.end(), new_states.begin(), new_states.end());
    return new_params;
  }

  void check_like_params(const std::vector<Tensor>& ts, const char* what, const char* where) {
    if (ts.size() != params.size())
      throw_error(ErrorKind::Value, where, "got ", ts.size(), " ", what, "; expected one per ",
                  "parameter (", params.size(), ")");
    for (size_t i = 0; i < ts.size(); ++i) {
      const Tensor& t = ts[i];
      if (!t.defined())
        throw_error(ErrorKind::Value, where, what, " ", i, " ('", names[i], "') is undefined");
      if (t.shape() != params[i].shape())
        throw_error(ErrorKind::Shape, where, what, " ", i, " ('", names[i], "') has shape ",
                    shape_str(t.shape()), "; the parameter has ", shape_str(params[i].shape()));
      if (t.dtype() != params[i].dtype())
        throw_error(ErrorKind::DType, where, what, " ", i, " ('", names[i], "') has dtype ",
                    dtype_name(t.dtype()), "; the parameter has ", dtype_name(params[i].dtype()));
      if (t.device() != device)
        throw_error(ErrorKind::Device, where, what, " ", i, " ('", names[i], "') is on '",
                    t.device(), "'; the parameters are on '", device, "'");
    }
  }
};

Optimizer::Optimizer(OptimizerOptions options, std::vector<Tensor> params,
                     std::vector<std::string> names)
    : impl_(std::make_shared<Impl>()) {
  Impl& m = *impl_;
  m.rule = rule_from(options);
  m.options = std::move(options);
  if (params.empty()) throw_error(ErrorKind::Value, kWhere, "no parameters to optimize");
  if (!names.empty() && names.size() != params.size())
    throw_error(ErrorKind::Value, kWhere, "got ", names.size(), " names for ", params.size(),
                " parameters");
  for (size_t i = 0; i < params.size(); ++i) {
    m.names.push_back(names.empty() ? std::to_string(i) : names[i]);
    if (!params[i].defined())
      throw_error(ErrorKind::Value, kWhere, "parameter ", i, " is undefined");
    DType dt = params[i].dtype();
    if (!is_float(dt) || dtype_support(dt) == DTypeSupport::Storage)
      throw_error(ErrorKind::DType, kWhere, "parameter ", i, " ('", m.names[i], "') has dtype ",
                  dtype_name(dt), "; expected f16, bf16, f32 or f64");
    if (params[i].device() != params[0].device())
      throw_error(ErrorKind::Device, kWhere, "parameter ", i, " is on '", params[i].device(),
                  "', parameter 0 on '", params[0].device(), "'");
  }
  m.device = params[0].device();
  m.params = std::move(params);
  m.state_names = ::tessel::state_names(m.rule);
  for (const Tensor& p : m.params) {
    std::vector<Tensor> s;
    for (size_t j = 0; j < m.state_names.size(); ++j) {
      double v =
          initial_state_value(m.rule, static_cast<int>(j), m.options.initial_accumulator_value);
      HostTensor h = HostTensor::empty(p.dtype(), p.shape());
      if (v != 0)
        for (int64_t e = 0; e < h.numel(); ++e) h.set_f64(e, v);
      s.emplace_back(std::move(h), m.device);
    }
    m.states.push_back(std::move(s));
  }
  std::weak_ptr<Impl> weak = impl_;
  m.update = compile([weak](const std::vector<Tensor>& a) { return weak.lock()->trace(a); });
}

void Optimizer::step(const std::vector<Tensor>& grads) {
  Impl& m = *impl_;
  m.check_like_params(grads, "grad", "[Optimizer.step] ");
  std::vector<Tensor> args{Tensor::scalar(m.options.lr, DType::F64, m.device),
                           Tensor::scalar(static_cast<double>(m.steps + 1), DType::F64, m.device)};
  args.insert(args.end(), m.params.begin(), m.params.end());
  args.insert(args.end(), grads.begin(), grads.end());
  for (const auto& s : m.states) args.insert(args.end(), s.begin(), s.end());
  std::vector<Tensor> out = m.update(args);
  size_t n = m.params.size(), k = m.state_names.size();
  for (size_t i = 0; i < n; ++i) {
    m.params[i] = out[i];
    for (size_t j = 0; j < k; ++j) m.states[i][j] = out[n + i * k + j];
  }
  m.steps++;
}

const std::vector<Tensor>& Optimizer::params() const { return impl_->params; }

void Optimizer::set_params(std::vector<Tensor> params) {
  impl_->check_like_params(params, "parameter", "[Optimizer.set_params] ");
  impl_->params = std::move(params);
}

const std::vector<std::string>& Optimizer::names() const { return impl_->names; }
double Optimizer::lr() const { return impl_->options.lr; }

void Optimizer::set_lr(double lr) {
  check_lr(lr, "[Optimizer.set_lr] ");
  impl_->options.lr = lr;
}

int64_t Optimizer::step_count() const { return impl_->steps; }
const OptimizerOptions& Optimizer::options() const { return impl_->options; }
const std::vector<std::string>& Optimizer::state_names() const { return impl_->state_names; }

const std::vector<Tensor>& Optimizer::state(size_t param) const {
  if (param >= impl_->states.size())
    throw_error(ErrorKind::Value, "[Optimizer.state] parameter ", param, " of ",
                impl_->states.size());
  return impl_->states[param];
}

std::vector<std::pair<std::string, Tensor>> Optimizer::state_dict() const {
  const Impl& m = *impl_;
  std::vector<std::pair<std::string, Tensor>> out;
  for (size_t i = 0; i < m.params.size(); ++i)
    for (size_t j = 0; j < m.state_names.size(); ++j)
      out.emplace_back(m.names[i] + "." + m.state_names[j], m.states[i][j]);
  out.emplace_back("step",
                   Tensor::from_vector(std::vector<int64_t>{m.steps}, {}, DType::I64, m.device));
  return out;
}

void Optimizer::load_state_dict(const std::vector<std::pair<std::string, Tensor>>& state) {
  Impl& m = *impl_;
  const char* where = "[Optimizer.load_state_dict] ";
  std::vector<std::pair<std::string, Tensor>> want = state_dict();
  std::vector<bool> seen(want.size(), false);
  std::vector<Tensor> loaded(want.size());
  for (const auto& [key, t] : state) {
    const std::string& name = key;  // clang 14 cannot capture a structured binding
    auto it =
        std::find_if(want.begin(), want.end(), [&](const auto& w) { return w.first == name; });
    if (it == want.end())
      throw_error(ErrorKind::Value, where, "unknown key '", key, "' (this ", m.options.kind,
                  " optimizer keeps ", want.size() - 1, " state tensors and 'step')");
    size_t idx = static_cast<size_t>(it - want.begin());
    if (!t.defined()) throw_error(ErrorKind::Value, where, "'", key, "' is undefined");
    if (t.shape() != it->second.shape())
      throw_error(ErrorKind::Shape, where, "'", key, "' has shape ", shape_str(t.shape()),
                  "; expected ", shape_str(it->second.shape()));
    seen[idx] = true;
    loaded[idx] = t;
  }
  for (size_t i = 0; i < want.size(); ++i)
    if (!seen[i]) throw_error(ErrorKind::Value, where, "missing key '", want[i].first, "'");
  double step = loaded.back().item();
  if (!(step >= 0) || step != std::floor(step))
    throw_error(ErrorKind::Value, where, "'step' is ", step, "; expected an integer >= 0");
  size_t k = m.state_names.size();
  for (size_t i = 0; i < m.params.size(); ++i)
    for (size_t j = 0; j < k; ++j) {
      const Tensor& t = loaded[i * k + j];
      DType dt = m.states[i][j].dtype();
      Tensor v = t.device() == m.device ? t : t.to(m.device);
      m.states[i][j] = Tensor(v.astype(dt).data(), m.device);
    }
  m.steps = static_cast<int64_t>(step);
}

int Optimizer::trace_count() const { return impl_->update.trace_count(); }

}  // namespace tessel
