// Reference kernels of the ReductionIndexing category: Reduce, Softmax, the scans (Cumsum,
// CumProd, CumMax), ArgMax / ArgMin, the orderings (TopK, Sort, ArgSort) and Sample.
//
// Floats are read as f64 and computed in f64; integers (and bool) are read as i64 and computed
// exactly, sums and products modulo 2^64 and then wrapped to the output dtype by the store. Every
// output element is written once, rounded to its dtype.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "backends/reference/kernels.h"
#include "runtime/rng.h"

namespace tessel::reference {
namespace {

bool exact(DType t) { return is_integer(t) || t == DType::Bool; }

// x viewed as [outer, n, inner] around one axis (a rank-0 tensor is one length-1 axis), with the
// row-major linear index of element (o, k, i); shape rules have validated the axis.
struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
  AxisView(const HostTensor& x, int64_t axis) {
    int rank = x.rank();
    if (rank == 0) return;
    if (axis < 0) axis += rank;
    for (int d = 0; d < rank; ++d) {
      if (d < axis) outer *= x.shape[d];
      if (d > axis) inner *= x.shape[d];
    }
    n = x.shape[axis];
  }
  int64_t at(int64_t o, int64_t k, int64_t i) const { return (o * n + k) * inner + i; }
};

// Element `linear` (row-major) as f64 (floats) or i64 (integers, bool).
template <class T>
T load_as(const HostTensor& t, int64_t linear) {
  if constexpr (std::is_same_v<T, double>)
    return t.get_f64(linear);
  else
    return t.get_i64(linear);
}
template <class T>
void store_as(const HostTensor& t, int64_t linear, T v) {
  if constexpr (std::is_same_v<T, double>)
    t.set_f64(linear, v);
  else
    t.set_i64(linear, v);
}

// ---------------------------------------------------------------------------------------------
// Reduce

// Which axes of `x` the node reduces (empty axes = all; negative axes wrap).
std::vector<bool> reduced_axes(const Node& node, int rank) {
  const std::vector<int64_t>& axes = node.attrs.ints("axes");
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes)
    if (rank > 0) reduced[a < 0 ? a + rank : a] = true;
  return reduced;
}

double max_nan(double a, double b) { return std::isnan(a) || a > b ? a : b; }
double min_nan(double a, double b) { return std::isnan(a) || a < b ? a : b; }

double reduce_f64(ReduceOp op, const std::vector<double>& v, int64_t correction) {
  const double n = static_cast<double>(v.size());
  auto sum_of = [&](auto f) {
    double s = 0;
    for (double x : v) s += f(x);
    return s;
  };
  auto variance = [&] {
    double mean = sum_of([](double x) { return x; }) / n;
    double ss = sum_of([&](double x) { return (x - mean) * (x - mean); });
    // PyTorch: the divisor is clamped at 0, so N <= correction gives inf (or NaN for 0 / 0).
    return ss / std::max(0.0, n - static_cast<double>(correction));
  };
  switch (op) {
    case ReduceOp::Sum:
      return sum_of([](double x) { return x; });
    case ReduceOp::Mean:
      return sum_of([](double x) { return x; }) / n;
    case ReduceOp::Max: {
      double m = v.at(0);
      for (double x : v) m = max_nan(m, x);
      return m;
    }
    case ReduceOp::Min: {
      double m = v.at(0);
      for (double x : v) m = min_nan(m, x);
      return m;
    }
    case ReduceOp::Prod: {
      double p = 1;
      for (double x : v) p *= x;
      return p;
    }
    case ReduceOp::LogSumExp: {
      double m = -std::numeric_limits<double>::infinity();
      for (double x : v) m = max_nan(m, x);
      if (std::isinf(m)) return m;  // all -inf (or empty) gives -inf; any +inf gives +inf
      return m + std::log(sum_of([&](double x) { return std::exp(x - m); }));
    }
    case ReduceOp::L1:
      return sum_of([](double x) { return std::abs(x); });
    case ReduceOp::L2:
      return std::sqrt(sum_of([](double x) { return x * x; }));
    case ReduceOp::SumSquare:
      return sum_of([](double x) { return x * x; });
    case ReduceOp::Var:
      return variance();
    case ReduceOp::Std:
      return std::sqrt(variance());
  }
  TESSEL_ASSERT(false, "unknown ReduceOp");
  return 0;
}

// Integer (and bool) reductions, exact modulo 2^64; the store wraps to the output dtype.
int64_t reduce_i64(const Node& node, ReduceOp op, const std::vector<int64_t>& v) {
  uint64_t acc = 0;
  switch (op) {
    case ReduceOp::Sum:
      for (int64_t x : v) acc += static_cast<uint64_t>(x);
      return static_cast<int64_t>(acc);
    case ReduceOp::Prod:
      acc = 1;
      for (int64_t x : v) acc *= static_cast<uint64_t>(x);
      return static_cast<int64_t>(acc);
    case ReduceOp::L1:
      for (int64_t x : v)
        acc += x < 0 ? uint64_t{0} - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
      return static_cast<int64_t>(acc);
    case ReduceOp::SumSquare:
      for (int64_t x : v) acc += static_cast<uint64_t>(x) * static_cast<uint64_t>(x);
      return static_cast<int64_t>(acc);
    case ReduceOp::Max:
      return *std::max_element(v.begin(), v.end());
    case ReduceOp::Min:
      return *std::min_element(v.begin(), v.end());
    case ReduceOp::Mean:
    case ReduceOp::LogSumExp:
    case ReduceOp::L2:
    case ReduceOp::Var:
    case ReduceOp::Std:
      break;  // floats only: the shape rule rejects integer inputs
  }
  throw_error(ErrorKind::Internal, node.where(), ": ReduceOp ", static_cast<int>(op),
              " has no integer kernel");
}

// Gathers the values of every output element's group (row-major over the reduced axes), then
// reduces each group on its own: plain and obviously right, at the cost of one copy of x.
template <class T>
std::vector<std::vector<T>> gather_groups(const HostTensor& x, const std::vector<bool>& reduced,
                                          int64_t num_out) {
  int rank = x.rank();
  std::vector<int64_t> out_stride(rank, 0);
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (reduced[d]) continue;
    out_stride[d] = s;
    s *= x.shape[d];
  }
  std::vector<std::vector<T>> groups(static_cast<size_t>(num_out));
  for_each_index(x.shape, [&](const std::vector<int64_t>& idx) {
    int64_t o = 0;
    for (int d = 0; d < rank; ++d) o += idx[d] * out_stride[d];
    if constexpr (std::is_same_v<T, double>)
      groups[o].push_back(at_f64(x, idx));
    else
      groups[o].push_back(at_i64(x, idx));
  });
  return groups;
}

void reduce_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  auto op = node.attrs.e<ReduceOp>("op");
  std::vector<bool> reduced = reduced_axes(node, x.rank());
  int64_t count = 1;
  for (int d = 0; d < x.rank(); ++d)
    if (reduced[d]) count *= x.shape[d];
  if (count == 0 && (op == ReduceOp::Max || op == ReduceOp::Min))
    throw_error(ErrorKind::Value, node.where(), ": ", op == ReduceOp::Max ? "Max" : "Min",
                " over an empty set of elements (x ", shape_str(x.shape),
                ") has no value; reduce over non-empty axes");
  int64_t num_out = out[0].numel();
  if (exact(x.dtype)) {
    auto groups = gather_groups<int64_t>(x, reduced, num_out);
    for (int64_t o = 0; o < num_out; ++o) out[0].set_i64(o, reduce_i64(node, op, groups[o]));
  } else {
    auto groups = gather_groups<double>(x, reduced, num_out);
    int64_t correction = node.attrs.i("correction");
    for (int64_t o = 0; o < num_out; ++o) out[0].set_f64(o, reduce_f64(op, groups[o], correction));
  }
}

// ---------------------------------------------------------------------------------------------
// Softmax

void softmax_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  AxisView a(in[0], node.attrs.i("axis"));
  bool log = node.attrs.b("log");
  std::vector<double> v(static_cast<size_t>(a.n));
  for (int64_t o = 0; o < a.outer; ++o)
    for (int64_t i = 0; i < a.inner; ++i) {
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < a.n; ++k) {
        v[k] = in[0].get_f64(a.at(o, k, i));
        m = max_nan(m, v[k]);
      }
      // Subtracting the max keeps exp in range; an all -inf row gives NaN, as in PyTorch.
      double s = 0;
      for (int64_t k = 0; k < a.n; ++k) s += std::exp(v[k] - m);
      for (int64_t k = 0; k < a.n; ++k) {
        double y = log ? (v[k] - m) - std::log(s) : std::exp(v[k] - m) / s;
        out[0].set_f64(a.at(o, k, i), y);
      }
    }
}

// ---------------------------------------------------------------------------------------------
// Scans: Cumsum (exclusive, reverse), CumProd (reverse), CumMax (reverse; NaN propagates).

enum class Scan { Sum, Prod, Max };

// Runs acc = step(acc, x) along the axis (backwards when reverse), writing acc after each
// element; an inclusive scan starts from the first element, an exclusive one from `identity`
// and writes acc before each element.
template <class T, class Step>
void scan(const Node& node, const HostTensor& x, const HostTensor& y, T identity, bool exclusive,
          Step step) {
  AxisView a(x, node.attrs.i("axis"));
  bool reverse = node.attrs.b("reverse");
  for (int64_t o = 0; o < a.outer; ++o)
    for (int64_t i = 0; i < a.inner; ++i) {
      T acc = identity;
      for (int64_t j = 0; j < a.n; ++j) {
        int64_t pos = a.at(o, reverse ? a.n - 1 - j : j, i);
        T v = load_as<T>(x, pos);
        if (exclusive) store_as<T>(y, pos, acc);
        acc = j == 0 && !exclusive ? v : step(acc, v);
        if (!exclusive) store_as<T>(y, pos, acc);
      }
    }
}

void scan_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out,
                 Scan kind) {
  const HostTensor& x = in[0];
  bool exclusive = kind == Scan::Sum && node.attrs.b("exclusive");
  if (exact(x.dtype)) {
    switch (kind) {
      case Scan::Sum:
        return scan<int64_t>(node, x, out[0], 0, exclusive, [](int64_t acc, int64_t v) {
          return static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
        });
      case Scan::Prod:
        return scan<int64_t>(node, x, out[0], 1, false, [](int64_t acc, int64_t v) {
          return static_cast<int64_t>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));
        });
      case Scan::Max:
        return scan<int64_t>(node, x, out[0], 0, false,
                             [](int64_t acc, int64_t v) { return std::max(acc, v); });
    }
  }
  switch (kind) {
    case Scan::Sum:
      return scan<double>(node, x, out[0], 0.0, exclusive,
                          [](double acc, double v) { return acc + v; });
    case Scan::Prod:
      return scan<double>(node, x, out[0], 1.0, false,
                          [](double acc, double v) { return acc * v; });
    case Scan::Max:
      // Once a NaN is seen the running maximum stays NaN (torch.cummax).
      return scan<double>(node, x, out[0], 0.0, false, max_nan);
  }
}

void cumsum_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  scan_kernel(node, in, out, Scan::Sum);
}
void cumprod_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  scan_kernel(node, in, out, Scan::Prod);
}
void cummax_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  scan_kernel(node, in, out, Scan::Max);
}

// ---------------------------------------------------------------------------------------------
// ArgMax / ArgMin: first occurrence (last with select_last); NaN is the extreme of both, so the
// first NaN wins (torch / numpy).

template <class T>
void arg_extreme(const Node& node, const HostTensor& x, const HostTensor& y, bool want_max) {
  AxisView a(x, node.attrs.i("axis"));
  bool select_last = node.attrs.b("select_last");
  if (a.n == 0)
    throw_error(ErrorKind::Value, node.where(), ": the axis is empty (x ", shape_str(x.shape),
                "), so there is no index to return");
  auto is_nan = [](T v) {
    if constexpr (std::is_same_v<T, double>)
      return std::isnan(v);
    else
      return (void)v, false;
  };
  for (int64_t o = 0; o < a.outer; ++o)
    for (int64_t i = 0; i < a.inner; ++i) {
      int64_t best = 0;
      T bv = load_as<T>(x, a.at(o, 0, i));
      for (int64_t k = 1; k < a.n; ++k) {
        T v = load_as<T>(x, a.at(o, k, i));
        bool same = v == bv || (is_nan(v) && is_nan(bv));
        bool better = !is_nan(bv) && (is_nan(v) || (want_max ? v > bv : v < bv));
        if (better || (select_last && same)) {
          best = k;
          bv = v;
        }
      }
      y.set_i64(o * a.inner + i, best);
    }
}

void argmax_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  if (exact(in[0].dtype))
    arg_extreme<int64_t>(node, in[0], out[0], true);
  else
    arg_extreme<double>(node, in[0], out[0], true);
}

void argmin_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  if (exact(in[0].dtype))
    arg_extreme<int64_t>(node, in[0], out[0], false);
  else
    arg_extreme<double>(node, in[0], out[0], false);
}

// ---------------------------------------------------------------------------------------------
// Orderings: TopK, Sort, ArgSort. One total order: NaN is larger than every number and equal to
// other NaNs (torch); -0 equals +0. Sorts are stable in both directions, so equal values keep
// their index order (TopK's ties: lower index first).

template <class T>
bool less_nan_last(T a, T b) {
  if constexpr (std::is_same_v<T, double>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

// The stable order of row (o, ·, i) as positions along the axis.
template <class T>
std::vector<int64_t> stable_order(const HostTensor& x, const AxisView& a, int64_t o, int64_t i,
                                  bool descending, std::vector<T>& values) {
  values.resize(static_cast<size_t>(a.n));
  for (int64_t k = 0; k < a.n; ++k) values[k] = load_as<T>(x, a.at(o, k, i));
  std::vector<int64_t> order(static_cast<size_t>(a.n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
    return descending ? less_nan_last(values[q], values[p]) : less_nan_last(values[p], values[q]);
  });
  return order;
}

// Writes the first `k` of each row's stable order: values to `y` (when given), positions to
// `idx` (when given). Sort: k = n; TopK: largest = descending.
template <class T>
void ordered(const HostTensor& x, int64_t axis, bool descending, int64_t k, const HostTensor* y,
             const HostTensor* idx) {
  AxisView a(x, axis);
  AxisView b = a;
  b.n = k;  // the outputs' view: the axis has k entries
  std::vector<T> values;
  for (int64_t o = 0; o < a.outer; ++o)
    for (int64_t i = 0; i < a.inner; ++i) {
      std::vector<int64_t> order = stable_order<T>(x, a, o, i, descending, values);
      for (int64_t j = 0; j < k; ++j) {
        if (y) store_as<T>(*y, b.at(o, j, i), values[order[j]]);
        if (idx) idx->set_i64(b.at(o, j, i), order[j]);
      }
    }
}

void ordered_kernel(const HostTensor& x, int64_t axis, bool descending, int64_t k,
                    const HostTensor* y, const HostTensor* idx) {
  if (exact(x.dtype))
    ordered<int64_t>(x, axis, descending, k, y, idx);
  else
    ordered<double>(x, axis, descending, k, y, idx);
}

// sorted = false returns the same (sorted) order as sorted = true: any order is allowed there,
// and one deterministic answer keeps backends comparable.
void topk_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  ordered_kernel(in[0], node.attrs.i("axis"), node.attrs.b("largest"), node.attrs.i("k"), &out[0],
                 &out[1]);
}

void sort_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  AxisView a(in[0], node.attrs.i("axis"));
  ordered_kernel(in[0], node.attrs.i("axis"), node.attrs.b("descending"), a.n, &out[0], nullptr);
}

void argsort_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  AxisView a(in[0], node.attrs.i("axis"));
  ordered_kernel(in[0], node.attrs.i("axis"), node.attrs.b("descending"), a.n, nullptr, &out[0]);
}

// ---------------------------------------------------------------------------------------------
// Sample: one id per row of logits [..., V], row r in row-major order over the leading dims.
//
//   temperature 0: the first maximum (NaN counts as the maximum, as ArgMax).
//   otherwise:     p = softmax(logits / temperature), in f64;
//     top_k > 0:   keep the top_k most probable tokens (ties: lower index first; top_k >= V
//                  keeps all);
//     top_p < 1:   of those, keep the smallest prefix in descending-probability order (ties:
//                  lower index first) whose mass, relative to the tokens top_k kept, is >= top_p
//                  (at least one token);
//     draw:        q = p renormalized over the kept tokens, u = rng::uniform(seed, r), and return
//                  the first kept token, in ascending vocabulary order, whose cumulative q
//                  exceeds u (the last kept token if rounding leaves none).
//
// A row with a NaN or +inf logit, or with every logit -inf, has no distribution: Value error.

int64_t sample_row(const Node& node, const std::vector<double>& logits, uint64_t row) {
  const int64_t vocab = static_cast<int64_t>(logits.size());
  double temperature = node.attrs.f("temperature");
  if (temperature == 0) {
    int64_t best = 0;
    for (int64_t j = 1; j < vocab; ++j)
      if (!std::isnan(logits[best]) && (std::isnan(logits[j]) || logits[j] > logits[best]))
        best = j;
    return best;
  }
  double m = -std::numeric_limits<double>::infinity();
  for (double v : logits) {
    if (std::isnan(v) || v == std::numeric_limits<double>::infinity())
      throw_error(ErrorKind::Value, node.where(), ": logits row ", row,
                  " holds NaN or +inf; sampling needs finite or -inf logits");
    m = std::max(m, v / temperature);
  }
  if (std::isinf(m))
    throw_error(ErrorKind::Value, node.where(), ": every logit of row ", row,
                " is -inf; sampling needs at least one finite logit");
  std::vector<double> p(static_cast<size_t>(vocab));
  double total = 0;
  for (int64_t j = 0; j < vocab; ++j) total += p[j] = std::exp(logits[j] / temperature - m);
  for (double& v : p) v /= total;

  std::vector<int64_t> order(static_cast<size_t>(vocab));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return p[a] > p[b]; });
  int64_t top_k = node.attrs.i("top_k");
  int64_t kept = top_k > 0 ? std::min(top_k, vocab) : vocab;
  double top_p = node.attrs.f("top_p");
  if (top_p < 1) {
    double mass = 0;
    for (int64_t t = 0; t < kept; ++t) mass += p[order[t]];
    double prefix = 0;
    for (int64_t t = 0; t < kept; ++t) {
      prefix += p[order[t]];
      if (prefix / mass >= top_p) {
        kept = t + 1;
        break;
      }
    }
  }
  std::vector<bool> keep(static_cast<size_t>(vocab), false);
  double kept_mass = 0;
  for (int64_t t = 0; t < kept; ++t) {
    keep[order[t]] = true;
    kept_mass += p[order[t]];
  }
  double u = rng::uniform(static_cast<uint64_t>(node.attrs.i("seed")), row);
  double cumulative = 0;
  int64_t last = -1;
  for (int64_t j = 0; j < vocab; ++j) {
    if (!keep[j]) continue;
    cumulative += p[j] / kept_mass;
    if (cumulative > u) return j;
    last = j;
  }
  return last;
}

void sample_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& logits = in[0];
  int64_t vocab = logits.shape.back();
  std::vector<double> row(static_cast<size_t>(vocab));
  for (int64_t r = 0; r < out[0].numel(); ++r) {
    for (int64_t j = 0; j < vocab; ++j) row[j] = logits.get_f64(r * vocab + j);
    out[0].set_i64(r, sample_row(node, row, static_cast<uint64_t>(r)));
  }
}

}  // namespace

void register_ReductionIndexing(Registry& r) {
  const DTypeSet bool_type{DType::Bool};
  r.native(OpKind::Reduce, reduce_kernel, kFloats);
  std::vector<int> int_ops;
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod, ReduceOp::L1,
                      ReduceOp::SumSquare})
    int_ops.push_back(static_cast<int>(op));
  r.native(OpKind::Reduce, reduce_kernel, dtypes::kInt, int_ops);
  r.native(OpKind::Reduce, reduce_kernel, bool_type,
           {static_cast<int>(ReduceOp::Max), static_cast<int>(ReduceOp::Min)});
  r.native(OpKind::Softmax, softmax_kernel, kFloats);
  r.native(OpKind::Cumsum, cumsum_kernel, kNumbers);
  r.native(OpKind::CumProd, cumprod_kernel, kNumbers);
  r.native(OpKind::CumMax, cummax_kernel, kNumbers);
  r.native(OpKind::ArgMax, argmax_kernel, kNumbers | bool_type);
  r.native(OpKind::ArgMin, argmin_kernel, kNumbers | bool_type);
  r.native(OpKind::TopK, topk_kernel, kNumbers);
  r.native(OpKind::Sort, sort_kernel, kNumbers | bool_type);
  r.native(OpKind::ArgSort, argsort_kernel, kNumbers | bool_type);
  r.native(OpKind::Sample, sample_kernel, kFloats);
}

}  // namespace tessel::reference
