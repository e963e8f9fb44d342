// Quantization ONNX ops: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
// QLinearMatMul, ConvInteger, QLinearConv.
//
// Tessel's Quantize kinds are still pending, so these are decomposed into casts, rounding and
// integer MatMul / f64 Conv.
#include <optional>

#include "frontends/onnx/conv_window.h"
#include "frontends/onnx/convert_util.h"

namespace tessel::onnx {
namespace {

// A per-tensor (scalar / one element) or per-axis (1-D of x.shape[axis]) parameter, shaped to
// broadcast against x.
Tensor per_axis(const NodeCtx& ctx, const Tensor& p, int64_t rank, int64_t axis,
                const Shape& x_shape, const char* what) {
  if (p.rank() == 0 || p.numel() == 1) return reshape(p, {});
  if (p.rank() != 1 || rank == 0 || p.shape()[0] != x_shape[axis])
    ctx.fail(ErrorKind::Shape, what, " ", Value(p).describe(), " must be a scalar or 1-D of ",
             rank ? x_shape[axis] : 1, " elements (axis ", axis, ")");
  Shape s(static_cast<size_t>(rank), 1);
  s[axis] = p.shape()[0];
  return reshape(p, s);
}

// --- quantization ------------------------------------------------------------------------------

// The quantization axis: only a per-axis (1-D, several elements) scale gives it a meaning.
int64_t quant_axis(const NodeCtx& ctx, const Tensor& x, const Tensor& scale) {
  if (scale.numel() == 1 && scale.rank() <= 1) return 0;
  return normalize_axis(ctx, ctx.attr_int("axis", 1), x.rank());
}

struct IntRange {
  double lo, hi;
};
std::optional<IntRange> int_range(DType t) {
  switch (t) {
    case DType::U8:
      return IntRange{0, 255};
    case DType::I8:
      return IntRange{-128, 127};
    case DType::I16:
      return IntRange{-32768, 32767};
    case DType::U16:
      return IntRange{0, 65535};
    case DType::I32:
      return IntRange{-2147483648.0, 2147483647.0};
    default:
      return std::nullopt;
  }
}

DType compute_float(DType t) { return t == DType::F64 ? DType::F64 : DType::F32; }

// saturate(round_half_even(x / scale) + zero_point) as `to` (x, scale, zp broadcast already).
Tensor quantize(const NodeCtx& ctx, const Tensor& x, const Tensor& scale, const Tensor& zp,
                DType to, bool saturate) {
  const DType cf = compute_float(x.dtype());
  Tensor v = cast(x, cf) / cast(scale, cf);
  if (std::optional<IntRange> r = int_range(to)) {
    v = act("Round", v);
    if (zp.defined()) v = v + cast(zp, cf);
    return cast(clamp(v, r->lo, r->hi), to);
  }
  if (!is_float(to)) ctx.fail(ErrorKind::DType, "cannot quantize to ", dtype_name(to));
  if (zp.defined()) v = v + cast(zp, cf);
  return op1("Cast", {v}, {{"to", to}, {"saturate", saturate}});
}

std::vector<Value> quantize_linear(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  if (ctx.attr_int("block_size", 0) != 0)
    ctx.fail(ErrorKind::Unsupported, "blocked quantization (block_size) is not supported");
  const int64_t axis = quant_axis(ctx, x, ctx.in(1));
  Tensor scale = per_axis(ctx, ctx.in(1), x.rank(), axis, x.shape(), "y_scale");
  Tensor zp;
  DType to = DType::U8;
  if (ctx.has(2)) {
    zp = per_axis(ctx, ctx.in(2), x.rank(), axis, x.shape(), "y_zero_point");
    to = zp.dtype();
  } else if (ctx.has_attr("output_dtype") && ctx.attr_int("output_dtype") != 0) {
    to = onnx_dtype(ctx, ctx.attr_int("output_dtype"));
  }
  return {quantize(ctx, x, scale, zp, to, ctx.attr_int("saturate", 1) != 0)};
}

// (x - zero_point) as f32 (or f64), exactly: integer inputs are subtracted as i32.
Tensor centered(const Tensor& x, const Tensor& zp, DType cf) {
  if (is_integer(x.dtype()) && x.dtype() != DType::I64) {
    Tensor d = cast(x, DType::I32);
    if (zp.defined()) d = d - cast(zp, DType::I32);
    return cast(d, cf);
  }
  Tensor d = cast(x, cf);
  return zp.defined() ? d - cast(zp, cf) : d;
}

std::vector<Value> dequantize_linear(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  if (ctx.attr_int("block_size", 0) != 0)
    ctx.fail(ErrorKind::Unsupported, "blocked quantization (block_size) is not supported");
  const int64_t axis = quant_axis(ctx, x, ctx.in(1));
  Tensor scale = per_axis(ctx, ctx.in(1), x.rank(), axis, x.shape(), "x_scale");
  require_float(ctx, scale, "x_scale");
  Tensor zp =
      ctx.has(2) ? per_axis(ctx, ctx.in(2), x.rank(), axis, x.shape(), "x_zero_point") : Tensor();
  const DType cf = compute_float(scale.dtype());
  Tensor y = centered(x, zp, cf) * cast(scale, cf);
  return {cast(y, scale.dtype())};
}

std::vector<Value> dynamic_quantize_linear(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  require_float(ctx, x, "x");
  x = cast(x, DType::F32);
  Tensor zero = ctx.scalar_tensor(0, DType::F32);
  Tensor lo = binary("Min", tessel::min(x), zero), hi = binary("Max", tessel::max(x), zero);
  Tensor scale = (hi - lo) / ctx.scalar_tensor(255, DType::F32);
  Tensor zp = clamp(act("Round", (zero - lo) / scale), 0, 255);
  Tensor y = clamp(act("Round", x / scale) + zp, 0, 255);
  return {cast(y, DType::U8), scale, cast(zp, DType::U8)};
}

// A zero point of a matrix operand as i32: per-row ([M] for A: [M, 1]) or per-column ([N] for
// B) or per-tensor.
Tensor matrix_zero_point(const NodeCtx& ctx, int i, const Tensor& m, bool rows) {
  Tensor zp = cast(ctx.in(i), DType::I32);
  if (zp.numel() == 1) return reshape(zp, {});
  if (rows && zp.rank() == 1) {
    if (m.rank() < 2 || zp.shape()[0] != m.shape()[m.rank() - 2])
      ctx.fail(ErrorKind::Shape, "per-row zero point ", Value(zp).describe(), " does not match A ",
               Value(m).describe());
    return reshape(zp, {zp.shape()[0], 1});
  }
  return zp;
}

// (A - a_zp) · (B - b_zp) in i32.
Tensor integer_matmul(const NodeCtx& ctx, const Tensor& a, int a_zp, const Tensor& b, int b_zp) {
  for (const Tensor* t : {&a, &b})
    if (t->dtype() != DType::U8 && t->dtype() != DType::I8)
      ctx.fail(ErrorKind::DType, "takes u8 / i8 matrices, not ", dtype_name(t->dtype()));
  Tensor ai = cast(a, DType::I32), bi = cast(b, DType::I32);
  if (ctx.has(a_zp)) ai = ai - matrix_zero_point(ctx, a_zp, a, true);
  if (ctx.has(b_zp)) bi = bi - matrix_zero_point(ctx, b_zp, b, false);
  return matmul(ai, bi);
}

std::vector<Value> matmul_integer(NodeCtx& ctx) {
  return {integer_matmul(ctx, ctx.in(0), 2, ctx.in(1), 3)};
}

// A per-row scale of A ([M] -> [M, 1]) or a per-tensor one.
Tensor row_scale(const Tensor& s) {
  if (s.numel() == 1) return reshape(s, {});
  return s.rank() == 1 ? reshape(s, {s.shape()[0], 1}) : s;
}

std::vector<Value> qlinear_matmul(NodeCtx& ctx) {
  Tensor acc = cast(integer_matmul(ctx, ctx.in(0), 2, ctx.in(3), 5), DType::F32);
  Tensor a_scale = cast(row_scale(ctx.in(1)), DType::F32);
  Tensor b_scale = cast(ctx.in(4), DType::F32);
  if (b_scale.numel() == 1) b_scale = reshape(b_scale, {});
  Tensor y_scale = cast(row_scale(ctx.in(6)), DType::F32);
  Tensor y_zp = ctx.in(7);
  if (y_zp.numel() == 1) y_zp = reshape(y_zp, {});
  Tensor v = act("Round", acc * (a_scale * b_scale / y_scale));
  std::optional<IntRange> r = int_range(y_zp.dtype());
  if (!r) ctx.fail(ErrorKind::DType, "y_zero_point must be u8 or i8");
  return {cast(clamp(v + cast(y_zp, DType::F32), r->lo, r->hi), y_zp.dtype())};
}

// (x - x_zp) ⋆ (w - w_zp), exactly, in f64 (Conv runs on floats; f64 holds every i32 sum).
Tensor integer_conv(const NodeCtx& ctx, const Tensor& x, const Tensor& x_zp, const Tensor& w,
                    const Tensor& w_zp) {
  for (const Tensor* t : {&x, &w})
    if (t->dtype() != DType::U8 && t->dtype() != DType::I8)
      ctx.fail(ErrorKind::DType, "takes u8 / i8 tensors, not ", dtype_name(t->dtype()));
  // Checked before w's shape is used: a per-channel zero point is shaped [M, 1, ...] from it.
  if (x.rank() < 3)
    ctx.fail(ErrorKind::Shape, "x ", Value(x).describe(), " must be [N, C, spatial...]");
  if (w.rank() != x.rank())
    ctx.fail(ErrorKind::Shape, "w ", Value(w).describe(), " must have x's rank ", x.rank(),
             " ([M, C/group, k...])");
  Tensor xf = centered(x, x_zp.defined() ? reshape(x_zp, {}) : Tensor(), DType::F64);
  Tensor wzp;
  if (w_zp.defined()) {
    if (w_zp.numel() == 1) {
      wzp = reshape(w_zp, {});
    } else {
      Shape s(static_cast<size_t>(w.rank()), 1);
      s[0] = w_zp.numel();
      wzp = reshape(w_zp, s);
    }
  }
  Tensor wf = centered(w, wzp, DType::F64);
  return op1("Conv", {xf, wf, Tensor()}, conv_attrs(ctx, x, w));
}

std::vector<Value> conv_integer(NodeCtx& ctx) {
  Tensor y = integer_conv(ctx, ctx.in(0), ctx.has(2) ? ctx.in(2) : Tensor(), ctx.in(1),
                          ctx.has(3) ? ctx.in(3) : Tensor());
  return {cast(y, DType::I32)};
}

std::vector<Value> qlinear_conv(NodeCtx& ctx) {
  Tensor x = ctx.in(0), w = ctx.in(3);
  Tensor acc = integer_conv(ctx, x, ctx.in(2), w, ctx.in(5));
  const int64_t rank = acc.rank();
  Shape channel(static_cast<size_t>(rank), 1);
  channel[1] = acc.shape()[1];
  if (ctx.has(8)) acc = acc + reshape(cast(ctx.in(8), DType::F64), channel);
  Tensor w_scale = cast(ctx.in(4), DType::F32);
  w_scale = w_scale.numel() == 1 ? reshape(w_scale, {}) : reshape(w_scale, channel);
  Tensor mult =
      cast(reshape(ctx.in(1), {}), DType::F32) * w_scale / cast(reshape(ctx.in(6), {}), DType::F32);
  Tensor y_zp = reshape(ctx.in(7), {});
  std::optional<IntRange> r = int_range(y_zp.dtype());
  if (!r) ctx.fail(ErrorKind::DType, "y_zero_point must be u8 or i8");
  Tensor v = act("Round", cast(acc, DType::F32) * mult) + cast(y_zp, DType::F32);
  return {cast(clamp(v, r->lo, r->hi), y_zp.dtype())};
}

constexpr Converter kConverters[] = {
    {"", "QuantizeLinear", quantize_linear},
    {"", "DequantizeLinear", dequantize_linear},
    {"", "DynamicQuantizeLinear", dynamic_quantize_linear},
    {"", "MatMulInteger", matmul_integer},
    {"", "QLinearMatMul", qlinear_matmul},
    {"", "ConvInteger", conv_integer},
    {"", "QLinearConv", qlinear_conv},
};

}  // namespace

std::span<const Converter> quant_converters() { return kConverters; }

}  // namespace tessel::onnx
