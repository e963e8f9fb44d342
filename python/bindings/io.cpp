// Files and datasets: safetensors (read / write) and the handwritten digits.
#include "bindings.h"
#include "tessel/datasets.h"
#include "tessel/safetensors.h"

namespace tessel::python {

void bind_io(py::module_& m) {
  m.def(
      "load_safetensors",
      [](const std::string& path, const py::object& device) {
        SafetensorsFile f = read_safetensors(path);
        std::string dev = device.is_none() ? Tensor::default_device() : device.cast<std::string>();
        py::dict tensors;
        for (auto& [name, value] : f.tensors) tensors[py::str(name)] = Tensor(value, dev);
        return py::make_tuple(tensors, f.metadata);
      },
      "path"_a, "device"_a = py::none(),
      "Reads a safetensors file: ({name: Tensor} in file order, {metadata}). Every header field "
      "is validated; a bad file raises tessel.FormatError naming it.");
  m.def(
      "save_safetensors",
      [](const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
         const std::map<std::string, std::string>& metadata) {
        std::vector<std::pair<std::string, HostTensor>> host;
        for (const auto& [name, t] : tensors) host.emplace_back(name, t.data());
        write_safetensors(path, host, metadata);
      },
      "path"_a, "tensors"_a, "metadata"_a = std::map<std::string, std::string>(),
      "Writes tensors (evaluating them) to a safetensors file, atomically.");
  m.def(
      "load_digits",
      [](const std::string& path) {
        Dataset d = path.empty() ? load_digits() : load_digits(path);
        return py::make_tuple(Tensor(d.x), Tensor(d.y));
      },
      "path"_a = "",
      "The 8x8 handwritten digits Debian's python3-sklearn ships: (x [1797, 64] float32 in "
      "[0, 1], y [1797] int64), read in C++.");
}

}  // namespace tessel::python
