// The cpu backend's elementwise family (Activation, Cast, StopGradient, Binary, Compare, Where,
// GatedActivation, Clamp) against the reference: every variant and claimed dtype, on scalars,
// lane-straddling and threaded sizes, broadcast, non-contiguous and empty inputs; and the
// accuracy of the vector math (simd_math.h) in ulps over a sweep of all f32 bit patterns.
// Run under each ISA with TESSEL_CPU_ISA=portable|avx2|avx512.
#include <cmath>
#include <cstring>

#include "op_test_util.h"
#include "ops/elementwise_dtypes.h"

namespace tessel::testing {
namespace {

constexpr DTypeSet kFloats = dtypes::kFloat | dtypes::kFp8;

std::vector<DType> members(DTypeSet s) {
  std::vector<DType> out;
  for (int i = 0; i < kNumDTypes; ++i)
    if (s.contains(static_cast<DType>(i))) out.push_back(static_cast<DType>(i));
  return out;
}

// Tolerance of one rounding of the dtype (f32 / f64: a few ulp of the vector math).
constexpr PerFloatDType<Tolerance> kTolerance = {.f32 = {4e-6, 1e-6},
                                                 .f64 = {1e-13, 1e-14},
                                                 .f16 = {2e-3, 1e-4},
                                                 .bf16 = {1.6e-2, 1e-3},
                                                 .f8e4m3fn = {0.13, 2e-2},
                                                 .f8e5m2 = {0.26, 2e-2}};

// Values of dtype t: floats in [lo, hi), integers drawn wide and wrapped into t's range.
HostTensor data(DType t, const Shape& shape, uint64_t seed, double lo = -4, double hi = 4) {
  if (is_integer(t))
    return cast_to(cast_to(random_tensor(DType::F64, shape, seed, -1e6, 1e6), DType::I64), t);
  if (t == DType::Bool)
    return cast_to(cast_to(random_tensor(DType::F64, shape, seed, -1, 1), DType::I64), t);
  return cast_to(random_tensor(DType::F64, shape, seed, lo, hi), t);
}

void expect_parity(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& inputs,
                   const std::string& what, DType t) {
  SCOPED_TRACE(what);
  HostTensor want = run_op1(kind, attrs, inputs, "reference");
  HostTensor got = run_op1(kind, attrs, inputs, "cpu");
  auto [rtol, atol] = kTolerance.of(t);
  expect_close(got, want, rtol, atol, what);
}

// The input layouts every kernel must take: contiguous, non-contiguous, empty, scalar, and sizes
// straddling 16 / 32 / 64 lanes and the threading threshold.
std::vector<Shape> shapes() {
  return {{}, {1}, {15}, {17}, {33}, {63}, {65}, {3, 43}, {129}, {0, 5}, {2, 20011}};
}

std::string name_of(OpKind kind, int variant) { return op_info(kind).variant_name(variant); }

TEST(CpuElementwise, ActivationEveryKindDtypeAndLayout) {
  for (int v = 0; v < op_info(OpKind::Activation).num_variants(); ++v) {
    for (DType t : members(activation_dtypes(static_cast<ActivationKind>(v)))) {
      Attrs attrs;
      attrs.set("kind", int64_t{v});
      std::string what = "Activation " + name_of(OpKind::Activation, v) + " " + dtype_name(t);
      for (const Shape& s : shapes()) {
        HostTensor x = data(t, s, 11 + v);
        expect_parity(OpKind::Activation, attrs, {x}, what + " " + shape_str(s), t);
      }
      HostTensor x = data(t, {7, 9}, 5);
      expect_parity(OpKind::Activation, attrs, {non_contiguous(x)}, what + " non-contiguous", t);
      expect_parity(OpKind::Activation, attrs, {broadcast_view(data(t, {1, 9}, 6), {7, 9})},
                    what + " broadcast", t);
    }
  }
  // A non-default alpha.
  for (auto k : {ActivationKind::LeakyRelu, ActivationKind::Elu}) {
    Attrs attrs;
    attrs.set("kind", k).set("alpha", 0.3);
    expect_parity(OpKind::Activation, attrs, {data(DType::F32, {100}, 3)}, "alpha", DType::F32);
  }
}

// Every f32 bit pattern class (a strided sweep: normals, denormals, inf, NaN), in ulps of the
// correctly rounded value the reference computes.
HostTensor f32_sweep(int64_t n) {
  HostTensor x = HostTensor::empty(DType::F32, {n});
  auto p = reinterpret_cast<uint32_t*>(x.data());
  const uint64_t step = (uint64_t{1} << 32) / static_cast<uint64_t>(n);
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<uint32_t>(static_cast<uint64_t>(i) * step + 7);
  const float special[] = {0.0f,    -0.0f,   INFINITY, -INFINITY, NAN,    1e-45f,
                           -1e-45f, 1.0f,    -1.0f,    0.5f,      88.72f, 88.73f,
                           -87.4f,  -103.0f, -104.0f,  1e30f,     -1e30f, 3.0f};
  std::memcpy(p, special, sizeof special);
  return x;
}

// |got - want| in ulps of want, with errors below `floor` not counted (deep-denormal results
// of intermediate underflow, or the reference's own cancellation).
double ulp_error(float got, float want, double floor) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) == std::isnan(got) ? 0 : 1e9;
  if (std::isinf(want) || std::isinf(got)) return got == want ? 0 : 1e9;
  double ulp = std::ldexp(1.0, std::max(std::ilogb(want), -126) - 23);
  return std::fabs(static_cast<double>(got) - want) / std::max(ulp, floor);
}

void expect_ulps(const HostTensor& got, const HostTensor& want, const HostTensor& x, double max_ulp,
                 const std::string& what, double floor = 1e-40) {
  auto g = reinterpret_cast<const float*>(got.data());
  auto w = reinterpret_cast<const float*>(want.data());
  auto xs = reinterpret_cast<const float*>(x.data());
  double worst = 0;
  float at = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double e = ulp_error(g[i], w[i], floor);
    if (e > worst) worst = e, at = xs[i];
  }
  EXPECT_LE(worst, max_ulp) << what << ": worst at x = " << at;
}

TEST(CpuElementwise, VectorMathAccuracyInUlps) {
  HostTensor x = f32_sweep(1 << 17);
  for (auto k : {ActivationKind::Exp,   ActivationKind::Expm1, ActivationKind::Log,
                 ActivationKind::Log1p, ActivationKind::Tanh,  ActivationKind::Sigmoid,
                 ActivationKind::Erf,   ActivationKind::Gelu,  ActivationKind::Sin,
                 ActivationKind::Cos,   ActivationKind::Tan,   ActivationKind::Atan,
                 ActivationKind::Asin,  ActivationKind::Acos,  ActivationKind::Sinh,
                 ActivationKind::Cosh,  ActivationKind::Asinh, ActivationKind::Acosh,
                 ActivationKind::Atanh, ActivationKind::Sqrt,  ActivationKind::Rsqrt,
                 ActivationKind::Floor, ActivationKind::Ceil,  ActivationKind::Round,
                 ActivationKind::Silu}) {
    Attrs attrs;
    attrs.set("kind", k);
    HostTensor want = run_op1(OpKind::Activation, attrs, {x}, "reference");
    HostTensor got = run_op1(OpKind::Activation, attrs, {x}, "cpu");
    // The reference's Gelu, 0.5x(1 + erf(x/sqrt 2)) in f64, cancels to 0 below x = -8; ours
    // goes through erfc there and keeps the tail.
    double floor = k == ActivationKind::Gelu ? 1e-15 : 1e-40;
    expect_ulps(got, want, x, 8, name_of(OpKind::Activation, static_cast<int>(k)), floor);
  }
  // atan2 over pairs of the sweep (b reversed so signs and magnitudes mix).
  HostTensor b = f32_sweep(1 << 17);
  auto bp = reinterpret_cast<float*>(b.data());
  std::reverse(bp, bp + b.numel());
  Attrs attrs;
  attrs.set("op", BinaryOp::Atan2);
  HostTensor want = run_op1(OpKind::Binary, attrs, {x, b}, "reference");
  HostTensor got = run_op1(OpKind::Binary, attrs, {x, b}, "cpu");
  expect_ulps(got, want, x, 8, "Atan2");
}

// Every `step`-th float in [lo, hi] (0 < lo < hi), and their negatives when `negatives`.
// Consecutive floats fill whole vectors, so a kernel's per-vector branches each get runs of them.
HostTensor dense_sweep(float lo, float hi, uint32_t step, bool negatives) {
  uint32_t b0, b1;
  std::memcpy(&b0, &lo, 4);
  std::memcpy(&b1, &hi, 4);
  std::vector<float> v;
  for (uint32_t b = b0; b <= b1; b += step) {
    float f;
    std::memcpy(&f, &b, 4);
    v.push_back(f);
    if (negatives) v.push_back(-f);
  }
  return HostTensor::from_vector(DType::F32, {static_cast<int64_t>(v.size())}, v);
}

// `kind` on the cpu backend within `max_ulp` of the reference over x.
void expect_activation_ulps(ActivationKind kind, const HostTensor& x, double max_ulp) {
  Attrs attrs;
  attrs.set("kind", kind);
  HostTensor want = run_op1(OpKind::Activation, attrs, {x}, "reference");
  HostTensor got = run_op1(OpKind::Activation, attrs, {x}, "cpu");
  expect_ulps(got, want, x, max_ulp, name_of(OpKind::Activation, static_cast<int>(kind)));
}

// tanh's rational (|x| <= 4, simd_math.h) is held to the 4 ulps its comment states, over a
// dense sweep of every 97th float in [1e-6, 4.5] and the negatives (the exp form beyond 4).
TEST(CpuElementwise, TanhRationalWithinFourUlps) {
  expect_activation_ulps(ActivationKind::Tanh, dense_sweep(1e-6f, 4.5f, 97, true), 4);
}

// exp (simd_math.h: one degree-6 polynomial on the reduced argument) within 1 ulp of the
// reference over every 127th float of magnitude in [1e-8, 87.3] and the negatives (results down to
// the smallest normal, 1.6e-38).
TEST(CpuElementwise, ExpWithinOneUlp) {
  expect_activation_ulps(ActivationKind::Exp, dense_sweep(1e-8f, 87.3f, 127, true), 1);
}

// GELU's positive middle (1.3, 3.2], x·G(x - 2.25) (simd_math.h), over every 7th float in
// [1, 3.5]: the form runs wherever no lane of a vector passes 3.2, the erfc tail beyond.
TEST(CpuElementwise, GeluPositiveMiddleWithinTwoUlps) {
  expect_activation_ulps(ActivationKind::Gelu, dense_sweep(1.0f, 3.5f, 7, false), 2);
}

// Operand values that keep each op's integer cases defined (no zero divisor, no negative
// exponent or shift), as the reference would otherwise raise.
HostTensor rhs(BinaryOp op, DType t, const Shape& s, uint64_t seed) {
  if (!is_integer(t)) return data(t, s, seed);
  switch (op) {
    case BinaryOp::Div:
    case BinaryOp::Mod:
    case BinaryOp::FloorMod: {  // nonzero: |b| in [1, 100] with both signs
      HostTensor b = cast_to(random_tensor(DType::F64, s, seed, 1, 100), DType::I64);
      auto p = reinterpret_cast<int64_t*>(b.data());
      for (int64_t i = 0; i < b.numel(); ++i)
        if (t != DType::U8 && i % 3 == 1) p[i] = -p[i];
      if (b.numel() > 2 && t != DType::U8) p[2] = -1;
      return cast_to(b, t);
    }
    case BinaryOp::Pow:
      return cast_to(random_tensor(DType::F64, s, seed, 0, 9), t);
    case BinaryOp::Shl:
    case BinaryOp::Shr:
      return cast_to(random_tensor(DType::F64, s, seed, 0, 8.0 * dtype_size(t) + 3), t);
    default:
      return data(t, s, seed);
  }
}

TEST(CpuElementwise, BinaryEveryOpDtypeAndBroadcast) {
  for (int v = 0; v < op_info(OpKind::Binary).num_variants(); ++v) {
    auto op = static_cast<BinaryOp>(v);
    for (DType t : members(binary_dtypes(op))) {
      Attrs attrs;
      attrs.set("op", int64_t{v});
      std::string what = "Binary " + name_of(OpKind::Binary, v) + " " + dtype_name(t);
      for (const Shape& s : shapes())
        expect_parity(OpKind::Binary, attrs, {data(t, s, 1 + v), rhs(op, t, s, 2 + v)},
                      what + " " + shape_str(s), t);
      // Broadcasting: row x column, scalar x vector, vector x scalar, non-contiguous.
      expect_parity(OpKind::Binary, attrs, {data(t, {5, 1}, 3), rhs(op, t, {1, 37}, 4)},
                    what + " outer", t);
      expect_parity(OpKind::Binary, attrs, {data(t, {}, 3), rhs(op, t, {70}, 4)},
                    what + " scalar-vector", t);
      expect_parity(OpKind::Binary, attrs, {data(t, {70}, 3), rhs(op, t, {}, 4)},
                    what + " vector-scalar", t);
      expect_parity(OpKind::Binary, attrs,
                    {non_contiguous(data(t, {6, 11}, 3)), non_contiguous(rhs(op, t, {6, 11}, 4))},
                    what + " non-contiguous", t);
      expect_parity(OpKind::Binary, attrs,
                    {broadcast_view(data(t, {1, 40}, 3), {3, 40}), rhs(op, t, {3, 40}, 4)},
                    what + " broadcast view", t);
    }
  }
}

TEST(CpuElementwise, BinaryFloatSpecialValues) {
  const double inf = INFINITY, nan = NAN;
  std::vector<double> av = {0, -0.0, 1, -1, inf, -inf, nan, 2.5, -7, 1e-40, 3, 0};
  std::vector<double> bv = {0, 1, -0.0, inf, -inf, 2, 1, nan, 3, -2, 0.5, -3};
  for (int v = 0; v < op_info(OpKind::Binary).num_variants(); ++v) {
    for (DType t : members(binary_dtypes(static_cast<BinaryOp>(v)) & kFloats)) {
      Attrs attrs;
      attrs.set("op", int64_t{v});
      HostTensor a = cast_to(f64({12}, av), t), b = cast_to(f64({12}, bv), t);
      expect_parity(OpKind::Binary, attrs, {a, b},
                    "specials " + name_of(OpKind::Binary, v) + " " + dtype_name(t), t);
    }
  }
}

// Pow with an exponent of 2 in every lane is a product (no libm call): bit for bit the
// reference's double pow rounded to float, overflow to inf, denormal squares, ±0, ±inf and NaN.
TEST(CpuElementwise, BinaryPowSquareIsExact) {
  std::vector<double> av = {0,  -0.0,  1,     -1,   INFINITY, -INFINITY, NAN,    2.5,
                            -7, 1e-40, 3e-20, 1e19, -2e19,    1e-23,     -3e-23, 65535.9};
  HostTensor rnd = random_tensor(DType::F32, {48}, 5, -1e4, 1e4);
  for (int64_t i = 0; i < rnd.numel(); ++i) av.push_back(rnd.get_f64(i));
  const auto n = static_cast<int64_t>(av.size());
  const HostTensor a = cast_to(f64({n}, av), DType::F32);
  const HostTensor b = cast_to(f64({n}, std::vector<double>(av.size(), 2.0)), DType::F32);
  Attrs attrs;
  attrs.set("op", BinaryOp::Pow);
  expect_close(run_op1(OpKind::Binary, attrs, {a, b}, "cpu"),
               run_op1(OpKind::Binary, attrs, {a, b}, "reference"), 0, 0, "pow(a, 2)");
}

TEST(CpuElementwise, BinaryIntegerErrorsAreValueErrors) {
  for (auto op : {BinaryOp::Div, BinaryOp::Mod, BinaryOp::FloorMod, BinaryOp::Pow, BinaryOp::Shl,
                  BinaryOp::Shr}) {
    for (DType t : {DType::I32, DType::I8, DType::I64}) {
      Attrs attrs;
      attrs.set("op", op);
      bool zero = op == BinaryOp::Div || op == BinaryOp::Mod || op == BinaryOp::FloorMod;
      HostTensor a = cast_to(i64({40}, std::vector<int64_t>(40, 5)), t);
      std::vector<int64_t> bv(40, 2);
      bv[37] = zero ? 0 : -1;
      HostTensor b = cast_to(i64({40}, bv), t);
      expect_error(
          ErrorKind::Value,
          [&] {
            run_op(OpKind::Binary, attrs, {a, b}, "cpu");
          },
          name_of(OpKind::Binary, static_cast<int>(op)));
    }
  }
}

TEST(CpuElementwise, CompareEveryOpAndDtype) {
  for (int v = 0; v < static_cast<int>(CmpOp::Ge) + 1; ++v) {
    auto op = static_cast<CmpOp>(v);
    for (DType t : members(compare_dtypes(op))) {
      Attrs attrs;
      attrs.set("op", int64_t{v});
      std::string what = std::string("Compare ") + std::to_string(v) + " " + dtype_name(t);
      // Few distinct values so equality is common; NaNs in the float ones.
      auto vals = [&](const Shape& s, uint64_t seed) {
        HostTensor x = cast_to(cast_to(random_tensor(DType::F64, s, seed, -3, 3), DType::I64), t);
        if (is_float(t) && x.numel() > 3) x.set_f64(3, NAN);
        return x;
      };
      for (const Shape& s : shapes())
        expect_parity(OpKind::Compare, attrs, {vals(s, 1), vals(s, 2)}, what + shape_str(s),
                      DType::Bool);
      expect_parity(OpKind::Compare, attrs, {vals({4, 1}, 1), vals({1, 33}, 2)}, what + " outer",
                    DType::Bool);
      expect_parity(OpKind::Compare, attrs, {vals({70}, 1), vals({}, 2)}, what + " scalar",
                    DType::Bool);
      expect_parity(OpKind::Compare, attrs,
                    {non_contiguous(vals({6, 11}, 1)), non_contiguous(vals({6, 11}, 2))},
                    what + " non-contiguous", DType::Bool);
    }
  }
}

TEST(CpuElementwise, WhereEveryDtypeAndBroadcast) {
  for (DType t : members(dtypes::kAll)) {
    std::string what = std::string("Where ") + dtype_name(t);
    auto cond = [](const Shape& s, uint64_t seed) { return data(DType::Bool, s, seed); };
    for (const Shape& s : shapes())
      expect_parity(OpKind::Where, {}, {cond(s, 1), data(t, s, 2), data(t, s, 3)},
                    what + shape_str(s), t);
    expect_parity(OpKind::Where, {},
                  {cond({4, 1, 1}, 1), data(t, {1, 5, 1}, 2), data(t, {1, 1, 33}, 3)},
                  what + " three-way broadcast", t);
    expect_parity(
        OpKind::Where, {},
        {non_contiguous(cond({6, 11}, 1)), non_contiguous(data(t, {6, 11}, 2)), data(t, {}, 3)},
        what + " non-contiguous", t);
  }
}

TEST(CpuElementwise, GatedActivationEveryKindAndAxis) {
  for (int v = 0; v < op_info(OpKind::GatedActivation).num_variants(); ++v) {
    for (DType t : members(gated_activation_dtypes(static_cast<ActivationKind>(v)))) {
      std::string what = "Gated " + name_of(OpKind::GatedActivation, v) + " " + dtype_name(t);
      for (auto [shape, axis] : std::vector<std::pair<Shape, int64_t>>{{{2}, -1},
                                                                       {{3, 34}, -1},
                                                                       {{8, 5}, 0},
                                                                       {{2, 66, 3}, 1},
                                                                       {{0, 4}, 1},
                                                                       {{4, 9000}, -1}}) {
        Attrs attrs;
        attrs.set("kind", int64_t{v}).set("axis", axis);
        expect_parity(OpKind::GatedActivation, attrs, {data(t, shape, 3)},
                      what + " " + shape_str(shape), t);
      }
      Attrs attrs;
      attrs.set("kind", int64_t{v}).set("axis", int64_t{0});
      expect_parity(OpKind::GatedActivation, attrs, {non_contiguous(data(t, {6, 7}, 3))},
                    what + " non-contiguous", t);
    }
  }
}

TEST(CpuElementwise, ClampFloatsAndIntegers) {
  for (DType t : members(kFloats | dtypes::kInt)) {
    for (auto [lo, hi] : std::vector<std::pair<double, double>>{{-1.5, 2.25},
                                                                {0.5, 0.7},
                                                                {3, -3},
                                                                {-INFINITY, 1},
                                                                {-1e30, 1e30},
                                                                {-INFINITY, INFINITY}}) {
      Attrs attrs;
      attrs.set("min", lo).set("max", hi);
      std::string what = std::string("Clamp ") + dtype_name(t) + " [" + std::to_string(lo) + ", " +
                         std::to_string(hi) + "]";
      HostTensor x = data(t, {101}, 4);
      if (is_float(t)) x.set_f64(5, NAN);
      expect_parity(OpKind::Clamp, attrs, {x}, what, t);
      expect_parity(OpKind::Clamp, attrs, {non_contiguous(data(t, {5, 9}, 4))}, what + " nc", t);
      expect_parity(OpKind::Clamp, attrs, {data(t, {3, 20000}, 4)}, what + " big", t);
    }
  }
}

TEST(CpuElementwise, StopGradientEveryDtype) {
  for (DType t : members(dtypes::kEvery)) {
    HostTensor x = cast_to(random_tensor(DType::F64, {6, 11}, 3, -3, 3), t);
    for (const HostTensor& in : {x, non_contiguous(x)}) {
      HostTensor want = run_op1(OpKind::StopGradient, {}, {in}, "reference");
      HostTensor got = run_op1(OpKind::StopGradient, {}, {in}, "cpu");
      ASSERT_EQ(got.numel(), want.numel());
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.numel() * dtype_size(t)))
          << dtype_name(t);
    }
  }
}

// Cast is bit-exact: every pair of dtypes, both saturate modes, with specials and values past
// each integer and fp8 range.
TEST(CpuElementwise, CastEveryPairBitExact) {
  std::vector<double> vals = {0,      -0.0, 1,     -1,     0.5,     -2.5,  3.75,     127.5,
                              -128.7, 255,  256.4, -32769, 65504,   70000, 1e10,     -3e9,
                              448,    464,  465,   1e-3,   1e-8,    NAN,   INFINITY, -INFINITY,
                              57344,  1e20, -1e19, 9.3e18, 1.7e308, 33.3};
  HostTensor base = f64({static_cast<int64_t>(vals.size())}, vals);
  HostTensor ints = i64({6}, {INT64_MAX, INT64_MIN, (int64_t{1} << 53) + 1, (int64_t{1} << 24) + 1,
                              -(int64_t{1} << 40) - 3, 65519});
  for (DType from : members(dtypes::kEvery)) {
    std::vector<HostTensor> inputs = {cast_to(base, from)};
    if (is_integer(from)) inputs.push_back(cast_to(ints, from));
    HostTensor big = cast_to(random_tensor(DType::F64, {2, 20000}, 9, -300, 300), from);
    inputs.push_back(
        non_contiguous(cast_to(random_tensor(DType::F64, {7, 5}, 9, -300, 300), from)));
    for (DType to : members(dtypes::kEvery)) {
      for (bool sat : {true, false}) {
        Attrs attrs;
        attrs.set("to", to).set("saturate", sat);
        std::vector<HostTensor> cases = inputs;
        if (sat) cases.push_back(big);
        for (const HostTensor& x : cases) {
          HostTensor want = run_op1(OpKind::Cast, attrs, {x}, "reference");
          HostTensor got = run_op1(OpKind::Cast, attrs, {x}, "cpu");
          ASSERT_EQ(got.numel(), want.numel());
          bool same = std::memcmp(got.data(), want.data(), want.numel() * dtype_size(to)) == 0;
          if (!same) {  // NaN payloads may differ; the values must not
            SCOPED_TRACE(std::string("Cast ") + dtype_name(from) + " -> " + dtype_name(to));
            expect_close(got, want, 0, 0);
          }
        }
      }
    }
  }
}

// f32 -> bf16 bit-exact over patterns that reach every rounding case in whole vectors: ties to
// even both ways, carries into the exponent and to infinity, subnormals, and NaNs whose payload
// lies only in the dropped half (they must stay NaN).
TEST(CpuElementwise, CastF32ToBf16EveryRoundingCase) {
  std::vector<uint32_t> bits;
  for (uint32_t hi : {0x0000u, 0x0001u, 0x3f80u, 0x3f81u, 0x7f7fu, 0x7f80u, 0x7fc0u, 0x8000u,
                      0xbf80u, 0xff7fu, 0xff80u, 0x0080u, 0x007fu, 0x4b00u, 0x7f81u, 0xffc1u})
    for (uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu, 0x4000u, 0xc000u})
      bits.push_back(hi << 16 | lo);
  for (uint32_t i = 0; i < 40000; ++i) bits.push_back(i * 107377u);  // spread over all patterns
  std::vector<float> f(bits.size());
  std::memcpy(f.data(), bits.data(), bits.size() * 4);
  HostTensor x = HostTensor::empty(DType::F32, {static_cast<int64_t>(f.size())});
  std::memcpy(x.data(), f.data(), f.size() * 4);
  Attrs attrs;
  attrs.set("to", DType::BF16).set("saturate", true);
  HostTensor want = run_op1(OpKind::Cast, attrs, {x}, "reference");
  HostTensor got = run_op1(OpKind::Cast, attrs, {x}, "cpu");
  const auto* w = reinterpret_cast<const uint16_t*>(want.data());
  const auto* g = reinterpret_cast<const uint16_t*>(got.data());
  for (size_t i = 0; i < bits.size(); ++i) {
    const bool nan = (w[i] & 0x7fff) > 0x7f80;
    if (nan)
      EXPECT_GT(g[i] & 0x7fff, 0x7f80) << std::hex << bits[i];
    else
      EXPECT_EQ(g[i], w[i]) << std::hex << bits[i];
  }
}

}  // namespace
}  // namespace tessel::testing
