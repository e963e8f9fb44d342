// ConvPool category: Conv (1-D/2-D/3-D), ConvTranspose2d, Im2Col and every PoolKind, checked
// against PyTorch float64 goldens (tests/goldens/gen_conv_pool.py) and hand-computed values,
// with batch > 1, odd sizes, non-contiguous and stride-0 inputs, low-precision dtypes and
// bad-input errors.
#include <algorithm>
#include <cmath>
#include <map>

#include "op_test_util.h"

namespace tessel::testing {
namespace {

const double kNaN = std::nan("");

// A stride-0 view of `t` repeated along a new leading axis of size n, and the materialized copy.
HostTensor repeat_leading(const HostTensor& t, int64_t n) {
  HostTensor v = t;
  v.shape.insert(v.shape.begin(), n);
  v.strides.insert(v.strides.begin(), 0);
  return v;
}

Attrs pool_attrs(PoolKind kind) { return Attrs().set("kind", kind); }

// ---------------------------------------------------------------------------------------------
// Goldens

struct GoldenCase {
  std::string name;
  OpKind kind;
  Attrs attrs;
  std::vector<HostTensor> inputs;  // x, w?, b? (absent b: HostTensor{})
  HostTensor y;
};

std::vector<GoldenCase> golden_cases() {
  static const std::vector<GoldenCase> cases = [] {
    std::vector<GoldenCase> out;
    for (const auto& c : golden_cases_of("conv_pool")) {
      GoldenCase g;
      g.name = c.at("name").get<std::string>();
      auto kind = op_from_name(c.at("kind").get<std::string>());
      if (!kind) throw std::runtime_error("unknown kind in golden " + g.name);
      g.kind = *kind;
      g.attrs = attrs_from_json(g.kind, c.at("attrs"));
      if (c.contains("pool"))
        g.attrs.set("kind", variant_id(VariantEnum::PoolKind, c.at("pool").get<std::string>()));
      g.inputs.push_back(tensor_from_json(c.at("x")));
      if (c.contains("w")) {
        g.inputs.push_back(tensor_from_json(c.at("w")));
        g.inputs.push_back(optional_tensor(c, "b"));
      }
      g.y = tensor_from_json(c.at("y"));
      out.push_back(std::move(g));
    }
    return out;
  }();
  return cases;
}

// Runs every golden case of `kind` (and pool variant, when given) in f64, with non-contiguous
// inputs, and in f32; returns how many ran.
int check_goldens(OpKind kind, std::optional<PoolKind> pool = std::nullopt) {
  int ran = 0;
  for (const GoldenCase& g : golden_cases()) {
    if (g.kind != kind) continue;
    if (pool && g.attrs.e<PoolKind>("kind") != *pool) continue;
    ++ran;
    SCOPED_TRACE(g.name);
    expect_golden_layouts(kind, g.attrs, g.inputs, g.y, 1e-12, g.name + " f64");
    expect_golden_in(DType::F32, kind, g.attrs, g.inputs, g.y, 1e-5, 1e-5, g.name);
  }
  return ran;
}

TEST(ConvPoolGoldens, Conv) { EXPECT_GE(check_goldens(OpKind::Conv), 7); }
TEST(ConvPoolGoldens, ConvTranspose2d) { EXPECT_GE(check_goldens(OpKind::ConvTranspose2d), 3); }
TEST(ConvPoolGoldens, Im2Col) { EXPECT_GE(check_goldens(OpKind::Im2Col), 2); }
TEST(ConvPoolGoldens, PoolMax) { EXPECT_GE(check_goldens(OpKind::Pool, PoolKind::Max), 5); }
TEST(ConvPoolGoldens, PoolAvg) { EXPECT_GE(check_goldens(OpKind::Pool, PoolKind::Avg), 9); }
TEST(ConvPoolGoldens, PoolLp) { EXPECT_GE(check_goldens(OpKind::Pool, PoolKind::Lp), 4); }
TEST(ConvPoolGoldens, PoolAdaptiveAvg) {
  EXPECT_GE(check_goldens(OpKind::Pool, PoolKind::AdaptiveAvg), 3);
}
TEST(ConvPoolGoldens, PoolAdaptiveMax) {
  EXPECT_GE(check_goldens(OpKind::Pool, PoolKind::AdaptiveMax), 3);
}

// Low-precision dtypes compute in f64 and round once: compare with the f64 result rounded.
TEST(ConvPoolGoldens, LowPrecisionDTypes) {
  for (const GoldenCase& g : golden_cases()) {
    if (g.name != "conv2d_stride_pad_dil" && g.name != "avg2d_ceil_excl") continue;
    for (DType dt : {DType::F16, DType::BF16, DType::F8E4M3FN}) {
      std::vector<HostTensor> low;
      for (const HostTensor& t : g.inputs) low.push_back(cast_to(t, dt));
      std::vector<HostTensor> exact;  // the low-precision values, held in f64
      for (const HostTensor& t : low) exact.push_back(cast_to(t, DType::F64));
      HostTensor y = run_op1(g.kind, g.attrs, low);
      ASSERT_EQ(y.dtype, dt);
      HostTensor want = cast_to(run_op1(g.kind, g.attrs, exact), dt);
      expect_close(y, want, 0, 0, g.name + " " + dtype_name(dt));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Hand-computed values

TEST(ConvPoolConv, Conv2dHandComputedBatchAndBias) {
  // y[i,j] = x[i,j] − x[i+1,j+1] + 0.5; batch 1 is batch 0 scaled by 10.
  std::vector<double> xv;
  for (int n = 0; n < 2; ++n)
    for (int i = 1; i <= 9; ++i) xv.push_back(i * (n ? 10.0 : 1.0));
  HostTensor x = f32({2, 1, 3, 3}, xv);
  HostTensor w = f32({1, 1, 2, 2}, {1, 0, 0, -1});
  HostTensor b = f32({1}, {0.5});
  HostTensor y = run_op1(OpKind::Conv, Attrs(), {x, w, b});
  EXPECT_EQ(y.shape, (Shape{2, 1, 2, 2}));
  expect_close(y, {-3.5, -3.5, -3.5, -3.5, -39.5, -39.5, -39.5, -39.5});
}

TEST(ConvPoolConv, Conv1dGroupsPadsHandComputed) {
  // Two groups of one channel; ONNX pads [1, 0]: out = (4 + 1 − 2) + 1 = 4.
  HostTensor x = f64({1, 2, 4}, {1, 2, 3, 4, 10, 20, 30, 40});
  HostTensor w = f64({2, 1, 2}, {1, 1, 2, -1});
  HostTensor y =
      run_op1(OpKind::Conv, Attrs().set("groups", 2).set("pads", std::vector<int64_t>{1, 0}),
              {x, w, HostTensor{}});
  EXPECT_EQ(y.shape, (Shape{1, 2, 4}));
  // channel 0: [0+1, 1+2, 2+3, 3+4]; channel 1: [2·0−10, 2·10−20, 2·20−30, 2·30−40]
  expect_close(y, {1, 3, 5, 7, -10, 0, 10, 20});
}

TEST(ConvPoolConv, StrideZeroBroadcastInput) {
  // Every batch element is the same stride-0 view of one image: all batches give one result.
  HostTensor img = random_tensor(DType::F64, {3, 5, 4}, 7);
  HostTensor x = repeat_leading(img, 3);
  HostTensor w = random_tensor(DType::F64, {2, 3, 3, 2}, 8);
  Attrs attrs = Attrs().set("pads", std::vector<int64_t>{1, 0});
  HostTensor y = run_op1(OpKind::Conv, attrs, {x, w, HostTensor{}});
  HostTensor y_copy = run_op1(OpKind::Conv, attrs, {x.contiguous(), w, HostTensor{}});
  expect_close(y, y_copy, 0, 0);
  int64_t per = y.numel() / 3;
  for (int64_t i = 0; i < per; ++i) {
    EXPECT_EQ(y.get_f64(i), y.get_f64(per + i));
    EXPECT_EQ(y.get_f64(i), y.get_f64(2 * per + i));
  }
}

// The cpu backend's depthwise kernel against the reference backend over the shapes its tiles
// split differently: rows of 1 to 5 vectors (the last partial or whole), planes whose row count
// leaves groups of 8, 4, 2 and 1 rows, the row-sharing tiles (3 or 5 kernel rows, row stride 1 or
// 2) and the general ones (dilated rows, 2 × 3, 1-D and 3-D kernels), channel multiplier 2, batch
// 2, with and without bias, f32 and f64.
TEST(ConvPoolConv, DepthwiseMatchesReferenceAcrossTiles) {
  struct Case {
    Shape x, w;
    std::vector<int64_t> strides, pads, dilations;
  };
  std::vector<Case> cases;
  for (int64_t width : {5, 14, 16, 17, 33, 48, 56, 70, 81})
    for (int64_t k : {3, 5})
      for (int64_t s : {1, 2})
        cases.push_back(
            {{2, 3, 13, width}, {3, 1, k, k}, {s, s}, {k / 2, k / 2, k / 2, k / 2}, {1, 1}});
  cases.push_back({{1, 4, 19, 40}, {8, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}});  // multiplier 2
  cases.push_back({{1, 3, 21, 30}, {3, 1, 3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}});  // dilated rows
  cases.push_back({{1, 3, 22, 37}, {3, 1, 3, 3}, {2, 1}, {0, 1, 2, 0}, {1, 1}});  // stride (2, 1)
  cases.push_back({{1, 3, 11, 23}, {3, 1, 2, 3}, {1, 2}, {1, 0, 0, 1}, {1, 3}});  // 2 × 3
  cases.push_back({{2, 5, 9, 35}, {5, 1, 5, 5}, {1, 1}, {0, 0, 0, 0}, {1, 1}});   // unpadded
  cases.push_back({{2, 3, 40}, {3, 1, 3}, {1}, {1, 1}, {1}});                     // 1-D
  cases.push_back({{1, 2, 5, 9, 20}, {2, 1, 3, 3, 3}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, {1, 1, 1}});
  cases.push_back({{1, 2, 4, 9, 20}, {2, 1, 1, 3, 3}, {2, 1, 2}, {0, 1, 1, 0, 1, 1}, {1, 1, 1}});
  uint64_t seed = 40;
  for (const Case& c : cases)
    for (DType dt : {DType::F32, DType::F64})
      for (bool bias : {false, true}) {
        const Attrs attrs = Attrs()
                                .set("strides", c.strides)
                                .set("pads", c.pads)
                                .set("dilations", c.dilations)
                                .set("groups", c.x[1]);
        const std::vector<HostTensor> in = {
            random_tensor(dt, c.x, ++seed, -2, 2), random_tensor(dt, c.w, ++seed, -1, 1),
            bias ? random_tensor(dt, {c.w[0]}, ++seed, -1, 1) : HostTensor{}};
        const double tol = dt == DType::F32 ? 1e-5 : 1e-12;
        expect_close(run_op1(OpKind::Conv, attrs, in, "cpu"), run_op1(OpKind::Conv, attrs, in), tol,
                     tol, "x" + shape_str(c.x) + " w" + shape_str(c.w) + " " + dtype_name(dt));
      }
}

// The cpu backend's f32 convolutions that run as an implicit GEMM, against the reference
// backend: unstrided ones run its tiles across output rows laid end to end at the padded width
// (rows of 16–57 columns, dilated, asymmetric pads, 5 × 5, 1 × 3, groups, 1-D, batch 2, several
// bands a plane), strided ones (stride 2 along the rows or the columns) one row at a time; K past
// one chunk of k's; past 64 output channels.
TEST(ConvPoolConv, ImplicitGemmMatchesReferenceAcrossRows) {
  struct Case {
    Shape x, w;
    std::vector<int64_t> strides, pads, dilations;
    int64_t groups;
  };
  const std::vector<Case> cases = {
      {{2, 6, 17, 30}, {8, 6, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
      {{1, 16, 33, 57}, {24, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
      {{1, 8, 20, 40}, {16, 8, 3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, 1},
      {{1, 8, 21, 19}, {8, 8, 5, 5}, {1, 1}, {2, 1, 2, 3}, {1, 1}, 1},
      {{2, 8, 18, 24}, {12, 4, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2},
      {{1, 8, 10, 37}, {8, 8, 1, 3}, {1, 1}, {0, 1, 0, 1}, {1, 1}, 1},
      {{1, 5, 64, 16}, {40, 5, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
      {{2, 8, 50}, {16, 8, 3}, {1}, {1, 1}, {1}, 1},
      {{1, 8, 30, 64}, {16, 8, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1},
      {{1, 8, 31, 40}, {16, 8, 3, 3}, {2, 1}, {1, 1, 1, 1}, {1, 1}, 1},
      // Past 256 k's (with AVX2 a tile runs them in equal chunks, through a scratch C): 360
      // unstrided, 630 at column stride 2; and 72 output channels on a 12 × 12 plane (AVX2 takes
      // small unstrided planes past 64 channels).
      {{1, 40, 12, 20}, {16, 40, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
      {{1, 70, 9, 37}, {8, 70, 3, 3}, {1, 2}, {1, 1, 1, 1}, {1, 1}, 1},
      {{1, 8, 12, 12}, {72, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
  };
  uint64_t seed = 400;
  for (const Case& c : cases)
    for (bool bias : {false, true}) {
      const Attrs attrs = Attrs()
                              .set("strides", c.strides)
                              .set("pads", c.pads)
                              .set("dilations", c.dilations)
                              .set("groups", c.groups);
      const std::vector<HostTensor> in = {
          random_tensor(DType::F32, c.x, ++seed, -2, 2),
          random_tensor(DType::F32, c.w, ++seed, -1, 1),
          bias ? random_tensor(DType::F32, {c.w[0]}, ++seed, -1, 1) : HostTensor{}};
      // f32 sums of K products: the tolerance grows with K past 128 (K = 630 on the portable
      // path, summed in another order, was 1.6e-5 off).
      const int64_t k = c.w[1] * c.w[2] * (c.w.size() > 3 ? c.w[3] : 1);
      const double tol = 1e-5 * std::max(1.0, static_cast<double>(k) / 128);
      expect_close(run_op1(OpKind::Conv, attrs, in, "cpu"), run_op1(OpKind::Conv, attrs, in), tol,
                   tol, "x" + shape_str(c.x) + " w" + shape_str(c.w));
    }
}

TEST(ConvPoolConvTranspose2d, Stride2ReplicatesBlocks) {
  // A 2×2 kernel of ones at stride 2 spreads every input element over its own 2×2 block.
  HostTensor x = f32({2, 1, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -4});
  HostTensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  HostTensor b = f32({1}, {0.25});
  HostTensor y = run_op1(OpKind::ConvTranspose2d,
                         Attrs().set("strides", std::vector<int64_t>{2, 2}), {x, w, b});
  EXPECT_EQ(y.shape, (Shape{2, 1, 4, 4}));
  std::vector<double> want;
  for (double s : {1.0, -1.0})
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) want.push_back(s * ((i / 2) * 2 + j / 2 + 1) + 0.25);
  expect_close(y, want);
}

TEST(ConvPoolConvTranspose2d, OutputPaddingGetsOnlyBias) {
  // 1×1 kernel, stride 2, output_padding 1: odd rows / columns receive nothing but the bias.
  HostTensor x = f64({1, 1, 2, 2}, {1, 2, 3, 4});
  HostTensor w = f64({1, 2, 1, 1}, {1, 10});
  HostTensor b = f64({2}, {0.5, -0.5});
  Attrs attrs = Attrs()
                    .set("strides", std::vector<int64_t>{2, 2})
                    .set("output_padding", std::vector<int64_t>{1, 1});
  HostTensor y = run_op1(OpKind::ConvTranspose2d, attrs, {x, w, b});
  EXPECT_EQ(y.shape, (Shape{1, 2, 4, 4}));
  std::vector<double> want;
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        double bias = o ? -0.5 : 0.5, scale = o ? 10 : 1;
        want.push_back(i % 2 == 0 && j % 2 == 0 ? scale * (i / 2 * 2 + j / 2 + 1) + bias : bias);
      }
  expect_close(y, want);
}

TEST(ConvPoolIm2Col, HandComputedWithPadding) {
  // x [1,1,2,2], kernel 2×2, pads 1: 3×3 blocks; row r of y holds kernel tap (r/2, r%2).
  HostTensor x = f64({1, 1, 2, 2}, {1, 2, 3, 4});
  HostTensor y = run_op1(
      OpKind::Im2Col,
      Attrs().set("kernel", std::vector<int64_t>{2, 2}).set("pads", std::vector<int64_t>{1, 1}),
      {x});
  EXPECT_EQ(y.shape, (Shape{1, 4, 9}));
  expect_close(y, {0, 0, 0, 0, 1, 2, 0, 3, 4,  //
                   0, 0, 0, 1, 2, 0, 3, 4, 0,  //
                   0, 1, 2, 0, 3, 4, 0, 0, 0,  //
                   1, 2, 0, 3, 4, 0, 0, 0, 0});
}

TEST(ConvPoolIm2Col, IntegersAreExact) {
  // Values past 2^53 would lose bits through a double.
  int64_t big = (int64_t{1} << 60) + 1;
  HostTensor x = i64({2, 1, 1, 2}, {big, -big, 3, 4});
  HostTensor y = run_op1(OpKind::Im2Col, Attrs().set("kernel", std::vector<int64_t>{1, 1}),
                         {non_contiguous(x)});
  EXPECT_EQ(y.dtype, DType::I64);
  EXPECT_EQ(y.shape, (Shape{2, 1, 2}));
  EXPECT_EQ(y.get_i64(0), big);
  EXPECT_EQ(y.get_i64(1), -big);
  EXPECT_EQ(y.get_i64(2), 3);
  EXPECT_EQ(y.get_i64(3), 4);
}

TEST(ConvPoolPool, MaxPropagatesNaNAndNeverSelectsPadding) {
  // All-negative input with padding 1: a padded zero would win if padding were read.
  HostTensor x = f32({1, 1, 5}, {-5, -4, kNaN, -2, -1});
  Attrs attrs = pool_attrs(PoolKind::Max)
                    .set("kernel", std::vector<int64_t>{2})
                    .set("strides", std::vector<int64_t>{2})
                    .set("pads", std::vector<int64_t>{1});
  HostTensor y = run_op1(OpKind::Pool, attrs, {x});
  EXPECT_EQ(y.shape, (Shape{1, 1, 3}));  // windows [-1,1) [1,3) [3,5)
  expect_close(y, {-5, kNaN, -1});
}

TEST(ConvPoolPool, AvgDivisorsHandComputed) {
  // x = 1..5, kernel 2, stride 2, pads 1, ceil_mode (the 4th window would start in the right
  // padding, so it is dropped): windows [-1,1) [1,3) [3,5).
  HostTensor x = f64({1, 1, 5}, {1, 2, 3, 4, 5});
  Attrs attrs = pool_attrs(PoolKind::Avg)
                    .set("kernel", std::vector<int64_t>{2})
                    .set("strides", std::vector<int64_t>{2})
                    .set("pads", std::vector<int64_t>{1})
                    .set("ceil_mode", true);
  expect_close(run_op1(OpKind::Pool, attrs, {x}), {1, 2.5, 4.5});
  attrs.set("count_include_pad", true);
  expect_close(run_op1(OpKind::Pool, attrs, {x}), {0.5, 2.5, 4.5});
}

TEST(ConvPoolPool, LpHandComputed) {
  // p = 2, kernel 2, stride 2, ceil_mode: the clipped last window [4,5) is scaled by 2/1
  // (torch.lp_pool = avg_pool(x^p)·kernel)^(1/p).
  HostTensor x = f64({1, 1, 5}, {3, 4, -6, 8, 2});
  Attrs attrs = pool_attrs(PoolKind::Lp)
                    .set("kernel", std::vector<int64_t>{2})
                    .set("ceil_mode", true)
                    .set("p", 2);
  expect_close(run_op1(OpKind::Pool, attrs, {x}), {5, 10, std::sqrt(8.0)}, 1e-12, 1e-12);
}

TEST(ConvPoolPool, AdaptiveWindowsHandComputed) {
  // 5 → 3: windows [0,2) [1,4) [3,5).
  HostTensor x = f64({2, 1, 5}, {1, 5, 2, 4, 3, -1, -5, -2, -4, -3});
  HostTensor avg =
      run_op1(OpKind::Pool,
              pool_attrs(PoolKind::AdaptiveAvg).set("output_size", std::vector<int64_t>{3}), {x});
  expect_close(avg, {3, 11.0 / 3, 3.5, -3, -11.0 / 3, -3.5}, 1e-12, 1e-12);
  HostTensor mx = run_op1(
      OpKind::Pool, pool_attrs(PoolKind::AdaptiveMax).set("output_size", std::vector<int64_t>{3}),
      {non_contiguous(x)});
  expect_close(mx, {5, 5, 4, -1, -2, -3});
}

TEST(ConvPoolPool, MaxOnIntegersIsExact) {
  int64_t big = (int64_t{1} << 62) + 3;
  HostTensor x = i64({1, 2, 2, 2}, {big, big - 1, 0, -7, -3, -9, -8, -4});
  HostTensor y = run_op1(OpKind::Pool,
                         pool_attrs(PoolKind::Max).set("kernel", std::vector<int64_t>{2, 2}), {x});
  EXPECT_EQ(y.dtype, DType::I64);
  EXPECT_EQ(y.get_i64(0), big);
  EXPECT_EQ(y.get_i64(1), -3);
  HostTensor x32 = HostTensor::from_vector(DType::I32, {1, 1, 4}, std::vector<int>{-2, 7, 5, -9});
  HostTensor a =
      run_op1(OpKind::Pool,
              pool_attrs(PoolKind::AdaptiveMax).set("output_size", std::vector<int64_t>{3}), {x32});
  EXPECT_EQ(a.dtype, DType::I32);
  EXPECT_EQ(a.get_i64(0), 7);
  EXPECT_EQ(a.get_i64(1), 7);
  EXPECT_EQ(a.get_i64(2), 5);
}

TEST(ConvPoolPool, StrideZeroBroadcastInput) {
  HostTensor img = random_tensor(DType::F64, {2, 7, 6}, 11);
  HostTensor x = repeat_leading(img, 2);
  for (PoolKind kind :
       {PoolKind::Max, PoolKind::Avg, PoolKind::Lp, PoolKind::AdaptiveMax, PoolKind::AdaptiveAvg}) {
    Attrs attrs = pool_attrs(kind);
    if (kind == PoolKind::AdaptiveMax || kind == PoolKind::AdaptiveAvg)
      attrs.set("output_size", std::vector<int64_t>{3, 4});
    else
      attrs.set("kernel", std::vector<int64_t>{3, 2}).set("ceil_mode", true);
    HostTensor y = run_op1(OpKind::Pool, attrs, {x});
    expect_close(y, run_op1(OpKind::Pool, attrs, {x.contiguous()}), 0, 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Bad input

TEST(ConvPoolErrors, Conv) {
  HostTensor x = random_tensor(DType::F32, {2, 4, 5, 5}, 1);
  HostTensor w = random_tensor(DType::F32, {6, 4, 3, 3}, 2);
  HostTensor none;
  auto conv = [&](Attrs a, HostTensor xx, HostTensor ww, HostTensor bb) {
    return [=] { run_op1(OpKind::Conv, a, {xx, ww, bb}); };
  };
  expect_error(ErrorKind::Shape, conv(Attrs(), x, random_tensor(DType::F32, {6, 3, 3, 3}, 3), none),
               "channel mismatch");
  expect_error(ErrorKind::Shape, conv(Attrs().set("groups", 3), x, w, none), "groups ∤ C");
  expect_error(ErrorKind::Shape,
               conv(Attrs().set("groups", 4), x, random_tensor(DType::F32, {6, 1, 3, 3}, 3), none),
               "groups ∤ O");
  expect_error(ErrorKind::Value, conv(Attrs().set("groups", 0), x, w, none), "groups 0");
  expect_error(ErrorKind::Shape, conv(Attrs(), x, random_tensor(DType::F32, {6, 4, 6, 3}, 3), none),
               "kernel larger than input");
  expect_error(ErrorKind::Shape,
               conv(Attrs().set("dilations", std::vector<int64_t>{3, 1}), x, w, none),
               "dilated kernel larger than input");
  expect_error(ErrorKind::Value,
               conv(Attrs().set("pads", std::vector<int64_t>{1, 1, 1}), x, w, none),
               "pads length 3");
  expect_error(ErrorKind::Value, conv(Attrs().set("pads", std::vector<int64_t>{-1, 0}), x, w, none),
               "negative pads");
  expect_error(ErrorKind::Value,
               conv(Attrs().set("strides", std::vector<int64_t>{1, 0}), x, w, none), "stride 0");
  expect_error(ErrorKind::Value, conv(Attrs().set("strides", std::vector<int64_t>{1}), x, w, none),
               "strides length 1");
  expect_error(ErrorKind::Shape, conv(Attrs(), x, w, random_tensor(DType::F32, {5}, 4)),
               "bias length");
  expect_error(ErrorKind::DType, conv(Attrs(), x, random_tensor(DType::F64, {6, 4, 3, 3}, 3), none),
               "dtype mismatch");
  expect_error(ErrorKind::DType,
               conv(Attrs(), random_tensor(DType::I32, {2, 4, 5, 5}, 1, -5, 5),
                    random_tensor(DType::I32, {6, 4, 3, 3}, 1, -5, 5), none),
               "integer conv");
  expect_error(ErrorKind::Shape,
               conv(Attrs(), random_tensor(DType::F32, {4, 5}, 1),
                    random_tensor(DType::F32, {6, 4}, 1), none),
               "rank 2");
  expect_error(ErrorKind::Shape, conv(Attrs(), x, random_tensor(DType::F32, {6, 4, 3}, 3), none),
               "w rank");
}

TEST(ConvPoolErrors, ConvTranspose2d) {
  HostTensor x = random_tensor(DType::F32, {1, 4, 3, 3}, 1);
  HostTensor w = random_tensor(DType::F32, {4, 2, 3, 3}, 2);
  auto convt = [&](Attrs a, HostTensor ww) {
    return [=] { run_op1(OpKind::ConvTranspose2d, a, {x, ww, HostTensor{}}); };
  };
  expect_error(ErrorKind::Value,
               convt(Attrs()
                         .set("strides", std::vector<int64_t>{2, 2})
                         .set("output_padding", std::vector<int64_t>{2, 0}),
                     w),
               "output_padding >= stride and dilation");
  expect_error(ErrorKind::Shape, convt(Attrs(), random_tensor(DType::F32, {3, 2, 3, 3}, 2)),
               "w dim 0 != C");
  expect_error(ErrorKind::Shape, convt(Attrs().set("groups", 3), w), "groups ∤ C");
  expect_error(ErrorKind::Shape, convt(Attrs().set("pads", std::vector<int64_t>{3, 3}), w),
               "output below 1");
  expect_error(ErrorKind::Value, convt(Attrs().set("pads", std::vector<int64_t>{1, 1, 1}), w),
               "pads length 3");
}

TEST(ConvPoolErrors, Im2Col) {
  HostTensor x = random_tensor(DType::F32, {1, 2, 4, 4}, 1);
  auto unfold = [&](Attrs a, HostTensor xx) { return [=] { run_op1(OpKind::Im2Col, a, {xx}); }; };
  auto k = [](std::vector<int64_t> v) { return Attrs().set("kernel", std::move(v)); };
  expect_error(ErrorKind::Value, unfold(k({3}), x), "kernel length 1");
  expect_error(ErrorKind::Value, unfold(k({0, 2}), x), "kernel 0");
  expect_error(ErrorKind::Value, unfold(k({2, 2}).set("pads", std::vector<int64_t>{1, 1, 0, 0}), x),
               "4 pads");
  expect_error(ErrorKind::Shape, unfold(k({5, 2}), x), "kernel larger than input");
  expect_error(ErrorKind::Shape, unfold(k({2, 2}), random_tensor(DType::F32, {2, 4, 4}, 1)),
               "rank 3");
}

TEST(ConvPoolErrors, Pool) {
  HostTensor x = random_tensor(DType::F32, {2, 3, 6, 6}, 1);
  auto pool = [&](Attrs a, HostTensor xx) { return [=] { run_op1(OpKind::Pool, a, {xx}); }; };
  auto with_kernel = [](PoolKind kind, std::vector<int64_t> k) {
    return pool_attrs(kind).set("kernel", std::move(k));
  };
  expect_error(ErrorKind::Value, pool(pool_attrs(PoolKind::Max), x), "missing kernel");
  expect_error(ErrorKind::Value, pool(with_kernel(PoolKind::Avg, {2}), x), "kernel length");
  expect_error(ErrorKind::Value,
               pool(with_kernel(PoolKind::Max, {3, 3}).set("pads", std::vector<int64_t>{2, 1}), x),
               "pad > kernel/2");
  expect_error(
      ErrorKind::Value,
      pool(with_kernel(PoolKind::Avg, {2, 2}).set("pads", std::vector<int64_t>{0, 0, 2, 0}), x),
      "end pad > kernel/2");
  expect_error(
      ErrorKind::Value,
      pool(with_kernel(PoolKind::Avg, {2, 2}).set("dilations", std::vector<int64_t>{2, 1}), x),
      "Avg dilation");
  expect_error(ErrorKind::Value,
               pool(with_kernel(PoolKind::Lp, {2, 2}).set("pads", std::vector<int64_t>{1, 1}), x),
               "Lp pads");
  expect_error(ErrorKind::Value, pool(with_kernel(PoolKind::Lp, {2, 2}).set("p", 0), x), "p 0");
  expect_error(
      ErrorKind::Value,
      pool(with_kernel(PoolKind::Max, {2, 2}).set("strides", std::vector<int64_t>{0, 1}), x),
      "stride 0");
  expect_error(ErrorKind::Shape, pool(with_kernel(PoolKind::Max, {7, 2}), x), "output below 1");
  expect_error(ErrorKind::Value,
               pool(pool_attrs(PoolKind::AdaptiveAvg)
                        .set("output_size", std::vector<int64_t>{2, 2})
                        .set("kernel", std::vector<int64_t>{2, 2}),
                    x),
               "adaptive with kernel");
  expect_error(
      ErrorKind::Value,
      pool(pool_attrs(PoolKind::AdaptiveMax).set("output_size", std::vector<int64_t>{2}), x),
      "output_size length");
  expect_error(
      ErrorKind::Value,
      pool(pool_attrs(PoolKind::AdaptiveAvg).set("output_size", std::vector<int64_t>{2, 0}), x),
      "output_size 0");
  expect_error(
      ErrorKind::Value,
      pool(with_kernel(PoolKind::Max, {2, 2}).set("output_size", std::vector<int64_t>{2, 2}), x),
      "output_size on a kernel pool");
  HostTensor xi = random_tensor(DType::I32, {1, 1, 4, 4}, 1, -9, 9);
  expect_error(ErrorKind::DType, pool(with_kernel(PoolKind::Avg, {2, 2}), xi), "integer Avg");
  expect_error(
      ErrorKind::DType,
      pool(pool_attrs(PoolKind::AdaptiveAvg).set("output_size", std::vector<int64_t>{2, 2}), xi),
      "integer AdaptiveAvg");
  expect_error(ErrorKind::Shape,
               pool(with_kernel(PoolKind::Max, {2}), random_tensor(DType::F32, {4, 4}, 1)),
               "rank 2");
}

// Adaptive windows tile the input without padding: count_include_pad has nothing to count (the
// kernels used to divide by 1, a window sum), so the shape rule rejects it.
TEST(ConvPoolErrors, AdaptivePoolRejectsCountIncludePad) {
  HostTensor x = random_tensor(DType::F32, {2, 3, 5, 7}, 1);
  for (PoolKind kind : {PoolKind::AdaptiveAvg, PoolKind::AdaptiveMax}) {
    Attrs a = pool_attrs(kind).set("output_size", std::vector<int64_t>{2, 3});
    EXPECT_NO_THROW(run_op1(OpKind::Pool, a, {x}));
    expect_error(
        ErrorKind::Value,
        [&] { run_op1(OpKind::Pool, Attrs(a).set("count_include_pad", true), {x}); },
        "adaptive with count_include_pad", "count_include_pad must be false for adaptive pooling");
  }
}

}  // namespace
}  // namespace tessel::testing
