// cpu kernels: Loss (every LossKind, reduction None / Mean / Sum) and the softmax cross-entropy
// losses (soft targets; class ids with ignore_index and label smoothing). Pointwise losses are
// computed in f32 (f64 for f64) and summed in f64 per block, like the reference's f64 sum.
#include <cmath>
#include <limits>

#include "backends/cpu/families.h"
#include "ir/graph.h"
#include "tessel/error.h"
// clang-format off
#include "backends/cpu/kernels/reduction_common.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

using namespace red;

// Per-chunk partial sums of the loss, added in chunk order (deterministic for any pool size).
constexpr int64_t kLossChunk = 16384;

template <class T>
T pointwise(const Node& node, LossKind kind, T delta, bool log_target, T x, T t) {
  switch (kind) {
    case LossKind::Mse:
      return (x - t) * (x - t);
    case LossKind::Mae:
      return std::abs(x - t);
    case LossKind::Huber: {
      T d = std::abs(x - t);
      return d < delta ? T(0.5) * d * d : delta * (d - T(0.5) * delta);
    }
    case LossKind::BinaryCrossEntropy: {
      // torch rejects probabilities outside [0, 1] (NaN included) and clamps each log at -100.
      if (!(x >= 0 && x <= 1))
        throw_error(ErrorKind::Value, node.where(), ": BinaryCrossEntropy input ",
                    static_cast<double>(x), " is not a probability in [0, 1]");
      T log_p = std::max(std::log(x), T(-100));
      T log_q = std::max(std::log1p(-x), T(-100));
      return -(t * log_p + (1 - t) * log_q);
    }
    case LossKind::BinaryCrossEntropyWithLogits:
      return std::max(x, T(0)) - x * t + std::log1p(std::exp(-std::abs(x)));
    case LossKind::KlDiv:
      if (log_target) return std::exp(t) * (t - x);
      return t == 0 ? T(0) : t * (std::log(t) - x);
  }
  return std::numeric_limits<T>::quiet_NaN();
}

// The log / exp kinds on f32 lanes (simd_math.h). NaN when a BCE input is outside [0, 1]: the
// caller then reruns the chunk through pointwise(), which throws the reference's error.
double log_losses_f32(LossKind kind, bool log_target, const float* x, const float* t, float* l,
                      int64_t n) {
  const Vf zero{}, one = splat<Vf>(1), floor = splat<Vf>(-100);
  auto f = [&](Vf a, Vf b) -> Vf {
    switch (kind) {
      case LossKind::BinaryCrossEntropy: {
        Vf log_p = vlog(a), log_q = vlog1p(-a);
        log_p = log_p < floor ? floor : log_p;
        log_q = log_q < floor ? floor : log_q;
        Vf r = -(b * log_p + (one - b) * log_q);
        return (a >= zero) & (a <= one) ? r : splat<Vf>(std::numeric_limits<float>::quiet_NaN());
      }
      case LossKind::BinaryCrossEntropyWithLogits: {
        Vf pos = a > zero ? a : zero;
        return pos - a * b + vlog1p(vexp(-vabs(a)));
      }
      case LossKind::KlDiv:
        if (log_target) return vexp(b) * (b - a);
        return b == zero ? zero : b * (vlog(b) - a);
      case LossKind::Mse:
      case LossKind::Mae:
      case LossKind::Huber:
        break;
    }
    return zero;
  };
  double s = 0;
  Vf acc{};
  int64_t i = 0;
  bool bad = false;
  for (; i + kLanesF <= n; i += kLanesF) {
    Vf a = load<Vf>(x + i), v = f(a, load<Vf>(t + i));
    if (kind == LossKind::BinaryCrossEntropy) {
      auto out_of_range = !((a >= zero) & (a <= one));
      for (int k = 0; k < kLanesF; ++k) bad |= out_of_range[k] != 0;
    }
    if (l) store(l + i, v);
    acc += v;
  }
  if (i < n) {
    int r = static_cast<int>(n - i);
    Vf a = load_partial<Vf>(x + i, r, 0.5f), v = keep_first(f(a, load_partial<Vf>(t + i, r)), r);
    if (kind == LossKind::BinaryCrossEntropy) {
      auto out_of_range = !((a >= zero) & (a <= one));
      for (int k = 0; k < kLanesF; ++k) bad |= out_of_range[k] != 0;
    }
    if (l) store_partial(l + i, v, r);
    acc += v;
  }
  if (bad) return std::numeric_limits<double>::quiet_NaN();
  s += static_cast<double>(reduce_add(acc));
  return s;
}

// Loss of x[0, n) against t into l[0, n) (when l) and returns Σ loss.
template <class T>
double loss_chunk(const Node& node, LossKind kind, T delta, bool log_target, const T* x, const T* t,
                  T* l, int64_t n) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  auto vec = [&](auto f) -> double {  // vectorized kinds: f maps (x, t) vectors to losses
    double s = 0;
    int64_t i = 0;
    V acc{};
    for (; i + L <= n; i += L) {
      V v = f(load<V>(x + i), load<V>(t + i));
      if (l) store(l + i, v);
      acc += v;
    }
    if (i < n) {
      int r = static_cast<int>(n - i);
      V v = keep_first(f(load_partial<V>(x + i, r), load_partial<V>(t + i, r)), r);
      if (l) store_partial(l + i, v, r);
      acc += v;
    }
    s += static_cast<double>(reduce_add(acc));
    return s;
  };
  switch (kind) {
    case LossKind::Mse:
      return vec([&](V a, V b) { return (a - b) * (a - b); });
    case LossKind::Mae:
      return vec([&](V a, V b) {
        V d = a - b;
        return d < 0 ? -d : d;
      });
    case LossKind::Huber: {
      const V dv = splat<V>(delta), half = splat<V>(T(0.5));
      return vec([&](V a, V b) {
        V d = a - b;
        d = d < 0 ? -d : d;
        return d < dv ? half * d * d : dv * (d - half * dv);
      });
    }
    case LossKind::BinaryCrossEntropy:
    case LossKind::BinaryCrossEntropyWithLogits:
    case LossKind::KlDiv:
      if constexpr (std::is_same_v<T, float>) {
        double s = log_losses_f32(kind, log_target, x, t, l, n);
        if (!(kind == LossKind::BinaryCrossEntropy && std::isnan(s))) return s;
      }
      break;
  }
  double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    T v = pointwise<T>(node, kind, delta, log_target, x[i], t[i]);
    if (l) l[i] = v;
    s += static_cast<double>(v);
  }
  return s;
}

template <class T>
void loss_typed(const Node& node, const HostTensor& xt, const HostTensor& tt,
                const HostTensor& yt) {
  const Attrs& a = node.attrs;
  auto kind = a.e<LossKind>("kind");
  auto reduction = a.e<Reduction>("reduction");
  T delta = static_cast<T>(a.f("delta"));
  bool log_target = a.b("log_target");
  Staged<T> x = stage<T>(xt), t = stage<T>(tt);
  OutBuf<T> y(yt);
  const int64_t n = xt.numel();
  const bool per_element = reduction == Reduction::None;
  const int64_t chunks = (n + kLossChunk - 1) / kLossChunk;
  std::vector<double> part(static_cast<size_t>(chunks));
  parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      int64_t i0 = c * kLossChunk, m = std::min(kLossChunk, n - i0);
      part[c] = loss_chunk<T>(node, kind, delta, log_target, x.p + i0, t.p + i0,
                              per_element ? y.p + i0 : nullptr, m);
    }
  });
  double sum = 0;
  for (double v : part) sum += v;
  switch (reduction) {
    case Reduction::None:
      break;
    case Reduction::Mean:
      y.p[0] = static_cast<T>(sum / static_cast<double>(n));
      break;
    case Reduction::Sum:
      y.p[0] = static_cast<T>(sum);
      break;
  }
  y.finish();
}

void loss_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  if (out[0].numel() == 0) return;
  if (in[0].dtype == DType::F64)
    loss_typed<double>(node, in[0], in[1], out[0]);
  else
    loss_typed<float>(node, in[0], in[1], out[0]);
}

// ---------------------------------------------------------------------------------------------
// Softmax cross-entropy. Positions are (o, i) of logits viewed as [outer, classes, inner].

// log Σ_c e^x[c] over x[c * stride], c < n: NaN if any NaN, ±inf max returned as is.
template <class T>
double log_sum_exp(const T* x, int64_t n, int64_t stride) {
  using V = VecOf<T>;
  if (stride == 1) {
    double m = -std::numeric_limits<double>::infinity();
    constexpr int L = kLanes<V>;
    V acc = splat<V>(-std::numeric_limits<T>::infinity());
    bool nan = false;
    int64_t c = 0;
    for (; c + L <= n; c += L) {
      V v = load<V>(x + c);
      acc = v > acc ? v : acc;
      for (int l = 0; l < L; ++l) nan |= v[l] != v[l];
    }
    for (; c < n; ++c) {
      nan |= x[c] != x[c];
      m = std::max(m, static_cast<double>(x[c]));
    }
    if (nan) return std::numeric_limits<double>::quiet_NaN();
    m = std::max(m, static_cast<double>(reduce_max(acc)));
    if (std::isinf(m)) return m;
    return m + std::log(sum_map(x, n, exp_below(static_cast<T>(m))));
  }
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < n; ++c) {
    double v = static_cast<double>(x[c * stride]);
    if (std::isnan(v)) return v;
    m = std::max(m, v);
  }
  if (std::isinf(m)) return m;
  double s = 0;
  for (int64_t c = 0; c < n; ++c) s += std::exp(static_cast<double>(x[c * stride]) - m);
  return m + std::log(s);
}

// Writes per-position losses (None) or the sum / sum ÷ counted positions (Mean) into y.
template <class T, class LossAt>
void reduce_losses(const Node& node, int64_t positions, const HostTensor& yt, LossAt loss_at) {
  auto reduction = node.attrs.e<Reduction>("reduction");
  OutBuf<T> y(yt);
  const int64_t chunk = 1024;
  const int64_t chunks = (positions + chunk - 1) / chunk;
  std::vector<double> part(static_cast<size_t>(chunks));
  std::vector<int64_t> counted(static_cast<size_t>(chunks));
  parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      double s = 0;
      int64_t cnt = 0;
      for (int64_t p = c * chunk; p < std::min(positions, (c + 1) * chunk); ++p) {
        bool count = true;
        double l = loss_at(p, count);
        cnt += count;
        if (reduction == Reduction::None)
          y.p[p] = static_cast<T>(l);
        else
          s += l;
      }
      part[c] = s;
      counted[c] = cnt;
    }
  });
  double sum = 0;
  int64_t count = 0;
  for (int64_t c = 0; c < chunks; ++c) {
    sum += part[c];
    count += counted[c];
  }
  switch (reduction) {
    case Reduction::None:
      break;
    case Reduction::Mean:
      y.p[0] = static_cast<T>(sum / static_cast<double>(count));
      break;
    case Reduction::Sum:
      y.p[0] = static_cast<T>(sum);
      break;
  }
  if (yt.numel() > 0) y.finish();
}

template <class T>
void soft_ce_typed(const Node& node, const HostTensor& lt, const HostTensor& tt,
                   const HostTensor& yt) {
  AxisView a(lt.shape, node.attrs.i("axis"));
  Staged<T> logits = stage<T>(lt), target = stage<T>(tt);
  reduce_losses<T>(node, a.outer * a.inner, yt, [&](int64_t p, bool&) {
    int64_t o = p / a.inner, i = p % a.inner;
    const T* x = logits.p + o * a.n * a.inner + i;
    const T* t = target.p + o * a.n * a.inner + i;
    double lse = log_sum_exp(x, a.n, a.inner);
    double loss = 0;
    for (int64_t c = 0; c < a.n; ++c)
      loss -= static_cast<double>(t[c * a.inner]) * (static_cast<double>(x[c * a.inner]) - lse);
    return loss;
  });
}

template <class T>
void label_ce_typed(const Node& node, const HostTensor& lt, const HostTensor& labels_t,
                    const HostTensor& yt) {
  AxisView a(lt.shape, lt.rank() == 1 ? 0 : 1);
  Staged<T> logits = stage<T>(lt);
  Staged<int64_t> labels = stage<int64_t>(labels_t);
  const int64_t ignore_index = node.attrs.i("ignore_index");
  const double eps = node.attrs.f("label_smoothing");
  reduce_losses<T>(node, a.outer * a.inner, yt, [&](int64_t p, bool& counted) {
    int64_t label = labels.p[p];
    if (label == ignore_index) {
      counted = false;
      return 0.0;
    }
    if (label < 0 || label >= a.n)
      throw_error(ErrorKind::Value, node.where(), ": label ", label, " at position ", p,
                  " is out of range [0, ", a.n, ") and is not ignore_index ", ignore_index);
    int64_t o = p / a.inner, i = p % a.inner;
    const T* x = logits.p + o * a.n * a.inner + i;
    double lse = log_sum_exp(x, a.n, a.inner);
    double nll = lse - static_cast<double>(x[label * a.inner]);
    double smooth = 0;
    if (eps != 0) {
      for (int64_t c = 0; c < a.n; ++c) smooth += lse - static_cast<double>(x[c * a.inner]);
      smooth /= static_cast<double>(a.n);
    }
    return (1 - eps) * nll + eps * smooth;
  });
}

void soft_ce_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  if (in[0].dtype == DType::F64)
    soft_ce_typed<double>(node, in[0], in[1], out[0]);
  else
    soft_ce_typed<float>(node, in[0], in[1], out[0]);
}

void label_ce_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  if (in[0].dtype == DType::F64)
    label_ce_typed<double>(node, in[0], in[1], out[0]);
  else
    label_ce_typed<float>(node, in[0], in[1], out[0]);
}

}  // namespace

void register_losses(KernelRegistry& r) {
  const DTypeSet floats = dtypes::kFloat | dtypes::kFp8;
  r.native(OpKind::Loss, loss_kernel, floats);
  r.native(OpKind::SoftmaxCrossEntropy, soft_ce_kernel, floats);
  r.native(OpKind::SoftmaxCrossEntropyWithLogits, label_ce_kernel, floats);
}
TESSEL_ISA_END
