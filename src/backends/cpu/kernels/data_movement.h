// The cpu data-movement family's shared engine: strided copies of raw elements (dims collapsed,
// contiguous runs memcpy'd, tiled in-register transposes, threaded), per-axis table gathers,
// index loading, and the registration hooks of the family's files.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/graph.h"
#include "runtime/kernel_registry.h"
#include "tessel/host_tensor.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN

// An element moved as raw bytes: the unsigned type of its size (B16 for c128).
struct B16 {
  uint64_t lo, hi;
};
// Calls fn(T{}) with the raw type of an esize-byte element.
template <class Fn>
void with_elem_type(int esize, Fn&& fn) {
  switch (esize) {
    case 1:
      return fn(uint8_t{});
    case 2:
      return fn(uint16_t{});
    case 4:
      return fn(uint32_t{});
    case 8:
      return fn(uint64_t{});
    default:
      return fn(B16{});
  }
}

// Below this many bytes a copy runs on the calling thread.
inline constexpr int64_t kParallelBytes = int64_t{1} << 17;

// dst[i] = src[i] for every multi-index i of `shape`; strides in elements (any sign, 0 allowed),
// element size `esize` bytes. Threaded when big.
void copy_strided(int esize, const Shape& shape, uint8_t* dst, const int64_t* dst_strides,
                  const uint8_t* src, const int64_t* src_strides);
// Same on the calling thread only (for callers that thread over their own blocks).
void copy_strided_serial(int esize, const Shape& shape, uint8_t* dst, const int64_t* dst_strides,
                         const uint8_t* src, const int64_t* src_strides);

// Copies view `src` (shape, strides, offset) into contiguous row-major bytes at dst.
void copy_to_contiguous(const HostTensor& src, uint8_t* dst);

// n copies of the esize-byte element at `value`.
void fill_elements(uint8_t* dst, int esize, const uint8_t* value, int64_t n);

// out (contiguous, `shape`): element o reads src + esize·Σ_d table[d][o_d], or `fill` when any
// table entry is kFillEntry. Contiguous source runs in the last axis are memcpy'd.
inline constexpr int64_t kFillEntry = INT64_MIN;
void table_gather(int esize, const Shape& shape, const std::vector<std::vector<int64_t>>& table,
                  const uint8_t* src, const uint8_t* fill, uint8_t* out);

// A tensor's bytes in row-major order: its own storage when contiguous, else a scratch copy.
struct ContiguousBytes {
  const uint8_t* data = nullptr;
  std::shared_ptr<Storage> scratch;
};
ContiguousBytes contiguous_bytes(const HostTensor& t);

// An integer tensor's values in row-major order as i64. With dim >= 0 each value is checked
// against [-dim, dim) (Value error naming `what`) and wrapped when negative.
std::vector<int64_t> load_indices(const Node& node, const HostTensor& t, int64_t dim,
                                  const char* what);

// One element of dtype `dt` holding `v` (rounded as the reference stores it).
std::vector<uint8_t> encode_scalar(DType dt, double v);

// Keeps the compiler from fusing a product into a following add (FMA), so results round like
// the reference's separate multiply and add.
template <class T>
inline T opaque(T v) {
#if defined(__x86_64__)
  __asm__("" : "+x"(v));
#elif defined(__aarch64__)
  __asm__("" : "+w"(v));
#endif
  return v;
}

// Lane i = i (simd.h's iota trips -Wmaybe-uninitialized at some call sites).
template <class V>
inline V lane_index() {
  V v{};
  for (int i = 0; i < kLanes<V>; ++i) v[i] = static_cast<Lane<V>>(i);
  return v;
}

// The family's other files.
void register_data_movement_indexing(KernelRegistry& r);
void register_data_movement_scatter(KernelRegistry& r);

TESSEL_ISA_END
