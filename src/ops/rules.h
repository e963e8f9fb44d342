// Per-kind rules: the shape/dtype rule every kind has, and the decomposition a composite has.
// Each category registers its kinds' rules from src/ops/<category>.cpp; the walk-the-table test
// checks that no kind is left without a shape rule and that composites decompose.
#pragma once

#include <array>
#include <functional>
#include <span>
#include <vector>

#include "ir/graph.h"

namespace tessel {

using InferFn = std::vector<TensorType> (*)(const InferCtx&);
// Emits the node's computation in terms of other kinds into `g`; returns one value per output.
using DecomposeFn = std::vector<Value> (*)(Graph& g, const Node& node,
                                           std::span<const Value> inputs);

struct OpRules {
  InferFn infer = nullptr;
  DecomposeFn decompose = nullptr;
};

class RuleTable {
 public:
  OpRules& operator[](OpKind k) { return rules_[static_cast<size_t>(k)]; }
  const OpRules& operator[](OpKind k) const { return rules_[static_cast<size_t>(k)]; }

 private:
  std::array<OpRules, kNumOpKinds> rules_{};
};

const RuleTable& rules();
inline const OpRules& rules_for(OpKind k) { return rules()[k]; }

// One registration function per category, defined in src/ops/<category>.cpp.
#define TESSEL_CATEGORY(e, title) void register_rules_##e(RuleTable& table);
#include "ir/ops.def"

}  // namespace tessel
