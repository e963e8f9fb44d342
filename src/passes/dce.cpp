#include "passes/passes.h"

namespace tessel {

Graph eliminate_dead_code(const Graph& g) {
  std::vector<bool> live(g.size(), false);
  for (Value v : g.outputs) live[v.node] = true;
  for (int i = g.size() - 1; i >= 0; --i) {
    const Node& n = g.node(i);
    if (n.kind == OpKind::Input || n.kind == OpKind::Param) live[i] = true;  // calling convention
    if (!live[i]) continue;
    for (Value v : n.inputs)
      if (v.valid()) live[v.node] = true;
  }
  Graph out;
  std::vector<std::vector<Value>> map(g.size());
  for (const Node& n : g.nodes()) {
    if (!live[n.id]) continue;
    std::vector<Value> inputs;
    for (Value v : n.inputs) inputs.push_back(v.valid() ? map[v.node][v.index] : Value{});
    map[n.id] = n.kind == OpKind::Constant ? std::vector<Value>{out.constant(*n.literal, n.name)}
                                           : out.add(n.kind, n.attrs, inputs, n.name);
  }
  for (Value v : g.outputs) out.outputs.push_back(map[v.node][v.index]);
  return out;
}

}  // namespace tessel
