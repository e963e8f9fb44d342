// ReductionIndexing: Reduce (every ReduceOp), Softmax, Cumsum, CumProd, CumMax, ArgMax, ArgMin,
// TopK, Sort, ArgSort and Sample on the reference backend: PyTorch float64 goldens
// (tests/goldens/gen_reduction_indexing.py) in contiguous, non-contiguous, f32 and narrow-float
// layouts; hand-computed integer (exact, wrapping) and bool cases; broadcast (stride-0) inputs;
// Sample against hand-computed draws of its documented rule and empirical frequencies; bad inputs.
#include <cmath>
#include <limits>
#include <map>

#include "op_test_util.h"
#include "runtime/rng.h"

namespace tessel::testing {
namespace {

using nlohmann::json;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

HostTensor typed(DType dtype, const Shape& shape, const std::vector<int64_t>& v) {
  return HostTensor::from_vector(dtype, shape, v);
}

void expect_ints(const HostTensor& actual, DType dtype, const Shape& shape,
                 const std::vector<int64_t>& expected, const std::string& what) {
  EXPECT_EQ(actual.dtype, dtype) << what;
  ASSERT_EQ(actual.shape, shape) << what;
  ASSERT_EQ(actual.numel(), static_cast<int64_t>(expected.size())) << what;
  for (int64_t i = 0; i < actual.numel(); ++i)
    EXPECT_EQ(actual.get_i64(i), expected[i]) << what << " element " << i;
}

Attrs reduce_attrs(ReduceOp op, std::vector<int64_t> axes, bool keepdims = false,
                   int64_t correction = 0) {
  return Attrs()
      .set("op", op)
      .set("axes", std::move(axes))
      .set("keepdims", keepdims)
      .set("correction", correction);
}

// ---------------------------------------------------------------------------------------------
// Goldens

struct Case {
  OpKind kind;
  Attrs attrs;
  HostTensor x;
  std::vector<HostTensor> expected;  // values (and TopK's indices)
  std::string what;
};

Case make_case(const json& c) {
  const std::string kind = c.at("kind");
  Case k{*op_from_name(kind), Attrs(), tensor_from_json(c.at("x")), {}, kind};
  auto flag = [&](const char* name) { k.attrs.set(name, c.at(name).get<bool>()); };
  auto integer = [&](const char* name) { k.attrs.set(name, c.at(name).get<int64_t>()); };
  if (kind == "Reduce") {
    auto op = static_cast<ReduceOp>(variant_id(VariantEnum::ReduceOp, c.at("op")));
    k.attrs = reduce_attrs(op, c.at("axes").get<std::vector<int64_t>>(),
                           c.at("keepdims").get<bool>(), c.at("correction").get<int64_t>());
    k.what += " " + c.at("op").get<std::string>() + " axes " + c.at("axes").dump();
  } else if (kind == "Softmax") {
    integer("axis");
    flag("log");
  } else if (kind == "Cumsum") {
    integer("axis");
    flag("exclusive");
    flag("reverse");
  } else if (kind == "CumProd" || kind == "CumMax") {
    integer("axis");
    flag("reverse");
  } else if (kind == "ArgMax" || kind == "ArgMin") {
    integer("axis");
    flag("keepdims");
    flag("select_last");
  } else if (kind == "TopK") {
    integer("k");
    integer("axis");
    flag("largest");
  } else if (kind == "Sort" || kind == "ArgSort") {
    integer("axis");
    flag("descending");
  } else {
    throw std::runtime_error("unknown golden kind " + kind);
  }
  if (kind == "TopK") {
    k.expected = {tensor_from_json(c.at("values")), tensor_from_json(c.at("indices"))};
  } else {
    k.expected = {tensor_from_json(c.at("y"))};
  }
  k.what += " x" + shape_str(k.x.shape) + " " + k.attrs.to_string(op_info(k.kind));
  return k;
}

void check_outputs(const Case& k, const std::vector<HostTensor>& outs, DType dtype, double tol,
                   const std::string& layout) {
  ASSERT_EQ(outs.size(), k.expected.size()) << k.what;
  for (size_t i = 0; i < outs.size(); ++i) {
    std::string what = k.what + " (" + layout + ") output " + std::to_string(i);
    if (k.expected[i].dtype == DType::I64) {
      EXPECT_EQ(outs[i].dtype, DType::I64) << what;
      expect_close(outs[i], k.expected[i], 0, 0, what);  // indices: exact
    } else {
      EXPECT_EQ(outs[i].dtype, dtype) << what;
      expect_close(outs[i], k.expected[i], tol, tol, what);
    }
  }
}

TEST(ReductionIndexing, MatchesTorchGoldens) {
  std::map<std::string, int> counts;
  for (const json& c : golden_cases_of("reduction_indexing")) {
    Case k = make_case(c);
    check_outputs(k, run_op(k.kind, k.attrs, {k.x}), DType::F64, 1e-12, "contiguous");
    check_outputs(k, run_op(k.kind, k.attrs, {non_contiguous(k.x)}), DType::F64, 1e-12,
                  "non-contiguous");
    ++counts[c.at("kind").get<std::string>() +
             (c.contains("op") ? "." + c.at("op").get<std::string>() : "")];
  }
  for (const OpInfo& op : all_ops()) {
    if (op.category != Category::ReductionIndexing || op.kind == OpKind::Sample) continue;
    for (int v = 0; v < op.num_variants(); ++v) {
      std::string name =
          op.name + (op.variant_enum == VariantEnum::None ? "" : "." + op.variant_name(v));
      EXPECT_GE(counts[name], 2) << name << " has too few golden cases";
    }
  }
}

TEST(ReductionIndexing, GoldensInF32) {
  // Inputs rounded to f32 first, so the outputs only agree to f32 precision. Ties and NaNs are
  // exact in f32, and distinct random values stay distinct, so indices must still match.
  for (const json& c : golden_cases_of("reduction_indexing")) {
    Case k = make_case(c);
    HostTensor x32 = cast_to(k.x, DType::F32);
    check_outputs(k, run_op(k.kind, k.attrs, {x32}), DType::F32, 2e-5, "f32");
  }
}

TEST(ReductionIndexing, NarrowFloatsAreComputedInF64AndRoundedOnce) {
  // Values exactly representable in every float dtype; results rounded once to the dtype.
  for (DType t : {DType::F16, DType::BF16, DType::F8E4M3FN, DType::F8E5M2}) {
    HostTensor x = cast_to(f64({2, 4}, {1, 2, 0.5, 0.5, -4, 1, 8, -1}), t);
    std::string what = dtype_name(t);
    expect_close(run_op1(OpKind::Reduce, reduce_attrs(ReduceOp::Sum, {1}), {x}), {4, 4}, 0, 0,
                 what + " sum");
    expect_close(run_op1(OpKind::Reduce, reduce_attrs(ReduceOp::Max, {0}), {x}), {1, 2, 8, 0.5}, 0,
                 0, what + " max");
    expect_close(run_op1(OpKind::Sort, Attrs(), {x}), {0.5, 0.5, 1, 2, -4, -1, 1, 8}, 0, 0,
                 what + " sort");
    expect_close(run_op1(OpKind::Cumsum, Attrs().set("axis", 1), {x}), {1, 3, 3.5, 4, -4, -3, 5, 4},
                 0, 0, what + " cumsum");
    HostTensor sm = run_op1(OpKind::Softmax, Attrs(), {cast_to(f64({2}, {0, 0}), t)});
    EXPECT_EQ(sm.dtype, t);
    expect_close(sm, {0.5, 0.5}, 0, 0, what + " softmax");
  }
  // f16 rounds the f64 result once: 1 + 2^-11 + 2^-11 (two f16 half-ulps) sums to 1 + 2^-10,
  // which an f16 accumulator (round after each add: ties to even, 1) would miss.
  HostTensor h = cast_to(f64({3}, {1, std::ldexp(1.0, -11), std::ldexp(1.0, -11)}), DType::F16);
  expect_close(run_op1(OpKind::Reduce, reduce_attrs(ReduceOp::Sum, {}), {h}),
               {1 + std::ldexp(1.0, -10)}, 0, 0, "f16 sum rounded once");
}

// ---------------------------------------------------------------------------------------------
// Reduce: hand-computed

TEST(ReductionIndexing, ReduceFloatsHandComputed) {
  HostTensor x = f64({2, 3}, {1, -2, 3, 4, 5, -6});
  auto run = [&](ReduceOp op, std::vector<int64_t> axes, int64_t corr = 0) {
    return run_op1(OpKind::Reduce, reduce_attrs(op, std::move(axes), false, corr), {x});
  };
  expect_close(run(ReduceOp::Sum, {1}), {2, 3});
  expect_close(run(ReduceOp::Mean, {0}), {2.5, 1.5, -1.5});
  expect_close(run(ReduceOp::Prod, {}), {720});
  expect_close(run(ReduceOp::L1, {1}), {6, 15});
  expect_close(run(ReduceOp::SumSquare, {1}), {14, 77});
  expect_close(run(ReduceOp::L2, {1}), {std::sqrt(14.0), std::sqrt(77.0)}, 1e-15);
  // var of {1, 4} = 2.25 (biased), 4.5 (correction 1); {-2, 5}: 12.25, 24.5.
  expect_close(run(ReduceOp::Var, {0}), {2.25, 12.25, 20.25}, 1e-15);
  expect_close(run(ReduceOp::Var, {-2}, 1), {4.5, 24.5, 40.5}, 1e-15);
  expect_close(run(ReduceOp::Std, {0}, 1), {std::sqrt(4.5), std::sqrt(24.5), std::sqrt(40.5)},
               1e-15);
  expect_close(run(ReduceOp::LogSumExp, {1}),
               {std::log(std::exp(1.0) + std::exp(-2.0) + std::exp(3.0)),
                std::log(std::exp(4.0) + std::exp(5.0) + std::exp(-6.0))},
               1e-15);
  // keepdims keeps the reduced axes as 1; negative axes wrap.
  HostTensor k = run_op1(OpKind::Reduce, reduce_attrs(ReduceOp::Max, {-1, 0}, true), {x});
  EXPECT_EQ(k.shape, (Shape{1, 1}));
  expect_close(k, {5});
}

TEST(ReductionIndexing, ReduceIntegersAreExactAndWrap) {
  HostTensor x = typed(DType::I32, {2, 3}, {1, -2, 3, 4, 5, -6});
  auto run = [](ReduceOp op, std::vector<int64_t> axes, const HostTensor& t) {
    return run_op1(OpKind::Reduce, reduce_attrs(op, std::move(axes)), {t});
  };
  expect_ints(run(ReduceOp::Sum, {1}, x), DType::I32, {2}, {2, 3}, "i32 sum");
  expect_ints(run(ReduceOp::Sum, {}, x), DType::I32, {}, {5}, "i32 sum all");
  expect_ints(run(ReduceOp::Prod, {1}, x), DType::I32, {2}, {-6, -120}, "i32 prod");
  expect_ints(run(ReduceOp::Max, {1}, x), DType::I32, {2}, {3, 5}, "i32 max");
  expect_ints(run(ReduceOp::Min, {0}, x), DType::I32, {3}, {1, -2, -6}, "i32 min");
  expect_ints(run(ReduceOp::L1, {1}, x), DType::I32, {2}, {6, 15}, "i32 l1");
  expect_ints(run(ReduceOp::SumSquare, {1}, x), DType::I32, {2}, {14, 77}, "i32 sumsquare");
  expect_ints(run(ReduceOp::Sum, {0}, non_contiguous(x)), DType::I32, {3}, {5, 3, -3},
              "i32 sum non-contiguous");
  // Wrapping to the output dtype: i8 100 + 100 = -56, u8 16 · 16 = 0, i16 SumSquare 200² = 40000
  // - 65536.
  expect_ints(run(ReduceOp::Sum, {}, typed(DType::I8, {2}, {100, 100})), DType::I8, {}, {-56},
              "i8 sum wraps");
  expect_ints(run(ReduceOp::Prod, {}, typed(DType::U8, {2}, {16, 16})), DType::U8, {}, {0},
              "u8 prod wraps");
  expect_ints(run(ReduceOp::SumSquare, {}, typed(DType::I16, {1}, {200})), DType::I16, {},
              {40000 - 65536}, "i16 sumsquare wraps");
  expect_ints(run(ReduceOp::L1, {}, typed(DType::I8, {2}, {-128, -1})), DType::I8, {}, {-127},
              "i8 l1 wraps");
  // i64 is exact beyond 2^53 (an f64 accumulator would round), and wraps like PyTorch.
  const int64_t big = (int64_t{1} << 53) + 1;
  expect_ints(run(ReduceOp::Sum, {}, i64({3}, {big, 1, 1})), DType::I64, {}, {big + 2},
              "i64 sum exact");
  expect_ints(run(ReduceOp::Max, {}, i64({2}, {big, big - 1})), DType::I64, {}, {big},
              "i64 max exact");
  const int64_t max = std::numeric_limits<int64_t>::max();
  expect_ints(run(ReduceOp::Sum, {}, i64({2}, {max, 1})), DType::I64, {},
              {std::numeric_limits<int64_t>::min()}, "i64 sum wraps");
  // Empty integer reductions: Sum 0, Prod 1.
  HostTensor empty = HostTensor::empty(DType::I32, {2, 0});
  expect_ints(run(ReduceOp::Sum, {1}, empty), DType::I32, {2}, {0, 0}, "empty sum");
  expect_ints(run(ReduceOp::Prod, {1}, empty), DType::I32, {2}, {1, 1}, "empty prod");
}

TEST(ReductionIndexing, ReduceBoolMaxMin) {
  HostTensor b = typed(DType::Bool, {3, 3}, {0, 0, 0, 1, 0, 1, 1, 1, 1});
  expect_ints(run_op1(OpKind::Reduce, reduce_attrs(ReduceOp::Max, {1}), {b}), DType::Bool, {3},
              {0, 1, 1}, "bool max = any");
  expect_ints(run_op1(OpKind::Reduce, reduce_attrs(ReduceOp::Min, {1}), {b}), DType::Bool, {3},
              {0, 0, 1}, "bool min = all");
  expect_ints(run_op1(OpKind::Reduce, reduce_attrs(ReduceOp::Max, {0}, true), {non_contiguous(b)}),
              DType::Bool, {1, 3}, {1, 1, 1}, "bool max keepdims non-contiguous");
}

TEST(ReductionIndexing, ReduceEmptyMaxMinIsARunTimeValueError) {
  for (ReduceOp op : {ReduceOp::Max, ReduceOp::Min})
    for (DType t : {DType::F32, DType::I32, DType::Bool})
      expect_error(
          ErrorKind::Value,
          [&] {
            run_op1(OpKind::Reduce, reduce_attrs(op, {1}), {HostTensor::empty(t, {3, 0, 2})});
          },
          std::string("empty max/min ") + dtype_name(t));
}

TEST(ReductionIndexing, ReduceBroadcastInput) {
  // A stride-0 view reads the same element repeatedly: sum over the broadcast axis is 4·row.
  HostTensor row = f64({1, 3}, {1.5, -2, 0.25});
  HostTensor x = broadcast_view(row, {4, 3});
  expect_close(run_op1(OpKind::Reduce, reduce_attrs(ReduceOp::Sum, {0}), {x}), {6, -8, 1});
  expect_close(run_op1(OpKind::Reduce, reduce_attrs(ReduceOp::Var, {0}), {x}), {0, 0, 0});
  expect_close(run_op1(OpKind::Softmax, Attrs().set("axis", 0), {x}),
               std::vector<double>(12, 0.25));
  expect_close(run_op1(OpKind::Cumsum, Attrs().set("axis", 0), {x}),
               {1.5, -2, 0.25, 3, -4, 0.5, 4.5, -6, 0.75, 6, -8, 1});
  expect_ints(run_op1(OpKind::ArgSort, Attrs().set("axis", 0), {x}), DType::I64, {4, 3},
              {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3}, "argsort of equal values is stable");
  expect_ints(run_op1(OpKind::ArgMax, Attrs(), {x}), DType::I64, {4}, {0, 0, 0, 0},
              "argmax of broadcast rows");
}

// ---------------------------------------------------------------------------------------------
// Softmax, scans, ArgMax / ArgMin, orderings: hand-computed

TEST(ReductionIndexing, SoftmaxHandComputed) {
  // [0, ln 3] → [1/4, 3/4]; stable for huge inputs (1000 + the same).
  HostTensor x = f64({2, 2}, {0, std::log(3.0), 1000, 1000 + std::log(3.0)});
  expect_close(run_op1(OpKind::Softmax, Attrs(), {x}), {0.25, 0.75, 0.25, 0.75}, 1e-14, 1e-14);
  expect_close(run_op1(OpKind::Softmax, Attrs().set("log", true), {x}),
               {std::log(0.25), std::log(0.75), std::log(0.25), std::log(0.75)}, 1e-13, 1e-13);
  // A masked (-inf) entry gets exactly 0; an all -inf row is NaN (as PyTorch).
  HostTensor m = f64({2, 2}, {-kInf, 2, -kInf, -kInf});
  expect_close(run_op1(OpKind::Softmax, Attrs(), {m}), {0, 1, kNaN, kNaN}, 0, 0);
}

TEST(ReductionIndexing, ScansOnIntegersAreExact) {
  HostTensor x = typed(DType::I32, {2, 3}, {1, 2, 3, 4, -5, 6});
  auto cumsum = [&](bool exclusive, bool reverse, const HostTensor& t) {
    return run_op1(OpKind::Cumsum,
                   Attrs().set("axis", 1).set("exclusive", exclusive).set("reverse", reverse), {t});
  };
  expect_ints(cumsum(false, false, x), DType::I32, {2, 3}, {1, 3, 6, 4, -1, 5}, "cumsum");
  expect_ints(cumsum(true, false, x), DType::I32, {2, 3}, {0, 1, 3, 0, 4, -1}, "exclusive");
  expect_ints(cumsum(false, true, x), DType::I32, {2, 3}, {6, 5, 3, 5, 1, 6}, "reverse");
  expect_ints(cumsum(true, true, non_contiguous(x)), DType::I32, {2, 3}, {5, 3, 0, 1, 6, 0},
              "exclusive reverse non-contiguous");
  const int64_t big = int64_t{1} << 53;
  expect_ints(run_op1(OpKind::Cumsum, Attrs().set("axis", 0), {i64({3}, {big, 1, 1})}), DType::I64,
              {3}, {big, big + 1, big + 2}, "i64 cumsum exact");
  expect_ints(run_op1(OpKind::Cumsum, Attrs().set("axis", 0), {typed(DType::I8, {2}, {120, 10})}),
              DType::I8, {2}, {120, -126}, "i8 cumsum wraps");
  expect_ints(run_op1(OpKind::CumProd, Attrs().set("axis", -1), {x}), DType::I32, {2, 3},
              {1, 2, 6, 4, -20, -120}, "cumprod");
  expect_ints(run_op1(OpKind::CumProd, Attrs().set("axis", 0).set("reverse", true), {x}),
              DType::I32, {2, 3}, {4, -10, 18, 4, -5, 6}, "cumprod reverse axis 0");
  HostTensor y = typed(DType::U8, {5}, {3, 1, 4, 1, 5});
  expect_ints(run_op1(OpKind::CumMax, Attrs().set("axis", 0), {y}), DType::U8, {5}, {3, 3, 4, 4, 5},
              "cummax");
  expect_ints(run_op1(OpKind::CumMax, Attrs().set("axis", 0).set("reverse", true), {y}), DType::U8,
              {5}, {5, 5, 5, 5, 5}, "cummax reverse");
  expect_ints(run_op1(OpKind::CumMax, Attrs().set("axis", 0).set("reverse", true),
                      {typed(DType::I16, {4}, {-1, -7, -3, -9})}),
              DType::I16, {4}, {-1, -3, -3, -9}, "cummax reverse negatives");
}

TEST(ReductionIndexing, ScansHandComputedFloats) {
  HostTensor x = f64({4}, {1, kNaN, 3, 0.5});
  expect_close(run_op1(OpKind::CumMax, Attrs().set("axis", 0), {x}), {1, kNaN, kNaN, kNaN}, 0, 0);
  expect_close(run_op1(OpKind::CumMax, Attrs().set("axis", 0).set("reverse", true), {x}),
               {kNaN, kNaN, 3, 0.5}, 0, 0);
  expect_close(run_op1(OpKind::CumProd, Attrs().set("axis", 0).set("reverse", true),
                       {f64({3}, {2, -0.5, 3})}),
               {-3, -1.5, 3}, 0, 0);
  // A rank-0 tensor is one length-1 axis.
  expect_close(
      run_op1(OpKind::Cumsum, Attrs().set("axis", -1).set("exclusive", true), {f64({}, {4})}), {0},
      0, 0);
}

TEST(ReductionIndexing, ArgMaxArgMinIntegersAndBool) {
  HostTensor x = typed(DType::I64, {2, 5}, {3, 7, 7, -1, 7, -4, 2, -4, 9, 0});
  auto run = [&](OpKind k, int64_t axis, bool keepdims, bool last, const HostTensor& t) {
    return run_op1(k, Attrs().set("axis", axis).set("keepdims", keepdims).set("select_last", last),
                   {t});
  };
  expect_ints(run(OpKind::ArgMax, 1, false, false, x), DType::I64, {2}, {1, 3}, "argmax first");
  expect_ints(run(OpKind::ArgMax, 1, false, true, x), DType::I64, {2}, {4, 3}, "argmax last");
  expect_ints(run(OpKind::ArgMin, -1, true, false, x), DType::I64, {2, 1}, {3, 0}, "argmin");
  expect_ints(run(OpKind::ArgMin, -1, true, true, x), DType::I64, {2, 1}, {3, 2}, "argmin last");
  expect_ints(run(OpKind::ArgMax, 0, false, false, non_contiguous(x)), DType::I64, {5},
              {0, 0, 0, 1, 0}, "argmax axis 0 non-contiguous");
  HostTensor b = typed(DType::Bool, {2, 3}, {0, 1, 1, 1, 1, 1});
  expect_ints(run(OpKind::ArgMax, 1, false, false, b), DType::I64, {2}, {1, 0}, "bool argmax");
  expect_ints(run(OpKind::ArgMin, 1, false, true, b), DType::I64, {2}, {0, 2}, "bool argmin last");
  // NaN is the extreme of both; with select_last the last NaN.
  HostTensor f = f64({5}, {1, kNaN, -3, kNaN, 9});
  expect_ints(run(OpKind::ArgMax, 0, false, false, f), DType::I64, {}, {1}, "argmax nan");
  expect_ints(run(OpKind::ArgMin, 0, false, false, f), DType::I64, {}, {1}, "argmin nan");
  expect_ints(run(OpKind::ArgMin, 0, false, true, f), DType::I64, {}, {3}, "argmin nan last");
}

TEST(ReductionIndexing, OrderingsOnIntegersAndBool) {
  HostTensor x = typed(DType::I32, {2, 5}, {5, -1, 5, 2, -1, 0, 0, 3, -8, 3});
  auto attrs = [](int64_t axis, bool descending) {
    return Attrs().set("axis", axis).set("descending", descending);
  };
  expect_ints(run_op1(OpKind::Sort, attrs(1, false), {x}), DType::I32, {2, 5},
              {-1, -1, 2, 5, 5, -8, 0, 0, 3, 3}, "sort");
  expect_ints(run_op1(OpKind::ArgSort, attrs(1, false), {x}), DType::I64, {2, 5},
              {1, 4, 3, 0, 2, 3, 0, 1, 2, 4}, "argsort stable");
  expect_ints(run_op1(OpKind::ArgSort, attrs(-1, true), {non_contiguous(x)}), DType::I64, {2, 5},
              {0, 2, 3, 1, 4, 2, 4, 0, 1, 3}, "argsort descending stable");
  expect_ints(run_op1(OpKind::Sort, attrs(0, true), {x}), DType::I32, {2, 5},
              {5, 0, 5, 2, 3, 0, -1, 3, -8, -1}, "sort axis 0 descending");
  auto topk = run_op(OpKind::TopK, Attrs().set("k", 3), {x});
  expect_ints(topk[0], DType::I32, {2, 3}, {5, 5, 2, 3, 3, 0}, "topk values");
  expect_ints(topk[1], DType::I64, {2, 3}, {0, 2, 3, 2, 4, 0}, "topk indices");
  auto bottom = run_op(OpKind::TopK, Attrs().set("k", 2).set("largest", false).set("axis", 1),
                       {typed(DType::U8, {1, 4}, {200, 7, 7, 255})});
  expect_ints(bottom[0], DType::U8, {1, 2}, {7, 7}, "topk smallest u8");
  expect_ints(bottom[1], DType::I64, {1, 2}, {1, 2}, "topk smallest ties lower index first");
  HostTensor b = typed(DType::Bool, {4}, {1, 0, 1, 0});
  expect_ints(run_op1(OpKind::Sort, attrs(0, false), {b}), DType::Bool, {4}, {0, 0, 1, 1},
              "bool sort");
  expect_ints(run_op1(OpKind::ArgSort, attrs(0, true), {b}), DType::I64, {4}, {0, 2, 1, 3},
              "bool argsort descending");
  // sorted = false gives the same (sorted) order: documented, one deterministic answer.
  auto unsorted = run_op(OpKind::TopK, Attrs().set("k", 3).set("sorted", false), {x});
  expect_ints(unsorted[1], DType::I64, {2, 3}, {0, 2, 3, 2, 4, 0}, "topk sorted=false");
}

TEST(ReductionIndexing, RankZeroInputs) {
  HostTensor s = f64({}, {2.5});
  expect_close(run_op1(OpKind::Softmax, Attrs().set("axis", 0), {s}), {1});
  expect_ints(run_op1(OpKind::ArgMax, Attrs(), {s}), DType::I64, {}, {0}, "argmax scalar");
  expect_close(run_op1(OpKind::Sort, Attrs(), {s}), {2.5});
  auto topk = run_op(OpKind::TopK, Attrs().set("k", 1), {s});
  expect_close(topk[0], {2.5});
  expect_ints(topk[1], DType::I64, {}, {0}, "topk scalar");
  expect_close(run_op1(OpKind::Reduce, reduce_attrs(ReduceOp::Std, {-1}), {s}), {0});
}

// ---------------------------------------------------------------------------------------------
// Sample

Attrs sample_attrs(double temperature, int64_t top_k, double top_p, int64_t seed) {
  return Attrs()
      .set("temperature", temperature)
      .set("top_k", top_k)
      .set("top_p", top_p)
      .set("seed", seed);
}

// The documented rule, for a row whose kept tokens and (renormalized) probabilities are given:
// the first kept token, in vocabulary order, whose cumulative probability exceeds u.
int64_t expected_draw(const std::vector<std::pair<int64_t, double>>& kept, double u) {
  double c = 0;
  for (auto [token, q] : kept) {
    c += q;
    if (c > u) return token;
  }
  return kept.back().first;
}

TEST(ReductionIndexing, SampleGreedyIsTheFirstMaximum) {
  HostTensor logits = f64({3, 5}, {0, 4, 1, 4, 2, -1, -2, -3, -4, -0.5, 7, 7, 7, 7, 7});
  for (int64_t seed : {0, 1, 99})
    expect_ints(run_op1(OpKind::Sample, sample_attrs(0, 3, 0.5, seed), {logits}), DType::I64, {3},
                {1, 4, 0}, "greedy seed " + std::to_string(seed));
  expect_ints(run_op1(OpKind::Sample, sample_attrs(0, 0, 1, 0), {non_contiguous(logits)}),
              DType::I64, {3}, {1, 4, 0}, "greedy non-contiguous");
}

TEST(ReductionIndexing, SampleTopK1IsArgmax) {
  HostTensor logits = random_tensor(DType::F32, {2, 3, 11}, 17, -3, 3);
  HostTensor argmax = run_op1(OpKind::ArgMax, Attrs(), {logits});
  for (int64_t seed = 0; seed < 5; ++seed)
    for (double t : {0.3, 1.0, 2.5}) {
      HostTensor ids = run_op1(OpKind::Sample, sample_attrs(t, 1, 1, seed), {logits});
      EXPECT_EQ(ids.shape, (Shape{2, 3}));
      expect_close(ids, argmax, 0, 0, "top_k 1, seed " + std::to_string(seed));
    }
}

TEST(ReductionIndexing, SampleHandComputedDraws) {
  // p = [0.1, 0.2, 0.3, 0.4] in every row; row r draws u = uniform(seed, r).
  const int64_t rows = 64;
  std::vector<double> v;
  for (int64_t r = 0; r < rows; ++r)
    for (double p : {0.1, 0.2, 0.3, 0.4}) v.push_back(std::log(p));
  HostTensor logits = f64({rows, 4}, v);
  struct Setting {
    int64_t top_k;
    double top_p;
    std::vector<std::pair<int64_t, double>> kept;  // in vocabulary order, renormalized
  };
  std::vector<Setting> settings = {
      {0, 1, {{0, 0.1}, {1, 0.2}, {2, 0.3}, {3, 0.4}}},
      {2, 1, {{2, 3.0 / 7}, {3, 4.0 / 7}}},    // top-2: tokens 3 and 2
      {0, 0.5, {{2, 3.0 / 7}, {3, 4.0 / 7}}},  // 0.4 < 0.5 <= 0.4 + 0.3
      {0, 0.39, {{3, 1.0}}},                   // 0.4 >= 0.39: one token
      {3, 0.7, {{2, 3.0 / 7}, {3, 4.0 / 7}}},  // top-3 mass 0.9: 0.4/0.9 < 0.7 <= 0.7/0.9
      {2, 0.55, {{3, 1.0}}},                   // top_p counts within top_k's mass: 0.4/0.7 >= 0.55
      {0, 0.05, {{3, 1.0}}},                   // always at least one token
  };
  for (int64_t seed : {0, 7, 123456789}) {
    for (const Setting& s : settings) {
      HostTensor ids = run_op1(OpKind::Sample, sample_attrs(1, s.top_k, s.top_p, seed), {logits});
      ASSERT_EQ(ids.shape, (Shape{rows}));
      for (int64_t r = 0; r < rows; ++r)
        EXPECT_EQ(ids.get_i64(r), expected_draw(s.kept, rng::uniform(seed, r)))
            << "seed " << seed << " top_k " << s.top_k << " top_p " << s.top_p << " row " << r;
    }
  }
  // Temperature 2 flattens [0, ln 3] to p ∝ [1, √3]; leading dims [2, 3] index rows row-major.
  std::vector<double> w;
  for (int i = 0; i < 6; ++i) w.insert(w.end(), {0.0, std::log(3.0)});
  HostTensor l2 = f64({2, 3, 2}, w);
  double p0 = 1 / (1 + std::sqrt(3.0));
  HostTensor ids = run_op1(OpKind::Sample, sample_attrs(2, 0, 1, 5), {non_contiguous(l2)});
  ASSERT_EQ(ids.shape, (Shape{2, 3}));
  for (int64_t r = 0; r < 6; ++r)
    EXPECT_EQ(ids.get_i64(r), expected_draw({{0, p0}, {1, 1 - p0}}, rng::uniform(5, r)))
        << "row " << r;
  // Ties in top_k go to the lower index: four equal logits, top_k 2 keeps tokens 0 and 1.
  HostTensor flat = f32({rows, 4}, std::vector<double>(rows * 4, 0.5));
  HostTensor tied = run_op1(OpKind::Sample, sample_attrs(1, 2, 1, 3), {flat});
  for (int64_t r = 0; r < rows; ++r)
    EXPECT_EQ(tied.get_i64(r), expected_draw({{0, 0.5}, {1, 0.5}}, rng::uniform(3, r)));
}

TEST(ReductionIndexing, SampleFrequenciesMatchProbabilities) {
  // 5 seeds × 4000 rows of the same logits: each frequency within 0.02 of its probability
  // (about 4.5 standard deviations at 20000 draws).
  const std::vector<double> p = {0.05, 0.15, 0.3, 0.5};
  const int64_t rows = 4000;
  std::vector<double> v;
  for (int64_t r = 0; r < rows; ++r)
    for (double q : p) v.push_back(std::log(q) + 3);  // a shift does not change softmax
  HostTensor logits = f32({rows, 4}, v);
  auto frequencies = [&](int64_t top_k, double top_p) {
    std::vector<double> f(4, 0);
    for (int64_t seed = 0; seed < 5; ++seed) {
      HostTensor ids = run_op1(OpKind::Sample, sample_attrs(1, top_k, top_p, seed), {logits});
      for (int64_t r = 0; r < rows; ++r) f.at(ids.get_i64(r)) += 1.0 / (5 * rows);
    }
    return f;
  };
  std::vector<double> all = frequencies(0, 1);
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(all[j], p[j], 0.02) << "token " << j;
  // top_k 3 drops token 0: [0.15, 0.3, 0.5] / 0.95; top_p 0.75 keeps {3, 2}: [0.3, 0.5] / 0.8.
  std::vector<double> k3 = frequencies(3, 1);
  EXPECT_EQ(k3[0], 0);
  for (int j = 1; j < 4; ++j) EXPECT_NEAR(k3[j], p[j] / 0.95, 0.02) << "top_k 3, token " << j;
  std::vector<double> nucleus = frequencies(0, 0.75);
  EXPECT_EQ(nucleus[0] + nucleus[1], 0);
  EXPECT_NEAR(nucleus[2], 0.3 / 0.8, 0.02);
  EXPECT_NEAR(nucleus[3], 0.5 / 0.8, 0.02);
}

TEST(ReductionIndexing, SampleIsDeterministicPerSeed) {
  HostTensor logits = random_tensor(DType::F64, {64, 9}, 4, -1, 1);
  HostTensor a = run_op1(OpKind::Sample, sample_attrs(1, 0, 1, 42), {logits});
  HostTensor b = run_op1(OpKind::Sample, sample_attrs(1, 0, 1, 42), {logits});
  HostTensor c = run_op1(OpKind::Sample, sample_attrs(1, 0, 1, 43), {logits});
  int differ = 0;
  for (int64_t r = 0; r < 64; ++r) {
    EXPECT_EQ(a.get_i64(r), b.get_i64(r));
    differ += a.get_i64(r) != c.get_i64(r);
  }
  EXPECT_GT(differ, 10) << "a different seed should change many of 64 draws over 9 tokens";
}

// ---------------------------------------------------------------------------------------------
// Bad inputs

TEST(ReductionIndexing, BadInputs) {
  HostTensor x = random_tensor(DType::F32, {2, 3, 4}, 1);
  HostTensor xi = typed(DType::I32, {2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor xb = typed(DType::Bool, {2}, {1, 0});
  auto run = [](OpKind k, Attrs a, std::vector<HostTensor> in) {
    return [=] { run_op(k, a, in); };
  };
  auto reduce = [&](Attrs a, HostTensor t) { return run(OpKind::Reduce, std::move(a), {t}); };
  // Reduce
  for (ReduceOp op :
       {ReduceOp::Mean, ReduceOp::LogSumExp, ReduceOp::L2, ReduceOp::Var, ReduceOp::Std})
    expect_error(ErrorKind::DType, reduce(reduce_attrs(op, {}), xi), "float-only op on i32");
  for (ReduceOp op :
       {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::L1, ReduceOp::SumSquare, ReduceOp::Mean})
    expect_error(ErrorKind::DType, reduce(reduce_attrs(op, {}), xb), "numeric op on bool");
  HostTensor c = HostTensor::empty(DType::C64, {2});
  expect_error(ErrorKind::DType, reduce(reduce_attrs(ReduceOp::Sum, {}), c), "sum on c64");
  expect_error(ErrorKind::Shape, reduce(reduce_attrs(ReduceOp::Sum, {3}), x), "axis 3 of rank 3");
  expect_error(ErrorKind::Shape, reduce(reduce_attrs(ReduceOp::Sum, {-4}), x), "axis -4");
  expect_error(ErrorKind::Value, reduce(reduce_attrs(ReduceOp::Sum, {1, -2}), x), "duplicate axes");
  expect_error(ErrorKind::Value, reduce(reduce_attrs(ReduceOp::Max, {0, 0}), x), "repeated axis");
  expect_error(ErrorKind::Value, reduce(reduce_attrs(ReduceOp::Var, {}, false, -1), x),
               "negative correction");
  expect_error(ErrorKind::Value, reduce(reduce_attrs(ReduceOp::Sum, {}, false, 1), x),
               "correction on Sum");
  expect_error(ErrorKind::Shape, reduce(reduce_attrs(ReduceOp::Sum, {1}), f32({}, {1})),
               "axis 1 of a scalar");
  // Softmax and scans
  expect_error(ErrorKind::DType, run(OpKind::Softmax, Attrs(), {xi}), "softmax on i32");
  expect_error(ErrorKind::Shape, run(OpKind::Softmax, Attrs().set("axis", 3), {x}),
               "softmax axis out of range");
  expect_error(ErrorKind::DType, run(OpKind::Cumsum, Attrs().set("axis", 0), {xb}),
               "cumsum on bool");
  expect_error(ErrorKind::Shape, run(OpKind::CumProd, Attrs().set("axis", -4), {x}),
               "cumprod axis out of range");
  expect_error(ErrorKind::Value, run(OpKind::CumMax, Attrs(), {x}), "cummax without axis");
  // ArgMax / ArgMin
  expect_error(ErrorKind::Value,
               run(OpKind::ArgMax, Attrs().set("axis", 1), {HostTensor::empty(DType::F32, {2, 0})}),
               "argmax over an empty axis");
  expect_error(ErrorKind::Value,
               run(OpKind::ArgMin, Attrs().set("axis", 0), {HostTensor::empty(DType::I32, {0, 3})}),
               "argmin over an empty axis");
  expect_error(ErrorKind::Shape, run(OpKind::ArgMin, Attrs().set("axis", 2), {xi}),
               "argmin axis out of range");
  expect_error(ErrorKind::DType, run(OpKind::ArgMax, Attrs(), {c}), "argmax on c64");
  // TopK, Sort, ArgSort
  expect_error(ErrorKind::Value, run(OpKind::TopK, Attrs().set("k", 5), {x}), "k > dim");
  expect_error(ErrorKind::Value, run(OpKind::TopK, Attrs().set("k", -1), {x}), "negative k");
  expect_error(ErrorKind::Value, run(OpKind::TopK, Attrs(), {x}), "topk without k");
  expect_error(ErrorKind::DType, run(OpKind::TopK, Attrs().set("k", 1), {xb}), "topk on bool");
  expect_error(ErrorKind::Value, run(OpKind::TopK, Attrs().set("k", 0), {f32({}, {1})}),
               "topk k 0 on a scalar");
  expect_error(ErrorKind::Shape, run(OpKind::Sort, Attrs().set("axis", 3), {x}), "sort axis");
  expect_error(ErrorKind::DType, run(OpKind::ArgSort, Attrs(), {c}), "argsort on c64");
  // Sample
  HostTensor logits = random_tensor(DType::F32, {2, 5}, 3);
  auto sample = [&](Attrs a, HostTensor t) { return run(OpKind::Sample, std::move(a), {t}); };
  expect_error(ErrorKind::Value, sample(sample_attrs(-1, 0, 1, 0), logits), "negative temperature");
  expect_error(ErrorKind::Value, sample(sample_attrs(kInf, 0, 1, 0), logits), "inf temperature");
  expect_error(ErrorKind::Value, sample(sample_attrs(1, -1, 1, 0), logits), "negative top_k");
  expect_error(ErrorKind::Value, sample(sample_attrs(1, 0, 0, 0), logits), "top_p 0");
  expect_error(ErrorKind::Value, sample(sample_attrs(1, 0, 1.5, 0), logits), "top_p > 1");
  expect_error(ErrorKind::Shape, sample(Attrs(), f32({}, {1})), "rank-0 logits");
  expect_error(ErrorKind::Shape, sample(Attrs(), HostTensor::empty(DType::F32, {3, 0})),
               "empty vocabulary");
  expect_error(ErrorKind::DType, sample(Attrs(), xi), "integer logits");
  expect_error(ErrorKind::Value, sample(Attrs(), f32({1, 3}, {0, kNaN, 1})), "NaN logits");
  expect_error(ErrorKind::Value, sample(Attrs(), f32({1, 2}, {-kInf, -kInf})), "all -inf logits");
}

}  // namespace
}  // namespace tessel::testing
