// cpu positional kernels against the reference: Rope (NeoX, GPT-J; full and partial rotary_dim;
// default, integer and float positions), AxialRope2d and ALiBi, over every claimed dtype, odd and
// lane-straddling sizes, threaded sizes, non-contiguous inputs and empty tensors, with cpu in
// checked mode (outputs poisoned, guarded).
#include "op_test_util.h"

namespace tessel::testing {
namespace {

Attrs rope_attrs(RopeStyle style, int64_t rotary_dim, double base = 10000) {
  Attrs a;
  a.set("style", style);
  a.set("rotary_dim", rotary_dim);
  a.set("base", base);
  return a;
}

TEST(CpuPositional, Rope) {
  const std::vector<Shape> shapes = {{1, 2},         {7, 16},          {3, 33, 34},
                                     {2, 3, 17, 64}, {1, 2, 100, 130}, {2, 4, 256, 128},
                                     {5, 8},         {0, 3, 8},        {2, 0, 4}};
  for (DType dt : kFloatDTypes)
    for (const Shape& s : shapes)
      for (RopeStyle style : {RopeStyle::NeoX, RopeStyle::GptJ})
        for (int64_t rotary : {int64_t{0}, s.back() / 2 / 2 * 2}) {
          if (rotary == 0 && s.back() == 0) continue;
          const std::string what = "x" + shape_str(s) + " style " +
                                   std::to_string(static_cast<int>(style)) + " rotary " +
                                   std::to_string(rotary);
          HostTensor x = random_values(dt, s, 71, -2, 2);
          expect_parity_layouts(OpKind::Rope, rope_attrs(style, rotary), {x}, what);
          const int64_t seq = s[s.size() - 2];
          HostTensor pos_i = cast_to(random_tensor(DType::F64, {seq}, 72, 0, 5000), DType::I64);
          expect_parity_layouts(OpKind::Rope, rope_attrs(style, rotary, 500), {x, pos_i},
                                what + " i64 positions");
          HostTensor pos_f = random_values(dt, {seq}, 73, 0, 40);
          expect_parity(OpKind::Rope, rope_attrs(style, rotary), {x, pos_f},
                        what + " float positions");
        }
}

TEST(CpuPositional, AxialRope2d) {
  struct C {
    Shape s;
    int64_t gh, gw;
  };
  const std::vector<C> cases = {{{1, 4}, 1, 1},
                                {{15, 8}, 3, 5},
                                {{2, 16, 64}, 4, 4},
                                {{2, 3, 35, 36}, 7, 5},
                                {{1, 2, 256, 128}, 16, 16},
                                {{0, 6, 8}, 2, 3}};
  for (DType dt : kFloatDTypes)
    for (const C& c : cases) {
      Attrs a;
      a.set("grid_h", c.gh);
      a.set("grid_w", c.gw);
      HostTensor x = random_values(dt, c.s, 81, -2, 2);
      expect_parity_layouts(OpKind::AxialRope2d, a, {x}, "x" + shape_str(c.s));
      a.set("base", 100.0);
      expect_parity(OpKind::AxialRope2d, a, {x}, "x" + shape_str(c.s) + " base 100");
    }
}

TEST(CpuPositional, ALiBi) {
  const std::vector<Shape> shapes = {
      {1, 1, 1, 1},   {1, 3, 5, 5},     {2, 8, 17, 17},  {1, 12, 4, 33}, {1, 5, 9, 3},
      {2, 4, 63, 65}, {1, 16, 8, 1000}, {1, 6, 2, 2049}, {0, 4, 3, 3},   {1, 2, 3, 0}};
  for (DType dt : kFloatDTypes)
    for (const Shape& s : shapes)
      for (double max_bias : {8.0, 0.0, 3.5}) {
        Attrs a;
        a.set("max_bias", max_bias);
        const std::string what = "scores" + shape_str(s) + " max_bias " + std::to_string(max_bias);
        HostTensor x = random_values(dt, s, 91, -3, 3);
        expect_parity_layouts(OpKind::ALiBi, a, {x}, what);
        expect_parity(OpKind::ALiBi, a, {broadcast_view(random_values(dt, {s[3]}, 92), s)},
                      what + " broadcast");
      }
}

}  // namespace
}  // namespace tessel::testing
