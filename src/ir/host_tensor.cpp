#include "tessel/host_tensor.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>

#include "ir/dtype_convert.h"

namespace tessel {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? "," : "") << shape[i];
  os << ']';
  return os.str();
}

namespace {

size_t physical_memory_bytes() {
  static const size_t bytes = [] {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page)
                                 : std::numeric_limits<size_t>::max();
  }();
  return bytes;
}
std::atomic<size_t> g_allocation_limit{0};  // 0: physical memory

}  // namespace

void set_host_allocation_limit(size_t bytes) { g_allocation_limit.store(bytes); }
size_t host_allocation_limit() {
  const size_t limit = g_allocation_limit.load();
  return limit != 0 ? limit : physical_memory_bytes();
}
// A request larger than physical memory cannot be served usefully (an overcommitted mapping
// would fail at first touch instead), so that is the default limit.
void check_host_allocation(size_t bytes, const char* what) {
  const size_t set = g_allocation_limit.load();
  if (set == 0 && bytes > physical_memory_bytes())
    throw_error(ErrorKind::OutOfMemory, what, " of ", bytes,
                " bytes exceeds this machine's physical memory (", physical_memory_bytes(),
                " bytes)");
  if (set != 0 && bytes > set)
    throw_error(ErrorKind::OutOfMemory, what, " of ", bytes,
                " bytes exceeds the host allocation limit (set_host_allocation_limit) of ", set,
                " bytes");
}

// A cache line: the cpu kernels' 64-byte vector loads of a tensor made here do not straddle two
// lines (new[]'s 16-byte alignment split every one; softmax over a 4096 × 4096 input was 1.4×
// slower for it with its rows' writes interleaved with the next row's reads).
constexpr size_t kLineAlign = 64;
// Blocks this large are backed by 2 MiB pages where the OS agrees: a kernel streaming a tensor
// ≫ cache then misses the TLB once per 2 MiB instead of once per 4 KiB, and the hardware
// prefetchers, which stop at 4 KiB page ends, run on (softmax and layer norm over 64 MiB:
// 0.67–0.86× of their time on 4 KiB pages, two threads).
constexpr size_t kHugeBlock = size_t{4} << 20;
constexpr size_t kHugePage = size_t{2} << 20;

void* allocate_host_bytes(size_t bytes) {
  const size_t align = bytes >= kHugeBlock ? kHugePage : kLineAlign;
  const size_t n = (std::max<size_t>(bytes, 1) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, n);
#if defined(__linux__)
  if (p != nullptr && align == kHugePage) madvise(p, n, MADV_HUGEPAGE);  // advice: may be ignored
#endif
  return p;
}

void free_host_bytes(void* p) { std::free(p); }

std::shared_ptr<Storage> Storage::allocate(size_t size) {
  check_host_allocation(size, "[Storage] host allocation");
  auto* p = static_cast<uint8_t*>(allocate_host_bytes(size));
  std::shared_ptr<Storage> s;
  try {
    if (p == nullptr) throw std::bad_alloc();
    // Owned first: should the control blocks fail to allocate, the deleter frees p.
    std::shared_ptr<uint8_t[]> bytes(p, [](uint8_t* q) { free_host_bytes(q); });
    s = std::make_shared<Storage>();
    s->bytes = std::move(bytes);
  } catch (const std::bad_alloc&) {
    throw_error(ErrorKind::OutOfMemory, "[Storage] cannot allocate ", size, " bytes");
  }
  std::memset(p, 0, size ? size : 1);
  s->size = size;
  return s;
}

HostTensor HostTensor::empty(DType dtype, const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0)
      throw_error(ErrorKind::Shape, "[HostTensor] negative dimension in ", shape_str(shape));
  HostTensor t;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = contiguous_strides(shape);
  t.storage = Storage::allocate(static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype));
  return t;
}

bool HostTensor::is_contiguous() const {
  return strides == contiguous_strides(shape) || numel() <= 1;
}

int64_t HostTensor::offset_of(const int64_t* index) const {
  int64_t off = offset;
  for (size_t i = 0; i < shape.size(); ++i) off += index[i] * strides[i];
  return off;
}

namespace {
int64_t element_offset(const HostTensor& t, int64_t linear) {
  int64_t off = t.offset;
  for (int i = t.rank() - 1; i >= 0; --i) {
    int64_t d = t.shape[i];
    if (d == 0) return off;
    off += (linear % d) * t.strides[i];
    linear /= d;
  }
  return off;
}
}  // namespace

double HostTensor::get_f64(int64_t linear) const {
  return load_as_f64(element_ptr(element_offset(*this, linear)), dtype);
}
int64_t HostTensor::get_i64(int64_t linear) const {
  return load_as_i64(element_ptr(element_offset(*this, linear)), dtype);
}
std::complex<double> HostTensor::get_c128(int64_t linear) const {
  return load_as_c128(element_ptr(element_offset(*this, linear)), dtype);
}
void HostTensor::set_f64(int64_t linear, double v, bool saturate) const {
  store_from_f64(element_ptr(element_offset(*this, linear)), dtype, v, saturate);
}
void HostTensor::set_i64(int64_t linear, int64_t v) const {
  store_from_i64(element_ptr(element_offset(*this, linear)), dtype, v);
}
void HostTensor::set_c128(int64_t linear, std::complex<double> v) const {
  store_from_c128(element_ptr(element_offset(*this, linear)), dtype, v);
}

std::vector<double> HostTensor::to_f64() const {
  std::vector<double> out(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) out[i] = get_f64(i);
  return out;
}

HostTensor HostTensor::contiguous() const {
  if (is_contiguous() && offset == 0) return *this;
  HostTensor out = empty(dtype, shape);
  int size = dtype_size(dtype);
  for (int64_t i = 0; i < numel(); ++i)
    std::memcpy(out.element_ptr(i), element_ptr(element_offset(*this, i)), size);
  return out;
}

HostTensor HostTensor::permuted(const std::vector<int>& perm) const {
  HostTensor v = *this;
  for (size_t i = 0; i < perm.size(); ++i) {
    v.shape[i] = shape.at(perm[i]);
    v.strides[i] = strides.at(perm[i]);
  }
  return v;
}

}  // namespace tessel
