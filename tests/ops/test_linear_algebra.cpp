// LinearAlgebra: MatMul, DotGeneral, GroupedMatMul, LoraMatMul and Einsum against PyTorch goldens
// (tests/goldens/gen_linear_algebra.py) and hand-computed integer / rounding cases, with
// contiguous and non-contiguous inputs; bad inputs; and the shape rules of the pending kinds.
#include <optional>

#include "op_test_util.h"

namespace tessel::testing {
namespace {

using nlohmann::json;

TensorType tt(DType dtype, Shape shape) { return {dtype, std::move(shape)}; }

// Runs every golden case of `kind`: contiguous f64, non-contiguous f64, and f32.
void run_goldens(OpKind kind) {
  int count = 0;
  for (const json& c : golden_cases_of("linear_algebra")) {
    if (c.at("kind") != op_name(kind)) continue;
    ++count;
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    Attrs attrs = attrs_from_json(kind, c.at("attrs"));
    std::vector<HostTensor> ins;
    for (const json& t : c.at("inputs")) ins.push_back(tensor_from_json(t));
    HostTensor expected = tensor_from_json(c.at("output"));
    expect_golden_layouts(kind, attrs, ins, expected, 1e-12, name);
    expect_golden_in(DType::F32, kind, attrs, ins, expected, 1e-5, 1e-5, name);
  }
  EXPECT_GT(count, 0) << "no golden cases for " << op_name(kind);
}

Attrs eq(const char* equation) { return Attrs().set("equation", equation); }

// ---------------------------------------------------------------------------------------------
// Goldens

TEST(LinearAlgebraGolden, MatMul) { run_goldens(OpKind::MatMul); }
TEST(LinearAlgebraGolden, DotGeneral) { run_goldens(OpKind::DotGeneral); }
TEST(LinearAlgebraGolden, GroupedMatMul) { run_goldens(OpKind::GroupedMatMul); }
TEST(LinearAlgebraGolden, LoraMatMul) { run_goldens(OpKind::LoraMatMul); }
TEST(LinearAlgebraGolden, Einsum) { run_goldens(OpKind::Einsum); }

// Every native kind runs in every dtype it claims: small-integer inputs make the f64 result
// exact, so the result must be that value rounded once into the dtype (wrapped for integers).
TEST(LinearAlgebraClaims, EveryClaimedDtypeRoundsTheExactResultOnce) {
  struct Case {
    OpKind kind;
    Attrs attrs;
    std::vector<Shape> shapes;
  };
  const std::vector<Case> cases = {
      {OpKind::MatMul, matmul_attrs(false, true), {{2, 3, 4}, {5, 4}}},
      {OpKind::DotGeneral, dot_general_attrs({0}, {0}, {2}, {1}), {{2, 3, 4}, {2, 4, 5}}},
      {OpKind::GroupedMatMul, Attrs(), {{4, 3}, {2, 3, 5}}},
      {OpKind::Einsum, eq("bij,bjk->bik"), {{2, 3, 4}, {2, 4, 5}}},
  };
  const Backend& ref = backend("reference");
  int cells = 0;
  for (const Case& c : cases) {
    for (int d = 0; d < kNumDTypes; ++d) {
      const DType dt = static_cast<DType>(d);
      if (!ref.claims().find(c.kind, 0, dt)) continue;
      ++cells;
      SCOPED_TRACE(std::string(op_name(c.kind)) + " " + dtype_name(dt));
      std::vector<HostTensor> ins, ins64;
      for (size_t i = 0; i < c.shapes.size(); ++i) {
        bool unsigned_ = dt == DType::U8;
        HostTensor t64 = random_tensor(DType::F64, c.shapes[i], 100 + i, unsigned_ ? 0 : -4, 5);
        for (int64_t j = 0; j < t64.numel(); ++j) t64.set_f64(j, std::floor(t64.get_f64(j)));
        ins64.push_back(t64);
        HostTensor t = HostTensor::empty(dt, c.shapes[i]);
        for (int64_t j = 0; j < t.numel(); ++j) t.set_f64(j, t64.get_f64(j));
        ins.push_back(non_contiguous(t));
      }
      if (c.kind == OpKind::GroupedMatMul) {
        ins.push_back(i64({4}, {1, 0, 1, 1}));
        ins64.push_back(ins.back());
      }
      HostTensor y = run_op1(c.kind, c.attrs, ins);
      HostTensor exact = run_op1(c.kind, c.attrs, ins64);
      ASSERT_EQ(y.dtype, dt);
      HostTensor want = HostTensor::empty(dt, exact.shape);
      for (int64_t j = 0; j < want.numel(); ++j) want.set_f64(j, exact.get_f64(j));
      for (int64_t j = 0; j < want.numel(); ++j) {
        if (is_integer(dt))
          ASSERT_EQ(y.get_i64(j), want.get_i64(j)) << j;
        else
          ASSERT_EQ(y.get_f64(j), want.get_f64(j)) << j;
      }
    }
  }
  // Four kinds x (6 floats + 5 integers).
  EXPECT_EQ(cells, 44);
}

// ---------------------------------------------------------------------------------------------
// MatMul

TEST(LinearAlgebraMatMul, HandComputedFloat) {
  // [[1,2,3],[4,5,6]] · [[1,0],[0,1],[1,1]] = [[4,5],[10,11]]
  auto y = run_op1(OpKind::MatMul, matmul_attrs(),
                   {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {1, 0, 0, 1, 1, 1})});
  EXPECT_EQ(y.shape, (Shape{2, 2}));
  expect_close(y, {4, 5, 10, 11}, 0, 0);
  // 1-D · 1-D is a scalar.
  auto s = run_op1(OpKind::MatMul, matmul_attrs(), {f64({3}, {1, 2, 3}), f64({3}, {4, 5, 6})});
  EXPECT_EQ(s.shape, Shape{});
  expect_close(s, {32}, 0, 0);
}

TEST(LinearAlgebraMatMul, IntegersAreExactAndWrap) {
  // i32, batched with a broadcast rhs: [2,2,2] · [2,2].
  auto a =
      HostTensor::from_vector(DType::I32, {2, 2, 2}, std::vector<int>{1, 2, 3, 4, -1, 0, 2, -3});
  auto b = HostTensor::from_vector(DType::I32, {2, 2}, std::vector<int>{5, 6, 7, 8});
  auto y = run_op1(OpKind::MatMul, matmul_attrs(), {a, b});
  EXPECT_EQ(y.dtype, DType::I32);
  std::vector<int64_t> want = {19, 22, 43, 50, -5, -6, -11, -12};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y.get_i64(i), want[i]) << i;
  // The same through a non-contiguous view and transpose_b: b stored as bᵀ.
  auto bt = HostTensor::from_vector(DType::I32, {2, 2}, std::vector<int>{5, 7, 6, 8});
  auto y2 =
      run_op1(OpKind::MatMul, matmul_attrs(false, true), {non_contiguous(a), non_contiguous(bt)});
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y2.get_i64(i), want[i]) << i;

  // i64 beyond f64's exact range: (2^53 + 1)·1 + 1·1 = 2^53 + 2, and 2^53+1 itself.
  const int64_t big = (int64_t{1} << 53) + 1;
  auto yl =
      run_op1(OpKind::MatMul, matmul_attrs(), {i64({1, 2}, {big, 1}), i64({2, 2}, {1, 0, 1, 1})});
  EXPECT_EQ(yl.get_i64(0), big + 1);
  EXPECT_EQ(yl.get_i64(1), 1);
  // i8 wraps to the output width: 100·2 + 100·1 = 300 -> 44; -128·1 + -1·1 = -129 -> 127.
  auto a8 = HostTensor::from_vector(DType::I8, {2, 2}, std::vector<int>{100, 100, -128, -1});
  auto b8 = HostTensor::from_vector(DType::I8, {2}, std::vector<int>{2, 1});
  auto y8 = run_op1(OpKind::MatMul, matmul_attrs(),
                    {a8, HostTensor::from_vector(DType::I8, {2}, std::vector<int>{1, 1})});
  EXPECT_EQ(y8.get_i64(0), 200 - 256);
  EXPECT_EQ(y8.get_i64(1), 127);
  auto y8b = run_op1(OpKind::MatMul, matmul_attrs(), {a8, b8});
  EXPECT_EQ(y8b.get_i64(0), 300 - 256);
  // u8: 200·2 = 400 -> 144.
  auto u = run_op1(OpKind::MatMul, matmul_attrs(),
                   {HostTensor::from_vector(DType::U8, {1}, std::vector<int>{200}),
                    HostTensor::from_vector(DType::U8, {1, 1}, std::vector<int>{2})});
  EXPECT_EQ(u.shape, Shape{1});
  EXPECT_EQ(u.get_i64(0), 144);
}

TEST(LinearAlgebraMatMul, NarrowFloatsRoundOnceFromF64) {
  // The sum is computed exactly and rounded once: 1 + 2^-11 + 2^-11 in f16 is 1 + 2^-10 (a
  // running f16 sum would round each 1 + 2^-11 tie back to 1).
  const double e = std::ldexp(1.0, -11);
  for (DType dt : {DType::F16, DType::BF16, DType::F8E4M3FN, DType::F8E5M2}) {
    SCOPED_TRACE(dtype_name(dt));
    HostTensor a = HostTensor::empty(dt, {1, 3}), b = HostTensor::empty(dt, {3, 1});
    double av[3] = {1, e, e}, bv[3] = {1, 1, 1};
    for (int i = 0; i < 3; ++i) {
      a.set_f64(i, av[i]);
      b.set_f64(i, bv[i]);
    }
    HostTensor y = run_op1(OpKind::MatMul, matmul_attrs(), {a, b});
    HostTensor want = HostTensor::empty(dt, {1, 1});
    want.set_f64(0, a.get_f64(0) + a.get_f64(1) + a.get_f64(2));
    EXPECT_EQ(y.dtype, dt);
    EXPECT_EQ(y.get_f64(0), want.get_f64(0));
  }
  HostTensor a = HostTensor::empty(DType::F16, {1, 3}), b = HostTensor::empty(DType::F16, {3, 1});
  double av[3] = {1, e, e};
  for (int i = 0; i < 3; ++i) {
    a.set_f64(i, av[i]);
    b.set_f64(i, 1);
  }
  EXPECT_EQ(run_op1(OpKind::MatMul, matmul_attrs(), {a, b}).get_f64(0), 1 + 2 * e);
}

TEST(LinearAlgebraMatMul, EmptyContractionGivesZeros) {
  auto y = run_op1(OpKind::MatMul, matmul_attrs(), {f32({2, 0}, {}), f32({0, 3}, {})});
  EXPECT_EQ(y.shape, (Shape{2, 3}));
  expect_close(y, std::vector<double>(6, 0.0), 0, 0);
}

TEST(LinearAlgebraMatMul, ShapeRule) {
  EXPECT_EQ(infer_type(OpKind::MatMul, matmul_attrs(),
                       {tt(DType::F32, {7, 1, 3, 4}), tt(DType::F32, {5, 4, 2})}),
            tt(DType::F32, {7, 5, 3, 2}));
  EXPECT_EQ(infer_type(OpKind::MatMul, matmul_attrs(true, true),
                       {tt(DType::F32, {4, 3}), tt(DType::F32, {2, 4})}),
            tt(DType::F32, {3, 2}));
  EXPECT_EQ(infer_type(OpKind::MatMul, matmul_attrs(), {tt(DType::I64, {4}), tt(DType::I64, {4})}),
            tt(DType::I64, {}));
}

TEST(LinearAlgebraMatMul, BadInputs) {
  auto f = [](const Attrs& a, TensorType x, TensorType y) {
    return [=] { infer_type(OpKind::MatMul, a, {x, y}); };
  };
  expect_error(ErrorKind::Shape, f(matmul_attrs(), tt(DType::F32, {}), tt(DType::F32, {3})), "",
               "rank");
  expect_error(ErrorKind::Shape, f(matmul_attrs(), tt(DType::F32, {2, 3}), tt(DType::F32, {4, 2})),
               "", "K = 3");
  expect_error(ErrorKind::Shape,
               f(matmul_attrs(), tt(DType::F32, {3, 2, 3}), tt(DType::F32, {4, 3, 2})), "",
               "broadcast");
  expect_error(ErrorKind::DType, f(matmul_attrs(), tt(DType::F32, {2, 3}), tt(DType::F64, {3, 2})));
  expect_error(ErrorKind::DType,
               f(matmul_attrs(), tt(DType::Bool, {2, 3}), tt(DType::Bool, {3, 2})));
  expect_error(ErrorKind::Value,
               f(matmul_attrs(true, false), tt(DType::F32, {3}), tt(DType::F32, {3, 2})), "",
               "transpose_a");
  expect_error(ErrorKind::Value,
               f(matmul_attrs(false, true), tt(DType::F32, {2, 3}), tt(DType::F32, {3})), "",
               "transpose_b");
}

// ---------------------------------------------------------------------------------------------
// DotGeneral

TEST(LinearAlgebraDotGeneral, IntegerOuterAndBatch) {
  auto y = run_op1(OpKind::DotGeneral, dot_general_attrs({}, {}, {}, {}),
                   {i64({2}, {2, -3}), i64({3}, {1, 10, 100})});
  EXPECT_EQ(y.shape, (Shape{2, 3}));
  std::vector<int64_t> want = {2, 20, 200, -3, -30, -300};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y.get_i64(i), want[i]);
  // Batch dim 1 of a with dim 0 of c, no contraction: y[b, i, j] = a[i, b] · c[b, j].
  auto z = run_op1(OpKind::DotGeneral, dot_general_attrs({1}, {0}, {}, {}),
                   {i64({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {5, 6, 7, 8})});
  EXPECT_EQ(z.shape, (Shape{2, 2, 2}));
  // b=0: a[:,0] = {1,3}, c[0,:] = {5,6} -> {5,6,15,18}; b=1: {2,4} x {7,8} -> {14,16,28,32}
  std::vector<int64_t> zw = {5, 6, 15, 18, 14, 16, 28, 32};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(z.get_i64(i), zw[i]) << i;
}

TEST(LinearAlgebraDotGeneral, NegativeDimsCountFromTheEnd) {
  EXPECT_EQ(infer_type(OpKind::DotGeneral, dot_general_attrs({0}, {0}, {-1}, {-2}),
                       {tt(DType::F32, {2, 3, 4}), tt(DType::F32, {2, 4, 5})}),
            tt(DType::F32, {2, 3, 5}));
}

TEST(LinearAlgebraDotGeneral, BadInputs) {
  auto f = [](const Attrs& a, TensorType x, TensorType y) {
    return [=] { infer_type(OpKind::DotGeneral, a, {x, y}); };
  };
  TensorType a = tt(DType::F32, {2, 3, 4}), b = tt(DType::F32, {2, 4, 5});
  expect_error(ErrorKind::Value, f(dot_general_attrs({0}, {0}, {3}, {1}), a, b), "",
               "out of range");
  expect_error(ErrorKind::Value, f(dot_general_attrs({0}, {0}, {2}, {-4}), a, b), "",
               "out of range");
  expect_error(ErrorKind::Value, f(dot_general_attrs({0}, {0}, {0}, {1}), a, b), "", "twice");
  expect_error(ErrorKind::Value, f(dot_general_attrs({2, 2}, {1, 2}, {}, {}), a, b), "", "twice");
  expect_error(ErrorKind::Value, f(dot_general_attrs({0}, {}, {2}, {1}), a, b), "", "lhs_batch");
  expect_error(ErrorKind::Value, f(dot_general_attrs({0}, {0}, {2}, {}), a, b), "", "lhs_contract");
  expect_error(ErrorKind::Shape, f(dot_general_attrs({0}, {0}, {1}, {1}), a, b), "", "contracted");
  expect_error(ErrorKind::Shape, f(dot_general_attrs({1}, {0}, {2}, {1}), a, b), "", "batch");
  expect_error(ErrorKind::DType, f(dot_general_attrs({}, {}, {}, {}), a, tt(DType::I32, {2})));
}

// ---------------------------------------------------------------------------------------------
// GroupedMatMul

TEST(LinearAlgebraGroupedMatMul, HandComputedIntegers) {
  // Expert 0 doubles, expert 1 swaps the two columns.
  auto x = i64({3, 2}, {1, 2, 3, 4, 5, 6});
  auto w = i64({2, 2, 2}, {2, 0, 0, 2, 0, 1, 1, 0});
  auto ids = HostTensor::from_vector(DType::I32, {3}, std::vector<int>{1, 0, 1});
  auto y = run_op1(OpKind::GroupedMatMul, Attrs(), {x, w, non_contiguous(ids)});
  std::vector<int64_t> want = {2, 1, 6, 8, 6, 5};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y.get_i64(i), want[i]) << i;
}

TEST(LinearAlgebraGroupedMatMul, BadInputs) {
  auto x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto w = random_tensor(DType::F32, {2, 3, 4}, 1);
  for (int64_t bad : {2, -1}) {
    expect_error(
        ErrorKind::Value,
        [&] {
          run_op1(OpKind::GroupedMatMul, Attrs(), {x, w, i64({2}, {0, bad})});
        },
        "", "expert_ids[1]");
  }
  auto f = [](TensorType a, TensorType b, TensorType c) {
    return [=] { infer_type(OpKind::GroupedMatMul, Attrs(), {a, b, c}); };
  };
  expect_error(ErrorKind::Shape,
               f(tt(DType::F32, {2, 3}), tt(DType::F32, {2, 4, 4}), tt(DType::I64, {2})), "", "K");
  expect_error(ErrorKind::Shape,
               f(tt(DType::F32, {2, 3}), tt(DType::F32, {2, 3, 4}), tt(DType::I64, {3})), "",
               "[T]");
  expect_error(ErrorKind::Shape,
               f(tt(DType::F32, {2, 3}), tt(DType::F32, {3, 4}), tt(DType::I64, {2})), "",
               "[E,K,N]");
  expect_error(ErrorKind::DType,
               f(tt(DType::F32, {2, 3}), tt(DType::F32, {2, 3, 4}), tt(DType::F32, {2})));
  expect_error(ErrorKind::DType,
               f(tt(DType::F32, {2, 3}), tt(DType::F16, {2, 3, 4}), tt(DType::I32, {2})));
}

// ---------------------------------------------------------------------------------------------
// LoraMatMul

TEST(LinearAlgebraLoraMatMul, HandComputed) {
  // x = [1, 2], W = I, A = [[1],[1]], B = [[1, -1]], scale 0.5: [1,2] + 0.5·3·[1,-1] = [2.5, 0.5]
  auto y = run_op1(
      OpKind::LoraMatMul, Attrs().set("scale", 0.5),
      {f64({2}, {1, 2}), f64({2, 2}, {1, 0, 0, 1}), f64({2, 1}, {1, 1}), f64({1, 2}, {1, -1})});
  EXPECT_EQ(y.shape, Shape{2});
  expect_close(y, {2.5, 0.5}, 0, 0);
}

TEST(LinearAlgebraLoraMatMul, BadInputs) {
  auto f = [](double scale, std::vector<TensorType> t) {
    return [=] {
      infer_type(OpKind::LoraMatMul, Attrs().set("scale", scale), {t[0], t[1], t[2], t[3]});
    };
  };
  TensorType x = tt(DType::F32, {2, 5}), w = tt(DType::F32, {5, 4}), a = tt(DType::F32, {5, 2}),
             b = tt(DType::F32, {2, 4});
  EXPECT_EQ(infer_type(OpKind::LoraMatMul, Attrs(), {x, w, a, b}), tt(DType::F32, {2, 4}));
  expect_error(ErrorKind::Shape, f(1, {x, w, a, tt(DType::F32, {3, 4})}), "", "r = 2");
  expect_error(ErrorKind::Shape, f(1, {x, w, a, tt(DType::F32, {2, 3})}), "", "N = 4");
  expect_error(ErrorKind::Shape, f(1, {x, tt(DType::F32, {4, 4}), a, b}), "", "K = 5");
  expect_error(ErrorKind::Shape, f(1, {tt(DType::F32, {}), w, a, b}));
  expect_error(ErrorKind::DType, f(1, {x, w, a, tt(DType::F64, {2, 4})}));
  expect_error(ErrorKind::DType, f(1, {tt(DType::I32, {2, 5}), tt(DType::I32, {5, 4}),
                                       tt(DType::I32, {5, 2}), tt(DType::I32, {2, 4})}));
  expect_error(ErrorKind::Value, f(INFINITY, {x, w, a, b}), "", "scale");
}

// ---------------------------------------------------------------------------------------------
// Einsum

TEST(LinearAlgebraEinsum, IntegersExact) {
  auto a = i64({2, 2}, {1, 2, 3, 4});
  auto b = i64({2, 2}, {5, 6, 7, 8});
  auto y = run_op1(OpKind::Einsum, eq("ij,jk->ik"), {a, non_contiguous(b)});
  std::vector<int64_t> want = {19, 22, 43, 50};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(y.get_i64(i), want[i]);
  auto tr =
      run_op1(OpKind::Einsum, eq("ii"),
              {HostTensor::from_vector(DType::I32, {2, 2}, std::vector<int>{7, 100, -100, 5})});
  EXPECT_EQ(tr.dtype, DType::I32);
  EXPECT_EQ(tr.shape, Shape{});
  EXPECT_EQ(tr.get_i64(0), 12);
  // Three operands, one of them a scalar: ",i,i->" = s·Σ a_i b_i
  auto s = run_op1(OpKind::Einsum, eq(",i,i->"),
                   {i64({}, {3}), i64({3}, {1, 2, 3}), i64({3}, {1, 1, 2})});
  EXPECT_EQ(s.get_i64(0), 3 * (1 + 2 + 6));
}

TEST(LinearAlgebraEinsum, SpacesEmptyDimsAndCopies) {
  auto a = random_tensor(DType::F64, {2, 3}, 7);
  auto y = run_op1(OpKind::Einsum, eq(" i j -> j i "), {a});
  EXPECT_EQ(y.shape, (Shape{3, 2}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(y.get_f64(j * 2 + i), a.get_f64(i * 3 + j));
  auto z = run_op1(OpKind::Einsum, eq("ij,jk->ik"), {f32({2, 0}, {}), f32({0, 3}, {})});
  EXPECT_EQ(z.shape, (Shape{2, 3}));
  expect_close(z, std::vector<double>(6, 0.0), 0, 0);
}

TEST(LinearAlgebraEinsum, MalformedEquationsNameTheEquation) {
  auto f = [](const char* e, std::vector<TensorType> ts) {
    return [=] {
      std::vector<std::optional<TensorType>> in(ts.begin(), ts.end());
      infer_type(OpKind::Einsum, eq(e), in);
    };
  };
  TensorType m = tt(DType::F32, {2, 3});
  expect_error(ErrorKind::Value, f("ij,jk->ik", {m}), "", "\"ij,jk->ik\"");
  expect_error(ErrorKind::Value, f("ij->iz", {m}), "", "'z'");
  expect_error(ErrorKind::Value, f("ij->ii", {m}), "", "twice");
  expect_error(ErrorKind::Value, f("i.j", {m}), "", "\"i.j\"");
  expect_error(ErrorKind::Value, f("i$j", {m}), "", "'$'");
  expect_error(ErrorKind::Value, f("ij->i->j", {m}), "", "'->'");
  expect_error(ErrorKind::Value, f("ij->i,j", {m}), "", "'->'");
  expect_error(ErrorKind::Value, f("......", {m}), "", "'...'");
  expect_error(ErrorKind::Value, f("...i->i", {tt(DType::F32, {2, 3})}), "", "'...'");
  expect_error(ErrorKind::Value, f("...i...->i", {m}), "", "'...'");
  expect_error(ErrorKind::Shape, f("ijk", {m}), "", "rank 2");
  expect_error(ErrorKind::Shape, f("i", {m}), "", "rank 2");
  expect_error(ErrorKind::Shape, f("ij,jk", {m, tt(DType::F32, {4, 2})}), "", "label 'j'");
  expect_error(ErrorKind::Shape, f("ii", {m}), "", "label 'i'");
  expect_error(ErrorKind::Shape, f("...i,...i", {tt(DType::F32, {2, 3}), tt(DType::F32, {4, 3})}),
               "", "'...'");
  expect_error(ErrorKind::DType, f("ij,jk", {m, tt(DType::F64, {3, 2})}));
  expect_error(ErrorKind::DType, f("ij", {tt(DType::Bool, {2, 3})}));
}

// ---------------------------------------------------------------------------------------------
// Pending kinds: shape rules only (the reference does not claim them).

TEST(LinearAlgebraPending, SolveRules) {
  TensorType a = tt(DType::F32, {4, 4});
  EXPECT_EQ(infer_type(OpKind::DenseSolve, Attrs(), {a, tt(DType::F32, {4})}), tt(DType::F32, {4}));
  EXPECT_EQ(infer_type(OpKind::DenseSolve, Attrs(), {a, tt(DType::F32, {4, 2})}),
            tt(DType::F32, {4, 2}));
  expect_error(
      ErrorKind::Shape,
      [&] {
        infer_type(OpKind::DenseSolve, Attrs(), {tt(DType::F32, {4, 3}), tt(DType::F32, {4})});
      },
      "", "square");
  expect_error(ErrorKind::Shape, [&] {
    infer_type(OpKind::DenseSolve, Attrs(), {a, tt(DType::F32, {3})});
  });
  expect_error(ErrorKind::Shape, [&] {
    infer_type(OpKind::DenseSolve, Attrs(), {tt(DType::F32, {2, 4, 4}), tt(DType::F32, {4})});
  });
  expect_error(ErrorKind::DType, [&] {
    infer_type(OpKind::DenseSolve, Attrs(), {a, tt(DType::F64, {4})});
  });
  expect_error(ErrorKind::DType, [&] {
    infer_type(OpKind::DenseSolve, Attrs(), {tt(DType::I32, {4, 4}), tt(DType::I32, {4})});
  });

  EXPECT_EQ(infer_type(OpKind::BatchedDenseSolve, Attrs(),
                       {tt(DType::F64, {3, 1, 4, 4}), tt(DType::F64, {5, 4, 2})}),
            tt(DType::F64, {3, 5, 4, 2}));
  expect_error(
      ErrorKind::Shape,
      [&] {
        infer_type(OpKind::BatchedDenseSolve, Attrs(),
                   {tt(DType::F64, {3, 4, 4}), tt(DType::F64, {2, 4, 2})});
      },
      "", "broadcast");
  expect_error(ErrorKind::Shape, [&] {
    infer_type(OpKind::BatchedDenseSolve, Attrs(),
               {tt(DType::F64, {3, 4, 4}), tt(DType::F64, {3, 4})});
  });

  Attrs left = Attrs().set("left", true), right = Attrs().set("left", false);
  EXPECT_EQ(infer_type(OpKind::TriangularSolve, left,
                       {tt(DType::F32, {2, 3, 3}), tt(DType::F32, {3, 5})}),
            tt(DType::F32, {2, 3, 5}));
  EXPECT_EQ(
      infer_type(OpKind::TriangularSolve, right, {tt(DType::F32, {3, 3}), tt(DType::F32, {5, 3})}),
      tt(DType::F32, {5, 3}));
  expect_error(
      ErrorKind::Shape,
      [&] {
        infer_type(OpKind::TriangularSolve, right,
                   {tt(DType::F32, {3, 3}), tt(DType::F32, {3, 5})});
      },
      "", "[...,K,N]");
}

TEST(LinearAlgebraPending, FactorizationRules) {
  TensorType a = tt(DType::F64, {2, 5, 3});
  EXPECT_EQ(infer_type(OpKind::Cholesky, Attrs(), {tt(DType::F32, {2, 3, 3})}),
            tt(DType::F32, {2, 3, 3}));
  expect_error(
      ErrorKind::Shape, [&] { infer_type(OpKind::Cholesky, Attrs(), {a}); }, "", "square");
  EXPECT_EQ(infer_type(OpKind::Det, Attrs(), {tt(DType::F32, {2, 3, 3})}), tt(DType::F32, {2}));
  EXPECT_EQ(infer_type(OpKind::LogDet, Attrs(), {tt(DType::F32, {3, 3})}), tt(DType::F32, {}));
  expect_error(ErrorKind::Shape, [&] { infer_type(OpKind::Det, Attrs(), {tt(DType::F32, {3})}); });
  expect_error(ErrorKind::DType, [&] {
    infer_type(OpKind::LogDet, Attrs(), {tt(DType::I64, {3, 3})});
  });

  auto svd = [](SvdPart p) { return Attrs().set("part", p); };
  EXPECT_EQ(infer_type(OpKind::Svd, svd(SvdPart::U), {a}), tt(DType::F64, {2, 5, 3}));
  EXPECT_EQ(infer_type(OpKind::Svd, svd(SvdPart::S), {a}), tt(DType::F64, {2, 3}));
  EXPECT_EQ(infer_type(OpKind::Svd, svd(SvdPart::Vt), {a}), tt(DType::F64, {2, 3, 3}));
  TensorType wide = tt(DType::F64, {3, 5});
  EXPECT_EQ(infer_type(OpKind::Svd, svd(SvdPart::U), {wide}), tt(DType::F64, {3, 3}));
  EXPECT_EQ(infer_type(OpKind::Svd, svd(SvdPart::Vt), {wide}), tt(DType::F64, {3, 5}));
  expect_error(ErrorKind::Shape,
               [&] { infer_type(OpKind::Svd, svd(SvdPart::S), {tt(DType::F64, {5})}); });

  auto qr = [](QrPart p) { return Attrs().set("part", p); };
  EXPECT_EQ(infer_type(OpKind::Qr, qr(QrPart::Q), {a}), tt(DType::F64, {2, 5, 3}));
  EXPECT_EQ(infer_type(OpKind::Qr, qr(QrPart::R), {a}), tt(DType::F64, {2, 3, 3}));
  expect_error(
      ErrorKind::Shape, [&] { infer_type(OpKind::Qr, qr(QrPart::Q), {wide}); }, "", "M >= N");
}

TEST(LinearAlgebraPending, ScaledGroupedMatMulRule) {
  auto f = [](TensorType x, TensorType w, TensorType s, TensorType ids) {
    return infer_type(OpKind::ScaledGroupedMatMul, Attrs(), {x, w, s, ids});
  };
  TensorType x = tt(DType::BF16, {5, 32}), w = tt(DType::U8, {3, 7, 16}),
             s = tt(DType::F8E4M3FN, {3, 7, 2}), ids = tt(DType::I32, {5});
  EXPECT_EQ(f(x, w, s, ids), tt(DType::F32, {5, 7}));
  expect_error(
      ErrorKind::Shape,
      [&] {
        f(tt(DType::BF16, {5, 24}), tt(DType::U8, {3, 7, 12}), s, ids);
      },
      "", "multiple of 16");
  expect_error(
      ErrorKind::Shape,
      [&] {
        f(x, tt(DType::U8, {3, 7, 32}), s, ids);
      },
      "", "[E,N,K/2]");
  expect_error(
      ErrorKind::Shape,
      [&] {
        f(x, w, tt(DType::F8E4M3FN, {3, 7, 4}), ids);
      },
      "", "K/16");
  expect_error(
      ErrorKind::DType,
      [&] {
        f(x, w, tt(DType::F32, {3, 7, 2}), ids);
      },
      "", "scales");
  expect_error(ErrorKind::DType, [&] { f(x, tt(DType::I8, {3, 7, 16}), s, ids); });
  expect_error(
      ErrorKind::Shape, [&] { f(x, w, s, tt(DType::I32, {4})); }, "", "[T]");
  expect_error(
      ErrorKind::Value,
      [&] {
        infer_type(OpKind::ScaledGroupedMatMul, Attrs().set("scheme", QuantScheme::Int8Block),
                   {x, w, s, ids});
      },
      "", "Nvfp4Block");
}

TEST(LinearAlgebraPending, NotClaimedByTheReference) {
  const Backend& ref = backend("reference");
  for (OpKind k : {OpKind::DenseSolve, OpKind::BatchedDenseSolve, OpKind::ScaledGroupedMatMul,
                   OpKind::Cholesky, OpKind::TriangularSolve, OpKind::Det, OpKind::LogDet,
                   OpKind::Svd, OpKind::Qr}) {
    EXPECT_EQ(op_info(k).status, OpStatus::Pending) << op_name(k);
    EXPECT_FALSE(ref.claims().claims_kind(k)) << op_name(k);
  }
  expect_error(
      ErrorKind::Unsupported,
      [] {
        run_op1(OpKind::Det, Attrs(), {f32({2, 2}, {1, 2, 3, 4})});
      },
      "", "pending");
}

}  // namespace
}  // namespace tessel::testing
