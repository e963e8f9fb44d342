// Pool (every PoolKind, 1-D/2-D/3-D) and Im2Col on the cpu backend. Pooling is separable: for
// each output row, the in-bounds input rows of its windows are combined lane-wise along the
// contiguous width (vectorized), then each output reduces its taps along that combined row.
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "backends/cpu/convert.h"
#include "backends/cpu/kernels/conv_pool.h"
#include "runtime/thread_pool.h"

TESSEL_ISA_BEGIN
namespace {

using namespace conv_pool;

constexpr DTypeSet kConvFloats = dtypes::kFloat | dtypes::kFp8;
// Elements of work per parallel chunk: enough to amortize a task.
constexpr int64_t kGrainWork = int64_t{1} << 15;

}  // namespace

namespace conv_pool {

DimTaps dim_taps(bool adaptive, const Window3& w, int d) {
  int64_t in = w.in[d], out = w.out[d];
  DimTaps t;
  t.lo.resize(out);
  t.t0.resize(out);
  t.cnt.resize(out);
  t.psz.resize(out);
  t.step = adaptive ? 1 : w.dil[d];
  for (int64_t o = 0; o < out; ++o) {
    if (adaptive) {
      int64_t lo = o * in / out, hi = ((o + 1) * in + out - 1) / out;
      t.lo[o] = lo;
      t.t0[o] = 0;
      t.cnt[o] = hi - lo;
      t.psz[o] = 1;  // the reference's divisor never grows for adaptive windows
      continue;
    }
    int64_t k = w.k[d], dil = w.dil[d];
    int64_t lo = o * w.stride[d] - w.pad[d], hi = lo + (k - 1) * dil + 1;
    int64_t first = lo >= 0 ? 0 : (-lo + dil - 1) / dil;
    int64_t last = in - 1 - lo < 0 ? 0 : std::min(k, (in - 1 - lo) / dil + 1);
    t.lo[o] = lo;
    t.t0[o] = first;
    t.cnt[o] = std::max<int64_t>(0, last - first);
    t.psz[o] = std::min(hi, in + w.pad_end[d]) - lo;
  }
  return t;
}

}  // namespace conv_pool

namespace {

enum class Reduce { Max, Sum, PowSum };

template <class V>
V ipow(V x, int64_t p) {
  V r = x;
  for (int64_t i = 1; i < p; ++i) r *= x;
  return r;
}

// The reference's max step: NaN sticks once seen (floats); plain max for integers.
template <class T>
inline T max_step(T best, T v) {
  return (v != v || v > best) ? v : best;
}
template <class V>
inline V max_vec(V best, V v) {
  if constexpr (std::is_floating_point_v<Lane<V>>)
    return v != v ? v : (v > best ? v : best);  // NaN in best survives the compare
  else
    return v > best ? v : best;
}

// acc[i] ∘= f(x[i]) (f: identity, or ^p for PowSum); `first` assigns instead.
template <class T>
void combine_row(Reduce r, int64_t p, bool first, T* acc, const T* x, int64_t n) {
  using V = Vec<T>;
  constexpr int L = kLanes<V>;
  int64_t i = 0;
  switch (r) {
    case Reduce::Max:
      if (first) {
        std::copy(x, x + n, acc);
        return;
      }
      for (; i + L <= n; i += L) store(acc + i, max_vec(load<V>(acc + i), load<V>(x + i)));
      for (; i < n; ++i) acc[i] = max_step(acc[i], x[i]);
      return;
    case Reduce::Sum:
      if (first) {
        std::copy(x, x + n, acc);
        return;
      }
      for (; i + L <= n; i += L) store(acc + i, load<V>(acc + i) + load<V>(x + i));
      for (; i < n; ++i) acc[i] += x[i];
      return;
    case Reduce::PowSum:
      for (; i + L <= n; i += L) {
        V v = ipow(load<V>(x + i), p);
        store(acc + i, first ? v : load<V>(acc + i) + v);
      }
      for (; i < n; ++i) {
        T v = ipow(x[i], p);
        acc[i] = first ? v : acc[i] + v;
      }
      return;
  }
}

// Lanes 2i + odd of the pair (a, b): the even or odd elements of 2·lanes consecutive ones.
template <int Odd, class V, size_t... I>
V pick_half(V a, V b, std::index_sequence<I...>) {
  return __builtin_shufflevector(a, b, (2 * static_cast<int>(I) + Odd)...);
}

// Splits src[0, s·m) into s phases of m: phases[r·m + j] = src[r + j·s].
template <class T>
void split_phases(const T* src, int64_t s, int64_t m, T* phases) {
  using V = Vec<T>;
  constexpr int L = kLanes<V>;
  int64_t j = 0;
  if (s == 2)
    for (; j + L <= m; j += L) {
      V a = load<V>(src + 2 * j), b = load<V>(src + 2 * j + L);
      store(phases + j, pick_half<0>(a, b, std::make_index_sequence<L>()));
      store(phases + m + j, pick_half<1>(a, b, std::make_index_sequence<L>()));
    }
  for (int64_t r = 0; r < s; ++r)
    for (int64_t i = j; i < m; ++i) phases[r * m + i] = src[r + i * s];
}

// Adaptive windows differ in size: out[o] = the max (or sum) of acc over output o's taps.
template <class T>
void reduce_row_adaptive(bool max, const DimTaps& tw, int64_t n, const T* acc, T ident, T* out) {
  for (int64_t o = 0; o < n; ++o) {
    T v = ident;
    for (int64_t t = tw.t0[o], e = t + tw.cnt[o]; t < e; ++t) {
      T a = acc[tw.lo[o] + t * tw.step];
      v = max ? max_step(v, a) : v + a;
    }
    out[o] = v;
  }
}

// Kernel windows along the width, vectorized over outputs: `src` is the combined row padded
// with the identity (pad columns before it, slack after), split into `stride` phases when the
// stride is above 1 so that tap t of consecutive outputs is at src[tap_off[t] + o].
template <class T>
void reduce_row_window(bool max, const T* src, const std::vector<int64_t>& tap_off, int64_t n,
                       T* out) {
  using V = Vec<T>;
  constexpr int L = kLanes<V>;
  size_t k = tap_off.size();
  for (int64_t o = 0; o < n; o += L) {
    V v = load<V>(src + tap_off[0] + o);
    for (size_t t = 1; t < k; ++t) {
      V u = load<V>(src + tap_off[t] + o);
      v = max ? max_vec(v, u) : v + u;
    }
    if (o + L <= n)
      store(out + o, v);
    else
      store_partial(out + o, v, static_cast<int>(n - o));
  }
}

template <class T>
void pool_typed(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  if (y.numel() == 0) return;
  const Attrs& a = node.attrs;
  auto kind = a.e<PoolKind>("kind");
  bool adaptive = false;
  Reduce red = Reduce::Max;
  switch (kind) {
    case PoolKind::Max:
      break;
    case PoolKind::AdaptiveMax:
      adaptive = true;
      break;
    case PoolKind::Avg:
      red = Reduce::Sum;
      break;
    case PoolKind::AdaptiveAvg:
      adaptive = true;
      red = Reduce::Sum;
      break;
    case PoolKind::Lp:
      red = Reduce::PowSum;
      break;
  }
  constexpr bool kInt = std::is_integral_v<T>;
  const std::vector<int64_t> no_kernel;
  Window3 w = make_window(a, x.shape, y.shape, adaptive ? no_kernel : a.ints("kernel"), true);
  DimTaps td = dim_taps(adaptive, w, 0), th = dim_taps(adaptive, w, 1),
          tw = dim_taps(adaptive, w, 2);
  int sd = x.rank() - 2;
  int64_t xs[3] = {0, 0, 0};
  for (int d = 0; d < sd; ++d) xs[3 - sd + d] = x.strides[2 + d];
  int64_t C = x.shape[1];
  int64_t p = a.i("p");
  bool include_pad = a.b("count_include_pad");
  int64_t kernel_size = w.k[0] * w.k[1] * w.k[2];
  T ident = red != Reduce::Max ? T(0)
            : kInt             ? std::numeric_limits<T>::lowest()
                               : -std::numeric_limits<T>::infinity();
  DType own = kInt ? x.dtype : kDTypeOf<T>;
  bool direct_rows = x.dtype == own && xs[2] == 1;  // input rows usable in place
  T* ydirect = y.dtype == own ? reinterpret_cast<T*>(y.data()) : nullptr;
  int64_t in_w = w.in[2], out_w = w.out[2];
  // The padded combined row (see reduce_row_window): `pad` identity columns, the row, and
  // identity up to the last tap of the last output plus a vector of slack per phase.
  constexpr int L = kLanes<Vec<T>>;
  int64_t s = w.stride[2], pad = adaptive ? 0 : w.pad[2];
  int64_t extent = std::max(pad + in_w, (out_w - 1) * s + (w.k[2] - 1) * w.dil[2] + 1);
  int64_t wa = extent + s * (L + 1), wq = (wa + s - 1) / s;
  std::vector<int64_t> tap_off;
  for (int64_t t = 0; t < w.k[2]; ++t) {
    int64_t q = t * w.dil[2];
    tap_off.push_back(s == 1 ? q : q % s * wq + q / s);
  }
  // Per-column divisors of Avg and Lp.
  std::vector<T> col_div(out_w);
  for (int64_t q = 0; q < out_w; ++q)
    col_div[q] = static_cast<T>(red == Reduce::Sum && include_pad ? tw.psz[q] : tw.cnt[q]);
  int64_t rows = y.numel() / out_w;
  int64_t row_work = std::max<int64_t>(1, w.k[0] * w.k[1] * in_w + out_w * w.k[2]);
  parallel_for(rows, std::max<int64_t>(1, kGrainWork / row_work), [&](int64_t begin, int64_t end) {
    std::vector<T> padded(s * wq, ident), phases(s > 1 ? s * wq : 0);
    std::vector<T> rowbuf(direct_rows ? 0 : in_w), outbuf(ydirect ? 0 : out_w);
    T* acc = padded.data() + pad;  // only [0, in_w) is ever written: the rest stays identity
    for (int64_t row = begin; row < end; ++row) {
      int64_t oh = row % w.out[1], od = row / w.out[1] % w.out[0];
      int64_t nc = row / (w.out[1] * w.out[0]);
      int64_t base = x.offset + nc / C * x.strides[0] + nc % C * x.strides[1];
      bool first = true;
      for (int64_t i = td.t0[od], ie = i + td.cnt[od]; i < ie; ++i) {
        int64_t qd = td.lo[od] + i * td.step;
        for (int64_t j = th.t0[oh], je = j + th.cnt[oh]; j < je; ++j) {
          int64_t qh = th.lo[oh] + j * th.step;
          int64_t off = base + qd * xs[0] + qh * xs[1];
          const T* src;
          if (direct_rows) {
            src = reinterpret_cast<const T*>(x.element_ptr(off));
          } else {
            if constexpr (kInt) {
              auto s = reinterpret_cast<const T*>(x.element_ptr(off));
              for (int64_t q = 0; q < in_w; ++q) rowbuf[q] = s[q * xs[2]];
            } else if constexpr (std::is_same_v<T, double>) {
              to_f64(x.element_ptr(off), x.dtype, xs[2], rowbuf.data(), in_w);
            } else {
              to_f32(x.element_ptr(off), x.dtype, xs[2], rowbuf.data(), in_w);
            }
            src = rowbuf.data();
          }
          combine_row(red, p, first, acc, src, in_w);
          first = false;
        }
      }
      if (first) std::fill(acc, acc + in_w, ident);
      T* o = ydirect ? ydirect + row * out_w : outbuf.data();
      bool max = red == Reduce::Max;
      if (adaptive) {
        reduce_row_adaptive(max, tw, out_w, acc, ident, o);
      } else if (s == 1) {
        reduce_row_window(max, padded.data(), tap_off, out_w, o);
      } else {
        split_phases(padded.data(), s, wq, phases.data());
        reduce_row_window(max, phases.data(), tap_off, out_w, o);
      }
      int64_t vcnt = td.cnt[od] * th.cnt[oh], vpsz = td.psz[od] * th.psz[oh];
      switch (red) {
        case Reduce::Max:
          if constexpr (kInt) {
            // An empty window gives the reference's int64 minimum, wrapped into T.
            const T empty = static_cast<T>(std::numeric_limits<int64_t>::min());
            for (int64_t q = 0; q < out_w; ++q)
              if (vcnt * tw.cnt[q] == 0) o[q] = empty;
          }
          break;
        case Reduce::Sum: {
          // Both factors are small integers, so the divisor is exact.
          Vec<T> vd = splat<Vec<T>>(static_cast<T>(include_pad ? vpsz : vcnt));
          int64_t q = 0;
          for (; q + L <= out_w; q += L)
            store(o + q, load<Vec<T>>(o + q) / (vd * load<Vec<T>>(col_div.data() + q)));
          for (; q < out_w; ++q) o[q] = o[q] / (vd[0] * col_div[q]);
          break;
        }
        case Reduce::PowSum:
          for (int64_t q = 0; q < out_w; ++q) {
            double mean = static_cast<double>(o[q]) / (static_cast<double>(vcnt) * col_div[q]);
            double v = mean * static_cast<double>(kernel_size);
            o[q] = static_cast<T>(p == 1   ? v
                                  : p == 2 ? std::sqrt(v)
                                           : std::pow(v, 1.0 / static_cast<double>(p)));
          }
          break;
      }
      if (!ydirect) {
        if constexpr (std::is_same_v<T, double>)
          from_f64(o, y.element_ptr(y.offset + row * out_w), y.dtype, 1, out_w);
        else if constexpr (std::is_same_v<T, float>)
          from_f32(o, y.element_ptr(y.offset + row * out_w), y.dtype, 1, out_w);
      }
    }
  });
}

void pool_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  DType dt = out[0].dtype;
  if (dt == DType::F64) return pool_typed<double>(node, in, out);
  if (dt == DType::U8) return pool_typed<uint8_t>(node, in, out);
  if (dt == DType::I8) return pool_typed<int8_t>(node, in, out);
  if (dt == DType::I16) return pool_typed<int16_t>(node, in, out);
  if (dt == DType::I32) return pool_typed<int32_t>(node, in, out);
  if (dt == DType::I64) return pool_typed<int64_t>(node, in, out);
  pool_typed<float>(node, in, out);  // f32, f16, bf16, fp8: computed in f32
}

// Im2Col moves elements only, so it copies E-sized words (any dtype of that size; zero is
// all-zero bits in each of them).
template <class E>
void im2col_typed(const Node& node, const HostTensor& x, const HostTensor& y) {
  const Attrs& a = node.attrs;
  const std::vector<int64_t>& kernel = a.ints("kernel");
  int64_t KH = kernel[0], KW = kernel[1];
  const WindowAttrs win = conv_window_attrs(a, 2);  // Im2Col's pads are symmetric
  int64_t sh = win.strides[0], sw = win.strides[1];
  int64_t dh = win.dilations[0], dw = win.dilations[1];
  int64_t ph = win.pads.begin[0], pw = win.pads.begin[1];
  int64_t C = x.shape[1], H = x.shape[2], W = x.shape[3];
  int64_t L = y.shape[2];
  int64_t OW = window_out_size(W, pw, win.pads.end[1], KW, sw, dw), OH = L / OW;
  int64_t rows = y.shape[0] * y.shape[1];
  E* ys = reinterpret_cast<E*>(y.data());
  parallel_for(rows, std::max<int64_t>(1, kGrainWork / L), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t n = row / (C * KH * KW), r = row % (C * KH * KW);
      int64_t c = r / (KH * KW), i = r / KW % KH, j = r % KW;
      int64_t lo, hi, off = j * dw - pw;
      valid_range(OW, W, sw, pw, j * dw, lo, hi);
      for (int64_t oh = 0; oh < OH; ++oh) {
        E* d = ys + row * L + oh * OW;
        int64_t ih = oh * sh - ph + i * dh;
        if (ih < 0 || ih >= H) {
          std::fill(d, d + OW, E(0));
          continue;
        }
        auto s = reinterpret_cast<const E*>(
            x.element_ptr(x.offset + n * x.strides[0] + c * x.strides[1] + ih * x.strides[2]));
        int64_t xs = x.strides[3];
        std::fill(d, d + lo, E(0));
        if (sw == 1 && xs == 1)
          std::copy(s + (lo + off), s + (hi + off), d + lo);
        else
          for (int64_t ow = lo; ow < hi; ++ow) d[ow] = s[(ow * sw + off) * xs];
        std::fill(d + hi, d + OW, E(0));
      }
    }
  });
}

void im2col_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  if (y.numel() == 0) return;
  switch (dtype_size(x.dtype)) {
    case 1:
      return im2col_typed<uint8_t>(node, x, y);
    case 2:
      return im2col_typed<uint16_t>(node, x, y);
    case 4:
      return im2col_typed<uint32_t>(node, x, y);
    default:
      return im2col_typed<uint64_t>(node, x, y);
  }
}

}  // namespace

void register_pool_kinds(KernelRegistry& r) {
  r.native(OpKind::Im2Col, im2col_kernel, kConvFloats | dtypes::kInt);
  r.native(OpKind::Pool, pool_kernel, kConvFloats);
  // Max-type pooling only selects elements, so integers run exactly in their own type.
  r.native(OpKind::Pool, pool_kernel, dtypes::kInt,
           {static_cast<int>(PoolKind::Max), static_cast<int>(PoolKind::AdaptiveMax)});
}

TESSEL_ISA_END
