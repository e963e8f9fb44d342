// Reference kernels of the Backward category: the two softmax cross-entropy losses (PyTorch
// cross_entropy with probability targets / with class ids). log_softmax is computed stably in
// f64 per position; the reduction is summed in f64 and rounded once.
#include <cmath>
#include <limits>

#include "backends/reference/kernels.h"

namespace tessel::reference {
namespace {

// The multi-index of `logits` for class c at loss position `pos` (pos lacks the class axis).
void class_index(const std::vector<int64_t>& pos, int axis, int64_t c, std::vector<int64_t>& full) {
  full.assign(pos.begin(), pos.begin() + axis);
  full.push_back(c);
  full.insert(full.end(), pos.begin() + axis, pos.end());
}

// log Σ_c exp(logits[c]) along the class axis at one position.
double log_sum_exp(const HostTensor& logits, const std::vector<int64_t>& pos, int axis,
                   std::vector<int64_t>& full) {
  int64_t classes = logits.shape[axis];
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < classes; ++c) {
    class_index(pos, axis, c, full);
    double v = at_f64(logits, full);
    if (std::isnan(v)) return v;
    m = std::max(m, v);
  }
  if (std::isinf(m)) return m;  // all -inf (or some +inf): avoid inf - inf
  double s = 0;
  for (int64_t c = 0; c < classes; ++c) {
    class_index(pos, axis, c, full);
    s += std::exp(at_f64(logits, full) - m);
  }
  return m + std::log(s);
}

// Writes per-position losses (reduction None) or their sum / sum÷count.
class LossWriter {
 public:
  LossWriter(const Node& node, HostTensor& out)
      : reduction_(node.attrs.e<Reduction>("reduction")), out_(out) {}
  void add(int64_t linear, double loss, bool counted) {
    switch (reduction_) {
      case Reduction::None:
        out_.set_f64(linear, loss);
        break;
      case Reduction::Mean:
      case Reduction::Sum:
        sum_ += loss;
        break;
    }
    count_ += counted ? 1 : 0;
  }
  void finish() {
    switch (reduction_) {
      case Reduction::None:
        break;
      case Reduction::Mean:
        out_.set_f64(0, sum_ / static_cast<double>(count_));
        break;
      case Reduction::Sum:
        out_.set_f64(0, sum_);
        break;
    }
  }

 private:
  Reduction reduction_;
  HostTensor& out_;
  double sum_ = 0;
  int64_t count_ = 0;
};

Shape without_axis(const Shape& s, int axis) {
  Shape r = s;
  r.erase(r.begin() + axis);
  return r;
}

// loss = −Σ_c target_c · log_softmax(logits)_c along `axis`; Mean averages over positions.
void softmax_cross_entropy_kernel(const Node& node, std::span<const HostTensor> in,
                                  std::span<HostTensor> out) {
  const HostTensor& logits = in[0];
  const HostTensor& target = in[1];
  int64_t a = node.attrs.i("axis");
  int axis = static_cast<int>(a < 0 ? a + logits.rank() : a);
  int64_t classes = logits.shape[axis];
  LossWriter w(node, out[0]);
  std::vector<int64_t> full;
  int64_t linear = 0;
  for_each_index(without_axis(logits.shape, axis), [&](const std::vector<int64_t>& pos) {
    double lse = log_sum_exp(logits, pos, axis, full);
    double loss = 0;
    for (int64_t c = 0; c < classes; ++c) {
      class_index(pos, axis, c, full);
      loss -= at_f64(target, full) * (at_f64(logits, full) - lse);
    }
    w.add(linear++, loss, true);
  });
  w.finish();
}

// loss = (1−ε)·(−log p_label) + ε·mean_c(−log p_c); ignored positions give 0 and are not
// counted by Mean (all ignored: 0/0 = NaN, as torch).
void softmax_cross_entropy_with_logits_kernel(const Node& node, std::span<const HostTensor> in,
                                              std::span<HostTensor> out) {
  const HostTensor& logits = in[0];
  const HostTensor& labels = in[1];
  int axis = logits.rank() == 1 ? 0 : 1;
  int64_t classes = logits.shape[axis];
  int64_t ignore_index = node.attrs.i("ignore_index");
  double eps = node.attrs.f("label_smoothing");
  LossWriter w(node, out[0]);
  std::vector<int64_t> full;
  int64_t linear = 0;
  for_each_index(labels.shape, [&](const std::vector<int64_t>& pos) {
    int64_t label = at_i64(labels, pos);
    if (label == ignore_index) {
      w.add(linear++, 0.0, false);
      return;
    }
    if (label < 0 || label >= classes)
      throw_error(ErrorKind::Value, node.where(), ": label ", label, " at ", shape_str(pos),
                  " is out of range [0, ", classes, ") and is not ignore_index ", ignore_index);
    double lse = log_sum_exp(logits, pos, axis, full);
    class_index(pos, axis, label, full);
    double nll = lse - at_f64(logits, full);
    double smooth = 0;
    if (eps != 0) {
      for (int64_t c = 0; c < classes; ++c) {
        class_index(pos, axis, c, full);
        smooth += lse - at_f64(logits, full);
      }
      smooth /= static_cast<double>(classes);
    }
    w.add(linear++, (1 - eps) * nll + eps * smooth, true);
  });
  w.finish();
}

}  // namespace

void register_Backward(Registry& r) {
  r.native(OpKind::SoftmaxCrossEntropy, softmax_cross_entropy_kernel, kFloats);
  r.native(OpKind::SoftmaxCrossEntropyWithLogits, softmax_cross_entropy_with_logits_kernel,
           kFloats);
  // The gradient kinds run by their decompositions (src/ops/*_vjp.cpp): the functions the VJP
  // rules use are their definition, and a native kernel elsewhere is proven against them.
  std::vector<int> differentiable;  // ActivationBackward: the activations with a derivative
  const EnumInfo& act = enum_info(VariantEnum::ActivationKind);
  for (int v = 0; v < static_cast<int>(act.values.size()); ++v)
    if (act.values[v].differentiable) differentiable.push_back(v);
  r.decomposed(OpKind::ActivationBackward, kFloats, differentiable);
  for (OpKind k :
       {OpKind::ReluBackward, OpKind::SoftmaxCrossEntropyBackward, OpKind::AttentionBackward,
        OpKind::LayerNormBackwardInput, OpKind::LayerNormBackwardGamma,
        OpKind::RmsNormBackwardInput, OpKind::RmsNormBackwardGamma, OpKind::RmsNormBackwardBeta,
        OpKind::RopeBackward, OpKind::GroupNormBackwardInput, OpKind::GroupNormBackwardGamma,
        OpKind::GroupNormBackwardBeta, OpKind::BatchNormInferenceBackwardInput,
        OpKind::BatchNormInferenceBackwardGamma, OpKind::BatchNormInferenceBackwardBeta,
        OpKind::CumsumBackward, OpKind::GatherBackward, OpKind::AdaLayerNormBackward,
        OpKind::GatedResidualBackward})
    r.decomposed(k, kFloats);
}

}  // namespace tessel::reference
