// The cpu backend's Attention (flash-attention kernel) against the reference: every MaskKind,
// every claimed dtype, GQA/MQA, Sq != Sk, head sizes around the vector widths, long sequences,
// non-contiguous and broadcast operands, mask dtypes and shapes, fully masked rows and empties.
#include <cmath>
#include <limits>
#include <string>

#include "op_test_util.h"

namespace tessel::testing {
namespace {

constexpr MaskKind kAllKinds[] = {MaskKind::None, MaskKind::Causal, MaskKind::SlidingWindow,
                                  MaskKind::Custom, MaskKind::Bias};

// Tolerance of a dtype's result: one rounding of it (the reference rounds an f64 result, cpu an
// f32 one, so they may differ by one unit in the last place) or f32 / f64 arithmetic.
constexpr PerFloatDType<double> kTolerance = {.f32 = 2e-5,
                                              .f64 = 1e-12,
                                              .f16 = 2e-3,
                                              .bf16 = 1.6e-2,
                                              .f8e4m3fn = 0.13,
                                              .f8e5m2 = 0.26,
                                              .other = 1e-5};

Attrs attn_attrs(MaskKind kind, int64_t window = 0, double scale = 0) {
  return Attrs().set("mask_kind", kind).set("window", window).set("scale", scale);
}

// Runs on cpu and on the reference and compares.
void expect_parity(const Attrs& attrs, const std::vector<HostTensor>& in, double tol,
                   const std::string& what) {
  HostTensor expected = run_op1(OpKind::Attention, attrs, in, "reference");
  HostTensor actual = run_op1(OpKind::Attention, attrs, in, "cpu");
  expect_close(actual, expected, tol, tol, what);
}

struct Dims {
  int64_t b, hq, hkv, sq, sk, d, dv;
  std::string str() const {
    return "B" + std::to_string(b) + " Hq" + std::to_string(hq) + " Hkv" + std::to_string(hkv) +
           " Sq" + std::to_string(sq) + " Sk" + std::to_string(sk) + " D" + std::to_string(d) +
           " Dv" + std::to_string(dv);
  }
};

// q, k, v (and a mask for Custom / Bias) of these dims; mask_shape empty = [B, Hq, Sq, Sk].
std::vector<HostTensor> make_inputs(const Dims& s, MaskKind kind, DType dt, uint64_t seed,
                                    Shape mask_shape = {}, DType mask_dt = DType::Bool) {
  std::vector<HostTensor> in = {
      cast_to(random_tensor(DType::F64, {s.b, s.hq, s.sq, s.d}, seed, -2, 2), dt),
      cast_to(random_tensor(DType::F64, {s.b, s.hkv, s.sk, s.d}, seed + 1, -2, 2), dt),
      cast_to(random_tensor(DType::F64, {s.b, s.hkv, s.sk, s.dv}, seed + 2, -1, 1), dt)};
  if (mask_shape.empty()) mask_shape = {s.b, s.hq, s.sq, s.sk};
  if (kind == MaskKind::Custom)  // about 60% kept
    in.push_back(cast_to(random_tensor(DType::Bool, mask_shape, seed + 3, 0.4, 2), mask_dt));
  if (kind == MaskKind::Bias)
    in.push_back(cast_to(random_tensor(DType::F64, mask_shape, seed + 3, -3, 3),
                         mask_dt == DType::Bool ? dt : mask_dt));
  return in;
}

TEST(CpuAttention, EveryVariantEveryDType) {
  const Dims shapes[] = {{1, 1, 1, 1, 1, 1, 1},
                         {2, 4, 2, 17, 33, 7, 7},
                         {1, 2, 2, 15, 15, 16, 16},
                         {2, 3, 1, 33, 17, 33, 9},
                         {1, 2, 1, 63, 65, 32, 17}};
  uint64_t seed = 1;
  for (DType dt : kFloatDTypes)
    for (MaskKind kind : kAllKinds)
      for (const Dims& s : shapes) {
        Attrs a = attn_attrs(kind, /*window=*/5);
        expect_parity(a, make_inputs(s, kind, dt, seed++), kTolerance.of(dt),
                      std::string(dtype_name(dt)) + " kind " +
                          std::to_string(static_cast<int>(kind)) + " " + s.str());
      }
}

TEST(CpuAttention, HeadSizes) {
  uint64_t seed = 100;
  for (int64_t d : {1, 7, 64, 80, 128})
    for (MaskKind kind : kAllKinds) {
      Dims s{2, 2, 1, 33, 70, d, d == 7 ? 3 : d};
      expect_parity(attn_attrs(kind, 9), make_inputs(s, kind, DType::F32, seed++), 2e-5,
                    "kind " + std::to_string(static_cast<int>(kind)) + " " + s.str());
    }
}

TEST(CpuAttention, LongSequences) {
  uint64_t seed = 200;
  for (MaskKind kind : kAllKinds) {
    Dims s{1, 2, 2, 1100, 1100, 64, 64};
    expect_parity(attn_attrs(kind, 300), make_inputs(s, kind, DType::F32, seed++), 2e-5,
                  "kind " + std::to_string(static_cast<int>(kind)) + " " + s.str());
  }
  // Decode-like: one query over a long cache, and a long query over a short cache.
  for (MaskKind kind : {MaskKind::None, MaskKind::Causal, MaskKind::SlidingWindow}) {
    for (Dims s : {Dims{2, 8, 2, 1, 1500, 64, 64}, Dims{1, 4, 4, 700, 129, 64, 64}})
      expect_parity(attn_attrs(kind, 100), make_inputs(s, kind, DType::F32, seed++), 2e-5,
                    "kind " + std::to_string(static_cast<int>(kind)) + " " + s.str());
  }
}

// Causal and sliding-window masks align bottom-right when Sq != Sk; rows that see no key (Sq >
// Sk, or a window past the cache) output zeros.
TEST(CpuAttention, QueryAndKeyLengthsDiffer) {
  uint64_t seed = 300;
  for (MaskKind kind : kAllKinds)
    for (Dims s : {Dims{1, 2, 1, 5, 130, 16, 16}, Dims{2, 2, 2, 70, 20, 16, 8},
                   Dims{1, 1, 1, 129, 65, 8, 8}, Dims{1, 1, 1, 64, 128, 8, 8}})
      for (int64_t window : {0, 1, 3, 64, 1000})
        expect_parity(attn_attrs(kind, window), make_inputs(s, kind, DType::F32, seed++), 2e-5,
                      "kind " + std::to_string(static_cast<int>(kind)) + " window " +
                          std::to_string(window) + " " + s.str());
}

TEST(CpuAttention, ExplicitScale) {
  Dims s{1, 2, 2, 20, 20, 8, 8};
  for (double scale : {0.01, 1.0, 3.5, -0.7})
    expect_parity(attn_attrs(MaskKind::Causal, 0, scale),
                  make_inputs(s, MaskKind::Causal, DType::F32, 400), 2e-5,
                  "scale " + std::to_string(scale));
}

TEST(CpuAttention, NonContiguousOperands) {
  uint64_t seed = 500;
  for (DType dt : {DType::F32, DType::F64, DType::F16})
    for (MaskKind kind : kAllKinds) {
      Dims s{2, 4, 2, 37, 66, 24, 20};
      std::vector<HostTensor> in = make_inputs(s, kind, dt, seed++);
      for (HostTensor& t : in) t = non_contiguous(t);
      expect_parity(
          attn_attrs(kind, 7), in, kTolerance.of(dt),
          std::string(dtype_name(dt)) + " kind " + std::to_string(static_cast<int>(kind)));
    }
  // q, k, v as heads-major views of [B, S, H, D] (a transpose, as after a projection).
  Dims s{2, 4, 4, 40, 40, 16, 16};
  auto bshd = [](const HostTensor& t) {
    HostTensor c = t.permuted({0, 2, 1, 3}).contiguous();
    return c.permuted({0, 2, 1, 3});
  };
  std::vector<HostTensor> in = make_inputs(s, MaskKind::Causal, DType::F32, seed);
  for (HostTensor& t : in) t = bshd(t);
  expect_parity(attn_attrs(MaskKind::Causal), in, 2e-5, "BSHD views");
  // Broadcast (stride-0) q, k, v.
  HostTensor q = broadcast_view(random_tensor(DType::F32, {1, 1, 9, 8}, 1), {2, 3, 9, 8});
  HostTensor k = broadcast_view(random_tensor(DType::F32, {1, 1, 1, 8}, 2), {2, 3, 11, 8});
  HostTensor v = broadcast_view(random_tensor(DType::F32, {2, 1, 11, 5}, 3), {2, 3, 11, 5});
  expect_parity(attn_attrs(MaskKind::None), {q, k, v}, 2e-5, "broadcast q, k, v");
}

// Masks and biases of every broadcastable shape, of several dtypes, as stride-0 views too.
TEST(CpuAttention, MaskShapesAndDTypes) {
  Dims s{2, 4, 2, 19, 70, 16, 16};
  const Shape shapes[] = {{2, 70},       {70},          {1, 19, 70},    {4, 19, 1},
                          {2, 1, 1, 70}, {1, 4, 1, 70}, {2, 4, 19, 70}, {1, 1, 19, 70}};
  uint64_t seed = 600;
  for (const Shape& ms : shapes) {
    for (DType mdt : {DType::Bool, DType::I32, DType::F32, DType::U8, DType::F16})
      expect_parity(attn_attrs(MaskKind::Custom),
                    make_inputs(s, MaskKind::Custom, DType::F32, seed++, ms, mdt), 2e-5,
                    "Custom mask " + shape_str(ms) + " " + dtype_name(mdt));
    for (DType mdt : {DType::F32, DType::F16, DType::F64, DType::BF16})
      expect_parity(attn_attrs(MaskKind::Bias),
                    make_inputs(s, MaskKind::Bias, DType::F32, seed++, ms, mdt), 2e-5,
                    "Bias " + shape_str(ms) + " " + dtype_name(mdt));
  }
  // A stride-0 view of a mask.
  std::vector<HostTensor> in =
      make_inputs(s, MaskKind::Bias, DType::F32, seed++, {1, 1, 19, 70}, DType::F32);
  in[3] = broadcast_view(in[3], {2, 4, 19, 70});
  expect_parity(attn_attrs(MaskKind::Bias), in, 2e-5, "broadcast_view bias");
  in[3] = non_contiguous(cast_to(in[3], DType::F32));
  expect_parity(attn_attrs(MaskKind::Bias), in, 2e-5, "non-contiguous bias");
}

// Rows with no visible key output zeros; -inf biases mask; a NaN score propagates to its row.
TEST(CpuAttention, FullyMaskedRowsAndSpecialValues) {
  Dims s{1, 2, 2, 9, 70, 8, 8};
  std::vector<HostTensor> in = make_inputs(s, MaskKind::Custom, DType::F32, 700);
  HostTensor mask = HostTensor::empty(DType::Bool, {1, 2, 9, 70});
  for (int64_t i = 0; i < mask.numel(); ++i) mask.set_i64(i, (i / 70) % 3 == 0 ? 0 : (i % 5 == 0));
  in[3] = mask;
  expect_parity(attn_attrs(MaskKind::Custom), in, 2e-5, "rows with no key");
  const double inf = std::numeric_limits<double>::infinity();
  HostTensor bias = HostTensor::empty(DType::F32, {1, 2, 9, 70});
  for (int64_t i = 0; i < bias.numel(); ++i)
    bias.set_f64(i, (i / 70) % 4 == 1 ? -inf : (i % 3 == 0 ? -inf : 0.25 * (i % 7)));
  in[3] = bias;
  expect_parity(attn_attrs(MaskKind::Bias), in, 2e-5, "-inf biases");
  bias.set_f64(5 * 70 + 3, std::nan(""));
  expect_parity(attn_attrs(MaskKind::Bias), in, 2e-5, "a NaN bias");
}

// An inf or NaN in V at a key a row does not see stays out of that row (its weight is 0, and
// 0·inf would be NaN), in a key block that other rows of the same tile do see; rows that see
// the key get NaN, as in the reference.
TEST(CpuAttention, NonFiniteValuesAtMaskedKeys) {
  const double inf = std::numeric_limits<double>::infinity();
  for (MaskKind kind : {MaskKind::Causal, MaskKind::SlidingWindow, MaskKind::Custom}) {
    Dims s{1, 2, 1, 70, 70, 8, 8};
    std::vector<HostTensor> in = make_inputs(s, kind, DType::F32, 900);
    HostTensor v = in[2];
    for (int64_t c = 0; c < 8; ++c) {
      v.set_f64(5 * 8 + c, std::nan(""));
      v.set_f64(66 * 8 + c, c % 2 == 0 ? inf : -inf);
    }
    HostTensor expected = run_op1(OpKind::Attention, attn_attrs(kind, 3), in, "reference");
    // Row 0 sees key 0 only (causal / window) or a random subset (custom): some rows are finite.
    int64_t finite = 0;
    for (int64_t i = 0; i < expected.numel(); ++i) finite += std::isfinite(expected.get_f64(i));
    EXPECT_GT(finite, 0) << "kind " << static_cast<int>(kind);
    expect_parity(attn_attrs(kind, 3), in, 2e-5,
                  "non-finite V, kind " + std::to_string(static_cast<int>(kind)));
  }
}

TEST(CpuAttention, EmptyTensors) {
  for (MaskKind kind : kAllKinds)
    for (Dims s : {Dims{0, 2, 1, 4, 4, 8, 8}, Dims{1, 0, 0, 4, 4, 8, 8}, Dims{1, 2, 1, 0, 4, 8, 8},
                   Dims{1, 2, 1, 4, 0, 8, 8}, Dims{1, 2, 2, 4, 6, 0, 8}, Dims{1, 2, 2, 4, 6, 8, 0}})
      expect_parity(attn_attrs(kind, 2), make_inputs(s, kind, DType::F32, 800), 2e-5,
                    "kind " + std::to_string(static_cast<int>(kind)) + " " + s.str());
}

}  // namespace
}  // namespace tessel::testing
