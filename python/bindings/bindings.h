// The pieces of the _tessel extension module, one bind_* per file, and the conversions they
// share (dtypes and host data between Python / numpy and Tessel). The Python package
// (python/tessel/) builds the user-facing API on top of this.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "tessel/host_tensor.h"
#include "tessel/tensor.h"

namespace tessel::python {

namespace py = pybind11;
using namespace pybind11::literals;

void bind_errors(py::module_& m);
void bind_dtypes(py::module_& m);
void bind_tensor(py::module_& m);
void bind_op_table(py::module_& m);
void bind_runtime(py::module_& m);
void bind_transforms(py::module_& m);
void bind_optim(py::module_& m);
void bind_dlpack(py::module_& m);
void bind_io(py::module_& m);
void bind_onnx(py::module_& m);

// A dtype from anything Python spells one with: a tessel.DType, a name ("f32", "float32",
// "bfloat16"), a numpy dtype or scalar type (np.float32), or Python's bool / int / float /
// complex. TypeError naming the object otherwise.
DType dtype_from_py(const py::handle& obj);
// The numpy dtype of a Tessel dtype; nullopt for those numpy lacks (bf16, the f8 types, f4).
std::optional<py::dtype> numpy_dtype(DType t);

// A copy of a numpy array (any strides) as a contiguous HostTensor.
HostTensor host_from_numpy(const py::array& a);
// A numpy view of host data, sharing (not copying) its storage; the array keeps the storage
// alive. Read-only: an evaluated tensor's value is immutable.
py::array numpy_view(const HostTensor& t);

// A tensor from data: a Tensor (returned as is, or cast / moved), a numpy array (copied; its
// dtype kept), a Python scalar or nested sequence (bool -> bool, int -> i64, float -> f32,
// complex -> c64, as PyTorch does). `dtype` / `device` may be None.
Tensor tensor_from_py(const py::handle& data, const py::handle& dtype, const py::handle& device);

}  // namespace tessel::python
