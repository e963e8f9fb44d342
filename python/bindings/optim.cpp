#include "bindings.h"

namespace tessel::python {

void bind_optim(py::module_& m) {}

}  // namespace tessel::python
