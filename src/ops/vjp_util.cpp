#include "ops/vjp_util.h"

#include <algorithm>

namespace tessel {

Value unbroadcast(GraphBuilder& b, Value g, const Shape& to) {
  const Shape& from = b.type(g).shape;
  if (from == to) return g;
  const int lead = static_cast<int>(from.size()) - static_cast<int>(to.size());
  TESSEL_ASSERT(lead >= 0, "unbroadcast from ", shape_str(from), " to ", shape_str(to));
  std::vector<int64_t> axes;
  for (int i = 0; i < static_cast<int>(from.size()); ++i)
    if (i < lead || (to[i - lead] == 1 && from[i] != 1)) axes.push_back(i);
  Value s = axes.empty() ? g : b.sum(g, axes, /*keepdims=*/true);
  return b.reshape(s, to);
}

Value scalar_like(GraphBuilder& b, double value, Value v) {
  return b.scalar(value, b.type(v).dtype);
}

Value zeros_like(GraphBuilder& b, Value v) {
  return b.expand(scalar_like(b, 0, v), b.type(v).shape);
}

Value i64_vector(GraphBuilder& b, const std::vector<int64_t>& v) {
  return b.graph().constant(
      HostTensor::from_vector(DType::I64, {static_cast<int64_t>(v.size())}, v));
}

Value scatter_add(GraphBuilder& b, const Shape& shape, Value indices, Value g, int64_t axis) {
  return b.op1(OpKind::ScatterAdd, Attrs().set("axis", axis),
               {b.expand(scalar_like(b, 0, g), shape), indices, g});
}

Value scatter_add_along(GraphBuilder& b, Value g, int64_t axis, int64_t extent,
                        const std::vector<int64_t>& positions) {
  Shape shape = b.type(g).shape;
  shape[axis] = extent;
  return scatter_add(b, shape, i64_vector(b, positions), g, axis);
}

Shape modulation_view(const Shape& x, const Shape& m) {
  if (x.size() == 3 && m.size() == 2) return {m[0], 1, m[1]};
  return m;
}

std::vector<int64_t> reduced_axes(const std::vector<int64_t>& axes, int rank) {
  std::vector<int64_t> out;
  if (axes.empty()) {
    for (int i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int64_t a : axes) out.push_back(a < 0 ? a + rank : a);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Shape keepdims_shape(const Shape& shape, const std::vector<int64_t>& axes) {
  Shape s = shape;
  for (int64_t a : axes) s[a] = 1;
  return s;
}

}  // namespace tessel
