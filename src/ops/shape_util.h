// Helpers shared by shape rules.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace tessel {

// numpy broadcasting of two shapes; nullopt when incompatible.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);
// Axis in [-rank, rank) → [0, rank); fails through ctx otherwise.
int normalize_axis(const InferCtx& ctx, int64_t axis, int rank, const char* what = "axis");
// All inputs must share one dtype; returns it.
DType same_dtype(const InferCtx& ctx, std::initializer_list<int> inputs);
// Input i's dtype must be in `allowed`.
void require_dtype(const InferCtx& ctx, int i, DTypeSet allowed, const char* what);
void require_rank(const InferCtx& ctx, int i, int rank);
void require_rank_between(const InferCtx& ctx, int i, int lo, int hi);
// Output like input 0.
std::vector<TensorType> same_as_input(const InferCtx& ctx);

// Body graphs (graph attributes of ControlFlow, FusionRegions, UserExtensible kinds): the
// parameters are the body's Input nodes in creation order, the results its `outputs`.

// The body in graph attribute `name`; fails (Value) when the attribute is not set.
const Graph& body_attr(const InferCtx& ctx, const char* name);
// Fails (Value) when `body` returns nothing or a value it does not hold (it is user-built: never
// index past it).
void check_body_results(const InferCtx& ctx, const Graph& body, const char* name);
// Fails unless `body` takes the node's inputs: as many parameters (Value) of the same types
// (Shape).
void check_body_takes_inputs(const InferCtx& ctx, const Graph& body, const char* name);

// `body` recorded into g with its parameters bound to `in` and its constants copied; returns its
// results.
std::vector<Value> inline_graph(Graph& g, const Graph& body, std::span<const Value> in);

}  // namespace tessel
