// ONNX models (include/tessel/onnx.h): load / parse, the declared inputs and outputs, run.
// Importer values cross as Python objects: a tensor as a Tensor, a string tensor as a numpy
// array of str, a sequence as a list, an optional as None or its value.
#include "tessel/onnx.h"

#include "bindings.h"

namespace tessel::python {

namespace {

py::object to_py(const onnx::Value& v) {
  switch (v.kind) {
    case onnx::Value::Kind::Tensor:
      return py::cast(v.tensor);
    case onnx::Value::Kind::Strings: {
      py::list items;
      for (const std::string& s : v.strings) items.append(py::str(s));
      py::array a = py::module_::import("numpy").attr("array")(items, "dtype"_a = "str");
      return a.attr("reshape")(py::tuple(py::cast(v.shape)));
    }
    case onnx::Value::Kind::Sequence: {
      py::list out;
      for (const onnx::Value& e : v.elements) out.append(to_py(e));
      return out;
    }
    case onnx::Value::Kind::Optional:
      return v.elements.empty() ? py::none() : to_py(v.elements[0]);
  }
  return py::none();
}

// A Python value as an importer value of the declared type (`type`: "tensor(float)",
// "seq(...)", "optional(...)"); tensors must already be tessel Tensors (the package converts).
onnx::Value from_py(const py::handle& obj, const std::string& type) {
  if (type.rfind("optional(", 0) == 0) {
    if (obj.is_none()) return onnx::Value::optional(std::nullopt);
    return onnx::Value::optional(from_py(obj, type.substr(9, type.size() - 10)));
  }
  if (type.rfind("seq(", 0) == 0) {
    std::vector<onnx::Value> elems;
    for (const py::handle& e : obj) elems.push_back(from_py(e, type.substr(4, type.size() - 5)));
    return onnx::Value::sequence(std::move(elems));
  }
  if (type == "tensor(string)") {
    py::array a = py::module_::import("numpy").attr("asarray")(obj, "dtype"_a = "str");
    std::vector<std::string> strings;
    for (const py::handle& s : a.attr("ravel")()) strings.push_back(py::str(s));
    Shape shape(a.shape(), a.shape() + a.ndim());
    return onnx::Value::string_tensor(std::move(shape), std::move(strings));
  }
  return onnx::Value(obj.cast<Tensor>());
}

py::dict info_dict(const onnx::ValueInfo& info) {
  py::list shape;
  for (size_t i = 0; i < info.dims.size(); ++i) {
    if (info.dims[i] >= 0)
      shape.append(info.dims[i]);
    else if (!info.dim_names[i].empty())
      shape.append(info.dim_names[i]);
    else
      shape.append(py::none());
  }
  return py::dict("name"_a = info.name, "type"_a = info.type,
                  "shape"_a = info.has_shape ? py::object(shape) : py::object(py::none()));
}

}  // namespace

void bind_onnx(py::module_& m) {
  py::class_<onnx::Model>(m, "OnnxModel", "An ONNX model, parsed and checked (see tessel.onnx).")
      .def_static("load", &onnx::Model::load, "path"_a,
                  "Reads and checks a .onnx file (external data beside it).")
      .def_static(
          "parse",
          [](const py::bytes& data) {
            std::string s = data;
            return onnx::Model::parse(
                std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
          },
          "data"_a, "Parses and checks a serialized ModelProto.")
      .def_property_readonly("inputs",
                             [](const onnx::Model& model) {
                               py::list out;
                               for (const auto& i : model.inputs()) out.append(info_dict(i));
                               return out;
                             })
      .def_property_readonly("outputs",
                             [](const onnx::Model& model) {
                               py::list out;
                               for (const auto& o : model.outputs()) out.append(info_dict(o));
                               return out;
                             })
      .def_property_readonly("ir_version", &onnx::Model::ir_version)
      .def("opset", &onnx::Model::opset, "domain"_a = "")
      .def(
          "run",
          [](const onnx::Model& model, const py::list& inputs, const std::string& device) {
            if (inputs.size() != model.inputs().size())
              throw_error(ErrorKind::Value, "[onnx] the model takes ", model.inputs().size(),
                          " inputs; ", inputs.size(), " were given");
            std::vector<onnx::Value> values;
            for (size_t i = 0; i < inputs.size(); ++i)
              values.push_back(from_py(inputs[i], model.inputs()[i].type));
            std::vector<onnx::Value> outs;
            {
              py::gil_scoped_release release;
              outs = model.run(values, onnx::RunOptions{device});
            }
            py::list result;
            for (const onnx::Value& v : outs) result.append(to_py(v));
            return result;
          },
          "inputs"_a, "device"_a = "cpu",
          "Runs the model on `device` with `inputs` in the order of .inputs; returns the outputs "
          "in the order of .outputs.");
}

}  // namespace tessel::python
