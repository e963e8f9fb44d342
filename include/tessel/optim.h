// Training: optimizers (seed 000's train.optimizer.*), learning-rate schedules, gradient
// clipping, the Hebbian update and mixed-precision loss scaling.
//
// Optimizer runs one compiled update graph for all its parameters: traced once per signature
// (parameter shapes, dtypes, device) and reused every step, because the learning rate and the
// step count are scalar inputs of that graph, not constants — set_lr() between steps (a
// schedule) never retraces. The graph is built from the same update template as the
// OptimizerStep op kind's decomposition (src/train/optimizer_update.h), so it runs on every
// backend that runs the primitive kinds. Semantics are PyTorch 1.13's (torch.optim), state
// names included. Bad input throws tessel::Error naming what was wrong.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessel/tensor.h"

namespace tessel {

// Hyperparameters of a per-tensor update rule. `kind` is an OptimizerKind name ("Sgd", "Adam",
// "AdamW", "Adamax", "Adagrad", "Adadelta", "RmsProp", "Lion", "Lamb", "Lars"; case does not
// matter) or a seed-000 ID ("train.optimizer.adam"). The factories set each rule's PyTorch
// defaults; fields a rule does not use are ignored.
struct OptimizerOptions {
  std::string kind = "Sgd";
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999;  // RMSprop's alpha and Adadelta's rho are beta2
  double eps = 1e-8;
  double weight_decay = 0;  // L2 added to the gradient; decoupled for AdamW and Lion
  double momentum = 0, dampening = 0;
  bool nesterov = false;
  bool centered = false;  // RMSprop
  bool amsgrad = false;   // Adam, AdamW
  bool maximize = false;
  double lr_decay = 0, initial_accumulator_value = 0;  // Adagrad
  double trust_coefficient = 1e-3;                     // LARS's η

  static OptimizerOptions sgd(double lr, double momentum = 0, double dampening = 0,
                              double weight_decay = 0, bool nesterov = false);
  static OptimizerOptions adam(double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
                               double eps = 1e-8, double weight_decay = 0, bool amsgrad = false);
  static OptimizerOptions adamw(double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
                                double eps = 1e-8, double weight_decay = 1e-2,
                                bool amsgrad = false);
  static OptimizerOptions adamax(double lr = 2e-3, double beta1 = 0.9, double beta2 = 0.999,
                                 double eps = 1e-8, double weight_decay = 0);
  static OptimizerOptions adagrad(double lr = 1e-2, double lr_decay = 0, double weight_decay = 0,
                                  double initial_accumulator_value = 0, double eps = 1e-10);
  static OptimizerOptions adadelta(double lr = 1.0, double rho = 0.9, double eps = 1e-6,
                                   double weight_decay = 0);
  static OptimizerOptions rmsprop(double lr = 1e-2, double alpha = 0.99, double eps = 1e-8,
                                  double weight_decay = 0, double momentum = 0,
                                  bool centered = false);
  // Lion (Chen et al. 2023): p ← p·(1 − lr·λ) − lr·sign(β1·m + (1−β1)·g); m ← β2·m + (1−β2)·g.
  static OptimizerOptions lion(double lr = 1e-4, double beta1 = 0.9, double beta2 = 0.99,
                               double weight_decay = 0);
  // LAMB (You et al. 2020, bias-corrected): u = m̂ / (sqrt(v̂) + eps) + λ·p;
  // p ← p − lr·r·u with r = ‖p‖ / ‖u‖ (1 where either norm is 0).
  static OptimizerOptions lamb(double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
                               double eps = 1e-6, double weight_decay = 0);
  // LARS (You et al. 2017): r = η‖p‖ / (‖g‖ + λ‖p‖ + eps) (1 where either norm is 0);
  // d = r·(g + λ·p), then SGD momentum on d; p ← p − lr·d.
  static OptimizerOptions lars(double lr, double momentum = 0.9, double weight_decay = 0,
                               double trust_coefficient = 1e-3, double eps = 1e-8,
                               bool nesterov = false);
};

// A first-order optimizer over a fixed list of parameters. Parameters and state are evaluated
// tensors owned by the optimizer; step() replaces them with new ones (the caller's tensors are
// not modified). State tensors are created at construction (zeros; Adagrad's sum starts at
// initial_accumulator_value) with each parameter's shape and dtype.
class Optimizer {
 public:
  // All parameters on one device with a float dtype. `names` (one per parameter, optional)
  // prefix the keys of state_dict(); by default "0", "1", ...
  Optimizer(OptimizerOptions options, std::vector<Tensor> params,
            std::vector<std::string> names = {});

  // One update: grads[i] is d(loss)/d(params()[i]), with its shape, dtype and device.
  void step(const std::vector<Tensor>& grads);

  const std::vector<Tensor>& params() const;
  // Replaces the parameters (e.g. loaded from a checkpoint); shapes and dtypes must match.
  void set_params(std::vector<Tensor> params);
  const std::vector<std::string>& names() const;

  double lr() const;
  void set_lr(double lr);      // a finite lr >= 0; takes effect at the next step()
  int64_t step_count() const;  // updates done so far (PyTorch's state["step"])
  const OptimizerOptions& options() const;

  // The per-parameter state, in PyTorch's names and order ("exp_avg", "exp_avg_sq", ...).
  const std::vector<std::string>& state_names() const;
  const std::vector<Tensor>& state(size_t param) const;
  // Checkpointing: "<name>.<state>" for every parameter and state, and "step" (an i64 scalar).
  std::vector<std::pair<std::string, Tensor>> state_dict() const;
  // Restores what state_dict() wrote; every key must be present with the right shape (dtypes
  // are converted to the state's); unknown keys are an error.
  void load_state_dict(const std::vector<std::pair<std::string, Tensor>>& state);

  int trace_count() const;  // how often the update graph was traced (1 after any steps)

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// L-BFGS (PyTorch 1.13's torch.optim.LBFGS): one step() runs up to max_iter iterations over
// the flattened parameters. The closure receives the current parameters and returns the loss
// (one element) and its gradient for each parameter.
struct LbfgsOptions {
  double lr = 1;
  int max_iter = 20;
  int max_eval = 0;  // 0: max_iter · 5 / 4
  double tolerance_grad = 1e-7;
  double tolerance_change = 1e-9;
  int history_size = 100;
  std::string line_search_fn;  // "" only: a fixed step of lr ("strong_wolfe" is not implemented)
};

class LBFGS {
 public:
  struct Evaluation {
    Tensor loss;
    std::vector<Tensor> grads;
  };
  using Closure = std::function<Evaluation(const std::vector<Tensor>& params)>;

  LBFGS(LbfgsOptions options, std::vector<Tensor> params);
  // Returns the loss of the closure's first evaluation in this step (as PyTorch does).
  double step(const Closure& closure);
  const std::vector<Tensor>& params() const;
  int64_t iterations() const;   // total iterations so far (PyTorch's state["n_iter"])
  int64_t evaluations() const;  // total closure calls so far (state["func_evals"])

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// The Hebbian update (train.optimizer.hebbian) of a weight W [in, out] (y = x·W) from the
// presynaptic activity pre [B, in] and the postsynaptic activity post [B, out], batch-averaged:
//   Plain: ΔW = lr·(preᵀ·post)/B − lr·λ·W
//   Oja:   ΔW = lr·(preᵀ·post − W ⊙ Σ_b post_b²)/B − lr·λ·W  (Oja's rule per output unit j:
//          Δw_j = lr·y_j·(x − y_j·w_j), which keeps ‖w_j‖ near 1)
// Returns W + ΔW as a lazy tensor.
enum class HebbianRule { Plain, Oja };
Tensor hebbian_update(const Tensor& w, const Tensor& pre, const Tensor& post, double lr,
                      HebbianRule rule = HebbianRule::Oja, double weight_decay = 0);

// Learning-rate schedules: lr as a function of the epoch (or step) counter t = 0, 1, 2, ...,
// PyTorch's closed forms (torch.optim.lr_scheduler), e.g. opt.set_lr(schedule(epoch)).
using LrSchedule = std::function<double(int64_t t)>;
LrSchedule constant_lr(double lr);
LrSchedule step_lr(double base_lr, int64_t step_size, double gamma = 0.1);  // base·γ^⌊t/size⌋
LrSchedule multi_step_lr(double base_lr, std::vector<int64_t> milestones, double gamma = 0.1);
LrSchedule exponential_lr(double base_lr, double gamma);  // base·γ^t
// eta_min + (base − eta_min)·(1 + cos(π·t / t_max)) / 2
LrSchedule cosine_annealing_lr(double base_lr, int64_t t_max, double eta_min = 0);
// base·(start + (end − start)·min(t, total_iters) / total_iters): a linear warm-up with the
// defaults of PyTorch's LinearLR.
LrSchedule linear_lr(double base_lr, double start_factor = 1.0 / 3, double end_factor = 1.0,
                     int64_t total_iters = 5);
// schedules[i] runs from milestones[i-1] on, with its counter restarted there (SequentialLR):
// e.g. sequential_lr({linear_lr(lr, 0.1, 1, 5), cosine_annealing_lr(lr, 95)}, {5}).
LrSchedule sequential_lr(std::vector<LrSchedule> schedules, std::vector<int64_t> milestones);

// Gradient clipping as graph ops on lazy tensors (usable inside compile()). clip_grad_norm:
// the total p-norm of all gradients together (norm_type 2, any p > 0, or INFINITY), and each
// gradient scaled by min(1, max_norm / (total + 1e-6)) (torch.nn.utils.clip_grad_norm_).
struct ClippedGrads {
  std::vector<Tensor> grads;
  Tensor total_norm;  // a scalar of the gradients' (promoted) dtype
};
ClippedGrads clip_grad_norm(const std::vector<Tensor>& grads, double max_norm,
                            double norm_type = 2.0);
// Each element clamped to [-clip_value, clip_value].
std::vector<Tensor> clip_grad_value(const std::vector<Tensor>& grads, double clip_value);

// Mixed precision: compute in f16 / bf16 from f32 master weights (cast inside the loss function,
// so gradients come back in f32), with dynamic loss scaling as torch.cuda.amp.GradScaler does:
// multiply the loss by scale(), pass the gradients through unscale(); a step whose gradients
// hold inf / NaN is skipped and the scale backs off, and growth_interval clean steps in a row
// grow it.
class LossScaler {
 public:
  explicit LossScaler(double init_scale = 65536.0, double growth_factor = 2.0,
                      double backoff_factor = 0.5, int64_t growth_interval = 2000);
  double scale() const { return scale_; }
  // The gradients divided by scale() and cast to `master` (the parameters' dtype), or an empty
  // vector when any element is inf or NaN (then skip the optimizer step). Updates the scale.
  std::vector<Tensor> unscale(const std::vector<Tensor>& scaled_grads, DType master = DType::F32);
  int64_t skipped_steps() const { return skipped_; }

 private:
  double scale_, growth_, backoff_;
  int64_t interval_, clean_ = 0, skipped_ = 0;
};

}  // namespace tessel
