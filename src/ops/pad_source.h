// Pad's index map, shared by the kernels of every backend so the modes are written once.
#pragma once

#include <cstdint>

#include "ir/op.h"

namespace tessel {

// Source coordinate of padded position p (p = output index - begin) on an axis of size dim, or
// -1 for the constant fill. Reflect and circular need one fold: the shape rule bounds the pads.
inline int64_t pad_source(PadMode mode, int64_t p, int64_t dim) {
  if (p >= 0 && p < dim) return p;
  switch (mode) {
    case PadMode::Constant:
      return -1;
    case PadMode::Reflect:
      return p < 0 ? -p : 2 * (dim - 1) - p;
    case PadMode::Replicate:
      return p < 0 ? 0 : dim - 1;
    case PadMode::Circular:
      return dim == 0 ? -1 : ((p % dim) + dim) % dim;  // (dim 0 pads only to an empty axis)
  }
  return -1;
}

}  // namespace tessel
