// cpu kernels: the orderings TopK, Sort, ArgSort, and Sample. One total order, as the
// reference: NaN above every number and equal to other NaNs, -0 == +0, equal values in index
// order (a stable sort). Values are mapped to unsigned keys with that order, so each row sorts
// (key, index) pairs with plain integer compares.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "backends/cpu/kernels/reduction_family.h"
#include "ir/graph.h"
#include "runtime/rng.h"
#include "tessel/error.h"
// clang-format off
#include "backends/cpu/kernels/reduction_common.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

using namespace red;

// Order-preserving unsigned keys: NaN largest (all NaNs equal), -0 == +0.
inline uint32_t key_of(float v) {
  if (v != v) return 0xFFFFFFFFu;
  if (v == 0) v = 0;
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
inline uint64_t key_of(double v) {
  if (v != v) return ~uint64_t{0};
  if (v == 0) v = 0;
  uint64_t u;
  std::memcpy(&u, &v, 8);
  return (u >> 63) ? ~u : (u | (uint64_t{1} << 63));
}
inline uint64_t key_of(int64_t v) { return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63); }

template <class T>
using KeyOf = decltype(key_of(T{}));

template <class K>
struct Item {
  K key;
  int64_t index;
};

// Writes the first k of each row's order: values to y (may be null), positions to idx (may be
// null). descending puts larger keys first; ties keep index order either way.
template <class T>
void ordered(const HostTensor& xt, const AxisView& a, bool descending, int64_t k,
             const HostTensor* yt, const HostTensor* idxt) {
  using K = KeyOf<T>;
  Staged<T> x = stage<T>(xt);
  std::unique_ptr<OutBuf<T>> y;
  if (yt) y = std::make_unique<OutBuf<T>>(*yt);
  int64_t* idx = idxt ? reinterpret_cast<int64_t*>(idxt->data()) : nullptr;
  const int64_t n = a.n, inner = a.inner;
  auto before = [descending](const Item<K>& p, const Item<K>& q) {
    if (p.key != q.key) return descending ? p.key > q.key : p.key < q.key;
    return p.index < q.index;
  };
  int64_t rows = a.outer * inner;
  int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1));
  parallel_for(rows, grain, [&](int64_t b, int64_t e) {
    std::vector<Item<K>> items(static_cast<size_t>(n));
    for (int64_t row = b; row < e; ++row) {
      int64_t o = row / inner, i = row % inner;
      const T* xs = x.p + o * n * inner + i;
      for (int64_t j = 0; j < n; ++j) items[j] = {key_of(xs[j * inner]), j};
      if (k < n) {
        std::partial_sort(items.begin(), items.begin() + k, items.end(), before);
      } else {
        std::sort(items.begin(), items.end(), before);
      }
      int64_t base = o * k * inner + i;
      for (int64_t j = 0; j < k; ++j) {
        if (y) y->p[base + j * inner] = xs[items[j].index * inner];
        if (idx) idx[base + j * inner] = items[j].index;
      }
    }
  });
  if (y) y->finish();
}

void ordered_kernel(const HostTensor& x, int64_t axis, bool descending, int64_t k,
                    const HostTensor* y, const HostTensor* idx) {
  AxisView a(x.shape, axis);
  if (a.outer * a.inner * k == 0) return;
  if (is_integer(x.dtype) || x.dtype == DType::Bool)
    ordered<int64_t>(x, a, descending, k, y, idx);
  else if (x.dtype == DType::F64)
    ordered<double>(x, a, descending, k, y, idx);
  else
    ordered<float>(x, a, descending, k, y, idx);
}

// sorted = false returns the sorted order too: one deterministic answer for every backend.
void topk_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  ordered_kernel(in[0], node.attrs.i("axis"), node.attrs.b("largest"), node.attrs.i("k"), &out[0],
                 &out[1]);
}

void sort_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  AxisView a(in[0].shape, node.attrs.i("axis"));
  ordered_kernel(in[0], node.attrs.i("axis"), node.attrs.b("descending"), a.n, &out[0], nullptr);
}

void argsort_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  AxisView a(in[0].shape, node.attrs.i("axis"));
  ordered_kernel(in[0], node.attrs.i("axis"), node.attrs.b("descending"), a.n, nullptr, &out[0]);
}

// ---------------------------------------------------------------------------------------------
// Sample: the reference's algorithm (reduction_indexing.cpp), in f64 with the same operation
// order so the same uniform draws pick the same ids.

struct SampleParams {
  double temperature, top_p;
  int64_t top_k;
  uint64_t seed;
};

template <class T>
int64_t sample_row(const Node& node, const SampleParams& sp, const T* logits, int64_t vocab,
                   uint64_t row, std::vector<double>& p, std::vector<Item<uint64_t>>& order) {
  if (sp.temperature == 0) return arg_extreme_row(logits, vocab, true, false);
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < vocab; ++j) {
    double v = static_cast<double>(logits[j]);
    if (std::isnan(v) || v == std::numeric_limits<double>::infinity())
      throw_error(ErrorKind::Value, node.where(), ": logits row ", row,
                  " holds NaN or +inf; sampling needs finite or -inf logits");
    m = std::max(m, v / sp.temperature);
  }
  if (std::isinf(m))
    throw_error(ErrorKind::Value, node.where(), ": every logit of row ", row,
                " is -inf; sampling needs at least one finite logit");
  p.resize(static_cast<size_t>(vocab));
  double total = 0;
  for (int64_t j = 0; j < vocab; ++j)
    total += p[j] = std::exp(static_cast<double>(logits[j]) / sp.temperature - m);
  for (double& v : p) v /= total;

  int64_t kept = sp.top_k > 0 ? std::min(sp.top_k, vocab) : vocab;
  const bool filter = kept < vocab || sp.top_p < 1;
  double u = rng::uniform(sp.seed, row);
  double cumulative = 0;
  if (!filter) {
    // Every token kept: the mass is summed in descending-probability order as the reference
    // does, which only a sort gives; the walk itself goes in vocabulary order.
    order.resize(static_cast<size_t>(vocab));
    for (int64_t j = 0; j < vocab; ++j) order[j] = {key_of(p[j]), j};
    auto before = [](const Item<uint64_t>& a, const Item<uint64_t>& b) {
      return a.key != b.key ? a.key > b.key : a.index < b.index;
    };
    std::sort(order.begin(), order.end(), before);
    double kept_mass = 0;
    for (int64_t t = 0; t < vocab; ++t) kept_mass += p[order[t].index];
    for (int64_t j = 0; j < vocab; ++j) {
      cumulative += p[j] / kept_mass;
      if (cumulative > u) return j;
    }
    return vocab - 1;
  }
  order.resize(static_cast<size_t>(vocab));
  for (int64_t j = 0; j < vocab; ++j) order[j] = {key_of(p[j]), j};
  auto before = [](const Item<uint64_t>& a, const Item<uint64_t>& b) {
    return a.key != b.key ? a.key > b.key : a.index < b.index;
  };
  if (sp.top_p < 1 || kept == vocab)
    std::sort(order.begin(), order.end(), before);
  else
    std::partial_sort(order.begin(), order.begin() + kept, order.end(), before);
  if (sp.top_p < 1) {
    double mass = 0;
    for (int64_t t = 0; t < kept; ++t) mass += p[order[t].index];
    double prefix = 0;
    for (int64_t t = 0; t < kept; ++t) {
      prefix += p[order[t].index];
      if (prefix / mass >= sp.top_p) {
        kept = t + 1;
        break;
      }
    }
  }
  double kept_mass = 0;
  for (int64_t t = 0; t < kept; ++t) kept_mass += p[order[t].index];
  // The kept tokens in vocabulary order.
  std::sort(order.begin(), order.begin() + kept,
            [](const Item<uint64_t>& a, const Item<uint64_t>& b) { return a.index < b.index; });
  int64_t last = -1;
  for (int64_t t = 0; t < kept; ++t) {
    int64_t j = order[t].index;
    cumulative += p[j] / kept_mass;
    if (cumulative > u) return j;
    last = j;
  }
  return last;
}

template <class T>
void sample_typed(const Node& node, const SampleParams& sp, const HostTensor& xt,
                  const HostTensor& y) {
  Staged<T> x = stage<T>(xt);
  int64_t vocab = xt.shape.back();
  int64_t* out = reinterpret_cast<int64_t*>(y.data());
  parallel_for(y.numel(), std::max<int64_t>(1, 4096 / vocab), [&](int64_t b, int64_t e) {
    std::vector<double> p;
    std::vector<Item<uint64_t>> order;
    for (int64_t r = b; r < e; ++r)
      out[r] = sample_row(node, sp, x.p + r * vocab, vocab, static_cast<uint64_t>(r), p, order);
  });
}

void sample_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  if (out[0].numel() == 0) return;
  SampleParams sp{node.attrs.f("temperature"), node.attrs.f("top_p"), node.attrs.i("top_k"),
                  static_cast<uint64_t>(node.attrs.i("seed"))};
  if (in[0].dtype == DType::F64)
    sample_typed<double>(node, sp, in[0], out[0]);
  else
    sample_typed<float>(node, sp, in[0], out[0]);
}

}  // namespace

void register_orderings(KernelRegistry& r) {
  const DTypeSet floats = dtypes::kFloat | dtypes::kFp8;
  const DTypeSet numbers = floats | dtypes::kInt;
  r.native(OpKind::TopK, topk_kernel, numbers);
  r.native(OpKind::Sort, sort_kernel, numbers | DTypeSet{DType::Bool});
  r.native(OpKind::ArgSort, argsort_kernel, numbers | DTypeSet{DType::Bool});
  r.native(OpKind::Sample, sample_kernel, floats);
}
TESSEL_ISA_END
