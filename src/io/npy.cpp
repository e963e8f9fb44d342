// .npy reading and writing (format: include/tessel/npy.h).
#include "tessel/npy.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>

namespace tessel {

static_assert(std::endian::native == std::endian::little,
              "npy data is converted to little-endian; add byte swapping for this target");

namespace {

struct NpyType {
  char kind;  // numpy's kind code: b i u f c
  int bytes;
  DType dtype;
};
constexpr NpyType kTypes[] = {
    {'b', 1, DType::Bool}, {'u', 1, DType::U8},    {'i', 1, DType::I8},  {'i', 2, DType::I16},
    {'u', 2, DType::U16},  {'i', 4, DType::I32},   {'u', 4, DType::U32}, {'i', 8, DType::I64},
    {'u', 8, DType::U64},  {'f', 2, DType::F16},   {'f', 4, DType::F32}, {'f', 8, DType::F64},
    {'c', 8, DType::C64},  {'c', 16, DType::C128},
};

[[noreturn]] void bad(const std::string& what, const std::string& why) {
  throw_error(ErrorKind::Format, "[npy] ", what, ": ", why);
}

// The value of key `key` in the header dict, as raw text up to the next top-level comma.
std::string dict_value(const std::string& header, const std::string& key, const std::string& what) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) bad(what, "header has no '" + key + "' key: " + header);
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) bad(what, "header key '" + key + "' has no value");
  size_t i = colon + 1;
  while (i < header.size() && header[i] == ' ') ++i;
  size_t end = i;
  if (i < header.size() && header[i] == '(') {
    end = header.find(')', i);
    if (end == std::string::npos) bad(what, "unterminated shape tuple");
    ++end;
  } else {
    while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  }
  return header.substr(i, end - i);
}

Shape parse_shape(const std::string& tuple, const std::string& what) {
  Shape shape;
  int64_t numel = 1;
  size_t i = 1;  // past '('
  while (i < tuple.size()) {
    while (i < tuple.size() && (tuple[i] == ' ' || tuple[i] == ',')) ++i;
    if (i >= tuple.size() || tuple[i] == ')') break;
    if (!std::isdigit(static_cast<unsigned char>(tuple[i])))
      bad(what, "shape " + tuple + " is not a tuple of non-negative integers");
    int64_t d = 0;
    while (i < tuple.size() && std::isdigit(static_cast<unsigned char>(tuple[i]))) {
      if (d > (std::numeric_limits<int64_t>::max() - 9) / 10)
        bad(what, "shape " + tuple + " overflows");
      d = d * 10 + (tuple[i++] - '0');
    }
    if (d > 0 && numel > std::numeric_limits<int64_t>::max() / d)
      bad(what, "shape " + tuple + " overflows 64 bits");
    numel *= d;
    shape.push_back(d);
  }
  return shape;
}

}  // namespace

HostTensor parse_npy(std::span<const uint8_t> bytes, const std::string& what) {
  static const uint8_t kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    bad(what, "not a .npy file (bad magic)");
  const int major = bytes[6];
  size_t header_len, start;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) bad(what, "truncated header");
    header_len = bytes[8] | (bytes[9] << 8) | (size_t(bytes[10]) << 16) | (size_t(bytes[11]) << 24);
    start = 12;
  } else {
    bad(what, "unknown format version " + std::to_string(major));
  }
  if (header_len > bytes.size() - start)
    bad(what, "header of " + std::to_string(header_len) + " bytes runs past the end of the file");
  const std::string header(reinterpret_cast<const char*>(bytes.data() + start), header_len);
  std::string descr = dict_value(header, "descr", what);
  const std::string fortran = dict_value(header, "fortran_order", what);
  const Shape shape = parse_shape(dict_value(header, "shape", what), what);
  if (descr.size() < 4 || (descr.front() != '\'' && descr.front() != '"'))
    bad(what, "descr " + descr + " is not a simple dtype string");
  descr = descr.substr(1, descr.size() - 2);  // '<f4' -> <f4
  const char order = descr[0];
  const char kind = descr[1];
  int width = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(descr[i])) || width > 64)
      bad(what, "descr '" + descr + "' is not supported");
    width = width * 10 + (descr[i] - '0');
  }
  std::optional<DType> dtype;
  for (const NpyType& t : kTypes)
    if (t.kind == kind && t.bytes == width) dtype = t.dtype;
  if (!dtype || (order != '<' && order != '>' && order != '|' && order != '='))
    bad(what, "descr '" + descr + "' is not a supported numeric dtype");
  if (fortran != "False" && fortran != "True") bad(what, "fortran_order is '" + fortran + "'");

  const size_t elem = dtype_size(*dtype);
  const int64_t n = shape_numel(shape);
  const size_t available = bytes.size() - start - header_len;
  if (static_cast<uint64_t>(n) > available / elem)
    bad(what, "data holds " + std::to_string(available) + " bytes; shape " + shape_str(shape) +
                  " of " + descr + " needs " + std::to_string(static_cast<uint64_t>(n) * elem));
  HostTensor t;
  if (fortran == "True") {
    // Column-major: read as the reversed shape, then view it transposed.
    Shape reversed(shape.rbegin(), shape.rend());
    t = HostTensor::empty(*dtype, reversed);
  } else {
    t = HostTensor::empty(*dtype, shape);
  }
  std::memcpy(t.data(), bytes.data() + start + header_len, static_cast<size_t>(n) * elem);
  if (order == '>' && elem > 1) {
    // Byte-swap each scalar (complex numbers: each of the two parts).
    const size_t part = is_complex(*dtype) ? elem / 2 : elem;
    uint8_t* p = t.data();
    for (size_t i = 0; i < static_cast<size_t>(n) * elem; i += part)
      std::reverse(p + i, p + i + part);
  }
  if (fortran == "True" && shape.size() > 1) {
    std::vector<int> perm(shape.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int>(perm.size() - 1 - i);
    t = t.permuted(perm).contiguous();
  }
  return t;
}

HostTensor read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw_error(ErrorKind::Io, "[npy] cannot open '", path, "'");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return parse_npy(bytes, "'" + path + "'");
}

std::vector<uint8_t> serialize_npy(const HostTensor& t) {
  std::optional<NpyType> type;
  for (const NpyType& k : kTypes)
    if (k.dtype == t.dtype) type = k;
  if (!type)
    throw_error(ErrorKind::Unsupported, "[npy] dtype ", dtype_name(t.dtype),
                " has no numpy equivalent");
  std::string header = "{'descr': '";
  header += type->bytes == 1 ? '|' : '<';
  header += type->kind + std::to_string(type->bytes) + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.shape.size(); ++i)
    header += std::to_string(t.shape[i]) + (t.shape.size() == 1      ? ","
                                            : i + 1 < t.shape.size() ? ", "
                                                                     : "");
  header += "), }";
  // Pad with spaces and a newline so that the data starts on a 64-byte boundary.
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  HostTensor c = t.contiguous();
  const size_t data = static_cast<size_t>(c.numel()) * dtype_size(c.dtype);
  std::vector<uint8_t> out(10 + header.size() + data);
  const uint8_t magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  std::memcpy(out.data(), magic, 8);
  out[8] = static_cast<uint8_t>(header.size() & 0xff);
  out[9] = static_cast<uint8_t>(header.size() >> 8);
  std::memcpy(out.data() + 10, header.data(), header.size());
  if (data) std::memcpy(out.data() + 10 + header.size(), c.data(), data);
  return out;
}

void write_npy(const std::string& path, const HostTensor& t) {
  std::vector<uint8_t> bytes = serialize_npy(t);
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw_error(ErrorKind::Io, "[npy] cannot write '", path, "'");
}

}  // namespace tessel
