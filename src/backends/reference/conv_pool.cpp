// Reference kernels of the ConvPool category: Conv (1-D/2-D/3-D), Im2Col, ConvTranspose2d and
// Pool, and of the Backward kinds that differentiate them (Conv{2,3}dBackward{Input,Weight},
// MaxPool{2,3}dBackward). Inputs are read through their strides; sums accumulate in f64 and each
// output element is written once. Attributes were validated by the shape rules
// (src/ops/conv_pool.cpp), so the kernels only fill in defaults.
#include <cmath>
#include <limits>

#include "backends/reference/kernels.h"
#include "ops/conv_geometry.h"

namespace tessel::reference {
namespace {

// One in-bounds position of a window along one spatial dim: its element offset contribution in
// the input and, for convolutions, in the weight.
struct Tap {
  int64_t x_off;
  int64_t w_off;
};
using Taps = std::vector<std::vector<Tap>>;  // per spatial dim

// Calls fn(x_off, w_off) for every combination of one tap per dim (sums of the contributions).
template <class Fn>
void for_each_tap(const Taps& taps, Fn&& fn) {
  for (const auto& t : taps)
    if (t.empty()) return;
  size_t n = taps.size();
  std::vector<size_t> j(n, 0);
  while (true) {
    int64_t x_off = 0, w_off = 0;
    for (size_t d = 0; d < n; ++d) {
      x_off += taps[d][j[d]].x_off;
      w_off += taps[d][j[d]].w_off;
    }
    fn(x_off, w_off);
    size_t d = n;
    while (d > 0) {
      --d;
      if (++j[d] < taps[d].size()) break;
      j[d] = 0;
      if (d == 0) return;
    }
    if (n == 0) return;
  }
}

// ---------------------------------------------------------------------------------------------
// Conv: y[n, o, *p] = b[o] + Σ_{c in o's group, *k} x[n, c, p·stride − pad_begin + k·dilation]
//                                                  · w[o, c − group start, *k]

// The window attributes of a convolution with `sd` spatial dims.
struct ConvWindow : WindowAttrs {
  int64_t groups;
  ConvWindow(const Attrs& a, int sd)
      : WindowAttrs(conv_window_attrs(a, sd)), groups(a.i("groups")) {}

  // The in-bounds taps of output position idx[2:], per spatial dim: offsets through x_strides
  // into an x of spatial shape x_shape[2:], and through w_strides into a w of kernel w_shape[2:].
  void taps(const std::vector<int64_t>& idx, const Shape& x_shape,
            const std::vector<int64_t>& x_strides, const Shape& w_shape,
            const std::vector<int64_t>& w_strides, Taps& out) const {
    for (size_t d = 0; d < out.size(); ++d) {
      out[d].clear();
      for (int64_t k = 0; k < w_shape[2 + d]; ++k) {
        int64_t p = idx[2 + d] * strides[d] - pads.begin[d] + k * dilations[d];
        if (p >= 0 && p < x_shape[2 + d])
          out[d].push_back({p * x_strides[2 + d], k * w_strides[2 + d]});
      }
    }
  }
};

void conv_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor &x = in[0], &w = in[1], &b = in[2];
  const HostTensor& y = out[0];
  int sd = x.rank() - 2;
  const ConvWindow cw(node.attrs, sd);
  int64_t cpg = x.shape[1] / cw.groups;  // input channels per group
  int64_t opg = y.shape[1] / cw.groups;  // output channels per group
  Taps taps(sd);
  int64_t linear = 0;
  for_each_index(y.shape, [&](const std::vector<int64_t>& idx) {
    int64_t n = idx[0], o = idx[1], g = o / opg;
    cw.taps(idx, x.shape, x.strides, w.shape, w.strides, taps);
    double acc = present(b) ? load_f64(b, b.offset + o * b.strides[0]) : 0.0;
    for (int64_t ci = 0; ci < cpg; ++ci) {
      int64_t x_base = x.offset + n * x.strides[0] + (g * cpg + ci) * x.strides[1];
      int64_t w_base = w.offset + o * w.strides[0] + ci * w.strides[1];
      for_each_tap(taps, [&](int64_t xo, int64_t wo) {
        acc += load_f64(x, x_base + xo) * load_f64(w, w_base + wo);
      });
    }
    y.set_f64(linear++, acc);
  });
}

// ---------------------------------------------------------------------------------------------
// Conv{2,3}dBackwardInput / Conv{2,3}dBackwardWeight: the forward convolution's windows walked
// once per element of dy; every (x tap, w tap) pair of an in-group channel adds dy · w to dx
// (wrt_input) or dy · x to dw, in f64.

void conv_backward(bool wrt_input, const Node& node, std::span<const HostTensor> in,
                   std::span<HostTensor> out) {
  const HostTensor &dy = in[0], &operand = in[1];
  const HostTensor& grad = out[0];  // contiguous: its strides index the accumulator
  const HostTensor& x = wrt_input ? grad : operand;
  const HostTensor& w = wrt_input ? operand : grad;
  int sd = dy.rank() - 2;
  const ConvWindow cw(node.attrs, sd);
  int64_t cpg = x.shape[1] / cw.groups, opg = dy.shape[1] / cw.groups;
  int64_t operand_offset = operand.offset;
  std::vector<double> acc(grad.numel(), 0.0);
  Taps taps(sd);
  for_each_index(dy.shape, [&](const std::vector<int64_t>& idx) {
    int64_t n = idx[0], o = idx[1], g = o / opg;
    double dyv = at_f64(dy, idx);
    cw.taps(idx, x.shape, x.strides, w.shape, w.strides, taps);
    for (int64_t ci = 0; ci < cpg; ++ci) {
      int64_t x_base = n * x.strides[0] + (g * cpg + ci) * x.strides[1];
      int64_t w_base = o * w.strides[0] + ci * w.strides[1];
      for_each_tap(taps, [&](int64_t xo, int64_t wo) {
        if (wrt_input)
          acc[x_base + xo] += dyv * load_f64(w, operand_offset + w_base + wo);
        else
          acc[w_base + wo] += dyv * load_f64(x, operand_offset + x_base + xo);
      });
    }
  });
  for (int64_t i = 0; i < static_cast<int64_t>(acc.size()); ++i) grad.set_f64(i, acc[i]);
}

void conv_backward_input_kernel(const Node& node, std::span<const HostTensor> in,
                                std::span<HostTensor> out) {
  conv_backward(true, node, in, out);
}

void conv_backward_weight_kernel(const Node& node, std::span<const HostTensor> in,
                                 std::span<HostTensor> out) {
  conv_backward(false, node, in, out);
}

// ---------------------------------------------------------------------------------------------
// ConvTranspose2d: each x[n, c, i, j] scatters x · w[c, o, kh, kw] into
// y[n, group(c)·O/groups + o, i·stride − pad_begin + kh·dilation, ...].

void conv_transpose2d_kernel(const Node& node, std::span<const HostTensor> in,
                             std::span<HostTensor> out) {
  const HostTensor &x = in[0], &w = in[1], &b = in[2];
  const HostTensor& y = out[0];
  const WindowAttrs win = conv_window_attrs(node.attrs, 2);
  const auto &strides = win.strides, &dilations = win.dilations;
  const WindowPads& pads = win.pads;
  int64_t groups = node.attrs.i("groups");
  int64_t cpg = x.shape[1] / groups, opg = w.shape[1];
  int64_t N = y.shape[0], O = y.shape[1], H = y.shape[2], W = y.shape[3];
  std::vector<double> acc(y.numel(), 0.0);
  if (present(b))
    for (int64_t i = 0; i < static_cast<int64_t>(acc.size()); ++i)
      acc[i] = load_f64(b, b.offset + (i / (H * W)) % O * b.strides[0]);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < x.shape[1]; ++c)
      for (int64_t i = 0; i < x.shape[2]; ++i)
        for (int64_t j = 0; j < x.shape[3]; ++j) {
          int64_t xi[4] = {n, c, i, j};
          double xv = load_f64(x, x.offset_of(xi));
          int64_t g = c / cpg;
          for (int64_t o = 0; o < opg; ++o)
            for (int64_t kh = 0; kh < w.shape[2]; ++kh) {
              int64_t oh = i * strides[0] - pads.begin[0] + kh * dilations[0];
              if (oh < 0 || oh >= H) continue;
              for (int64_t kw = 0; kw < w.shape[3]; ++kw) {
                int64_t ow = j * strides[1] - pads.begin[1] + kw * dilations[1];
                if (ow < 0 || ow >= W) continue;
                int64_t wi[4] = {c, o, kh, kw};
                acc[((n * O + g * opg + o) * H + oh) * W + ow] += xv * load_f64(w, w.offset_of(wi));
              }
            }
        }
  for (int64_t i = 0; i < static_cast<int64_t>(acc.size()); ++i) y.set_f64(i, acc[i]);
}

// ---------------------------------------------------------------------------------------------
// Im2Col (torch unfold): y[n, (c·kh + i)·kw + j, oh·OW + ow] = x[n, c, oh·sh − ph + i·dh, ...],
// zero outside the input. Integers are copied exactly.

void im2col_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  const std::vector<int64_t>& kernel = node.attrs.ints("kernel");
  const WindowAttrs win = conv_window_attrs(node.attrs, 2);
  const auto &strides = win.strides, &dilations = win.dilations;
  const WindowPads& pads = win.pads;
  int64_t ow_count =
      window_out_size(x.shape[3], pads.begin[1], pads.end[1], kernel[1], strides[1], dilations[1]);
  bool exact_int = is_integer(x.dtype);
  int64_t linear = 0;
  for_each_index(y.shape, [&](const std::vector<int64_t>& idx) {
    int64_t n = idx[0], row = idx[1], l = idx[2];
    int64_t c = row / (kernel[0] * kernel[1]);
    int64_t i = row / kernel[1] % kernel[0], j = row % kernel[1];
    int64_t h = l / ow_count * strides[0] - pads.begin[0] + i * dilations[0];
    int64_t v = l % ow_count * strides[1] - pads.begin[1] + j * dilations[1];
    bool inside = h >= 0 && h < x.shape[2] && v >= 0 && v < x.shape[3];
    int64_t xi[4] = {n, c, h, v};
    if (exact_int)
      y.set_i64(linear++, inside ? load_i64(x, x.offset_of(xi)) : 0);
    else
      y.set_f64(linear++, inside ? load_f64(x, x.offset_of(xi)) : 0.0);
  });
}

// ---------------------------------------------------------------------------------------------
// Pool. Each output element reduces the in-bounds taps of its window (padding is never read):
// Max / AdaptiveMax take the largest (NaN propagates), Avg divides by PyTorch's divisor, Lp
// follows torch.lp_pool (avg_pool of x^p without padding, · kernel size, ^(1/p)), AdaptiveAvg
// averages windows [floor(i·in/out), ceil((i+1)·in/out)).

// The in-bounds positions q = lo, lo + step, ... < hi of a window over [0, in_dim), as offsets
// through two strides.
void window_taps(int64_t lo, int64_t hi, int64_t step, int64_t in_dim, int64_t stride_a,
                 int64_t stride_b, std::vector<Tap>& taps) {
  taps.clear();
  for (int64_t q = lo; q < hi; q += step)
    if (q >= 0 && q < in_dim) taps.push_back({q * stride_a, q * stride_b});
}

double reduce_float_window(PoolKind kind, const HostTensor& x, int64_t base, const Taps& taps,
                           int64_t pool_size, int64_t count, int64_t kernel_size, int64_t p,
                           bool count_include_pad) {
  switch (kind) {
    case PoolKind::Max:
    case PoolKind::AdaptiveMax: {
      double best = -std::numeric_limits<double>::infinity();
      for_each_tap(taps, [&](int64_t xo, int64_t) {
        double v = load_f64(x, base + xo);
        if (std::isnan(v) || v > best) best = v;  // once NaN, nothing compares greater
      });
      return best;
    }
    case PoolKind::Avg:
    case PoolKind::AdaptiveAvg: {
      double sum = 0;
      for_each_tap(taps, [&](int64_t xo, int64_t) { sum += load_f64(x, base + xo); });
      return sum / static_cast<double>(count_include_pad ? pool_size : count);
    }
    case PoolKind::Lp: {
      double sum = 0;
      double pd = static_cast<double>(p);
      for_each_tap(taps, [&](int64_t xo, int64_t) { sum += std::pow(load_f64(x, base + xo), pd); });
      double mean = sum / static_cast<double>(count);
      return std::pow(mean * static_cast<double>(kernel_size), 1.0 / pd);
    }
  }
  return 0;  // unreachable: the switch is exhaustive
}

int64_t max_int_window(const HostTensor& x, int64_t base, const Taps& taps) {
  int64_t best = std::numeric_limits<int64_t>::min();
  for_each_tap(taps, [&](int64_t xo, int64_t) { best = std::max(best, load_i64(x, base + xo)); });
  return best;
}

void pool_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  const Attrs& a = node.attrs;
  auto kind = a.e<PoolKind>("kind");
  int sd = x.rank() - 2;
  bool adaptive = kind == PoolKind::AdaptiveMax || kind == PoolKind::AdaptiveAvg;
  const std::vector<int64_t>& kernel = a.ints("kernel");  // empty when adaptive
  const WindowAttrs geo = pool_window_attrs(a, sd);
  int64_t kernel_size = 1;
  for (int64_t k : kernel) kernel_size *= k;
  bool count_include_pad = a.b("count_include_pad");
  int64_t p = a.i("p");
  bool exact_int = is_integer(x.dtype);
  Taps taps(sd);
  int64_t linear = 0;
  for_each_index(y.shape, [&](const std::vector<int64_t>& idx) {
    int64_t pool_size = 1, count = 1;
    for (int d = 0; d < sd; ++d) {
      int64_t in_dim = x.shape[2 + d], o = idx[2 + d];
      int64_t lo, hi, step = 1;
      if (adaptive) {
        int64_t out_dim = y.shape[2 + d];
        lo = o * in_dim / out_dim;
        hi = ((o + 1) * in_dim + out_dim - 1) / out_dim;
      } else {
        lo = o * geo.strides[d] - geo.pads.begin[d];
        step = geo.dilations[d];
        hi = lo + (kernel[d] - 1) * step + 1;
        // Avg's count_include_pad divisor: the window clipped to the padded input.
        pool_size *= std::min(hi, in_dim + geo.pads.end[d]) - lo;
      }
      window_taps(lo, hi, step, in_dim, x.strides[2 + d], 0, taps[d]);
      count *= static_cast<int64_t>(taps[d].size());
    }
    int64_t base = x.offset + idx[0] * x.strides[0] + idx[1] * x.strides[1];
    if (exact_int)
      y.set_i64(linear++, max_int_window(x, base, taps));
    else
      y.set_f64(linear++, reduce_float_window(kind, x, base, taps, pool_size, count, kernel_size, p,
                                              count_include_pad));
  });
}

// ---------------------------------------------------------------------------------------------
// MaxPool{2,3}dBackward: x [..., *spatial] (the leading dims are planes); each dy element goes
// to its window's maximum in x: the first in-bounds tap unless a later one is greater or is the
// window's first NaN (as ArgMax picks, so the decomposition through it agrees).

void max_pool_backward_kernel(const Node& node, std::span<const HostTensor> in,
                              std::span<HostTensor> out) {
  const HostTensor &dy = in[0], &x = in[1];
  const HostTensor& dx = out[0];  // contiguous: its strides index the accumulator
  const Attrs& a = node.attrs;
  const std::vector<int64_t>& kernel = a.ints("kernel");
  int sd = static_cast<int>(kernel.size()), lead = x.rank() - sd;
  const WindowAttrs win = pool_window_attrs(a, sd);
  const auto &strides = win.strides, &dilations = win.dilations;
  const WindowPads& pads = win.pads;
  std::vector<double> acc(dx.numel(), 0.0);
  Taps taps(sd);
  for_each_index(dy.shape, [&](const std::vector<int64_t>& idx) {
    int64_t x_base = x.offset, dx_base = 0;
    for (int i = 0; i < lead; ++i) {
      x_base += idx[i] * x.strides[i];
      dx_base += idx[i] * dx.strides[i];
    }
    for (int d = 0; d < sd; ++d) {
      int64_t lo = idx[lead + d] * strides[d] - pads.begin[d];
      window_taps(lo, lo + (kernel[d] - 1) * dilations[d] + 1, dilations[d], x.shape[lead + d],
                  x.strides[lead + d], dx.strides[lead + d], taps[d]);
    }
    double best = 0;
    int64_t best_at = -1;
    for_each_tap(taps, [&](int64_t xo, int64_t go) {
      double v = load_f64(x, x_base + xo);
      if (best_at < 0 || (!std::isnan(best) && (std::isnan(v) || v > best))) {
        best = v;
        best_at = go;
      }
    });
    if (best_at >= 0) acc[dx_base + best_at] += at_f64(dy, idx);
  });
  for (int64_t i = 0; i < static_cast<int64_t>(acc.size()); ++i) dx.set_f64(i, acc[i]);
}

}  // namespace

void register_ConvPool(Registry& r) {
  r.native(OpKind::Conv, conv_kernel, kFloats);
  r.native(OpKind::ConvTranspose2d, conv_transpose2d_kernel, kFloats);
  r.native(OpKind::Im2Col, im2col_kernel, kFloats | dtypes::kInt);
  r.native(OpKind::Pool, pool_kernel, kFloats);
  // Max-type pooling only selects elements, so it is exact on integers too.
  r.native(OpKind::Pool, pool_kernel, dtypes::kInt,
           {static_cast<int>(PoolKind::Max), static_cast<int>(PoolKind::AdaptiveMax)});
  // Their gradients (Backward category kinds, kept beside the forward kernels they mirror).
  r.native(OpKind::Conv2dBackwardInput, conv_backward_input_kernel, kFloats);
  r.native(OpKind::Conv3dBackwardInput, conv_backward_input_kernel, kFloats);
  r.native(OpKind::Conv2dBackwardWeight, conv_backward_weight_kernel, kFloats);
  r.native(OpKind::Conv3dBackwardWeight, conv_backward_weight_kernel, kFloats);
  r.native(OpKind::MaxPool2dBackward, max_pool_backward_kernel, kFloats);
  r.native(OpKind::MaxPool3dBackward, max_pool_backward_kernel, kFloats);
}

}  // namespace tessel::reference
