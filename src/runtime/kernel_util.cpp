#include "runtime/kernel_util.h"

namespace tessel {

HostTensor broadcast_to(const HostTensor& t, const Shape& shape) {
  HostTensor v = t;
  size_t n = shape.size();
  TESSEL_ASSERT(t.shape.size() <= n, "broadcast to a lower rank");
  v.shape = shape;
  v.strides.assign(n, 0);
  size_t lead = n - t.shape.size();
  for (size_t i = 0; i < t.shape.size(); ++i) {
    TESSEL_ASSERT(t.shape[i] == shape[lead + i] || t.shape[i] == 1, "bad broadcast");
    v.strides[lead + i] = t.shape[i] == 1 ? 0 : t.strides[i];
  }
  return v;
}

int64_t checked_index(const Node& node, int64_t index, int64_t dim, const char* what) {
  if (index < -dim || index >= dim)
    throw_error(ErrorKind::Value, node.where(), ": ", what, " ", index, " is out of range [", -dim,
                ", ", dim, ")");
  return index < 0 ? index + dim : index;
}

}  // namespace tessel
