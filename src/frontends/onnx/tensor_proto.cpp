#include "frontends/onnx/tensor_proto.h"

#include <filesystem>
#include <fstream>
#include <limits>

#include "tessel/tensor.h"

namespace tessel::onnx {

namespace {

using TP = pb::TensorProto;

struct OnnxDType {
  int code;
  std::optional<DType> dtype;
  const char* name;
};

// TensorProto.DataType codes (onnx.proto); 17–20 are the float8 types of IR version 9.
constexpr OnnxDType kTypes[] = {
    {TP::FLOAT, DType::F32, "float"},
    {TP::UINT8, DType::U8, "uint8"},
    {TP::INT8, DType::I8, "int8"},
    {TP::UINT16, DType::U16, "uint16"},
    {TP::INT16, DType::I16, "int16"},
    {TP::INT32, DType::I32, "int32"},
    {TP::INT64, DType::I64, "int64"},
    {TP::STRING, std::nullopt, "string"},
    {TP::BOOL, DType::Bool, "bool"},
    {TP::FLOAT16, DType::F16, "float16"},
    {TP::DOUBLE, DType::F64, "double"},
    {TP::UINT32, DType::U32, "uint32"},
    {TP::UINT64, DType::U64, "uint64"},
    {TP::COMPLEX64, DType::C64, "complex64"},
    {TP::COMPLEX128, DType::C128, "complex128"},
    {TP::BFLOAT16, DType::BF16, "bfloat16"},
    {17, DType::F8E4M3FN, "float8e4m3fn"},
    {18, DType::F8E4M3FNUZ, "float8e4m3fnuz"},
    {19, DType::F8E5M2, "float8e5m2"},
    {20, DType::F8E5M2FNUZ, "float8e5m2fnuz"},
};

const OnnxDType* find_type(int code) {
  for (const auto& t : kTypes)
    if (t.code == code) return &t;
  return nullptr;
}

// The bytes of an external-data tensor, read from a file beside the model.
std::string read_external(const TP& t, const std::string& base_dir, const std::string& what) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      int64_t v = 0;
      try {
        size_t used = 0;
        v = std::stoll(kv.value(), &used);
        if (used != kv.value().size() || v < 0) throw std::invalid_argument("");
      } catch (const std::exception&) {
        throw_error(ErrorKind::Format, "[onnx] ", what, ": external_data ", kv.key(), " '",
                    kv.value(), "' is not a non-negative integer");
      }
      (kv.key() == "offset" ? offset : length) = v;
    }
  }
  if (location.empty())
    throw_error(ErrorKind::Format, "[onnx] ", what,
                ": data_location is EXTERNAL but external_data has no 'location'");
  std::filesystem::path rel(location);
  for (const auto& part : rel)
    if (part == "..")
      throw_error(ErrorKind::Format, "[onnx] ", what, ": external data location '", location,
                  "' leaves the model's directory");
  if (rel.is_absolute())
    throw_error(ErrorKind::Format, "[onnx] ", what, ": external data location '", location,
                "' is absolute; it must be relative to the model's directory");
  std::filesystem::path path = std::filesystem::path(base_dir) / rel;
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f)
    throw_error(ErrorKind::Io, "[onnx] ", what, ": cannot open external data file '", path.string(),
                "'");
  const int64_t size = static_cast<int64_t>(f.tellg());
  if (offset > size || (length >= 0 && length > size - offset))
    throw_error(ErrorKind::Format, "[onnx] ", what, ": external data [", offset, ", ",
                length >= 0 ? offset + length : size, ") lies outside '", path.string(), "' of ",
                size, " bytes");
  if (length < 0) length = size - offset;
  std::string bytes(static_cast<size_t>(length), '\0');
  f.seekg(offset);
  f.read(bytes.data(), length);
  if (!f) throw_error(ErrorKind::Io, "[onnx] ", what, ": reading '", path.string(), "' failed");
  return bytes;
}

template <class Field>
void check_count(const Field& field, int64_t want, const char* name, const std::string& what) {
  if (static_cast<int64_t>(field.size()) != want)
    throw_error(ErrorKind::Format, "[onnx] ", what, ": ", name, " holds ", field.size(),
                " values; the dims need ", want);
}

}  // namespace

std::optional<DType> dtype_from_onnx(int elem_type) {
  const OnnxDType* t = find_type(elem_type);
  return t ? t->dtype : std::nullopt;
}

int onnx_from_dtype(DType dtype) {
  for (const auto& t : kTypes)
    if (t.dtype == dtype) return t.code;
  throw_error(ErrorKind::Unsupported, "[onnx] dtype ", dtype_name(dtype),
              " has no ONNX element type");
}

std::string onnx_type_name(int elem_type) {
  const OnnxDType* t = find_type(elem_type);
  return t ? t->name : "<type " + std::to_string(elem_type) + ">";
}

Shape checked_dims(const TP& t, const std::string& what) {
  Shape shape;
  int64_t numel = 1;
  for (int64_t d : t.dims()) {
    if (d < 0)
      throw_error(ErrorKind::Format, "[onnx] ", what, ": negative dimension ", d, " in dims");
    if (d > 0 && numel > std::numeric_limits<int64_t>::max() / d)
      throw_error(ErrorKind::Format, "[onnx] ", what, ": dims overflow 64 bits");
    numel *= d;
    shape.push_back(d);
  }
  return shape;
}

HostTensor host_tensor_from_proto(const TP& t, const std::string& base_dir,
                                  const std::string& what) {
  const OnnxDType* type = find_type(t.data_type());
  if (!type) throw_error(ErrorKind::Format, "[onnx] ", what, ": unknown data_type ", t.data_type());
  if (!type->dtype)
    throw_error(ErrorKind::DType, "[onnx] ", what, ": ", type->name,
                " tensors are not numeric (use value_from_tensor_proto)");
  if (t.has_segment())
    throw_error(ErrorKind::Unsupported, "[onnx] ", what, ": segmented tensors are not supported");
  const DType dtype = *type->dtype;
  const Shape shape = checked_dims(t, what);
  const int64_t n = shape_numel(shape);
  const size_t elem = dtype_size(dtype);

  const bool external = t.data_location() == TP::EXTERNAL;
  if (external || t.has_raw_data()) {
    std::string ext;
    const std::string& raw = external ? (ext = read_external(t, base_dir, what)) : t.raw_data();
    if (n > static_cast<int64_t>(raw.size() / elem) || raw.size() != static_cast<size_t>(n) * elem)
      throw_error(ErrorKind::Format, "[onnx] ", what, ": ", external ? "external data" : "raw_data",
                  " has ", raw.size(), " bytes; ", type->name, shape_str(shape), " needs ",
                  static_cast<unsigned long long>(n) * elem);
    HostTensor h = HostTensor::empty(dtype, shape);
    if (!raw.empty()) std::memcpy(h.data(), raw.data(), raw.size());
    return h;
  }

  // Typed fields: check the count before allocating anything.
  const int64_t lanes = is_complex(dtype) ? 2 : 1;
  switch (dtype) {
    case DType::F32:
    case DType::C64:
      check_count(t.float_data(), n * lanes, "float_data", what);
      break;
    case DType::F64:
    case DType::C128:
      check_count(t.double_data(), n * lanes, "double_data", what);
      break;
    case DType::I64:
      check_count(t.int64_data(), n, "int64_data", what);
      break;
    case DType::U32:
    case DType::U64:
      check_count(t.uint64_data(), n, "uint64_data", what);
      break;
    default:
      check_count(t.int32_data(), n, "int32_data", what);
      break;
  }
  HostTensor h = HostTensor::empty(dtype, shape);
  uint8_t* out = h.data();
  for (int64_t i = 0; i < n * lanes; ++i) {
    switch (dtype) {
      case DType::F32:
      case DType::C64: {
        float v = t.float_data(static_cast<int>(i));
        std::memcpy(out + i * 4, &v, 4);
        break;
      }
      case DType::F64:
      case DType::C128: {
        double v = t.double_data(static_cast<int>(i));
        std::memcpy(out + i * 8, &v, 8);
        break;
      }
      case DType::I64:
        h.set_i64(i, t.int64_data(static_cast<int>(i)));
        break;
      case DType::U32: {
        uint32_t v = static_cast<uint32_t>(t.uint64_data(static_cast<int>(i)));
        std::memcpy(out + i * 4, &v, 4);
        break;
      }
      case DType::U64: {
        uint64_t v = t.uint64_data(static_cast<int>(i));
        std::memcpy(out + i * 8, &v, 8);
        break;
      }
      case DType::F16:
      case DType::BF16: {
        // The bits of each 16-bit float, in the low half of an int32.
        uint16_t v = static_cast<uint16_t>(t.int32_data(static_cast<int>(i)));
        std::memcpy(out + i * 2, &v, 2);
        break;
      }
      case DType::F8E4M3FN:
      case DType::F8E4M3FNUZ:
      case DType::F8E5M2:
      case DType::F8E5M2FNUZ:
        out[i] = static_cast<uint8_t>(t.int32_data(static_cast<int>(i)));
        break;
      default:
        h.set_i64(i, t.int32_data(static_cast<int>(i)));
        break;
    }
  }
  return h;
}

HostTensor host_tensor_from_sparse_proto(const pb::SparseTensorProto& s,
                                         const std::string& base_dir, const std::string& what) {
  pb::TensorProto dims_only;
  for (int64_t d : s.dims()) dims_only.add_dims(d);
  const Shape shape = checked_dims(dims_only, what);
  HostTensor values = host_tensor_from_proto(s.values(), base_dir, what + " values");
  HostTensor indices = host_tensor_from_proto(s.indices(), base_dir, what + " indices");
  const int64_t nnz = values.numel();
  if (values.rank() != 1)
    throw_error(ErrorKind::Format, "[onnx] ", what, ": values must be 1-D, not ",
                shape_str(values.shape));
  const int64_t rank = static_cast<int64_t>(shape.size());
  const bool linear = indices.rank() == 1;
  if (indices.dtype != DType::I64 ||
      !(linear ? indices.shape == Shape{nnz} : indices.shape == Shape{nnz, rank}))
    throw_error(ErrorKind::Format, "[onnx] ", what, ": indices must be int64 [", nnz, "] or [", nnz,
                ",", rank, "], not ", dtype_name(indices.dtype), shape_str(indices.shape));
  HostTensor dense = HostTensor::empty(values.dtype, shape);
  const int64_t n = dense.numel();
  const size_t elem = dtype_size(values.dtype);
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t at = 0;
    if (linear) {
      at = indices.get_i64(k);
    } else {
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t i = indices.get_i64(k * rank + d);
        if (i < 0 || i >= shape[d]) {
          at = -1;
          break;
        }
        at = at * shape[d] + i;
      }
    }
    if (at < 0 || at >= n)
      throw_error(ErrorKind::Format, "[onnx] ", what, ": index of value ", k, " lies outside dims ",
                  shape_str(shape));
    std::memcpy(dense.data() + at * elem, values.data() + k * elem, elem);
  }
  return dense;
}

Value value_from_tensor_proto(const TP& t, const std::string& base_dir, const std::string& what,
                              const std::string& device) {
  if (t.data_type() != TP::STRING)
    return Value(Tensor(host_tensor_from_proto(t, base_dir, what), device));
  Shape shape = checked_dims(t, what);
  check_count(t.string_data(), shape_numel(shape), "string_data", what);
  return Value::string_tensor(
      std::move(shape), std::vector<std::string>(t.string_data().begin(), t.string_data().end()));
}

Value value_from_sequence_proto(const pb::SequenceProto& s, const std::string& base_dir,
                                const std::string& what, const std::string& device) {
  std::vector<Value> elems;
  std::optional<DType> elem;
  if (s.elem_type() == pb::SequenceProto::TENSOR) {
    for (int i = 0; i < s.tensor_values_size(); ++i)
      elems.push_back(value_from_tensor_proto(s.tensor_values(i), base_dir,
                                              what + " element " + std::to_string(i), device));
  } else if (s.elem_type() == pb::SequenceProto::SEQUENCE) {
    for (int i = 0; i < s.sequence_values_size(); ++i)
      elems.push_back(value_from_sequence_proto(s.sequence_values(i), base_dir,
                                                what + " element " + std::to_string(i), device));
  } else if (s.elem_type() == pb::SequenceProto::OPTIONAL) {
    for (int i = 0; i < s.optional_values_size(); ++i)
      elems.push_back(value_from_optional_proto(s.optional_values(i), base_dir,
                                                what + " element " + std::to_string(i), device));
  } else if (s.elem_type() != pb::SequenceProto::UNDEFINED) {
    throw_error(ErrorKind::Unsupported, "[onnx] ", what, ": sequence elem_type ", s.elem_type(),
                " is not supported");
  }
  if (!elems.empty() && elems[0].is_tensor()) elem = elems[0].tensor.dtype();
  return Value::sequence(std::move(elems), elem);
}

Value value_from_optional_proto(const pb::OptionalProto& o, const std::string& base_dir,
                                const std::string& what, const std::string& device) {
  switch (o.elem_type()) {
    case pb::OptionalProto::UNDEFINED:
      return Value::optional(std::nullopt);
    case pb::OptionalProto::TENSOR:
      if (!o.has_tensor_value()) return Value::optional(std::nullopt);
      return Value::optional(value_from_tensor_proto(o.tensor_value(), base_dir, what, device));
    case pb::OptionalProto::SEQUENCE:
      if (!o.has_sequence_value()) return Value::optional(std::nullopt);
      return Value::optional(value_from_sequence_proto(o.sequence_value(), base_dir, what, device));
    default:
      throw_error(ErrorKind::Unsupported, "[onnx] ", what, ": optional elem_type ", o.elem_type(),
                  " is not supported");
  }
}

std::string type_proto_str(const pb::TypeProto& t) {
  switch (t.value_case()) {
    case pb::TypeProto::kTensorType:
      return "tensor(" + onnx_type_name(t.tensor_type().elem_type()) + ")";
    case pb::TypeProto::kSequenceType:
      return "seq(" + type_proto_str(t.sequence_type().elem_type()) + ")";
    case pb::TypeProto::kOptionalType:
      return "optional(" + type_proto_str(t.optional_type().elem_type()) + ")";
    case pb::TypeProto::kMapType:
      return "map";
    case pb::TypeProto::kSparseTensorType:
      return "sparse_tensor";
    default:
      return "undefined";
  }
}

}  // namespace tessel::onnx
