#include "bindings.h"

namespace tessel::python {

void bind_dlpack(py::module_& m) {}

}  // namespace tessel::python
