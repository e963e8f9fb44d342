// The window of Conv, ConvTranspose and the pools: kernel, strides, dilations and pads (auto_pad
// resolved), read from a node's attributes, for every family that convolves or pools.
#pragma once

#include <algorithm>
#include <vector>

#include "frontends/onnx/converter.h"

namespace tessel::onnx {

// A sliding window over the spatial dims of [N, C, D1, ...].
struct Window {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<int64_t> pads;  // [begins..., ends...]
  int n() const { return static_cast<int>(kernel.size()); }
  bool dilated() const {
    return std::any_of(dilations.begin(), dilations.end(), [](int64_t d) { return d != 1; });
  }
  bool pads_within_half_kernel() const {
    for (int d = 0; d < n(); ++d)
      if (pads[d] > kernel[d] / 2 || pads[n() + d] > kernel[d] / 2) return false;
    return true;
  }
};

// An ints attribute with one entry per spatial dim (absent: n copies of `fill`), each >= `min`.
std::vector<int64_t> spatial_attr(const NodeCtx& ctx, const char* name, int n, int64_t fill,
                                  int64_t min);
// The window of a Conv / pool over x's spatial dims, pads resolved from auto_pad.
Window window_of(const NodeCtx& ctx, const Tensor& x, std::vector<int64_t> kernel);
// W's kernel dims, checked against X's rank and the kernel_shape attribute.
std::vector<int64_t> kernel_of_weight(const NodeCtx& ctx, const Tensor& x, const Tensor& w);
// The Conv kind's attributes for x ⋆ w: the window of w's kernel and the node's group.
std::vector<NamedAttr> conv_attrs(const NodeCtx& ctx, const Tensor& x, const Tensor& w);

}  // namespace tessel::onnx
