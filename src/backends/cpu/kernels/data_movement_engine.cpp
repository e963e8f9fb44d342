// The data-movement engine (data_movement.h): strided element copies with collapsed dims, memcpy
// runs, stride-0 fills and tiled in-register transposes; per-axis table gathers; index loading.
#include <algorithm>
#include <cstring>
#include <utility>

#include "ir/dtype_convert.h"
#include "runtime/host_allocator.h"
#include "runtime/kernel_util.h"
#include "runtime/thread_pool.h"
// clang-format off
#include "backends/cpu/kernels/data_movement.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

typedef uint64_t Vu64 __attribute__((vector_size(kVectorBytes)));

struct Dim {
  int64_t n, ds, ss;  // size, dst stride, src stride (elements)
};

// Drops unit dims and merges neighbours that step as one; at least one dim is left.
std::vector<Dim> collapse(const Shape& shape, const int64_t* ds, const int64_t* ss) {
  std::vector<Dim> out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    Dim x{shape[d], ds[d], ss[d]};
    if (!out.empty() && out.back().ds == x.ds * x.n && out.back().ss == x.ss * x.n)
      out.back() = {out.back().n * x.n, x.ds, x.ss};
    else
      out.push_back(x);
  }
  if (out.empty()) out.push_back({1, 1, 1});
  return out;
}

// One row: n elements, dst stride ds, src stride ss.
void copy_row(int esize, int64_t n, uint8_t* dst, int64_t ds, const uint8_t* src, int64_t ss) {
  if (ds == 1 && ss == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * esize);
    return;
  }
  with_elem_type(esize, [&]<class T>(T) {
    T* d = reinterpret_cast<T*>(dst);
    const T* s = reinterpret_cast<const T*>(src);
    if (ss == 0) {
      T v = *s;
      for (int64_t i = 0; i < n; ++i) d[i * ds] = v;
    } else if (ds == 1) {
      for (int64_t i = 0; i < n; ++i) d[i] = s[i * ss];
    } else {
      for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];
    }
  });
}

// Rows [begin, end) of the dims before the last, each a copy_row over the last dim (or over
// its [c0, c1) part).
void run_rows(int esize, const std::vector<Dim>& dims, uint8_t* dst, const uint8_t* src,
              int64_t begin, int64_t end, int64_t c0, int64_t c1) {
  const int m = static_cast<int>(dims.size()) - 1;
  const Dim& in = dims[m];
  std::vector<int64_t> idx(m);
  int64_t doff = 0, soff = 0, r = begin;
  for (int d = m - 1; d >= 0; --d) {
    idx[d] = r % dims[d].n;
    r /= dims[d].n;
    doff += idx[d] * dims[d].ds;
    soff += idx[d] * dims[d].ss;
  }
  for (int64_t row = begin; row < end; ++row) {
    copy_row(esize, c1 - c0, dst + (doff + c0 * in.ds) * esize, in.ds,
             src + (soff + c0 * in.ss) * esize, in.ss);
    for (int d = m - 1; d >= 0; --d) {
      doff += dims[d].ds;
      soff += dims[d].ss;
      if (++idx[d] < dims[d].n) break;
      doff -= dims[d].n * dims[d].ds;
      soff -= dims[d].n * dims[d].ss;
      idx[d] = 0;
    }
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#define TESSEL_MOVE_SHUFFLE 1
// In-register transpose of an L×L block (L = lanes): log2(L) rounds of interleaving row i with
// row i + L/2 (the perfect shuffle) leave row c holding column c.
// Interleave masks: lo takes a0 b0 a1 b1 ... of the low halves, hi of the high halves.
template <class V, size_t... K>
constexpr V interleave_mask(bool high, std::index_sequence<K...>) {
  constexpr int L = sizeof...(K);
  return V{static_cast<Lane<V>>((K % 2 ? L : 0) + (high ? L / 2 : 0) + K / 2)...};
}

template <class V>
inline void transpose_block(V* r) {
  constexpr int L = kLanes<V>;
  constexpr V lo = interleave_mask<V>(false, std::make_index_sequence<L>{});
  constexpr V hi = interleave_mask<V>(true, std::make_index_sequence<L>{});
#pragma GCC unroll 4
  for (int s = 1; s < L; s *= 2) {
    V t[L];
#pragma GCC unroll 16
    for (int i = 0; i < L / 2; ++i) {
      t[2 * i] = __builtin_shuffle(r[i], r[i + L / 2], lo);
      t[2 * i + 1] = __builtin_shuffle(r[i], r[i + L / 2], hi);
    }
#pragma GCC unroll 16
    for (int i = 0; i < L; ++i) r[i] = t[i];
  }
}
#endif

// Transposing copy: dst[j*dj + i] = src[j + i*si] for j < nj, i in [i0, i1).
template <class T>
void transpose_tile(int64_t nj, int64_t i0, int64_t i1, T* dst, int64_t dj, const T* src,
                    int64_t si) {
  int64_t j = 0;
#if defined(TESSEL_MOVE_SHUFFLE)
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
    using V = std::conditional_t<sizeof(T) == 4, Vu32, Vu64>;
    constexpr int L = kLanes<V>;
    int64_t iv = i0 + (i1 - i0) / L * L;
    for (; j + L <= nj; j += L) {
      for (int64_t i = i0; i < iv; i += L) {
        V r[L];
        for (int k = 0; k < L; ++k)
          r[k] = load<V>(reinterpret_cast<const Lane<V>*>(src + j + (i + k) * si));
        transpose_block(r);
        for (int k = 0; k < L; ++k) store(reinterpret_cast<Lane<V>*>(dst + (j + k) * dj + i), r[k]);
      }
      for (int64_t i = iv; i < i1; ++i)
        for (int k = 0; k < L; ++k) dst[(j + k) * dj + i] = src[j + k + i * si];
    }
  }
#endif
  constexpr int64_t kB = 16;
  for (; j < nj; j += kB) {
    int64_t je = std::min(nj, j + kB);
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t jj = j; jj < je; ++jj) dst[jj * dj + i] = src[jj + i * si];
  }
}

// Copies a collapsed plan whose last dim is dst-contiguous and some other dim src-contiguous,
// in tiles; threaded over (other dims × blocks of the last dim).
void copy_transposed(int esize, const std::vector<Dim>& dims, int jd, uint8_t* dst,
                     const uint8_t* src, bool threaded) {
  const int m = static_cast<int>(dims.size()) - 1;
  const Dim& in = dims[m];
  const Dim& jdim = dims[jd];
  std::vector<Dim> outer;
  for (int d = 0; d < m; ++d)
    if (d != jd) outer.push_back(dims[d]);
  int64_t nouter = 1;
  for (const Dim& d : outer) nouter *= d.n;
  constexpr int64_t kIBlock = 64;
  int64_t nib = (in.n + kIBlock - 1) / kIBlock;
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t item = b; item < e; ++item) {
      int64_t o = item / nib, ib = item % nib, doff = 0, soff = 0;
      for (int d = static_cast<int>(outer.size()) - 1; d >= 0; --d) {
        int64_t k = o % outer[d].n;
        o /= outer[d].n;
        doff += k * outer[d].ds;
        soff += k * outer[d].ss;
      }
      int64_t i0 = ib * kIBlock, i1 = std::min(in.n, i0 + kIBlock);
      with_elem_type(esize, [&]<class T>(T) {
        transpose_tile(jdim.n, i0, i1, reinterpret_cast<T*>(dst) + doff, jdim.ds,
                       reinterpret_cast<const T*>(src) + soff, in.ss);
      });
    }
  };
  int64_t items = nouter * nib;
  int64_t item_bytes = jdim.n * std::min(kIBlock, in.n) * esize;
  if (threaded)
    parallel_for(items, std::max<int64_t>(1, kParallelBytes / std::max<int64_t>(item_bytes, 1)),
                 body);
  else
    body(0, items);
}

void copy_impl(int esize, const Shape& shape, uint8_t* dst, const int64_t* dst_strides,
               const uint8_t* src, const int64_t* src_strides, bool threaded) {
  if (shape_numel(shape) == 0) return;
  std::vector<Dim> dims = collapse(shape, dst_strides, src_strides);
  const int m = static_cast<int>(dims.size()) - 1;
  const Dim& in = dims[m];
  int64_t rows = 1;
  for (int d = 0; d < m; ++d) rows *= dims[d].n;
  int64_t total_bytes = rows * in.n * esize;
  threaded = threaded && total_bytes >= kParallelBytes;
  // A transpose: the dst-contiguous last dim reads strided while another dim reads contiguous.
  if (in.ds == 1 && in.ss != 1 && in.ss != 0 && in.n >= 4) {
    for (int d = 0; d < m; ++d)
      if (dims[d].ss == 1 && dims[d].n >= 4)
        return copy_transposed(esize, dims, d, dst, src, threaded);
  }
  if (!threaded) return run_rows(esize, dims, dst, src, 0, rows, 0, in.n);
  // Few long rows: split each row too.
  int64_t chunk = in.n;
  if (rows < 4 * num_threads()) chunk = std::max<int64_t>(16384, (in.n * rows + 63) / 64);
  chunk = std::min(chunk, in.n);
  int64_t per_row = (in.n + chunk - 1) / chunk;
  int64_t grain = std::max<int64_t>(1, kParallelBytes / (chunk * esize));
  if (per_row == 1) {
    parallel_for(rows, grain,
                 [&](int64_t b, int64_t e) { run_rows(esize, dims, dst, src, b, e, 0, in.n); });
    return;
  }
  parallel_for(rows * per_row, grain, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      int64_t row = it / per_row, c0 = it % per_row * chunk;
      run_rows(esize, dims, dst, src, row, row + 1, c0, std::min(in.n, c0 + chunk));
    }
  });
}

}  // namespace

void copy_strided(int esize, const Shape& shape, uint8_t* dst, const int64_t* dst_strides,
                  const uint8_t* src, const int64_t* src_strides) {
  copy_impl(esize, shape, dst, dst_strides, src, src_strides, true);
}

void copy_strided_serial(int esize, const Shape& shape, uint8_t* dst, const int64_t* dst_strides,
                         const uint8_t* src, const int64_t* src_strides) {
  copy_impl(esize, shape, dst, dst_strides, src, src_strides, false);
}

void copy_to_contiguous(const HostTensor& src, uint8_t* dst) {
  if (src.numel() == 0) return;
  std::vector<int64_t> ds = contiguous_strides(src.shape);
  copy_strided(dtype_size(src.dtype), src.shape, dst, ds.data(), src.data(), src.strides.data());
}

void fill_elements(uint8_t* dst, int esize, const uint8_t* value, int64_t n) {
  if (n <= 0) return;
  bool same = true;
  for (int b = 1; b < esize; ++b) same = same && value[b] == value[0];
  if (same) {
    std::memset(dst, value[0], static_cast<size_t>(n) * esize);
    return;
  }
  with_elem_type(esize, [&]<class T>(T) {
    T v;
    std::memcpy(&v, value, sizeof v);
    T* d = reinterpret_cast<T*>(dst);
    for (int64_t i = 0; i < n; ++i) d[i] = v;
  });
}

void table_gather(int esize, const Shape& shape, const std::vector<std::vector<int64_t>>& table,
                  const uint8_t* src, const uint8_t* fill, uint8_t* out) {
  int64_t numel = shape_numel(shape);
  if (numel == 0) return;
  if (shape.empty()) {
    std::memcpy(out, src, esize);
    return;
  }
  const int m = static_cast<int>(shape.size()) - 1;
  const std::vector<int64_t>& last = table[m];
  const int64_t n = shape[m];
  // The last axis as segments: fills, contiguous source runs, and single gathered elements.
  enum class Seg : uint8_t { Fill, Run, Pick };
  struct Segment {
    Seg kind;
    int64_t start, len;
  };
  std::vector<Segment> segs;
  for (int64_t k = 0; k < n;) {
    int64_t e = k + 1;
    if (last[k] == kFillEntry) {
      while (e < n && last[e] == kFillEntry) ++e;
      segs.push_back({Seg::Fill, k, e - k});
    } else if (k + 1 < n && last[k + 1] == last[k] + 1) {
      while (e < n && last[e] == last[e - 1] + 1) ++e;
      segs.push_back({Seg::Run, k, e - k});
    } else {
      while (e < n && last[e] != kFillEntry && !(e + 1 < n && last[e + 1] == last[e] + 1)) ++e;
      segs.push_back({Seg::Pick, k, e - k});
    }
    k = e;
  }
  int64_t rows = numel / n;
  auto body = [&](int64_t b, int64_t e) {
    std::vector<int64_t> idx(m);
    int64_t r = b;
    for (int d = m - 1; d >= 0; --d) {
      idx[d] = r % shape[d];
      r /= shape[d];
    }
    with_elem_type(esize, [&]<class T>(T) {
      T fv{};
      if (fill) std::memcpy(&fv, fill, sizeof fv);
      const T* s = reinterpret_cast<const T*>(src);
      for (int64_t row = b; row < e; ++row) {
        T* o = reinterpret_cast<T*>(out) + row * n;
        int64_t base = 0;
        bool filled = false;
        for (int d = 0; d < m; ++d) {
          int64_t t = table[d][idx[d]];
          if (t == kFillEntry)
            filled = true;
          else
            base += t;
        }
        if (filled) {
          for (int64_t k = 0; k < n; ++k) o[k] = fv;
        } else {
          for (const Segment& g : segs) {
            T* os = o + g.start;
            switch (g.kind) {
              case Seg::Fill:
                for (int64_t k = 0; k < g.len; ++k) os[k] = fv;
                break;
              case Seg::Run:
                std::memcpy(os, s + base + last[g.start], sizeof(T) * g.len);
                break;
              case Seg::Pick: {
                const int64_t* t = last.data() + g.start;
                for (int64_t k = 0; k < g.len; ++k) os[k] = s[base + t[k]];
                break;
              }
            }
          }
        }
        for (int d = m - 1; d >= 0; --d) {
          if (++idx[d] < shape[d]) break;
          idx[d] = 0;
        }
      }
    });
  };
  if (numel * esize < kParallelBytes) return body(0, rows);
  parallel_for(rows, std::max<int64_t>(1, kParallelBytes / (n * esize)), body);
}

ContiguousBytes contiguous_bytes(const HostTensor& t) {
  ContiguousBytes c;
  if (t.numel() == 0) return c;
  if (t.is_contiguous()) {
    c.data = t.data();
    return c;
  }
  c.scratch = host_allocate(static_cast<size_t>(t.numel()) * dtype_size(t.dtype));
  copy_to_contiguous(t, c.scratch->bytes.get());
  c.data = c.scratch->bytes.get();
  return c;
}

std::vector<int64_t> load_indices(const Node& node, const HostTensor& t, int64_t dim,
                                  const char* what) {
  int64_t n = t.numel();
  std::vector<int64_t> v(n);
  if (n == 0) return v;
  ContiguousBytes c = contiguous_bytes(t);
  auto widen = [&]<class T>(T) {
    const T* p = reinterpret_cast<const T*>(c.data);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<int64_t>(p[i]);
  };
  switch (t.dtype) {
    case DType::U8:
      widen(uint8_t{});
      break;
    case DType::I8:
      widen(int8_t{});
      break;
    case DType::I16:
      widen(int16_t{});
      break;
    case DType::I32:
      widen(int32_t{});
      break;
    default:  // i64 (the shape rules admit integer dtypes only)
      widen(int64_t{});
      break;
  }
  if (dim >= 0) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t x = v[i];
      if (x < -dim || x >= dim) checked_index(node, x, dim, what);  // throws
      v[i] = x < 0 ? x + dim : x;
    }
  }
  return v;
}

std::vector<uint8_t> encode_scalar(DType dt, double v) {
  std::vector<uint8_t> b(std::max(1, dtype_size(dt)), 0);
  store_from_f64(b.data(), dt, v);
  return b;
}

TESSEL_ISA_END
