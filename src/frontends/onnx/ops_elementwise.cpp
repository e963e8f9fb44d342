// Elementwise ONNX ops: unary math and activations, binary arithmetic, comparisons, logic and
// bitwise ops, Where, Clip, Cast / CastLike, and the variadic Sum / Mean / Max / Min.
#include <charconv>
#include <cmath>
#include <limits>

#include "frontends/onnx/convert_util.h"

namespace tessel::onnx {
namespace {

// One ONNX unary op onto one activation kind.
template <const char* Kind>
std::vector<Value> unary(NodeCtx& ctx) {
  return {act(Kind, ctx.in(0))};
}

#define TESSEL_UNARY(onnx_name, kind) constexpr char k##onnx_name[] = #kind;
TESSEL_UNARY(Abs, Abs)
TESSEL_UNARY(Neg, Neg)
TESSEL_UNARY(Exp, Exp)
TESSEL_UNARY(Log, Log)
TESSEL_UNARY(Sqrt, Sqrt)
TESSEL_UNARY(Reciprocal, Reciprocal)
TESSEL_UNARY(Sin, Sin)
TESSEL_UNARY(Cos, Cos)
TESSEL_UNARY(Tan, Tan)
TESSEL_UNARY(Asin, Asin)
TESSEL_UNARY(Acos, Acos)
TESSEL_UNARY(Atan, Atan)
TESSEL_UNARY(Sinh, Sinh)
TESSEL_UNARY(Cosh, Cosh)
TESSEL_UNARY(Asinh, Asinh)
TESSEL_UNARY(Acosh, Acosh)
TESSEL_UNARY(Atanh, Atanh)
TESSEL_UNARY(Tanh, Tanh)
TESSEL_UNARY(Sigmoid, Sigmoid)
TESSEL_UNARY(Relu, Relu)
TESSEL_UNARY(Erf, Erf)
TESSEL_UNARY(Floor, Floor)
TESSEL_UNARY(Ceil, Ceil)
TESSEL_UNARY(Round, Round)
TESSEL_UNARY(Sign, Sign)
TESSEL_UNARY(Not, Not)
TESSEL_UNARY(BitwiseNot, Not)
TESSEL_UNARY(Softplus, Softplus)
TESSEL_UNARY(Softsign, Softsign)
TESSEL_UNARY(Mish, Mish)
TESSEL_UNARY(HardSwish, HardSwish)
#undef TESSEL_UNARY

template <const char* Op>
std::vector<Value> binary_op(NodeCtx& ctx) {
  return {binary(Op, ctx.in(0), ctx.in(1))};
}
template <const char* Op>
std::vector<Value> compare_op(NodeCtx& ctx) {
  return {compare(Op, ctx.in(0), ctx.in(1))};
}
constexpr char kAdd[] = "Add", kSub[] = "Sub", kMul[] = "Mul", kDiv[] = "Div";
constexpr char kAnd[] = "BitAnd", kOr[] = "BitOr", kXor[] = "BitXor";
constexpr char kEq[] = "Eq", kLt[] = "Lt", kLe[] = "Le", kGt[] = "Gt", kGe[] = "Ge";

std::vector<Value> logical(NodeCtx& ctx, const char* op) {
  Tensor a = ctx.in(0), b = ctx.in(1);
  if (a.dtype() != DType::Bool || b.dtype() != DType::Bool)
    ctx.fail(ErrorKind::DType, "takes bool tensors, not ", dtype_name(a.dtype()), " and ",
             dtype_name(b.dtype()));
  return {binary(op, a, b)};
}

std::vector<Value> pow_op(NodeCtx& ctx) {
  Tensor x = ctx.in(0), y = ctx.in(1);
  // The exponent may have another type (T1 / T2): compute in the base's type.
  if (y.dtype() != x.dtype()) y = cast(y, x.dtype());
  return {binary("Pow", x, y)};
}

std::vector<Value> mod_op(NodeCtx& ctx) {
  Tensor a = ctx.in(0), b = ctx.in(1);
  const bool fmod = ctx.attr_int("fmod", 0) != 0;
  if (!fmod && is_float(a.dtype()))
    ctx.fail(ErrorKind::Format, "fmod=0 is only defined for integer inputs, not ",
             dtype_name(a.dtype()));
  return {binary(fmod ? "Mod" : "FloorMod", a, b)};
}

std::vector<Value> bit_shift(NodeCtx& ctx) {
  const std::string dir = ctx.attr_string("direction");
  if (dir != "LEFT" && dir != "RIGHT")
    ctx.fail(ErrorKind::Format, "direction must be LEFT or RIGHT, not '", dir, "'");
  return {binary(dir == "LEFT" ? "Shl" : "Shr", ctx.in(0), ctx.in(1))};
}

std::vector<Value> leaky_relu(NodeCtx& ctx) {
  return {act("LeakyRelu", ctx.in(0), ctx.attr_float("alpha", 0.01))};
}
std::vector<Value> elu(NodeCtx& ctx) {
  return {act("Elu", ctx.in(0), ctx.attr_float("alpha", 1.0))};
}
std::vector<Value> selu(NodeCtx& ctx) {
  const double alpha = ctx.attr_float("alpha", 1.67326319217681884765625);
  const double gamma = ctx.attr_float("gamma", 1.05070102214813232421875);
  Tensor x = ctx.in(0);
  return {act("Elu", x, alpha) * ctx.scalar_tensor(gamma, x.dtype())};
}
std::vector<Value> hard_sigmoid(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  const double alpha = ctx.attr_float("alpha", 0.2), beta = ctx.attr_float("beta", 0.5);
  Tensor y = x * ctx.scalar_tensor(alpha, x.dtype()) + ctx.scalar_tensor(beta, x.dtype());
  return {clamp(y, 0.0, 1.0)};
}
std::vector<Value> thresholded_relu(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  Tensor zero = ctx.scalar_tensor(0, x.dtype());
  return {
      where(compare("Gt", x, ctx.scalar_tensor(ctx.attr_float("alpha", 1.0), x.dtype())), x, zero)};
}
std::vector<Value> shrink(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  const double bias = ctx.attr_float("bias", 0.0), lambd = ctx.attr_float("lambd", 0.5);
  const DType dt = x.dtype();
  Tensor lo = compare("Lt", x, ctx.scalar_tensor(-lambd, dt));
  Tensor hi = compare("Gt", x, ctx.scalar_tensor(lambd, dt));
  Tensor zero = ctx.scalar_tensor(0, dt);
  return {where(lo, binary("Add", x, ctx.scalar_tensor(bias, dt)),
                where(hi, binary("Sub", x, ctx.scalar_tensor(bias, dt)), zero))};
}
std::vector<Value> prelu(NodeCtx& ctx) {
  Tensor x = ctx.in(0), slope = ctx.in(1);
  // Before opset 7 a 1-D slope of C values applied per channel (axis 1), as exporters of that
  // time relied on; numpy broadcasting would align it with the last axis instead.
  if (slope.rank() == 1 && x.rank() >= 2 && slope.shape()[0] == x.shape()[1] &&
      slope.shape()[0] != x.shape().back()) {
    Shape per_channel(static_cast<size_t>(x.rank() - 1), 1);
    per_channel[0] = slope.shape()[0];
    slope = reshape(slope, per_channel);
  }
  Tensor neg = compare("Lt", x, ctx.scalar_tensor(0, x.dtype()));
  return {where(neg, binary("Mul", x, slope), x)};
}
std::vector<Value> celu(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  const double alpha = ctx.attr_float("alpha", 1.0);
  // max(0, x) + min(0, alpha·(exp(x/alpha) - 1))
  Tensor a = ctx.scalar_tensor(alpha, x.dtype());
  Tensor e = binary("Mul", a, act("Expm1", binary("Div", x, a)));
  Tensor zero = ctx.scalar_tensor(0, x.dtype());
  return {binary("Add", binary("Max", x, zero), binary("Min", e, zero))};
}

std::vector<Value> is_nan(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  return {compare("Ne", x, x)};
}
std::vector<Value> is_inf(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  const bool pos = ctx.attr_int("detect_positive", 1) != 0;
  const bool neg = ctx.attr_int("detect_negative", 1) != 0;
  const double inf = std::numeric_limits<double>::infinity();
  Tensor p = compare("Eq", x, ctx.scalar_tensor(inf, x.dtype()));
  Tensor n = compare("Eq", x, ctx.scalar_tensor(-inf, x.dtype()));
  if (pos && neg) return {binary("BitOr", p, n)};
  if (pos) return {p};
  if (neg) return {n};
  return {compare("Ne", p, p)};  // all false
}

std::vector<Value> where_op(NodeCtx& ctx) { return {where(ctx.in(0), ctx.in(1), ctx.in(2))}; }

std::vector<Value> clip(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  if (ctx.opset() < 11) {
    const double inf = std::numeric_limits<double>::infinity();
    return {clamp(x, ctx.attr_float("min", -inf), ctx.attr_float("max", inf))};
  }
  // min / max are optional inputs; integer bounds are compared exactly.
  Tensor y = x;
  if (ctx.has(1)) y = binary("Max", y, ctx.in(1));
  if (ctx.has(2)) y = binary("Min", y, ctx.in(2));
  return {y};
}

// Variadic, broadcasting Sum / Mean / Max / Min.
std::vector<Value> variadic(NodeCtx& ctx, const char* op) {
  if (ctx.num_inputs() == 0) ctx.fail(ErrorKind::Format, "needs at least one input");
  Tensor y = ctx.in(0);
  for (int i = 1; i < ctx.num_inputs(); ++i) y = binary(op, y, ctx.in(i));
  return {y};
}
std::vector<Value> sum_op(NodeCtx& ctx) { return variadic(ctx, "Add"); }
std::vector<Value> max_op(NodeCtx& ctx) { return variadic(ctx, "Max"); }
std::vector<Value> min_op(NodeCtx& ctx) { return variadic(ctx, "Min"); }
std::vector<Value> mean_op(NodeCtx& ctx) {
  Tensor y = variadic(ctx, "Add")[0].tensor;
  return {binary("Div", y, ctx.scalar_tensor(ctx.num_inputs(), y.dtype()))};
}

// Cast between numeric types, and to / from string tensors (which live in the importer).
Value cast_value(NodeCtx& ctx, const Value& x, int to) {
  if (to == pb::TensorProto::STRING) {
    if (!x.is_tensor()) return x;
    HostTensor h = x.tensor.data();
    std::vector<std::string> out(static_cast<size_t>(h.numel()));
    for (int64_t i = 0; i < h.numel(); ++i) {
      if (is_float(h.dtype)) {
        // numpy's str(): the shortest text that reads back as the same value of the input's
        // width, with ".0" on integral values; "nan", "inf", "-inf".
        const double v = h.get_f64(i);
        char buf[64];
        auto r = h.dtype == DType::F64
                     ? std::to_chars(buf, buf + sizeof buf, v)
                     : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
        std::string text(buf, r.ptr);
        if (std::isfinite(v) && text.find_first_of(".e") == std::string::npos) text += ".0";
        out[i] = text;
      } else if (h.dtype == DType::Bool) {
        out[i] = h.get_i64(i) ? "1" : "0";
      } else {
        out[i] = std::to_string(h.get_i64(i));
      }
    }
    return Value::string_tensor(h.shape, std::move(out));
  }
  std::optional<DType> dt = dtype_from_onnx(to);
  if (!dt) ctx.fail(ErrorKind::Format, "'to' names unknown element type ", to);
  if (x.kind == Value::Kind::Strings) {
    HostTensor h = HostTensor::empty(*dt, x.shape);
    for (size_t i = 0; i < x.strings.size(); ++i) {
      const std::string& s = x.strings[i];
      double v;
      try {
        size_t used = 0;
        v = std::stod(s, &used);
      } catch (const std::exception&) {
        if (s == "NaN" || s == "nan")
          v = std::nan("");
        else if (s == "INF" || s == "inf" || s == "+INF")
          v = INFINITY;
        else if (s == "-INF" || s == "-inf")
          v = -INFINITY;
        else
          ctx.fail(ErrorKind::Value, "cannot convert string '", s, "' to ", dtype_name(*dt));
      }
      if (is_float(*dt))
        h.set_f64(static_cast<int64_t>(i), v);
      else
        h.set_i64(static_cast<int64_t>(i), to_int64(ctx, v, "string value"));
    }
    return Value(ctx.constant(std::move(h)));
  }
  return Value(cast(ctx.in(0), *dt));
}

std::vector<Value> cast_op(NodeCtx& ctx) {
  return {cast_value(ctx, ctx.value(0), static_cast<int>(ctx.attr_int("to")))};
}
std::vector<Value> cast_like(NodeCtx& ctx) {
  const Value& like = ctx.value(1);
  const int to = like.kind == Value::Kind::Strings ? static_cast<int>(pb::TensorProto::STRING)
                                                   : onnx_from_dtype(like.tensor.dtype());
  return {cast_value(ctx, ctx.value(0), to)};
}

constexpr Converter kConverters[] = {
    {"", "Abs", unary<kAbs>},
    {"", "Neg", unary<kNeg>},
    {"", "Exp", unary<kExp>},
    {"", "Log", unary<kLog>},
    {"", "Sqrt", unary<kSqrt>},
    {"", "Reciprocal", unary<kReciprocal>},
    {"", "Sin", unary<kSin>},
    {"", "Cos", unary<kCos>},
    {"", "Tan", unary<kTan>},
    {"", "Asin", unary<kAsin>},
    {"", "Acos", unary<kAcos>},
    {"", "Atan", unary<kAtan>},
    {"", "Sinh", unary<kSinh>},
    {"", "Cosh", unary<kCosh>},
    {"", "Asinh", unary<kAsinh>},
    {"", "Acosh", unary<kAcosh>},
    {"", "Atanh", unary<kAtanh>},
    {"", "Tanh", unary<kTanh>},
    {"", "Sigmoid", unary<kSigmoid>},
    {"", "Relu", unary<kRelu>},
    {"", "Erf", unary<kErf>},
    {"", "Floor", unary<kFloor>},
    {"", "Ceil", unary<kCeil>},
    {"", "Round", unary<kRound>},
    {"", "Sign", unary<kSign>},
    {"", "Not", unary<kNot>},
    {"", "BitwiseNot", unary<kBitwiseNot>},
    {"", "Softplus", unary<kSoftplus>},
    {"", "Softsign", unary<kSoftsign>},
    {"", "Mish", unary<kMish>},
    {"", "HardSwish", unary<kHardSwish>},
    {"", "LeakyRelu", leaky_relu},
    {"", "Elu", elu},
    {"", "Selu", selu},
    {"", "Celu", celu},
    {"", "HardSigmoid", hard_sigmoid},
    {"", "ThresholdedRelu", thresholded_relu},
    {"", "Shrink", shrink},
    {"", "PRelu", prelu},
    {"", "IsNaN", is_nan},
    {"", "IsInf", is_inf},
    {"", "Add", binary_op<kAdd>},
    {"", "Sub", binary_op<kSub>},
    {"", "Mul", binary_op<kMul>},
    {"", "Div", binary_op<kDiv>},
    {"", "Pow", pow_op},
    {"", "Mod", mod_op},
    {"", "BitShift", bit_shift},
    {"", "BitwiseAnd", binary_op<kAnd>},
    {"", "BitwiseOr", binary_op<kOr>},
    {"", "BitwiseXor", binary_op<kXor>},
    {"", "And", [](NodeCtx& c) { return logical(c, "BitAnd"); }},
    {"", "Or", [](NodeCtx& c) { return logical(c, "BitOr"); }},
    {"", "Xor", [](NodeCtx& c) { return logical(c, "BitXor"); }},
    {"", "Equal", compare_op<kEq>},
    {"", "Less", compare_op<kLt>},
    {"", "LessOrEqual", compare_op<kLe>},
    {"", "Greater", compare_op<kGt>},
    {"", "GreaterOrEqual", compare_op<kGe>},
    {"", "Where", where_op},
    {"", "Clip", clip},
    {"", "Sum", sum_op},
    {"", "Mean", mean_op},
    {"", "Max", max_op},
    {"", "Min", min_op},
    {"", "Cast", cast_op},
    {"", "CastLike", cast_like},
};

}  // namespace

std::span<const Converter> elementwise_converters() { return kConverters; }

}  // namespace tessel::onnx
