// Small builders and checks that several converter families use: one-output wrappers of Tessel
// kinds, adding / removing a unit axis, and checks of a node's inputs. Each is written here once.
#pragma once

#include <string>
#include <vector>

#include "frontends/onnx/converter.h"

namespace tessel::onnx {

// One-output kinds, with their variant attribute (`kind` / `op`) and nothing else.
Tensor act(const std::string& kind, const Tensor& x);                // Activation
Tensor act(const std::string& kind, const Tensor& x, double alpha);  // with its alpha
// binary / compare: uint16 and uint32 operands compute in i32 / i64 (convert_util.cpp says why).
Tensor binary(const std::string& op, const Tensor& a, const Tensor& b);
Tensor compare(const std::string& op, const Tensor& a, const Tensor& b);
Tensor expand_to(const Tensor& x, const Shape& shape);
Tensor narrow(const Tensor& x, int64_t axis, int64_t start, int64_t length);
Tensor reduce_op(const std::string& op, const Tensor& x, const std::vector<int64_t>& axes,
                 bool keepdims, int64_t correction = 0);

// x with its axis of size 1 at `axis` removed / with a new axis of size 1 at `axis`.
Tensor squeeze_axis(const Tensor& x, int64_t axis);
Tensor unsqueeze_axis(const Tensor& x, int64_t axis);
// The slice x[..., i, ...] along `axis`, that axis dropped.
Tensor take_slice(const Tensor& x, int64_t axis, int64_t i);
// Stacks equally shaped and typed tensors along a new axis (Shape error naming the node if not).
Tensor stack(const NodeCtx& ctx, const std::vector<Tensor>& xs, int64_t axis);

// DType error unless x is floating-point; `what` names the input in the message.
void require_float(const NodeCtx& ctx, const Tensor& x, const char* what);
// An ONNX element-type code (a dtype attribute) as a DType; DType error if Tessel lacks it.
DType onnx_dtype(const NodeCtx& ctx, int64_t code);
// Input i's one integer element, read on the host (a value that decides a shape).
int64_t host_int(const NodeCtx& ctx, int i, const char* what);
// v truncated to an integer; Value error naming `what` if v is NaN, infinite or beyond int64
// (a plain cast would be undefined behaviour there).
int64_t to_int64(const NodeCtx& ctx, double v, const char* what);
// Input i's one element (of any dtype) as an integer, as to_int64.
int64_t scalar_int(const NodeCtx& ctx, int i, const char* what);

}  // namespace tessel::onnx
