// VJP rules of the reductions: Reduce (Prod zero-safe), Softmax / log-softmax, TopK, Sort, and
// the scans CumProd and CumMax. The cotangent of a reduction is reshaped to the keepdims shape
// and broadcast back over x.
#include "ops/vjp_util.h"

namespace tessel {
namespace {

// x with the reduced axes moved last and flattened into one, and the way back.
struct Flattened {
  Value v;                       // [kept..., count]
  Shape moved;                   // [kept..., reduced...]
  std::vector<int64_t> inverse;  // the permutation undoing the move
};
Flattened reduced_last(GraphBuilder& b, Value x, const std::vector<int64_t>& axes) {
  const Shape& s = b.type(x).shape;
  const int rank = static_cast<int>(s.size());
  std::vector<int64_t> perm;
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) reduced[a] = true;
  Flattened f;
  for (int i = 0; i < rank; ++i)
    if (!reduced[i]) {
      perm.push_back(i);
      f.moved.push_back(s[i]);
    }
  Shape flat = f.moved;
  int64_t count = 1;
  for (int64_t a : axes) {
    perm.push_back(a);
    count *= s[a];
    f.moved.push_back(s[a]);
  }
  flat.push_back(count);
  f.v = b.reshape(b.transpose(x, perm), flat);
  f.inverse.resize(rank);
  for (int i = 0; i < rank; ++i) f.inverse[perm[i]] = i;
  return f;
}
// v (of f.v's shape) put back in x's layout.
Value restore(GraphBuilder& b, const Flattened& f, Value v) {
  return b.transpose(b.reshape(v, f.moved), f.inverse);
}

// x's elements that the reduction picks (the first maximum, or minimum, over the reduced axes)
// as a one-hot mask of x's dtype and shape: ArgMax over the flattened reduced axes, OneHot.
Value first_extreme_mask(GraphBuilder& b, Value x, const std::vector<int64_t>& axes, bool max) {
  const Flattened f = reduced_last(b, max ? x : b.neg(x), axes);
  const int64_t count = b.type(f.v).shape.back();
  Value idx = b.op1(OpKind::ArgMax, Attrs().set("axis", int64_t{-1}), {f.v});
  Value hot =
      b.op1(OpKind::OneHot, Attrs().set("depth", count).set("dtype", b.type(x).dtype), {idx});
  return restore(b, f, hot);
}

// A scan (Cumsum, CumProd, CumMax) of v along `axis`.
Value scan(GraphBuilder& b, OpKind kind, Value v, int64_t axis, bool reverse,
           bool exclusive = false) {
  Attrs a = Attrs().set("axis", axis).set("reverse", reverse);
  if (kind == OpKind::Cumsum) a.set("exclusive", exclusive);
  return b.op1(kind, std::move(a), {v});
}

// The product of the other elements of each reduced slice: exclusive cumulative products from
// both ends (a 1 padded in front of the scan, the last product dropped), multiplied. No
// division, so exact with any number of zeros.
Value prod_of_others(GraphBuilder& b, Value x, const std::vector<int64_t>& axes) {
  const Flattened f = reduced_last(b, x, axes);
  const int rank = b.type(f.v).rank();
  const int64_t n = b.type(f.v).shape.back();
  auto exclusive = [&](bool reverse) {
    std::vector<int64_t> pads(2 * rank, 0);
    pads[reverse ? 2 * rank - 1 : rank - 1] = 1;
    Value padded = b.op1(OpKind::Pad, Attrs().set("pads", pads).set("value", 1.0), {f.v});
    return b.narrow(scan(b, OpKind::CumProd, padded, -1, reverse), -1, reverse ? 1 : 0, n);
  };
  return restore(b, f, b.mul(exclusive(false), exclusive(true)));
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
      return {b.mul(g, prod_of_others(b, x, axes))};
  }
  throw_error(ErrorKind::Internal, ctx.node.where(), ": unknown Reduce op");
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

// y_i = Π_{j<=i} x_j (in scan order). Before a line's first zero, dx_j = Σ_{i>=j} g_i·y_i / x_j;
// at the first zero z, dx_z = Σ_{i>=z} g_i·y'_i, y' the scan with x_z taken as 1 (the products
// without it); past it 0, as every product there holds x_z besides x_j. No division by zero.
std::vector<Value> vjp_cumprod(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value x = ctx.inputs[0], y = ctx.outputs[0], g = ctx.cotangents[0];
  const int64_t axis = ctx.node.attrs.i("axis");
  const bool rev = ctx.node.attrs.b("reverse");
  auto c = [&](double v) { return scalar_like(b, v, x); };
  Value is_zero = b.compare(CmpOp::Eq, x, c(0));
  Value zeros_before =
      scan(b, OpKind::Cumsum, b.cast(is_zero, ctx.type(x).dtype), axis, rev, /*exclusive=*/true);
  Value none_before = b.compare(CmpOp::Eq, zeros_before, c(0));
  Value first = b.binary(BinaryOp::BitAnd, is_zero, none_before);
  Value y_skip = scan(b, OpKind::CumProd, b.where(first, c(1), x), axis, rev);
  Value at_first = scan(b, OpKind::Cumsum, b.mul(g, y_skip), axis, !rev);
  Value before_zero = b.div(scan(b, OpKind::Cumsum, b.mul(g, y), axis, !rev), x);
  return {b.where(first, at_first, b.where(none_before, before_zero, c(0)))};
}

// y_i = max_{j<=i} x_j (in scan order) takes g_i from the position it came from: the last j <= i
// with x_j == y_j (or x_j NaN), as PyTorch's cummax indices; found as a running max of positions.
std::vector<Value> vjp_cummax(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value x = ctx.inputs[0], y = ctx.outputs[0], g = ctx.cotangents[0];
  const Shape s = ctx.type(x).shape;
  const int rank = static_cast<int>(s.size());
  if (rank == 0) return {g};
  const int64_t axis = reduced_axes({ctx.node.attrs.i("axis")}, rank)[0];
  const bool rev = ctx.node.attrs.b("reverse");
  const int64_t n = s[axis];
  // Scanning backwards the last position is the smallest: keys n-1-j, turned back after the scan.
  std::vector<int64_t> key(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) key[j] = rev ? n - 1 - j : j;
  Shape key_shape(static_cast<size_t>(rank), 1);
  key_shape[axis] = n;
  Value keys = b.reshape(i64_vector(b, key), key_shape);
  Value source = b.binary(BinaryOp::BitOr, b.compare(CmpOp::Eq, x, y), b.compare(CmpOp::Ne, x, x));
  Value at = b.where(source, keys, b.scalar(-1, DType::I64));
  Value idx = scan(b, OpKind::CumMax, at, axis, rev);
  if (rev) idx = b.sub(b.scalar(static_cast<double>(n - 1), DType::I64), idx);
  return {b.op1(OpKind::ScatterElements,
                Attrs().set("axis", axis).set("reduction", ScatterReduction::Add),
                {zeros_like(b, x), idx, g})};
}

}  // namespace

void register_vjp_reduction(RuleTable& table) {
  table[OpKind::Reduce].vjp = vjp_reduce;
  table[OpKind::Softmax].vjp = vjp_softmax;
  table[OpKind::TopK].vjp = vjp_topk;
  table[OpKind::Sort].vjp = vjp_sort;
  table[OpKind::CumProd].vjp = vjp_cumprod;
  table[OpKind::CumMax].vjp = vjp_cummax;
}

}  // namespace tessel
