// Reference kernels of the Random category. Element i (row-major) depends only on (seed, i)
// through src/runtime/rng.h; values are computed in f64 and rounded once to the output dtype.
#include "backends/reference/kernels.h"
#include "runtime/rng.h"

namespace tessel::reference {
namespace {

uint64_t seed_of(const Node& node) { return static_cast<uint64_t>(node.attrs.i("seed")); }

void kernel_rng_uniform(const Node& node, std::span<const HostTensor>, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  uint64_t seed = seed_of(node);
  double low = node.attrs.f("low"), high = node.attrs.f("high");
  for (int64_t i = 0; i < y.numel(); ++i)
    y.set_f64(i, low + (high - low) * rng::uniform(seed, static_cast<uint64_t>(i)));
}

void kernel_rng_normal(const Node& node, std::span<const HostTensor>, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  uint64_t seed = seed_of(node);
  double mean = node.attrs.f("mean"), std = node.attrs.f("std");
  for (int64_t i = 0; i < y.numel(); ++i)
    y.set_f64(i, mean + std * rng::normal(seed, static_cast<uint64_t>(i)));
}

// Keep element i iff uniform(seed, i) >= (float)p; kept values are x · scale with scale = 1/(1-p)
// rounded to x's dtype (as PyTorch's mask is), so the decomposition matches bit for bit.
void kernel_dropout(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  uint64_t seed = seed_of(node);
  double p = node.attrs.f("p");
  double threshold = static_cast<double>(static_cast<float>(p));
  HostTensor scale_t = HostTensor::empty(x.dtype, {});
  scale_t.set_f64(0, 1.0 / (1.0 - p));
  double scale = scale_t.get_f64(0);
  for (int64_t i = 0; i < y.numel(); ++i) {
    bool keep = rng::uniform(seed, static_cast<uint64_t>(i)) >= threshold;
    y.set_f64(i, keep ? x.get_f64(i) * scale : 0.0);
  }
}

}  // namespace

void register_Random(Registry& r) {
  r.native(OpKind::RngUniform, kernel_rng_uniform, kFloats);
  r.native(OpKind::RngNormal, kernel_rng_normal, kFloats);
  r.native(OpKind::Dropout, kernel_dropout, kFloats);
}

}  // namespace tessel::reference
