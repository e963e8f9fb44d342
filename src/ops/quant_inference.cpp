// Shape rules of the QuantInference category (kernels pending: "quantization").
//
// Quantize / Dequantize follow ONNX QuantizeLinear / DequantizeLinear: the scale is a scalar
// (per-tensor), a 1-D [x.shape[axis]] (per-axis), or has x's rank with every dim equal except
// along `axis` (blocked). The row has no block_size attribute, so a blocked scale implies it:
// block = x.shape[axis] / scale.shape[axis], which must divide exactly.
//
// Packed-weight kinds (DequantMatMul, DequantGroupedMatMul, DequantMoEWeights) hold an [n, k]
// matrix per expert, each row packed along k. w_packed is u8 of any shape; its byte count must
// equal the scheme's packed size. GGUF schemes carry their scales inside the blocks (no scale /
// zero_point inputs); the sizes below are ggml's block structs (ggml-org/llama.cpp,
// ggml/src/ggml-common.h: block_q4_0 = 2 + 16 bytes per 32 values, block_q4_K = 144 per 256, ...).
// Tessel's own schemes (no external layout to follow):
//   Int8Block      1 byte per value (i8 code);      scale [n, k/block_size] float.
//   Int8BlockAsym  1 byte per value (u8 code);      scale and u8 zero_point [n, k/block_size];
//                  w = (q - zp) · scale.
//   Int4Block      2 values per byte, low nibble first, w = (q - 8) · scale (like Q4_0);
//                  scale [n, k/block_size], block_size even.
//   Fp8E4m3/E5m2   1 byte per value (f8 bits);      scale float, 1 value or [n] (per row).
//   Nvfp4Block     2 e2m1 values per byte, low nibble first; scale f8_e4m3fn (or its raw u8
//                  bytes) [n, k/16]: NVFP4 fixes the block at 16, block_size is not consulted.
// For banks (grouped / MoE) every count above is multiplied by the number of experts.
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

constexpr DTypeSet kActivationFloats{DType::F16, DType::BF16, DType::F32};
constexpr DTypeSet kQuantCodes{DType::U8, DType::I8, DType::I16, DType::F8E4M3FN, DType::F8E5M2};
constexpr DTypeSet kQLinearCodes{DType::U8, DType::I8};

// ---------------------------------------------------------------------------------------------
// Quantize / Dequantize (ONNX).

// Checks that `scale` (input s) fits x (input 0) per tensor, per axis or per block.
void check_linear_scale(const InferCtx& ctx, int s, const char* what) {
  const TensorType& x = ctx.in(0);
  const TensorType& scale = ctx.in(s);
  if (scale.rank() == 0 || (scale.rank() == 1 && scale.shape[0] == 1)) return;  // per tensor
  if (x.rank() == 0)
    ctx.fail(ErrorKind::Shape, what, " must be a scalar for a scalar x, got ", scale.str());
  int axis = normalize_axis(ctx, ctx.attrs().i("axis"), x.rank());
  if (scale.rank() == 1) {
    if (scale.shape[0] != x.shape[axis])
      ctx.fail(ErrorKind::Shape, what, " ", scale.str(), " is per-axis but x.shape[", axis,
               "] = ", x.shape[axis], "; expected a scalar or [", x.shape[axis], "]");
    return;
  }
  if (scale.rank() != x.rank())
    ctx.fail(ErrorKind::Shape, what, " ", scale.str(),
             " must be a scalar, 1-D per-axis, or blocked with x's rank ", x.rank());
  for (int d = 0; d < x.rank(); ++d) {
    if (d == axis) {
      if (scale.shape[d] < 1 || x.shape[d] % scale.shape[d] != 0)
        ctx.fail(ErrorKind::Shape, "blocked ", what, " dim ", scale.shape[d], " along axis ", axis,
                 " must divide x's dim ", x.shape[d], " (block size = x dim / scale dim)");
    } else if (scale.shape[d] != x.shape[d]) {
      ctx.fail(ErrorKind::Shape, "blocked ", what, " ", scale.str(),
               " must match x's shape except along axis ", axis);
    }
  }
}

void check_zero_point(const InferCtx& ctx, int s, int zp, DType expected) {
  if (!ctx.has(zp)) return;
  if (ctx.in(zp).shape != ctx.in(s).shape)
    ctx.fail(ErrorKind::Shape, "zero_point ", ctx.in(zp).str(), " must have the scale's shape ",
             shape_str(ctx.in(s).shape));
  if (ctx.in(zp).dtype != expected)
    ctx.fail(ErrorKind::DType, "zero_point has dtype ", dtype_name(ctx.in(zp).dtype), "; expected ",
             dtype_name(expected));
}

std::vector<TensorType> infer_quantize(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat | DTypeSet{DType::I32}, "x");
  require_dtype(ctx, 1, dtypes::kFloat, "scale");
  DType to = ctx.attrs().dtype("dtype");
  if (!kQuantCodes.contains(to))
    ctx.fail(ErrorKind::DType, "dtype=", dtype_name(to),
             " is not a quantized type; expected one of ", kQuantCodes.to_string());
  check_linear_scale(ctx, 1, "scale");
  check_zero_point(ctx, 1, 2, to);
  return {{to, ctx.in(0).shape}};
}

std::vector<TensorType> infer_dequantize(const InferCtx& ctx) {
  require_dtype(ctx, 0, kQuantCodes | DTypeSet{DType::I32}, "x");
  require_dtype(ctx, 1, dtypes::kFloat, "scale");
  check_linear_scale(ctx, 1, "scale");
  check_zero_point(ctx, 1, 2, ctx.in(0).dtype);
  return {{ctx.in(1).dtype, ctx.in(0).shape}};
}

// ---------------------------------------------------------------------------------------------
// Packed schemes.

struct PackedLayout {
  int64_t block_values;  // values per block along k
  int64_t block_bytes;   // bytes per block
  bool gguf;             // scales live inside the blocks
};

// ggml block sizes from ggml/src/ggml-common.h (ggml_half = 2 bytes, QK_K = 256).
PackedLayout packed_layout(QuantScheme scheme, int64_t block_size) {
  switch (scheme) {
    case QuantScheme::Int8Block:
      return {block_size, block_size, false};
    case QuantScheme::Int8BlockAsym:
      return {block_size, block_size, false};
    case QuantScheme::Int4Block:
      return {block_size, block_size / 2, false};
    case QuantScheme::Fp8E4m3:
      return {1, 1, false};
    case QuantScheme::Fp8E5m2:
      return {1, 1, false};
    case QuantScheme::Nvfp4Block:
      return {16, 8, false};
    case QuantScheme::GgufQ2K:
      return {256, 84, true};  // scales 16, qs 64, d+dmin 4
    case QuantScheme::GgufQ3K:
      return {256, 110, true};  // hmask 32, qs 64, scales 12, d 2
    case QuantScheme::GgufQ4K:
      return {256, 144, true};  // d+dmin 4, scales 12, qs 128
    case QuantScheme::GgufQ5K:
      return {256, 176, true};  // d+dmin 4, scales 12, qh 32, qs 128
    case QuantScheme::GgufQ6K:
      return {256, 210, true};  // ql 128, qh 64, scales 16, d 2
    case QuantScheme::GgufQ8K:
      return {256, 292, true};  // d f32 4, qs 256, bsums 32
    case QuantScheme::GgufQ4_0:
      return {32, 18, true};  // d 2, qs 16
    case QuantScheme::GgufQ4_1:
      return {32, 20, true};  // d+m 4, qs 16
    case QuantScheme::GgufQ5_0:
      return {32, 22, true};  // d 2, qh 4, qs 16
    case QuantScheme::GgufQ5_1:
      return {32, 24, true};  // d+m 4, qh 4, qs 16
    case QuantScheme::GgufQ8_0:
      return {32, 34, true};  // d 2, qs 32
    case QuantScheme::GgufIQ4NL:
      return {32, 18, true};  // d 2, qs 16
    case QuantScheme::GgufIQ4XS:
      return {256, 136, true};  // d 2, scales_h 2, scales_l 4, qs 128
    case QuantScheme::GgufIQ2XXS:
      return {256, 66, true};  // d 2, qs 64
    case QuantScheme::GgufIQ2XS:
      return {256, 74, true};  // d 2, qs 64, scales 8
    case QuantScheme::GgufIQ2S:
      return {256, 82, true};  // d 2, qs 64, qh 8, scales 8
    case QuantScheme::GgufIQ3XXS:
      return {256, 98, true};  // d 2, qs 96
    case QuantScheme::GgufIQ3S:
      return {256, 110, true};  // d 2, qs 64, qh 8, signs 32, scales 4
    case QuantScheme::GgufIQ1S:
      return {256, 50, true};  // d 2, qs 32, qh 16
    case QuantScheme::GgufIQ1M:
      return {256, 56, true};  // qs 32, qh 16, scales 8
    case QuantScheme::GgufTQ1_0:
      return {256, 54, true};  // qs 48, qh 4, d 2
    case QuantScheme::GgufTQ2_0:
      return {256, 66, true};  // qs 64, d 2
    case QuantScheme::GgufMXFP4:
      return {32, 17, true};  // e 1, qs 16
    case QuantScheme::GgufNVFP4:
      return {64, 36, true};  // d 4 (ue4m3 per 16), qs 32
  }
  return {1, 1, false};
}

const char* scheme_name(QuantScheme s) {
  return enum_info(VariantEnum::QuantScheme).values.at(static_cast<size_t>(s)).name.c_str();
}

// Validates w_packed (and scale / zero_point) for `experts` [n, k] matrices; returns the number
// of experts when `experts` is 0 (inferred from the byte count).
int64_t check_packed(const InferCtx& ctx, int w, int scale, int zp, int64_t experts) {
  const Attrs& a = ctx.attrs();
  auto scheme = a.e<QuantScheme>("scheme");
  int64_t n = a.i("n"), k = a.i("k"), block_size = a.i("block_size");
  if (n < 1 || k < 1) ctx.fail(ErrorKind::Value, "n=", n, " and k=", k, " must be positive");
  constexpr int64_t kMaxValues = int64_t{1} << 48;  // keeps every byte count below in int64
  if (k > kMaxValues / n || experts > kMaxValues / (n * k))
    ctx.fail(ErrorKind::Value, "the packed bank [", experts, " x ", n, " x ", k, "] is too large");
  if (block_size < 1) ctx.fail(ErrorKind::Value, "block_size=", block_size, " must be positive");
  if (scheme == QuantScheme::Int4Block && block_size % 2 != 0)
    ctx.fail(ErrorKind::Value, "Int4Block packs two values a byte: block_size=", block_size,
             " must be even");
  PackedLayout layout = packed_layout(scheme, block_size);
  if (k % layout.block_values != 0)
    ctx.fail(ErrorKind::Shape, scheme_name(scheme), " packs k in blocks of ", layout.block_values,
             ": k=", k, " is not a multiple");
  if (ctx.in(w).dtype != DType::U8)
    ctx.fail(ErrorKind::DType, "w_packed must be u8 bytes, got ", ctx.in(w).str());
  int64_t per_matrix = n * (k / layout.block_values) * layout.block_bytes;
  int64_t bytes = ctx.in(w).numel();
  if (experts == 0) {
    if (bytes == 0 || bytes % per_matrix != 0)
      ctx.fail(ErrorKind::Shape, "w_packed holds ", bytes, " bytes; ", scheme_name(scheme),
               " needs a positive multiple of ", per_matrix, " (", per_matrix, " per expert [n=", n,
               ", k=", k, "])");
    experts = bytes / per_matrix;
  } else if (bytes != experts * per_matrix) {
    ctx.fail(ErrorKind::Shape, "w_packed holds ", bytes, " bytes; ", scheme_name(scheme), " needs ",
             experts * per_matrix, " for ", experts, " x [n=", n, ", k=", k, "]");
  }

  if (layout.gguf) {
    if (ctx.has(scale) || ctx.has(zp))
      ctx.fail(ErrorKind::Value, scheme_name(scheme),
               " keeps its scales inside w_packed: scale and zero_point must be absent");
    return experts;
  }
  if (!ctx.has(scale)) ctx.fail(ErrorKind::Value, scheme_name(scheme), " needs a scale input");
  const TensorType& s = ctx.in(scale);
  int64_t scale_count = 0;  // 0 = per tensor
  if (scheme == QuantScheme::Nvfp4Block) {
    require_dtype(ctx, scale, {DType::F8E4M3FN, DType::U8}, "scale");
    scale_count = experts * n * (k / 16);
  } else if (scheme == QuantScheme::Fp8E4m3 || scheme == QuantScheme::Fp8E5m2) {
    require_dtype(ctx, scale, dtypes::kFloat, "scale");
    if (s.numel() != 1) scale_count = experts * n;
  } else {  // Int8Block, Int8BlockAsym, Int4Block
    require_dtype(ctx, scale, dtypes::kFloat, "scale");
    scale_count = experts * n * (k / block_size);
  }
  if (scale_count != 0 && s.numel() != scale_count)
    ctx.fail(ErrorKind::Shape, scheme_name(scheme), " scale ", s.str(), " must hold ", scale_count,
             " values (", experts > 1 ? "experts x " : "", "n x k/block)");
  bool wants_zp = scheme == QuantScheme::Int8BlockAsym;
  if (wants_zp && !ctx.has(zp))
    ctx.fail(ErrorKind::Value, "Int8BlockAsym needs a zero_point input");
  if (!wants_zp && ctx.has(zp))
    ctx.fail(ErrorKind::Value, scheme_name(scheme), " takes no zero_point");
  if (wants_zp) {
    if (ctx.in(zp).dtype != DType::U8)
      ctx.fail(ErrorKind::DType, "Int8BlockAsym zero_point must be u8, got ", ctx.in(zp).str());
    if (ctx.in(zp).numel() != s.numel())
      ctx.fail(ErrorKind::Shape, "zero_point ", ctx.in(zp).str(), " must match the scale ",
               s.str());
  }
  return experts;
}

void check_activation_x(const InferCtx& ctx) {
  require_dtype(ctx, 0, kActivationFloats, "x");
  const TensorType& x = ctx.in(0);
  int64_t k = ctx.attrs().i("k");
  if (x.rank() < 1 || x.shape.back() != k)
    ctx.fail(ErrorKind::Shape, "x ", x.str(), " must be [..., k=", k, "]");
}

// x [..., k] · W[n, k]ᵀ -> [..., n]
std::vector<TensorType> infer_dequant_matmul(const InferCtx& ctx) {
  check_activation_x(ctx);
  check_packed(ctx, 1, 2, 3, 1);
  Shape y = ctx.in(0).shape;
  y.back() = ctx.attrs().i("n");
  return {{ctx.in(0).dtype, y}};
}

// x [..., k], expert_ids [...] -> y [..., n] with y[t] = x[t] · W[expert_ids[t]]ᵀ; the number of
// experts comes from w_packed's byte count.
std::vector<TensorType> infer_dequant_grouped_matmul(const InferCtx& ctx) {
  check_activation_x(ctx);
  check_packed(ctx, 1, 3, 4, 0);
  require_dtype(ctx, 2, dtypes::kIndex, "expert_ids");
  Shape lead(ctx.in(0).shape.begin(), ctx.in(0).shape.end() - 1);
  if (ctx.in(2).shape != lead)
    ctx.fail(ErrorKind::Shape, "expert_ids ", ctx.in(2).str(), " must be x's leading shape ",
             shape_str(lead));
  Shape y = ctx.in(0).shape;
  y.back() = ctx.attrs().i("n");
  return {{ctx.in(0).dtype, y}};
}

// w_packed -> f32 [experts, n, k]
std::vector<TensorType> infer_dequant_moe_weights(const InferCtx& ctx) {
  int64_t experts = ctx.attrs().i("experts");
  if (experts < 1) ctx.fail(ErrorKind::Value, "experts=", experts, " must be positive");
  check_packed(ctx, 0, 1, 2, experts);
  return {{DType::F32, {experts, ctx.attrs().i("n"), ctx.attrs().i("k")}}};
}

// ---------------------------------------------------------------------------------------------
// QLinearMatMul / QLinearConv (ONNX).

// A scale / zero-point pair of a QLinear op: scale float, 1 value or [per] values (per > 0);
// the zero point has the scale's shape and the dtype `zp_dtype`.
void check_qparams(const InferCtx& ctx, int s, int zp, DType zp_dtype, int64_t per,
                   const char* what) {
  require_dtype(ctx, s, dtypes::kFloat, what);
  const TensorType& scale = ctx.in(s);
  bool per_tensor = scale.rank() == 0 || (scale.rank() == 1 && scale.shape[0] == 1);
  bool per_channel = per > 0 && scale.rank() == 1 && scale.shape[0] == per;
  if (!per_tensor && !per_channel)
    ctx.fail(ErrorKind::Shape, what, " ", scale.str(), " must be a scalar",
             per > 0 ? " or [" + std::to_string(per) + "]" : std::string());
  const TensorType& z = ctx.in(zp);
  if (z.dtype != zp_dtype)
    ctx.fail(ErrorKind::DType, what, "'s zero point has dtype ", dtype_name(z.dtype), "; expected ",
             dtype_name(zp_dtype));
  if (z.shape != scale.shape)
    ctx.fail(ErrorKind::Shape, what, "'s zero point ", z.str(), " must have the scale's shape ",
             shape_str(scale.shape));
}

// numpy matmul shape (1-D operands promoted and the added dim dropped); fails on mismatch.
Shape matmul_shape(const InferCtx& ctx, const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) ctx.fail(ErrorKind::Shape, "matmul operands must have rank >= 1");
  Shape a2 = a.size() == 1 ? Shape{1, a[0]} : a;
  Shape b2 = b.size() == 1 ? Shape{b[0], 1} : b;
  int64_t m = a2[a2.size() - 2], ka = a2.back(), kb = b2[b2.size() - 2], n = b2.back();
  if (ka != kb) ctx.fail(ErrorKind::Shape, "inner dims differ: a has K=", ka, ", b has K=", kb);
  auto batch = broadcast_shapes(Shape(a2.begin(), a2.end() - 2), Shape(b2.begin(), b2.end() - 2));
  if (!batch)
    ctx.fail(ErrorKind::Shape, "batch dims ", shape_str(a), " and ", shape_str(b),
             " do not broadcast");
  Shape y = *batch;
  if (a.size() > 1) y.push_back(m);
  if (b.size() > 1) y.push_back(n);
  return y;
}

// a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp: a_scale per tensor or per row of a [M],
// b_scale per tensor or per column of b [N]; y's dtype is y_zero_point's.
std::vector<TensorType> infer_qmatmul(const InferCtx& ctx) {
  require_dtype(ctx, 0, kQLinearCodes, "a");
  require_dtype(ctx, 3, kQLinearCodes, "b");
  require_dtype(ctx, 7, kQLinearCodes, "y_zero_point");
  Shape y = matmul_shape(ctx, ctx.in(0).shape, ctx.in(3).shape);
  const Shape& a = ctx.in(0).shape;
  const Shape& b = ctx.in(3).shape;
  check_qparams(ctx, 1, 2, ctx.in(0).dtype, a.size() > 1 ? a[a.size() - 2] : 0, "a_scale");
  check_qparams(ctx, 4, 5, ctx.in(3).dtype, b.size() > 1 ? b.back() : 0, "b_scale");
  check_qparams(ctx, 6, 7, ctx.in(7).dtype, 0, "y_scale");
  return {{ctx.in(7).dtype, y}};
}

std::vector<int64_t> ints_or(const InferCtx& ctx, const char* name, size_t n, int64_t fill) {
  std::vector<int64_t> v = ctx.attrs().ints(name);
  if (v.empty()) return std::vector<int64_t>(n, fill);
  if (v.size() != n) ctx.fail(ErrorKind::Value, name, " has ", v.size(), " values; expected ", n);
  return v;
}

// x [N,C,H,W], w [M, C/groups, kh, kw], b? i32 [M]; pads ONNX [top, left, bottom, right].
std::vector<TensorType> infer_qconv2d(const InferCtx& ctx) {
  require_dtype(ctx, 0, kQLinearCodes, "x");
  require_dtype(ctx, 3, kQLinearCodes, "w");
  require_dtype(ctx, 7, kQLinearCodes, "y_zero_point");
  require_rank(ctx, 0, 4);
  require_rank(ctx, 3, 4);
  const Shape& x = ctx.in(0).shape;
  const Shape& w = ctx.in(3).shape;
  int64_t groups = ctx.attrs().i("groups");
  if (groups < 1) ctx.fail(ErrorKind::Value, "groups=", groups, " must be positive");
  if (x[1] % groups != 0 || w[0] % groups != 0)
    ctx.fail(ErrorKind::Shape, "groups=", groups, " must divide C=", x[1], " and M=", w[0]);
  if (w[1] * groups != x[1])
    ctx.fail(ErrorKind::Shape, "w ", shape_str(w), " needs C/groups = ", x[1] / groups,
             " input channels, has ", w[1]);
  auto strides = ints_or(ctx, "strides", 2, 1);
  auto dilations = ints_or(ctx, "dilations", 2, 1);
  auto pads = ints_or(ctx, "pads", 4, 0);
  Shape y{x[0], w[0], 0, 0};
  constexpr int64_t kMaxAttr = int64_t{1} << 31;  // keeps the arithmetic below in int64
  for (int d = 0; d < 2; ++d) {
    if (strides[d] < 1 || dilations[d] < 1 || pads[d] < 0 || pads[d + 2] < 0 ||
        strides[d] > kMaxAttr || dilations[d] > kMaxAttr || pads[d] > kMaxAttr ||
        pads[d + 2] > kMaxAttr)
      ctx.fail(ErrorKind::Value,
               "strides and dilations must be in [1, 2^31] and pads in [0, 2^31]");
    int64_t span = dilations[d] * (w[2 + d] - 1) + 1;
    int64_t padded = x[2 + d] + pads[d] + pads[d + 2];
    if (padded < span)
      ctx.fail(ErrorKind::Shape, "kernel span ", span, " exceeds padded input ", padded,
               " along spatial dim ", d);
    y[2 + d] = (padded - span) / strides[d] + 1;
  }
  check_qparams(ctx, 1, 2, ctx.in(0).dtype, 0, "x_scale");
  check_qparams(ctx, 4, 5, ctx.in(3).dtype, w[0], "w_scale");
  check_qparams(ctx, 6, 7, ctx.in(7).dtype, 0, "y_scale");
  if (ctx.has(8)) {
    if (ctx.in(8).dtype != DType::I32)
      ctx.fail(ErrorKind::DType, "bias must be i32 (ONNX QLinearConv), got ", ctx.in(8).str());
    if (ctx.in(8).shape != Shape{w[0]})
      ctx.fail(ErrorKind::Shape, "bias ", ctx.in(8).str(), " must be [M=", w[0], "]");
  }
  return {{ctx.in(7).dtype, y}};
}

}  // namespace

void register_rules_QuantInference(RuleTable& table) {
  table[OpKind::Quantize].infer = infer_quantize;
  table[OpKind::Dequantize].infer = infer_dequantize;
  table[OpKind::DequantMatMul].infer = infer_dequant_matmul;
  table[OpKind::DequantGroupedMatMul].infer = infer_dequant_grouped_matmul;
  table[OpKind::DequantMoEWeights].infer = infer_dequant_moe_weights;
  table[OpKind::QMatMul].infer = infer_qmatmul;
  table[OpKind::QConv2d].infer = infer_qconv2d;
}

}  // namespace tessel
