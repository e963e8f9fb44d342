// Small helpers every host backend's kernels use.
#pragma once

#include "ir/graph.h"
#include "tessel/host_tensor.h"

namespace tessel {

// An optional input that is present (absent ones are HostTensors without storage).
inline bool present(const HostTensor& t) { return t.storage != nullptr; }

// A view of `t` broadcast (numpy rules) to `shape`: broadcast axes get stride 0.
HostTensor broadcast_to(const HostTensor& t, const Shape& shape);

// The node's "axis" attribute wrapped into [0, rank) (the shape rule has checked its range).
inline int axis_attr(const Node& node, int rank) {
  int64_t a = node.attrs.i("axis");
  return static_cast<int>(a < 0 ? a + rank : a);
}

// An integer index wrapped by `dim` when negative; throws Value when out of [-dim, dim).
int64_t checked_index(const Node& node, int64_t index, int64_t dim, const char* what);

}  // namespace tessel
