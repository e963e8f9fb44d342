// Typed op constructors, written once and shared by the graph builder (decompositions, passes,
// importers) and the lazy Tensor API: `Derived` supplies emit(kind, attrs, inputs) and
// scalar(value, dtype); V is the value handle (Value or Tensor).
#pragma once

#include <utility>
#include <vector>

#include "ir/graph.h"

namespace tessel {

template <class Derived, class V>
class OpBuilders {
 public:
  V op1(OpKind kind, Attrs attrs, std::vector<V> inputs) {
    auto outs = self().emit(kind, std::move(attrs), std::move(inputs));
    TESSEL_ASSERT(outs.size() == 1, op_name(kind), " has several outputs");
    return outs[0];
  }

  // Elementwise
  V activation(ActivationKind k, V x) {
    return op1(OpKind::Activation, Attrs().set("kind", k), {x});
  }
  V activation(ActivationKind k, V x, double alpha) {
    return op1(OpKind::Activation, Attrs().set("kind", k).set("alpha", alpha), {x});
  }
  V binary(BinaryOp op, V a, V b) { return op1(OpKind::Binary, Attrs().set("op", op), {a, b}); }
  V compare(CmpOp op, V a, V b) { return op1(OpKind::Compare, Attrs().set("op", op), {a, b}); }
  V add(V a, V b) { return binary(BinaryOp::Add, a, b); }
  V sub(V a, V b) { return binary(BinaryOp::Sub, a, b); }
  V mul(V a, V b) { return binary(BinaryOp::Mul, a, b); }
  V div(V a, V b) { return binary(BinaryOp::Div, a, b); }
  V maximum(V a, V b) { return binary(BinaryOp::Max, a, b); }
  V minimum(V a, V b) { return binary(BinaryOp::Min, a, b); }
  V pow(V a, V b) { return binary(BinaryOp::Pow, a, b); }
  V neg(V x) { return activation(ActivationKind::Neg, x); }
  V exp(V x) { return activation(ActivationKind::Exp, x); }
  V log(V x) { return activation(ActivationKind::Log, x); }
  V sqrt(V x) { return activation(ActivationKind::Sqrt, x); }
  V rsqrt(V x) { return activation(ActivationKind::Rsqrt, x); }
  V where(V c, V a, V b) { return op1(OpKind::Where, Attrs(), {c, a, b}); }
  V cast(V x, DType to) { return op1(OpKind::Cast, Attrs().set("to", to), {x}); }
  V clamp(V x, double lo, double hi) {
    return op1(OpKind::Clamp, Attrs().set("min", lo).set("max", hi), {x});
  }
  V stop_gradient(V x) { return op1(OpKind::StopGradient, Attrs(), {x}); }

  // Linear algebra
  V matmul(V a, V b, bool ta = false, bool tb = false) {
    return op1(OpKind::MatMul, Attrs().set("transpose_a", ta).set("transpose_b", tb), {a, b});
  }

  // Shape
  V reshape(V x, Shape shape) {
    return op1(OpKind::Reshape, Attrs().set("shape", std::move(shape)), {x});
  }
  V transpose(V x, std::vector<int64_t> perm) {
    return op1(OpKind::Transpose, Attrs().set("perm", std::move(perm)), {x});
  }
  V expand(V x, Shape shape) {
    return op1(OpKind::Expand, Attrs().set("shape", std::move(shape)), {x});
  }
  V narrow(V x, int64_t axis, int64_t start, int64_t length) {
    return op1(OpKind::Narrow, Attrs().set("axis", axis).set("start", start).set("length", length),
               {x});
  }
  V concat(std::vector<V> xs, int64_t axis) {
    return op1(OpKind::Concat, Attrs().set("axis", axis), std::move(xs));
  }
  V gather(V x, V idx, int64_t axis) {
    return op1(OpKind::Gather, Attrs().set("axis", axis), {x, idx});
  }
  std::vector<V> split(V x, int64_t axis, std::vector<int64_t> sizes) {
    return self().emit(OpKind::Split, Attrs().set("axis", axis).set("sizes", std::move(sizes)),
                       {x});
  }

  // Reductions
  V reduce(ReduceOp op, V x, std::vector<int64_t> axes, bool keepdims = false) {
    return op1(OpKind::Reduce,
               Attrs().set("op", op).set("axes", std::move(axes)).set("keepdims", keepdims), {x});
  }
  V sum(V x, std::vector<int64_t> axes, bool keepdims = false) {
    return reduce(ReduceOp::Sum, x, std::move(axes), keepdims);
  }
  V mean(V x, std::vector<int64_t> axes, bool keepdims = false) {
    return reduce(ReduceOp::Mean, x, std::move(axes), keepdims);
  }
  V softmax(V x, int64_t axis = -1, bool log = false) {
    return op1(OpKind::Softmax, Attrs().set("axis", axis).set("log", log), {x});
  }

  // Normalization
  V layer_norm(V x, V gamma, V beta, int64_t axis, double eps) {
    return op1(OpKind::LayerNorm, Attrs().set("axis", axis).set("eps", eps), {x, gamma, beta});
  }
  V rms_norm(V x, V gamma, int64_t axis, double eps) {
    return op1(OpKind::RmsNorm, Attrs().set("axis", axis).set("eps", eps), {x, gamma});
  }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
};

// Builds into a Graph. Decompositions and passes use this.
class GraphBuilder : public OpBuilders<GraphBuilder, Value> {
 public:
  explicit GraphBuilder(Graph& g) : g_(g) {}
  std::vector<Value> emit(OpKind kind, Attrs attrs, std::vector<Value> inputs) {
    return g_.add(kind, std::move(attrs), std::move(inputs));
  }
  Value scalar(double v, DType dtype) {
    HostTensor t = HostTensor::empty(dtype, {});
    t.set_f64(0, v);
    return g_.constant(std::move(t));
  }
  const TensorType& type(Value v) const { return g_.type(v); }
  Graph& graph() { return g_; }

 private:
  Graph& g_;
};

}  // namespace tessel
