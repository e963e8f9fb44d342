// An elementwise region body run in place over runs of an f32 tensor: the epilogue of fused
// kinds whose output goes through a body in the same kernel (ConvRegion), applied to each tile
// while it is still in cache. Defined with the ElementwiseRegion kernel
// (kernels/fusion_regions.cpp).
#pragma once

#include <memory>

#include "ir/graph.h"
#include "tessel/host_tensor.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN

struct RegionBody;
// `body` takes one parameter, y itself (f32, contiguous), and returns a value of y's type; its
// other leaves are constants (broadcast to y's shape). `node` names errors.
std::shared_ptr<const RegionBody> region_body(const Node& node, const Graph& body,
                                              const HostTensor& y);
// y[start .. start + len) = body(y)[start .. start + len) (flat row-major indices).
void run_region_body(const RegionBody& rb, int64_t start, int64_t len);
// The same on a tile: `rows` runs of `cols` elements, `ld` apart, the first at `start`.
void run_region_body_tile(const RegionBody& rb, int64_t start, int64_t ld, int64_t rows,
                          int64_t cols);

TESSEL_ISA_END
