// safetensors files, read and written following the published format
// (https://huggingface.co/docs/safetensors): an 8-byte little-endian header length N, N bytes of
// JSON mapping each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets
// relative to the byte buffer after the header) plus an optional "__metadata__" object of
// strings, then the byte buffer. Reading validates everything (header size, JSON, dtypes,
// shapes, that the offsets tile the buffer exactly with no gap or overlap, duplicate names) and
// throws a Format error naming the file and what is wrong. Writing pads the header with spaces
// to a multiple of 8 bytes and orders the data by descending element size, then name, so every
// tensor is aligned — as the reference implementation does.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tessel/host_tensor.h"

namespace tessel {

struct SafetensorsFile {
  std::vector<std::pair<std::string, HostTensor>> tensors;  // in data order
  std::map<std::string, std::string> metadata;              // "__metadata__"

  bool contains(const std::string& name) const;
  const HostTensor& at(const std::string& name) const;  // Value error naming what exists
};

// `what` names the source in error messages (a path).
SafetensorsFile parse_safetensors(std::span<const uint8_t> bytes, const std::string& what);
SafetensorsFile read_safetensors(const std::string& path);

std::vector<uint8_t> serialize_safetensors(
    const std::vector<std::pair<std::string, HostTensor>>& tensors,
    const std::map<std::string, std::string>& metadata = {});
// Writes to path + ".tmp" and renames, so a crash never leaves a half-written file at `path`.
void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, HostTensor>>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace tessel
