// cpu random kinds against the reference: the same Philox bits, so every value must be
// identical (tolerance 0) in every float dtype, for scalar, lane-straddling, threaded and empty
// shapes, several seeds and parameters; Dropout also on strided and broadcast inputs.
#include "op_test_util.h"

namespace tessel::testing {
namespace {

const std::vector<Shape> kShapes = {{},    {1},   {15},      {17},    {33, 3}, {63},  {65},
                                    {127}, {129}, {3, 1000}, {70001}, {0},     {4, 0}};

void expect_identical(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& in,
                      const std::string& what) {
  HostTensor want = run_op1(kind, attrs, in, "reference");
  HostTensor got = run_op1(kind, attrs, in, "cpu");
  EXPECT_EQ(got.dtype, want.dtype) << what;
  expect_close(got, want, 0, 0, what);
}

std::string name(OpKind k, DType dt, const Shape& s, int64_t seed) {
  return std::string(op_name(k)) + " " + dtype_name(dt) + " " + shape_str(s) + " seed " +
         std::to_string(seed);
}

TEST(CpuRandom, UniformAndNormalBitIdentical) {
  for (DType dt : kFloatDTypes)
    for (const Shape& s : kShapes)
      for (int64_t seed : {int64_t{0}, int64_t{42}, int64_t{-7}, int64_t{1} << 40}) {
        std::vector<int64_t> shape(s.begin(), s.end());
        expect_identical(OpKind::RngUniform,
                         Attrs()
                             .set("shape", shape)
                             .set("dtype", dt)
                             .set("seed", seed)
                             .set("low", -2.5)
                             .set("high", 3.3),
                         {}, name(OpKind::RngUniform, dt, s, seed));
        expect_identical(OpKind::RngNormal,
                         Attrs()
                             .set("shape", shape)
                             .set("dtype", dt)
                             .set("seed", seed)
                             .set("mean", 0.7)
                             .set("std", 1.9),
                         {}, name(OpKind::RngNormal, dt, s, seed));
      }
}

TEST(CpuRandom, DefaultsBitIdentical) {
  for (DType dt : kFloatDTypes) {
    Attrs a = Attrs().set("shape", std::vector<int64_t>{257, 33}).set("dtype", dt);
    expect_identical(OpKind::RngUniform, a, {}, name(OpKind::RngUniform, dt, {257, 33}, 0));
    expect_identical(OpKind::RngNormal, a, {}, name(OpKind::RngNormal, dt, {257, 33}, 0));
  }
}

TEST(CpuRandom, DropoutBitIdentical) {
  for (DType dt : kFloatDTypes)
    for (const Shape& s : kShapes)
      for (double p : {0.0, 0.3, 0.5, 0.9}) {
        HostTensor x = cast_to(random_tensor(DType::F64, s, 3, -100, 100), dt);
        Attrs a = Attrs().set("p", p).set("seed", int64_t{11});
        std::string w = name(OpKind::Dropout, dt, s, 11) + " p " + std::to_string(p);
        expect_identical(OpKind::Dropout, a, {x}, w);
        expect_identical(OpKind::Dropout, a, {non_contiguous(x)}, w + " (non-contiguous)");
      }
  HostTensor row = random_tensor(DType::F32, {1, 129}, 5);
  expect_identical(OpKind::Dropout, Attrs().set("p", 0.25), {broadcast_view(row, {65, 129})},
                   "Dropout broadcast");
}

}  // namespace
}  // namespace tessel::testing
