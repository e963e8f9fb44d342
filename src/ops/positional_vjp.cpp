// VJP rules of the positional kinds. Rope rotates channel pairs by θ = position · frequency, a
// linear map whose transpose is the rotation by -θ: Rope of the cotangent at negated positions.
// AxialRope2d is two such rotations, one per half of D; its transpose likewise. The Rope rule
// emits RopeBackward, which decomposes into that Rope.
#include <numeric>

#include "ops/positional_params.h"
#include "ops/vjp_util.h"

namespace tessel {
namespace {

// RopeBackward (dy, positions? -> dx): Rope of dy at the negated positions (default 0 .. S-1).
Value rope_backward(GraphBuilder& b, const Attrs& attrs, Value dy, Value positions) {
  Value negated;
  if (positions.valid()) {
    negated = b.neg(positions);
  } else {
    const Shape& s = b.type(dy).shape;
    std::vector<int64_t> p(static_cast<size_t>(s[s.size() - 2]));
    std::iota(p.begin(), p.end(), 0);
    for (int64_t& v : p) v = -v;
    negated = i64_vector(b, p);
  }
  return b.op1(OpKind::Rope, attrs, {dy, negated});
}

std::vector<Value> decompose_rope_backward(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  return {rope_backward(b, node.attrs, in[0], in.size() > 1 ? in[1] : Value{})};
}

// The gradient w.r.t. float positions [S] of y = Rope(x, positions): turning a pair (a, b) by
// θ = pos·f moves it by f·(−b, a) per unit of pos, so dL/dpos[s] = Σ f·(dy_b·y_a − dy_a·y_b) over
// the pairs of every row at s.
Value rope_positions_gradient(GraphBuilder& b, const Node& node, Value dy, Value y,
                              DType pos_dtype) {
  const Shape ys = b.type(y).shape;
  const int64_t rank = static_cast<int64_t>(ys.size()), d = ys.back();
  const int64_t rotary = rope_rotary_dim(node, d), half = rotary / 2;
  // The two members of each pair, [..., S, half].
  auto members = [&](Value v) -> std::pair<Value, Value> {
    Value r = b.narrow(v, rank - 1, 0, rotary);
    if (node.attrs.e<RopeStyle>("style") == RopeStyle::NeoX)
      return {b.narrow(r, rank - 1, 0, half), b.narrow(r, rank - 1, half, half)};
    Shape pairs = ys;
    pairs.back() = half;
    Shape split = pairs;
    split.push_back(2);
    Value s = b.reshape(r, split);
    return {b.reshape(b.narrow(s, rank, 0, 1), pairs), b.reshape(b.narrow(s, rank, 1, 1), pairs)};
  };
  auto [ya, yb] = members(y);
  auto [da, db] = members(dy);
  HostTensor freq = HostTensor::empty(b.type(y).dtype, {half});
  const double base = node.attrs.f("base");
  for (int64_t i = 0; i < half; ++i) freq.set_f64(i, rope_frequency(base, i, rotary));
  Value t = b.mul(b.sub(b.mul(db, ya), b.mul(da, yb)), b.graph().constant(std::move(freq)));
  std::vector<int64_t> axes;
  for (int64_t a = 0; a < rank; ++a)
    if (a != rank - 2) axes.push_back(a);
  return b.cast(b.sum(t, axes), pos_dtype);
}

// Emits RopeBackward for x, and the positions' gradient where they are float and wanted.
std::vector<Value> vjp_rope(VjpCtx& ctx) {
  Value positions = ctx.inputs.size() > 1 ? ctx.inputs[1] : Value{};
  std::vector<Value> grads(ctx.inputs.size());
  grads[0] = ctx.b.op1(OpKind::RopeBackward, ctx.node.attrs, {ctx.cotangents[0], positions});
  if (ctx.needs(1) && positions.valid() && is_float(ctx.type(positions).dtype))
    grads[1] = rope_positions_gradient(ctx.b, ctx.node, ctx.cotangents[0], ctx.outputs[0],
                                       ctx.type(positions).dtype);
  return grads;
}

// AxialRope2d rotates the first half of D by the token's grid row and the second by its column,
// each as a GPT-J Rope over that half: the transpose is that Rope at the negated rows / columns.
std::vector<Value> vjp_axial_rope2d(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  const Shape s = ctx.type(ctx.inputs[0]).shape;
  const int64_t rank = static_cast<int64_t>(s.size()), half = s.back() / 2;
  const int64_t grid_h = ctx.node.attrs.i("grid_h"), grid_w = ctx.node.attrs.i("grid_w");
  std::vector<int64_t> rows, cols;
  for (int64_t r = 0; r < grid_h; ++r)
    for (int64_t c = 0; c < grid_w; ++c) {
      rows.push_back(-r);
      cols.push_back(-c);
    }
  const Attrs rope = Attrs().set("style", RopeStyle::GptJ).set("base", ctx.node.attrs.f("base"));
  std::vector<Value> halves = b.split(ctx.cotangents[0], rank - 1, {half, half});
  Value by_row = b.op1(OpKind::Rope, rope, {halves[0], i64_vector(b, rows)});
  Value by_col = b.op1(OpKind::Rope, rope, {halves[1], i64_vector(b, cols)});
  return {b.concat({by_row, by_col}, rank - 1)};
}

}  // namespace

void register_vjp_positional(RuleTable& table) {
  table[OpKind::Rope].vjp = vjp_rope;
  table[OpKind::AxialRope2d].vjp = vjp_axial_rope2d;
  table[OpKind::RopeBackward].decompose = decompose_rope_backward;
}

}  // namespace tessel
