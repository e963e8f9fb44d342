// Helpers the VJP rules (src/ops/*_vjp.cpp) share: summing a broadcast gradient back to its
// operand's shape, constants in a value's dtype, and reduction axes as a rule reads them.
#pragma once

#include <vector>

#include "ops/rules.h"

namespace tessel {

// g (of a broadcast result's shape) summed over the axes numpy broadcasting added or stretched
// to make `to` (the operand's shape) match it; returned with shape `to`.
Value unbroadcast(GraphBuilder& b, Value g, const Shape& to);

// A rank-0 constant of v's dtype.
Value scalar_like(GraphBuilder& b, double value, Value v);
// Zeros of v's type.
Value zeros_like(GraphBuilder& b, Value v);
// A 1-D i64 constant (index lists, positions).
Value i64_vector(GraphBuilder& b, const std::vector<int64_t>& v);
// Zeros of `shape` with g added at `indices` (a 1-D index value) along `axis` (index_add).
Value scatter_add(GraphBuilder& b, const Shape& shape, Value indices, Value g, int64_t axis);
// Zeros shaped like g but `extent` long on `axis`, with g's slices added at `positions` along
// it (index_add: repeated positions accumulate). Undoes a read of those positions.
Value scatter_add_along(GraphBuilder& b, Value g, int64_t axis, int64_t extent,
                        const std::vector<int64_t>& positions);

// The view of a DiT modulation m (scale, shift, gate) over x that the fused kinds use
// (src/ops/fused_composites.cpp): [B,D] over [B,S,D] reads as [B,1,D]; any other m as itself.
Shape modulation_view(const Shape& x, const Shape& m);

// A Reduce-style `axes` attribute (empty = every axis; negative counts from the end) as sorted
// non-negative axes of a rank-`rank` tensor.
std::vector<int64_t> reduced_axes(const std::vector<int64_t>& axes, int rank);
// `shape` with the reduced axes kept as 1 (the keepdims shape).
Shape keepdims_shape(const Shape& shape, const std::vector<int64_t>& axes);

}  // namespace tessel
