// Positional encodings' parameters as every backend's Rope, AxialRope2d and ALiBi kernels read
// them, so the rotary_dim default, the rotary frequencies and the ALiBi slopes are written once.
#pragma once

#include <cmath>
#include <cstdint>

#include "ir/graph.h"

namespace tessel {

// Rope's rotated channel count: the rotary_dim attribute, 0 meaning all `dim` channels.
inline int64_t rope_rotary_dim(const Node& node, int64_t dim) {
  int64_t rotary = node.attrs.i("rotary_dim");
  return rotary == 0 ? dim : rotary;
}

// Channel pair i of a rotated block `width` channels wide turns by pos · base^(−2i / width)
// (Rope: width = rotary_dim; AxialRope2d: width = D/2, one block per grid axis).
inline double rope_frequency(double base, int64_t i, int64_t width) {
  return std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(width));
}

// Head slopes as llama.cpp computes them for ggml_soft_max_ext (ggml/src/ggml-cpu/ops.cpp,
// ggml_compute_forward_soft_max_f32; ggml PR #5488): n = 2^floor(log2 H),
// m0 = 2^(−max_bias / n), m1 = 2^(−(max_bias / 2) / n), slope_h = m0^(h+1) for h < n, else
// m1^(2(h−n)+1). With max_bias = 8 these are the ALiBi paper's slopes (Press et al. 2022,
// get_slopes: geometric from 2^(−8/n); for H not a power of two, every other slope of 2n).
inline double alibi_slope(int64_t h, int64_t heads, double max_bias) {
  int64_t n = 1;
  while (n * 2 <= heads) n *= 2;
  const double m0 = std::pow(2.0, -max_bias / static_cast<double>(n));
  const double m1 = std::pow(2.0, -(max_bias / 2.0) / static_cast<double>(n));
  return h < n ? std::pow(m0, static_cast<double>(h + 1))
               : std::pow(m1, static_cast<double>(2 * (h - n) + 1));
}

}  // namespace tessel
