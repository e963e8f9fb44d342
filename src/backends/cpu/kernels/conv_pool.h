// Shared pieces of the cpu conv_pool family (conv_pool*.cpp): window geometry padded to three
// spatial dims, staging of whole operands into contiguous f32 / f64, and per-file registration.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/cpu/gemm.h"
#include "ir/graph.h"
#include "ops/conv_geometry.h"
#include "runtime/host_allocator.h"
#include "runtime/kernel_registry.h"
#include "tessel/host_tensor.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN

// Registered from register_conv_pool (conv_pool.cpp).
void register_conv_kinds(KernelRegistry& r);  // conv_pool_conv.cpp: Conv, ConvTranspose2d
void register_pool_kinds(KernelRegistry& r);  // conv_pool_pool.cpp: Pool, Im2Col
// conv_pool_backward.cpp: Conv{2,3}dBackward{Input,Weight}, MaxPool{2,3}dBackward
void register_conv_pool_backward_kinds(KernelRegistry& r);

// The helpers live in their own namespace: their names are generic, the ISA namespace shared.
namespace conv_pool {

// A window over up to three spatial dims, right-aligned: a 1-D op uses dim 2 only, and the
// unused leading dims have size 1, kernel 1, stride 1, no padding.
struct Window3 {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1};
  int64_t pad[3] = {0, 0, 0}, pad_end[3] = {0, 0, 0};  // begin / end
};

// The window of a node from its strides / dilations / pads attributes (ops/conv_geometry.h):
// `x` and `y` are the input and output shapes [N, C, *spatial], `kernel` one entry per spatial
// dim (empty for adaptive pooling). A pool's strides default to its kernel, a convolution's to 1.
Window3 make_window(const Attrs& a, const Shape& x, const Shape& y,
                    const std::vector<int64_t>& kernel, bool pool);

// The outputs o in [0, out) whose tap o·stride − pad + off lands inside [0, in): [lo, hi).
inline void valid_range(int64_t out, int64_t in, int64_t stride, int64_t pad, int64_t off,
                        int64_t& lo, int64_t& hi) {
  int64_t a = pad - off;           // o·stride >= a
  int64_t b = in - 1 + pad - off;  // o·stride <= b
  lo = a <= 0 ? 0 : (a + stride - 1) / stride;
  hi = b < 0 ? 0 : b / stride + 1;
  if (hi > out) hi = out;
  if (lo > hi) lo = hi;
}

// The in-bounds taps of each output's window along dim d of `w` (adaptive: PyTorch's adaptive
// windows): q = lo + t·step for t in [t0, t0 + cnt); psz is the window clipped to the padded
// input (Avg's count_include_pad). conv_pool_pool.cpp.
struct DimTaps {
  std::vector<int64_t> lo, t0, cnt, psz;
  int64_t step = 1;
};
DimTaps dim_taps(bool adaptive, const Window3& w, int d);

// A convolution of x [N, C, *sp] with w [O, C/G, *k] into y [N, O, *out] (conv_pool_conv.cpp).
struct ConvGeo {
  Window3 w;
  int64_t N, C, O, G, cpg, opg;
  int64_t KK;  // kernel taps k0·k1·k2
  int64_t K;   // cpg·KK: the gemm depth
  int64_t P;   // output positions per channel
  int64_t X;   // input positions per channel
};
ConvGeo conv_geo(const Attrs& a, const Shape& x, const Shape& w, const Shape& y);

// Rows [r0, r1) of the im2col matrix of one (image, group) over output positions [p0, p1):
// col[(r − r0)·ldc + p − p0] = x[c, the tap of row r in position p's window], zero in padding.
// Defined for float and double.
template <class T>
void im2col_rows(const ConvGeo& g, const T* xg, int64_t p0, int64_t p1, int64_t r0, int64_t r1,
                 T* col, int64_t ldc);

// Conv of column stride up to 4 with at most 64 output channels a group (more where
// implicit_gemm_suits measured it faster), 2-D or 1-D, as an implicit GEMM reading x through a
// zero-padded band of rows per task (conv_pool_conv_implicit.cpp; AVX-512 and AVX2: elsewhere it
// never suits). y = conv + bias (may be null), then `ep` (may be null) on each band's block of y.
bool implicit_gemm_suits(const ConvGeo& g);
// A, the weights w packed for conv_implicit_gemm, in storage of its own.
std::shared_ptr<Storage> implicit_weights(const ConvGeo& g, const float* w);
// `a`: implicit_weights(g, w), or null to make it here.
void conv_implicit_gemm(const ConvGeo& g, const float* x, const float* w, const float* a,
                        const float* bias, float* y, const GemmEpilogue<float>* ep);

// Unstrided, undilated, ungrouped 3 × 3 2-D convolutions of many channels by Winograd's
// F(2 × 2, 3 × 3) (conv_pool_conv_winograd.cpp; AVX-512 and AVX2: elsewhere it never suits).
// y = conv + bias (may be null), then `ep` (may be null) on each finished run of y's rows.
// `weights_ready`: U comes made (the weights a graph constant, transformed once).
bool winograd_suits(const ConvGeo& g, bool weights_ready);
// U, the weights w [O, C, 3, 3] transformed for conv_winograd, in storage of its own.
std::shared_ptr<Storage> winograd_weights(const ConvGeo& g, const float* w);
// `u`: winograd_weights(g, w), or null to make it here.
void conv_winograd(const ConvGeo& g, const float* x, const float* w, const float* u,
                   const float* bias, float* y, const GemmEpilogue<float>* ep);

// gemm_f32 / gemm_f64 (gemm.h) by the compute type.
template <class T>
void gemm_t(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_rs, int64_t a_cs, const T* b,
            int64_t b_rs, int64_t b_cs, T beta, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, double>)
    gemm_f64(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, ldc);
  else
    gemm_f32(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, ldc);
}

template <class T>
inline constexpr DType kDTypeOf = std::is_same_v<T, double> ? DType::F64 : DType::F32;

// A contiguous row-major f32 / f64 copy of `t` in its dtype converted, or t's own data when it
// already is one; `hold` keeps the copy alive.
const float* dense_f32(const HostTensor& t, std::shared_ptr<Storage>& hold);
const double* dense_f64(const HostTensor& t, std::shared_ptr<Storage>& hold);
template <class T>
const T* dense(const HostTensor& t, std::shared_ptr<Storage>& hold) {
  if constexpr (std::is_same_v<T, double>)
    return dense_f64(t, hold);
  else
    return dense_f32(t, hold);
}

// n uninitialized elements of T from the caching allocator; `hold` keeps them alive.
template <class T>
T* scratch(int64_t n, std::shared_ptr<Storage>& hold) {
  hold = host_allocate(static_cast<size_t>(n > 0 ? n : 1) * sizeof(T));
  return reinterpret_cast<T*>(hold->bytes.get());
}
// Where a kernel computing in T writes the contiguous output `y`: y itself when it has dtype T,
// else scratch that finish_output then rounds into y.
template <class T>
T* output_buffer(const HostTensor& y, std::shared_ptr<Storage>& hold) {
  if (y.dtype == kDTypeOf<T>) return reinterpret_cast<T*>(y.data());
  return scratch<T>(y.numel(), hold);
}
void finish_output_f32(const float* buf, const HostTensor& y);
void finish_output_f64(const double* buf, const HostTensor& y);
template <class T>
void finish_output(const T* buf, const HostTensor& y) {
  if constexpr (std::is_same_v<T, double>)
    finish_output_f64(buf, y);
  else
    finish_output_f32(buf, y);
}

// Native-width vectors of T.
template <class T>
struct VecOf {
  typedef T type __attribute__((vector_size(kVectorBytes)));
};
template <class T>
using Vec = typename VecOf<T>::type;

// d[0, n) = s[0, n), by vectors: a call of memmove per row was 26% of the samples of a
// 144-channel depthwise layer on 56 × 56 planes (one thread, 0.123 → 0.116 ms inline).
template <class T>
inline void copy_row(const T* s, T* d, int64_t n) {
  using V = Vec<T>;
  constexpr int L = kLanes<V>;
  int64_t k = 0;
  for (; k + L <= n; k += L) store(d + k, load<V>(s + k));
  if (k < n)
    store_partial(d + k, load_partial<V>(s + k, static_cast<int>(n - k)), static_cast<int>(n - k));
}

}  // namespace conv_pool
TESSEL_ISA_END
