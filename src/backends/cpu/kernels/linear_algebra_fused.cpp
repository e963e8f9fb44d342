// cpu kernels for the fused matmul kinds: FusedMatMulBiasAct (GEMM with bias + activation applied
// to each tile of C while it is in cache) and FusedSwiGLU (x·Wg with a silu epilogue, x·Wu with a
// gating epilogue, then ·Wd). f32 / f64 compute in their type and round once. f16 / bf16 / fp8
// compute in f32 but round where the decomposition stores a tensor (after each matmul, the bias
// add, the activation, the product), so they match it to within the accumulation order.
#include <cmath>

#include "backends/cpu/activation.h"
#include "backends/cpu/convert.h"
#include "backends/cpu/kernels/linear_algebra.h"
#include "runtime/host_allocator.h"
#include "runtime/kernel_util.h"
#include "runtime/thread_pool.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

constexpr DTypeSet kFloats = dtypes::kFloat | dtypes::kFp8;

// x [..., K] as rows × K: a view when its leading dims merge into one stride, else a
// contiguous copy (kept in `hold`).
GemmOperand rows_of(const HostTensor& x, int64_t& rows, HostTensor& hold) {
  const int r = x.rank();
  rows = 1;
  for (int d = 0; d + 1 < r; ++d) rows *= x.shape[d];
  int64_t rs = 0, expect = -1;
  bool merges = true;
  for (int d = r - 2; d >= 0; --d) {
    if (x.shape[d] == 1) continue;
    if (expect >= 0 && x.strides[d] != expect) merges = false;
    if (expect < 0) rs = x.strides[d];
    expect = x.strides[d] * x.shape[d];
  }
  if (merges) return {x.data(), x.dtype, rs, x.strides[r - 1]};
  hold = x.contiguous();
  return {hold.data(), hold.dtype, x.shape[r - 1], 1};
}

template <class T>
T* scratch(std::shared_ptr<Storage>& s, int64_t n) {
  s = host_allocate(static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(T));
  return reinterpret_cast<T*>(s->bytes.get());
}

// v = v rounded to dt (f32 -> dt -> f32), through a small buffer.
void round_to(DType dt, float* v, int64_t n) {
  alignas(64) uint8_t buf[kStageBlock * 2];
  for (int64_t i = 0; i < n; i += kStageBlock) {
    const int64_t len = std::min<int64_t>(kStageBlock, n - i);
    from_f32(v + i, buf, dt, 1, len);
    to_f32(buf, dt, 1, v + i, len);
  }
}

// fn(row) for every row of a rows × cols f32 matrix, threaded.
template <class Fn>
void for_rows(int64_t rows, int64_t cols, Fn&& fn) {
  parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) fn(r);
               });
}

// ---------------------------------------------------------------------------------------------
// FusedMatMulBiasAct: act(x·W + b); W is [K, N], or [N, K] with transpose_b.

template <class T>
void matmul_bias_act_typed(const Node& node, const GemmOperand& x, int64_t rows, int64_t k,
                           const HostTensor& w, const HostTensor& bias, const HostTensor& y) {
  const bool tb = node.attrs.b("transpose_b");
  const int64_t n = y.shape.back();
  const GemmOperand wo{w.data(), w.dtype, tb ? w.strides[1] : w.strides[0],
                       tb ? w.strides[0] : w.strides[1]};
  GemmEpilogue<T> ep;
  ep.act = node.attrs.e<ActivationKind>("act");
  std::shared_ptr<Storage> sb, sc;
  if (present(bias)) {
    T* b = scratch<T>(sb, n);
    load_as(bias.data(), bias.dtype, bias.strides[0], b, n);
    ep.bias = b;
  }
  if (y.dtype == kComputeDType<T>) {
    gemm_ex<T>(rows, n, k, x, wo, reinterpret_cast<T*>(y.data()), n, false, &ep);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    // f16 / bf16 / fp8: the epilogue as the decomposition rounds it, row by row.
    float* c = scratch<float>(sc, rows * n);
    gemm_ex<float>(rows, n, k, x, wo, c, n, false);
    const DType dt = y.dtype;
    for_rows(rows, n, [&](int64_t r) {
      float* row = c + r * n;
      if (ep.bias != nullptr || ep.act != ActivationKind::Identity) round_to(dt, row, n);
      if (ep.bias != nullptr) {
        for (int64_t j = 0; j < n; ++j) row[j] += ep.bias[j];
        if (ep.act != ActivationKind::Identity) round_to(dt, row, n);
      }
      if (ep.act != ActivationKind::Identity) activation_f32(ep.act, ep.alpha, row, row, n);
      from_f32(row, y.data() + r * n * dtype_size(dt), dt, 1, n);
    });
  }
}

void matmul_bias_act(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  if (y.numel() == 0) return;
  int64_t rows;
  HostTensor hold;
  const GemmOperand x = rows_of(in[0], rows, hold);
  const int64_t k = in[0].shape.back();
  if (y.dtype == DType::F64)
    matmul_bias_act_typed<double>(node, x, rows, k, in[1], in[2], y);
  else
    matmul_bias_act_typed<float>(node, x, rows, k, in[1], in[2], y);
}

// ---------------------------------------------------------------------------------------------
// FusedSwiGLU: (silu(x·Wg) ⊙ x·Wu)·Wd.

GemmOperand matrix(const HostTensor& w) { return {w.data(), w.dtype, w.strides[0], w.strides[1]}; }

template <class T>
void swiglu_typed(const GemmOperand& x, int64_t rows, int64_t k, std::span<const HostTensor> in,
                  const HostTensor& y) {
  const int64_t f = in[1].shape[1], n = in[3].shape[1];
  std::shared_ptr<Storage> sg, sh, sy;
  T* g = scratch<T>(sg, rows * f);
  T* h = scratch<T>(sh, rows * f);
  const GemmOperand ho{h, kComputeDType<T>, f, 1};
  if (y.dtype == kComputeDType<T>) {
    GemmEpilogue<T> silu;
    silu.act = ActivationKind::Silu;
    gemm_ex<T>(rows, f, k, x, matrix(in[1]), g, f, false, &silu);
    GemmEpilogue<T> gate;
    gate.mul = g;
    gate.ld_mul = f;
    gemm_ex<T>(rows, f, k, x, matrix(in[2]), h, f, false, &gate);
    gemm_ex<T>(rows, n, f, ho, matrix(in[3]), reinterpret_cast<T*>(y.data()), n, false);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    // f16 / bf16 / fp8: round g, silu(g), u and the product as the decomposition stores them.
    const DType dt = y.dtype;
    gemm_ex<float>(rows, f, k, x, matrix(in[1]), g, f, false);
    gemm_ex<float>(rows, f, k, x, matrix(in[2]), h, f, false);
    for_rows(rows, f, [&](int64_t r) {
      float *gr = g + r * f, *hr = h + r * f;
      round_to(dt, gr, f);
      activation_f32(ActivationKind::Silu, std::nanf(""), gr, gr, f);
      round_to(dt, gr, f);
      round_to(dt, hr, f);
      for (int64_t j = 0; j < f; ++j) hr[j] *= gr[j];
      round_to(dt, hr, f);
    });
    float* c = scratch<float>(sy, rows * n);
    gemm_ex<float>(rows, n, f, ho, matrix(in[3]), c, n, false);
    for_rows(rows, n,
             [&](int64_t r) { from_f32(c + r * n, y.data() + r * n * dtype_size(dt), dt, 1, n); });
  }
}

void swiglu(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  if (y.numel() == 0) return;
  int64_t rows;
  HostTensor hold;
  const GemmOperand x = rows_of(in[0], rows, hold);
  const int64_t k = in[0].shape.back();
  if (y.dtype == DType::F64)
    swiglu_typed<double>(x, rows, k, in, y);
  else
    swiglu_typed<float>(x, rows, k, in, y);
}

// Every activation but Not (bitwise; no float meaning), as the reference claims.
std::vector<int> float_activations() {
  std::vector<int> v;
  for (int i = 0; i < op_info(OpKind::Activation).num_variants(); ++i)
    if (static_cast<ActivationKind>(i) != ActivationKind::Not) v.push_back(i);
  return v;
}

}  // namespace

void register_linear_algebra_fused(KernelRegistry& r) {
  r.native(OpKind::FusedMatMulBiasAct, matmul_bias_act, kFloats, float_activations());
  r.native(OpKind::FusedSwiGLU, swiglu, kFloats);
}

TESSEL_ISA_END
