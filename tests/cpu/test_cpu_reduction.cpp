// cpu reduction family against the reference: Reduce (every ReduceOp, axes sets, keepdims,
// correction), Softmax / log-softmax, the scans, ArgMax / ArgMin, TopK, Sort, ArgSort and Sample,
// over every claimed dtype, lane-straddling sizes, broadcast, non-contiguous and empty inputs.
#include <cmath>
#include <cstring>
#include <limits>

#include "op_test_util.h"

namespace tessel::testing {
namespace {

// One rounding of the dtype (the cpu computes narrow floats in f32, the reference in f64).
constexpr PerFloatDType<Tolerance> kTolerance = {.f32 = {2e-5, 1e-5},
                                                 .f64 = {1e-10, 1e-10},
                                                 .f16 = {2e-3, 1e-3},
                                                 .bf16 = {1.6e-2, 1e-2},
                                                 .f8e4m3fn = {0.13, 0.02},
                                                 .f8e5m2 = {0.26, 0.02}};

std::string case_name(OpKind kind, const Shape& s, DType dt, const std::string& extra) {
  return std::string(op_info(kind).name) + " " + shape_str(s) + " " + dtype_name(dt) + " " + extra;
}

// Runs on cpu and reference and compares every output; tolerance scaled by `scale`.
void check(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& in,
           const std::string& what, double scale = 1) {
  auto want = run_op(kind, attrs, in, "reference");
  auto got = run_op(kind, attrs, in, "cpu");
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].dtype, want[i].dtype) << what;
    Tolerance t = kTolerance.of(want[i].dtype);
    expect_close(got[i], want[i], t.rtol * scale, t.atol * scale,
                 what + " out " + std::to_string(i));
  }
}

HostTensor data(DType dt, const Shape& s, uint64_t seed, double lo = -3, double hi = 3) {
  if (is_integer(dt)) return cast_to(random_tensor(DType::F64, s, seed, -100, 100), dt);
  if (dt == DType::Bool) return cast_to(random_tensor(DType::F64, s, seed, -1, 2), dt);
  return cast_to(random_tensor(DType::F64, s, seed, lo, hi), dt);
}

const Shape kShapes[] = {{},         {1},          {15},  {17},   {33},      {63},
                         {65},       {127},        {129}, {3, 5}, {4, 1000}, {2, 3, 17},
                         {7, 33, 5}, {5, 3, 2, 9}, {0},   {3, 0}, {2, 0, 3}};

std::vector<std::vector<int64_t>> axes_for(int rank) {
  std::vector<std::vector<int64_t>> r = {{}};
  if (rank >= 1) r.push_back({-1});
  if (rank >= 2) r.push_back({0});
  if (rank >= 3) {
    r.push_back({1});
    r.push_back({0, 2});
  }
  if (rank >= 4) r.push_back({1, 3});
  return r;
}

bool reduce_accepts(ReduceOp op, DType dt) {
  bool exact = is_integer(dt) || dt == DType::Bool;
  if (dt == DType::Bool) return op == ReduceOp::Max || op == ReduceOp::Min;
  if (!exact) return true;
  return op == ReduceOp::Sum || op == ReduceOp::Max || op == ReduceOp::Min ||
         op == ReduceOp::Prod || op == ReduceOp::L1 || op == ReduceOp::SumSquare;
}

std::vector<DType> all_types() {
  std::vector<DType> r(std::begin(kFloatDTypes), std::end(kFloatDTypes));
  r.insert(r.end(), std::begin(kIntDTypes), std::end(kIntDTypes));
  r.push_back(DType::Bool);
  return r;
}

TEST(CpuReduction, ReduceEveryOpAxesAndDtype) {
  for (int v = 0; v < 11; ++v) {
    auto op = static_cast<ReduceOp>(v);
    for (DType dt : all_types()) {
      if (!reduce_accepts(op, dt)) continue;
      for (const Shape& s : kShapes) {
        int64_t numel = shape_numel(s);
        for (const auto& axes : axes_for(static_cast<int>(s.size()))) {
          int64_t count = 1;
          for (size_t d = 0; d < s.size(); ++d) {
            bool red = axes.empty();
            for (int64_t a : axes)
              red |= (a < 0 ? a + static_cast<int64_t>(s.size()) : a) == static_cast<int64_t>(d);
            if (red) count *= s[d];
          }
          if (count == 0 && (op == ReduceOp::Max || op == ReduceOp::Min)) continue;
          for (bool keep : {false, true}) {
            Attrs a = Attrs().set("op", op).set("axes", axes).set("keepdims", keep);
            if (op == ReduceOp::Var || op == ReduceOp::Std) a.set("correction", v % 2);
            // Products of many values leave the range of narrow floats: keep them near 1.
            bool prod = op == ReduceOp::Prod;
            HostTensor x = prod ? data(dt, s, 7 + numel, 0.5, 1.5) : data(dt, s, 7 + numel);
            std::string w = case_name(OpKind::Reduce, s, dt,
                                      "op " + std::to_string(v) + " axes " + shape_str(axes));
            // A sum of N roundings of the narrow input grows like sqrt(N) ulps at most.
            double scale = op == ReduceOp::Var || op == ReduceOp::Std ? 4 : 2;
            if (prod && numel > 100) scale = 30;
            check(OpKind::Reduce, a, {x}, w, scale);
            if (numel > 1 && !keep) check(OpKind::Reduce, a, {non_contiguous(x)}, w + " nc", scale);
          }
        }
      }
    }
  }
}

TEST(CpuReduction, ReduceLongRowsBroadcastAndSpecialValues) {
  // Long enough to split one row over threads, and column reductions over many rows.
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min,
                      ReduceOp::LogSumExp, ReduceOp::L2, ReduceOp::Var, ReduceOp::Std}) {
    HostTensor x = data(DType::F32, {300001}, 3);
    check(OpKind::Reduce, Attrs().set("op", op), {x}, "long row", 5);
    HostTensor y = data(DType::F32, {5000, 37}, 4);
    check(OpKind::Reduce, Attrs().set("op", op).set("axes", std::vector<int64_t>{0}), {y},
          "long column", 5);
    HostTensor z = data(DType::F64, {1, 37}, 5);
    check(OpKind::Reduce, Attrs().set("op", op).set("axes", std::vector<int64_t>{1}),
          {broadcast_view(z, {64, 37})}, "broadcast", 5);
    check(OpKind::Reduce, Attrs().set("op", op).set("axes", std::vector<int64_t>{0}),
          {broadcast_view(z, {64, 37})}, "broadcast axis 0", 5);
  }
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  HostTensor s = f32({4, 3}, {1, nan, 2, -inf, -inf, -inf, inf, 1, 2, -0.0, 0.0, 5});
  for (int v = 0; v < 11; ++v)
    for (int64_t axis : {0, 1})
      check(OpKind::Reduce,
            Attrs().set("op", static_cast<ReduceOp>(v)).set("axes", std::vector<int64_t>{axis}),
            {s}, "special op " + std::to_string(v));
  // Integer sums wrap modulo 2^bits like the reference.
  HostTensor big = cast_to(random_tensor(DType::F64, {1000}, 9, 0, 127), DType::I8);
  check(OpKind::Reduce, Attrs().set("op", ReduceOp::Sum), {big}, "i8 wrap");
  check(OpKind::Reduce, Attrs().set("op", ReduceOp::SumSquare), {big}, "i8 sumsquare");
  expect_error(ErrorKind::Value, [&] {
    run_op(OpKind::Reduce, Attrs().set("op", ReduceOp::Max).set("axes", std::vector<int64_t>{1}),
           {data(DType::F32, {3, 0}, 1)}, "cpu");
  });
}

TEST(CpuReduction, SoftmaxAndLogSoftmax) {
  for (DType dt : kFloatDTypes)
    for (const Shape& s : kShapes)
      for (int64_t axis : {-1, 0, 1}) {
        if (s.size() < 2 && axis == 1) continue;
        for (bool log : {false, true}) {
          Attrs a = Attrs().set("axis", axis).set("log", log);
          HostTensor x = data(dt, s, 11 + shape_numel(s), -8, 8);
          std::string w = case_name(OpKind::Softmax, s, dt, log ? "log" : "");
          check(OpKind::Softmax, a, {x}, w, 2);
          if (shape_numel(s) > 1) check(OpKind::Softmax, a, {non_contiguous(x)}, w + " nc", 2);
        }
      }
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  HostTensor sp = f32({4, 3}, {1, nan, 2, -inf, -inf, -inf, inf, 1, 2, -100, 0, 100});
  for (bool log : {false, true})
    for (int64_t axis : {0, 1})
      check(OpKind::Softmax, Attrs().set("axis", axis).set("log", log), {sp}, "special");
  // Logits far from zero: e^(x - max) keeps the digits that m·log2e's rounding drops.
  for (double c : {3000.0, -3.0e5}) {
    HostTensor far = data(DType::F32, {16, 300}, 4, c - 10, c + 10);
    check(OpKind::Softmax, Attrs(), {far}, "logits near " + std::to_string(c));
    check(OpKind::Softmax, Attrs().set("log", true), {far},
          "log, logits near " + std::to_string(c));
  }
  HostTensor big = data(DType::F32, {64, 4096}, 2, -20, 20);
  check(OpKind::Softmax, Attrs(), {big}, "4096 rows");
  check(OpKind::Softmax, Attrs().set("log", true), {big}, "4096 rows log");
  check(OpKind::Softmax, Attrs(), {broadcast_view(data(DType::F32, {1, 100}, 3), {50, 100})},
        "broadcast");
  // The exponentials are taken against the first vector's maximum and redone against the row's
  // where that lies more than 16 above it: rows whose first vector is 100 below their maximum
  // (e^100 would overflow f32) and 15.9 below it (kept), of 37 (a partial vector) and 64
  // columns, in f32 and f64.
  for (DType dt : {DType::F32, DType::F64})
    for (int64_t cols : {int64_t{37}, int64_t{64}}) {
      HostTensor low = data(dt, {4, cols}, 5, -3, 3);
      for (int64_t j = 0; j < 16; ++j) {
        low.set_f64(0 * cols + j, -100 - 0.1 * j);
        low.set_f64(1 * cols + j, -12.9);
        low.set_f64(3 * cols + j, -std::numeric_limits<double>::infinity());
      }
      low.set_f64(1 * cols + cols - 2, 3);    // the row's maximum (the rest lie below 3)
      low.set_f64(2 * cols + cols - 1, 120);  // the maximum in the partial last vector
      check(OpKind::Softmax, Attrs(), {low}, std::string("first vector low ") + dtype_name(dt));
    }
}

// Terms far below the row's maximum: each within 1e-5 of e^(x - m) / Σ, relatively, while that
// is a normal float (down to e^-87.3 = 2^-126; x·log2e - m·log2e in f32 keeps ~|x - m|·2^-24
// of error: 1.4e-6 at -70), and within 2^-126 of it below (AVX2 flushes those terms to 0;
// AVX-512 rounds them once). Every lane of a vector, in both vectors of an exp-pass step.
TEST(CpuReduction, SoftmaxTinyTerms) {
  const double d[] = {
      0,     -1,    -10, -40,  -70,  -80,  -85,  -87,
      -87.3, -87.5, -90, -100, -103, -104, -150, -std::numeric_limits<double>::infinity()};
  const int64_t n = 64;
  HostTensor x = f32({1, n}, std::vector<double>(n, 0.0));
  for (int64_t j = 0; j < n; ++j) x.set_f64(j, j == 0 ? 0.0 : d[j % 16]);
  x.set_f64(16, -3);  // lanes 0 of the other vectors: 0 is the maximum once
  x.set_f64(32, -3);
  x.set_f64(48, -3);
  double sum = 0;
  for (int64_t j = 0; j < n; ++j)
    sum += std::exp(static_cast<double>(static_cast<float>(x.get_f64(j))));
  const HostTensor y = run_op1(OpKind::Softmax, Attrs(), {x}, "cpu");
  for (int64_t j = 0; j < n; ++j) {
    const double want = std::exp(static_cast<double>(static_cast<float>(x.get_f64(j)))) / sum;
    const double got = y.get_f64(j);
    if (want >= 0x1p-126)
      EXPECT_NEAR(got, want, 1e-5 * want) << "column " << j;
    else
      EXPECT_NEAR(got, want, 0x1p-126) << "column " << j;
  }
}

// Outputs of 16 MiB and more are written with non-temporal stores from a staged row: rows of
// 1027 start at every alignment (an unaligned head, a partial tail), one row has a NaN, one is
// all -inf.
TEST(CpuReduction, SoftmaxStreamsLargeOutputs) {
  HostTensor x = data(DType::F32, {4100, 1027}, 21, -20, 20);
  const double inf = std::numeric_limits<double>::infinity();
  x.set_f64(5 * 1027 + 3, std::nan(""));
  for (int64_t j = 0; j < 1027; ++j) x.set_f64(9 * 1027 + j, -inf);
  check(OpKind::Softmax, Attrs(), {x}, "streamed rows");
  check(OpKind::Softmax, Attrs().set("log", true), {x}, "streamed rows log");
  // Rows of whole vectors (softmax_whole_rows): each row is written along the next row's exp
  // pass (a thread's last row at its end). An odd row count, and NaN / all -inf rows among them.
  HostTensor w = data(DType::F32, {4099, 1024}, 22, -20, 20);
  w.set_f64(7 * 1024 + 100, std::nan(""));
  for (int64_t j = 0; j < 1024; ++j) w.set_f64(4098 * 1024 + j, -inf);
  check(OpKind::Softmax, Attrs(), {w}, "streamed aligned rows");
  // The same for 512-wide rows: NaN and all -inf rows, odd and even, and an odd row count.
  HostTensor v = data(DType::F32, {8195, 512}, 23, -20, 20);
  v.set_f64(2 * 512 + 7, std::nan(""));
  v.set_f64(9 * 512 + 300, std::nan(""));
  for (int64_t j = 0; j < 512; ++j) v.set_f64(4 * 512 + j, -inf);
  for (int64_t j = 0; j < 512; ++j) v.set_f64(11 * 512 + j, -inf);
  // Rows whose first vector lies 100 below their maximum (the exp pass redone).
  for (int64_t r : {14, 17})
    for (int64_t j = 0; j < 16; ++j) v.set_f64(r * 512 + j, -120);
  check(OpKind::Softmax, Attrs(), {v}, "streamed 512-wide rows");
  // f64 (8 lanes a vector): 1032 columns, an odd vector count a row.
  HostTensor d = data(DType::F64, {2051, 1032}, 24, -20, 20);
  d.set_f64(3 * 1032 + 9, std::nan(""));
  for (int64_t j = 0; j < 1032; ++j) d.set_f64(6 * 1032 + j, -inf);
  for (int64_t j = 0; j < 8; ++j) d.set_f64(12 * 1032 + j, -120);
  check(OpKind::Softmax, Attrs(), {d}, "streamed f64 rows");
  // Streamed rows are computed as rows in cache are: the first 16 rows (NaN, -inf and redone
  // ones among them) bit for bit as softmax over those rows alone, a tensor too small to stream.
  for (const HostTensor* t : {&v, &d}) {
    const int64_t rows = 16,
                  bytes = rows * t->shape[1] * static_cast<int64_t>(dtype_size(t->dtype));
    HostTensor head = HostTensor::empty(t->dtype, {rows, t->shape[1]});
    std::memcpy(head.data(), t->data(), bytes);
    const HostTensor streamed = run_op(OpKind::Softmax, Attrs(), {*t}, "cpu")[0];
    const HostTensor single = run_op(OpKind::Softmax, Attrs(), {head}, "cpu")[0];
    EXPECT_EQ(std::memcmp(streamed.data(), single.data(), bytes), 0) << dtype_name(t->dtype);
  }
}

TEST(CpuReduction, Scans) {
  std::vector<DType> types(std::begin(kFloatDTypes), std::end(kFloatDTypes));
  types.insert(types.end(), std::begin(kIntDTypes), std::end(kIntDTypes));
  for (OpKind kind : {OpKind::Cumsum, OpKind::CumProd, OpKind::CumMax})
    for (DType dt : types)
      for (const Shape& s : kShapes)
        for (int64_t axis : {-1, 0}) {
          for (bool reverse : {false, true})
            for (bool exclusive : {false, true}) {
              if (exclusive && kind != OpKind::Cumsum) continue;
              Attrs a = Attrs().set("axis", axis).set("reverse", reverse);
              if (kind == OpKind::Cumsum) a.set("exclusive", exclusive);
              bool prod = kind == OpKind::CumProd;
              HostTensor x = prod ? data(dt, s, 5, 0.5, 1.5) : data(dt, s, 5);
              std::string w = case_name(kind, s, dt, reverse ? "rev" : "");
              double scale = prod && shape_numel(s) > 100 ? 30 : 2;
              check(kind, a, {x}, w, scale);
              if (shape_numel(s) > 1) check(kind, a, {non_contiguous(x)}, w + " nc", scale);
            }
        }
  const double nan = std::nan("");
  check(OpKind::CumMax, Attrs().set("axis", 0), {f32({5}, {1, 3, nan, 5, 2})}, "cummax nan");
}

TEST(CpuReduction, ArgMaxArgMin) {
  std::vector<DType> types = all_types();
  for (OpKind kind : {OpKind::ArgMax, OpKind::ArgMin})
    for (DType dt : types)
      for (const Shape& s : kShapes)
        for (int64_t axis : {-1, 0}) {
          if (!s.empty() && s[axis < 0 ? s.size() - 1 : 0] == 0) continue;
          if (shape_numel(s) == 0 && s.size() < 2) continue;
          for (bool last : {false, true}) {
            Attrs a = Attrs().set("axis", axis).set("select_last", last).set("keepdims", last);
            // Few distinct values, so ties are common.
            HostTensor x =
                is_integer(dt) || dt == DType::Bool
                    ? data(dt, s, 13)
                    : cast_to(cast_to(random_tensor(DType::F64, s, 13, -4, 4), DType::I32), dt);
            std::string w = case_name(kind, s, dt, last ? "last" : "");
            check(kind, a, {x}, w);
            if (shape_numel(s) > 1) check(kind, a, {non_contiguous(x)}, w + " nc");
          }
        }
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  HostTensor sp = f32({3, 4}, {1, nan, 2, nan, -inf, -inf, -inf, -inf, -0.0, 0.0, 0.0, -0.0});
  for (OpKind kind : {OpKind::ArgMax, OpKind::ArgMin})
    for (bool last : {false, true})
      for (int64_t axis : {0, 1})
        check(kind, Attrs().set("axis", axis).set("select_last", last), {sp}, "special");
  expect_error(ErrorKind::Value, [&] {
    run_op(OpKind::ArgMax, Attrs(), {data(DType::F32, {3, 0}, 1)}, "cpu");
  });
}

TEST(CpuReduction, TopKSortArgSort) {
  std::vector<DType> types = all_types();
  for (DType dt : types)
    for (const Shape& s : kShapes)
      for (int64_t axis : {-1, 0}) {
        HostTensor x =
            is_integer(dt) || dt == DType::Bool
                ? data(dt, s, 17)
                : cast_to(cast_to(random_tensor(DType::F64, s, 17, -9, 9), DType::I32), dt);
        int64_t dim = s.empty() ? 1 : s[axis < 0 ? s.size() - 1 : 0];
        for (bool desc : {false, true}) {
          Attrs a = Attrs().set("axis", axis).set("descending", desc);
          std::string w = case_name(OpKind::Sort, s, dt, desc ? "desc" : "");
          check(OpKind::Sort, a, {x}, w);
          check(OpKind::ArgSort, a, {x}, w);
          if (shape_numel(s) > 1) check(OpKind::ArgSort, a, {non_contiguous(x)}, w + " nc");
          if (dt == DType::Bool) continue;
          for (int64_t k : {int64_t{0}, int64_t{1}, dim / 2, dim}) {
            if (k > dim || (s.empty() && k != 1)) continue;
            Attrs t = Attrs().set("k", k).set("axis", axis).set("largest", desc);
            check(OpKind::TopK, t, {x}, w + " k " + std::to_string(k));
          }
        }
      }
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  HostTensor sp = f32({8}, {1, nan, -0.0, inf, 0.0, -inf, nan, 1});
  for (bool desc : {false, true}) {
    check(OpKind::ArgSort, Attrs().set("descending", desc), {sp}, "special");
    check(OpKind::Sort, Attrs().set("descending", desc), {sp}, "special");
    check(OpKind::TopK, Attrs().set("k", int64_t{5}).set("largest", desc), {sp}, "special");
  }
  HostTensor big = data(DType::F32, {3, 20000}, 19);
  check(OpKind::TopK, Attrs().set("k", int64_t{50}), {big}, "big topk");
  check(OpKind::ArgSort, Attrs(), {big}, "big argsort");
}

TEST(CpuReduction, Sample) {
  for (DType dt : kFloatDTypes)
    for (const Shape& s : std::vector<Shape>{{1}, {17}, {4, 33}, {2, 3, 65}, {0, 5}, {8, 1000}})
      for (double temp : {0.0, 0.7, 1.0})
        for (int64_t top_k : {0, 1, 5})
          for (double top_p : {1.0, 0.9}) {
            Attrs a = Attrs()
                          .set("temperature", temp)
                          .set("top_k", top_k)
                          .set("top_p", top_p)
                          .set("seed", int64_t{42});
            HostTensor x = data(dt, s, 23, -2, 2);
            check(OpKind::Sample, a, {x}, case_name(OpKind::Sample, s, dt, "sample"));
            if (shape_numel(s) > 1)
              check(OpKind::Sample, a, {non_contiguous(x)}, case_name(OpKind::Sample, s, dt, "nc"));
          }
  const double nan = std::nan("");
  expect_error(ErrorKind::Value, [&] {
    run_op(OpKind::Sample, Attrs(), {f32({3}, {1, nan, 2})}, "cpu");
  });
}

}  // namespace
}  // namespace tessel::testing
