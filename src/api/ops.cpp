#include "tessel/ops.h"

#include "api/lazy.h"

namespace tessel {
namespace {

detail::LazyBuilder& lb() {
  static thread_local detail::LazyBuilder b;
  return b;
}

// PyTorch promotion for two tensors: cast both to the promoted dtype.
std::pair<Tensor, Tensor> promote(const Tensor& a, const Tensor& b) {
  DType t = promote_types(a.dtype(), b.dtype());
  return {a.dtype() == t ? a : lb().cast(a, t), b.dtype() == t ? b : lb().cast(b, t)};
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  auto [x, y] = promote(a, b);
  return lb().binary(op, x, y);
}

Tensor compare(CmpOp op, const Tensor& a, const Tensor& b) {
  auto [x, y] = promote(a, b);
  return lb().compare(op, x, y);
}

// A scalar operand: the tensor's dtype, unless a non-integral value meets an integer tensor.
Tensor scalar_like(const Tensor& t, double v) {
  DType dt = t.dtype();
  if ((is_integer(dt) || dt == DType::Bool) && v != static_cast<double>(static_cast<int64_t>(v)))
    dt = DType::F32;
  return Tensor::scalar(v, dt, t.device());
}

Attrs to_attrs(const OpInfo& info, const std::vector<NamedAttr>& named) {
  Attrs attrs;
  for (const NamedAttr& a : named) {
    const AttrSpec* spec = info.find_attr(a.name);
    if (spec && spec->type == AttrType::Enum) {
      if (auto s = std::get_if<std::string>(&a.value)) {
        auto v = enum_value_from_name(spec->enum_type, *s);
        if (!v)
          throw_error(ErrorKind::Value, "[", info.name, "] '", *s, "' is not a ",
                      enum_info(spec->enum_type).name);
        attrs.set(a.name, AttrValue(int64_t{*v}));
        continue;
      }
    }
    std::visit([&](const auto& v) { attrs.set(a.name, AttrValue(v)); }, a.value);
  }
  return attrs;
}

Tensor act(ActivationKind k, const Tensor& x) { return lb().activation(k, x); }

ActivationKind act_from_name(const std::string& name) {
  auto v = enum_value_from_name(VariantEnum::ActivationKind, name);
  if (!v) throw_error(ErrorKind::Value, "[activation] unknown kind '", name, "'");
  return static_cast<ActivationKind>(*v);
}

}  // namespace

namespace detail {
AliasTarget kind_or_alias(const std::string& name) {
  if (std::optional<OpKind> kind = op_from_name(name)) return {*kind, -1};
  if (auto alias = resolve_alias(name)) return *alias;
  throw_error(ErrorKind::Value, "[op] '", name,
              "' is neither an op kind nor a seed operation ID (see `tessel ops`)");
}
}  // namespace detail

std::vector<Tensor> op(const std::string& kind_or_alias, const std::vector<Tensor>& inputs,
                       const std::vector<NamedAttr>& named, const std::string& device) {
  auto [kind, variant] = detail::kind_or_alias(kind_or_alias);
  const OpInfo& info = op_info(kind);
  Attrs attrs = to_attrs(info, named);
  if (variant >= 0 && !attrs.has(info.attrs[info.variant_attr].name))
    attrs.set(info.attrs[info.variant_attr].name, AttrValue(int64_t{variant}));
  return detail::record(kind, std::move(attrs), inputs, device);
}

Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Div, a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Pow, a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Max, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Min, a, b); }
Tensor atan2(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Atan2, a, b); }
Tensor equal(const Tensor& a, const Tensor& b) { return compare(CmpOp::Eq, a, b); }
Tensor not_equal(const Tensor& a, const Tensor& b) { return compare(CmpOp::Ne, a, b); }
Tensor less(const Tensor& a, const Tensor& b) { return compare(CmpOp::Lt, a, b); }
Tensor less_equal(const Tensor& a, const Tensor& b) { return compare(CmpOp::Le, a, b); }
Tensor greater(const Tensor& a, const Tensor& b) { return compare(CmpOp::Gt, a, b); }
Tensor greater_equal(const Tensor& a, const Tensor& b) { return compare(CmpOp::Ge, a, b); }
Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) {
  auto [x, y] = promote(a, b);
  return lb().where(c, x, y);
}
Tensor cast(const Tensor& x, DType to) { return lb().cast(x, to); }
Tensor clamp(const Tensor& x, double lo, double hi) { return lb().clamp(x, lo, hi); }
Tensor stop_gradient(const Tensor& x) { return lb().stop_gradient(x); }
Tensor activation(const std::string& kind, const Tensor& x) { return act(act_from_name(kind), x); }
Tensor relu(const Tensor& x) { return act(ActivationKind::Relu, x); }
Tensor gelu(const Tensor& x, bool approximate) {
  return act(approximate ? ActivationKind::GeluApprox : ActivationKind::Gelu, x);
}
Tensor silu(const Tensor& x) { return act(ActivationKind::Silu, x); }
Tensor sigmoid(const Tensor& x) { return act(ActivationKind::Sigmoid, x); }
Tensor tanh(const Tensor& x) { return act(ActivationKind::Tanh, x); }
Tensor exp(const Tensor& x) { return act(ActivationKind::Exp, x); }
Tensor log(const Tensor& x) { return act(ActivationKind::Log, x); }
Tensor sqrt(const Tensor& x) { return act(ActivationKind::Sqrt, x); }
Tensor rsqrt(const Tensor& x) { return act(ActivationKind::Rsqrt, x); }
Tensor abs(const Tensor& x) { return act(ActivationKind::Abs, x); }
Tensor neg(const Tensor& x) { return act(ActivationKind::Neg, x); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& x) { return neg(x); }
Tensor operator+(const Tensor& a, double b) { return add(a, scalar_like(a, b)); }
Tensor operator-(const Tensor& a, double b) { return sub(a, scalar_like(a, b)); }
Tensor operator*(const Tensor& a, double b) { return mul(a, scalar_like(a, b)); }
Tensor operator/(const Tensor& a, double b) { return div(a, scalar_like(a, b)); }
Tensor operator*(double a, const Tensor& b) { return mul(scalar_like(b, a), b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return less(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return greater(a, b); }
Tensor operator==(const Tensor& a, const Tensor& b) { return equal(a, b); }

Tensor matmul(const Tensor& a, const Tensor& b) {
  auto [x, y] = promote(a, b);
  return lb().matmul(x, y);
}
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  return lb().op1(OpKind::Einsum, Attrs().set("equation", equation), operands);
}
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& a) {
  return lb().op1(OpKind::FusedMatMulBiasAct, Attrs().set("act", act_from_name(a)), {x, w, b});
}

Tensor sum(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  return lb().sum(x, axes, keepdims);
}
Tensor mean(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  return lb().mean(x, axes, keepdims);
}
Tensor max(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  return lb().reduce(ReduceOp::Max, x, axes, keepdims);
}
Tensor min(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  return lb().reduce(ReduceOp::Min, x, axes, keepdims);
}
Tensor logsumexp(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  return lb().reduce(ReduceOp::LogSumExp, x, axes, keepdims);
}
Tensor softmax(const Tensor& x, int64_t axis) { return lb().softmax(x, axis, false); }
Tensor log_softmax(const Tensor& x, int64_t axis) { return lb().softmax(x, axis, true); }
Tensor argmax(const Tensor& x, int64_t axis, bool keepdims) {
  return lb().op1(OpKind::ArgMax, Attrs().set("axis", axis).set("keepdims", keepdims), {x});
}
Tensor cumsum(const Tensor& x, int64_t axis) {
  return lb().op1(OpKind::Cumsum, Attrs().set("axis", axis), {x});
}
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t axis) {
  auto outs = lb().emit(OpKind::TopK, Attrs().set("k", k).set("axis", axis), {x});
  return {outs[0], outs[1]};
}
Tensor sort(const Tensor& x, int64_t axis, bool descending) {
  return lb().op1(OpKind::Sort, Attrs().set("axis", axis).set("descending", descending), {x});
}

Tensor reshape(const Tensor& x, Shape shape) { return lb().reshape(x, std::move(shape)); }
Tensor transpose(const Tensor& x, std::vector<int64_t> perm) {
  return lb().transpose(x, std::move(perm));
}
Tensor broadcast_to(const Tensor& x, Shape shape) { return lb().expand(x, std::move(shape)); }
Tensor concatenate(const std::vector<Tensor>& xs, int64_t axis) { return lb().concat(xs, axis); }
std::vector<Tensor> split(const Tensor& x, std::vector<int64_t> sizes, int64_t axis) {
  return lb().split(x, axis, std::move(sizes));
}
Tensor slice(const Tensor& x, std::vector<int64_t> starts, std::vector<int64_t> ends,
             std::vector<int64_t> axes, std::vector<int64_t> steps) {
  return lb().op1(
      OpKind::Slice,
      Attrs().set("starts", starts).set("ends", ends).set("axes", axes).set("steps", steps), {x});
}
Tensor pad(const Tensor& x, std::vector<int64_t> pads, const std::string& mode, double value) {
  return op("Pad", {x}, {{"pads", pads}, {"mode", mode}, {"value", value}})[0];
}
Tensor take(const Tensor& x, const Tensor& indices, int64_t axis) {
  return lb().gather(x, indices, axis);
}
Tensor embedding(const Tensor& weight, const Tensor& ids) {
  return lb().op1(OpKind::Embedding, Attrs(), {weight, ids});
}

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  return lb().layer_norm(x, gamma, beta, -1, eps);
}
Tensor rms_norm(const Tensor& x, const Tensor& gamma, double eps) {
  return lb().rms_norm(x, gamma, -1, eps);
}
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const std::string& mask_kind,
                 const Tensor& mask, double scale) {
  return op("Attention", {q, k, v, mask}, {{"mask_kind", mask_kind}, {"scale", scale}})[0];
}
Tensor rope(const Tensor& x, const std::string& style, double base) {
  return op("Rope", {x}, {{"style", style}, {"base", base}})[0];
}
Tensor conv(const Tensor& x, const Tensor& w, const Tensor& b, std::vector<int64_t> strides,
            std::vector<int64_t> pads, std::vector<int64_t> dilations, int64_t groups) {
  return lb().op1(OpKind::Conv,
                  Attrs()
                      .set("strides", strides)
                      .set("pads", pads)
                      .set("dilations", dilations)
                      .set("groups", groups),
                  {x, w, b});
}
Tensor max_pool(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> strides,
                std::vector<int64_t> pads) {
  return lb().op1(OpKind::Pool,
                  Attrs()
                      .set("kind", PoolKind::Max)
                      .set("kernel", kernel)
                      .set("strides", strides)
                      .set("pads", pads),
                  {x});
}
Tensor avg_pool(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> strides,
                std::vector<int64_t> pads) {
  return lb().op1(OpKind::Pool,
                  Attrs()
                      .set("kind", PoolKind::Avg)
                      .set("kernel", kernel)
                      .set("strides", strides)
                      .set("pads", pads),
                  {x});
}
Tensor dropout(const Tensor& x, double p, int64_t seed) {
  return lb().op1(OpKind::Dropout, Attrs().set("p", p).set("seed", seed), {x});
}

Tensor arange(double start, double limit, double delta, DType dtype) {
  return lb().op1(
      OpKind::Range,
      Attrs().set("start", start).set("limit", limit).set("delta", delta).set("dtype", dtype), {});
}
Tensor full(Shape shape, double value, DType dtype) {
  HostTensor t = HostTensor::empty(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, value);
  return Tensor(std::move(t));
}
Tensor zeros(Shape shape, DType dtype) { return full(std::move(shape), 0, dtype); }
Tensor ones(Shape shape, DType dtype) { return full(std::move(shape), 1, dtype); }
Tensor random_uniform(Shape shape, int64_t seed, double low, double high, DType dtype) {
  return lb().op1(OpKind::RngUniform,
                  Attrs()
                      .set("shape", shape)
                      .set("seed", seed)
                      .set("low", low)
                      .set("high", high)
                      .set("dtype", dtype),
                  {});
}
Tensor random_normal(Shape shape, int64_t seed, double mean, double std, DType dtype) {
  return lb().op1(OpKind::RngNormal,
                  Attrs()
                      .set("shape", shape)
                      .set("seed", seed)
                      .set("mean", mean)
                      .set("std", std)
                      .set("dtype", dtype),
                  {});
}

}  // namespace tessel
