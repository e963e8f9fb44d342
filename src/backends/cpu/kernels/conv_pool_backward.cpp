// The gradients of convolution and max pooling on the cpu backend, computing in f32 (f64 for
// f64). Conv{2,3}dBackwardWeight is dW_g += dY_g · im2col(X_g)ᵀ and Conv{2,3}dBackwardInput is
// col2im(W_gᵀ · dY_g), both by gemm over bounded blocks of output positions with the forward
// convolution's im2col (conv_pool_conv.cpp); MaxPool{2,3}dBackward routes each dy element to
// its window's maximum.
#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "backends/cpu/kernels/conv_pool.h"
#include "runtime/kernel_util.h"
#include "runtime/thread_pool.h"

TESSEL_ISA_BEGIN
namespace {

using namespace conv_pool;

constexpr DTypeSet kConvFloats = dtypes::kFloat | dtypes::kFp8;
// im2col / col2im scratch per block, in elements: bounded, yet wide enough for gemm to run well.
constexpr int64_t kColBudget = int64_t{1} << 20;
// Multiply-adds (or copies) per parallel chunk: enough to amortize a task.
constexpr int64_t kGrainWork = int64_t{1} << 15;

// Output positions per block of the depth-K column matrix.
int64_t block_cols(const ConvGeo& g) {
  return std::min(g.P, std::max<int64_t>(64, kColBudget / std::max<int64_t>(g.K, 1)));
}

// The adjoint of im2col_rows: rows [r0, r1) of col (ldc per row, positions [p0, p1)) are added
// into the image xg at the taps they were gathered from; padding taps are dropped.
template <class T>
void col2im_rows(const ConvGeo& g, const T* col, int64_t ldc, int64_t p0, int64_t p1, int64_t r0,
                 int64_t r1, T* xg) {
  const Window3& w = g.w;
  for (int64_t r = r0; r < r1; ++r) {
    int64_t c = r / g.KK, tap = r % g.KK;
    int64_t kd = tap / (w.k[1] * w.k[2]), kh = tap / w.k[2] % w.k[1], kw = tap % w.k[2];
    T* plane = xg + c * g.X;
    const T* src = col + (r - r0) * ldc;
    int64_t off = kw * w.dil[2] - w.pad[2];
    int64_t lo, hi;
    valid_range(w.out[2], w.in[2], w.stride[2], w.pad[2], kw * w.dil[2], lo, hi);
    int64_t p = p0;
    int64_t ow = p % w.out[2], oh = p / w.out[2] % w.out[1], od = p / (w.out[2] * w.out[1]);
    while (p < p1) {
      int64_t seg = std::min(w.out[2] - ow, p1 - p);
      const T* s = src + (p - p0);  // s[0] is position p, output column ow
      int64_t id = od * w.stride[0] - w.pad[0] + kd * w.dil[0];
      int64_t ih = oh * w.stride[1] - w.pad[1] + kh * w.dil[1];
      if (id >= 0 && id < w.in[0] && ih >= 0 && ih < w.in[1]) {
        T* row = plane + (id * w.in[1] + ih) * w.in[2];
        int64_t a = std::clamp(lo, ow, ow + seg), b = std::clamp(hi, a, ow + seg);
        for (int64_t o = a; o < b; ++o) row[o * w.stride[2] + off] += s[o - ow];
      }
      p += seg;
      ow = 0;
      if (++oh == w.out[1]) {
        oh = 0;
        ++od;
      }
    }
  }
}

// Runs unit(u, col, threaded) for u < units with a column scratch of `col_len` elements: one
// task per unit when there are enough to go round, else one after another, each threading
// inside itself.
template <class T, class Unit>
void for_each_unit(int64_t units, int64_t col_len, Unit&& unit) {
  if (units >= 2 * num_threads()) {
    parallel_for(units, 1, [&](int64_t begin, int64_t end) {
      std::shared_ptr<Storage> hold;
      T* col = scratch<T>(col_len, hold);
      for (int64_t u = begin; u < end; ++u) unit(u, col, false);
    });
    return;
  }
  std::shared_ptr<Storage> hold;
  T* col = scratch<T>(col_len, hold);
  for (int64_t u = 0; u < units; ++u) unit(u, col, true);
}

// dx = col2im(W_gᵀ · dY_g) per (image, group), over blocks of output positions. Blocks of one
// unit overlap in dx, so they run in turn; col2im threads over the group's input channels.
template <class T>
void conv_backward_input(const ConvGeo& g, const T* dy, const T* wt, T* dx) {
  std::fill(dx, dx + g.N * g.C * g.X, T(0));
  if (g.K == 0 || g.P == 0 || g.opg == 0) return;
  int64_t pb = block_cols(g);
  for_each_unit<T>(g.N * g.G, pb * g.K, [&](int64_t u, T* col, bool threaded) {
    int64_t n = u / g.G, gi = u % g.G;
    const T* wg = wt + gi * g.opg * g.K;               // [opg, K]
    const T* dyg = dy + (n * g.O + gi * g.opg) * g.P;  // [opg, P]
    T* xg = dx + (n * g.C + gi * g.cpg) * g.X;
    for (int64_t p0 = 0; p0 < g.P; p0 += pb) {
      int64_t p1 = std::min(g.P, p0 + pb), cols = p1 - p0;
      gemm_t(g.K, cols, g.opg, wg, 1, g.K, dyg + p0, g.P, 1, T(0), col, cols);
      if (threaded)
        parallel_for(g.cpg, std::max<int64_t>(1, kGrainWork / (g.KK * cols)),
                     [&](int64_t b, int64_t e) {
                       col2im_rows(g, col + b * g.KK * cols, cols, p0, p1, b * g.KK, e * g.KK, xg);
                     });
      else
        col2im_rows(g, col, cols, p0, p1, 0, g.K, xg);
    }
  });
}

// dW_g = Σ over images and blocks of dY_g · im2col(X_g)ᵀ; groups are independent units.
template <class T>
void conv_backward_weight(const ConvGeo& g, const T* dy, const T* x, T* dw) {
  std::fill(dw, dw + g.O * g.K, T(0));
  if (g.K == 0 || g.P == 0 || g.N == 0) return;
  int64_t pb = block_cols(g);
  for_each_unit<T>(g.G, pb * g.K, [&](int64_t gi, T* col, bool threaded) {
    T* dwg = dw + gi * g.opg * g.K;  // [opg, K]
    for (int64_t n = 0; n < g.N; ++n) {
      const T* xg = x + (n * g.C + gi * g.cpg) * g.X;
      const T* dyg = dy + (n * g.O + gi * g.opg) * g.P;
      for (int64_t p0 = 0; p0 < g.P; p0 += pb) {
        int64_t p1 = std::min(g.P, p0 + pb), cols = p1 - p0;
        if (threaded)
          parallel_for(g.K, std::max<int64_t>(1, kGrainWork / cols), [&](int64_t b, int64_t e) {
            im2col_rows(g, xg, p0, p1, b, e, col + b * cols, cols);
          });
        else
          im2col_rows(g, xg, p0, p1, 0, g.K, col, cols);
        gemm_t(g.opg, g.K, cols, dyg + p0, g.P, 1, col, 1, cols, T(1), dwg, g.K);
      }
    }
  });
}

template <class T>
void conv_backward_typed(bool wrt_input, const Node& node, std::span<const HostTensor> in,
                         std::span<HostTensor> out) {
  const HostTensor &dy = in[0], &operand = in[1];
  const HostTensor& grad = out[0];
  if (grad.numel() == 0) return;
  const Shape& x = wrt_input ? grad.shape : operand.shape;
  const Shape& w = wrt_input ? operand.shape : grad.shape;
  const ConvGeo g = conv_geo(node.attrs, x, w, dy.shape);
  std::shared_ptr<Storage> hdy, hop, hgrad;
  const T* dys = dense<T>(dy, hdy);
  const T* ops = dense<T>(operand, hop);
  T* gs = output_buffer<T>(grad, hgrad);
  if (wrt_input)
    conv_backward_input(g, dys, ops, gs);
  else
    conv_backward_weight(g, dys, ops, gs);
  finish_output(gs, grad);
}

void conv_backward_input_kernel(const Node& node, std::span<const HostTensor> in,
                                std::span<HostTensor> out) {
  if (out[0].dtype == DType::F64)
    conv_backward_typed<double>(true, node, in, out);
  else
    conv_backward_typed<float>(true, node, in, out);
}

void conv_backward_weight_kernel(const Node& node, std::span<const HostTensor> in,
                                 std::span<HostTensor> out) {
  if (out[0].dtype == DType::F64)
    conv_backward_typed<double>(false, node, in, out);
  else
    conv_backward_typed<float>(false, node, in, out);
}

// The index in its plane of the maximum of output (od, oh, ow)'s window, or -1 when the window
// is empty: the first in-bounds tap unless a later one is greater or is the window's first NaN
// (the reference's rule).
template <class T>
int64_t window_argmax(const T* xp, const Window3& w, const DimTaps (&t)[3], int64_t od, int64_t oh,
                      int64_t ow) {
  T best = 0;
  int64_t at = -1;
  for (int64_t a = t[0].t0[od]; a < t[0].t0[od] + t[0].cnt[od]; ++a) {
    int64_t id = t[0].lo[od] + a * t[0].step;
    for (int64_t b = t[1].t0[oh]; b < t[1].t0[oh] + t[1].cnt[oh]; ++b) {
      int64_t ih = t[1].lo[oh] + b * t[1].step;
      for (int64_t c = t[2].t0[ow]; c < t[2].t0[ow] + t[2].cnt[ow]; ++c) {
        int64_t i = (id * w.in[1] + ih) * w.in[2] + t[2].lo[ow] + c * t[2].step;
        T v = xp[i];
        if (at < 0 || (!std::isnan(best) && (std::isnan(v) || v > best))) {
          best = v;
          at = i;
        }
      }
    }
  }
  return at;
}

// MaxPool{2,3}dBackward: per plane (the dims before the spatial ones), each dy element is added
// to dx at its window's maximum.
template <class T>
void max_pool_backward_typed(const Node& node, std::span<const HostTensor> in,
                             std::span<HostTensor> out) {
  const HostTensor &dy = in[0], &x = in[1];
  const HostTensor& dx = out[0];
  if (dx.numel() == 0) return;
  const std::vector<int64_t>& kernel = node.attrs.ints("kernel");
  // As [planes, 1, *spatial]: make_window reads the dims after the first two.
  int sd = static_cast<int>(kernel.size());
  Shape xs = {1, 1}, ys = {1, 1};
  for (int d = 0; d < sd; ++d) {
    xs.push_back(x.shape[x.rank() - sd + d]);
    ys.push_back(dy.shape[dy.rank() - sd + d]);
  }
  const Window3 w = make_window(node.attrs, xs, ys, kernel, true);
  const DimTaps t[3] = {dim_taps(false, w, 0), dim_taps(false, w, 1), dim_taps(false, w, 2)};
  int64_t X = w.in[0] * w.in[1] * w.in[2], P = w.out[0] * w.out[1] * w.out[2];
  int64_t planes = dx.numel() / X, window = w.k[0] * w.k[1] * w.k[2];
  std::shared_ptr<Storage> hx, hdy, hdx;
  const T* xd = dense<T>(x, hx);
  const T* dyd = dense<T>(dy, hdy);
  T* dxd = output_buffer<T>(dx, hdx);
  std::fill(dxd, dxd + dx.numel(), T(0));
  auto plane = [&](int64_t pl) {
    const T* gp = dyd + pl * P;
    int64_t p = 0;
    for (int64_t od = 0; od < w.out[0]; ++od)
      for (int64_t oh = 0; oh < w.out[1]; ++oh)
        for (int64_t ow = 0; ow < w.out[2]; ++ow, ++p) {
          int64_t at = window_argmax(xd + pl * X, w, t, od, oh, ow);
          if (at >= 0) dxd[pl * X + at] += gp[p];
        }
  };
  parallel_for(planes, std::max<int64_t>(1, kGrainWork / std::max<int64_t>(1, P * window)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t pl = begin; pl < end; ++pl) plane(pl);
               });
  finish_output(dxd, dx);
}

void max_pool_backward_kernel(const Node& node, std::span<const HostTensor> in,
                              std::span<HostTensor> out) {
  if (out[0].dtype == DType::F64)
    max_pool_backward_typed<double>(node, in, out);
  else
    max_pool_backward_typed<float>(node, in, out);
}

}  // namespace

void register_conv_pool_backward_kinds(KernelRegistry& r) {
  for (OpKind k : {OpKind::Conv2dBackwardInput, OpKind::Conv3dBackwardInput})
    r.native(k, conv_backward_input_kernel, kConvFloats);
  for (OpKind k : {OpKind::Conv2dBackwardWeight, OpKind::Conv3dBackwardWeight})
    r.native(k, conv_backward_weight_kernel, kConvFloats);
  for (OpKind k : {OpKind::MaxPool2dBackward, OpKind::MaxPool3dBackward})
    r.native(k, max_pool_backward_kernel, kConvFloats);
}

TESSEL_ISA_END
