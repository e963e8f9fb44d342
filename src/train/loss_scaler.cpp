// Dynamic loss scaling (torch.cuda.amp.GradScaler's update rule) for f16 / bf16 compute.
#include <cmath>

#include "tessel/ops.h"
#include "tessel/optim.h"

namespace tessel {

LossScaler::LossScaler(double init_scale, double growth_factor, double backoff_factor,
                       int64_t growth_interval)
    : scale_(init_scale),
      growth_(growth_factor),
      backoff_(backoff_factor),
      interval_(growth_interval) {
  const char* where = "[LossScaler] ";
  if (!std::isfinite(init_scale) || init_scale <= 0)
    throw_error(ErrorKind::Value, where, "init_scale is ", init_scale, "; expected > 0");
  if (!std::isfinite(growth_factor) || growth_factor <= 1)
    throw_error(ErrorKind::Value, where, "growth_factor is ", growth_factor, "; expected > 1");
  if (!(backoff_factor > 0 && backoff_factor < 1))
    throw_error(ErrorKind::Value, where, "backoff_factor is ", backoff_factor,
                "; expected 0 < backoff_factor < 1");
  if (growth_interval < 1)
    throw_error(ErrorKind::Value, where, "growth_interval is ", growth_interval, "; expected >= 1");
}

std::vector<Tensor> LossScaler::unscale(const std::vector<Tensor>& scaled_grads, DType master) {
  const char* where = "[LossScaler.unscale] ";
  if (!is_float(master))
    throw_error(ErrorKind::DType, where, "master dtype ", dtype_name(master), " is not a float");
  std::vector<Tensor> out;
  Tensor bad;  // Σ over the gradients of the count of non-finite elements
  for (size_t i = 0; i < scaled_grads.size(); ++i) {
    const Tensor& g = scaled_grads[i];
    if (!g.defined() || !is_float(g.dtype()))
      throw_error(ErrorKind::DType, where, "gradient ", i, " is not a float tensor");
    Tensor u = cast(g, master) * (1.0 / scale_);
    // x - x is 0 for finite x and NaN for inf / NaN.
    Tensor nonfinite =
        sum(cast(not_equal(u - u, Tensor::scalar(0, master, g.device())), DType::F32));
    bad = bad.defined() ? bad + nonfinite : nonfinite;
    out.push_back(u);
  }
  if (!out.empty()) {
    std::vector<Tensor> all = out;
    all.push_back(bad);
    eval(all);
  }
  if (bad.defined() && bad.item() > 0) {
    scale_ *= backoff_;
    clean_ = 0;
    ++skipped_;
    return {};
  }
  if (++clean_ == interval_) {
    scale_ *= growth_;
    clean_ = 0;
  }
  return out;
}

}  // namespace tessel
