// tessel.Tensor's C++ half: construction from Python data, the numpy bridge, properties and
// evaluation, and the promoting binary / comparison ops of tessel/ops.h. Operators, indexing and
// the numpy-style methods are added in Python (tessel/_tensor.py).
#include <complex>

#include "bindings.h"
#include "tessel/ops.h"

namespace tessel::python {
namespace {

std::string device_from_py(const py::handle& device) {
  if (device.is_none()) return Tensor::default_device();
  return py::str(device).cast<std::string>();
}

// Python's own numbers and sequences of them: these take PyTorch's default dtypes.
bool is_plain_python(const py::handle& data) {
  // numpy's float64 and complex128 scalars subclass Python's float and complex: not plain.
  if (py::isinstance(data, py::module_::import("numpy").attr("generic"))) return false;
  return py::isinstance<py::bool_>(data) || py::isinstance<py::int_>(data) ||
         py::isinstance<py::float_>(data) || PyComplex_Check(data.ptr()) ||
         py::isinstance<py::list>(data) || py::isinstance<py::tuple>(data);
}

py::object item(const Tensor& t) {
  HostTensor h = t.data();
  if (t.numel() != 1)
    throw_error(ErrorKind::Shape, "[Tensor.item] needs one element, tensor is ",
                shape_str(t.shape()));
  switch (dtype_kind(t.dtype())) {
    case DTypeKind::Bool:
      return py::bool_(h.get_i64(0) != 0);
    case DTypeKind::Signed:
    case DTypeKind::Unsigned:
      return py::int_(h.get_i64(0));
    case DTypeKind::Float:
      return py::float_(h.get_f64(0));
    case DTypeKind::Complex: {
      std::complex<double> c = h.get_c128(0);
      return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(c.real(), c.imag()));
    }
  }
  return py::none();
}

std::string repr(const Tensor& t) {
  std::string head = "tessel.Tensor(";
  std::string tail = ", dtype=" + py::str(py::cast(t.dtype())).cast<std::string>() + ", device='" +
                     t.device() + "')";
  py::object values;
  if (numpy_dtype(t.dtype()))
    values = numpy_view(t.data());
  else
    values = numpy_view(t.astype(DType::F32).data());
  py::module_ np = py::module_::import("numpy");
  std::string body =
      np.attr("array2string")(values, "separator"_a = ", ", "prefix"_a = head).cast<std::string>();
  return head + body + tail;
}

}  // namespace

Tensor tensor_from_py(const py::handle& data, const py::handle& dtype, const py::handle& device) {
  if (py::isinstance<Tensor>(data)) {
    Tensor t = data.cast<Tensor>();
    if (!dtype.is_none() && dtype_from_py(dtype) != t.dtype()) t = t.astype(dtype_from_py(dtype));
    if (!device.is_none() && device_from_py(device) != t.device()) t = t.to(device_from_py(device));
    return t;
  }
  std::string dev = device_from_py(device);
  py::module_ np = py::module_::import("numpy");
  py::array arr;
  try {
    arr = np.attr("asarray")(data);
  } catch (const py::error_already_set& e) {
    throw_error(ErrorKind::Value, "[tensor] cannot make a tensor from ",
                py::str(py::type::of(data)).cast<std::string>(), ": ", e.what());
  }
  std::string kind = arr.dtype().attr("kind").cast<std::string>();
  if (kind == "O" || kind == "U" || kind == "S" || kind == "V" || kind == "M" || kind == "m")
    throw_error(ErrorKind::DType, "[tensor] cannot make a tensor from ",
                py::str(py::type::of(data)).cast<std::string>(), " (numpy makes a '",
                py::str(arr.dtype()).cast<std::string>(),
                "' array of it: ragged nesting or non-numeric elements)");
  if (is_plain_python(data)) {
    // PyTorch's defaults: float -> f32, complex -> c64 (numpy would give f64 / c128).
    if (kind == "f") arr = arr.attr("astype")("float32");
    if (kind == "c") arr = arr.attr("astype")("complex64");
  }
  if (dtype.is_none()) return Tensor(host_from_numpy(arr), dev);
  DType want = dtype_from_py(dtype);
  if (auto np_want = numpy_dtype(want))
    return Tensor(host_from_numpy(arr.attr("astype")(*np_want)), dev);
  Tensor t = Tensor(host_from_numpy(arr), dev).astype(want);  // e.g. bf16: cast in Tessel
  t.eval();
  return t;
}

void bind_tensor(py::module_& m) {
  py::class_<Tensor>(m, "Tensor",
                     "A lazy n-dimensional array on one device. Ops record work; nothing runs "
                     "until a value is needed (numpy(), item(), printing) or eval() is called.")
      .def(py::init([](const py::object& data, const py::object& dtype, const py::object& device) {
             return tensor_from_py(data, dtype, device);
           }),
           "data"_a, "dtype"_a = py::none(), "device"_a = py::none())
      .def_property_readonly("shape",
                             [](const Tensor& t) {
                               py::tuple s(t.shape().size());
                               for (size_t i = 0; i < t.shape().size(); ++i) s[i] = t.shape()[i];
                               return s;
                             })
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("device", &Tensor::device)
      .def_property_readonly("ndim", &Tensor::rank)
      .def_property_readonly("size", &Tensor::numel)
      .def_property_readonly("nbytes",
                             [](const Tensor& t) { return t.numel() * dtype_size(t.dtype()); })
      .def_property_readonly("itemsize", [](const Tensor& t) { return dtype_size(t.dtype()); })
      .def(
          "eval",
          [](const Tensor& t) {
            t.eval();
            return t;
          },
          "Evaluates now; returns self.")
      .def_property_readonly("is_evaluated", &Tensor::is_evaluated)
      .def(
          "numpy", [](const Tensor& t) { return numpy_view(t.data()); },
          "The value as a read-only numpy array sharing this tensor's memory (evaluates).")
      .def("item", &item, "The one element as a Python number.")
      .def("to", &Tensor::to, "device"_a, "A copy on `device` (an explicit transfer).")
      .def(
          "astype", [](const Tensor& t, const py::object& d) { return t.astype(dtype_from_py(d)); },
          "dtype"_a)
      .def("__repr__", &repr)
      .def("__len__",
           [](const Tensor& t) {
             if (t.rank() == 0) throw py::type_error("len() of a 0-d tensor");
             return t.shape()[0];
           })
      .def("__hash__",
           [](const Tensor& t) {
             return py::hash(py::int_(reinterpret_cast<intptr_t>(t.op().get()) + t.index()));
           })
      .def("_same", [](const Tensor& a, const Tensor& b) {
        return a.op() == b.op() && a.index() == b.index();
      });

  // The promoting binary and comparison ops (PyTorch's type promotion), for the operators.
  using Binary = Tensor (*)(const Tensor&, const Tensor&);
  const std::pair<const char*, Binary> binaries[] = {
      {"add", &add},         {"sub", &sub},
      {"mul", &mul},         {"div", &div},
      {"pow", &pow},         {"maximum", &maximum},
      {"minimum", &minimum}, {"atan2", &atan2},
      {"equal", &equal},     {"not_equal", &not_equal},
      {"less", &less},       {"less_equal", &less_equal},
      {"greater", &greater}, {"greater_equal", &greater_equal},
  };
  for (auto [name, fn] : binaries) m.def(name, fn, "a"_a, "b"_a);
  m.def("where", &where, "cond"_a, "a"_a, "b"_a);
  m.def("promote_types", [](const py::object& a, const py::object& b) {
    return promote_types(dtype_from_py(a), dtype_from_py(b));
  });
  m.def(
      "eval", [](const std::vector<Tensor>& ts) { tessel::eval(ts); }, "tensors"_a,
      "Evaluates several tensors in one compiled graph.");
}

}  // namespace tessel::python
