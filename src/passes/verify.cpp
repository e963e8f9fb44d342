#include "ops/rules.h"
#include "passes/passes.h"

namespace tessel {

void verify(const Graph& g, const std::string& after_pass) {
  for (const Node& n : g.nodes()) {
    for (Value v : n.inputs)
      if (v.valid() && v.node >= n.id)
        throw_error(ErrorKind::Internal, "[verify] after ", after_pass, ": ", n.where(),
                    " uses a later value %", v.node);
    if (n.kind == OpKind::Constant) continue;
    std::vector<std::optional<TensorType>> types;
    for (Value v : n.inputs)
      types.push_back(v.valid() ? std::optional<TensorType>(g.type(v)) : std::nullopt);
    InferCtx ctx(n, std::move(types));
    if (rules_for(n.kind).infer(ctx) != n.outputs)
      throw_error(ErrorKind::Internal, "[verify] after ", after_pass, ": ", n.where(),
                  " output types disagree with its shape rule");
  }
  for (Value v : g.outputs)
    if (!v.valid() || v.node >= g.size())
      throw_error(ErrorKind::Internal, "[verify] after ", after_pass, ": bad graph output");
}

}  // namespace tessel
