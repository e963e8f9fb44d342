// tessel.DType and the module's dtype constants (tessel.float32, ...), named as numpy and
// PyTorch name them; conversions to and from numpy dtypes and host data.
#include <cstring>

#include "bindings.h"

namespace tessel::python {
namespace {

// numpy / PyTorch spelling of a Tessel dtype name: "f32" -> "float32", "bf16" -> "bfloat16",
// "f8_e4m3fn" -> "float8_e4m3fn", "c64" -> "complex64", "u8" -> "uint8".
std::string long_name(DType t) {
  std::string s = dtype_name(t);
  if (s == "bool") return s;
  if (s == "bf16") return "bfloat16";
  static const std::pair<char, const char*> prefixes[] = {
      {'f', "float"}, {'i', "int"}, {'u', "uint"}, {'c', "complex"}};
  for (auto [c, word] : prefixes)
    if (s.size() > 1 && s[0] == c && std::isdigit(static_cast<unsigned char>(s[1])))
      return word + s.substr(1);
  return s;
}

std::optional<DType> dtype_from_string(std::string s) {
  if (s.rfind("torch.", 0) == 0) s = s.substr(6);
  if (auto t = dtype_from_name(s)) return t;
  for (int d = 0; d < kNumDTypes; ++d)
    if (long_name(static_cast<DType>(d)) == s) return static_cast<DType>(d);
  static const std::pair<const char*, DType> aliases[] = {
      {"bool_", DType::Bool}, {"float", DType::F32},  {"double", DType::F64},
      {"half", DType::F16},   {"long", DType::I64},   {"int", DType::I32},
      {"short", DType::I16},  {"cfloat", DType::C64}, {"cdouble", DType::C128}};
  for (auto [name, t] : aliases)
    if (s == name) return t;
  return std::nullopt;
}

}  // namespace

std::optional<py::dtype> numpy_dtype(DType t) {
  switch (t) {
    case DType::BF16:
    case DType::F8E4M3FN:
    case DType::F8E5M2:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2FNUZ:
    case DType::F8E8M0FNU:
    case DType::F4E2M1FNx2:
      return std::nullopt;
    default:
      return py::dtype(long_name(t));
  }
}

DType dtype_from_py(const py::handle& obj) {
  if (py::isinstance<DType>(obj)) return obj.cast<DType>();
  if (py::isinstance<py::str>(obj)) {
    if (auto t = dtype_from_string(obj.cast<std::string>())) return *t;
    throw_error(ErrorKind::DType, "[dtype] unknown dtype name '", obj.cast<std::string>(),
                "' (e.g. float32, f32, bfloat16, int64, bool)");
  }
  if (obj.is(py::type::of(py::bool_()))) return DType::Bool;
  if (obj.is(py::type::of(py::int_()))) return DType::I64;
  if (obj.is(py::type::of(py::float_()))) return DType::F32;
  if (obj.ptr() == reinterpret_cast<PyObject*>(&PyComplex_Type)) return DType::C64;
  // A torch.dtype prints as "torch.float32".
  if (py::str(py::type::of(obj).attr("__module__")).cast<std::string>() == "torch")
    if (auto t = dtype_from_string(py::str(obj).cast<std::string>())) return *t;
  py::dtype np;
  try {
    np = py::dtype::from_args(py::reinterpret_borrow<py::object>(obj));
  } catch (const py::error_already_set&) {
    throw_error(ErrorKind::DType, "[dtype] ", py::repr(obj).cast<std::string>(), " is not a dtype");
  }
  for (int d = 0; d < kNumDTypes; ++d) {
    auto t = static_cast<DType>(d);
    auto mine = numpy_dtype(t);
    if (mine && mine->attr("__eq__")(np.attr("newbyteorder")("=")).cast<bool>()) return t;
  }
  throw_error(ErrorKind::DType, "[dtype] numpy dtype ", py::str(np).cast<std::string>(),
              " has no Tessel equivalent");
}

HostTensor host_from_numpy(const py::array& a) {
  DType t = dtype_from_py(a.dtype());
  py::array c = a;
  if (!a.dtype().attr("isnative").cast<bool>())
    c = a.attr("astype")(a.dtype().attr("newbyteorder")("="));
  c = py::array::ensure(c, py::array::c_style);
  Shape shape(c.shape(), c.shape() + c.ndim());
  HostTensor h = HostTensor::empty(t, shape);
  if (h.numel() > 0) std::memcpy(h.data(), c.data(), static_cast<size_t>(c.nbytes()));
  return h;
}

py::array numpy_view(const HostTensor& t) {
  auto np = numpy_dtype(t.dtype);
  if (!np)
    throw_error(ErrorKind::DType, "[numpy] numpy has no ", dtype_name(t.dtype),
                " dtype; convert first, e.g. .astype(tessel.float32)");
  if (!t.storage) return py::array(*np, t.shape);  // empty
  std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end()), strides;
  for (int64_t s : t.strides) strides.push_back(s * dtype_size(t.dtype));
  auto* keep = new std::shared_ptr<Storage>(t.storage);
  py::capsule owner(keep, [](void* p) { delete static_cast<std::shared_ptr<Storage>*>(p); });
  py::array out(*np, shape, strides, t.data(), owner);
  out.attr("setflags")("write"_a = false);
  return out;
}

void bind_dtypes(py::module_& m) {
  py::class_<DType>(m, "DType", "An element type. Compares equal to its names and numpy dtype.")
      .def_property_readonly(
          "name", [](DType t) { return long_name(t); }, "numpy / PyTorch name, e.g. 'float32'")
      .def_property_readonly(
          "short_name", [](DType t) { return std::string(dtype_name(t)); },
          "Tessel's name, e.g. 'f32' (as error messages spell it)")
      .def_property_readonly("itemsize", [](DType t) { return dtype_size(t); })
      .def_property_readonly("is_floating_point", [](DType t) { return is_float(t); })
      .def_property_readonly("is_complex", [](DType t) { return is_complex(t); })
      .def_property_readonly("is_integer", [](DType t) { return is_integer(t); })
      .def_property_readonly(
          "is_storage_only", [](DType t) { return dtype_support(t) == DTypeSupport::Storage; },
          "Only stored and cast for now (no arithmetic)")
      .def_property_readonly(
          "numpy",
          [](DType t) -> py::object {
            auto np = numpy_dtype(t);
            return np ? py::object(*np) : py::none();
          },
          "The numpy dtype, or None where numpy has none (bfloat16, float8_*)")
      .def("__repr__", [](DType t) { return "tessel." + long_name(t); })
      .def("__str__", [](DType t) { return long_name(t); })
      .def("__hash__", [](DType t) { return static_cast<int>(t); })
      .def("__eq__",
           [](DType t, const py::object& other) {
             if (other.is_none()) return false;
             try {
               return dtype_from_py(other) == t;
             } catch (const Error&) {
               return false;
             }
           })
      .def("__ne__", [](DType t, const py::object& other) {
        return !py::cast(t).attr("__eq__")(other).cast<bool>();
      });
  py::list all;
  for (int d = 0; d < kNumDTypes; ++d) {
    auto t = static_cast<DType>(d);
    m.attr(long_name(t).c_str()) = t;
    all.append(t);
  }
  m.attr("bool_") = DType::Bool;
  m.attr("dtypes") = all;
  m.def("dtype", &dtype_from_py, "x"_a,
        "The tessel.DType named by x: a DType, a name ('float32', 'f32'), a numpy or torch "
        "dtype, or bool / int / float / complex.");
}

}  // namespace tessel::python
