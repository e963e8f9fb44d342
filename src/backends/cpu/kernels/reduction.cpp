// cpu kernels: Reduce (every ReduceOp, any axes) and the reduction family's registration. The
// reduced axes are coalesced into x viewed as [outer, n, inner]: rows (inner = 1) reduce with
// vector accumulators along the row, outer-axis reductions vectorize across the kept inner dim.
#include <cmath>
#include <limits>

#include "backends/cpu/kernels/reduction_family.h"
#include "ir/graph.h"
#include "tessel/error.h"
// clang-format off
#include "backends/cpu/kernels/reduction_common.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

using namespace red;

// Σ f(x[o, k, j], param[o, j]) over k for every output (o, j), into out (f64).
template <class T, class F>
void sum_pass(const T* x, int64_t outer, int64_t n, int64_t inner, const T* param, double* out,
              F f) {
  using V = VecOf<T>;
  constexpr int L = kLanes<V>;
  if (inner == 1) {
    for_rows<double>(
        x, outer, n, out,
        [&](int64_t o, const T* row, int64_t len) {
          V p = splat<V>(param ? param[o] : T(0));
          return sum_map(row, len, [&](V v) { return f(v, p); });
        },
        [](double a, double b) { return a + b; });
    return;
  }
  constexpr int W = 4 * L;  // columns per tile
  const int64_t tiles = (inner + W - 1) / W;
  parallel_for(outer * tiles, std::max<int64_t>(1, kGrainElems / std::max<int64_t>(n * W, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t item = b; item < e; ++item) {
                   int64_t o = item / tiles, j0 = (item % tiles) * W;
                   int w = static_cast<int>(std::min<int64_t>(W, inner - j0));
                   const T* base = x + o * n * inner + j0;
                   V pv[4];
                   for (int q = 0; q < 4; ++q) {
                     int lanes = std::clamp(w - q * L, 0, L);
                     pv[q] = param ? load_partial<V>(param + o * inner + j0 + q * L, lanes) : V{};
                   }
                   double acc[W] = {};
                   constexpr int64_t kBlock = 256;
                   for (int64_t kb = 0; kb < n; kb += kBlock) {
                     int64_t ke = std::min(n, kb + kBlock);
                     V a[4] = {};
                     if (w == W) {
                       for (int64_t k = kb; k < ke; ++k) {
                         const T* r = base + k * inner;
                         for (int q = 0; q < 4; ++q) a[q] += f(load<V>(r + q * L), pv[q]);
                       }
                     } else {
                       for (int64_t k = kb; k < ke; ++k) {
                         const T* r = base + k * inner;
                         for (int q = 0; q * L < w; ++q) {
                           int lanes = std::min(L, w - q * L);
                           a[q] += keep_first(f(load_partial<V>(r + q * L, lanes), pv[q]), lanes);
                         }
                       }
                     }
                     for (int q = 0; q < 4; ++q)
                       for (int l = 0; l < L; ++l) acc[q * L + l] += static_cast<double>(a[q][l]);
                   }
                   for (int j = 0; j < w; ++j) out[o * inner + j0 + j] = acc[j];
                 }
               });
}

// Max or min (NaN-propagating) over k for every output; n >= 1.
template <class T>
void extreme_pass(const T* x, int64_t outer, int64_t n, int64_t inner, bool want_max, T* out) {
  using V = VecOf<T>;
  using M = decltype(V{} < V{});
  constexpr int L = kLanes<V>;
  const T init =
      want_max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  auto step = [want_max](V acc, V v) {
    return want_max ? (v > acc ? v : acc) : (v < acc ? v : acc);
  };
  auto finish = [&](V acc, M nan) {
    for (int l = 0; l < L; ++l)
      if (nan[l]) return std::numeric_limits<T>::quiet_NaN();
    return want_max ? reduce_max(acc) : reduce_min(acc);
  };
  if (inner == 1) {
    for_rows<T>(
        x, outer, n, out,
        [&](int64_t, const T* row, int64_t len) {
          V a0 = splat<V>(init), a1 = a0;
          M nan{};
          int64_t i = 0;
          for (; i + 2 * L <= len; i += 2 * L) {
            V v0 = load<V>(row + i), v1 = load<V>(row + i + L);
            a0 = step(a0, v0);
            a1 = step(a1, v1);
            nan |= (v0 != v0) | (v1 != v1);
          }
          for (; i < len; i += L) {
            int lanes = static_cast<int>(std::min<int64_t>(L, len - i));
            V v = load_partial<V>(row + i, lanes, init);
            a0 = step(a0, v);
            nan |= v != v;
          }
          return finish(step(a0, a1), nan);
        },
        [want_max](T a, T b) {
          if (a != a) return a;
          if (b != b) return b;
          return want_max ? std::max(a, b) : std::min(a, b);
        });
    return;
  }
  const int64_t tiles = (inner + L - 1) / L;
  parallel_for(
      outer * tiles, std::max<int64_t>(1, kGrainElems / std::max<int64_t>(n * L, 1)),
      [&](int64_t b, int64_t e) {
        for (int64_t item = b; item < e; ++item) {
          int64_t o = item / tiles, j0 = (item % tiles) * L;
          int w = static_cast<int>(std::min<int64_t>(L, inner - j0));
          const T* base = x + o * n * inner + j0;
          V acc = splat<V>(init);
          M nan{};
          for (int64_t k = 0; k < n; ++k) {
            V v = w == L ? load<V>(base + k * inner) : load_partial<V>(base + k * inner, w, init);
            acc = step(acc, v);
            nan |= v != v;
          }
          for (int j = 0; j < w; ++j)
            out[o * inner + j0 + j] = nan[j] ? std::numeric_limits<T>::quiet_NaN() : acc[j];
        }
      });
}

// Π over k in f64 (as the reference: no f32 overflow in the middle of a product).
template <class T>
void prod_pass(const T* x, int64_t outer, int64_t n, int64_t inner, double* out) {
  parallel_for(outer * inner, std::max<int64_t>(1, kGrainElems / std::max<int64_t>(n, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t item = b; item < e; ++item) {
                   int64_t o = item / inner, j = item % inner;
                   const T* p = x + o * n * inner + j;
                   double acc = 1;
                   for (int64_t k = 0; k < n; ++k) acc *= static_cast<double>(p[k * inner]);
                   out[item] = acc;
                 }
               });
}

double empty_result(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::L1:
    case ReduceOp::L2:
    case ReduceOp::SumSquare:
      return 0;
    case ReduceOp::Prod:
      return 1;
    case ReduceOp::LogSumExp:
      return -std::numeric_limits<double>::infinity();
    case ReduceOp::Mean:
    case ReduceOp::Var:
    case ReduceOp::Std:
    case ReduceOp::Max:  // rejected before
    case ReduceOp::Min:
      return std::numeric_limits<double>::quiet_NaN();
  }
  return 0;
}

template <class T>
void reduce_float(ReduceOp op, int64_t correction, const T* x, int64_t outer, int64_t n,
                  int64_t inner, T* y) {
  using V = VecOf<T>;
  const int64_t m = outer * inner;
  std::shared_ptr<Storage> tmp_owner = host_allocate(static_cast<size_t>(m) * sizeof(double));
  double* acc = reinterpret_cast<double*>(tmp_owner->bytes.get());
  auto finish = [&](auto g) {
    parallel_for(m, 65536, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = static_cast<T>(g(i));
    });
  };
  const double dn = static_cast<double>(n);
  auto sum_with = [&](const T* param, auto f) { sum_pass<T>(x, outer, n, inner, param, acc, f); };
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
      sum_with(nullptr, [&](V v, V) { return v; });
      return finish([&](int64_t i) { return op == ReduceOp::Mean ? acc[i] / dn : acc[i]; });
    case ReduceOp::L1:
      sum_with(nullptr, [&](V v, V) { return v < 0 ? -v : v; });
      return finish([&](int64_t i) { return acc[i]; });
    case ReduceOp::L2:
    case ReduceOp::SumSquare:
      sum_with(nullptr, [&](V v, V) { return v * v; });
      return finish([&](int64_t i) { return op == ReduceOp::L2 ? std::sqrt(acc[i]) : acc[i]; });
    case ReduceOp::Max:
    case ReduceOp::Min:
      return extreme_pass<T>(x, outer, n, inner, op == ReduceOp::Max, y);
    case ReduceOp::Prod:
      prod_pass<T>(x, outer, n, inner, acc);
      return finish([&](int64_t i) { return acc[i]; });
    case ReduceOp::LogSumExp: {
      // y holds the max until the sum of e^(x - max) is known.
      extreme_pass<T>(x, outer, n, inner, true, y);
      sum_with(y, [&](V v, V p) { return vexp(v - p); });
      return finish([&](int64_t i) {
        double mx = static_cast<double>(y[i]);
        if (std::isinf(mx) || std::isnan(mx)) return mx;
        return mx + std::log(acc[i]);
      });
    }
    case ReduceOp::Var:
    case ReduceOp::Std: {
      sum_with(nullptr, [&](V v, V) { return v; });
      finish([&](int64_t i) { return acc[i] / dn; });  // y = mean for now
      sum_with(y, [&](V v, V p) { return (v - p) * (v - p); });
      double div = std::max(0.0, dn - static_cast<double>(correction));
      return finish([&](int64_t i) {
        double var = acc[i] / div;
        return op == ReduceOp::Std ? std::sqrt(var) : var;
      });
    }
  }
}

// Integers (and bool): exact modulo 2^64 in i64; the store wraps to the output dtype.
void reduce_int(ReduceOp op, const int64_t* x, int64_t outer, int64_t n, int64_t inner,
                int64_t* y) {
  parallel_for(outer, std::max<int64_t>(1, kGrainElems / std::max<int64_t>(n * inner, 1)),
               [&](int64_t b, int64_t e) {
                 std::vector<uint64_t> acc(static_cast<size_t>(inner));
                 for (int64_t o = b; o < e; ++o) {
                   const int64_t* p = x + o * n * inner;
                   auto run = [&](uint64_t init, auto step) {
                     std::fill(acc.begin(), acc.end(), init);
                     for (int64_t k = 0; k < n; ++k)
                       for (int64_t j = 0; j < inner; ++j) acc[j] = step(acc[j], p[k * inner + j]);
                     for (int64_t j = 0; j < inner; ++j)
                       y[o * inner + j] = static_cast<int64_t>(acc[j]);
                   };
                   switch (op) {
                     case ReduceOp::Sum:
                       run(0, [](uint64_t a, int64_t v) { return a + static_cast<uint64_t>(v); });
                       break;
                     case ReduceOp::Prod:
                       run(1, [](uint64_t a, int64_t v) { return a * static_cast<uint64_t>(v); });
                       break;
                     case ReduceOp::L1:
                       run(0, [](uint64_t a, int64_t v) {
                         uint64_t u = static_cast<uint64_t>(v);
                         return a + (v < 0 ? uint64_t{0} - u : u);
                       });
                       break;
                     case ReduceOp::SumSquare:
                       run(0, [](uint64_t a, int64_t v) {
                         uint64_t u = static_cast<uint64_t>(v);
                         return a + u * u;
                       });
                       break;
                     case ReduceOp::Max:
                       run(static_cast<uint64_t>(std::numeric_limits<int64_t>::min()),
                           [](uint64_t a, int64_t v) {
                             return static_cast<uint64_t>(std::max(static_cast<int64_t>(a), v));
                           });
                       break;
                     case ReduceOp::Min:
                       run(static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                           [](uint64_t a, int64_t v) {
                             return static_cast<uint64_t>(std::min(static_cast<int64_t>(a), v));
                           });
                       break;
                     case ReduceOp::Mean:
                     case ReduceOp::LogSumExp:
                     case ReduceOp::L2:
                     case ReduceOp::Var:
                     case ReduceOp::Std:
                       break;  // floats only: the shape rule rejects integer inputs
                   }
                 }
               });
}

template <class T>
void reduce_typed(ReduceOp op, int64_t correction, const HostTensor& xv, int64_t outer, int64_t n,
                  int64_t inner, const HostTensor& y) {
  Staged<T> x = stage<T>(xv);
  OutBuf<T> out(y);
  if constexpr (std::is_same_v<T, int64_t>)
    reduce_int(op, x.p, outer, n, inner, out.p);
  else
    reduce_float<T>(op, correction, x.p, outer, n, inner, out.p);
  out.finish();
}

void reduce_kernel(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  auto op = node.attrs.e<ReduceOp>("op");
  const int rank = x.rank();
  const std::vector<int64_t>& axes = node.attrs.ints("axes");
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes)
    if (rank > 0) reduced[a < 0 ? a + rank : a] = true;
  int64_t count = 1;
  for (int d = 0; d < rank; ++d)
    if (reduced[d]) count *= x.shape[d];
  if (count == 0 && (op == ReduceOp::Max || op == ReduceOp::Min))
    throw_error(ErrorKind::Value, node.where(), ": ", op == ReduceOp::Max ? "Max" : "Min",
                " over an empty set of elements (x ", shape_str(x.shape),
                ") has no value; reduce over non-empty axes");
  const int64_t num_out = y.numel();
  if (num_out == 0) return;
  const bool exact = is_integer(x.dtype) || x.dtype == DType::Bool;
  if (count == 0) {
    double v = empty_result(op);
    if (exact) {
      std::vector<int64_t> vals(static_cast<size_t>(num_out), static_cast<int64_t>(v));
      from_i64(vals.data(), y.data(), y.dtype, num_out);
    } else {
      std::vector<double> vals(static_cast<size_t>(num_out), v);
      from_f64(vals.data(), y.data(), y.dtype, 1, num_out);
    }
    return;
  }
  // Coalesce: drop size-1 dims, merge neighbours of the same kind. One reduced run gives
  // [outer, n, inner] in place; several are first gathered as [kept..., reduced...].
  struct Run {
    int64_t size;
    bool reduced;
  };
  std::vector<Run> runs;
  for (int d = 0; d < rank; ++d) {
    if (x.shape[d] == 1) continue;
    if (!runs.empty() && runs.back().reduced == reduced[d])
      runs.back().size *= x.shape[d];
    else
      runs.push_back({x.shape[d], reduced[d]});
  }
  int reduced_runs = 0;
  for (const Run& r : runs) reduced_runs += r.reduced;
  int64_t outer = 1, n = 1, inner = 1;
  HostTensor view = x;
  if (reduced_runs <= 1) {
    bool seen = false;
    for (const Run& r : runs) {
      if (r.reduced) {
        n = r.size;
        seen = true;
      } else {
        (seen ? inner : outer) *= r.size;
      }
    }
  } else {
    std::vector<int> perm;
    for (int d = 0; d < rank; ++d)
      if (!reduced[d]) perm.push_back(d);
    for (int d = 0; d < rank; ++d)
      if (reduced[d]) perm.push_back(d);
    view = x.permuted(perm);
    outer = num_out;
    n = count;
  }
  int64_t correction = node.attrs.i("correction");
  if (exact)
    reduce_typed<int64_t>(op, correction, view, outer, n, inner, y);
  else if (x.dtype == DType::F64)
    reduce_typed<double>(op, correction, view, outer, n, inner, y);
  else
    reduce_typed<float>(op, correction, view, outer, n, inner, y);
}

}  // namespace

void register_reduction(KernelRegistry& r) {
  const DTypeSet floats = dtypes::kFloat | dtypes::kFp8;
  r.native(OpKind::Reduce, reduce_kernel, floats);
  std::vector<int> int_ops;
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod, ReduceOp::L1,
                      ReduceOp::SumSquare})
    int_ops.push_back(static_cast<int>(op));
  r.native(OpKind::Reduce, reduce_kernel, dtypes::kInt, int_ops);
  r.native(OpKind::Reduce, reduce_kernel, DTypeSet{DType::Bool},
           {static_cast<int>(ReduceOp::Max), static_cast<int>(ReduceOp::Min)});
  register_softmax_scan(r);
  register_orderings(r);
}
TESSEL_ISA_END
