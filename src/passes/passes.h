// Graph passes: each a named rewrite from a graph to a new graph, small and testable alone.
// None of them includes a backend header; backends are reached through runtime/backend.h.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "ir/graph.h"
#include "runtime/backend.h"

namespace tessel {

// Rewrites every node with `fn`, which returns the node's new output values (emitting whatever
// it needs into `out`) or an empty vector to copy the node unchanged.
using NodeRewrite =
    std::function<std::vector<Value>(Graph& out, const Node& node, std::span<const Value> inputs)>;
Graph rewrite_graph(const Graph& g, const NodeRewrite& fn);

// Replaces each composite by its decomposition once (every kind with a decomposition rule),
// or only the kinds `select` accepts.
Graph decompose(const Graph& g, const std::function<bool(const Node&)>& select = {});

// Rewrites until every node is claimed by `backend` natively (or host); decomposes the rest to a
// fixed point. Throws Unsupported listing *every* node left unclaimed, with op, variant, dtypes,
// shapes, the backend, and the dtypes the backend does support for that op.
Graph legalize(const Graph& g, const Backend& backend);

Graph eliminate_dead_code(const Graph& g);  // keeps every Input / Param
Graph eliminate_common_subexpressions(const Graph& g);
Graph fold_constants(const Graph& g, int64_t max_elements = 1 << 16);
// Folds a frozen BatchNormInference into the convolution before it (constant weights and
// statistics, the convolution's output used only by it; f32 / f64).
Graph fold_batch_norms(const Graph& g);

// Rewrites GEMM epilogues into FusedMatMulBiasAct and elementwise chains into ElementwiseRegion
// where `backend` claims those natively (after legalization; see src/passes/fuse.cpp).
Graph fuse(const Graph& g, const Backend& backend);

// Reverse mode (src/passes/autodiff.cpp): appends to `g` the nodes computing the
// vector-Jacobian product of `outputs` with `cotangents` (one per output, of its type; an invalid
// Value counts as zero) with respect to each value in `wrt`, and returns one gradient per wrt
// value, of its type (zeros where no path leads to it). Each wrt value is a leaf: a path from
// the outputs through one wrt value on to another is not followed (the partial derivative, as
// for independent inputs). Backward nodes are ordinary nodes:
// differentiating them again gives higher-order gradients. Throws Unsupported naming the first
// node on a path whose kind has neither a VJP rule nor a decomposition.
std::vector<Value> vjp(Graph& g, std::span<const Value> outputs, std::span<const Value> cotangents,
                       std::span<const Value> wrt);

// A copy of `g` whose outputs are g's outputs followed by d(output 0)/d(input i) for each i in
// `wrt_inputs` (indices into g.input_nodes()); output 0 must hold one floating-point element.
Graph grad_graph(const Graph& g, const std::vector<int>& wrt_inputs);

// A copy of `g`, whose first `num_primals` inputs are primals and whose remaining inputs are one
// cotangent per output (of its type), with outputs: g's outputs, then the vector-Jacobian
// product Σ_j cotangent_jᵀ·∂output_j/∂primal_i for each primal i.
Graph vjp_graph(const Graph& g, int num_primals);

// Re-runs every node's shape rule and checks topological order; throws Internal on mismatch.
void verify(const Graph& g, const std::string& after_pass);

// The standard pipeline: fold, CSE, DCE, legalize, DCE, fuse (TESSEL_FUSION=0 skips it), then
// the backend's compile.
// TESSEL_DUMP_PASSES=1 prints the graph after each pass; debug builds verify between passes.
std::unique_ptr<Executable> compile_for(const Graph& g, const Backend& backend,
                                        const CompileOptions& options = {});

}  // namespace tessel
