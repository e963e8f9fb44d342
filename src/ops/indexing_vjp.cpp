// VJP rules of the indexing kinds: each gather's gradient scatter-adds the cotangent back to
// the positions it read (repeated indices accumulate); each scatter's gradient gathers it. Also
// Slice (any steps: the taken positions scattered back axis by axis), Trilu, Cumsum and ALiBi.
#include "ops/slice_range.h"
#include "ops/vjp_util.h"

namespace tessel {
namespace {

int64_t axis_of(const VjpCtx& ctx, int rank) {
  int64_t axis = ctx.node.attrs.i("axis");
  return axis < 0 ? axis + rank : axis;
}

// zeros(like) with g added at `indices` (1-D) along `axis` (index_add).
Value scatter_add(GraphBuilder& b, Value like, Value indices, Value g, int64_t axis) {
  return b.op1(OpKind::ScatterAdd, Attrs().set("axis", axis), {zeros_like(b, like), indices, g});
}

// y = x.take(indices, axis): y's index dims flattened to one, then index_add into zeros.
std::vector<Value> vjp_gather(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value x = ctx.inputs[0], idx = ctx.inputs[1], g = ctx.cotangents[0];
  const Shape& xs = ctx.type(x).shape;
  const int64_t axis = axis_of(ctx, static_cast<int>(xs.size()));
  const int64_t n = ctx.type(idx).numel();
  Shape gs(xs.begin(), xs.begin() + axis);
  gs.push_back(n);
  gs.insert(gs.end(), xs.begin() + axis + 1, xs.end());
  return {scatter_add(b, x, b.reshape(idx, {n}), b.reshape(g, gs), axis), Value{}};
}

std::vector<Value> vjp_embedding(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value w = ctx.inputs[0], ids = ctx.inputs[1];
  const int64_t n = ctx.type(ids).numel(), d = ctx.type(w).shape[1];
  return {scatter_add(b, w, b.reshape(ids, {n}), b.reshape(ctx.cotangents[0], {n, d}), 0), Value{}};
}

std::vector<Value> vjp_gather_elements(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value data = ctx.inputs[0];
  Attrs a = Attrs().set("axis", ctx.node.attrs.i("axis")).set("reduction", ScatterReduction::Add);
  return {
      b.op1(OpKind::ScatterElements, a, {zeros_like(b, data), ctx.inputs[1], ctx.cotangents[0]}),
      Value{}};
}

std::vector<Value> vjp_gather_nd(VjpCtx& ctx) {
  if (ctx.node.attrs.i("batch_dims") != 0)
    throw_error(ErrorKind::Unsupported, ctx.node.where(),
                ": no VJP rule yet for GatherNd with batch_dims > 0");
  GraphBuilder& b = ctx.b;
  Value data = ctx.inputs[0];
  return {b.op1(OpKind::ScatterNd, Attrs().set("reduction", ScatterReduction::Add),
                {zeros_like(b, data), ctx.inputs[1], ctx.cotangents[0]}),
          Value{}};
}

std::vector<Value> vjp_scatter_add(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value g = ctx.cotangents[0];
  const int64_t axis = axis_of(ctx, ctx.type(g).rank());
  Value gu = ctx.needs(2) ? b.gather(g, ctx.inputs[1], axis) : Value{};
  return {g, Value{}, gu};
}

// ScatterElements / ScatterNd: with reduction None the scattered positions of data are
// overwritten (their gradient is 0) and each update gets the cotangent at its position; with
// Add, data passes g through. Mul / Max / Min have no rule yet.
std::vector<Value> vjp_scatter(VjpCtx& ctx, OpKind scatter, OpKind gather, Attrs gather_attrs) {
  GraphBuilder& b = ctx.b;
  Value g = ctx.cotangents[0], idx = ctx.inputs[1], upd = ctx.inputs[2];
  const auto red = ctx.node.attrs.e<ScatterReduction>("reduction");
  if (red != ScatterReduction::None && red != ScatterReduction::Add)
    throw_error(ErrorKind::Unsupported, ctx.node.where(),
                ": no VJP rule yet for scatter reductions other than None and Add");
  Value gd = g;
  if (red == ScatterReduction::None && ctx.needs(0)) {
    Attrs a = ctx.node.attrs;
    gd = b.op1(scatter, a, {g, idx, zeros_like(b, upd)});
  }
  Value gu = ctx.needs(2) ? b.op1(gather, gather_attrs, {g, idx}) : Value{};
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
  Shape shape = ctx.type(g).shape;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    const SliceRange r = slice_range(starts[i], ends[i], steps[i], xs[axis]);
    std::vector<int64_t> taken;
    for (int64_t j = 0; j < r.length; ++j) taken.push_back(r.start + j * steps[i]);
    shape[axis] = xs[axis];
    Value zeros = b.expand(scalar_like(b, 0, g), shape);
    g = b.op1(OpKind::ScatterAdd, Attrs().set("axis", axis), {zeros, i64_vector(b, taken), g});
  }
  return {g};
}

std::vector<Value> vjp_trilu(VjpCtx& ctx) {
  return {ctx.b.op1(OpKind::Trilu, ctx.node.attrs, {ctx.cotangents[0]})};
}

// y_i = Σ_{j <= i} x_j gives dx_j = Σ_{i >= j} g_i: the cumulative sum the other way.
std::vector<Value> vjp_cumsum(VjpCtx& ctx) {
  Attrs a = ctx.node.attrs;
  a.set("reverse", !ctx.node.attrs.b("reverse"));
  return {ctx.b.op1(OpKind::Cumsum, a, {ctx.cotangents[0]})};
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
}

}  // namespace tessel
