// Per-kind rules: the shape/dtype rule every kind has, and the decomposition a composite has.
// Each category registers its kinds' rules from src/ops/<category>.cpp; the walk-the-table test
// checks that no kind is left without a shape rule and that composites decompose.
#pragma once

#include <array>
#include <functional>
#include <span>
#include <vector>

#include "ir/builder.h"
#include "ir/graph.h"

namespace tessel {

using InferFn = std::vector<TensorType> (*)(const InferCtx&);
// Emits the node's computation in terms of other kinds into `g`; returns one value per output.
using DecomposeFn = std::vector<Value> (*)(Graph& g, const Node& node,
                                           std::span<const Value> inputs);

// What a VJP rule sees: the forward node, its input and output values, and the cotangent of
// each output (an invalid Value: that output's cotangent is zero), all in the graph `b` emits
// into (the forward graph itself: backward nodes are appended to it).
struct VjpCtx {
  GraphBuilder& b;
  const Node& node;
  std::span<const Value> inputs;
  std::span<const Value> outputs;
  std::span<const Value> cotangents;
  std::vector<bool> needed;  // input i's gradient is wanted (rules may skip the others)
  bool needs(int i) const { return i < static_cast<int>(needed.size()) && needed[i]; }
  const TensorType& type(Value v) const { return b.type(v); }
};
// Returns one gradient per input: the cotangent pulled back through the node, with the input's
// shape and dtype, or an invalid Value where the input gets none (not differentiable, not
// needed, or zero).
using VjpFn = std::vector<Value> (*)(VjpCtx& ctx);

struct OpRules {
  InferFn infer = nullptr;
  DecomposeFn decompose = nullptr;
  // Reverse-mode rule. A kind without one but with a decomposition is differentiated through
  // its decomposition (src/passes/autodiff.cpp).
  VjpFn vjp = nullptr;
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

// VJP rules, one registration function per family file (src/ops/<family>_vjp.cpp).
void register_vjp_elementwise(RuleTable& table);
void register_vjp_linear_algebra(RuleTable& table);
void register_vjp_reduction(RuleTable& table);
void register_vjp_shape_movement(RuleTable& table);
void register_vjp_indexing(RuleTable& table);
void register_vjp_normalization(RuleTable& table);
void register_vjp_losses(RuleTable& table);
void register_vjp_positional(RuleTable& table);
void register_vjp_conv_pool(RuleTable& table);
void register_vjp_attention(RuleTable& table);

}  // namespace tessel
