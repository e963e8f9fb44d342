// Devices, the coverage matrix as data, and the host allocator's statistics.
#include "bindings.h"
#include "runtime/backend.h"
#include "runtime/coverage.h"
#include "runtime/host_allocator.h"

namespace tessel::python {

void bind_runtime(py::module_& m) {
  m.def(
      "devices",
      [] {
        std::vector<std::string> names;
        for (const Backend* b : backends()) names.push_back(b->name());
        return names;
      },
      "The registered backends by name, in the coverage matrix's column order.");
  m.def("default_device", &Tensor::default_device,
        "The device new tensors go to when none is given.");
  m.def("set_default_device", &Tensor::set_default_device, "device"_a);
  m.def("coverage_json", &coverage_json);
  m.def("coverage_markdown", &coverage_markdown);
  m.def(
      "memory_stats",
      [] {
        HostMemoryStats s = host_memory_stats();
        return py::dict("in_use"_a = s.in_use, "peak_in_use"_a = s.peak_in_use,
                        "cached"_a = s.cached);
      },
      "The caching host allocator: bytes in use, peak in use, bytes cached in free lists.");
  m.def("memory_reset_peak", &host_memory_reset_peak);
  m.def("memory_release_cache", &host_memory_release_cache);
  m.attr("__version__") = TESSEL_VERSION;
}

}  // namespace tessel::python
