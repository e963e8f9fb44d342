// Gradient clipping as lazy graph ops (torch.nn.utils.clip_grad_norm_ / clip_grad_value_).
#include <cmath>

#include "tessel/ops.h"
#include "tessel/optim.h"

namespace tessel {
namespace {

void check_grads(const std::vector<Tensor>& grads, const char* where) {
  if (grads.empty()) throw_error(ErrorKind::Value, where, "no gradients");
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) throw_error(ErrorKind::Value, where, "gradient ", i, " is undefined");
    if (!is_float(grads[i].dtype()))
      throw_error(ErrorKind::DType, where, "gradient ", i, " has dtype ",
                  dtype_name(grads[i].dtype()), "; expected a float dtype");
    if (grads[i].device() != grads[0].device())
      throw_error(ErrorKind::Device, where, "gradient ", i, " is on '", grads[i].device(),
                  "', gradient 0 on '", grads[0].device(), "'");
  }
}

std::vector<int64_t> all_axes(const Tensor& t) {
  std::vector<int64_t> axes;
  for (int i = 0; i < t.rank(); ++i) axes.push_back(i);
  return axes;
}

}  // namespace

ClippedGrads clip_grad_norm(const std::vector<Tensor>& grads, double max_norm, double norm_type) {
  const char* where = "[clip_grad_norm] ";
  check_grads(grads, where);
  if (!std::isfinite(max_norm) || max_norm < 0)
    throw_error(ErrorKind::Value, where, "max_norm is ", max_norm,
                "; expected a finite value >= 0");
  if (!(norm_type > 0))
    throw_error(ErrorKind::Value, where, "norm_type is ", norm_type, "; expected > 0 or INFINITY");
  DType dt = grads[0].dtype();
  for (const Tensor& g : grads) dt = promote_types(dt, g.dtype());
  const std::string& device = grads[0].device();
  bool inf = std::isinf(norm_type);
  // Per gradient: Σ|g|^p (or max |g|), then combined over the gradients.
  Tensor total;
  for (const Tensor& g0 : grads) {
    Tensor g = g0.dtype() == dt ? g0 : cast(g0, dt);
    Tensor a = abs(g);
    Tensor part = inf ? (g.numel() == 0 ? Tensor::scalar(0, dt, device) : max(a, all_axes(a)))
                  : norm_type == 2.0
                      ? sum(a * a, all_axes(a))
                      : sum(pow(a, Tensor::scalar(norm_type, dt, device)), all_axes(a));
    total = !total.defined() ? part : inf ? maximum(total, part) : total + part;
  }
  if (!inf)
    total =
        norm_type == 2.0 ? sqrt(total) : pow(total, Tensor::scalar(1.0 / norm_type, dt, device));
  // min(1, max_norm / (total + 1e-6))
  Tensor coef =
      minimum(Tensor::scalar(max_norm, dt, device) / (total + 1e-6), Tensor::scalar(1, dt, device));
  ClippedGrads out;
  for (const Tensor& g : grads)
    out.grads.push_back(g * (g.dtype() == dt ? coef : cast(coef, g.dtype())));
  out.total_norm = total;
  return out;
}

std::vector<Tensor> clip_grad_value(const std::vector<Tensor>& grads, double clip_value) {
  const char* where = "[clip_grad_value] ";
  check_grads(grads, where);
  if (!std::isfinite(clip_value) || clip_value < 0)
    throw_error(ErrorKind::Value, where, "clip_value is ", clip_value,
                "; expected a finite value >= 0");
  std::vector<Tensor> out;
  for (const Tensor& g : grads) out.push_back(clamp(g, -clip_value, clip_value));
  return out;
}

}  // namespace tessel
