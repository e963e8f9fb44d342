// Shape rules of the FusionRegions category (kernels pending: "cpu backend (fusion pass)").
//
// A region's `body` graph takes the node's inputs (its Input nodes, in creation order, typed
// exactly like the node's inputs) and returns one value: the node's output. An elementwise
// chain (ElementwiseRegion, and BatchElementwiseRegion over N batch planes) keeps the
// broadcast shape of its inputs; TransformRegion (uncertain signature: a sampling / geometry
// chain such as a resize) may change the shape.
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

// A body's results must name values of the body (it is user-built; never index past it).
void check_results(const InferCtx& ctx, const Graph& g, const char* name) {
  for (Value v : g.outputs)
    if (v.node < 0 || v.node >= g.size() || v.index < 0 ||
        v.index >= static_cast<int>(g.node(v.node).outputs.size()))
      ctx.fail(ErrorKind::Value, name, " returns a value it does not hold (%", v.node, ".", v.index,
               ")");
}

TensorType region_output(const InferCtx& ctx) {
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
  if (body->outputs.size() != 1)
    ctx.fail(ErrorKind::Value, "body must return one value, returns ", body->outputs.size());
  check_results(ctx, *body, "body");
  return body->type(body->outputs[0]);
}

std::vector<TensorType> infer_elementwise_region(const InferCtx& ctx) {
  TensorType y = region_output(ctx);
  Shape shape = ctx.in(0).shape;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    auto b = broadcast_shapes(shape, ctx.in(i).shape);
    if (!b) ctx.fail(ErrorKind::Shape, "inputs do not broadcast");
    shape = *b;
  }
  if (y.shape != shape)
    ctx.fail(ErrorKind::Shape, "an elementwise body must return the inputs' broadcast shape ",
             shape_str(shape), ", returns ", y.str());
  return {y};
}

std::vector<TensorType> infer_transform_region(const InferCtx& ctx) { return {region_output(ctx)}; }

}  // namespace

void register_rules_FusionRegions(RuleTable& table) {
  table[OpKind::ElementwiseRegion].infer = infer_elementwise_region;
  table[OpKind::TransformRegion].infer = infer_transform_region;
  table[OpKind::BatchElementwiseRegion].infer = infer_elementwise_region;
}

}  // namespace tessel
