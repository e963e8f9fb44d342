// VJP rules of the reductions: Reduce (every op but Prod), Softmax / log-softmax, TopK, Sort. The
// cotangent of a reduction is reshaped to the keepdims shape and broadcast back over x.
#include "ops/vjp_util.h"

namespace tessel {
namespace {

// x's elements that the reduction picks (the first maximum, or minimum, over the reduced axes)
// as a one-hot mask of x's dtype and shape: the reduced axes moved last and flattened, ArgMax
// along them, OneHot, then the moves undone.
Value first_extreme_mask(GraphBuilder& b, Value x, const std::vector<int64_t>& axes, bool max) {
  const Shape& s = b.type(x).shape;
  const int rank = static_cast<int>(s.size());
  std::vector<int64_t> perm, kept_shape;
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) reduced[a] = true;
  for (int i = 0; i < rank; ++i)
    if (!reduced[i]) {
      perm.push_back(i);
      kept_shape.push_back(s[i]);
    }
  int64_t count = 1;
  Shape moved = kept_shape;
  for (int64_t a : axes) {
    perm.push_back(a);
    count *= s[a];
    moved.push_back(s[a]);
  }
  Shape flat = kept_shape;
  flat.push_back(count);
  Value v = b.reshape(b.transpose(max ? x : b.neg(x), perm), flat);
  Value idx = b.op1(OpKind::ArgMax, Attrs().set("axis", int64_t{-1}), {v});
  Value hot =
      b.op1(OpKind::OneHot, Attrs().set("depth", count).set("dtype", b.type(x).dtype), {idx});
  std::vector<int64_t> inverse(rank);
  for (int i = 0; i < rank; ++i) inverse[perm[i]] = i;
  return b.transpose(b.reshape(hot, moved), inverse);
}

std::vector<Value> vjp_reduce(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value x = ctx.inputs[0];
  const Shape& s = ctx.type(x).shape;
  const std::vector<int64_t> axes = reduced_axes(ctx.node.attrs.ints("axes"), ctx.type(x).rank());
  const Shape kshape = keepdims_shape(s, axes);
  auto spread = [&](Value v) { return b.expand(b.reshape(v, kshape), s); };
  auto c = [&](double v) { return scalar_like(b, v, x); };
  int64_t count = 1;
  for (int64_t a : axes) count *= s[a];
  Value g = spread(ctx.cotangents[0]);
  Value y = ctx.outputs[0];
  auto centered = [&] { return b.sub(x, spread(b.mean(x, axes, true))); };
  const double dof = static_cast<double>(count - ctx.node.attrs.i("correction"));
  switch (ctx.node.attrs.e<ReduceOp>("op")) {
    case ReduceOp::Sum:
      return {g};
    case ReduceOp::Mean:
      return {b.div(g, c(static_cast<double>(count)))};
    case ReduceOp::SumSquare:
      return {b.mul(g, b.mul(c(2), x))};
    case ReduceOp::L1:
      return {b.mul(g, b.activation(ActivationKind::Sign, x))};
    case ReduceOp::L2: {  // x / ‖x‖, 0 where ‖x‖ = 0
      Value norm = spread(y);
      Value d = b.where(b.compare(CmpOp::Eq, norm, c(0)), c(0), b.div(x, norm));
      return {b.mul(g, d)};
    }
    case ReduceOp::LogSumExp:
      return {b.mul(g, b.exp(b.sub(x, spread(y))))};
    case ReduceOp::Var:  // 2 (x - mean) / (N - correction)
      return {b.mul(g, b.mul(c(2 / dof), centered()))};
    case ReduceOp::Std:  // (x - mean) / ((N - correction) · std)
      return {b.mul(g, b.div(centered(), b.mul(c(dof), spread(y))))};
    case ReduceOp::Max:
    case ReduceOp::Min:
      return {b.mul(
          g, first_extreme_mask(b, x, axes, ctx.node.attrs.e<ReduceOp>("op") == ReduceOp::Max))};
    case ReduceOp::Prod:
      break;
  }
  throw_error(ErrorKind::Unsupported, ctx.node.where(), ": no VJP rule yet for Reduce Prod");
}

std::vector<Value> vjp_softmax(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  const int64_t axis = ctx.node.attrs.i("axis");
  Value y = ctx.outputs[0], g = ctx.cotangents[0];
  if (ctx.node.attrs.b("log"))  // g - softmax(x)·Σg
    return {b.sub(g, b.mul(b.exp(y), b.sum(g, {axis}, true)))};
  return {b.mul(y, b.sub(g, b.sum(b.mul(g, y), {axis}, true)))};  // y·(g - Σ g·y)
}

// The values TopK picked went to `indices` along the axis: the cotangent goes back there.
Value scatter_back(GraphBuilder& b, Value x, Value indices, Value g, int64_t axis) {
  return b.op1(OpKind::ScatterElements,
               Attrs().set("axis", axis).set("reduction", ScatterReduction::Add),
               {zeros_like(b, x), indices, g});
}

std::vector<Value> vjp_topk(VjpCtx& ctx) {
  if (!ctx.cotangents[0].valid()) return {Value{}};  // only the (integer) indices were used
  return {scatter_back(ctx.b, ctx.inputs[0], ctx.outputs[1], ctx.cotangents[0],
                       ctx.node.attrs.i("axis"))};
}

// Sort's permutation, from ArgSort with the same attributes (stable, NaN last).
std::vector<Value> vjp_sort(VjpCtx& ctx) {
  Value order = ctx.b.op1(OpKind::ArgSort, ctx.node.attrs, {ctx.inputs[0]});
  return {scatter_back(ctx.b, ctx.inputs[0], order, ctx.cotangents[0], ctx.node.attrs.i("axis"))};
}

}  // namespace

void register_vjp_reduction(RuleTable& table) {
  table[OpKind::Reduce].vjp = vjp_reduce;
  table[OpKind::Softmax].vjp = vjp_softmax;
  table[OpKind::TopK].vjp = vjp_topk;
  table[OpKind::Sort].vjp = vjp_sort;
}

}  // namespace tessel
