// Reference kernels of the Elementwise category. Floats are computed in f64 from the exact input
// values and rounded once to the output dtype; integers in exact int64 arithmetic (wrapping as
// two's complement) and wrapped to the output width by the store.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/reference/kernels.h"
#include "ir/dtype_convert.h"
#include "ops/cast_elements.h"
#include "ops/elementwise_dtypes.h"
#include "ops/scalar_math.h"

namespace tessel::reference {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool is_exact(DType t) { return is_integer(t) || t == DType::Bool; }

// ---- Activation -----------------------------------------------------------------------------

// Integer and bool variants; wraparound through uint64, wrapped again to the width by the store.
int64_t activation_i64(ActivationKind k, int64_t v, DType t) {
  auto u = static_cast<uint64_t>(v);
  switch (k) {
    case ActivationKind::Identity:
      return v;
    case ActivationKind::Neg:
      return static_cast<int64_t>(0 - u);
    case ActivationKind::Abs:
      return v < 0 ? static_cast<int64_t>(0 - u) : v;
    case ActivationKind::Sign:
      return (v > 0) - (v < 0);
    case ActivationKind::Square:
      return static_cast<int64_t>(u * u);
    case ActivationKind::Relu:
      return v < 0 ? 0 : v;
    case ActivationKind::Not:
      return t == DType::Bool ? (v == 0) : static_cast<int64_t>(~u);
    case ActivationKind::Gelu:
    case ActivationKind::GeluApprox:
    case ActivationKind::Silu:
    case ActivationKind::Sigmoid:
    case ActivationKind::Tanh:
    case ActivationKind::Exp:
    case ActivationKind::Log:
    case ActivationKind::Sqrt:
    case ActivationKind::Rsqrt:
    case ActivationKind::Sin:
    case ActivationKind::Cos:
    case ActivationKind::Tan:
    case ActivationKind::Atan:
    case ActivationKind::Round:
    case ActivationKind::LeakyRelu:
    case ActivationKind::Elu:
    case ActivationKind::Selu:
    case ActivationKind::Softplus:
    case ActivationKind::Softsign:
    case ActivationKind::HardSigmoid:
    case ActivationKind::HardSwish:
    case ActivationKind::Mish:
    case ActivationKind::Erf:
    case ActivationKind::Expm1:
    case ActivationKind::Log1p:
    case ActivationKind::Reciprocal:
    case ActivationKind::Asin:
    case ActivationKind::Acos:
    case ActivationKind::Sinh:
    case ActivationKind::Cosh:
    case ActivationKind::Asinh:
    case ActivationKind::Acosh:
    case ActivationKind::Atanh:
    case ActivationKind::Floor:
    case ActivationKind::Ceil:
      break;  // float-only: the shape rule rejects integer inputs
  }
  TESSEL_ASSERT(false, "integer activation variant not claimed");
  return 0;
}

void kernel_activation(const Node& node, std::span<const HostTensor> in,
                       std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  auto kind = node.attrs.e<ActivationKind>("kind");
  if (is_exact(x.dtype)) {
    for (int64_t i = 0; i < y.numel(); ++i)
      y.set_i64(i, activation_i64(kind, x.get_i64(i), x.dtype));
    return;
  }
  double alpha = node.attrs.f("alpha");
  for (int64_t i = 0; i < y.numel(); ++i) y.set_f64(i, activation_f64(kind, x.get_f64(i), alpha));
}

// ---- Cast / StopGradient --------------------------------------------------------------------

void kernel_cast(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  cast_elements(in[0], out[0], node.attrs.b("saturate"));
}

// Copies bytes element by element through both views' strides.
void copy_elements(const HostTensor& src, const HostTensor& dst) {
  int size = dtype_size(dst.dtype);
  for_each_index(dst.shape, [&](const std::vector<int64_t>& idx) {
    std::memcpy(dst.element_ptr(dst.offset_of(idx.data())),
                src.element_ptr(src.offset_of(idx.data())), size);
  });
}

void kernel_stop_gradient(const Node&, std::span<const HostTensor> in, std::span<HostTensor> out) {
  copy_elements(in[0], out[0]);
}

// ---- Binary ---------------------------------------------------------------------------------

[[noreturn]] void fail_value(const Node& node, const char* what, int64_t a, int64_t b) {
  throw_error(ErrorKind::Value, node.where(), ": ", what, " (a = ", a, ", b = ", b, ")");
}

uint64_t pow_wrapped(uint64_t base, int64_t exponent) {
  uint64_t result = 1;
  for (auto e = static_cast<uint64_t>(exponent); e; e >>= 1) {
    if (e & 1) result *= base;
    base *= base;
  }
  return result;
}

// Exact in int64 with two's-complement wraparound; the store wraps to the dtype's width.
int64_t binary_i64(const Node& node, BinaryOp op, int64_t a, int64_t b, DType t) {
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  const int bits = 8 * dtype_size(t);
  switch (op) {
    case BinaryOp::Add:
      return static_cast<int64_t>(ua + ub);
    case BinaryOp::Sub:
      return static_cast<int64_t>(ua - ub);
    case BinaryOp::Mul:
      return static_cast<int64_t>(ua * ub);
    case BinaryOp::Div:
      if (b == 0) fail_value(node, "integer division by zero", a, b);
      return b == -1 ? static_cast<int64_t>(0 - ua) : a / b;  // truncates toward zero
    case BinaryOp::Mod:
      if (b == 0) fail_value(node, "integer modulo by zero", a, b);
      return b == -1 ? 0 : a % b;
    case BinaryOp::FloorMod: {
      if (b == 0) fail_value(node, "integer modulo by zero", a, b);
      int64_t r = b == -1 ? 0 : a % b;
      return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
    }
    case BinaryOp::Max:
      return std::max(a, b);
    case BinaryOp::Min:
      return std::min(a, b);
    case BinaryOp::Pow:
      if (b < 0) fail_value(node, "integer power with a negative exponent", a, b);
      return static_cast<int64_t>(pow_wrapped(ua, b));
    case BinaryOp::BitAnd:
      return a & b;
    case BinaryOp::BitOr:
      return a | b;
    case BinaryOp::BitXor:
      return a ^ b;
    case BinaryOp::Shl:
      if (b < 0) fail_value(node, "negative shift amount", a, b);
      return b >= bits ? 0 : static_cast<int64_t>(ua << b);
    case BinaryOp::Shr:
      if (b < 0) fail_value(node, "negative shift amount", a, b);
      return b >= bits ? (a < 0 ? -1 : 0) : a >> b;  // arithmetic; unsigned loads are >= 0
    case BinaryOp::Atan2:
      break;  // float-only: the shape rule rejects integer inputs
  }
  TESSEL_ASSERT(false, "integer binary op not claimed");
  return 0;
}

void kernel_binary(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  HostTensor a = broadcast_to(in[0], y.shape), b = broadcast_to(in[1], y.shape);
  auto op = node.attrs.e<BinaryOp>("op");
  if (is_exact(y.dtype)) {
    for (int64_t i = 0; i < y.numel(); ++i)
      y.set_i64(i, binary_i64(node, op, a.get_i64(i), b.get_i64(i), y.dtype));
    return;
  }
  for (int64_t i = 0; i < y.numel(); ++i) y.set_f64(i, binary_f64(op, a.get_f64(i), b.get_f64(i)));
}

// ---- Compare / Where ------------------------------------------------------------------------

void kernel_compare(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  HostTensor a = broadcast_to(in[0], y.shape), b = broadcast_to(in[1], y.shape);
  auto op = node.attrs.e<CmpOp>("op");
  DType t = a.dtype;
  for (int64_t i = 0; i < y.numel(); ++i) {
    bool r;
    if (is_exact(t)) {
      r = compare_values(op, a.get_i64(i), b.get_i64(i));
    } else if (is_complex(t)) {
      bool eq = a.get_c128(i) == b.get_c128(i);  // only Eq / Ne are claimed on complex
      r = op == CmpOp::Eq ? eq : !eq;
    } else {
      r = compare_values(op, a.get_f64(i), b.get_f64(i));
    }
    y.set_i64(i, r);
  }
}

void kernel_where(const Node&, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  HostTensor c = broadcast_to(in[0], y.shape);
  HostTensor a = broadcast_to(in[1], y.shape), b = broadcast_to(in[2], y.shape);
  int size = dtype_size(y.dtype);
  for_each_index(y.shape, [&](const std::vector<int64_t>& idx) {
    const HostTensor& src = at_i64(c, idx) != 0 ? a : b;
    std::memcpy(y.element_ptr(y.offset_of(idx.data())), src.element_ptr(src.offset_of(idx.data())),
                size);
  });
}

// ---- GatedActivation ------------------------------------------------------------------------

// y = act(a) · b with a, b the halves of x along axis; one rounding of the f64 product.
void kernel_gated_activation(const Node& node, std::span<const HostTensor> in,
                             std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  auto kind = node.attrs.e<ActivationKind>("kind");
  int64_t axis = node.attrs.i("axis");
  if (axis < 0) axis += x.rank();
  int64_t half = y.shape[axis];
  const int64_t gate_step = half * x.strides[axis];  // from a's element to b's
  int64_t linear = 0;
  for_each_index(y.shape, [&](const std::vector<int64_t>& idx) {
    int64_t off = x.offset_of(idx.data());
    double a = load_f64(x, off), b = load_f64(x, off + gate_step);
    y.set_f64(linear++, activation_f64(kind, a, kNaN) * b);
  });
}

// ---- Claims ---------------------------------------------------------------------------------

// One claim per variant, on exactly the dtypes its shape rule accepts.
template <class Variant>
void claim_variants(Registry& r, OpKind kind, HostKernel fn, DTypeSet (*dtypes)(Variant)) {
  for (int v = 0; v < op_info(kind).num_variants(); ++v) {
    DTypeSet s = dtypes(static_cast<Variant>(v));
    if (!s.empty()) r.native(kind, fn, s, {v});
  }
}

}  // namespace

void register_Elementwise(Registry& r) {
  claim_variants(r, OpKind::Activation, kernel_activation, activation_dtypes);
  r.native(OpKind::Cast, kernel_cast, dtypes::kEvery);
  r.native(OpKind::StopGradient, kernel_stop_gradient, dtypes::kEvery);
  claim_variants(r, OpKind::Binary, kernel_binary, binary_dtypes);
  claim_variants(r, OpKind::Compare, kernel_compare, compare_dtypes);
  // Claimed by the data dtype (claim_dtype skips the bool condition).
  r.native(OpKind::Where, kernel_where, kAll);
  claim_variants(r, OpKind::GatedActivation, kernel_gated_activation, gated_activation_dtypes);
}

}  // namespace tessel::reference
