// HostTensor: a strided view of host memory. Storage is shared and reference-counted; a view
// (shape, strides in elements, offset in elements) never owns more than its storage pointer.
// Used for constants in the IR, for host backends' buffers, and for data handed to users.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "tessel/dtype.h"
#include "tessel/error.h"

namespace tessel {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& shape);
std::vector<int64_t> contiguous_strides(const Shape& shape);
std::string shape_str(const Shape& shape);  // "[2,3,4]"

// The largest single host allocation Tessel makes; a larger request (a tensor, a buffer, an
// arena) throws ErrorKind::OutOfMemory naming both sizes instead of reaching the OS. The default
// is the machine's physical memory; 0 restores it. Thread-safe.
void set_host_allocation_limit(size_t bytes);
size_t host_allocation_limit();
// Throws OutOfMemory when `bytes` is over host_allocation_limit(); `what` names the request.
void check_host_allocation(size_t bytes, const char* what);

// Raw host memory as tensors and the runtime's buffers get it: 64-byte aligned; blocks of 4 MiB
// and more are 2 MiB aligned and advised to the OS as backed by huge pages (Linux
// madvise(MADV_HUGEPAGE), which Debian's default "madvise" transparent-huge-page mode honours).
// Null on failure; released with free_host_bytes.
void* allocate_host_bytes(size_t bytes);
void free_host_bytes(void* p);

struct Storage {
  std::shared_ptr<uint8_t[]> bytes;
  size_t size = 0;
  static std::shared_ptr<Storage> allocate(size_t size);  // zero-filled; OutOfMemory on failure
};

struct HostTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<int64_t> strides;  // in elements
  int64_t offset = 0;            // in elements
  std::shared_ptr<Storage> storage;

  static HostTensor empty(DType dtype, const Shape& shape);  // contiguous, zero-filled
  template <class T>
  static HostTensor from_vector(DType dtype, const Shape& shape, const std::vector<T>& values);

  int64_t numel() const { return shape_numel(shape); }
  int rank() const { return static_cast<int>(shape.size()); }
  bool is_contiguous() const;
  uint8_t* data() const { return storage->bytes.get() + offset * dtype_size(dtype); }
  uint8_t* element_ptr(int64_t element_offset) const {
    return storage->bytes.get() + element_offset * dtype_size(dtype);
  }
  // Element at a multi-index (row-major over shape), via strides.
  int64_t offset_of(const int64_t* index) const;

  double get_f64(int64_t linear) const;  // linear = row-major position in shape
  int64_t get_i64(int64_t linear) const;
  std::complex<double> get_c128(int64_t linear) const;
  void set_f64(int64_t linear, double v, bool saturate = true) const;
  void set_i64(int64_t linear, int64_t v) const;
  void set_c128(int64_t linear, std::complex<double> v) const;

  std::vector<double> to_f64() const;                       // row-major copy
  HostTensor contiguous() const;                            // copy unless already contiguous
  HostTensor permuted(const std::vector<int>& perm) const;  // a view, no copy
};

template <class T>
HostTensor HostTensor::from_vector(DType dtype, const Shape& shape, const std::vector<T>& values) {
  HostTensor t = empty(dtype, shape);
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw_error(ErrorKind::Shape, "[HostTensor] ", values.size(), " values for shape ",
                shape_str(shape));
  for (int64_t i = 0; i < t.numel(); ++i) {
    if constexpr (std::is_integral_v<T>)
      t.set_i64(i, static_cast<int64_t>(values[i]));
    else
      t.set_f64(i, static_cast<double>(values[i]));
  }
  return t;
}

}  // namespace tessel
