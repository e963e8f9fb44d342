// Shape rules of the UserExtensible category (kernels pending: "extensibility").
//
// Custom names an op in a user op registry that does not exist yet, so no Custom node can be
// typed. CustomFn's `body` takes the node's inputs (its Input nodes, in creation order, typed
// like the node's inputs) and its outputs are the node's outputs.
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

std::vector<TensorType> infer_custom(const InferCtx& ctx) {
  ctx.fail(ErrorKind::Unsupported, "the custom-op registry is pending: cannot type custom op '",
           ctx.attrs().s("name"), "'");
}

std::vector<TensorType> infer_custom_fn(const InferCtx& ctx) {
  const Graph& body = body_attr(ctx, "body");
  check_body_takes_inputs(ctx, body, "body");
  check_body_results(ctx, body, "body");
  std::vector<TensorType> out;
  for (Value v : body.outputs) out.push_back(body.type(v));
  return out;
}

}  // namespace

void register_rules_UserExtensible(RuleTable& table) {
  table[OpKind::Custom].infer = infer_custom;
  table[OpKind::CustomFn].infer = infer_custom_fn;
}

}  // namespace tessel
