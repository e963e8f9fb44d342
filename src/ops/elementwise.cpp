// Shape rules and decompositions of the Elementwise category: Activation, Cast, StopGradient,
// Binary, Compare, Where, GatedActivation. The IR does not promote: mixed dtypes are errors here
// (the C++ API inserts Casts with promote_types before building these nodes).
#include <cmath>

#include "ir/builder.h"
#include "ops/elementwise_dtypes.h"
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

constexpr DTypeSet kFloats = dtypes::kFloat | dtypes::kFp8;
constexpr DTypeSet kInts = dtypes::kInt;
constexpr DTypeSet kBool{DType::Bool};

}  // namespace

DTypeSet activation_dtypes(ActivationKind k) {
  switch (k) {
    case ActivationKind::Identity:
      return kFloats | kInts | kBool;
    case ActivationKind::Neg:
    case ActivationKind::Abs:
    case ActivationKind::Sign:
    case ActivationKind::Square:
    case ActivationKind::Relu:
      return kFloats | kInts;
    case ActivationKind::Not:
      return kInts | kBool;
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
      return kFloats;
  }
  return {};
}

DTypeSet gated_activation_dtypes(ActivationKind k) { return activation_dtypes(k) & kFloats; }

DTypeSet binary_dtypes(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Max:
    case BinaryOp::Min:
    case BinaryOp::Pow:
    case BinaryOp::Mod:
    case BinaryOp::FloorMod:
      return kFloats | kInts;
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor:
      return kInts | kBool;
    case BinaryOp::Shl:
    case BinaryOp::Shr:
      return kInts;
    case BinaryOp::Atan2:
      return kFloats;
  }
  return {};
}

DTypeSet compare_dtypes(CmpOp op) {
  switch (op) {
    case CmpOp::Eq:
    case CmpOp::Ne:
      return dtypes::kAll;
    case CmpOp::Lt:
    case CmpOp::Le:
    case CmpOp::Gt:
    case CmpOp::Ge:
      return dtypes::kNumeric | dtypes::kFp8 | kBool;
  }
  return {};
}

namespace {

void require_variant_dtype(const InferCtx& ctx, DType t, DTypeSet allowed, const char* variant) {
  if (allowed.empty()) ctx.fail(ErrorKind::DType, variant, " is not defined here (on any dtype)");
  if (!allowed.contains(t))
    ctx.fail(ErrorKind::DType, variant, " is not defined on ", dtype_name(t), "; expected one of ",
             allowed.to_string());
}

// alpha is NaN for "the kind's default"; anything else must be a finite number.
void check_alpha(const InferCtx& ctx) {
  double alpha = ctx.attrs().f("alpha");
  if (!std::isnan(alpha) && !std::isfinite(alpha))
    ctx.fail(ErrorKind::Value, "alpha must be finite (or NaN for the kind's default), got ", alpha);
}

std::vector<TensorType> infer_activation(const InferCtx& ctx) {
  auto kind = ctx.attrs().e<ActivationKind>("kind");
  const OpInfo& info = ctx.node().info();
  std::string name = info.variant_name(static_cast<int>(kind));
  require_variant_dtype(ctx, ctx.in(0).dtype, activation_dtypes(kind), name.c_str());
  check_alpha(ctx);
  return {ctx.in(0)};
}

std::vector<TensorType> infer_cast(const InferCtx& ctx) {
  return {{ctx.attrs().dtype("to"), ctx.in(0).shape}};
}

// Same-dtype operands broadcast together; the message names every shape.
Shape broadcast_all(const InferCtx& ctx, std::initializer_list<int> inputs) {
  Shape out;
  std::string shapes;
  for (int i : inputs) {
    shapes += (shapes.empty() ? "" : " and ") + shape_str(ctx.in(i).shape);
    auto b = broadcast_shapes(out, ctx.in(i).shape);
    if (!b) ctx.fail(ErrorKind::Shape, "shapes ", shapes, " do not broadcast (numpy rules)");
    out = *b;
  }
  return out;
}

std::vector<TensorType> infer_binary(const InferCtx& ctx) {
  auto op = ctx.attrs().e<BinaryOp>("op");
  DType t = same_dtype(ctx, {0, 1});
  std::string name = ctx.node().info().variant_name(static_cast<int>(op));
  require_variant_dtype(ctx, t, binary_dtypes(op), name.c_str());
  return {{t, broadcast_all(ctx, {0, 1})}};
}

std::vector<TensorType> infer_compare(const InferCtx& ctx) {
  auto op = ctx.attrs().e<CmpOp>("op");
  DType t = same_dtype(ctx, {0, 1});
  std::string name = ctx.node().info().variant_name(static_cast<int>(op));
  require_variant_dtype(ctx, t, compare_dtypes(op), name.c_str());
  return {{DType::Bool, broadcast_all(ctx, {0, 1})}};
}

std::vector<TensorType> infer_where(const InferCtx& ctx) {
  require_dtype(ctx, 0, kBool, "cond");
  DType t = same_dtype(ctx, {1, 2});
  require_dtype(ctx, 1, dtypes::kAll, "a and b");
  return {{t, broadcast_all(ctx, {0, 1, 2})}};
}

std::vector<TensorType> infer_gated_activation(const InferCtx& ctx) {
  const TensorType& x = ctx.in(0);
  auto kind = ctx.attrs().e<ActivationKind>("kind");
  std::string name = ctx.node().info().variant_name(static_cast<int>(kind));
  require_variant_dtype(ctx, x.dtype, gated_activation_dtypes(kind), name.c_str());
  if (x.rank() < 1) ctx.fail(ErrorKind::Shape, "x must have rank >= 1, got ", x.str());
  int axis = normalize_axis(ctx, ctx.attrs().i("axis"), x.rank());
  if (x.shape[axis] % 2 != 0)
    ctx.fail(ErrorKind::Shape, "axis ", axis, " of x ", x.str(),
             " has odd size; it must split into two equal halves");
  TensorType y = x;
  y.shape[axis] /= 2;
  return {y};
}

// act(first half) · second half, in the input dtype.
std::vector<Value> decompose_gated_activation(Graph& g, const Node& node,
                                              std::span<const Value> in) {
  GraphBuilder b(g);
  const TensorType& x = b.type(in[0]);
  int64_t axis = node.attrs.i("axis");
  if (axis < 0) axis += x.rank();
  int64_t half = x.shape[axis] / 2;
  Value a = b.narrow(in[0], axis, 0, half);
  Value gate = b.narrow(in[0], axis, half, half);
  return {b.mul(b.activation(node.attrs.e<ActivationKind>("kind"), a), gate)};
}

}  // namespace

void register_rules_Elementwise(RuleTable& table) {
  table[OpKind::Activation].infer = infer_activation;
  table[OpKind::Cast].infer = infer_cast;
  table[OpKind::StopGradient].infer = same_as_input;
  table[OpKind::Binary].infer = infer_binary;
  table[OpKind::Compare].infer = infer_compare;
  table[OpKind::Where].infer = infer_where;
  table[OpKind::GatedActivation].infer = infer_gated_activation;
  table[OpKind::GatedActivation].decompose = decompose_gated_activation;
}

}  // namespace tessel
