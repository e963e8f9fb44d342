// cpu kernels: Compare (to bool, every dtype the reference claims: f16 / bf16 / fp8 staged
// exactly to f32, c64 by parts) and Where (a byte-width select over three broadcast operands).
// GCC warns (-Wpsabi) on every lambda taking or returning a vector wider than the baseline ABI:
// they never cross a translation unit, so the ABI note does not apply.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#include <cstring>

#include "backends/cpu/convert.h"
#include "backends/cpu/dtype_dispatch.h"
#include "backends/cpu/families.h"
#include "backends/cpu/strided.h"
#include "ops/elementwise_dtypes.h"
#include "ops/scalar_math.h"
#include "runtime/kernel_util.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

using Ptrs3 = std::array<uint8_t*, 3>;
using Steps3 = std::array<int64_t, 3>;

// y[i] = cmp(a[i·sa], b[i·sb]); cmp works on scalars (bool) and vectors (lane masks).
template <class T, class Cmp>
void compare_run(uint8_t* y, const T* a, int64_t sa, const T* b, int64_t sb, int64_t n,
                 const Cmp& cmp) {
  using V = Vec<T>;
  constexpr int L = kLanes<V>;
  int64_t i = 0;
  if (sa == 1 && sb == 1) {
    for (; i + L <= n; i += L) {
      auto m = cmp(load<V>(a + i), load<V>(b + i));
      for (int j = 0; j < L; ++j) y[i + j] = static_cast<uint8_t>(m[j] & 1);
    }
  } else if (sa == 1 && sb == 0) {
    const V vb = splat<V>(b[0]);
    for (; i + L <= n; i += L) {
      auto m = cmp(load<V>(a + i), vb);
      for (int j = 0; j < L; ++j) y[i + j] = static_cast<uint8_t>(m[j] & 1);
    }
  }
  for (; i < n; ++i) y[i] = cmp(a[i * sa], b[i * sb]) ? 1 : 0;
}

template <class T>
void compare_typed(const StridedPlan<3>& plan, CmpOp op) {
  dispatch_cmp(op, [&](auto cmp) {
    strided_for(plan, [&](const Ptrs3& p, const Steps3& s, int64_t n) {
      compare_run<T>(p[0], reinterpret_cast<const T*>(p[1]), s[1], reinterpret_cast<const T*>(p[2]),
                     s[2], n, cmp);
    });
  });
}

// f16 / bf16 / fp8 widen to f32 exactly, so comparing there is exact.
void compare_staged(const StridedPlan<3>& plan, CmpOp op, DType t) {
  const int size = dtype_size(t);
  dispatch_cmp(op, [&](auto cmp) {
    strided_for(plan, [&](const Ptrs3& p, const Steps3& s, int64_t n) {
      float ab[kStageBlock], bb[kStageBlock];
      for (int64_t i = 0; i < n; i += kStageBlock) {
        int64_t m = std::min(kStageBlock, n - i);
        to_f32(p[1] + i * s[1] * size, t, s[1], ab, m);
        to_f32(p[2] + i * s[2] * size, t, s[2], bb, m);
        compare_run<float>(p[0] + i, ab, 1, bb, 1, m, cmp);
      }
    });
  });
}

// Any nonzero byte is true.
void compare_bool(const StridedPlan<3>& plan, CmpOp op) {
  dispatch_cmp(op, [&](auto cmp) {
    strided_for(plan, [&](const Ptrs3& p, const Steps3& s, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        p[0][i] = cmp(p[1][i * s[1]] != 0, p[2][i * s[2]] != 0) ? 1 : 0;
    });
  });
}

// Only Eq / Ne are defined on complex numbers.
void compare_c64(const StridedPlan<3>& plan, CmpOp op) {
  const bool eq = op == CmpOp::Eq;
  strided_for(plan, [&](const Ptrs3& p, const Steps3& s, int64_t n) {
    auto ap = reinterpret_cast<const float*>(p[1]);
    auto bp = reinterpret_cast<const float*>(p[2]);
    for (int64_t i = 0; i < n; ++i) {
      const float* x = ap + 2 * i * s[1];
      const float* z = bp + 2 * i * s[2];
      bool same = x[0] == z[0] && x[1] == z[1];
      p[0][i] = same == eq ? 1 : 0;
    }
  });
}

void kernel_compare(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  HostTensor a = broadcast_to(in[0], y.shape), b = broadcast_to(in[1], y.shape);
  auto op = node.attrs.e<CmpOp>("op");
  auto plan = plan_strided<3>(y.shape, {&y, &a, &b});
  const DType t = a.dtype;
  if (t == DType::C64) return compare_c64(plan, op);
  const bool claimed = visit_compute_type(t, [&]<class T>() {
    if constexpr (kIsStagedF32<T>)
      compare_staged(plan, op, t);
    else if constexpr (std::is_same_v<T, bool>)
      compare_bool(plan, op);
    else
      compare_typed<T>(plan, op);
  });
  TESSEL_ASSERT(claimed, "Compare on ", dtype_name(t), " not claimed");
}

// ---- Where ----------------------------------------------------------------------------------

template <class T>
void where_run(T* y, const uint8_t* c, int64_t sc, const T* a, int64_t sa, const T* b, int64_t sb,
               int64_t n) {
  if (sc == 1 && sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = c[i] ? a[i] : b[i];
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = c[i * sc] ? a[i * sa] : b[i * sb];
}

template <class T>
void where_typed(const StridedPlan<4>& plan) {
  strided_for(
      plan, [&](const std::array<uint8_t*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) {
        where_run<T>(reinterpret_cast<T*>(p[0]), p[1], s[1], reinterpret_cast<const T*>(p[2]), s[2],
                     reinterpret_cast<const T*>(p[3]), s[3], n);
      });
}

void kernel_where(const Node&, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  HostTensor c = broadcast_to(in[0], y.shape);
  HostTensor a = broadcast_to(in[1], y.shape), b = broadcast_to(in[2], y.shape);
  auto plan = plan_strided<4>(y.shape, {&y, &c, &a, &b});
  switch (dtype_size(y.dtype)) {
    case 1:
      return where_typed<uint8_t>(plan);
    case 2:
      return where_typed<uint16_t>(plan);
    case 4:
      return where_typed<uint32_t>(plan);
    case 8:
      return where_typed<uint64_t>(plan);
    default:
      TESSEL_ASSERT(false, "Where on ", dtype_name(y.dtype), " not claimed");
  }
}

}  // namespace

void register_elementwise_select(KernelRegistry& r) {
  for (int v = 0; v < op_info(OpKind::Compare).num_variants(); ++v) {
    DTypeSet s = compare_dtypes(static_cast<CmpOp>(v));
    if (!s.empty()) r.native(OpKind::Compare, kernel_compare, s, {v});
  }
  r.native(OpKind::Where, kernel_where, dtypes::kAll);  // claimed by the data dtype
}

TESSEL_ISA_END
