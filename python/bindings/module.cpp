// The _tessel extension module: each bind_* adds one part (see bindings.h).
#include "bindings.h"

PYBIND11_MODULE(_tessel, m) {
  using namespace tessel::python;
  m.doc() = "Tessel's C++ core. Use the `tessel` package, which builds on it.";
  bind_errors(m);
  bind_dtypes(m);
  bind_tensor(m);
  bind_op_table(m);
  bind_runtime(m);
  bind_transforms(m);
  bind_optim(m);
  bind_dlpack(m);
  bind_io(m);
  bind_onnx(m);
}
