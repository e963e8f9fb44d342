// NumPy .npy files (format versions 1.0–3.0, https://numpy.org/doc/stable/reference/generated/
// numpy.lib.format.html): the magic "\x93NUMPY", a version, a little-endian header length, a
// Python-literal dict {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}, then the data.
// Reading checks everything (magic, header, dtype, shape overflow, that the data is all there)
// and throws a Format error naming the file and the fault; big-endian and Fortran-order arrays
// are converted. Writing produces version 1.0, C order, little-endian.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tessel/host_tensor.h"

namespace tessel {

HostTensor parse_npy(std::span<const uint8_t> bytes, const std::string& what);
HostTensor read_npy(const std::string& path);
std::vector<uint8_t> serialize_npy(const HostTensor& t);
void write_npy(const std::string& path, const HostTensor& t);

}  // namespace tessel
