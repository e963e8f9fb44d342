// VJP rules of the indexing kinds: each gather's gradient scatter-adds the cotangent back to
// the positions it read (repeated indices accumulate); each scatter's gradient gathers it. Also
// Slice (any steps: the taken positions scattered back axis by axis), Trilu, Cumsum and ALiBi.
// Gather and Cumsum emit GatherBackward / CumsumBackward, decomposed here.
#include "ops/slice_range.h"
#include "ops/vjp_util.h"

namespace tessel {
namespace {

int64_t axis_of(const VjpCtx& ctx, int rank) {
  int64_t axis = ctx.node.attrs.i("axis");
  return axis < 0 ? axis + rank : axis;
}

// GatherBackward (dy, indices -> dx of input_shape) of y = x.take(indices, axis): y's index dims
// flattened to one, then index_add into zeros.
std::vector<Value> decompose_gather_backward(Graph& graph, const Node& node,
                                             std::span<const Value> in) {
  GraphBuilder b(graph);
  Value g = in[0], idx = in[1];
  const Shape xs = node.attrs.ints("input_shape");
  const int64_t axis = reduced_axes({node.attrs.i("axis")}, static_cast<int>(xs.size()))[0];
  const int64_t n = b.type(idx).numel();
  Shape gs(xs.begin(), xs.begin() + axis);
  gs.push_back(n);
  gs.insert(gs.end(), xs.begin() + axis + 1, xs.end());
  return {scatter_add(b, xs, b.reshape(idx, {n}), b.reshape(g, gs), axis)};
}

// Emits GatherBackward.
std::vector<Value> vjp_gather(VjpCtx& ctx) {
  Attrs a = ctx.node.attrs;
  a.set("input_shape", Shape(ctx.type(ctx.inputs[0]).shape));
  return {ctx.b.op1(OpKind::GatherBackward, std::move(a), {ctx.cotangents[0], ctx.inputs[1]}),
          Value{}};
}

std::vector<Value> vjp_embedding(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value w = ctx.inputs[0], ids = ctx.inputs[1];
  const int64_t n = ctx.type(ids).numel(), d = ctx.type(w).shape[1];
  return {scatter_add(b, Shape(ctx.type(w).shape), b.reshape(ids, {n}),
                      b.reshape(ctx.cotangents[0], {n, d}), 0),
          Value{}};
}

std::vector<Value> vjp_gather_elements(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value data = ctx.inputs[0];
  Attrs a = Attrs().set("axis", ctx.node.attrs.i("axis")).set("reduction", ScatterReduction::Add);
  return {
      b.op1(OpKind::ScatterElements, a, {zeros_like(b, data), ctx.inputs[1], ctx.cotangents[0]}),
      Value{}};
}

// With batch_dims > 0 the batch dims are flattened into one and its position prepended to each
// index tuple: a batch_dims 0 GatherNd of the flattened data, whose adjoint is ScatterNd Add.
std::vector<Value> vjp_gather_nd(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value data = ctx.inputs[0], idx = ctx.inputs[1], g = ctx.cotangents[0];
  const int64_t batch_dims = ctx.node.attrs.i("batch_dims");
  const Shape& ds = ctx.type(data).shape;
  const Shape& is = ctx.type(idx).shape;
  const Shape& gs = ctx.type(g).shape;
  Shape flat_data = ds, flat_idx = is, flat_g = gs;
  if (batch_dims > 0) {
    int64_t batch = 1;
    for (int64_t d = 0; d < batch_dims; ++d) batch *= ds[d];
    auto flatten = [&](const Shape& s) {
      Shape f{batch};
      f.insert(f.end(), s.begin() + batch_dims, s.end());
      return f;
    };
    flat_data = flatten(ds);
    flat_g = flatten(gs);
    flat_idx = flatten(is);
    std::vector<int64_t> iota(static_cast<size_t>(batch));
    for (int64_t i = 0; i < batch; ++i) iota[i] = i;
    Shape pos_shape(flat_idx.size(), 1), one_shape = flat_idx;
    pos_shape[0] = batch;
    one_shape.back() = 1;
    Value pos = i64_vector(b, iota);
    if (ctx.type(idx).dtype != DType::I64) pos = b.cast(pos, ctx.type(idx).dtype);
    pos = b.expand(b.reshape(pos, pos_shape), one_shape);
    idx = b.concat({pos, b.reshape(idx, flat_idx)}, -1);
  }
  Value zeros = b.expand(scalar_like(b, 0, g), flat_data);
  Value gd = b.op1(OpKind::ScatterNd, Attrs().set("reduction", ScatterReduction::Add),
                   {zeros, idx, b.reshape(g, flat_g)});
  return {b.reshape(gd, ds), Value{}};
}

std::vector<Value> vjp_scatter_add(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value g = ctx.cotangents[0];
  const int64_t axis = axis_of(ctx, ctx.type(g).rank());
  Value gu = ctx.needs(2) ? b.gather(g, ctx.inputs[1], axis) : Value{};
  return {g, Value{}, gu};
}

// ScatterElements / ScatterNd, as PyTorch's scatter_reduce with include_self. None: the
// scattered positions of data are overwritten (gradient 0) and each update gets the cotangent at
// its position. Add: data passes g through. Max / Min: g goes to the contributors (data and the
// updates scattered there) equal to the result, split evenly among ties. Mul: each contributor
// gets g times the product of the others, without dividing by zero.
std::vector<Value> vjp_scatter(VjpCtx& ctx, OpKind scatter, OpKind gather, Attrs gather_attrs) {
  GraphBuilder& b = ctx.b;
  Value data = ctx.inputs[0], g = ctx.cotangents[0], idx = ctx.inputs[1], upd = ctx.inputs[2];
  Value y = ctx.outputs[0];
  auto c = [&](double v) { return scalar_like(b, v, g); };
  auto scatter_with = [&](ScatterReduction red, Value base, Value updates) {
    Attrs a = ctx.node.attrs;
    a.set("reduction", red);
    return b.op1(scatter, a, {base, idx, updates});
  };
  auto gathered = [&](Value v) { return b.op1(gather, gather_attrs, {v, idx}); };
  Value gd, gu;
  switch (ctx.node.attrs.e<ScatterReduction>("reduction")) {
    case ScatterReduction::None:
      if (ctx.needs(0)) gd = scatter_with(ScatterReduction::None, g, zeros_like(b, upd));
      if (ctx.needs(2)) gu = gathered(g);
      break;
    case ScatterReduction::Add:
      gd = g;
      if (ctx.needs(2)) gu = gathered(g);
      break;
    case ScatterReduction::Max:
    case ScatterReduction::Min: {
      const DType dt = ctx.type(g).dtype;
      Value data_wins = b.compare(CmpOp::Eq, data, y);
      Value upd_wins = b.compare(CmpOp::Eq, upd, gathered(y));
      Value winners =
          scatter_with(ScatterReduction::Add, b.cast(data_wins, dt), b.cast(upd_wins, dt));
      Value share = b.div(g, winners);  // winners >= 1: y is one of the contributors
      if (ctx.needs(0)) gd = b.where(data_wins, share, c(0));
      if (ctx.needs(2)) gu = b.where(upd_wins, gathered(share), c(0));
      break;
    }
    case ScatterReduction::Mul: {
      // data: the product of the updates scattered to its position (1 where none).
      if (ctx.needs(0))
        gd = b.mul(g, scatter_with(ScatterReduction::Mul, b.expand(c(1), ctx.type(g).shape), upd));
      if (!ctx.needs(2)) break;
      // An update u: g·y/u when u != 0; when u is its position's only zero update, g times the
      // product with it taken as 1; with another zero update there, 0.
      Value zero = b.compare(CmpOp::Eq, upd, c(0));
      Value zeros_there = gathered(
          scatter_with(ScatterReduction::Add, zeros_like(b, g), b.cast(zero, ctx.type(g).dtype)));
      Value only_zero = b.binary(BinaryOp::BitAnd, zero, b.compare(CmpOp::Eq, zeros_there, c(1)));
      Value y_without = scatter_with(ScatterReduction::Mul, data, b.where(only_zero, c(1), upd));
      Value nonzero_part = b.div(gathered(b.mul(g, y)), b.where(zero, c(1), upd));
      gu = b.where(zero, b.where(only_zero, gathered(b.mul(g, y_without)), c(0)), nonzero_part);
      break;
    }
  }
  return {gd, Value{}, gu};
}

std::vector<Value> vjp_scatter_elements(VjpCtx& ctx) {
  return vjp_scatter(ctx, OpKind::ScatterElements, OpKind::GatherElements,
                     Attrs().set("axis", ctx.node.attrs.i("axis")));
}

std::vector<Value> vjp_scatter_nd(VjpCtx& ctx) {
  return vjp_scatter(ctx, OpKind::ScatterNd, OpKind::GatherNd, Attrs());
}

// The taken positions of each sliced axis are scattered back one axis at a time (distinct
// positions, so index_add places them); works for any steps, negative ones included.
std::vector<Value> vjp_slice(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  const Shape& xs = ctx.type(ctx.inputs[0]).shape;
  const int rank = static_cast<int>(xs.size());
  const std::vector<int64_t>&starts = ctx.node.attrs.ints("starts"),
        &ends = ctx.node.attrs.ints("ends");
  std::vector<int64_t> axes = ctx.node.attrs.ints("axes"), steps = ctx.node.attrs.ints("steps");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  Value g = ctx.cotangents[0];
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    const SliceRange r = slice_range(starts[i], ends[i], steps[i], xs[axis]);
    std::vector<int64_t> taken;
    for (int64_t j = 0; j < r.length; ++j) taken.push_back(r.start + j * steps[i]);
    g = scatter_add_along(b, g, axis, xs[axis], taken);
  }
  return {g};
}

std::vector<Value> vjp_trilu(VjpCtx& ctx) {
  return {ctx.b.op1(OpKind::Trilu, ctx.node.attrs, {ctx.cotangents[0]})};
}

// CumsumBackward: y_i = Σ_{j <= i} x_j gives dx_j = Σ_{i >= j} g_i, the cumulative sum the
// other way (exclusive stays exclusive).
std::vector<Value> decompose_cumsum_backward(Graph& g, const Node& node,
                                             std::span<const Value> in) {
  Attrs a = node.attrs;
  a.set("reverse", !node.attrs.b("reverse"));
  return {GraphBuilder(g).op1(OpKind::Cumsum, a, {in[0]})};
}

// Emits CumsumBackward.
std::vector<Value> vjp_cumsum(VjpCtx& ctx) {
  return {ctx.b.op1(OpKind::CumsumBackward, ctx.node.attrs, {ctx.cotangents[0]})};
}

std::vector<Value> vjp_alibi(VjpCtx& ctx) { return {ctx.cotangents[0]}; }  // adds a constant

}  // namespace

void register_vjp_indexing(RuleTable& table) {
  table[OpKind::Gather].vjp = vjp_gather;
  table[OpKind::Embedding].vjp = vjp_embedding;
  table[OpKind::GatherElements].vjp = vjp_gather_elements;
  table[OpKind::GatherNd].vjp = vjp_gather_nd;
  table[OpKind::ScatterAdd].vjp = vjp_scatter_add;
  table[OpKind::ScatterElements].vjp = vjp_scatter_elements;
  table[OpKind::ScatterNd].vjp = vjp_scatter_nd;
  table[OpKind::Slice].vjp = vjp_slice;
  table[OpKind::Trilu].vjp = vjp_trilu;
  table[OpKind::Cumsum].vjp = vjp_cumsum;
  table[OpKind::ALiBi].vjp = vjp_alibi;
  table[OpKind::GatherBackward].decompose = decompose_gather_backward;
  table[OpKind::CumsumBackward].decompose = decompose_cumsum_backward;
}

}  // namespace tessel
