// The helpers declared in convert_util.h.
#include "frontends/onnx/convert_util.h"

#include <climits>
#include <cstdint>
#include <optional>

namespace tessel::onnx {

Tensor act(const std::string& kind, const Tensor& x) {
  return op1("Activation", {x}, {{"kind", kind}});
}
Tensor act(const std::string& kind, const Tensor& x, double alpha) {
  return op1("Activation", {x}, {{"kind", kind}, {"alpha", alpha}});
}
namespace {

// The IR computes on u8 and the signed integers; ONNX also defines its arithmetic, bitwise and
// comparison ops on uint16 and uint32. Those run exactly in the next wider signed type (i32, i64):
// every uint16/uint32 value fits, comparisons and shifts agree, and casting the result back
// wraps as unsigned arithmetic does. uint64 has no wider type and stays unsupported.
std::optional<DType> wider_signed(DType t) {
  if (t == DType::U16) return DType::I32;
  if (t == DType::U32) return DType::I64;
  return std::nullopt;
}

// uint64 has no wider type, but the ops whose results depend only on the bits run on the same
// bits as int64 (casts between the two keep them): bitwise ops and left shifts as they are; the
// unsigned order is the signed order of the values with their top bit flipped (Max, Min,
// comparisons); a logical right shift is the arithmetic one with the sign-extended bits masked
// off. Other ops (division, remainder, arithmetic that could overflow int64) are not lowered.
Tensor flip_top_bit(const Tensor& x) {
  return binary("BitXor", x,
                Tensor::scalar(static_cast<double>(INT64_MIN), DType::I64, x.device()));
}

std::optional<Tensor> u64_binary(const std::string& op, const Tensor& a, const Tensor& b) {
  const Tensor x = cast(a, DType::I64), y = cast(b, DType::I64);
  const std::string& dev = a.device();
  auto i64 = [&](int64_t v) {
    HostTensor t = HostTensor::empty(DType::I64, {});
    t.set_i64(0, v);
    return Tensor(t, dev);
  };
  if (op == "BitAnd" || op == "BitOr" || op == "BitXor" || op == "Shl")
    return cast(binary(op, x, y), DType::U64);
  if (op == "Max" || op == "Min")
    return cast(flip_top_bit(binary(op, flip_top_bit(x), flip_top_bit(y))), DType::U64);
  if (op == "Shr") {
    // s = 0 keeps x; otherwise (x >> s) & ~(-1 << (64 - s)), for s in [1, 63].
    Tensor zero = compare("Eq", y, i64(0));
    Tensor s = where(zero, i64(1), y);
    Tensor mask = act("Not", binary("Shl", i64(-1), binary("Sub", i64(64), s)));
    return cast(where(zero, x, binary("BitAnd", binary("Shr", x, s), mask)), DType::U64);
  }
  return std::nullopt;
}

}  // namespace

Tensor binary(const std::string& op, const Tensor& a, const Tensor& b) {
  if (a.dtype() == b.dtype()) {
    if (auto wide = wider_signed(a.dtype()))
      return cast(op1("Binary", {cast(a, *wide), cast(b, *wide)}, {{"op", op}}), a.dtype());
    if (a.dtype() == DType::U64)
      if (auto y = u64_binary(op, a, b)) return *y;
  }
  return op1("Binary", {a, b}, {{"op", op}});
}
Tensor compare(const std::string& op, const Tensor& a, const Tensor& b) {
  if (a.dtype() == b.dtype()) {
    if (auto wide = wider_signed(a.dtype()))
      return op1("Compare", {cast(a, *wide), cast(b, *wide)}, {{"op", op}});
    if (a.dtype() == DType::U64)
      return op1("Compare", {flip_top_bit(cast(a, DType::I64)), flip_top_bit(cast(b, DType::I64))},
                 {{"op", op}});
  }
  return op1("Compare", {a, b}, {{"op", op}});
}
Tensor expand_to(const Tensor& x, const Shape& shape) {
  return op1("Expand", {x}, {{"shape", shape}});
}
Tensor narrow(const Tensor& x, int64_t axis, int64_t start, int64_t length) {
  return op1("Narrow", {x}, {{"axis", axis}, {"start", start}, {"length", length}});
}
Tensor reduce_op(const std::string& op, const Tensor& x, const std::vector<int64_t>& axes,
                 bool keepdims, int64_t correction) {
  return op1("Reduce", {x},
             {{"op", op}, {"axes", axes}, {"keepdims", keepdims}, {"correction", correction}});
}

Tensor squeeze_axis(const Tensor& x, int64_t axis) {
  Shape s = x.shape();
  s.erase(s.begin() + axis);
  return reshape(x, s);
}
Tensor unsqueeze_axis(const Tensor& x, int64_t axis) {
  Shape s = x.shape();
  s.insert(s.begin() + axis, 1);
  return reshape(x, s);
}
Tensor take_slice(const Tensor& x, int64_t axis, int64_t i) {
  return squeeze_axis(narrow(x, axis, i, 1), axis);
}
Tensor stack(const NodeCtx& ctx, const std::vector<Tensor>& xs, int64_t axis) {
  std::vector<Tensor> parts;
  parts.reserve(xs.size());
  for (const Tensor& x : xs) {
    if (x.shape() != xs[0].shape() || x.dtype() != xs[0].dtype())
      ctx.fail(ErrorKind::Shape,
               "cannot stack values of differing types: ", Value(xs[0]).describe(), " and ",
               Value(x).describe());
    parts.push_back(unsqueeze_axis(x, axis));
  }
  if (parts.size() == 1) return parts[0];
  return concatenate(parts, axis);
}

void require_float(const NodeCtx& ctx, const Tensor& x, const char* what) {
  if (!is_float(x.dtype()))
    ctx.fail(ErrorKind::DType, what, " must be a floating-point tensor, not ",
             dtype_name(x.dtype()));
}
DType onnx_dtype(const NodeCtx& ctx, int64_t code) {
  std::optional<DType> dt = dtype_from_onnx(static_cast<int>(code));
  if (!dt)
    ctx.fail(ErrorKind::DType, "element type ", onnx_type_name(static_cast<int>(code)),
             " is not supported");
  return *dt;
}
int64_t host_int(const NodeCtx& ctx, int i, const char* what) {
  const std::vector<int64_t> v = ctx.ints(i);
  if (v.size() != 1) ctx.fail(ErrorKind::Shape, what, " must hold one element, not ", v.size());
  return v[0];
}
int64_t to_int64(const NodeCtx& ctx, double v, const char* what) {
  // 2^63 is exact in double; every double below it converts.
  constexpr double limit = 9223372036854775808.0;
  if (!(v >= -limit && v < limit))
    ctx.fail(ErrorKind::Value, what, " ", v, " is not a finite value in the int64 range");
  return static_cast<int64_t>(v);
}
int64_t scalar_int(const NodeCtx& ctx, int i, const char* what) {
  if (!is_inexact(ctx.in(i).dtype())) return host_int(ctx, i, what);
  return to_int64(ctx, ctx.scalar(i), what);
}

}  // namespace tessel::onnx
