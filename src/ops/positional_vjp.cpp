// VJP rules of the positional kinds. Rope rotates channel pairs by θ = position · frequency, a
// linear map whose transpose is the rotation by -θ: Rope of the cotangent at negated positions.
#include <numeric>

#include "ops/vjp_util.h"

namespace tessel {
namespace {

std::vector<Value> vjp_rope(VjpCtx& ctx) {
  if (ctx.needs(1))
    throw_error(ErrorKind::Unsupported, ctx.node.where(),
                ": no VJP rule yet for the gradient with respect to float positions");
  GraphBuilder& b = ctx.b;
  Value positions = ctx.inputs.size() > 1 ? ctx.inputs[1] : Value{};
  Value negated;
  if (positions.valid()) {
    negated = b.neg(positions);
  } else {  // the default positions 0 .. S-1
    const Shape& s = ctx.type(ctx.inputs[0]).shape;
    std::vector<int64_t> p(static_cast<size_t>(s[s.size() - 2]));
    std::iota(p.begin(), p.end(), 0);
    for (int64_t& v : p) v = -v;
    negated = i64_vector(b, p);
  }
  std::vector<Value> grads(ctx.inputs.size());
  grads[0] = b.op1(OpKind::Rope, ctx.node.attrs, {ctx.cotangents[0], negated});
  return grads;
}

}  // namespace

void register_vjp_positional(RuleTable& table) { table[OpKind::Rope].vjp = vjp_rope; }

}  // namespace tessel
