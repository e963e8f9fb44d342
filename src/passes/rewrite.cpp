#include "ops/rules.h"
#include "passes/passes.h"

namespace tessel {

Graph rewrite_graph(const Graph& g, const NodeRewrite& fn) {
  Graph out;
  std::vector<std::vector<Value>> map(g.size());
  for (const Node& n : g.nodes()) {
    std::vector<Value> inputs;
    for (Value v : n.inputs) inputs.push_back(v.valid() ? map[v.node][v.index] : Value{});
    std::vector<Value> result = fn(out, n, inputs);
    if (result.empty()) {
      if (n.kind == OpKind::Constant) {
        result = {out.constant(*n.literal, n.name)};
      } else {
        result = out.add(n.kind, n.attrs, inputs, n.name);
      }
    }
    TESSEL_ASSERT(result.size() == n.outputs.size(), n.where(), " rewritten to ", result.size(),
                  " values");
    for (size_t i = 0; i < result.size(); ++i)
      TESSEL_ASSERT(out.type(result[i]) == n.outputs[i], n.where(), " output ", i,
                    " changed type from ", n.outputs[i].str(), " to ", out.type(result[i]).str());
    map[n.id] = std::move(result);
  }
  for (Value v : g.outputs) out.outputs.push_back(map[v.node][v.index]);
  return out;
}

Graph decompose(const Graph& g, const std::function<bool(const Node&)>& select) {
  return rewrite_graph(g, [&](Graph& out, const Node& n, std::span<const Value> in) {
    DecomposeFn d = rules_for(n.kind).decompose;
    if (!d || (select && !select(n))) return std::vector<Value>{};
    return d(out, n, in);
  });
}

}  // namespace tessel
