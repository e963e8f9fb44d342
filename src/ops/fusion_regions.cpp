// Shape rules of the FusionRegions category, and the decomposition of ElementwiseRegion (its
// body inlined), which is how a backend without a region kernel runs one.
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

TensorType region_output(const InferCtx& ctx) {
  const Graph& body = body_attr(ctx, "body");
  check_body_takes_inputs(ctx, body, "body");
  if (body.outputs.size() != 1)
    ctx.fail(ErrorKind::Value, "body must return one value, returns ", body.outputs.size());
  check_body_results(ctx, body, "body");
  return body.type(body.outputs[0]);
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

std::vector<Value> inline_body(Graph& g, const Node& node, std::span<const Value> in) {
  return inline_graph(g, *node.attrs.graph("body"), in);
}

std::vector<TensorType> infer_transform_region(const InferCtx& ctx) { return {region_output(ctx)}; }

}  // namespace

void register_rules_FusionRegions(RuleTable& table) {
  table[OpKind::ElementwiseRegion].infer = infer_elementwise_region;
  table[OpKind::ElementwiseRegion].decompose = inline_body;
  table[OpKind::TransformRegion].infer = infer_transform_region;
  table[OpKind::BatchElementwiseRegion].infer = infer_elementwise_region;
}

}  // namespace tessel
