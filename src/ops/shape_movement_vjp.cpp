// VJP rules of the shape and data-movement kinds: Reshape, Transpose, Expand, Narrow, Concat,
// Pad (every mode), Clamp.
#include "ops/pad_source.h"
#include "ops/vjp_util.h"

namespace tessel {
namespace {

std::vector<Value> vjp_reshape(VjpCtx& ctx) {
  return {ctx.b.reshape(ctx.cotangents[0], ctx.type(ctx.inputs[0]).shape)};
}

std::vector<Value> vjp_transpose(VjpCtx& ctx) {
  const std::vector<int64_t> perm = ctx.node.attrs.ints("perm");
  const int64_t rank = static_cast<int64_t>(perm.size());
  std::vector<int64_t> inverse(perm.size());
  for (int64_t i = 0; i < rank; ++i) inverse[(perm[i] + rank) % rank] = i;
  return {ctx.b.transpose(ctx.cotangents[0], inverse)};
}

std::vector<Value> vjp_expand(VjpCtx& ctx) {
  return {unbroadcast(ctx.b, ctx.cotangents[0], ctx.type(ctx.inputs[0]).shape)};
}

// Zeros around the slice: a constant Pad of the cotangent back to the input's extent.
std::vector<Value> vjp_narrow(VjpCtx& ctx) {
  const Shape& s = ctx.type(ctx.inputs[0]).shape;
  const int rank = static_cast<int>(s.size());
  int64_t axis = ctx.node.attrs.i("axis");
  if (axis < 0) axis += rank;
  int64_t start = ctx.node.attrs.i("start");
  if (start < 0) start += s[axis];
  const int64_t length = ctx.node.attrs.i("length");
  std::vector<int64_t> pads(2 * rank, 0);
  pads[axis] = start;
  pads[rank + axis] = s[axis] - start - length;
  return {ctx.b.op1(OpKind::Pad, Attrs().set("pads", pads), {ctx.cotangents[0]})};
}

std::vector<Value> vjp_concat(VjpCtx& ctx) {
  const int rank = ctx.type(ctx.outputs[0]).rank();
  int64_t axis = ctx.node.attrs.i("axis");
  if (axis < 0) axis += rank;
  std::vector<Value> grads;
  int64_t offset = 0;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const int64_t len = ctx.type(ctx.inputs[i]).shape[axis];
    grads.push_back(ctx.needs(static_cast<int>(i))
                        ? ctx.b.narrow(ctx.cotangents[0], axis, offset, len)
                        : Value{});
    offset += len;
  }
  return grads;
}

// Constant padding (and cropping, by negative pads) is undone by the opposite pads. The other
// modes read each output element from one input element (pad_source, separable by axis): the
// cotangent is index-added back to those sources one axis at a time.
std::vector<Value> vjp_pad(VjpCtx& ctx) {
  const std::vector<int64_t>& pads = ctx.node.attrs.ints("pads");
  const auto mode = ctx.node.attrs.e<PadMode>("mode");
  if (mode == PadMode::Constant) {
    std::vector<int64_t> undo = pads;
    for (int64_t& p : undo) p = -p;
    return {ctx.b.op1(OpKind::Pad, Attrs().set("pads", undo), {ctx.cotangents[0]})};
  }
  const Shape& xs = ctx.type(ctx.inputs[0]).shape;
  const Shape& ys = ctx.type(ctx.outputs[0]).shape;
  const int rank = static_cast<int>(xs.size());
  Value g = ctx.cotangents[0];
  for (int d = 0; d < rank; ++d) {
    if (pads[d] == 0 && pads[rank + d] == 0) continue;
    std::vector<int64_t> source;
    for (int64_t o = 0; o < ys[d]; ++o) {
      source.push_back(pad_source(mode, o - pads[d], xs[d]));
      TESSEL_ASSERT(source.back() >= 0, ctx.node.where(), ": padded position ", o,
                    " has no source");
    }
    g = scatter_add_along(ctx.b, g, d, xs[d], source);
  }
  return {g};
}

// The gradient passes where min <= x <= max (as PyTorch's clamp).
std::vector<Value> vjp_clamp(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value x = ctx.inputs[0], g = ctx.cotangents[0];
  Value lo = scalar_like(b, ctx.node.attrs.f("min"), x);
  Value hi = scalar_like(b, ctx.node.attrs.f("max"), x);
  Value inside =
      b.binary(BinaryOp::BitAnd, b.compare(CmpOp::Ge, x, lo), b.compare(CmpOp::Le, x, hi));
  return {b.where(inside, g, scalar_like(b, 0, g))};
}

}  // namespace

void register_vjp_shape_movement(RuleTable& table) {
  table[OpKind::Reshape].vjp = vjp_reshape;
  table[OpKind::Transpose].vjp = vjp_transpose;
  table[OpKind::Expand].vjp = vjp_expand;
  table[OpKind::Narrow].vjp = vjp_narrow;
  table[OpKind::Concat].vjp = vjp_concat;
  table[OpKind::Pad].vjp = vjp_pad;
  table[OpKind::Clamp].vjp = vjp_clamp;
}

}  // namespace tessel
