// Every per-tensor optimizer update rule, written once over the shared op constructors
// (ir/builder.h): with a GraphBuilder it emits graph nodes (OptimizerStep's decomposition), with
// the lazy builder it records Tensors (the traced update of tessel::Optimizer). The builder `B`
// also supplies scalar(value, dtype) and type(v).
//
// Semantics are PyTorch 1.13's single-tensor paths (torch/optim/*.py), in their order of
// operations; LAMB follows the paper with bias correction (as timm's Lamb), LARS the paper's
// trust ratio η‖w‖ / (‖g‖ + λ‖w‖ + eps) applied before momentum (as timm's Lars), Lion the
// paper's Algorithm 2 (decoupled weight decay).
//
// `lr` and `step` (1 for the first update) are scalar values of a float "hyper" dtype: the
// scalar arithmetic (bias corrections, decayed rates) runs in that dtype, then the coefficients
// are cast to the compute dtype (the widest of the parameter's and the states' dtypes). Returns
// the new parameter (in the parameter's dtype) followed by the new states (each in its dtype).
#pragma once

#include <span>
#include <vector>

#include "ir/builder.h"
#include "train/update_rule.h"

namespace tessel {

template <class B, class V>
class UpdateEmitter {
 public:
  UpdateEmitter(B& b, const UpdateRule& r, V lr, V step, DType compute)
      : b_(b), r_(r), lr_(lr), step_(step), c_(compute), h_(b.type(lr).dtype) {}

  std::vector<V> run(V param, V grad, std::span<const V> states) {
    std::vector<V> s;
    for (const V& v : states) s.push_back(to(v, c_));
    V p = to(param, c_), g = to(grad, c_);
    if (r_.maximize) g = b_.neg(g);
    std::vector<V> out = update(p, g, s);
    out[0] = to(out[0], b_.type(param).dtype);
    for (size_t i = 0; i < states.size(); ++i)
      out[i + 1] = to(out[i + 1], b_.type(states[i]).dtype);
    return out;
  }

 private:
  V to(V v, DType dt) { return b_.type(v).dtype == dt ? v : b_.cast(v, dt); }
  V k(double v) { return b_.scalar(v, c_); }   // a constant in the compute dtype
  V hk(double v) { return b_.scalar(v, h_); }  // a constant in the hyper dtype
  V coef(V hyper) { return to(hyper, c_); }    // a hyper scalar as a compute-dtype coefficient
  V ema(V s, V x, double beta) { return b_.add(b_.mul(s, k(beta)), b_.mul(x, k(1 - beta))); }
  V with_l2(V g, V p) {
    return r_.weight_decay != 0 ? b_.add(g, b_.mul(p, k(r_.weight_decay))) : g;
  }
  // 1 - beta^step, in the hyper dtype.
  V bias_correction(double beta) { return b_.sub(hk(1), b_.pow(hk(beta), step_)); }
  V norm(V x) {
    int rank = static_cast<int>(b_.type(x).shape.size());
    if (rank == 0) return b_.activation(ActivationKind::Abs, x);
    std::vector<int64_t> axes;
    for (int i = 0; i < rank; ++i) axes.push_back(i);
    return b_.reduce(ReduceOp::L2, x, axes);
  }
  // num / den where both norms are positive, else 1 (LAMB's and LARS's trust ratio guard).
  V guarded_ratio(V ratio, V w_norm, V other_norm) {
    V one = k(1), zero = k(0);
    V inner = b_.where(b_.compare(CmpOp::Gt, other_norm, zero), ratio, one);
    return b_.where(b_.compare(CmpOp::Gt, w_norm, zero), inner, one);
  }
  // SGD's momentum (PyTorch: the buffer starts as a copy of d at step 1, without dampening).
  // Returns the direction and sets `buf` to the new buffer.
  V momentum(V d, V& buf) {
    V c = k(1 - r_.dampening);
    if (r_.dampening != 0) {  // 1 at step 1, 1 - dampening afterwards
      V later = b_.minimum(b_.sub(step_, hk(1)), hk(1));
      c = coef(b_.sub(hk(1), b_.mul(later, hk(r_.dampening))));
    }
    buf = b_.add(b_.mul(buf, k(r_.momentum)), b_.mul(d, c));
    return r_.nesterov ? b_.add(d, b_.mul(buf, k(r_.momentum))) : buf;
  }

  std::vector<V> update(V p, V g, std::vector<V>& s) {
    V lr = coef(lr_);
    switch (r_.kind) {
      case OptimizerKind::Sgd: {
        V d = with_l2(g, p);
        if (r_.momentum > 0) d = momentum(d, s[0]);
        return with_states(b_.sub(p, b_.mul(d, lr)), s);
      }
      case OptimizerKind::Adam:
      case OptimizerKind::AdamW: {
        if (r_.kind == OptimizerKind::AdamW)  // decoupled decay first: p·(1 - lr·λ)
          p = b_.mul(p, coef(b_.sub(hk(1), b_.mul(lr_, hk(r_.weight_decay)))));
        else
          g = with_l2(g, p);
        s[0] = ema(s[0], g, r_.beta1);
        s[1] = ema(s[1], b_.mul(g, g), r_.beta2);
        V step_size = coef(b_.div(lr_, bias_correction(r_.beta1)));
        V bc2_sqrt = coef(b_.sqrt(bias_correction(r_.beta2)));
        V second = s[1];
        if (r_.amsgrad) second = s[2] = b_.maximum(s[2], s[1]);
        V denom = b_.add(b_.div(b_.sqrt(second), bc2_sqrt), k(r_.eps));
        return with_states(b_.sub(p, b_.mul(b_.div(s[0], denom), step_size)), s);
      }
      case OptimizerKind::Adamax: {
        g = with_l2(g, p);
        s[0] = ema(s[0], g, r_.beta1);
        s[1] = b_.maximum(b_.mul(s[1], k(r_.beta2)),
                          b_.add(b_.activation(ActivationKind::Abs, g), k(r_.eps)));
        V clr = coef(b_.div(lr_, bias_correction(r_.beta1)));
        return with_states(b_.sub(p, b_.mul(b_.div(s[0], s[1]), clr)), s);
      }
      case OptimizerKind::Adagrad: {
        g = with_l2(g, p);
        V clr = lr;
        if (r_.lr_decay != 0)
          clr = coef(b_.div(lr_, b_.add(hk(1), b_.mul(b_.sub(step_, hk(1)), hk(r_.lr_decay)))));
        s[0] = b_.add(s[0], b_.mul(g, g));
        V std = b_.add(b_.sqrt(s[0]), k(r_.eps));
        return with_states(b_.sub(p, b_.mul(b_.div(g, std), clr)), s);
      }
      case OptimizerKind::Adadelta: {  // rho = beta2
        g = with_l2(g, p);
        s[0] = ema(s[0], b_.mul(g, g), r_.beta2);
        V std = b_.sqrt(b_.add(s[0], k(r_.eps)));
        V delta = b_.mul(b_.div(b_.sqrt(b_.add(s[1], k(r_.eps))), std), g);
        s[1] = ema(s[1], b_.mul(delta, delta), r_.beta2);
        return with_states(b_.sub(p, b_.mul(delta, lr)), s);
      }
      case OptimizerKind::RmsProp: {  // alpha = beta2; states: square_avg, [buf], [grad_avg]
        g = with_l2(g, p);
        s[0] = ema(s[0], b_.mul(g, g), r_.beta2);
        V avg;
        if (r_.centered) {
          V& grad_avg = s.back();
          grad_avg = ema(grad_avg, g, r_.beta2);
          avg = b_.sqrt(b_.sub(s[0], b_.mul(grad_avg, grad_avg)));
        } else {
          avg = b_.sqrt(s[0]);
        }
        avg = b_.add(avg, k(r_.eps));
        if (r_.momentum > 0) {
          s[1] = b_.add(b_.mul(s[1], k(r_.momentum)), b_.div(g, avg));
          return with_states(b_.sub(p, b_.mul(s[1], lr)), s);
        }
        return with_states(b_.sub(p, b_.mul(b_.div(g, avg), lr)), s);
      }
      case OptimizerKind::Lion: {
        if (r_.weight_decay != 0)
          p = b_.mul(p, coef(b_.sub(hk(1), b_.mul(lr_, hk(r_.weight_decay)))));
        V c = ema(s[0], g, r_.beta1);
        V next = b_.sub(p, b_.mul(b_.activation(ActivationKind::Sign, c), lr));
        s[0] = ema(s[0], g, r_.beta2);
        return with_states(next, s);
      }
      case OptimizerKind::Lamb: {
        s[0] = ema(s[0], g, r_.beta1);
        s[1] = ema(s[1], b_.mul(g, g), r_.beta2);
        V bc1 = coef(bias_correction(r_.beta1)), bc2 = coef(bias_correction(r_.beta2));
        V denom = b_.add(b_.sqrt(b_.div(s[1], bc2)), k(r_.eps));
        V u = with_l2(b_.div(b_.div(s[0], bc1), denom), p);
        V w_norm = norm(p), u_norm = norm(u);
        V trust = guarded_ratio(b_.div(w_norm, u_norm), w_norm, u_norm);
        return with_states(b_.sub(p, b_.mul(u, b_.mul(trust, lr))), s);
      }
      case OptimizerKind::Lars: {
        V w_norm = norm(p), g_norm = norm(g);
        V den = b_.add(b_.add(g_norm, b_.mul(w_norm, k(r_.weight_decay))), k(r_.eps));
        V trust =
            guarded_ratio(b_.div(b_.mul(w_norm, k(r_.trust_coefficient)), den), w_norm, g_norm);
        V d = b_.mul(with_l2(g, p), trust);
        if (r_.momentum > 0) d = momentum(d, s[0]);
        return with_states(b_.sub(p, b_.mul(d, lr)), s);
      }
      case OptimizerKind::Lbfgs:
      case OptimizerKind::Hebbian:
        break;
    }
    throw_error(ErrorKind::Value, "[optimizer] ",
                enum_info(VariantEnum::OptimizerKind).values[static_cast<int>(r_.kind)].name,
                " is not a per-tensor gradient update (see tessel/optim.h)");
  }

  static std::vector<V> with_states(V p, const std::vector<V>& s) {
    std::vector<V> out{p};
    out.insert(out.end(), s.begin(), s.end());
    return out;
  }

  B& b_;
  const UpdateRule& r_;
  V lr_, step_;
  DType c_, h_;
};

// The compute dtype of an update: the widest of the parameter's and the states' dtypes.
template <class B, class V>
DType update_compute_dtype(B& b, V param, std::span<const V> states) {
  DType c = b.type(param).dtype;
  for (const V& s : states) c = promote_types(c, b.type(s).dtype);
  return c;
}

// One update of `param` by `grad`; `states` as state_names(rule) lists them.
template <class B, class V>
std::vector<V> optimizer_update(B& b, const UpdateRule& rule, V lr, V step, V param, V grad,
                                std::span<const V> states) {
  UpdateEmitter<B, V> e(b, rule, lr, step, update_compute_dtype(b, param, states));
  return e.run(param, grad, states);
}

}  // namespace tessel
