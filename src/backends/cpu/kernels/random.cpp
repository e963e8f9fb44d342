// cpu kernels: random (RngUniform, RngNormal, Dropout). Philox4x32-10 evaluated a vector of
// counters at a time, bit-identical to src/runtime/rng.h: element i depends only on (seed, i),
// so index ranges run on any thread. Values are formed in f64 exactly as the reference forms
// them (no FMA contraction) and rounded once to the output dtype.
#include <algorithm>
#include <cmath>

#include "backends/cpu/convert.h"
#include "runtime/host_allocator.h"
#include "runtime/thread_pool.h"
// clang-format off
#include "backends/cpu/kernels/data_movement.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

typedef uint64_t Vu64 __attribute__((vector_size(kVectorBytes)));
constexpr int kLanesU64 = kLanes<Vu64>;
constexpr int64_t kGrain = 1 << 14;

// Words 0 and 1 of the Philox blocks of counters i (lanes, each < 2^64), stream 0, as u64 lanes
// holding 32-bit values.
inline void philox_words(Vu64 i, uint64_t seed, Vu64& w0, Vu64& w1) {
  const Vu64 lo = splat<Vu64>(0xFFFFFFFFull);
  Vu64 c0 = i & lo, c1 = i >> 32, c2 = splat<Vu64>(0), c3 = splat<Vu64>(0);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    Vu64 p0 = c0 * 0xD2511F53ull, p1 = c2 * 0xCD9E8D57ull;
    Vu64 n0 = (p1 >> 32) ^ c1 ^ k0, n2 = (p0 >> 32) ^ c3 ^ k1;
    c1 = p1 & lo;
    c3 = p0 & lo;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  w0 = c0;
  w1 = c1;
}

// 24-bit uniforms in [0, 1) of counters [b, b + n) into u (n <= kStageBlock).
void uniforms(uint64_t seed, int64_t b, int64_t n, double* u) {
  Vu64 step = lane_index<Vu64>();
  int64_t i = 0;
  for (; i < n; i += kLanesU64) {
    Vu64 w0, w1;
    philox_words(step + static_cast<uint64_t>(b + i), seed, w0, w1);
    Vd v = convert<Vd>(convert<Vi64>(w0 >> 8)) * 0x1.0p-24;
    if (i + kLanesU64 <= n)
      store(u + i, v);
    else
      store_partial(u + i, v, static_cast<int>(n - i));
  }
}

// Writes f64 values (n <= kStageBlock) as y's dtype at element b.
void store_values(const HostTensor& y, int64_t b, const double* v, int64_t n) {
  from_f64(v, y.element_ptr(y.offset + b), y.dtype, 1, n);
}

void rng_uniform(const Node& node, std::span<const HostTensor>, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  auto seed = static_cast<uint64_t>(node.attrs.i("seed"));
  double low = node.attrs.f("low"), span = node.attrs.f("high") - low;
  parallel_for(y.numel(), kGrain, [&](int64_t begin, int64_t end) {
    alignas(64) double buf[kStageBlock];
    for (int64_t b = begin; b < end; b += kStageBlock) {
      int64_t n = std::min(kStageBlock, end - b);
      uniforms(seed, b, n, buf);
      int64_t i = 0;
      for (; i + kLanesD <= n; i += kLanesD)
        store(buf + i, splat<Vd>(low) + opaque(splat<Vd>(span) * load<Vd>(buf + i)));
      for (; i < n; ++i) buf[i] = low + opaque(span * buf[i]);
      store_values(y, b, buf, n);
    }
  });
}

// Box–Muller on words 0 and 1 of block i, with libm's log / cos / sqrt as the reference.
void rng_normal(const Node& node, std::span<const HostTensor>, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  auto seed = static_cast<uint64_t>(node.attrs.i("seed"));
  double mean = node.attrs.f("mean"), std_dev = node.attrs.f("std");
  parallel_for(y.numel(), kGrain, [&](int64_t begin, int64_t end) {
    alignas(64) double buf[kStageBlock];
    Vu64 step = lane_index<Vu64>();
    for (int64_t b = begin; b < end; b += kStageBlock) {
      int64_t n = std::min(kStageBlock, end - b);
      for (int64_t i = 0; i < n; i += kLanesU64) {
        Vu64 w0, w1;
        philox_words(step + static_cast<uint64_t>(b + i), seed, w0, w1);
        for (int l = 0; l < kLanesU64 && i + l < n; ++l) {
          double u1 = (static_cast<double>(w0[l] >> 8) + 1.0) * 0x1.0p-24;
          double u2 = static_cast<double>(w1[l] >> 8) * 0x1.0p-24;
          double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
          buf[i + l] = mean + opaque(std_dev * z);
        }
      }
      store_values(y, b, buf, n);
    }
  });
}

// Keep element i iff uniform(seed, i) >= (float)p; kept values are x · scale with
// scale = 1/(1-p) rounded to x's dtype. The product of two values of x's dtype is exact in the
// f32 / f64 it is computed in (f16, bf16, fp8 mantissas are short), so rounding it once matches.
void dropout(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  DType dt = y.dtype;
  auto seed = static_cast<uint64_t>(node.attrs.i("seed"));
  double p = node.attrs.f("p");
  double threshold = static_cast<double>(static_cast<float>(p));
  std::vector<uint8_t> scale_bytes = encode_scalar(dt, 1.0 / (1.0 - p));
  double scale64;
  to_f64(scale_bytes.data(), dt, 1, &scale64, 1);
  ContiguousBytes x = contiguous_bytes(in[0]);
  parallel_for(y.numel(), kGrain, [&](int64_t begin, int64_t end) {
    alignas(64) double u[kStageBlock];
    alignas(64) float xf[kStageBlock];
    for (int64_t b = begin; b < end; b += kStageBlock) {
      int64_t n = std::min(kStageBlock, end - b);
      uniforms(seed, b, n, u);
      if (dt == DType::F64) {
        const double* xs = reinterpret_cast<const double*>(x.data) + b;
        double* ys = reinterpret_cast<double*>(y.data()) + b;
        for (int64_t i = 0; i < n; ++i) ys[i] = u[i] >= threshold ? xs[i] * scale64 : 0.0;
        continue;
      }
      auto scale = static_cast<float>(scale64);
      const float* xs;
      float* ys;
      if (dt == DType::F32) {
        xs = reinterpret_cast<const float*>(x.data) + b;
        ys = reinterpret_cast<float*>(y.data()) + b;
      } else {
        to_f32(x.data + b * dtype_size(dt), dt, 1, xf, n);
        xs = xf;
        ys = xf;
      }
      for (int64_t i = 0; i < n; ++i) ys[i] = u[i] >= threshold ? xs[i] * scale : 0.0f;
      if (dt != DType::F32) from_f32(xf, y.element_ptr(y.offset + b), dt, 1, n);
    }
  });
}

constexpr DTypeSet kFloats = dtypes::kFloat | dtypes::kFp8;

}  // namespace

void register_random(KernelRegistry& r) {
  r.native(OpKind::RngUniform, rng_uniform, kFloats);
  r.native(OpKind::RngNormal, rng_normal, kFloats);
  r.native(OpKind::Dropout, dropout, kFloats);
}

TESSEL_ISA_END
