// cpu positional kernels against the reference: Rope (NeoX, GPT-J; full and partial rotary_dim;
// default, integer and float positions), AxialRope2d and ALiBi, over every claimed dtype, odd and
// lane-straddling sizes, threaded sizes, non-contiguous inputs and empty tensors, with cpu in
// checked mode (outputs poisoned, guarded).
#include "op_test_util.h"

namespace tessel::testing {
namespace {

const DType kDTypes[] = {DType::F32,  DType::F64,      DType::F16,
                         DType::BF16, DType::F8E4M3FN, DType::F8E5M2};

// Within about one rounding of the dtype at the outputs' magnitude (a few units).
std::pair<double, double> tolerance(DType dt) {
  switch (dt) {
    case DType::F32:
      return {2e-5, 2e-5};
    case DType::F64:
      return {1e-10, 1e-10};
    case DType::F16:
      return {2e-3, 4e-3};
    case DType::BF16:
      return {1.6e-2, 3e-2};
    case DType::F8E4M3FN:
      return {0.13, 0.05};
    case DType::F8E5M2:
      return {0.26, 0.1};
    default:
      return {0, 0};
  }
}

std::vector<HostTensor> run_checked(OpKind kind, const Attrs& attrs,
                                    const std::vector<HostTensor>& inputs,
                                    const std::string& backend_name) {
  Graph g;
  std::vector<Value> ins;
  std::vector<HostTensor> args;
  for (const HostTensor& t : inputs) {
    if (!t.storage) {
      ins.push_back(Value{});
      continue;
    }
    ins.push_back(g.input(t.dtype, t.shape));
    args.push_back(t);
  }
  g.outputs = g.add(kind, attrs, ins);
  return compile_for(g, backend(backend_name), {.checked = true})->run(args);
}

// Every output of cpu against the reference.
void expect_parity(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& inputs,
                   const std::string& what) {
  const DType dt = inputs[0].dtype;
  auto [rtol, atol] = tolerance(dt);
  std::vector<HostTensor> ref = run_op(kind, attrs, inputs, "reference");
  std::vector<HostTensor> cpu = run_checked(kind, attrs, inputs, "cpu");
  ASSERT_EQ(ref.size(), cpu.size()) << what;
  for (size_t i = 0; i < ref.size(); ++i) {
    EXPECT_EQ(cpu[i].dtype, dt) << what;
    expect_close(cpu[i], ref[i], rtol, atol,
                 std::string(op_name(kind)) + " " + what + " " + dtype_name(dt) + " output " +
                     std::to_string(i));
  }
}

HostTensor rnd(const Shape& s, uint64_t seed, DType dt, double lo = -1, double hi = 1) {
  return cast_to(random_tensor(DType::F64, s, seed, lo, hi), dt);
}

std::vector<HostTensor> non_contiguous_all(const std::vector<HostTensor>& v) {
  std::vector<HostTensor> r;
  for (const HostTensor& t : v) r.push_back(non_contiguous(t));
  return r;
}

// Runs `inputs` as given and with every input non-contiguous.
void expect_parity_layouts(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& inputs,
                           const std::string& what) {
  expect_parity(kind, attrs, inputs, what);
  expect_parity(kind, attrs, non_contiguous_all(inputs), what + " non-contiguous");
}

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
  for (DType dt : kDTypes)
    for (const Shape& s : shapes)
      for (RopeStyle style : {RopeStyle::NeoX, RopeStyle::GptJ})
        for (int64_t rotary : {int64_t{0}, s.back() / 2 / 2 * 2}) {
          if (rotary == 0 && s.back() == 0) continue;
          const std::string what = "x" + shape_str(s) + " style " +
                                   std::to_string(static_cast<int>(style)) + " rotary " +
                                   std::to_string(rotary);
          HostTensor x = rnd(s, 71, dt, -2, 2);
          expect_parity_layouts(OpKind::Rope, rope_attrs(style, rotary), {x}, what);
          const int64_t seq = s[s.size() - 2];
          HostTensor pos_i = cast_to(random_tensor(DType::F64, {seq}, 72, 0, 5000), DType::I64);
          expect_parity_layouts(OpKind::Rope, rope_attrs(style, rotary, 500), {x, pos_i},
                                what + " i64 positions");
          HostTensor pos_f = rnd({seq}, 73, dt, 0, 40);
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
  for (DType dt : kDTypes)
    for (const C& c : cases) {
      Attrs a;
      a.set("grid_h", c.gh);
      a.set("grid_w", c.gw);
      HostTensor x = rnd(c.s, 81, dt, -2, 2);
      expect_parity_layouts(OpKind::AxialRope2d, a, {x}, "x" + shape_str(c.s));
      a.set("base", 100.0);
      expect_parity(OpKind::AxialRope2d, a, {x}, "x" + shape_str(c.s) + " base 100");
    }
}

TEST(CpuPositional, ALiBi) {
  const std::vector<Shape> shapes = {
      {1, 1, 1, 1},   {1, 3, 5, 5},     {2, 8, 17, 17},  {1, 12, 4, 33}, {1, 5, 9, 3},
      {2, 4, 63, 65}, {1, 16, 8, 1000}, {1, 6, 2, 2049}, {0, 4, 3, 3},   {1, 2, 3, 0}};
  for (DType dt : kDTypes)
    for (const Shape& s : shapes)
      for (double max_bias : {8.0, 0.0, 3.5}) {
        Attrs a;
        a.set("max_bias", max_bias);
        const std::string what = "scores" + shape_str(s) + " max_bias " + std::to_string(max_bias);
        HostTensor x = rnd(s, 91, dt, -3, 3);
        expect_parity_layouts(OpKind::ALiBi, a, {x}, what);
        expect_parity(OpKind::ALiBi, a, {broadcast_view(rnd({s[3]}, 92, dt), s)},
                      what + " broadcast");
      }
}

}  // namespace
}  // namespace tessel::testing
