// The labeled contraction (linear_algebra.h): labels are grouped into batch (both operands and
// the output), M (x and output), N (y and output) and K (summed); each group's labels merge into
// one strided dim where the layouts allow, the rest become loops around GEMM calls (outer K runs
// accumulate). Also integer GEMM, exact and wrapping.
#include <algorithm>
#include <cstring>

#include "backends/cpu/convert.h"
#include "backends/cpu/kernels/linear_algebra.h"
#include "runtime/host_allocator.h"
#include "runtime/thread_pool.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

// Calls fn(type tag) with the C++ type of integer dtype dt.
template <class Fn>
void with_int_type(DType dt, Fn&& fn) {
  if (dt == DType::U8)
    fn(uint8_t{});
  else if (dt == DType::I8)
    fn(int8_t{});
  else if (dt == DType::I16)
    fn(int16_t{});
  else if (dt == DType::I32)
    fn(int32_t{});
  else
    fn(int64_t{});
}

// dst[i] = src[i·stride] as U (two's complement), for i < n.
template <class U>
void load_wrapped(const void* src, DType dt, int64_t stride, U* dst, int64_t n) {
  with_int_type(dt, [&](auto tag) {
    using S = decltype(tag);
    const S* s = static_cast<const S*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<U>(static_cast<int64_t>(s[i * stride]));
  });
}

const void* at(const GemmOperand& x, int64_t i, int64_t j) {
  return static_cast<const uint8_t*>(x.data) + (i * x.rs + j * x.cs) * dtype_size(x.dtype);
}

// One group's labels (outer to inner) merged into runs: a run is a dim whose strides in every
// checked operand are those of a single strided dim.
struct Dim {
  int64_t size = 1, x = 0, y = 0, c = 0;
};

std::vector<Dim> merge_runs(const std::vector<Dim>& dims) {
  std::vector<Dim> runs;
  for (const Dim& d : dims) {
    if (!runs.empty()) {
      Dim& r = runs.back();
      if (r.x == d.x * d.size && r.y == d.y * d.size && r.c == d.c * d.size) {
        r.size *= d.size;
        r.x = d.x, r.y = d.y, r.c = d.c;
        continue;
      }
    }
    runs.push_back(d);
  }
  return runs;
}

// (x, y, c) element offsets of every index of `loops`, in row-major order.
struct Offsets {
  int64_t x, y, c;
};
std::vector<Offsets> loop_offsets(const std::vector<Dim>& loops) {
  int64_t total = 1;
  for (const Dim& d : loops) total *= d.size;
  std::vector<Offsets> out;
  out.reserve(static_cast<size_t>(total));
  std::vector<int64_t> idx(loops.size(), 0);
  Offsets o{0, 0, 0};
  for (int64_t t = 0; t < total; ++t) {
    out.push_back(o);
    for (int d = static_cast<int>(loops.size()) - 1; d >= 0; --d) {
      const Dim& L = loops[d];
      o.x += L.x, o.y += L.y, o.c += L.c;
      if (++idx[d] < L.size) break;
      o.x -= L.x * L.size, o.y -= L.y * L.size, o.c -= L.c * L.size;
      idx[d] = 0;
    }
  }
  return out;
}

template <class T>
void contract_typed(const std::vector<int64_t>& sizes, LabeledView x, LabeledView y,
                    const std::vector<int>& out_labels, void* out, DType out_dtype) {
  const size_t labels = sizes.size();
  std::vector<int64_t> c_stride(labels, 0);
  std::vector<bool> in_out(labels, false);
  int64_t numel = 1;
  for (int i = static_cast<int>(out_labels.size()) - 1; i >= 0; --i) {
    c_stride[out_labels[i]] = numel;
    in_out[out_labels[i]] = true;
    numel *= sizes[out_labels[i]];
  }
  if (numel == 0) return;
  // GEMM writes C by rows: the output's innermost label must come from y.
  for (int i = static_cast<int>(out_labels.size()) - 1; i >= 0; --i) {
    const int l = out_labels[i];
    if (sizes[l] == 1) continue;
    if (x.strides[l] != 0 && y.strides[l] == 0) std::swap(x, y);
    break;
  }
  auto dim = [&](int l) { return Dim{sizes[l], x.strides[l], y.strides[l], c_stride[l]}; };
  std::vector<Dim> batch, m_dims, n_dims, k_dims;
  for (int l : out_labels) {
    if (sizes[l] == 1) continue;
    const bool xh = x.strides[l] != 0, yh = y.strides[l] != 0;
    (xh == yh ? batch : xh ? m_dims : n_dims).push_back(dim(l));
  }
  bool empty_sum = false;
  for (size_t l = 0; l < labels; ++l)
    if (!in_out[l] && sizes[l] != 1 && (x.has[l] || y.has[l])) {
      k_dims.push_back(dim(static_cast<int>(l)));
      k_dims.back().c = 0;
      empty_sum = empty_sum || sizes[l] == 0;
    }
  if (empty_sum) k_dims = {Dim{0, 0, 0, 0}};
  std::vector<Dim> m_runs = merge_runs(m_dims), n_runs = merge_runs(n_dims),
                   k_runs = merge_runs(k_dims);
  auto inner = [](std::vector<Dim>& runs) {
    Dim d;
    if (!runs.empty()) {
      d = runs.back();
      runs.pop_back();
    }
    return d;
  };
  const Dim M = inner(m_runs), N = inner(n_runs), K = inner(k_runs);
  std::vector<Dim> loops = batch;
  loops.insert(loops.end(), m_runs.begin(), m_runs.end());
  loops.insert(loops.end(), n_runs.begin(), n_runs.end());

  // C is `out` when it is of the compute type and rows are contiguous; otherwise a scratch
  // buffer laid out as (loops, M, N), copied out at the end.
  const bool direct = out_dtype == kComputeDType<T> && (N.size == 1 || N.c == 1);
  std::shared_ptr<Storage> scratch;
  T* c = static_cast<T*>(out);
  std::vector<Dim> copy_dims;  // (size, -, -, out stride) with x = the scratch stride
  Dim Mc = M, Nc = N;
  std::vector<Dim> loops_c = loops;
  if (!direct) {
    scratch = host_allocate(static_cast<size_t>(numel) * sizeof(T));
    c = reinterpret_cast<T*>(scratch->bytes.get());
    int64_t s = 1;
    Nc.c = s, s *= N.size;
    Mc.c = s, s *= M.size;
    for (int i = static_cast<int>(loops_c.size()) - 1; i >= 0; --i)
      loops_c[i].c = s, s *= loops[i].size;
    for (size_t i = 0; i < loops.size(); ++i)
      copy_dims.push_back({loops[i].size, loops_c[i].c, 0, loops[i].c});
    copy_dims.push_back({M.size, Mc.c, 0, M.c});
    copy_dims.push_back({N.size, Nc.c, 0, N.c});
  }

  const std::vector<Offsets> items = loop_offsets(loops_c), sums = loop_offsets(k_runs);
  const int xs = dtype_size(x.dtype), ys = dtype_size(y.dtype);
  // One product (no batch, one sum) into another dtype: the GEMM's epilogue stores each finished
  // tile of C into `out` while it is in cache, instead of a pass over all of C afterwards (bf16
  // 1024 × 512 × 2048 on two threads: that pass was ~5% of the samples).
  struct StoreOut {
    uint8_t* out;
    DType dt;
    int64_t rs, cs;
  };
  const StoreOut store_out{static_cast<uint8_t*>(out), out_dtype, M.c, N.c};
  GemmEpilogue<T> to_out;
  const bool fused_out =
      std::is_floating_point_v<T> && !direct && items.size() == 1 && sums.size() == 1;
  if constexpr (std::is_floating_point_v<T>) {
    to_out.tile_ctx = &store_out;
    // bf16 rows: stored by the pair kernel from its registers where the product runs there.
    if (out_dtype == DType::BF16 && N.c == 1) {
      to_out.out_bf16 = static_cast<uint16_t*>(out);
      to_out.ld_out = M.c;
    }
    to_out.tile = [](const void* ctx, T* cc, int64_t ldc, int64_t i0, int64_t i1, int64_t j0,
                     int64_t j1) {
      const auto& so = *static_cast<const StoreOut*>(ctx);
      const int64_t os = dtype_size(so.dt);
      for (int64_t i = i0; i < i1; ++i)
        store_as(cc + i * ldc + j0, so.out + (i * so.rs + j0 * so.cs) * os, so.dt, so.cs, j1 - j0);
    };
  }
  auto run_item = [&](const Offsets& o) {
    for (size_t s = 0; s < sums.size(); ++s) {
      const Offsets& q = sums[s];
      GemmOperand a{static_cast<const uint8_t*>(x.data) + (o.x + q.x) * xs, x.dtype, M.x, K.x};
      GemmOperand b{static_cast<const uint8_t*>(y.data) + (o.y + q.y) * ys, y.dtype, K.y, N.y};
      if constexpr (std::is_floating_point_v<T>)
        gemm_ex<T>(M.size, N.size, K.size, a, b, c + o.c, Mc.c, s > 0,
                   fused_out ? &to_out : nullptr);
      else
        int_gemm<T>(M.size, N.size, K.size, a, b, c + o.c, Mc.c, s > 0);
    }
  };
  const double item_flops = 2.0 * M.size * N.size * std::max<int64_t>(K.size, 1) * sums.size();
  if (items.size() > 1 && item_flops < 4e6) {
    // Many small products: one per thread at a time, each GEMM single-threaded.
    const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(1e5 / (item_flops + 1)));
    parallel_for(static_cast<int64_t>(items.size()), grain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) run_item(items[i]);
    });
  } else {
    for (const Offsets& o : items) run_item(o);
  }
  if (direct || fused_out) return;
  // Copy out: every run of the innermost dim in one strided store.
  std::vector<Dim> nontrivial;
  for (const Dim& d : copy_dims)
    if (d.size != 1) nontrivial.push_back(d);
  copy_dims = merge_runs(nontrivial);
  const Dim last = copy_dims.empty() ? Dim{} : copy_dims.back();
  if (!copy_dims.empty()) copy_dims.pop_back();
  const std::vector<Offsets> runs = loop_offsets(copy_dims);
  parallel_for(static_cast<int64_t>(runs.size()),
               std::max<int64_t>(1, 16384 / std::max<int64_t>(last.size, 1)),
               [&](int64_t r0, int64_t r1) {
                 const int os = dtype_size(out_dtype);
                 for (int64_t r = r0; r < r1; ++r)
                   store_as(c + runs[r].x, static_cast<uint8_t*>(out) + runs[r].c * os, out_dtype,
                            last.c, last.size);
               });
}

}  // namespace

template <class U>
void store_wrapped(const U* src, void* dst, DType dt, int64_t stride, int64_t n) {
  with_int_type(dt, [&](auto tag) {
    using S = decltype(tag);
    S* d = static_cast<S*>(dst);
    for (int64_t i = 0; i < n; ++i) d[i * stride] = static_cast<S>(src[i]);
  });
}
template void store_wrapped<uint32_t>(const uint32_t*, void*, DType, int64_t, int64_t);
template void store_wrapped<uint64_t>(const uint64_t*, void*, DType, int64_t, int64_t);

template <class T>
void load_as(const void* src, DType dt, int64_t stride, T* dst, int64_t n) {
  if constexpr (std::is_same_v<T, float>)
    to_f32(src, dt, stride, dst, n);
  else if constexpr (std::is_same_v<T, double>)
    to_f64(src, dt, stride, dst, n);
  else
    load_wrapped(src, dt, stride, dst, n);
}
template <class T>
void store_as(const T* src, void* dst, DType dt, int64_t stride, int64_t n) {
  if constexpr (std::is_same_v<T, float>)
    from_f32(src, dst, dt, stride, n);
  else if constexpr (std::is_same_v<T, double>)
    from_f64(src, dst, dt, stride, n);
  else
    store_wrapped(src, dst, dt, stride, n);
}
#define TESSEL_LA_INSTANTIATE(T)                                      \
  template void load_as<T>(const void*, DType, int64_t, T*, int64_t); \
  template void store_as<T>(const T*, void*, DType, int64_t, int64_t);
TESSEL_LA_INSTANTIATE(float)
TESSEL_LA_INSTANTIATE(double)
TESSEL_LA_INSTANTIATE(uint32_t)
TESSEL_LA_INSTANTIATE(uint64_t)
#undef TESSEL_LA_INSTANTIATE

template <class U>
void int_gemm(int64_t m, int64_t n, int64_t k, const GemmOperand& a, const GemmOperand& b, U* c,
              int64_t ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  // B staged contiguous (k×n) in U; each row of A staged as it is used.
  std::vector<U> bs(static_cast<size_t>(k * n));
  for (int64_t p = 0; p < k; ++p) load_wrapped(at(b, p, 0), b.dtype, b.cs, bs.data() + p * n, n);
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(n * k, 1));
  parallel_for(m, grain, [&](int64_t i0, int64_t i1) {
    std::vector<U> arow(static_cast<size_t>(k));
    for (int64_t i = i0; i < i1; ++i) {
      if (k > 0) load_wrapped(at(a, i, 0), a.dtype, a.cs, arow.data(), k);
      U* crow = c + i * ldc;
      if (!accumulate) std::fill(crow, crow + n, U(0));
      for (int64_t p = 0; p < k; ++p) {
        const U av = arow[p];
        const U* brow = bs.data() + p * n;
        for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
      }
    }
  });
}
template void int_gemm<uint32_t>(int64_t, int64_t, int64_t, const GemmOperand&, const GemmOperand&,
                                 uint32_t*, int64_t, bool);
template void int_gemm<uint64_t>(int64_t, int64_t, int64_t, const GemmOperand&, const GemmOperand&,
                                 uint64_t*, int64_t, bool);

void contract(const std::vector<int64_t>& sizes, LabeledView x, LabeledView y,
              const std::vector<int>& out_labels, void* out, DType out_dtype) {
  with_compute_type(out_dtype, [&](auto tag) {
    contract_typed<decltype(tag)>(sizes, std::move(x), std::move(y), out_labels, out, out_dtype);
  });
}

TESSEL_ISA_END
