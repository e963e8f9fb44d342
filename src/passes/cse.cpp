#include <unordered_map>

#include "passes/passes.h"

namespace tessel {

// Two nodes are the same computation when kind, attributes and (already merged) inputs agree.
// Sources are never merged: each Input/Param is an argument, each Constant its own literal.
Graph eliminate_common_subexpressions(const Graph& g) {
  std::unordered_multimap<size_t, int> seen;  // hash -> node id in the new graph
  return rewrite_graph(g, [&](Graph& out, const Node& n, std::span<const Value> in) {
    if (n.kind == OpKind::Input || n.kind == OpKind::Param || n.kind == OpKind::Constant)
      return std::vector<Value>{};
    std::vector<Value> inputs(in.begin(), in.end());
    size_t h = static_cast<size_t>(n.kind) * 1000003u ^ n.attrs.hash();
    for (Value v : inputs) h = h * 31 + static_cast<size_t>(v.node + 1) * 7 + v.index;
    auto range = seen.equal_range(h);
    for (auto it = range.first; it != range.second; ++it) {
      const Node& prev = out.node(it->second);
      if (prev.kind == n.kind && prev.attrs == n.attrs && prev.inputs == inputs) {
        std::vector<Value> outs;
        for (int i = 0; i < static_cast<int>(prev.outputs.size()); ++i)
          outs.push_back({prev.id, i});
        return outs;
      }
    }
    std::vector<Value> result = out.add(n.kind, n.attrs, inputs, n.name);
    seen.insert({h, result[0].node});
    return result;
  });
}

}  // namespace tessel
