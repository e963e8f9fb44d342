// cpu normalization kernels against the reference: LayerNorm, RmsNorm, GroupNorm, LayerNorm2d,
// BatchNormInference and the fused norms (FusedResidualLN / RmsNorm, AdaLayerNorm,
// GatedResidual), over every claimed dtype, odd and lane-straddling sizes, threaded sizes,
// broadcast and non-contiguous inputs and empty tensors. cpu runs in checked mode (outputs
// poisoned, guarded), so an unwritten element or a stray write fails.
#include <algorithm>
#include <cmath>
#include <limits>

#include "op_test_util.h"

namespace tessel::testing {
namespace {

Attrs axis_attrs(int64_t axis) {
  Attrs a;
  a.set("axis", axis);
  return a;
}

const std::vector<Shape> kRowShapes = {{1},       {7},       {3, 15},     {2, 17}, {4, 33},
                                       {2, 63},   {3, 65},   {2, 3, 127}, {129},   {5, 1000},
                                       {2, 2049}, {64, 512}, {3, 5, 16}};

void trailing_norm_cases(OpKind kind, bool has_beta) {
  for (DType dt : kFloatDTypes)
    for (const Shape& s : kRowShapes)
      for (int64_t axis : {int64_t{-1}, int64_t{0}}) {
        if (axis == 0 && s.size() < 2) continue;
        const Shape tail(s.begin() + (axis < 0 ? s.size() - 1 : 0), s.end());
        const std::string what = "x" + shape_str(s) + " axis " + std::to_string(axis);
        HostTensor x = random_values(dt, s, 1, -2, 3);
        HostTensor g = random_values(dt, tail, 2, 0.5, 1.5), b = random_values(dt, tail, 3);
        std::vector<HostTensor> none = {x}, gamma = {x, g};
        expect_parity_layouts(kind, axis_attrs(axis), none, what);
        expect_parity_layouts(kind, axis_attrs(axis), gamma, what + " gamma");
        if (has_beta) {
          expect_parity_layouts(kind, axis_attrs(axis), {x, g, b}, what + " gamma beta");
          expect_parity(kind, axis_attrs(axis), {x, HostTensor{}, b}, what + " beta");
        }
      }
}

TEST(CpuNormalization, LayerNorm) { trailing_norm_cases(OpKind::LayerNorm, true); }
TEST(CpuNormalization, RmsNorm) { trailing_norm_cases(OpKind::RmsNorm, false); }

TEST(CpuNormalization, TrailingNormBroadcastAndLargeMean) {
  for (DType dt : {DType::F32, DType::F64, DType::F16}) {
    // x broadcast along rows; gamma / beta broadcast inside the normalized tail.
    HostTensor row = random_values(dt, {1, 37}, 4);
    HostTensor xb = broadcast_view(row, {9, 37});
    HostTensor g = broadcast_view(random_values(dt, {1}, 5, 0.5, 1.5), {37});
    expect_parity(OpKind::LayerNorm, axis_attrs(-1), {xb, g, random_values(dt, {37}, 6)},
                  "broadcast x");
    expect_parity(OpKind::RmsNorm, axis_attrs(-1), {xb, g}, "broadcast x");
    HostTensor x3 = random_values(dt, {2, 3, 40}, 7);
    expect_parity(OpKind::LayerNorm, axis_attrs(1),
                  {x3, broadcast_view(random_values(dt, {40}, 8), {3, 40}), HostTensor{}},
                  "axis 1, gamma broadcast");
  }
  // A mean far from zero: the f32 statistics must not lose the small deviations.
  HostTensor x = random_tensor(DType::F64, {4, 777}, 9, 1000, 1001);
  expect_parity(OpKind::LayerNorm, axis_attrs(-1), {cast_to(x, DType::F32)}, "mean 1000");
}

// Outputs of 16 MiB and more are streamed, each row written along the next row's statistics:
// rows of 1027 start at every alignment (a plainly stored head and tail around the streamed
// vectors); rows of 2051 span three blocks; rows of 1024 are whole aligned vectors (a loop of their
// own, stream_whole_rows, which the rows of 512 below also take), 4099 of them
// (an odd count per thread); rows of 4096 (16 KB) are normalized in groups of 4 rows with
// AVX-512, 1025 of them (groups left short), and by stream_whole_rows with AVX2; rows of 4099
// (past 16 KB) take the pipeline called out of line.
// With and without gamma and beta, and in f64 (rows of 1027 and, grouped, 2048).
TEST(CpuNormalization, TrailingNormStreamsLargeOutputs) {
  for (const Shape& s : {Shape{4100, 1027}, Shape{2050, 2051}, Shape{4099, 1024}, Shape{2049, 2048},
                         Shape{1025, 4096}, Shape{1025, 4099}}) {
    const Shape tail = {s[1]};
    HostTensor x = random_values(DType::F32, s, 11, -2, 3);
    HostTensor g = random_values(DType::F32, tail, 12, 0.5, 1.5);
    HostTensor b = random_values(DType::F32, tail, 13);
    const std::string what = "streamed " + shape_str(s);
    expect_parity(OpKind::LayerNorm, axis_attrs(-1), {x, g, b}, what);
    expect_parity(OpKind::RmsNorm, axis_attrs(-1), {x, g}, what);
    if (s[1] != 1024 && s[1] != 2048 && s[1] != 4096) continue;
    expect_parity(OpKind::LayerNorm, axis_attrs(-1), {x}, what + " no affine");
    expect_parity(OpKind::LayerNorm, axis_attrs(-1), {x, HostTensor{}, b}, what + " beta");
    expect_parity(OpKind::RmsNorm, axis_attrs(-1), {x}, what + " no gamma");
  }
  // Rows up to 8 KB (with AVX2 up to 128 KB) are centred, a stage block (1024) at a time, on the
  // mean of the block's first 16 elements where that lies near the block's mean
  // (RowStats::provisional), else on the mean: rows whose blocks' first 16 elements lie 50 above
  // the rest (re-centred), rows of mean 1000 (kept), rows of 20 elements, of 512, of 2048 (two
  // blocks) and of 8192 (eight: with AVX-512 the pipeline called out of line).
  for (const Shape& s :
       {Shape{8200, 512}, Shape{209716, 20}, Shape{2050, 2048}, Shape{513, 8192}}) {
    HostTensor far = random_values(DType::F32, s, 20, -1, 1);
    for (int64_t r = 0; r < s[0]; ++r)
      for (int64_t j = 0; j < s[1]; ++j)
        if (r % 3 == 0 && j % 1024 < 16)
          far.set_f64(r * s[1] + j, far.get_f64(r * s[1] + j) + 50);
        else if (r % 3 == 1)
          far.set_f64(r * s[1] + j, far.get_f64(r * s[1] + j) + 1000);
    expect_parity(OpKind::LayerNorm, axis_attrs(-1),
                  {far, random_values(DType::F32, {s[1]}, 21, 0.5, 1.5),
                   random_values(DType::F32, {s[1]}, 22)},
                  "streamed, first elements far from the mean " + shape_str(s));
    // Centred on the first elements, the rows 50 above would lose ~5 bits to cancellation
    // (their squares' sum ~32 times their deviations' about the mean): 2.4e-5 in the outputs
    // with the redo removed.
    const HostTensor got = run_op1(OpKind::LayerNorm, axis_attrs(-1), {far}, "cpu");
    const HostTensor want = run_op1(OpKind::LayerNorm, axis_attrs(-1), {far}, "reference");
    double worst = 0;
    for (int64_t i = 0; i < got.numel(); ++i)
      worst = std::max(worst, std::fabs(got.get_f64(i) - want.get_f64(i)));
    EXPECT_LT(worst, 4e-6) << shape_str(s);
  }
  // An infinity or NaN in a streamed single row (past its first 16 elements, and among them).
  HostTensor odd = random_values(DType::F32, {8200, 512}, 23, -1, 1);
  const double inf = std::numeric_limits<double>::infinity();
  odd.set_f64(3 * 512 + 100, inf);
  odd.set_f64(5 * 512 + 7, -inf);
  odd.set_f64(8 * 512 + 300, std::nan(""));
  odd.set_f64(9 * 512 + 100, inf);
  odd.set_f64(9 * 512 + 200, -inf);
  expect_parity(OpKind::LayerNorm, axis_attrs(-1), {odd}, "streamed rows with inf and NaN");
  HostTensor x = random_values(DType::F64, {2050, 1027}, 14, -2, 3);
  expect_parity(OpKind::LayerNorm, axis_attrs(-1),
                {x, random_values(DType::F64, {1027}, 15), random_values(DType::F64, {1027}, 16)},
                "streamed f64");
  x = random_values(DType::F64, {1025, 2048}, 17, -2, 3);
  expect_parity(OpKind::LayerNorm, axis_attrs(-1),
                {x, random_values(DType::F64, {2048}, 18), random_values(DType::F64, {2048}, 19)},
                "streamed f64 grouped");
}

TEST(CpuNormalization, TrailingNormEmpty) {
  for (DType dt : {DType::F32, DType::F16})
    for (const Shape& s : {Shape{0, 16}, Shape{4, 0}, Shape{0}}) {
      expect_parity(OpKind::LayerNorm, axis_attrs(-1), {random_values(dt, s, 1)},
                    "x" + shape_str(s));
      expect_parity(OpKind::RmsNorm, axis_attrs(-1), {random_values(dt, s, 1)}, "x" + shape_str(s));
    }
}

TEST(CpuNormalization, GroupNorm) {
  struct C {
    Shape s;
    int64_t groups;
  };
  const std::vector<C> cases = {{{2, 6, 5, 7}, 3}, {{1, 4, 33}, 2},   {{3, 8}, 4},
                                {{2, 6, 17}, 6},   {{1, 5, 3, 3}, 1}, {{2, 32, 16, 16}, 8},
                                {{0, 4, 3}, 2},    {{2, 4, 0}, 2},    {{1, 9, 129}, 3}};
  for (DType dt : kFloatDTypes)
    for (const C& c : cases) {
      Attrs a;
      a.set("groups", c.groups);
      HostTensor x = random_values(dt, c.s, 11, -1, 2);
      HostTensor g = random_values(dt, {c.s[1]}, 12, 0.5, 1.5), b = random_values(dt, {c.s[1]}, 13);
      const std::string what = "x" + shape_str(c.s) + " groups " + std::to_string(c.groups);
      expect_parity_layouts(OpKind::GroupNorm, a, {x, g, b}, what);
      expect_parity(OpKind::GroupNorm, a, {x}, what + " no affine");
      expect_parity(OpKind::GroupNorm, a, {x, g}, what + " gamma");
    }
}

TEST(CpuNormalization, LayerNorm2d) {
  const std::vector<Shape> shapes = {{2, 3, 5, 7}, {1, 17, 4, 9},  {2, 64, 16, 16},
                                     {1, 5, 1, 1}, {1, 3, 1, 33},  {0, 3, 2, 2},
                                     {2, 3, 0, 4}, {1, 200, 3, 11}};
  for (DType dt : kFloatDTypes)
    for (const Shape& s : shapes) {
      HostTensor x = random_values(dt, s, 21, -1, 2);
      HostTensor g = random_values(dt, {s[1]}, 22, 0.5, 1.5), b = random_values(dt, {s[1]}, 23);
      const std::string what = "x" + shape_str(s);
      expect_parity_layouts(OpKind::LayerNorm2d, Attrs{}, {x, g, b}, what);
      expect_parity(OpKind::LayerNorm2d, Attrs{}, {x}, what + " no affine");
      expect_parity(OpKind::LayerNorm2d, Attrs{}, {x, HostTensor{}, b}, what + " beta");
    }
}

TEST(CpuNormalization, BatchNormInference) {
  const std::vector<Shape> shapes = {{2, 3, 5, 7}, {4, 17},   {2, 8, 4}, {2, 16, 32, 32},
                                     {1, 5, 65},   {0, 3, 4}, {3, 2, 0}, {300, 33}};
  for (DType dt : kFloatDTypes)
    for (const Shape& s : shapes) {
      const Shape c = {s[1]};
      HostTensor x = random_values(dt, s, 31, -1, 2);
      HostTensor mean = random_values(dt, c, 32), var = random_values(dt, c, 33, 0.1, 2);
      HostTensor g = random_values(dt, c, 34, 0.5, 1.5), b = random_values(dt, c, 35);
      const std::string what = "x" + shape_str(s);
      expect_parity_layouts(OpKind::BatchNormInference, Attrs{}, {x, mean, var, g, b}, what);
      expect_parity(OpKind::BatchNormInference, Attrs{}, {x, mean, var}, what + " no affine");
      expect_parity(OpKind::BatchNormInference, Attrs{},
                    {x, broadcast_view(random_values(dt, {1}, 36), c), var, HostTensor{}, b},
                    what + " broadcast mean, beta only");
    }
}

// ---------------------------------------------------------------------------------------------
// Fused norms

TEST(CpuNormalization, FusedResidualNorms) {
  struct C {
    Shape x, r;
  };
  const std::vector<C> cases = {{{7}, {7}},
                                {{3, 17}, {3, 17}},
                                {{2, 5, 33}, {33}},
                                {{1, 4, 65}, {3, 4, 65}},
                                {{4, 1000}, {4, 1000}},
                                {{64, 512}, {1, 512}},
                                {{0, 16}, {0, 16}},
                                {{3, 1}, {1, 129}}};
  for (DType dt : kFloatDTypes)
    for (const C& c : cases) {
      HostTensor x = random_values(dt, c.x, 41, -1, 2), r = random_values(dt, c.r, 42);
      const int64_t d = std::max(c.x.back(), c.r.back());
      HostTensor g = random_values(dt, {d}, 43, 0.5, 1.5), b = random_values(dt, {d}, 44);
      const std::string what = "x" + shape_str(c.x) + " residual" + shape_str(c.r);
      expect_parity_layouts(OpKind::FusedResidualLN, Attrs{}, {x, r, g, b}, what);
      expect_parity(OpKind::FusedResidualLN, Attrs{}, {x, r}, what + " no affine");
      expect_parity_layouts(OpKind::FusedResidualRmsNorm, Attrs{}, {x, r, g}, what);
      expect_parity(OpKind::FusedResidualRmsNorm, Attrs{}, {x, r}, what + " no gamma");
    }
}

// scale / shift shapes over x [B,S,D]: per batch [B,D], shared [D], per token [B,S,D].
std::vector<Shape> modulation_shapes(const Shape& x) {
  return {{x[0], x[2]}, {x[2]}, x, {x[0], 1, x[2]}};
}

TEST(CpuNormalization, AdaLayerNorm) {
  const std::vector<Shape> shapes = {{1, 1, 8},   {2, 3, 17},   {2, 5, 33}, {3, 7, 64},
                                     {1, 4, 129}, {2, 64, 512}, {0, 3, 8},  {2, 0, 16}};
  for (DType dt : kFloatDTypes)
    for (const Shape& s : shapes)
      for (const Shape& m : modulation_shapes(s)) {
        HostTensor x = random_values(dt, s, 51, -1, 2);
        HostTensor scale = random_values(dt, m, 52, -0.5, 0.5), shift = random_values(dt, m, 53);
        const std::string what = "x" + shape_str(s) + " scale" + shape_str(m);
        expect_parity_layouts(OpKind::AdaLayerNorm, Attrs{}, {x, scale, shift}, what);
      }
}

TEST(CpuNormalization, GatedResidual) {
  const std::vector<Shape> shapes = {{1, 1, 8},   {2, 3, 17},   {2, 5, 33}, {3, 7, 64},
                                     {1, 4, 129}, {2, 64, 512}, {0, 3, 8}};
  for (DType dt : kFloatDTypes)
    for (const Shape& s : shapes)
      for (const Shape& m : modulation_shapes(s)) {
        HostTensor x = random_values(dt, s, 61), y = random_values(dt, s, 62),
                   gate = random_values(dt, m, 63);
        const std::string what = "x" + shape_str(s) + " gate" + shape_str(m);
        expect_parity_layouts(OpKind::GatedResidual, Attrs{}, {x, y, gate}, what);
      }
  // Rank other than 3: the gate broadcasts as it is.
  for (DType dt : {DType::F32, DType::F16})
    expect_parity(
        OpKind::GatedResidual, Attrs{},
        {random_values(dt, {5, 9}, 64), random_values(dt, {5, 9}, 65), random_values(dt, {9}, 66)},
        "x[5,9]");
}

}  // namespace
}  // namespace tessel::testing
