// .npy reading and writing: round trips of every numpy dtype, Fortran order, big-endian data,
// and a Format error for each kind of damage.
#include <gtest/gtest.h>

#include <cstring>

#include "tessel/npy.h"

namespace tessel::testing {
namespace {

std::vector<uint8_t> npy_bytes(const std::string& header_dict, const std::vector<uint8_t>& data) {
  std::string header = header_dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::vector<uint8_t> out(10 + header.size() + data.size());
  const uint8_t magic[10] = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<uint8_t>(header.size()), 0};
  std::memcpy(out.data(), magic, 10);
  std::memcpy(out.data() + 10, header.data(), header.size());
  if (!data.empty()) std::memcpy(out.data() + 10 + header.size(), data.data(), data.size());
  return out;
}

TEST(Npy, RoundTripsEveryNumpyDType) {
  for (DType dt : {DType::Bool, DType::U8, DType::I8, DType::I16, DType::U16, DType::I32,
                   DType::U32, DType::I64, DType::U64, DType::F16, DType::F32, DType::F64}) {
    HostTensor t = HostTensor::from_vector(dt, {2, 3}, std::vector<int>{1, 0, 1, 1, 0, 1});
    HostTensor back = parse_npy(serialize_npy(t), "roundtrip");
    EXPECT_EQ(back.dtype, dt) << dtype_name(dt);
    EXPECT_EQ(back.shape, t.shape);
    EXPECT_EQ(back.to_f64(), t.to_f64()) << dtype_name(dt);
  }
  HostTensor scalar = HostTensor::from_vector(DType::F32, {}, std::vector<float>{2.5f});
  EXPECT_EQ(parse_npy(serialize_npy(scalar), "scalar").to_f64(), std::vector<double>{2.5});
}

TEST(Npy, ConvertsFortranOrderAndBigEndian) {
  // [[1, 2, 3], [4, 5, 6]] stored column-major: 1 4 2 5 3 6, as big-endian int16.
  std::vector<uint8_t> data;
  for (int v : {1, 4, 2, 5, 3, 6}) data.insert(data.end(), {0, static_cast<uint8_t>(v)});
  HostTensor t =
      parse_npy(npy_bytes("{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }", data), "f");
  EXPECT_EQ(t.shape, (Shape{2, 3}));
  EXPECT_EQ(t.to_f64(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(Npy, DamageIsAFormatErrorNamingTheFault) {
  auto fails = [](const std::vector<uint8_t>& bytes, const std::string& needle) {
    try {
      parse_npy(bytes, "x.npy");
      ADD_FAILURE() << "parsed: " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Format);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  fails({1, 2, 3}, "bad magic");
  fails(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", {0, 0, 0, 0}),
        "needs 16");
  fails(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, "
                  "99999999999), }",
                  {}),
        "overflows");
  fails(npy_bytes("{'descr': '<U8', 'fortran_order': False, 'shape': (1,), }", {}),
        "not a supported numeric dtype");
  fails(npy_bytes("{'descr': '<f4', 'shape': (1,), }", {}), "no 'fortran_order'");
  std::vector<uint8_t> long_header = npy_bytes(
      "{'descr': '<f4', 'fortran_order': False, "
      "'shape': (1,), }",
      {});
  long_header[9] = 0x7f;  // header length past the end
  fails(long_header, "runs past the end");
}

}  // namespace
}  // namespace tessel::testing
