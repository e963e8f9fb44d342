// ONNX Slice (opset 13) on one axis, shared by Slice's shape rule (the output length) and the
// kernels (the first source index) so the clamping is written once.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tessel {

struct SliceRange {
  int64_t start = 0;   // the first index taken
  int64_t length = 0;  // how many indices are taken, `step` apart
};

// `start` and `end` wrap once when negative, then clamp as the spec says: to [0, dim] for a
// positive step, to [0, dim - 1] (start) and [-1, dim - 1] (end) for a negative one. `step` != 0.
inline SliceRange slice_range(int64_t start, int64_t end, int64_t step, int64_t dim) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (dim == 0) return {};  // (the negative-step clamp range [0, dim - 1] would be empty)
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return {start, end > start ? (end - start - 1) / step + 1 : 0};
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return {start, start > end ? (start - end - 1) / -step + 1 : 0};
}

}  // namespace tessel
