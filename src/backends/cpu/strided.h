// Strided N-d iteration for elementwise-like kernels over up to 4 operands (output first, any
// strides, stride 0 for broadcast): the shape is collapsed (size-1 axes dropped, axes merged where
// every operand is linear across them) and walked as inner runs — fn(ptrs, strides, n) with each
// operand's element stride along the run — threaded over chunks of the flat index.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "backends/cpu/convert.h"
#include "runtime/thread_pool.h"
#include "tessel/host_tensor.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN

// The native vector of lane type T (any arithmetic type of 1, 2, 4 or 8 bytes).
template <class T>
struct VecOf {
  typedef T type __attribute__((vector_size(kVectorBytes)));
};
template <class T>
using Vec = typename VecOf<T>::type;

inline constexpr int kStridedMaxRank = 16;

template <int N>
struct StridedPlan {
  int rank = 0;  // collapsed; the last axis is the inner one
  int64_t numel = 1;
  int64_t shape[kStridedMaxRank] = {};
  int64_t strides[N][kStridedMaxRank] = {};  // in elements
  std::array<uint8_t*, N> base{};
  std::array<int, N> elem_size{};
};

// Operands as (tensor view already broadcast to `shape`); each view's strides are used as given.
template <int N>
StridedPlan<N> plan_strided(const Shape& shape, const std::array<const HostTensor*, N>& ops) {
  StridedPlan<N> p;
  for (int k = 0; k < N; ++k) {
    p.base[k] = ops[k]->data();
    p.elem_size[k] = dtype_size(ops[k]->dtype);
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    p.numel *= shape[d];
    if (shape[d] == 1) continue;
    bool merge = p.rank > 0;
    for (int k = 0; k < N && merge; ++k)
      merge = p.strides[k][p.rank - 1] == ops[k]->strides[d] * shape[d];
    if (merge) {
      p.shape[p.rank - 1] *= shape[d];
      for (int k = 0; k < N; ++k) p.strides[k][p.rank - 1] = ops[k]->strides[d];
    } else {
      TESSEL_ASSERT(p.rank < kStridedMaxRank, "rank above ", kStridedMaxRank);
      p.shape[p.rank] = shape[d];
      for (int k = 0; k < N; ++k) p.strides[k][p.rank] = ops[k]->strides[d];
      ++p.rank;
    }
  }
  if (p.rank == 0) {  // a scalar (or all size-1 axes): one run of one element
    p.rank = 1;
    p.shape[0] = 1;
    for (int k = 0; k < N; ++k) p.strides[k][0] = 1;
  }
  if (p.numel == 0) p.shape[0] = 0;
  return p;
}

// Calls fn(std::array<uint8_t*, N> ptrs, std::array<int64_t, N> strides, int64_t n) for the
// runs covering flat elements [begin, end) of the plan.
template <int N, class Fn>
void strided_range(const StridedPlan<N>& p, int64_t begin, int64_t end, Fn&& fn) {
  if (begin >= end) return;
  const int r = p.rank;
  const int64_t inner = p.shape[r - 1];
  int64_t idx[kStridedMaxRank];
  int64_t rem = begin;
  for (int d = r - 1; d >= 0; --d) {
    idx[d] = rem % p.shape[d];
    rem /= p.shape[d];
  }
  std::array<uint8_t*, N> ptr;
  for (int k = 0; k < N; ++k) {
    int64_t off = 0;
    for (int d = 0; d < r; ++d) off += idx[d] * p.strides[k][d];
    ptr[k] = p.base[k] + off * p.elem_size[k];
  }
  std::array<int64_t, N> step;
  for (int k = 0; k < N; ++k) step[k] = p.strides[k][r - 1];
  int64_t pos = begin;
  while (pos < end) {
    int64_t n = std::min(inner - idx[r - 1], end - pos);
    fn(ptr, step, n);
    pos += n;
    if (pos >= end) break;
    // Advance to the start of the next run.
    idx[r - 1] = 0;
    int d = r - 2;
    for (; d >= 0; --d) {
      if (++idx[d] < p.shape[d]) break;
      idx[d] = 0;
    }
    for (int k = 0; k < N; ++k) {
      int64_t off = 0;
      for (int e = 0; e < r - 1; ++e) off += idx[e] * p.strides[k][e];
      ptr[k] = p.base[k] + off * p.elem_size[k];
    }
  }
}

// The whole plan, threaded over the pool when it has `min_parallel` elements or more.
template <int N, class Fn>
void strided_for(const StridedPlan<N>& p, Fn&& fn, int64_t min_parallel = 32768,
                 int64_t grain = 16384) {
  if (p.numel < min_parallel) {
    strided_range(p, 0, p.numel, fn);
    return;
  }
  parallel_for(p.numel, grain, [&](int64_t b, int64_t e) { strided_range(p, b, e, fn); });
}

// y = f(x) over a plan of two operands (y first) of an f16 / bf16 / fp8 dtype t: each block of x
// is widened to f32 (exactly), f(buf, m) rewrites its m values in place, and y gets them rounded
// once.
template <class F>
void strided_staged_unary(const StridedPlan<2>& plan, DType t, F&& f) {
  const int size = dtype_size(t);
  strided_for(plan,
              [&](const std::array<uint8_t*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                float buf[kStageBlock];
                for (int64_t i = 0; i < n; i += kStageBlock) {
                  int64_t m = std::min(kStageBlock, n - i);
                  to_f32(p[1] + i * s[1] * size, t, s[1], buf, m);
                  f(buf, m);
                  from_f32(buf, p[0] + i * size, t, 1, m);
                }
              });
}

TESSEL_ISA_END
