// tessel::Error as Python exceptions: tessel.Error is the base of one class per ErrorKind, and
// each also derives from the builtin a Python user would catch (a shape error is a ValueError,
// a dtype error a TypeError, ...). The C++ message is kept intact.
#include "bindings.h"

namespace tessel::python {
namespace {

struct KindClass {
  ErrorKind kind;
  const char* name;
  PyObject* builtin;
};

PyObject* g_classes[16] = {};

}  // namespace

void bind_errors(py::module_& m) {
  PyObject* base = PyErr_NewExceptionWithDoc(
      "tessel.Error", "Base of every error Tessel raises; the message names the op or file.",
      PyExc_Exception, nullptr);
  m.attr("Error") = py::reinterpret_steal<py::object>(base);
  const KindClass kinds[] = {
      {ErrorKind::Shape, "ShapeError", PyExc_ValueError},
      {ErrorKind::DType, "DTypeError", PyExc_TypeError},
      {ErrorKind::Unsupported, "UnsupportedError", PyExc_NotImplementedError},
      {ErrorKind::Format, "FormatError", PyExc_ValueError},
      {ErrorKind::Io, "IoError", PyExc_OSError},
      {ErrorKind::Device, "DeviceError", PyExc_RuntimeError},
      {ErrorKind::OutOfMemory, "OutOfMemoryError", PyExc_MemoryError},
      {ErrorKind::Internal, "InternalError", PyExc_RuntimeError},
      {ErrorKind::Value, "InvalidValueError", PyExc_ValueError},
  };
  for (const KindClass& k : kinds) {
    std::string qualified = std::string("tessel.") + k.name;
    py::tuple bases = py::make_tuple(m.attr("Error"), py::handle(k.builtin));
    PyObject* cls = PyErr_NewException(qualified.c_str(), bases.ptr(), nullptr);
    if (!cls) throw py::error_already_set();
    g_classes[static_cast<int>(k.kind)] = cls;  // kept alive by the module attribute too
    m.attr(k.name) = py::reinterpret_borrow<py::object>(cls);
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyObject* cls = g_classes[static_cast<int>(e.kind())];
      PyErr_SetString(cls ? cls : PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace tessel::python
