// The reference backend: the oracle. Plain loops over strided, broadcast-correct views,
// accumulating in f64 (i64 for integer-exact ops, complex<double> for complex); slow and
// obviously right. Each category's kernels live in <category>.cpp and register here.
#pragma once

#include <cstring>
#include <span>
#include <vector>

#include "ir/graph.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"

namespace tessel::reference {

// Kernels see outputs zero-filled (the executor's zero_outputs).
using tessel::HostKernel;
using Registry = KernelRegistry;

#define TESSEL_CATEGORY(e, title) void register_##e(Registry& r);
#include "ir/ops.def"

// The dtypes the reference computes on.
inline constexpr DTypeSet kFloats = dtypes::kFloat | dtypes::kFp8;
inline constexpr DTypeSet kNumbers = kFloats | dtypes::kInt;
inline constexpr DTypeSet kAll = dtypes::kAll;

// Calls fn(index) for every multi-index of `shape` in row-major order.
template <class Fn>
void for_each_index(const Shape& shape, Fn&& fn) {
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t n = shape_numel(shape);
  for (int64_t i = 0; i < n; ++i) {
    fn(static_cast<const std::vector<int64_t>&>(idx));
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Copies one element's bytes: dst at element offset d = src at element offset s (same dtype).
inline void copy_element(const HostTensor& dst, int64_t d, const HostTensor& src, int64_t s) {
  std::memcpy(dst.element_ptr(d), src.element_ptr(s), dtype_size(src.dtype));
}

// out[o] = x[src] for every output index o, where source(o, src) fills src (pure data movement).
template <class Fn>
void gather_from(const HostTensor& x, const HostTensor& out, Fn&& source) {
  std::vector<int64_t> src(x.shape.size(), 0);
  for_each_index(out.shape, [&](const std::vector<int64_t>& o) {
    source(o, src);
    copy_element(out, out.offset_of(o.data()), x, x.offset_of(src.data()));
  });
}

// Element access by multi-index.
inline double at_f64(const HostTensor& t, const std::vector<int64_t>& idx);
inline int64_t at_i64(const HostTensor& t, const std::vector<int64_t>& idx);
double load_f64(const HostTensor& t, int64_t element_offset);
int64_t load_i64(const HostTensor& t, int64_t element_offset);
void store_f64(const HostTensor& t, int64_t element_offset, double v);
void store_i64(const HostTensor& t, int64_t element_offset, int64_t v);

inline double at_f64(const HostTensor& t, const std::vector<int64_t>& idx) {
  return load_f64(t, t.offset_of(idx.data()));
}
inline int64_t at_i64(const HostTensor& t, const std::vector<int64_t>& idx) {
  return load_i64(t, t.offset_of(idx.data()));
}

}  // namespace tessel::reference
