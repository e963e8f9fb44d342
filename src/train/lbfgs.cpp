// tessel::LBFGS: PyTorch 1.13's torch.optim.LBFGS.step, line for line. The vector algebra over
// the flattened parameters runs as lazy tensor ops on the parameters' device (the two-loop
// recursion is one graph per history length); the scalar decisions read single elements back.
#include <cmath>

#include "tessel/ops.h"
#include "tessel/optim.h"

namespace tessel {

struct LBFGS::Impl {
  LbfgsOptions o;
  std::vector<Tensor> params;
  int64_t n_iter = 0, func_evals = 0;
  // PyTorch's state between steps.
  Tensor d, prev_flat_grad, h_diag;
  double t = 0, prev_loss = 0;
  bool have_h_diag = false;
  std::vector<Tensor> old_dirs, old_stps, ro;

  Tensor flatten(const std::vector<Tensor>& ts) const {
    std::vector<Tensor> views;
    for (const Tensor& x : ts) views.push_back(reshape(x, {x.numel()}));
    Tensor f = views.size() == 1 ? views[0] : concatenate(views, 0);
    f.eval();
    return f;
  }

  static Tensor dot(const Tensor& a, const Tensor& b) { return sum(a * b); }
  static double abs_max(const Tensor& v) { return v.numel() == 0 ? 0.0 : max(abs(v)).item(); }

  // params += step · update (reshaped per parameter).
  void add_grad(double step, const Tensor& update) {
    int64_t offset = 0;
    Tensor s = Tensor::scalar(step, update.dtype(), update.device());
    for (Tensor& p : params) {
      int64_t n = p.numel();
      Tensor part = reshape(slice(update, {offset}, {offset + n}), p.shape());
      p = p + part * s;
      offset += n;
    }
    eval(params);
  }

  // Calls the closure on the current parameters; returns (loss, flat gradient).
  std::pair<double, Tensor> evaluate(const Closure& closure) {
    Evaluation e = closure(params);
    const char* where = "[LBFGS.step] ";
    if (!e.loss.defined() || e.loss.numel() != 1)
      throw_error(ErrorKind::Value, where, "the closure's loss must be one element");
    if (e.grads.size() != params.size())
      throw_error(ErrorKind::Value, where, "the closure returned ", e.grads.size(),
                  " gradients; expected one per parameter (", params.size(), ")");
    for (size_t i = 0; i < params.size(); ++i) {
      if (!e.grads[i].defined() || e.grads[i].shape() != params[i].shape())
        throw_error(ErrorKind::Shape, where, "gradient ", i, " has shape ",
                    e.grads[i].defined() ? shape_str(e.grads[i].shape()) : "(undefined)",
                    "; the parameter has ", shape_str(params[i].shape()));
      if (e.grads[i].dtype() != params[i].dtype()) e.grads[i] = cast(e.grads[i], params[i].dtype());
    }
    return {e.loss.item(), flatten(e.grads)};
  }
};

LBFGS::LBFGS(LbfgsOptions options, std::vector<Tensor> params) : impl_(std::make_shared<Impl>()) {
  const char* where = "[LBFGS] ";
  if (!std::isfinite(options.lr) || options.lr <= 0)
    throw_error(ErrorKind::Value, where, "lr is ", options.lr, "; expected a finite value > 0");
  if (options.max_iter < 1)
    throw_error(ErrorKind::Value, where, "max_iter is ", options.max_iter, "; expected >= 1");
  if (options.max_eval == 0) options.max_eval = options.max_iter * 5 / 4;
  if (options.max_eval < 1)
    throw_error(ErrorKind::Value, where, "max_eval is ", options.max_eval, "; expected >= 1");
  if (options.history_size < 1)
    throw_error(ErrorKind::Value, where, "history_size is ", options.history_size,
                "; expected >= 1");
  if (!options.line_search_fn.empty())
    throw_error(ErrorKind::Unsupported, where, "line_search_fn '", options.line_search_fn,
                "': only the fixed step (\"\") is implemented");
  if (params.empty()) throw_error(ErrorKind::Value, where, "no parameters to optimize");
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].defined())
      throw_error(ErrorKind::Value, where, "parameter ", i, " is undefined");
    if (!is_float(params[i].dtype()) || params[i].dtype() != params[0].dtype())
      throw_error(ErrorKind::DType, where, "parameter ", i, " has dtype ",
                  dtype_name(params[i].dtype()), "; all parameters must share one float dtype");
    if (params[i].device() != params[0].device())
      throw_error(ErrorKind::Device, where, "parameter ", i, " is on '", params[i].device(),
                  "', parameter 0 on '", params[0].device(), "'");
  }
  impl_->o = options;
  impl_->params = std::move(params);
}

double LBFGS::step(const Closure& closure) {
  Impl& m = *impl_;
  const LbfgsOptions& o = m.o;
  auto [loss, flat_grad] = m.evaluate(closure);
  double orig_loss = loss;
  int64_t current_evals = 1;
  m.func_evals += 1;
  bool opt_cond = Impl::abs_max(flat_grad) <= o.tolerance_grad;
  if (opt_cond) return orig_loss;

  int n_iter = 0;
  while (n_iter < o.max_iter) {
    ++n_iter;
    ++m.n_iter;
    // The descent direction.
    if (m.n_iter == 1) {
      m.d = -flat_grad;
      m.old_dirs.clear();
      m.old_stps.clear();
      m.ro.clear();
      m.have_h_diag = false;
    } else {
      Tensor y = flat_grad - m.prev_flat_grad;
      Tensor s = m.d * Tensor::scalar(m.t, m.d.dtype(), m.d.device());
      Tensor ys = Impl::dot(y, s);
      eval({y, s, ys});
      if (ys.item() > 1e-10) {
        if (static_cast<int>(m.old_dirs.size()) == o.history_size) {
          m.old_dirs.erase(m.old_dirs.begin());
          m.old_stps.erase(m.old_stps.begin());
          m.ro.erase(m.ro.begin());
        }
        m.old_dirs.push_back(y);
        m.old_stps.push_back(s);
        Tensor r = Tensor::scalar(1, ys.dtype(), ys.device()) / ys;
        m.h_diag = ys / Impl::dot(y, y);
        eval({r, m.h_diag});
        m.ro.push_back(r);
        m.have_h_diag = true;
      }
      size_t num_old = m.old_dirs.size();
      std::vector<Tensor> al(num_old);
      Tensor q = -flat_grad;
      for (size_t i = num_old; i-- > 0;) {
        al[i] = Impl::dot(m.old_stps[i], q) * m.ro[i];
        q = q - m.old_dirs[i] * al[i];
      }
      Tensor r = m.have_h_diag ? q * m.h_diag : q;
      for (size_t i = 0; i < num_old; ++i) {
        Tensor be_i = Impl::dot(m.old_dirs[i], r) * m.ro[i];
        r = r + m.old_stps[i] * (al[i] - be_i);
      }
      m.d = r;
    }
    m.d.eval();
    m.prev_flat_grad = flat_grad;
    m.prev_loss = loss;

    // The step length.
    if (m.n_iter == 1) {
      double abs_sum = sum(abs(flat_grad)).item();
      m.t = std::min(1.0, 1.0 / abs_sum) * o.lr;
    } else {
      m.t = o.lr;
    }
    double gtd = Impl::dot(flat_grad, m.d).item();
    if (gtd > -o.tolerance_change) break;

    int64_t ls_func_evals = 0;
    m.add_grad(m.t, m.d);
    if (n_iter != o.max_iter) {
      std::tie(loss, flat_grad) = m.evaluate(closure);
      opt_cond = Impl::abs_max(flat_grad) <= o.tolerance_grad;
      ls_func_evals = 1;
    }
    current_evals += ls_func_evals;
    m.func_evals += ls_func_evals;

    if (n_iter == o.max_iter) break;
    if (current_evals >= o.max_eval) break;
    if (opt_cond) break;
    if (Impl::abs_max(m.d * Tensor::scalar(m.t, m.d.dtype(), m.d.device())) <= o.tolerance_change)
      break;
    if (std::abs(loss - m.prev_loss) < o.tolerance_change) break;
  }
  return orig_loss;
}

const std::vector<Tensor>& LBFGS::params() const { return impl_->params; }
int64_t LBFGS::iterations() const { return impl_->n_iter; }
int64_t LBFGS::evaluations() const { return impl_->func_evals; }

}  // namespace tessel
