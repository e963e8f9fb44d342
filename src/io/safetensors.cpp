// safetensors reading and writing (format: include/tessel/safetensors.h).
#include "tessel/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

namespace tessel {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; add byte swapping for this target");

namespace {

using nlohmann::json;

// The largest header the reference implementation accepts.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// safetensors dtype names <-> Tessel dtypes. Tessel dtypes without a safetensors name (the
// fnuz fp8s, packed fp4, c128) cannot be written.
struct DTypeName {
  DType dtype;
  const char* name;
};
constexpr DTypeName kDTypeNames[] = {
    {DType::Bool, "BOOL"},      {DType::U8, "U8"},
    {DType::I8, "I8"},          {DType::I16, "I16"},
    {DType::U16, "U16"},        {DType::I32, "I32"},
    {DType::U32, "U32"},        {DType::I64, "I64"},
    {DType::U64, "U64"},        {DType::F16, "F16"},
    {DType::BF16, "BF16"},      {DType::F32, "F32"},
    {DType::F64, "F64"},        {DType::F8E4M3FN, "F8_E4M3"},
    {DType::F8E5M2, "F8_E5M2"}, {DType::F8E8M0FNU, "F8_E8M0"},
    {DType::C64, "C64"},
};

std::optional<DType> dtype_from_safetensors(const std::string& name) {
  for (const DTypeName& d : kDTypeNames)
    if (name == d.name) return d.dtype;
  return std::nullopt;
}

const char* safetensors_dtype_name(DType t, const std::string& tensor) {
  for (const DTypeName& d : kDTypeNames)
    if (d.dtype == t) return d.name;
  throw_error(ErrorKind::Unsupported, "[safetensors] tensor '", tensor, "' has dtype ",
              dtype_name(t), ", which the safetensors format cannot store");
}

template <class... Args>
[[noreturn]] void bad_file(const std::string& what, Args&&... args) {
  throw_error(ErrorKind::Format, "[safetensors] ", what, ": ", std::forward<Args>(args)...);
}

// Parses the header, rejecting duplicate keys in the top-level object (the JSON library would
// otherwise keep the last one silently).
json parse_header(std::string_view text, const std::string& what) {
  std::set<std::string> seen;
  std::string duplicate;
  json::parser_callback_t cb = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1) {
      std::string key = parsed.get<std::string>();
      if (!seen.insert(key).second && duplicate.empty()) duplicate = key;
    }
    return true;
  };
  json header = json::parse(text.begin(), text.end(), cb, /*allow_exceptions=*/false);
  if (header.is_discarded()) bad_file(what, "the header is not valid JSON");
  if (!duplicate.empty()) bad_file(what, "the header names '", duplicate, "' twice");
  if (!header.is_object()) bad_file(what, "the header is not a JSON object");
  return header;
}

int64_t checked_dim(const json& d, const std::string& what, const std::string& name) {
  if (!d.is_number_unsigned())
    bad_file(what, "tensor '", name, "' has shape entry ", d.dump(),
             "; expected a non-negative integer");
  return static_cast<int64_t>(d.get<uint64_t>());
}

struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin, end;
};

Entry parse_entry(const std::string& name, const json& v, const std::string& what) {
  if (!v.is_object()) bad_file(what, "tensor '", name, "' is not a JSON object");
  for (const char* field : {"dtype", "shape", "data_offsets"})
    if (!v.contains(field)) bad_file(what, "tensor '", name, "' has no \"", field, "\"");
  if (!v["dtype"].is_string()) bad_file(what, "tensor '", name, "' has a non-string dtype");
  std::string dt = v["dtype"].get<std::string>();
  std::optional<DType> dtype = dtype_from_safetensors(dt);
  if (!dtype) bad_file(what, "tensor '", name, "' has unknown or unsupported dtype '", dt, "'");
  Entry e{name, *dtype, {}, 0, 0};
  if (!v["shape"].is_array()) bad_file(what, "tensor '", name, "' has a non-array shape");
  uint64_t numel = 1;
  for (const json& d : v["shape"]) {
    e.shape.push_back(checked_dim(d, what, name));
    if (e.shape.back() != 0 && numel > (uint64_t{1} << 62) / static_cast<uint64_t>(e.shape.back()))
      bad_file(what, "tensor '", name, "' has an impossibly large shape");
    numel *= static_cast<uint64_t>(e.shape.back());
  }
  const json& off = v["data_offsets"];
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
      !off[1].is_number_unsigned())
    bad_file(what, "tensor '", name, "' has data_offsets ", off.dump(),
             "; expected [begin, end] with non-negative integers");
  e.begin = off[0].get<uint64_t>();
  e.end = off[1].get<uint64_t>();
  if (e.end < e.begin)
    bad_file(what, "tensor '", name, "' has data_offsets [", e.begin, ", ", e.end,
             "] with end before begin");
  uint64_t expected = numel * static_cast<uint64_t>(dtype_size(e.dtype));
  if (e.end - e.begin != expected)
    bad_file(what, "tensor '", name, "' of dtype ", dt, " and shape ", shape_str(e.shape),
             " needs ", expected, " bytes but data_offsets [", e.begin, ", ", e.end, "] hold ",
             e.end - e.begin);
  return e;
}

// The tensors of a file held in `storage` (the whole file); each tensor is a view into it where
// its bytes are aligned to its element size, else a copy.
SafetensorsFile parse_storage(const std::shared_ptr<Storage>& storage, const std::string& what) {
  const uint8_t* bytes = storage->bytes.get();
  const uint64_t size = storage->size;
  if (size < 8)
    bad_file(what, "the file has ", size, " bytes; it must start with an 8-byte header length");
  uint64_t n = 0;
  std::memcpy(&n, bytes, 8);
  if (n > kMaxHeaderBytes)
    bad_file(what, "the header length is ", n, " bytes; at most ", kMaxHeaderBytes, " are allowed");
  if (n > size - 8)
    bad_file(what, "the header length is ", n, " bytes but only ", size - 8,
             " bytes follow the length");
  if (n == 0 || bytes[8] != '{') bad_file(what, "the header does not start with '{'");
  json header = parse_header({reinterpret_cast<const char*>(bytes + 8), n}, what);

  SafetensorsFile file;
  std::vector<Entry> entries;
  for (auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) bad_file(what, "__metadata__ is not a JSON object");
      for (auto& [mk, mv] : value.items()) {
        if (!mv.is_string()) bad_file(what, "__metadata__ entry '", mk, "' is not a string");
        file.metadata[mk] = mv.get<std::string>();
      }
      continue;
    }
    entries.push_back(parse_entry(key, value, what));
  }
  // The tensors' byte ranges must tile the buffer: sorted by offset, each starts where the
  // previous one ended, and the last ends at the end of the file.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  const uint64_t data_start = 8 + n, buffer = size - data_start;
  uint64_t at = 0;
  for (const Entry& e : entries) {
    if (e.begin != at)
      bad_file(what, "tensor '", e.name, "' starts at byte ", e.begin, " of the data but ",
               e.begin < at ? "the previous tensor ends at " : "there is a gap from ", at);
    at = e.end;
  }
  if (at != buffer)
    bad_file(what, "the tensors cover ", at, " bytes of data but the file holds ", buffer,
             " after the header");

  for (const Entry& e : entries) {
    const uint64_t pos = data_start + e.begin;
    const int esize = dtype_size(e.dtype);
    HostTensor t;
    if (pos % static_cast<uint64_t>(esize) == 0) {
      t.dtype = e.dtype;
      t.shape = e.shape;
      t.strides = contiguous_strides(e.shape);
      t.offset = static_cast<int64_t>(pos / static_cast<uint64_t>(esize));
      t.storage = storage;
    } else {
      t = HostTensor::empty(e.dtype, e.shape);
      if (e.end > e.begin) std::memcpy(t.data(), bytes + pos, e.end - e.begin);
    }
    file.tensors.emplace_back(e.name, std::move(t));
  }
  return file;
}

}  // namespace

bool SafetensorsFile::contains(const std::string& name) const {
  return std::any_of(tensors.begin(), tensors.end(),
                     [&](const auto& t) { return t.first == name; });
}

const HostTensor& SafetensorsFile::at(const std::string& name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return t;
  std::string names;
  for (const auto& t : tensors) names += (names.empty() ? "" : ", ") + t.first;
  throw_error(ErrorKind::Value, "[safetensors] no tensor named '", name, "'; the file has ",
              tensors.size(), " tensors: ", names);
}

SafetensorsFile parse_safetensors(std::span<const uint8_t> bytes, const std::string& what) {
  auto storage = Storage::allocate(bytes.size());
  if (!bytes.empty()) std::memcpy(storage->bytes.get(), bytes.data(), bytes.size());
  return parse_storage(storage, what);
}

SafetensorsFile read_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw_error(ErrorKind::Io, "[safetensors] cannot open '", path, "'");
  const auto size = static_cast<size_t>(in.tellg());
  auto storage = Storage::allocate(size);
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(storage->bytes.get()), static_cast<std::streamsize>(size)))
    throw_error(ErrorKind::Io, "[safetensors] cannot read ", size, " bytes from '", path, "'");
  return parse_storage(storage, path);
}

std::vector<uint8_t> serialize_safetensors(
    const std::vector<std::pair<std::string, HostTensor>>& tensors,
    const std::map<std::string, std::string>& metadata) {
  std::vector<const std::pair<std::string, HostTensor>*> order;
  std::set<std::string> names;
  for (const auto& t : tensors) {
    if (t.first == "__metadata__")
      throw_error(ErrorKind::Value, "[safetensors] '__metadata__' cannot name a tensor");
    if (!names.insert(t.first).second)
      throw_error(ErrorKind::Value, "[safetensors] two tensors are named '", t.first, "'");
    safetensors_dtype_name(t.second.dtype, t.first);  // rejects dtypes the format lacks
    order.push_back(&t);
  }
  // Larger elements first, then by name: with an 8-aligned header every tensor stays aligned.
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    int sa = dtype_size(a->second.dtype), sb = dtype_size(b->second.dtype);
    return sa != sb ? sa > sb : a->first < b->first;
  });
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t at = 0;
  for (const auto* t : order) {
    uint64_t bytes = static_cast<uint64_t>(t->second.numel()) * dtype_size(t->second.dtype);
    header[t->first] = {{"dtype", safetensors_dtype_name(t->second.dtype, t->first)},
                        {"shape", t->second.shape},
                        {"data_offsets", {at, at + bytes}}};
    at += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::vector<uint8_t> out(8 + text.size() + at);
  uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, text.data(), text.size());
  uint8_t* data = out.data() + 8 + text.size();
  for (const auto* t : order) {
    HostTensor c = t->second.contiguous();
    size_t bytes = static_cast<size_t>(c.numel()) * dtype_size(c.dtype);
    if (bytes) std::memcpy(data, c.data(), bytes);
    data += bytes;
  }
  return out;
}

void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, HostTensor>>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::vector<uint8_t> bytes = serialize_safetensors(tensors, metadata);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw_error(ErrorKind::Io, "[safetensors] cannot create '", tmp, "'");
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out)
      throw_error(ErrorKind::Io, "[safetensors] cannot write ", bytes.size(), " bytes to '", tmp,
                  "'");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec)
    throw_error(ErrorKind::Io, "[safetensors] cannot rename '", tmp, "' to '", path,
                "': ", ec.message());
}

}  // namespace tessel
