// VJP rules of the linear-algebra kinds: MatMul (transposes, numpy batch broadcasting, 1-D
// operands).
#include "ops/vjp_util.h"

namespace tessel {
namespace {

// y = op(a)·op(b) with op = transpose where asked. A 1-D a is a row [1, K] and a 1-D b a column
// [K, 1] whose unit dim the output drops; the gradients are formed on those 2-D views, summed
// over the batch dims the operand was broadcast along, and reshaped back.
std::vector<Value> vjp_matmul(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  const bool ta = ctx.node.attrs.b("transpose_a"), tb = ctx.node.attrs.b("transpose_b");
  Value a = ctx.inputs[0], w = ctx.inputs[1], g = ctx.cotangents[0];
  const Shape sa = ctx.type(a).shape, sw = ctx.type(w).shape;
  const bool a1 = sa.size() == 1, w1 = sw.size() == 1;
  Shape g_shape = ctx.type(g).shape;
  if (w1) g_shape.push_back(1);
  if (a1) g_shape.insert(g_shape.end() - 1, 1);
  Value a2 = a1 ? b.reshape(a, {1, sa[0]}) : a;
  Value w2 = w1 ? b.reshape(w, {sw[0], 1}) : w;
  Value g2 = b.reshape(g, g_shape);
  Value ga, gw;
  if (ctx.needs(0)) {
    Value d = ta ? b.matmul(w2, g2, tb, true) : b.matmul(g2, w2, false, !tb);
    ga = b.reshape(unbroadcast(b, d, ctx.type(a2).shape), sa);
  }
  if (ctx.needs(1)) {
    Value d = tb ? b.matmul(g2, a2, true, ta) : b.matmul(a2, g2, !ta, false);
    gw = b.reshape(unbroadcast(b, d, ctx.type(w2).shape), sw);
  }
  return {ga, gw};
}

}  // namespace

void register_vjp_linear_algebra(RuleTable& table) { table[OpKind::MatMul].vjp = vjp_matmul; }

}  // namespace tessel
