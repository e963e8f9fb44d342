// ONNX protobuf messages to and from Tessel's types: element types, TensorProto (raw and typed
// data, external data files, strings), type descriptions. Every size is checked against the
// bytes actually present before anything is allocated.
#pragma once

#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "tessel/host_tensor.h"
#include "tessel/onnx.h"

namespace tessel::onnx {

namespace pb = ::onnx;

// TensorProto.DataType <-> DType. STRING (8) and unknown codes have no DType.
std::optional<DType> dtype_from_onnx(int elem_type);
int onnx_from_dtype(DType t);
std::string onnx_type_name(int elem_type);  // "float", "int64", "string", "<type 99>"

// The dims of a TensorProto, checked: non-negative, and a product that fits in int64.
Shape checked_dims(const pb::TensorProto& t, const std::string& what);

// A numeric or bool TensorProto as a HostTensor. `base_dir`: where external data files live.
// Format errors name `what` (e.g. "initializer 'w'") and the field at fault.
HostTensor host_tensor_from_proto(const pb::TensorProto& t, const std::string& base_dir,
                                  const std::string& what);

// A SparseTensorProto (values [NNZ], indices [NNZ, rank] or linear [NNZ], dims) as a dense
// HostTensor; every index is checked against the dims.
HostTensor host_tensor_from_sparse_proto(const pb::SparseTensorProto& s,
                                         const std::string& base_dir, const std::string& what);

// Any TensorProto (string tensors included) as a Value on `device`.
Value value_from_tensor_proto(const pb::TensorProto& t, const std::string& base_dir,
                              const std::string& what, const std::string& device);

// SequenceProto / OptionalProto (the backend tests' expected values).
Value value_from_sequence_proto(const pb::SequenceProto& s, const std::string& base_dir,
                                const std::string& what, const std::string& device);
Value value_from_optional_proto(const pb::OptionalProto& o, const std::string& base_dir,
                                const std::string& what, const std::string& device);

// "tensor(float)", "seq(tensor(int64))", "optional(seq(tensor(float)))".
std::string type_proto_str(const pb::TypeProto& t);

}  // namespace tessel::onnx
