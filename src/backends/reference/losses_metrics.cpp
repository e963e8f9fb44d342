// Reference kernels of the LossesMetrics category: Loss, with PyTorch's pointwise definitions,
// computed in f64 and reduced in f64 before the one rounding to the output dtype.
#include <algorithm>
#include <cmath>

#include "backends/reference/kernels.h"

namespace tessel::reference {
namespace {

struct LossParams {
  LossKind kind;
  double delta;
  bool log_target;
};

double pointwise_loss(const Node& node, const LossParams& p, double x, double t) {
  switch (p.kind) {
    case LossKind::Mse:
      return (x - t) * (x - t);
    case LossKind::Mae:
      return std::abs(x - t);
    case LossKind::Huber: {
      double d = std::abs(x - t);
      return d < p.delta ? 0.5 * d * d : p.delta * (d - 0.5 * p.delta);
    }
    case LossKind::BinaryCrossEntropy: {
      // torch rejects probabilities outside [0, 1] (NaN included) and clamps each log at -100.
      if (!(x >= 0 && x <= 1))
        throw_error(ErrorKind::Value, node.where(), ": BinaryCrossEntropy input ", x,
                    " is not a probability in [0, 1]");
      double log_p = std::max(std::log(x), -100.0);
      double log_q = std::max(std::log1p(-x), -100.0);
      return -(t * log_p + (1 - t) * log_q);
    }
    case LossKind::BinaryCrossEntropyWithLogits:
      // max(x, 0) - x·t + log(1 + e^-|x|): no overflow for large |x|.
      return std::max(x, 0.0) - x * t + std::log1p(std::exp(-std::abs(x)));
    case LossKind::KlDiv:
      if (p.log_target) return std::exp(t) * (t - x);
      // target·(log target − input), defined as 0 where target == 0 (even for input = -inf).
      return t == 0 ? 0.0 : t * (std::log(t) - x);
  }
  return NAN;
}

void loss_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const Attrs& a = node.attrs;
  LossParams p{a.e<LossKind>("kind"), a.f("delta"), a.b("log_target")};
  const HostTensor& x = in[0];
  const HostTensor& t = in[1];
  int64_t n = x.numel();
  auto reduction = a.e<Reduction>("reduction");
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double l = pointwise_loss(node, p, x.get_f64(i), t.get_f64(i));
    switch (reduction) {
      case Reduction::None:
        out[0].set_f64(i, l);
        break;
      case Reduction::Mean:
      case Reduction::Sum:
        sum += l;
        break;
    }
  }
  switch (reduction) {
    case Reduction::None:
      break;
    case Reduction::Mean:
      out[0].set_f64(0, sum / static_cast<double>(n));
      break;
    case Reduction::Sum:
      out[0].set_f64(0, sum);
      break;
  }
}

}  // namespace

void register_LossesMetrics(Registry& r) {
  r.native(OpKind::Loss, loss_kernel, kFloats);
  // By Loss's VJP function (src/ops/losses_vjp.cpp). Not fp8: its gradients (BCE's 1 / x(1-x))
  // leave the fp8 range where the forward does not.
  r.decomposed(OpKind::LossBackward, dtypes::kFloat);
  // Metric is its decomposition (argmax / one-hot counts / cross-entropy). Claimed for float
  // logits, which the parity harness covers; class-id predictions decompose the same way and
  // are tested in tests/ops/test_metrics.cpp.
  r.decomposed(OpKind::Metric, dtypes::kFloat);
}

}  // namespace tessel::reference
