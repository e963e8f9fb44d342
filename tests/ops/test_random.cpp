// Random: the Philox4x32-10 generator (Random123 known answers), RngUniform / RngNormal fills
// (exact values, determinism, statistics, independence from the fill's size) and Dropout (mask,
// scaling, p = 0, bit-identical decomposition), with bad-input errors.
#include <cmath>
#include <map>

#include "op_test_util.h"
#include "runtime/rng.h"

namespace tessel::testing {
namespace {

HostTensor uniform(const Shape& shape, int64_t seed, double low = 0, double high = 1,
                   DType dtype = DType::F64) {
  return run_op1(OpKind::RngUniform,
                 Attrs()
                     .set("shape", shape)
                     .set("seed", seed)
                     .set("low", low)
                     .set("high", high)
                     .set("dtype", dtype),
                 {});
}

HostTensor normal(const Shape& shape, int64_t seed, double mean = 0, double std = 1,
                  DType dtype = DType::F64) {
  return run_op1(OpKind::RngNormal,
                 Attrs()
                     .set("shape", shape)
                     .set("seed", seed)
                     .set("mean", mean)
                     .set("std", std)
                     .set("dtype", dtype),
                 {});
}

HostTensor dropout(const HostTensor& x, double p, int64_t seed) {
  return run_op1(OpKind::Dropout, Attrs().set("p", p).set("seed", seed), {x});
}

// Same bits (bytes), element by element.
void expect_same_bits(const HostTensor& a, const HostTensor& b, const std::string& what) {
  ASSERT_EQ(a.dtype, b.dtype) << what;
  ASSERT_EQ(a.shape, b.shape) << what;
  HostTensor ca = a.contiguous(), cb = b.contiguous();
  int size = dtype_size(a.dtype), bad = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (std::memcmp(ca.element_ptr(i), cb.element_ptr(i), size) != 0 && bad++ < 8)
      ADD_FAILURE() << what << " element " << i << ": " << ca.get_f64(i) << " vs " << cb.get_f64(i);
}

struct Moments {
  double mean = 0, var = 0;
};
Moments moments(const HostTensor& t) {
  Moments m;
  int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) m.mean += t.get_f64(i);
  m.mean /= n;
  for (int64_t i = 0; i < n; ++i) m.var += (t.get_f64(i) - m.mean) * (t.get_f64(i) - m.mean);
  m.var /= n - 1;
  return m;
}

// ---- The generator ---------------------------------------------------------------------------

TEST(RandomPhilox, Random123KnownAnswers) {
  // rng.h: words 0-1 = counter (low word first), words 2-3 = stream, key = seed (low word first).
  EXPECT_EQ(rng::philox4x32(0, 0, 0), (rng::Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(rng::philox4x32(~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}),
            (rng::Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(rng::philox4x32(0x85a308d3243f6a88ull, 0x0370734413198a2eull, 0x299f31d0a4093822ull),
            (rng::Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

// ---- RngUniform / RngNormal ------------------------------------------------------------------

TEST(RandomFill, ElementIIsTheGeneratorsDrawI) {
  HostTensor u = uniform({3, 5}, 42, -2.0, 3.0);
  ASSERT_EQ(u.shape, (Shape{3, 5}));
  for (int64_t i = 0; i < 15; ++i) EXPECT_EQ(u.get_f64(i), -2.0 + 5.0 * rng::uniform(42, i)) << i;
  HostTensor n = normal({7}, 9, 1.5, 0.5);
  for (int64_t i = 0; i < 7; ++i) EXPECT_EQ(n.get_f64(i), 1.5 + 0.5 * rng::normal(9, i)) << i;
  // Low precision: the f64 value rounded once.
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F8E4M3FN, DType::F8E5M2}) {
    HostTensor ul = uniform({64}, 5, -4, 4, t), nl = normal({64}, 5, 0, 3, t);
    HostTensor ref_u = HostTensor::empty(t, {64}), ref_n = HostTensor::empty(t, {64});
    for (int64_t i = 0; i < 64; ++i) {
      ref_u.set_f64(i, -4 + 8 * rng::uniform(5, i));
      ref_n.set_f64(i, 3 * rng::normal(5, i));
    }
    EXPECT_EQ(ul.dtype, t);
    expect_same_bits(ul, ref_u, std::string("uniform ") + dtype_name(t));
    expect_same_bits(nl, ref_n, std::string("normal ") + dtype_name(t));
  }
}

TEST(RandomFill, DeterministicPerSeedAndDifferentAcrossSeeds) {
  for (auto fill : {+[](int64_t s) {
                      return uniform({4, 25}, s);
                    },
                    +[](int64_t s) {
                      return normal({4, 25}, s);
                    }}) {
    HostTensor a = fill(7), b = fill(7), c = fill(8), d = fill(-7);
    expect_same_bits(a, b, "same seed");
    int same_c = 0, same_d = 0;
    for (int64_t i = 0; i < a.numel(); ++i) {
      same_c += a.get_f64(i) == c.get_f64(i);
      same_d += a.get_f64(i) == d.get_f64(i);
    }
    EXPECT_LE(same_c, 1) << "seeds 7 and 8 draw the same values";
    EXPECT_LE(same_d, 1) << "seeds 7 and -7 draw the same values";
  }
}

TEST(RandomFill, ElementDoesNotDependOnTheFillsSize) {
  HostTensor small = uniform({10}, 3), big = uniform({1000}, 3), shaped = uniform({2, 5}, 3);
  HostTensor nsmall = normal({10}, 3), nbig = normal({20, 50}, 3);
  for (int64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(small.get_f64(i), big.get_f64(i)) << i;
    EXPECT_EQ(small.get_f64(i), shaped.get_f64(i)) << i;
    EXPECT_EQ(nsmall.get_f64(i), nbig.get_f64(i)) << i;
  }
}

TEST(RandomFill, Statistics) {
  const int64_t n = 100000;
  HostTensor u = uniform({100, 1000}, 1234, 2.0, 5.0);
  Moments mu = moments(u);
  // U(2, 5): mean 3.5, variance 9/12; standard errors sqrt(var/n) and ~var·sqrt(0.8/n).
  EXPECT_NEAR(mu.mean, 3.5, 5 * std::sqrt(0.75 / n));
  EXPECT_NEAR(mu.var, 0.75, 5 * 0.75 * std::sqrt(0.8 / n));
  double lo = INFINITY, hi = -INFINITY;
  int below_quarter = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = u.get_f64(i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    below_quarter += v < 2.75;
  }
  EXPECT_GE(lo, 2.0);
  EXPECT_LT(hi, 5.0);
  EXPECT_NEAR(below_quarter / double(n), 0.25, 5 * std::sqrt(0.25 * 0.75 / n));

  HostTensor g = normal({n}, 99, 3.0, 2.0);
  Moments mg = moments(g);
  EXPECT_NEAR(mg.mean, 3.0, 5 * 2.0 / std::sqrt(double(n)));
  EXPECT_NEAR(mg.var, 4.0, 5 * 4.0 * std::sqrt(2.0 / n));
  int within_one_sd = 0;
  for (int64_t i = 0; i < n; ++i) within_one_sd += std::abs(g.get_f64(i) - 3.0) < 2.0;
  EXPECT_NEAR(within_one_sd / double(n), 0.682689, 5 * std::sqrt(0.68 * 0.32 / n));
}

TEST(RandomFill, EmptyAndDegenerateFills) {
  EXPECT_EQ(uniform({0, 3}, 1).numel(), 0);
  HostTensor c = uniform({4}, 1, 2.5, 2.5);
  expect_close(c, {2.5, 2.5, 2.5, 2.5}, 0, 0);
  HostTensor z = normal({3}, 1, -1.0, 0.0);
  expect_close(z, {-1, -1, -1}, 0, 0);
}

TEST(RandomFill, BadAttributes) {
  expect_error(
      ErrorKind::Shape,
      [] {
        uniform({2, -1}, 0);
      },
      "negative dim");
  expect_error(
      ErrorKind::Shape, [] { normal({-3}, 0); }, "negative dim (normal)");
  expect_error(
      ErrorKind::DType, [] { uniform({2}, 0, 0, 1, DType::I32); }, "integer dtype");
  expect_error(
      ErrorKind::DType, [] { normal({2}, 0, 0, 1, DType::C64); }, "complex dtype");
  expect_error(
      ErrorKind::Value, [] { uniform({2}, 0, 1, 0); }, "low > high");
  expect_error(
      ErrorKind::Value, [] { uniform({2}, 0, 0, INFINITY); }, "infinite high");
  expect_error(
      ErrorKind::Value, [] { normal({2}, 0, 0, -1); }, "negative std");
  expect_error(
      ErrorKind::Value, [] { normal({2}, 0, NAN, 1); }, "NaN mean");
}

// ---- Dropout --------------------------------------------------------------------------------

TEST(RandomDropout, KeepsByTheGeneratorAndScales) {
  const double p = 0.3;
  HostTensor x = random_tensor(DType::F64, {4, 7, 5}, 11, -3, 3);
  HostTensor y = dropout(non_contiguous(x), p, 77);
  ASSERT_EQ(y.shape, x.shape);
  const double threshold = static_cast<float>(p);
  int kept = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    bool keep = rng::uniform(77, i) >= threshold;
    kept += keep;
    EXPECT_EQ(y.get_f64(i), keep ? x.get_f64(i) * (1 / (1 - p)) : 0.0) << i;
  }
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, x.numel());
  // The threshold is p rounded to f32: with u_i in [0.25, 1) (a multiple of 2^-24),
  // p = u_i + 2^-26 rounds down to u_i in f32, so element i is kept although u_i < p.
  int64_t i = 0;
  while (rng::uniform(5, i) < 0.25) ++i;
  const double p_above = rng::uniform(5, i) + std::ldexp(1.0, -26);
  ASSERT_LT(p_above, 1.0);
  HostTensor ones = f64({i + 1}, std::vector<double>(i + 1, 1.0));
  EXPECT_NE(dropout(ones, p_above, 5).get_f64(i), 0.0) << "keep iff u >= (float)p";
}

TEST(RandomDropout, DropRateAndScaleOverManyElements) {
  const int64_t n = 100000;
  HostTensor x = HostTensor::empty(DType::F32, {n});
  for (int64_t i = 0; i < n; ++i) x.set_f64(i, 1.0);
  HostTensor y = dropout(x, 0.6, 2024);
  int dropped = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = y.get_f64(i);
    if (v == 0.0)
      ++dropped;
    else
      EXPECT_EQ(v, static_cast<float>(1.0 / 0.4)) << i;
  }
  EXPECT_NEAR(dropped / double(n), 0.6, 5 * std::sqrt(0.6 * 0.4 / n));
}

TEST(RandomDropout, ZeroPIsTheIdentityAndDroppedIsZero) {
  HostTensor x = f32({2, 3}, {1.5, -0.0, NAN, INFINITY, -7, 3e38});
  HostTensor y = dropout(non_contiguous(x), 0.0, 3);
  expect_same_bits(y, x, "p = 0");
  // Dropped elements are exactly +0, even where x is NaN or Inf.
  HostTensor special = f32({64}, std::vector<double>(64, NAN));
  HostTensor d = dropout(special, 0.5, 8);
  int zeros = 0;
  for (int64_t i = 0; i < 64; ++i) {
    bool keep = rng::uniform(8, i) >= 0.5;
    if (!keep) {
      EXPECT_EQ(d.get_f64(i), 0.0);
      EXPECT_FALSE(std::signbit(d.get_f64(i)));
      ++zeros;
    } else {
      EXPECT_TRUE(std::isnan(d.get_f64(i)));
    }
  }
  EXPECT_GT(zeros, 0);
}

// The decomposition (RngUniform f32 + Compare Ge + Mul + Where) against the native kernel, bit
// for bit, in every claimed dtype.
TEST(RandomDropout, DecompositionIsBitIdenticalToTheKernel) {
  const Backend& ref = backend("reference");
  for (DType t :
       {DType::F32, DType::F64, DType::F16, DType::BF16, DType::F8E4M3FN, DType::F8E5M2}) {
    for (double p : {0.0, 0.1, 0.37, 0.5, 0.9}) {
      HostTensor x = random_tensor(t, {3, 17, 5}, 31, -8, 8);
      Graph g;
      Value xv = g.input(t, x.shape);
      g.outputs = {g.add1(OpKind::Dropout, Attrs().set("p", p).set("seed", int64_t{12345}), {xv})};
      Graph d = decompose(g);
      std::map<OpKind, int> counts;
      for (const Node& n : d.nodes()) ++counts[n.kind];
      ASSERT_EQ(counts[OpKind::Dropout], 0);
      EXPECT_EQ(counts[OpKind::RngUniform], 1);
      EXPECT_EQ(counts[OpKind::Compare], 1);
      EXPECT_EQ(counts[OpKind::Where], 1);
      std::string what = std::string(dtype_name(t)) + " p=" + std::to_string(p);
      for (const HostTensor& in : {x, non_contiguous(x)}) {
        HostTensor native = compile_for(g, ref)->run(std::vector<HostTensor>{in}).at(0);
        HostTensor decomposed = compile_for(d, ref)->run(std::vector<HostTensor>{in}).at(0);
        expect_same_bits(decomposed, native, what);
      }
    }
  }
}

TEST(RandomDropout, BadInputs) {
  for (double p : {1.0, 1.5, -0.1, static_cast<double>(NAN)})
    expect_error(
        ErrorKind::Value,
        [&] {
          dropout(f32({2}, {1, 2}), p, 0);
        },
        "p = " + std::to_string(p));
  expect_error(
      ErrorKind::DType,
      [] {
        dropout(i64({2}, {1, 2}), 0.5, 0);
      },
      "integer input");
}

}  // namespace
}  // namespace tessel::testing
