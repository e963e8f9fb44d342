// cpu kernels: the scatters of data movement (ScatterAdd, ScatterNd, ScatterElements). y = data,
// then the updates combine into y in row-major order: threads split the destination (columns
// that no two threads share), so duplicate indices keep the reference's order. Reductions run in
// the dtype's own arithmetic (integers wrap), f16 / bf16 / fp8 in an f32 copy rounded once.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "backends/cpu/convert.h"
#include "backends/cpu/dtype_dispatch.h"
#include "runtime/host_allocator.h"
#include "runtime/kernel_util.h"
#include "runtime/thread_pool.h"
// clang-format off
#include "backends/cpu/kernels/data_movement.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

using Op = ScatterReduction;

template <class T>
inline void combine(Op op, T& a, T b) {
  if constexpr (!std::is_arithmetic_v<T>) {
    a = b;  // raw bytes: None only
  } else if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case Op::None:
        a = b;
        break;
      case Op::Add:
        a = a + b;
        break;
      case Op::Mul:
        a = a * b;
        break;
      case Op::Max:
        a = a != a ? a : (b != b ? b : (b > a ? b : a));
        break;
      case Op::Min:
        a = a != a ? a : (b != b ? b : (b < a ? b : a));
        break;
    }
  } else {
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case Op::None:
        a = b;
        break;
      case Op::Add:
        a = static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
        break;
      case Op::Mul:
        a = static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
        break;
      case Op::Max:
        a = std::max(a, b);
        break;
      case Op::Min:
        a = std::min(a, b);
        break;
    }
  }
}

// d[i] op= s[i] for i < n, the op switched outside the loop so it vectorizes.
template <class T>
void combine_row(Op op, T* d, const T* s, int64_t n) {
  if constexpr (std::is_arithmetic_v<T>) {
    switch (op) {
      case Op::None:
        break;
      case Op::Add:
        for (int64_t i = 0; i < n; ++i) combine(Op::Add, d[i], s[i]);
        return;
      case Op::Mul:
        for (int64_t i = 0; i < n; ++i) combine(Op::Mul, d[i], s[i]);
        return;
      case Op::Max:
        for (int64_t i = 0; i < n; ++i) combine(Op::Max, d[i], s[i]);
        return;
      case Op::Min:
        for (int64_t i = 0; i < n; ++i) combine(Op::Min, d[i], s[i]);
        return;
    }
  }
  std::memcpy(d, s, sizeof(T) * n);
}

// y = data, then body(T* y, const T* updates) with the updates contiguous, T the type the
// reduction computes in (raw bytes for None).
template <class Body>
void scatter_into(const HostTensor& data, const HostTensor& updates, const HostTensor& y, Op op,
                  Body&& body) {
  copy_to_contiguous(data, y.data());
  int64_t n = y.numel(), nu = updates.numel();
  if (nu == 0 || n == 0) return;
  ContiguousBytes u = contiguous_bytes(updates);
  DType dt = y.dtype;
  auto run = [&]<class T>(T) {
    body(reinterpret_cast<T*>(y.data()), reinterpret_cast<const T*>(u.data));
  };
  if (op == Op::None) return with_elem_type(dtype_size(dt), run);
  const bool claimed = visit_compute_type(dt, [&]<class T>() {
    if constexpr (kIsStagedF32<T>) {
      auto ys = host_allocate(static_cast<size_t>(n) * sizeof(float));
      auto us = host_allocate(static_cast<size_t>(nu) * sizeof(float));
      auto* yf = reinterpret_cast<float*>(ys->bytes.get());
      auto* uf = reinterpret_cast<float*>(us->bytes.get());
      to_f32(y.data(), dt, 1, yf, n);
      to_f32(u.data, dt, 1, uf, nu);
      body(yf, static_cast<const float*>(uf));
      from_f32(yf, y.data(), dt, 1, n);
    } else if constexpr (std::is_same_v<T, bool>) {
      TESSEL_ASSERT(false, "scatter reduction on bool not claimed");  // numbers only
    } else {
      run(T{});
    }
  });
  TESSEL_ASSERT(claimed, "scatter reduction on ", dtype_name(dt), " not claimed");
}

// Splits `cols` columns into chunks for parallel_for over (outer × chunks) items.
int64_t column_chunk(int64_t outer, int64_t cols) {
  if (outer >= 4 * num_threads()) return cols;
  return std::min(cols, std::max<int64_t>(1024, cols / 8));
}

// index_add: y[o, idx[j], i] op= updates[o, j, i].
void scatter_add(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  int axis = axis_attr(node, x.rank());
  std::vector<int64_t> idx;
  if (in[2].numel() > 0) idx = load_indices(node, in[1], x.shape[axis], "index");
  int64_t outer = 1, inner = 1, a = x.shape[axis], nj = static_cast<int64_t>(idx.size());
  for (int d = 0; d < axis; ++d) outer *= x.shape[d];
  for (int d = axis + 1; d < x.rank(); ++d) inner *= x.shape[d];
  scatter_into(x, in[2], out[0], Op::Add, [&]<class T>(T* y, const T* u) {
    int64_t chunk = column_chunk(outer, inner), per = (inner + chunk - 1) / chunk;
    auto body = [&](int64_t b, int64_t e) {
      for (int64_t it = b; it < e; ++it) {
        int64_t o = it / per, c0 = it % per * chunk, len = std::min(chunk, inner - c0);
        for (int64_t j = 0; j < nj; ++j)
          combine_row(Op::Add, y + (o * a + idx[j]) * inner + c0, u + (o * nj + j) * inner + c0,
                      len);
      }
    };
    int64_t work = in[2].numel() * static_cast<int64_t>(sizeof(T));
    if (work < kParallelBytes) return body(0, outer * per);
    parallel_for(outer * per, std::max<int64_t>(1, kParallelBytes / (nj * chunk * sizeof(T) + 1)),
                 body);
  });
}

// ONNX ScatterElements: y[u with u[axis] = idx[u]] op= updates[u].
void scatter_elements(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& data = in[0];
  const HostTensor& upd = in[2];
  int r = data.rank(), axis = axis_attr(node, r);
  auto op = node.attrs.e<Op>("reduction");
  std::vector<int64_t> idx;
  if (upd.numel() > 0) idx = load_indices(node, in[1], data.shape[axis], "index");
  const Shape& us = upd.shape;
  std::vector<int64_t> ys = contiguous_strides(data.shape);
  // Destination offsets of the dims before and after the axis.
  int64_t outer = 1, inner = 1, na = r > 0 ? us[axis] : 1;
  for (int d = 0; d < axis; ++d) outer *= us[d];
  for (int d = axis + 1; d < r; ++d) inner *= us[d];
  auto offsets = [&](int d0, int d1) {
    int64_t n = 1;
    for (int d = d0; d < d1; ++d) n *= us[d];
    std::vector<int64_t> o(n);
    std::vector<int64_t> pos(d1 - d0, 0);
    for (int64_t i = 0, off = 0; i < n; ++i) {
      o[i] = off;
      for (int d = d1 - 1; d >= d0; --d) {
        off += ys[d];
        if (++pos[d - d0] < us[d]) break;
        off -= us[d] * ys[d];
        pos[d - d0] = 0;
      }
    }
    return o;
  };
  std::vector<int64_t> outer_off = offsets(0, axis), inner_off = offsets(axis + 1, r);
  int64_t sa = ys[axis];
  scatter_into(data, upd, out[0], op, [&]<class T>(T* y, const T* u) {
    int64_t chunk = column_chunk(outer, inner), per = (inner + chunk - 1) / chunk;
    auto body = [&](int64_t b, int64_t e) {
      for (int64_t it = b; it < e; ++it) {
        int64_t o = it / per, c0 = it % per * chunk, c1 = std::min(inner, c0 + chunk);
        for (int64_t j = 0; j < na; ++j) {
          int64_t p = (o * na + j) * inner;
          for (int64_t i = c0; i < c1; ++i)
            combine(op, y[outer_off[o] + idx[p + i] * sa + inner_off[i]], u[p + i]);
        }
      }
    };
    if (upd.numel() * static_cast<int64_t>(sizeof(T)) < kParallelBytes) return body(0, outer * per);
    parallel_for(outer * per, std::max<int64_t>(1, kParallelBytes / (na * chunk * sizeof(T) + 1)),
                 body);
  });
}

// ONNX ScatterND: y[idx[t, :], ...] op= updates[t, ...].
void scatter_nd(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& data = in[0];
  const HostTensor& upd = in[2];
  auto op = node.attrs.e<Op>("reduction");
  int64_t k = in[1].shape.back();
  std::vector<int64_t> ys = contiguous_strides(data.shape);
  int64_t row = 1;
  for (int d = static_cast<int>(k); d < data.rank(); ++d) row *= data.shape[d];
  std::vector<int64_t> dest;
  if (upd.numel() > 0) {
    std::vector<int64_t> idx = load_indices(node, in[1], -1, "index");
    dest.resize(idx.size() / k);
    for (size_t t = 0; t < dest.size(); ++t) {
      int64_t off = 0;
      for (int64_t j = 0; j < k; ++j)
        off += checked_index(node, idx[t * k + j], data.shape[j], "index") * ys[j];
      dest[t] = off;
    }
  }
  int64_t nt = static_cast<int64_t>(dest.size());
  scatter_into(data, upd, out[0], op, [&]<class T>(T* y, const T* u) {
    int64_t chunk = column_chunk(1, row), per = (row + chunk - 1) / chunk;
    auto body = [&](int64_t b, int64_t e) {
      for (int64_t it = b; it < e; ++it) {
        int64_t c0 = it * chunk, len = std::min(chunk, row - c0);
        for (int64_t t = 0; t < nt; ++t) combine_row(op, y + dest[t] + c0, u + t * row + c0, len);
      }
    };
    if (upd.numel() * static_cast<int64_t>(sizeof(T)) < kParallelBytes || per == 1)
      return body(0, per);
    parallel_for(per, 1, body);
  });
}

}  // namespace

void register_data_movement_scatter(KernelRegistry& r) {
  constexpr DTypeSet kNumbers = dtypes::kFloat | dtypes::kFp8 | dtypes::kInt;
  r.native(OpKind::ScatterAdd, scatter_add, kNumbers);
  const std::vector<int> reductions = {static_cast<int>(Op::Add), static_cast<int>(Op::Mul),
                                       static_cast<int>(Op::Max), static_cast<int>(Op::Min)};
  for (OpKind k : {OpKind::ScatterNd, OpKind::ScatterElements}) {
    HostKernel fn = k == OpKind::ScatterNd ? scatter_nd : scatter_elements;
    r.native(k, fn, dtypes::kEvery, {static_cast<int>(Op::None)});
    r.native(k, fn, kNumbers, reductions);
  }
}

TESSEL_ISA_END
