// Function transforms of tessel/tensor.h over Python callables: compile, grad, value_and_grad
// and vjp. The callable takes and returns a list of tensors (the pytree handling, argnums over
// nested arguments and has_aux live in tessel/_transforms.py). An exception the callable
// raises propagates unchanged; a non-list result is a TypeError naming what came back. Called
// inside another transform's trace, a Function applies itself inline (tessel/tensor.h).
#include "bindings.h"

namespace tessel::python {
namespace {

TensorFn wrap(py::function fn) {
  return [fn = std::move(fn)](const std::vector<Tensor>& args) {
    py::gil_scoped_acquire gil;
    py::object result = fn(py::cast(args));
    try {
      return result.cast<std::vector<Tensor>>();
    } catch (const py::cast_error&) {
      throw py::type_error("the traced function must return a list of tessel.Tensor, got " +
                           py::repr(result).cast<std::string>());
    }
  };
}

std::vector<int> argnums_from_py(const py::handle& argnums) {
  if (py::isinstance<py::int_>(argnums)) return {argnums.cast<int>()};
  return argnums.cast<std::vector<int>>();
}

}  // namespace

void bind_transforms(py::module_& m) {
  py::class_<Function>(m, "Function",
                       "A traced function: compiled once per signature (device, dtypes and "
                       "shapes of its arguments) and reused afterwards.")
      .def("__call__", &Function::operator(), "args"_a,
           "Runs on a list of tensors (all on one device); returns a list of tensors (evaluated, "
           "or lazy when called inside another transform's trace).")
      .def_property_readonly("cache_size", &Function::cache_size,
                             "Distinct signatures compiled so far.")
      .def_property_readonly("trace_count", &Function::trace_count,
                             "How many times the Python function was traced for compilation.");

  m.def(
      "compile", [](py::function fn) { return tessel::compile(wrap(std::move(fn))); }, "fn"_a,
      "fn (list[Tensor] -> list[Tensor]) traced and compiled per argument signature.");
  m.def(
      "value_and_grad",
      [](py::function fn, const py::object& argnums) {
        return tessel::value_and_grad(wrap(std::move(fn)), argnums_from_py(argnums));
      },
      "fn"_a, "argnums"_a = 0,
      "A Function returning fn's outputs followed by d(output 0)/d(args[i]) for i in argnums; "
      "output 0 must hold one floating-point element.");
  m.def(
      "grad",
      [](py::function fn, const py::object& argnums) {
        return tessel::grad(wrap(std::move(fn)), argnums_from_py(argnums));
      },
      "fn"_a, "argnums"_a = 0, "As value_and_grad, returning only the gradients.");
  m.def(
      "vjp",
      [](py::function fn, const std::vector<Tensor>& primals,
         const std::vector<Tensor>& cotangents) {
        VjpResult r = tessel::vjp(wrap(std::move(fn)), primals, cotangents);
        return py::make_tuple(r.outputs, r.vjps);
      },
      "fn"_a, "primals"_a, "cotangents"_a,
      "(outputs, vjps): fn's outputs at `primals` and, per primal, the vector-Jacobian product "
      "with `cotangents` (one per output, of its shape and dtype).");
}

}  // namespace tessel::python
