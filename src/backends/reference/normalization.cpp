// Reference kernels of the Normalization category. Inputs are read once into row-major f64
// vectors (strides and broadcast views handled by HostTensor), statistics are two-pass in f64
// (mean first, then the biased variance around it), and each output element is written once,
// rounded to the output dtype.
#include <cmath>

#include "backends/reference/kernels.h"

namespace tessel::reference {
namespace {

// Optional input i: absent both when passed as HostTensor{} and when the node has fewer inputs.
HostTensor optional_input(std::span<const HostTensor> in, size_t i) {
  return i < in.size() ? in[i] : HostTensor{};
}

// Row-major values of optional input `t` broadcast to `shape`; `fill` everywhere when absent.
std::vector<double> per_element(const HostTensor& t, const Shape& shape, double fill) {
  if (!present(t)) return std::vector<double>(static_cast<size_t>(shape_numel(shape)), fill);
  return broadcast_to(t, shape).to_f64();
}

// Normalizes `n` values x[base + k·stride] (k < n) in place: (x - mean) / sqrt(var + eps), with
// the mean taken as 0 when !center (RMS norm: var is then the mean square).
void normalize_strided(std::vector<double>& x, int64_t base, int64_t stride, int64_t n, double eps,
                       bool center) {
  double mean = 0;
  if (center) {
    for (int64_t k = 0; k < n; ++k) mean += x[base + k * stride];
    mean /= static_cast<double>(n);
  }
  double var = 0;
  for (int64_t k = 0; k < n; ++k) {
    double d = x[base + k * stride] - mean;
    var += d * d;
  }
  var /= static_cast<double>(n);
  double inv = 1.0 / std::sqrt(var + eps);
  for (int64_t k = 0; k < n; ++k) x[base + k * stride] = (x[base + k * stride] - mean) * inv;
}

void write_all(const HostTensor& out, const std::vector<double>& v) {
  for (int64_t i = 0; i < out.numel(); ++i) out.set_f64(i, v[i]);
}

// LayerNorm (center = true) and RmsNorm (center = false) over axes [axis, rank).
void trailing_norm(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out,
                   bool center) {
  const HostTensor& x = in[0];
  int64_t axis = node.attrs.i("axis");
  if (axis < 0) axis += x.rank();
  Shape tail(x.shape.begin() + axis, x.shape.end());
  int64_t inner = shape_numel(tail);
  int64_t outer = inner == 0 ? 0 : x.numel() / inner;
  double eps = node.attrs.f("eps");
  std::vector<double> v = x.to_f64();
  std::vector<double> gamma = per_element(optional_input(in, 1), tail, 1.0);
  std::vector<double> beta = per_element(center ? optional_input(in, 2) : HostTensor{}, tail, 0.0);
  for (int64_t r = 0; r < outer; ++r) {
    normalize_strided(v, r * inner, 1, inner, eps, center);
    for (int64_t j = 0; j < inner; ++j) v[r * inner + j] = v[r * inner + j] * gamma[j] + beta[j];
  }
  write_all(out[0], v);
}

void layer_norm(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  trailing_norm(node, in, out, true);
}

void rms_norm(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  trailing_norm(node, in, out, false);
}

// Views x [N, C, ...] as [N, C, S] (S = product of the trailing dims).
struct ChannelsFirst {
  int64_t n, c, s = 0;
  explicit ChannelsFirst(const HostTensor& x) : n(x.shape[0]), c(x.shape[1]) {
    s = n * c == 0 ? 0 : x.numel() / (n * c);
  }
  int64_t at(int64_t in, int64_t ic, int64_t is) const { return (in * c + ic) * s + is; }
};

// Applies per-channel gamma / beta (inputs gi, bi; either may be absent) to v laid out [N, C, S].
void channel_affine(std::vector<double>& v, const ChannelsFirst& d, std::span<const HostTensor> in,
                    size_t gi, size_t bi) {
  std::vector<double> gamma = per_element(optional_input(in, gi), {d.c}, 1.0);
  std::vector<double> beta = per_element(optional_input(in, bi), {d.c}, 0.0);
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t c = 0; c < d.c; ++c)
      for (int64_t s = 0; s < d.s; ++s) v[d.at(n, c, s)] = v[d.at(n, c, s)] * gamma[c] + beta[c];
}

// LayerNorm2d: NCHW, normalize over C separately for every (n, h, w).
void layer_norm2d(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  ChannelsFirst d(in[0]);
  std::vector<double> v = in[0].to_f64();
  double eps = node.attrs.f("eps");
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t s = 0; s < d.s; ++s) normalize_strided(v, d.at(n, 0, s), d.s, d.c, eps, true);
  channel_affine(v, d, in, 1, 2);
  write_all(out[0], v);
}

// GroupNorm: channels split into `groups` consecutive groups; statistics over (group, spatial).
void group_norm(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  ChannelsFirst d(in[0]);
  std::vector<double> v = in[0].to_f64();
  double eps = node.attrs.f("eps");
  int64_t groups = node.attrs.i("groups");
  int64_t per_group = d.c / groups;  // the channels of one group are contiguous in [N, C, S]
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t g = 0; g < groups; ++g)
      normalize_strided(v, d.at(n, g * per_group, 0), 1, per_group * d.s, eps, true);
  channel_affine(v, d, in, 1, 2);
  write_all(out[0], v);
}

// BatchNormInference: (x - mean[c]) / sqrt(var[c] + eps) · gamma[c] + beta[c].
void batch_norm_inference(const Node& node, std::span<const HostTensor> in,
                          std::span<HostTensor> out) {
  ChannelsFirst d(in[0]);
  std::vector<double> v = in[0].to_f64();
  double eps = node.attrs.f("eps");
  std::vector<double> mean = per_element(in[1], {d.c}, 0.0);
  std::vector<double> var = per_element(in[2], {d.c}, 1.0);
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t c = 0; c < d.c; ++c) {
      double inv = 1.0 / std::sqrt(var[c] + eps);
      for (int64_t s = 0; s < d.s; ++s) v[d.at(n, c, s)] = (v[d.at(n, c, s)] - mean[c]) * inv;
    }
  channel_affine(v, d, in, 3, 4);
  write_all(out[0], v);
}

}  // namespace

void register_Normalization(Registry& r) {
  r.native(OpKind::LayerNorm, layer_norm, kFloats);
  r.native(OpKind::LayerNorm2d, layer_norm2d, kFloats);
  r.native(OpKind::GroupNorm, group_norm, kFloats);
  r.native(OpKind::BatchNormInference, batch_norm_inference, kFloats);
  r.native(OpKind::RmsNorm, rms_norm, kFloats);
}

}  // namespace tessel::reference
