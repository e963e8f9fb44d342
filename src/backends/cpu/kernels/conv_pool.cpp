// cpu kernels of the conv_pool family: registration and the helpers its files share
// (conv_pool.h); the kernels are in conv_pool_conv.cpp, conv_pool_pool.cpp and
// conv_pool_backward.cpp.
#include "backends/cpu/kernels/conv_pool.h"

#include <algorithm>

#include "backends/cpu/convert.h"
#include "backends/cpu/families.h"
#include "runtime/thread_pool.h"

TESSEL_ISA_BEGIN
namespace conv_pool {
namespace {

// Elements per parallel chunk of a copy: enough to amortize a task.
constexpr int64_t kCopyGrain = 1 << 15;

template <class T>
const T* dense_impl(const HostTensor& t, std::shared_ptr<Storage>& hold) {
  if (t.dtype == kDTypeOf<T> && t.is_contiguous()) return reinterpret_cast<const T*>(t.data());
  int64_t n = t.numel();
  T* d = scratch<T>(n, hold);
  if (n == 0) return d;
  int r = t.rank();
  int64_t inner = r == 0 ? 1 : t.shape[r - 1];
  int64_t inner_stride = r == 0 ? 1 : t.strides[r - 1];
  int64_t rows = n / inner;
  parallel_for(rows, std::max<int64_t>(1, kCopyGrain / inner), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t off = t.offset, rest = row;
      for (int dim = r - 2; dim >= 0; --dim) {
        off += rest % t.shape[dim] * t.strides[dim];
        rest /= t.shape[dim];
      }
      if constexpr (std::is_same_v<T, double>)
        to_f64(t.element_ptr(off), t.dtype, inner_stride, d + row * inner, inner);
      else
        to_f32(t.element_ptr(off), t.dtype, inner_stride, d + row * inner, inner);
    }
  });
  return d;
}

template <class T>
void finish_impl(const T* buf, const HostTensor& y) {
  if (y.dtype == kDTypeOf<T>) return;  // computed in place
  int64_t n = y.numel();
  parallel_for(n, kCopyGrain, [&](int64_t begin, int64_t end) {
    if constexpr (std::is_same_v<T, double>)
      from_f64(buf + begin, y.element_ptr(y.offset + begin), y.dtype, 1, end - begin);
    else
      from_f32(buf + begin, y.element_ptr(y.offset + begin), y.dtype, 1, end - begin);
  });
}

}  // namespace

Window3 make_window(const Attrs& a, const Shape& x, const Shape& y,
                    const std::vector<int64_t>& kernel, bool pool) {
  Window3 w;
  int sd = static_cast<int>(x.size()) - 2;
  const WindowAttrs win = pool ? pool_window_attrs(a, sd) : conv_window_attrs(a, sd);
  for (int d = 0; d < sd; ++d) {
    int j = 3 - sd + d;
    w.in[j] = x[2 + d];
    w.out[j] = y[2 + d];
    if (!kernel.empty()) w.k[j] = kernel[d];
    w.stride[j] = win.strides[d];
    w.dil[j] = win.dilations[d];
    w.pad[j] = win.pads.begin[d];
    w.pad_end[j] = win.pads.end[d];
  }
  return w;
}

const float* dense_f32(const HostTensor& t, std::shared_ptr<Storage>& hold) {
  return dense_impl<float>(t, hold);
}
const double* dense_f64(const HostTensor& t, std::shared_ptr<Storage>& hold) {
  return dense_impl<double>(t, hold);
}
void finish_output_f32(const float* buf, const HostTensor& y) { finish_impl(buf, y); }
void finish_output_f64(const double* buf, const HostTensor& y) { finish_impl(buf, y); }

}  // namespace conv_pool

void register_conv_pool(KernelRegistry& r) {
  register_conv_kinds(r);
  register_pool_kinds(r);
  register_conv_pool_backward_kinds(r);
}

TESSEL_ISA_END
