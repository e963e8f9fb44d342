#include "bindings.h"

namespace tessel::python {

void bind_transforms(py::module_& m) {}

}  // namespace tessel::python
