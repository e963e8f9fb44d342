// cpu kernels of the fused norm composites: FusedResidualLN / FusedResidualRmsNorm (sum and its
// norm in one pass over each row), AdaLayerNorm and GatedResidual (DiT modulation). For f16,
// bf16 and fp8 the intermediates are rounded to the dtype where the decomposition
// (src/ops/fused_composites.cpp) rounds them, so the result matches it within one rounding.
#include <cmath>

#include "backends/cpu/families.h"
#include "backends/cpu/normalization.h"
#include "runtime/thread_pool.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

constexpr int64_t B = kStageBlock;

// A per-batch modulation m of x: [B,D] over [B,S,D] reads as [B,1,D]; any other shape
// broadcasts to x as it is (the shape rule's modulation_shape).
HostTensor modulation_view(const HostTensor& m, const Shape& x) {
  HostTensor v = m;
  if (x.size() == 3 && m.rank() == 2) {
    v.shape = {m.shape[0], 1, m.shape[1]};
    v.strides = {m.strides[0], 0, m.strides[1]};
  }
  return broadcast_to(v, x);
}

// sum = x + residual; y = norm(sum) over the last axis. Pass 1 writes sum (rounded to the
// dtype) and gathers its statistics; pass 2 normalizes sum as stored.
template <class T>
void residual_norm(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out,
                   bool center) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  const HostTensor &y = out[0], &sum = out[1];
  const Shape& shape = sum.shape;
  const int64_t dim = shape.back();
  const int64_t rows = dim == 0 ? 0 : sum.numel() / dim;
  if (rows == 0) return;
  const double eps = node.attrs.f("eps");
  const StridedView xv(broadcast_to(in[0], shape)), rv(broadcast_to(in[1], shape)), sv(sum);
  const ParamArray<T> gamma(optional_input(in, 2), {dim});
  const ParamArray<T> beta(center ? optional_input(in, 3) : HostTensor{}, {dim});
  const DType dt = sum.dtype;
  parallel_for(rows, row_grain(dim), [&](int64_t r0, int64_t r1) {
    alignas(64) T xbuf[B], rbuf[B], sbuf[B];
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t start = r * dim;
      RowStats<T> st{.center = center};
      for (int64_t k = 0; k < dim; k += B) {
        const int64_t len = std::min(B, dim - k);
        const T* xp = read(xv, start + k, len, xbuf);
        const T* rp = read(rv, start + k, len, rbuf);
        T* sp = out_block(sum, start + k, sbuf);
        int64_t i = 0;
        for (; i + L <= len; i += L) store(sp + i, load<V>(xp + i) + load<V>(rp + i));
        for (; i < len; ++i) sp[i] = xp[i] + rp[i];
        round_trip(sp, len, dt);
        st.add(sp, len);
        commit(sum, start + k, sp, len);
      }
      const NormCoef<T> c(st, eps);
      for (int64_t k = 0; k < dim; k += B) {
        const int64_t len = std::min(B, dim - k);
        T* yp = out_block(y, start + k, xbuf);
        normalize_block(read(sv, start + k, len, sbuf), yp, len, c, gamma.at(k), beta.at(k));
        commit(y, start + k, yp, len);
      }
    }
  });
}

template <class T>
void fused_residual_ln_t(const Node& node, std::span<const HostTensor> in,
                         std::span<HostTensor> out) {
  residual_norm<T>(node, in, out, true);
}
template <class T>
void fused_residual_rms_norm_t(const Node& node, std::span<const HostTensor> in,
                               std::span<HostTensor> out) {
  residual_norm<T>(node, in, out, false);
}

// AdaLayerNorm: LayerNorm(x)·(1 + scale) + shift over x [B,S,D], row by row.
template <class T>
void ada_layer_norm_t(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  const int64_t dim = x.shape.back();
  const int64_t rows = dim == 0 ? 0 : x.numel() / dim;
  if (rows == 0) return;
  const double eps = node.attrs.f("eps");
  const StridedView xv(x), scv(modulation_view(in[1], x.shape)),
      shv(modulation_view(in[2], x.shape));
  const DType dt = y.dtype;
  const bool exact = dt == kNative<T>;  // no intermediate roundings to emulate
  parallel_for(rows, row_grain(dim), [&](int64_t r0, int64_t r1) {
    alignas(64) T xbuf[B], scbuf[B], shbuf[B], ybuf[B], obuf[B];
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t start = r * dim;
      RowStats<T> st;
      for (int64_t k = 0; k < dim; k += B) {
        const int64_t len = std::min(B, dim - k);
        st.add(read(xv, start + k, len, xbuf), len);
      }
      const NormCoef<T> c(st, eps);
      const V one = splat<V>(T(1));
      for (int64_t k = 0; k < dim; k += B) {
        const int64_t len = std::min(B, dim - k);
        const T* sc = read(scv, start + k, len, scbuf);
        const T* sh = read(shv, start + k, len, shbuf);
        T* yp = out_block(y, start + k, ybuf);
        normalize_block<T>(read(xv, start + k, len, xbuf), yp, len, c, nullptr, nullptr);
        if (exact) {
          int64_t i = 0;
          for (; i + L <= len; i += L)
            store(yp + i, load<V>(yp + i) * (one + load<V>(sc + i)) + load<V>(sh + i));
          for (; i < len; ++i) yp[i] = yp[i] * (T(1) + sc[i]) + sh[i];
        } else {
          // n, 1 + scale, n·(1 + scale) each rounded to the dtype, as the decomposition does.
          round_trip(yp, len, dt);
          for (int64_t i = 0; i < len; ++i) obuf[i] = T(1) + sc[i];
          round_trip(obuf, len, dt);
          for (int64_t i = 0; i < len; ++i) yp[i] *= obuf[i];
          round_trip(yp, len, dt);
          for (int64_t i = 0; i < len; ++i) yp[i] += sh[i];
        }
        commit(y, start + k, yp, len);
      }
    }
  });
}

// GatedResidual: out = x + gate·y, elementwise in blocks.
template <class T>
void gated_residual_t(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  const HostTensor& o = out[0];
  const int64_t n = o.numel();
  if (n == 0) return;
  const StridedView xv(in[0]), yv(in[1]), gv(modulation_view(in[2], o.shape));
  const DType dt = o.dtype;
  const int64_t blocks = (n + B - 1) / B;
  parallel_for(blocks, row_grain(B), [&](int64_t b0, int64_t b1) {
    alignas(64) T xbuf[B], ybuf[B], gbuf[B], obuf[B];
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t start = blk * B, len = std::min(B, n - start);
      const T* xp = read(xv, start, len, xbuf);
      const T* yp = read(yv, start, len, ybuf);
      const T* gp = read(gv, start, len, gbuf);
      T* op = out_block(o, start, obuf);
      if (dt == kNative<T>) {
        int64_t i = 0;
        for (; i + L <= len; i += L)
          store(op + i, load<V>(xp + i) + load<V>(gp + i) * load<V>(yp + i));
        for (; i < len; ++i) op[i] = xp[i] + gp[i] * yp[i];
      } else {
        for (int64_t i = 0; i < len; ++i) op[i] = gp[i] * yp[i];
        round_trip(op, len, dt);  // gate·y is a tensor of the dtype in the decomposition
        for (int64_t i = 0; i < len; ++i) op[i] += xp[i];
      }
      commit(o, start, op, len);
    }
  });
}

#define TESSEL_FUSED_NORM_KERNEL(name)                                                     \
  void name(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) { \
    if (out[0].dtype == DType::F64)                                                        \
      name##_t<double>(node, in, out);                                                     \
    else                                                                                   \
      name##_t<float>(node, in, out);                                                      \
  }
TESSEL_FUSED_NORM_KERNEL(fused_residual_ln)
TESSEL_FUSED_NORM_KERNEL(fused_residual_rms_norm)
TESSEL_FUSED_NORM_KERNEL(ada_layer_norm)
TESSEL_FUSED_NORM_KERNEL(gated_residual)
#undef TESSEL_FUSED_NORM_KERNEL

}  // namespace

void register_fused_norms(KernelRegistry& r) {
  r.native(OpKind::FusedResidualLN, fused_residual_ln, kNormFloats);
  r.native(OpKind::FusedResidualRmsNorm, fused_residual_rms_norm, kNormFloats);
  r.native(OpKind::AdaLayerNorm, ada_layer_norm, kNormFloats);
  r.native(OpKind::GatedResidual, gated_residual, kNormFloats);
}

TESSEL_ISA_END
