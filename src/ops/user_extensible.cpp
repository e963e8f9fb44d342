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

// A body's results must name values of the body (it is user-built; never index past it).
void check_results(const InferCtx& ctx, const Graph& g, const char* name) {
  for (Value v : g.outputs)
    if (v.node < 0 || v.node >= g.size() || v.index < 0 ||
        v.index >= static_cast<int>(g.node(v.node).outputs.size()))
      ctx.fail(ErrorKind::Value, name, " returns a value it does not hold (%", v.node, ".", v.index,
               ")");
}

std::vector<TensorType> infer_custom_fn(const InferCtx& ctx) {
  const auto& body = ctx.attrs().graph("body");
  if (!body) ctx.fail(ErrorKind::Value, "graph attribute 'body' is not set");
  std::vector<int> params = body->input_nodes();
  if (static_cast<int>(params.size()) != ctx.num_inputs())
    ctx.fail(ErrorKind::Value, "body takes ", params.size(), " inputs, the node has ",
             ctx.num_inputs());
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType& want = body->node(params[i]).outputs.at(0);
    if (ctx.in(i) != want)
      ctx.fail(ErrorKind::Shape, "input ", i, " is ", ctx.in(i).str(), " but body input ", i,
               " is ", want.str());
  }
  if (body->outputs.empty()) ctx.fail(ErrorKind::Value, "body has no outputs");
  check_results(ctx, *body, "body");
  std::vector<TensorType> out;
  for (Value v : body->outputs) out.push_back(body->type(v));
  return out;
}

}  // namespace

void register_rules_UserExtensible(RuleTable& table) {
  table[OpKind::Custom].infer = infer_custom;
  table[OpKind::CustomFn].infer = infer_custom_fn;
}

}  // namespace tessel
