// Parity cases for normalization, attention and positional encodings, convolution and pooling,
// and the losses. Normalized axes hold more than one distinct value (no zero-variance rows).
#include <algorithm>
#include <functional>

#include "parity/cases.h"

namespace tessel::parity {

namespace {

using Uniform = std::function<HostTensor(const Shape&, double, double)>;

// One dim of a sliding window's output (PyTorch's ceil_mode rule for pools).
int64_t window_out(int64_t in, int64_t pb, int64_t pe, int64_t k, int64_t stride, int64_t dil,
                   bool ceil_mode = false) {
  int64_t span = in + pb + pe - dil * (k - 1) - 1;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pb) --out;
  return out;
}

// The gradients of a grouped, strided, padded (asymmetric in 2-D), dilated convolution.
std::vector<Case> conv_backward_cases(OpKind kind, int64_t b, int64_t m, int64_t nc,
                                      const Uniform& u) {
  const bool three = kind == OpKind::Conv3dBackwardInput || kind == OpKind::Conv3dBackwardWeight;
  const bool wrt_input = kind == OpKind::Conv2dBackwardInput || kind == OpKind::Conv3dBackwardInput;
  Shape x, w, y;
  Attrs a = Attrs().set("groups", int64_t{2});
  if (three) {
    x = {b, 2, 4, std::min<int64_t>(m + 2, 9), 5};
    w = {4, 1, 2, 2, 2};
    a.set("strides", Shape{1, 2, 1}).set("pads", Shape{1, 0, 1});
    y = {b, 4, window_out(x[2], 1, 1, 2, 1, 1), window_out(x[3], 0, 0, 2, 2, 1),
         window_out(x[4], 1, 1, 2, 1, 1)};
  } else {
    x = {b, 4, m + 4, nc + 3};
    w = {6, 2, 3, 2};
    a.set("strides", Shape{2, 1}).set("pads", Shape{1, 0, 0, 1}).set("dilations", Shape{1, 2});
    y = {b, 6, window_out(x[2], 1, 0, 3, 2, 1), window_out(x[3], 0, 1, 2, 1, 2)};
  }
  if (wrt_input)
    return {make_case("groups_strided", a.set("input_shape", x), {u(y, -2, 2), u(w, -2, 2)},
                      {true, true})};
  return {make_case("groups_strided", a.set("weight_shape", w), {u(y, -2, 2), u(x, -2, 2)},
                    {true, true})};
}

// The gradient of a padded (asymmetric in 2-D), dilated, ceil_mode max pool.
std::vector<Case> max_pool_backward_cases(OpKind kind, int64_t b, int64_t m, int64_t nc,
                                          const Uniform& u) {
  Shape x, y;
  Attrs a = Attrs().set("ceil_mode", true);
  if (kind == OpKind::MaxPool3dBackward) {
    x = {b, 2, 5, std::min<int64_t>(m + 3, 9), 4};
    a.set("kernel", Shape{2, 3, 2}).set("pads", Shape{1, 1, 0});
    y = {b, 2, window_out(x[2], 1, 1, 2, 2, 1, true), window_out(x[3], 1, 1, 3, 3, 1, true),
         window_out(x[4], 0, 0, 2, 2, 1, true)};
  } else {
    x = {b, 3, m + 6, nc + 5};
    a.set("kernel", Shape{3, 2})
        .set("strides", Shape{2, 2})
        .set("pads", Shape{1, 0, 0, 1})
        .set("dilations", Shape{2, 1});
    y = {b, 3, window_out(x[2], 1, 0, 3, 2, 2, true), window_out(x[3], 0, 1, 2, 2, 1, true)};
  }
  return {make_case("padded_ceil", a, {u(y, -2, 2), u(x, -2, 2)}, {true, true})};
}

}  // namespace

std::vector<Case> cases_nn(OpKind kind, int v, const Draw& d, CaseRng& rng) {
  const int64_t b = d.b, m = d.m, n = d.n;
  auto var = [&](const char* attr) { return Attrs().set(attr, int64_t{v}); };
  auto u = [&](const Shape& s, double lo = -2, double hi = 2) { return uniform(s, rng, lo, hi); };
  auto all = [](size_t count) { return std::vector<bool>(count, true); };
  const int64_t nc = std::min<int64_t>(n, 64);  // capped spatial width for conv-like kinds
  switch (kind) {
    case OpKind::LayerNorm:
      return {make_case("affine", Attrs(), {u({b, m, n}), u({n}), u({n})}, all(3)),
              make_case("axis1_plain", Attrs().set("axis", int64_t{1}),
                        {u({b, m, n}), absent(), absent()}, {true, false, false})};
    case OpKind::LayerNorm2d:
      return {make_case("nchw", Attrs(), {u({b, m + 1, 3, nc}), u({m + 1}), u({m + 1})}, all(3))};
    case OpKind::GroupNorm:
      return {make_case("g2", Attrs().set("groups", int64_t{2}),
                        {u({b, 2 * m, n}), u({2 * m}), u({2 * m})}, all(3)),
              make_case("g1_plain", Attrs().set("groups", int64_t{1}),
                        {u({b, m, 2, nc}), absent(), absent()}, {true, false, false})};
    case OpKind::BatchNormInference:
      return {
          make_case("nc", Attrs(), {u({b, m, n}), u({m}), u({m}, 0.5, 2), u({m}), u({m})}, all(5)),
          make_case("plain", Attrs(), {u({b, m, n}), u({m}), u({m}, 0.5, 2), absent(), absent()},
                    {true, true, true, false, false})};
    case OpKind::RmsNorm:
      return {make_case("gamma", Attrs(), {u({b, m, n}), u({n})}, all(2)),
              make_case("plain_axis1", Attrs().set("axis", int64_t{1}), {u({b, m, n}), absent()},
                        {true, false})};
    case OpKind::Attention: {
      auto mk = static_cast<MaskKind>(v);
      int64_t sq = std::min<int64_t>(m * 2, 33), sk = std::min<int64_t>(n, 65);
      int64_t dh = std::clamp<int64_t>(d.k, 4, 64);
      HostTensor mask = mk == MaskKind::Custom ? bools({1, 1, sq, sk}, rng, 0.8)
                        : mk == MaskKind::Bias ? u({b, 1, sq, sk})
                                               : absent();
      return {
          make_case("gqa", var("mask_kind").set("window", int64_t{3}),
                    {u({b, 4, sq, dh}, -1, 1), u({b, 2, sk, dh}, -1, 1), u({b, 2, sk, 8}), mask},
                    {true, true, true, mk == MaskKind::Bias})};
    }
    case OpKind::Rope: {
      int64_t dh = 2 * std::clamp<int64_t>(n / 2, 1, 64);
      return {make_case("full", var("style"), {u({b, 2, m, dh}), absent()}, {true, false}),
              make_case("partial_pos", var("style").set("rotary_dim", dh / 2 - (dh / 2) % 2),
                        {u({b, 2, m, dh}), indices({m}, rng, 0, 500)}, {true, false})};
    }
    case OpKind::AxialRope2d: {
      int64_t gw = std::min<int64_t>(m + 1, 5), dh = 4 * std::clamp<int64_t>(n / 4, 1, 32);
      return {make_case("grid", Attrs().set("grid_h", int64_t{2}).set("grid_w", gw),
                        {u({b, 2 * gw, dh})}, all(1))};
    }
    case OpKind::ALiBi:
      return {make_case("scores", Attrs(), {u({b, 4, m, n})}, all(1)),
              make_case("bias3", Attrs().set("max_bias", 3.0), {u({b, 3, m, n})}, all(1))};
    case OpKind::Conv:
      return {make_case("2d_groups",
                        Attrs()
                            .set("groups", int64_t{2})
                            .set("strides", Shape{2, 1})
                            .set("pads", Shape{1, 1}),
                        {u({b, 4, m + 4, nc + 2}), u({6, 2, 3, 3}), u({6})}, all(3)),
              make_case("1d_dilated", Attrs().set("dilations", Shape{2}),
                        {u({b, 3, n + 4}), u({4, 3, 3}), absent()}, {true, true, false}),
              make_case("3d", Attrs(), {u({b, 2, 4, 3, 5}), u({3, 2, 2, 2, 2}), absent()},
                        {true, true, false})};
    case OpKind::Im2Col:
      return {make_case("k23", Attrs().set("kernel", Shape{2, 3}).set("pads", Shape{1, 0}),
                        {u({b, 3, m + 2, nc + 2})}, all(1))};
    case OpKind::ConvTranspose2d:
      return {make_case("s2", Attrs().set("strides", Shape{2, 2}),
                        {u({b, 4, m + 1, std::min<int64_t>(n, 30) + 1}), u({4, 3, 2, 2}), u({3})},
                        all(3)),
              make_case("groups_pad", Attrs().set("groups", int64_t{2}).set("pads", Shape{1, 1}),
                        {u({b, 4, m + 2, 5}), u({4, 1, 3, 3}), absent()}, {true, true, false})};
    case OpKind::Pool: {
      auto k = static_cast<PoolKind>(v);
      Attrs a = var("kind");
      if (k == PoolKind::AdaptiveAvg || k == PoolKind::AdaptiveMax)
        a.set("output_size", Shape{3, 2});
      else
        a.set("kernel", Shape{3, 2}).set("strides", Shape{2, 2});
      Attrs padded = a;
      if (k == PoolKind::Max || k == PoolKind::Avg)
        padded.set("pads", Shape{1, 1}).set("ceil_mode", true);
      double lo = k == PoolKind::Lp ? 0.1 : -2;
      return {make_case("2d", a, {u({b, 3, m + 6, nc + 5}, lo, 2)}, all(1)),
              make_case("2d_pad_ceil", padded, {u({b, 2, m + 4, 7}, lo, 2)}, all(1))};
    }
    case OpKind::Conv2dBackwardInput:
    case OpKind::Conv2dBackwardWeight:
    case OpKind::Conv3dBackwardInput:
    case OpKind::Conv3dBackwardWeight:
      return conv_backward_cases(kind, b, m, nc, u);
    case OpKind::MaxPool2dBackward:
    case OpKind::MaxPool3dBackward:
      return max_pool_backward_cases(kind, b, m, nc, u);
    case OpKind::SoftmaxCrossEntropy:
      return {make_case("soft", var("reduction"), {u({b * m, n}), u({b * m, n}, 0, 0.4)}, all(2))};
    case OpKind::SoftmaxCrossEntropyWithLogits: {
      HostTensor labels = indices({b * m}, rng, 0, n);
      for (int64_t i = 0; i < labels.numel(); i += 4) labels.set_i64(i, -100);  // ignored
      return {make_case("ids", var("reduction"), {u({b * m, n}), labels}, {true, false}),
              make_case("smooth", var("reduction").set("label_smoothing", 0.1),
                        {u({b * m, n}), indices({b * m}, rng, 0, n)}, {true, false})};
    }
    case OpKind::Loss: {
      auto k = static_cast<LossKind>(v);
      Shape s = {b, m, n};
      auto input = [&] {
        return k == LossKind::BinaryCrossEntropy ? u(s, 0.05, 0.95)
               : k == LossKind::KlDiv            ? u(s, -3, -0.1)
                                                 : u(s);
      };
      auto target = [&] {
        return k == LossKind::BinaryCrossEntropy || k == LossKind::BinaryCrossEntropyWithLogits ||
                       k == LossKind::KlDiv
                   ? u(s, 0.01, 1)
                   : u(s);
      };
      std::vector<Case> out;
      for (auto [name, r] : {std::pair{"mean", Reduction::Mean}, std::pair{"sum", Reduction::Sum},
                             std::pair{"none", Reduction::None}})
        out.push_back(
            make_case(name, var("kind").set("reduction", r), {input(), target()}, all(2)));
      return out;
    }
    case OpKind::Metric: {
      const int64_t classes = std::clamp<int64_t>(n, 2, 64);
      std::vector<Case> out;
      for (auto avg : {F1Average::Macro, F1Average::Micro, F1Average::Binary})
        if (static_cast<MetricKind>(v) == MetricKind::F1 || avg == F1Average::Macro)
          out.push_back(make_case("logits", var("kind").set("average", avg),
                                  {u({b * m, classes}), indices({b * m}, rng, 0, classes)},
                                  {true, false}));
      return out;
    }
    // The gradient kinds (every one decomposes into the VJP rules' functions).
    case OpKind::ReluBackward:  // grid: x exactly 0 at times (relu'(0) = 0)
      return {make_case("grid", Attrs(), {u({b, m, n}), grid({b, m, n}, rng)}, all(2))};
    case OpKind::ActivationBackward: {
      auto [lo, hi] = activation_domain(v);
      return {make_case("x", var("kind"), {u({b, m, n}), u({b, m, n}, lo, hi)}, all(2))};
    }
    case OpKind::SoftmaxCrossEntropyBackward: {
      const Shape dl = static_cast<Reduction>(v) == Reduction::None ? Shape{b * m} : Shape{};
      HostTensor labels = indices({b * m}, rng, 0, n);
      for (int64_t i = 0; i < labels.numel(); i += 4) labels.set_i64(i, -100);  // ignored
      return {
          make_case("ids", var("reduction"), {u(dl), u({b * m, n}), labels}, {true, true, false}),
          make_case("smooth", var("reduction").set("label_smoothing", 0.1),
                    {u(dl), u({b * m, n}), indices({b * m}, rng, 0, n)}, {true, true, false})};
    }
    case OpKind::LossBackward: {
      auto k = static_cast<LossKind>(v);
      const Shape s = {b, m, n};
      HostTensor input = k == LossKind::BinaryCrossEntropy ? u(s, 0.05, 0.95)
                         : k == LossKind::KlDiv            ? u(s, -3, -0.1)
                                                           : u(s);
      const bool probability = k == LossKind::BinaryCrossEntropy ||
                               k == LossKind::BinaryCrossEntropyWithLogits || k == LossKind::KlDiv;
      HostTensor target = probability ? u(s, 0.01, 1) : u(s);
      std::vector<Case> out;
      for (auto [name, r] : {std::pair{"mean", Reduction::Mean}, std::pair{"sum", Reduction::Sum},
                             std::pair{"none", Reduction::None}})
        out.push_back(make_case(name, var("kind").set("reduction", r),
                                {u(r == Reduction::None ? s : Shape{}), input, target}, all(3)));
      return out;
    }
    case OpKind::AttentionBackward: {
      const int64_t sq = std::min<int64_t>(m * 2, 17), sk = std::min<int64_t>(n, 33);
      const int64_t dh = std::clamp<int64_t>(d.k, 4, 32);
      std::vector<Case> out;
      for (auto mk : {MaskKind::None, MaskKind::Causal, MaskKind::SlidingWindow, MaskKind::Custom,
                      MaskKind::Bias}) {
        HostTensor mask = mk == MaskKind::Custom ? bools({1, 1, sq, sk}, rng, 0.8)
                          : mk == MaskKind::Bias ? u({b, 1, sq, sk})
                                                 : absent();
        out.push_back(make_case("gqa_mask" + std::to_string(static_cast<int>(mk)),
                                var("wrt").set("mask_kind", mk).set("window", int64_t{3}),
                                {u({b, 4, sq, 8}), u({b, 4, sq, dh}, -1, 1),
                                 u({b, 2, sk, dh}, -1, 1), u({b, 2, sk, 8}), mask},
                                {true, true, true, true, mk == MaskKind::Bias}));
      }
      return out;
    }
    case OpKind::LayerNormBackwardInput:
    case OpKind::RmsNormBackwardInput:
      return {
          make_case("gamma", Attrs(), {u({b, m, n}), u({b, m, n}), u({n})}, all(3)),
          // Normalized over more than a few elements: the gradient cancels to ~eps there.
          make_case("axis1_plain", Attrs().set("axis", int64_t{1}),
                    {u({b, m + 2, n + 2}), u({b, m + 2, n + 2}), absent()}, {true, true, false})};
    case OpKind::LayerNormBackwardGamma:
    case OpKind::RmsNormBackwardGamma:
      return {make_case("last", Attrs(), {u({b, m, n}), u({b, m, n})}, all(2)),
              make_case("axis1", Attrs().set("axis", int64_t{1}), {u({b, m, n}), u({b, m, n})},
                        all(2))};
    case OpKind::RmsNormBackwardBeta:
      return {make_case("axis1", Attrs().set("axis", int64_t{1}), {u({b, m, n})}, all(1))};
    case OpKind::GroupNormBackwardInput:
      return {
          make_case("g2", Attrs().set("groups", int64_t{2}),
                    {u({b, 2 * m, n}), u({b, 2 * m, n}), u({2 * m})}, all(3)),
          make_case("g1_plain", Attrs().set("groups", int64_t{1}),
                    {u({b, m, 3, nc + 2}), u({b, m, 3, nc + 2}), absent()}, {true, true, false})};
    case OpKind::GroupNormBackwardGamma:
      return {make_case("g2", Attrs().set("groups", int64_t{2}),
                        {u({b, 2 * m, n}), u({b, 2 * m, n})}, all(2))};
    case OpKind::GroupNormBackwardBeta:
    case OpKind::BatchNormInferenceBackwardBeta:
      return {make_case("nc", Attrs(), {u({b, m, n})}, all(1))};
    case OpKind::BatchNormInferenceBackwardInput:
      return {make_case("gamma", Attrs(), {u({b, m, n}), u({m}, 0.5, 2), u({m})}, all(3)),
              make_case("plain", Attrs(), {u({b, m, n}), u({m}, 0.5, 2), absent()},
                        {true, true, false})};
    case OpKind::BatchNormInferenceBackwardGamma:
      return {
          make_case("nc", Attrs(), {u({b, m, n}), u({b, m, n}), u({m}), u({m}, 0.5, 2)}, all(4))};
    case OpKind::RopeBackward: {
      int64_t dh = 2 * std::clamp<int64_t>(n / 2, 1, 64);
      return {make_case("full", var("style"), {u({b, 2, m, dh}), absent()}, {true, false}),
              make_case("partial_pos", var("style").set("rotary_dim", dh / 2 - (dh / 2) % 2),
                        {u({b, 2, m, dh}), indices({m}, rng, 0, 500)}, {true, false})};
    }
    case OpKind::CumsumBackward:
      return {
          make_case("axis1", Attrs().set("axis", int64_t{1}), {u({b, m, n})}, all(1)),
          make_case("exclusive_reverse",
                    Attrs().set("axis", int64_t{-1}).set("exclusive", true).set("reverse", true),
                    {u({b, m, n})}, all(1))};
    case OpKind::GatherBackward:  // repeated indices accumulate
      return {make_case("axis1", Attrs().set("axis", int64_t{1}).set("input_shape", Shape{b, m, n}),
                        {u({b, 3, 2, n}), indices({3, 2}, rng, 0, m)}, {true, false})};
    case OpKind::AdaLayerNormBackward:
      return {
          make_case("bsd", Attrs(), {u({b, m, n}), u({b, m, n}), u({b, n}), u({b, n})}, all(4))};
    case OpKind::GatedResidualBackward:
      return {
          make_case("bsd", Attrs(), {u({b, m, n}), u({b, m, n}), u({b, m, n}), u({b, n})}, all(4))};
    default:
      return {};
  }
}

}  // namespace tessel::parity
