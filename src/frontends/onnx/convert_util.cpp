// The helpers declared in convert_util.h.
#include "frontends/onnx/convert_util.h"

namespace tessel::onnx {

Tensor act(const std::string& kind, const Tensor& x) {
  return op1("Activation", {x}, {{"kind", kind}});
}
Tensor act(const std::string& kind, const Tensor& x, double alpha) {
  return op1("Activation", {x}, {{"kind", kind}, {"alpha", alpha}});
}
Tensor binary(const std::string& op, const Tensor& a, const Tensor& b) {
  return op1("Binary", {a, b}, {{"op", op}});
}
Tensor compare(const std::string& op, const Tensor& a, const Tensor& b) {
  return op1("Compare", {a, b}, {{"op", op}});
}
Tensor expand_to(const Tensor& x, const Shape& shape) {
  return op1("Expand", {x}, {{"shape", shape}});
}
Tensor narrow(const Tensor& x, int64_t axis, int64_t start, int64_t length) {
  return op1("Narrow", {x}, {{"axis", axis}, {"start", start}, {"length", length}});
}
Tensor reduce_op(const std::string& op, const Tensor& x, const std::vector<int64_t>& axes,
                 bool keepdims, int64_t correction) {
  return op1("Reduce", {x},
             {{"op", op}, {"axes", axes}, {"keepdims", keepdims}, {"correction", correction}});
}

Tensor squeeze_axis(const Tensor& x, int64_t axis) {
  Shape s = x.shape();
  s.erase(s.begin() + axis);
  return reshape(x, s);
}
Tensor unsqueeze_axis(const Tensor& x, int64_t axis) {
  Shape s = x.shape();
  s.insert(s.begin() + axis, 1);
  return reshape(x, s);
}
Tensor take_slice(const Tensor& x, int64_t axis, int64_t i) {
  return squeeze_axis(narrow(x, axis, i, 1), axis);
}
Tensor stack(const NodeCtx& ctx, const std::vector<Tensor>& xs, int64_t axis) {
  std::vector<Tensor> parts;
  parts.reserve(xs.size());
  for (const Tensor& x : xs) {
    if (x.shape() != xs[0].shape() || x.dtype() != xs[0].dtype())
      ctx.fail(ErrorKind::Shape,
               "cannot stack values of differing types: ", Value(xs[0]).describe(), " and ",
               Value(x).describe());
    parts.push_back(unsqueeze_axis(x, axis));
  }
  if (parts.size() == 1) return parts[0];
  return concatenate(parts, axis);
}

void require_float(const NodeCtx& ctx, const Tensor& x, const char* what) {
  if (!is_float(x.dtype()))
    ctx.fail(ErrorKind::DType, what, " must be a floating-point tensor, not ",
             dtype_name(x.dtype()));
}
DType onnx_dtype(const NodeCtx& ctx, int64_t code) {
  std::optional<DType> dt = dtype_from_onnx(static_cast<int>(code));
  if (!dt)
    ctx.fail(ErrorKind::DType, "element type ", onnx_type_name(static_cast<int>(code)),
             " is not supported");
  return *dt;
}
int64_t host_int(const NodeCtx& ctx, int i, const char* what) {
  const std::vector<int64_t> v = ctx.ints(i);
  if (v.size() != 1) ctx.fail(ErrorKind::Shape, what, " must hold one element, not ", v.size());
  return v[0];
}

}  // namespace tessel::onnx
