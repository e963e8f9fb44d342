// Building small ONNX models in tests with the protobuf messages.
#pragma once

#include <string>
#include <vector>

#include "frontends/onnx/tensor_proto.h"

namespace tessel::testing {

namespace pb = ::onnx;

inline pb::ValueInfoProto tensor_info(const std::string& name, int elem_type,
                                      const std::vector<int64_t>& dims,
                                      const std::vector<std::string>& params = {}) {
  pb::ValueInfoProto v;
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  auto* shape = t->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (i < params.size() && !params[i].empty())
      d->set_dim_param(params[i]);
    else
      d->set_dim_value(dims[i]);
  }
  return v;
}

inline pb::NodeProto node(const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name = "",
                          const std::string& domain = "") {
  pb::NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  n.set_domain(domain);
  for (const auto& i : inputs) n.add_input(i);
  for (const auto& o : outputs) n.add_output(o);
  return n;
}

// A tensor of `type` with `dims`, its values stored by `add` (float_data, int32_data, ...).
template <class T, class Add>
pb::TensorProto tensor_of(const std::string& name, pb::TensorProto::DataType type,
                          const std::vector<int64_t>& dims, const std::vector<T>& values, Add add) {
  pb::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  for (T v : values) (t.*add)(v);
  return t;
}

inline pb::TensorProto float_tensor(const std::string& name, const std::vector<int64_t>& dims,
                                    const std::vector<float>& values) {
  return tensor_of(name, pb::TensorProto::FLOAT, dims, values, &pb::TensorProto::add_float_data);
}

inline pb::ModelProto model(int opset = 13) {
  pb::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m.mutable_graph()->set_name("test");
  return m;
}

inline std::vector<uint8_t> bytes_of(const pb::ModelProto& m) {
  std::string s = m.SerializeAsString();
  return {s.begin(), s.end()};
}

}  // namespace tessel::testing
