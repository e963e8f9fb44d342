// Shared by the cpu linear_algebra family (linear_algebra*.cpp): the labeled contraction that
// MatMul, DotGeneral and Einsum lower to (batched GEMM calls on strided views), and exact
// integer GEMM.
#pragma once

#include <type_traits>
#include <vector>

#include "backends/cpu/gemm.h"
#include "runtime/kernel_registry.h"
#include "tessel/host_tensor.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN

// An operand indexed by labels: the element at label index (i_0, i_1, ...) is at element
// offset sum_l i_l·strides[l] from `data`. A label the operand lacks (or broadcasts) has stride 0.
// `has` marks the labels the operand is indexed by (a stride may still be 0: a broadcast
// view); a label that neither operand has and the output lacks is not summed here.
struct LabeledView {
  const void* data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> strides;
  std::vector<bool> has;
};

// out[out_labels...] = sum over every other label of x·y, for labels of extent `sizes`. `out`
// is contiguous (row-major over out_labels) of out_dtype. Floats compute in f32 (f64 for F64),
// integers exactly, wrapping (u32 arithmetic, u64 for I64).
void contract(const std::vector<int64_t>& sizes, LabeledView x, LabeledView y,
              const std::vector<int>& out_labels, void* out, DType out_dtype);

// C (row-major, ldc) = [C +] A·B in wrapping unsigned arithmetic (U = uint32_t or uint64_t);
// A and B of any integer dtype. Threaded over rows.
template <class U>
void int_gemm(int64_t m, int64_t n, int64_t k, const GemmOperand& a, const GemmOperand& b, U* c,
              int64_t ldc, bool accumulate);

// dst[i·stride] = src[i] wrapped to the integer dtype dt, for i < n.
template <class U>
void store_wrapped(const U* src, void* dst, DType dt, int64_t stride, int64_t n);

// Strided runs to / from a compute type T (float, double: convert.h; uint32_t, uint64_t: two's
// complement wrap): dst[i] = src[i·stride] and dst[i·stride] = src[i].
template <class T>
void load_as(const void* src, DType dt, int64_t stride, T* dst, int64_t n);
template <class T>
void store_as(const T* src, void* dst, DType dt, int64_t stride, int64_t n);

// The dtype that holds a compute type's values (F32, F64, I32, I64).
template <class T>
constexpr DType kComputeDType = std::is_same_v<T, float>      ? DType::F32
                                : std::is_same_v<T, double>   ? DType::F64
                                : std::is_same_v<T, uint64_t> ? DType::I64
                                                              : DType::I32;

// Calls fn(T{}) with the compute type of an output dtype.
template <class Fn>
void with_compute_type(DType out, Fn&& fn) {
  if (out == DType::F64)
    fn(double{});
  else if (is_float(out))
    fn(float{});
  else if (out == DType::I64)
    fn(uint64_t{});
  else
    fn(uint32_t{});
}

// The fused kinds (linear_algebra_fused.cpp).
void register_linear_algebra_fused(KernelRegistry& r);

TESSEL_ISA_END
