// safetensors: files written by an independent implementation (tests/goldens/gen_safetensors.py:
// PyTorch tensors with Python's struct and json) read back value for value; Tessel's writer read
// by its reader and byte-checked against the format; every kind of corrupt file is a Format
// error naming what is wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "op_test_util.h"
#include "tessel/safetensors.h"

namespace tessel::testing {
namespace {

const std::string kDir = std::string(TESSEL_SOURCE_DIR) + "/tests/data/safetensors/";

void expect_same_values(const HostTensor& got, const HostTensor& want, const std::string& name) {
  ASSERT_EQ(got.shape, want.shape) << name;
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (is_integer(got.dtype) || got.dtype == DType::Bool)
      EXPECT_EQ(got.get_i64(i), want.get_i64(i)) << name << " element " << i;
    else
      EXPECT_EQ(got.get_f64(i), want.get_f64(i)) << name << " element " << i;
  }
}

void expect_golden_file(const std::string& file) {
  SafetensorsFile f = read_safetensors(kDir + file);
  const nlohmann::json& c = golden_cases_of("safetensors")[0];
  const nlohmann::json& want = c["tensors"];
  // The unaligned file has one more tensor ("flag") than the aligned one.
  size_t expected = file == "unaligned.safetensors" ? want.size() : want.size() - 1;
  ASSERT_EQ(f.tensors.size(), expected) << file;
  for (const auto& [name, t] : f.tensors) {
    ASSERT_TRUE(want.contains(name)) << file << ": unexpected tensor " << name;
    auto dt = dtype_from_name(want[name]["dtype"].get<std::string>());
    std::string st = c["dtypes"][name].get<std::string>();
    if (st == "F16") dt = DType::F16;
    if (st == "BF16") dt = DType::BF16;
    EXPECT_EQ(t.dtype, *dt) << file << ": " << name;
    expect_same_values(t, tensor_from_json(want[name]), file + ": " + name);
  }
}

TEST(Safetensors, ReadsAlignedFileFromIndependentWriter) {
  expect_golden_file("aligned.safetensors");
  SafetensorsFile f = read_safetensors(kDir + "aligned.safetensors");
  EXPECT_EQ(f.metadata.at("format"), "pt");
  EXPECT_EQ(f.metadata.at("written_by"), "tests/goldens/gen_safetensors.py");
  // Aligned tensors are views of the file's bytes, not copies.
  EXPECT_EQ(f.at("weight").storage, f.at("bias").storage);
}

TEST(Safetensors, ReadsUnalignedUnpaddedFile) {
  expect_golden_file("unaligned.safetensors");
  EXPECT_TRUE(read_safetensors(kDir + "unaligned.safetensors").metadata.empty());
}

TEST(Safetensors, ReadsFileWithoutTensors) {
  SafetensorsFile f = read_safetensors(kDir + "empty.safetensors");
  EXPECT_TRUE(f.tensors.empty());
  EXPECT_TRUE(f.metadata.empty());
}

TEST(Safetensors, WriteThenReadRoundTripsEveryDType) {
  std::vector<std::pair<std::string, HostTensor>> tensors;
  for (DType t : {DType::Bool, DType::U8, DType::I8, DType::I16, DType::U16, DType::I32, DType::U32,
                  DType::I64, DType::U64, DType::F16, DType::BF16, DType::F32, DType::F64,
                  DType::F8E4M3FN, DType::F8E5M2, DType::C64}) {
    HostTensor h = HostTensor::empty(t, {2, 3});
    for (int64_t i = 0; i < h.numel(); ++i) {
      if (is_complex(t))
        h.set_c128(i, {0.5 * static_cast<double>(i), -1.0});
      else if (is_float(t))
        h.set_f64(i, 0.25 * static_cast<double>(i) - 0.5);
      else
        h.set_i64(i, t == DType::Bool ? i % 2 : i + 1);
    }
    tensors.emplace_back(std::string("t_") + dtype_name(t), h);
  }
  // A non-contiguous view is written in row-major order.
  HostTensor base = HostTensor::from_vector<float>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  tensors.emplace_back("transposed", base.permuted({1, 0}));
  std::vector<uint8_t> bytes = serialize_safetensors(tensors, {{"step", "7"}});

  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ((8 + n) % 8, 0u) << "the header is padded to a multiple of 8 bytes";
  auto header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<long>(n));
  EXPECT_EQ(header["t_f32"]["dtype"], "F32");
  EXPECT_EQ(header["t_f8_e4m3fn"]["dtype"], "F8_E4M3");
  EXPECT_EQ(header["__metadata__"]["step"], "7");

  SafetensorsFile f = parse_safetensors(bytes, "round trip");
  EXPECT_EQ(f.metadata.at("step"), "7");
  ASSERT_EQ(f.tensors.size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    const HostTensor& got = f.at(name);
    EXPECT_EQ(got.dtype, t.dtype) << name;
    // Every tensor is aligned to its element size, so each is a view of the buffer.
    EXPECT_EQ(got.storage, f.tensors[0].second.storage) << name;
    if (is_complex(t.dtype)) {
      for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(got.get_c128(i), t.get_c128(i)) << name;
    } else {
      expect_same_values(got, t, name);
    }
  }
}

TEST(Safetensors, WriteFileAtomicallyAndReadBack) {
  std::string path = std::string(TESSEL_BINARY_DIR) + "/test_safetensors_write.safetensors";
  HostTensor w = HostTensor::from_vector<float>(DType::F32, {2}, {1.5f, -2});
  write_safetensors(path, {{"w", w}});
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  expect_same_values(read_safetensors(path).at("w"), w, "w");
  std::filesystem::remove(path);
}

TEST(Safetensors, WriterRejectsWhatTheFormatCannotHold) {
  HostTensor x = HostTensor::empty(DType::F32, {1});
  auto kind_of = [](auto&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  EXPECT_EQ(kind_of([&] { serialize_safetensors({{"a", x}, {"a", x}}); }), ErrorKind::Value);
  EXPECT_EQ(kind_of([&] { serialize_safetensors({{"__metadata__", x}}); }), ErrorKind::Value);
  EXPECT_EQ(kind_of([&] {
              serialize_safetensors({{"c", HostTensor::empty(DType::C128, {1})}});
            }),
            ErrorKind::Unsupported);
}

// A file with the given header text (unpadded) and `data` bytes of data.
std::vector<uint8_t> file_with(const std::string& header, size_t data, uint64_t claimed = 0) {
  std::vector<uint8_t> out(8 + header.size() + data, 0);
  uint64_t n = claimed ? claimed : header.size();
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, header.data(), header.size());
  return out;
}

void expect_format_error(const std::vector<uint8_t>& bytes, const std::string& needle) {
  try {
    parse_safetensors(bytes, "bad.safetensors");
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.safetensors"), std::string::npos) << e.what();
  }
}

TEST(Safetensors, CorruptFilesAreFormatErrorsNamingTheProblem) {
  const std::string ok = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  EXPECT_NO_THROW(parse_safetensors(file_with(ok, 8), "ok"));
  expect_format_error({1, 2, 3}, "8-byte header length");
  expect_format_error(file_with(ok, 8, 1ull << 40), "header length");
  expect_format_error(file_with(ok, 8, ok.size() + 100), "only");
  expect_format_error(file_with("[1,2]", 0), "does not start with '{'");
  expect_format_error(file_with("{\"a\":", 0), "not valid JSON");
  expect_format_error(file_with(ok, 4), "cover 8 bytes");
  expect_format_error(file_with(ok, 12), "holds 12");
  expect_format_error(file_with(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8),
                      "needs 12 bytes");
  expect_format_error(file_with(R"({"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})", 8),
                      "dtype 'Q4'");
  expect_format_error(file_with(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8),
                      "shape entry");
  expect_format_error(file_with(R"({"a":{"dtype":"F32","shape":[2]}})", 8), "data_offsets");
  expect_format_error(file_with(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8),
                      "end before");
  expect_format_error(file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                                12),
                      "gap");
  expect_format_error(file_with(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                8),
                      "previous tensor ends");
  expect_format_error(file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                8),
                      "names 'a' twice");
  expect_format_error(file_with(R"({"__metadata__":{"k":3}})", 0), "not a string");
  expect_format_error(file_with(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],)"
                                R"("data_offsets":[0,8]}})",
                                8),
                      "impossibly large");
}

TEST(Safetensors, MissingFileAndMissingTensorAreClearErrors) {
  try {
    read_safetensors(kDir + "no_such_file.safetensors");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    EXPECT_NE(std::string(e.what()).find("no_such_file"), std::string::npos);
  }
  SafetensorsFile f = read_safetensors(kDir + "aligned.safetensors");
  try {
    f.at("absent");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
    EXPECT_NE(std::string(e.what()).find("weight"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessel::testing
