// cpu linear_algebra family against the reference: MatMul, DotGeneral, GroupedMatMul, Einsum,
// FusedMatMulBiasAct (every activation) and FusedSwiGLU over every claimed dtype, sizes around
// the GEMM's register and cache blocks, k = 0 / m = 0, transposed, strided and broadcast inputs.
#include <cmath>

#include "op_test_util.h"

namespace tessel::testing {
namespace {

// One rounding of the dtype (the cpu sums narrow floats in f32, the reference in f64); the f32
// sum itself differs from the f64 one by ~eps·sqrt(k)·|terms|, hence atol grows with k. Integers:
// exact.
constexpr PerFloatDType<Tolerance> kTolerance = {.f32 = {1e-5, 2e-6},
                                                 .f64 = {1e-12, 1e-12},
                                                 .f16 = {2e-3, 1e-4},
                                                 .bf16 = {1.6e-2, 1e-4},
                                                 .f8e4m3fn = {0.13, 1e-3},
                                                 .f8e5m2 = {0.26, 1e-3}};
Tolerance tol_for(DType dt, int64_t k) {
  const Tolerance t = kTolerance.of(dt);
  return {t.rtol, t.atol * std::sqrt(static_cast<double>(std::max<int64_t>(k, 1)))};
}

HostTensor data(DType dt, const Shape& s, uint64_t seed) {
  if (is_integer(dt)) return cast_to(random_tensor(DType::F64, s, seed, -60, 60), dt);
  return cast_to(random_tensor(DType::F64, s, seed, -1, 1), dt);
}

// cpu against reference on `in` as given and as non-contiguous views.
void check(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& in, int64_t k,
           const std::string& what, double scale = 1, bool layouts = true) {
  SCOPED_TRACE(what);
  const HostTensor want = run_op(kind, attrs, in, "reference")[0];
  const Tolerance t = tol_for(want.dtype, k);
  expect_close(run_op(kind, attrs, in, "cpu")[0], want, t.rtol * scale, t.atol * scale, what);
  if (!layouts) return;
  std::vector<HostTensor> nc;
  for (const HostTensor& x : in) nc.push_back(x.rank() >= 2 ? non_contiguous(x) : x);
  expect_close(run_op(kind, attrs, nc, "cpu")[0], want, t.rtol * scale, t.atol * scale,
               what + " non-contiguous");
}

std::string name(const char* what, DType dt, const Shape& a, const Shape& b) {
  return std::string(what) + " " + dtype_name(dt) + " " + shape_str(a) + "·" + shape_str(b);
}

const DType kAllTypes[] = {DType::F32,      DType::F64,    DType::F16, DType::BF16,
                           DType::F8E4M3FN, DType::F8E5M2, DType::U8,  DType::I8,
                           DType::I16,      DType::I32,    DType::I64};

// ---------------------------------------------------------------------------------------------
// MatMul

struct Mnk {
  int64_t m, n, k;
};
// Around MR (6, 8, 14), NR (16, 24, 32, 48, 64), kc (160 and 1024 on AVX-512, 256 on AVX2; k in
// equal blocks: 1100 is 552 + 548 on the 14×2 tile, 513 is 176 · 2 + 161 on AVX2's) and the
// thread threshold; k = 0 and m = 0.
const Mnk kSmall[] = {{1, 1, 1},     {1, 33, 17},    {15, 17, 33}, {14, 32, 256}, {29, 65, 257},
                      {29, 65, 513}, {15, 33, 1100}, {6, 16, 7},   {13, 31, 64},  {3, 5, 0},
                      {0, 4, 5},     {4, 0, 3},      {33, 1, 40},  {65, 63, 1}};

TEST(CpuLinearAlgebra, MatMulEveryDtypeAndBlockEdge) {
  uint64_t seed = 1;
  for (DType dt : kAllTypes)
    for (const Mnk& s : kSmall) {
      HostTensor a = data(dt, {s.m, s.k}, ++seed), b = data(dt, {s.k, s.n}, ++seed);
      check(OpKind::MatMul, matmul_attrs(), {a, b}, s.k, name("MatMul", dt, a.shape, b.shape));
    }
}

TEST(CpuLinearAlgebra, MatMulLargeThreaded) {
  uint64_t seed = 100;
  for (DType dt : {DType::F32, DType::F64, DType::BF16, DType::I32}) {
    HostTensor a = data(dt, {131, 300}, ++seed), b = data(dt, {300, 257}, ++seed);
    check(OpKind::MatMul, matmul_attrs(), {a, b}, 300, name("MatMul", dt, a.shape, b.shape), 1,
          false);
    HostTensor a2 = data(dt, {24, 333}, ++seed), b2 = data(dt, {333, 1000}, ++seed);
    check(OpKind::MatMul, matmul_attrs(), {a2, b2}, 333, name("MatMul", dt, a2.shape, b2.shape), 1,
          false);
    HostTensor bt = data(dt, {257, 300}, ++seed);
    check(OpKind::MatMul, matmul_attrs(false, true), {a, bt}, 300,
          name("MatMul tb", dt, a.shape, bt.shape), 1, false);
  }
  // Rows for two blocks a thread: each thread runs its own row blocks through the whole k
  // loop, packing all of B for itself. 850 rows are 61 panels, the last partial: its columns
  // are shared between the threads (with N = 20, one panel, only one thread has any).
  for (DType dt : {DType::F32, DType::F64})
    for (int64_t n : {257, 20}) {
      HostTensor a = data(dt, {850, 300}, ++seed), b = data(dt, {300, n}, ++seed);
      check(OpKind::MatMul, matmul_attrs(), {a, b}, 300, name("MatMul", dt, a.shape, b.shape), 1,
            false);
    }
  // The same paths over several k blocks (1100 = 552 + 548): accumulation into C across
  // blocks, on each thread's own rows and on the shared last panel. k blocks past 768 (1900 =
  // 952 + 948 on the 14×2 tile), whose row blocks are shorter (196 rows, A in 745 KB): 400 rows
  // are two blocks a thread. Columns past one B block (1024 on the 14×2 tile at f32, 512 at
  // f64), the last partial.
  for (const Mnk& s : {Mnk{310, 130, 1100}, Mnk{400, 130, 1900}, Mnk{300, 2100, 200}})
    for (DType dt : {DType::F32, DType::F64}) {
      HostTensor a = data(dt, {s.m, s.k}, ++seed), b = data(dt, {s.k, s.n}, ++seed);
      check(OpKind::MatMul, matmul_attrs(), {a, b}, s.k, name("MatMul", dt, a.shape, b.shape), 1,
            false);
    }
  // Few rows and B ≫ cache (≥ 16 MiB): the threads split the columns, each panel's next k
  // block packed along the multiply of the one before (more vectors than the 3 row panels' k
  // steps copy: the rest after it) and the one after that requested ahead; odd column and k
  // counts end in a partial panel (packed by itself) and a short k block.
  for (DType dt : {DType::F32, DType::F64}) {
    const int64_t n = dt == DType::F32 ? 3900 : 1950;
    HostTensor a = data(dt, {37, 1100}, ++seed), b = data(dt, {1100, n}, ++seed);
    check(OpKind::MatMul, matmul_attrs(), {a, b}, 1100, name("MatMul", dt, a.shape, b.shape), 1,
          false);
  }
  // One row block split by column panels between the threads: A packed whole once for both
  // (100 × 2100: 0.8 MB as f32, 1.7 MB as f64), each panel a part of its own over 14 k blocks,
  // the last panel partial; then A past 2 MB (128 × 4200), packed by every part per k block;
  // then 4500 columns, past one B block, both blocks reading the one packed A.
  for (DType dt : {DType::F32, DType::F64})
    for (int64_t k : {2100, 4200, 300}) {
      const int64_t m = k == 2100 ? 100 : k == 4200 ? 128 : 40, n = k == 300 ? 4500 : 300;
      HostTensor a = data(dt, {m, k}, ++seed), b = data(dt, {k, n}, ++seed);
      check(OpKind::MatMul, matmul_attrs(), {a, b}, k, name("MatMul", dt, a.shape, b.shape), 1,
            false);
    }
  // bf16 × bf16 (on AVX512_BF16, pairs along k through vdpbf16ps): an odd k over two k blocks
  // of pairs (2201 = 1101 pairs, 552 + 549, the last pair with an empty high half), two row
  // blocks, B row-major (widened in vectors, 8 panels at a time: 300 columns are a group, 1
  // more full panel and a partial one) and transposed (element by element), A strided.
  {
    HostTensor a = data(DType::BF16, {300, 2201}, ++seed),
               b = data(DType::BF16, {2201, 300}, ++seed);
    check(OpKind::MatMul, matmul_attrs(), {a, b}, 2201,
          name("MatMul", DType::BF16, a.shape, b.shape), 1, true);
    HostTensor bt = data(DType::BF16, {130, 2201}, ++seed);
    check(OpKind::MatMul, matmul_attrs(false, true), {a, bt}, 2201,
          name("MatMul tb", DType::BF16, a.shape, bt.shape), 1, false);
  }
  // A panel's last 1-4 columns against A read in place (at most 16 panels, rows owned by the
  // threads): sums along k (dot_edge), 14 or 7 rows a block, rows of a partial block dropped;
  // k with a partial vector (301) and over three k blocks with accumulation (2304 = 3 × 768).
  for (DType dt : {DType::F32, DType::F64})
    for (int64_t n : {33, 34, 35, 36, 196})
      for (int64_t k : {301, 2304}) {
        HostTensor a = data(dt, {300, k}, ++seed), b = data(dt, {k, n}, ++seed);
        check(OpKind::MatMul, matmul_attrs(), {a, b}, k, name("MatMul", dt, a.shape, b.shape), 1,
              false);
      }
  // Matrix-vector products (no packing) in both orientations and with transposes.
  for (DType dt : {DType::F32, DType::F64, DType::F16}) {
    HostTensor v = data(dt, {700}, ++seed), w = data(dt, {700, 1100}, ++seed),
               wt = data(dt, {1100, 700}, ++seed);
    check(OpKind::MatMul, matmul_attrs(), {v, w}, 700, name("MatMul vec", dt, v.shape, w.shape));
    HostTensor row = data(dt, {1, 700}, ++seed);
    check(OpKind::MatMul, matmul_attrs(false, true), {row, wt}, 700,
          name("MatMul vec tb", dt, row.shape, wt.shape));
    check(OpKind::MatMul, matmul_attrs(), {wt, v}, 700,
          name("MatMul mat·vec", dt, wt.shape, v.shape));
  }
}

TEST(CpuLinearAlgebra, MatMulTransposesOneDAndBatches) {
  uint64_t seed = 200;
  for (DType dt : {DType::F32, DType::F64, DType::F16, DType::F8E4M3FN, DType::I64, DType::U8}) {
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        HostTensor a = data(dt, ta ? Shape{19, 15} : Shape{15, 19}, ++seed);
        HostTensor b = data(dt, tb ? Shape{37, 19} : Shape{19, 37}, ++seed);
        check(OpKind::MatMul, matmul_attrs(ta, tb), {a, b}, 19,
              name("MatMul t", dt, a.shape, b.shape));
      }
    // 1-D operands.
    HostTensor v = data(dt, {23}, ++seed), m = data(dt, {23, 9}, ++seed),
               mt = data(dt, {9, 23}, ++seed), u = data(dt, {23}, ++seed);
    check(OpKind::MatMul, matmul_attrs(), {v, m}, 23, name("MatMul 1d", dt, v.shape, m.shape));
    check(OpKind::MatMul, matmul_attrs(), {mt, v}, 23, name("MatMul 1d", dt, mt.shape, v.shape));
    check(OpKind::MatMul, matmul_attrs(), {v, u}, 23, name("MatMul 1d", dt, v.shape, u.shape));
    HostTensor b3 = data(dt, {4, 23, 7}, ++seed);
    check(OpKind::MatMul, matmul_attrs(), {v, b3}, 23, name("MatMul 1d", dt, v.shape, b3.shape));
    // Batches: equal, broadcast on either side, a stride-0 view, the output's batch dims.
    HostTensor a4 = data(dt, {2, 3, 17, 33}, ++seed), b3b = data(dt, {3, 33, 15}, ++seed),
               b2 = data(dt, {33, 15}, ++seed), a2 = data(dt, {17, 33}, ++seed),
               b1 = data(dt, {2, 1, 33, 15}, ++seed);
    check(OpKind::MatMul, matmul_attrs(), {a4, b3b}, 33,
          name("MatMul batch", dt, a4.shape, b3b.shape));
    check(OpKind::MatMul, matmul_attrs(), {a4, b2}, 33,
          name("MatMul batch", dt, a4.shape, b2.shape));
    check(OpKind::MatMul, matmul_attrs(), {a2, b3b}, 33,
          name("MatMul batch", dt, a2.shape, b3b.shape));
    check(OpKind::MatMul, matmul_attrs(), {a4, b1}, 33,
          name("MatMul batch", dt, a4.shape, b1.shape));
    check(OpKind::MatMul, matmul_attrs(false, true),
          {a4, broadcast_view(data(dt, {1, 15, 33}, ++seed), {3, 15, 33})}, 33,
          name("MatMul bview", dt, a4.shape, b3b.shape));
    HostTensor e = data(dt, {2, 0, 33}, ++seed);
    check(OpKind::MatMul, matmul_attrs(), {e, b2}, 33, name("MatMul empty", dt, e.shape, b2.shape));
  }
}

// ---------------------------------------------------------------------------------------------
// DotGeneral

TEST(CpuLinearAlgebra, DotGeneral) {
  uint64_t seed = 300;
  struct Case {
    Shape a, b;
    Attrs attrs;
    int64_t k;
  };
  const Case cases[] = {
      {{7, 9}, {9, 11}, dot_general_attrs({}, {}, {1}, {0}), 9},
      {{2, 5, 3, 4}, {2, 4, 3, 6}, dot_general_attrs({0}, {0}, {2, 3}, {2, 1}), 12},
      {{2, 5, 3, 4}, {2, 3, 4, 6}, dot_general_attrs({0}, {0}, {2, 3}, {1, 2}), 12},
      {{5, 3}, {4}, dot_general_attrs({}, {}, {}, {}), 1},  // outer product
      {{3, 17, 6},
       {6, 3, 33},
       dot_general_attrs({0}, {1}, {-1}, {0}),
       6},  // batch not leading on rhs
      {{4, 0, 3}, {4, 3, 2}, dot_general_attrs({0}, {0}, {2}, {1}), 3},
      {{4, 5, 0}, {4, 0, 2}, dot_general_attrs({0}, {0}, {2}, {1}), 0},
  };
  for (DType dt : kAllTypes)
    for (const Case& c : cases) {
      HostTensor a = data(dt, c.a, ++seed), b = data(dt, c.b, ++seed);
      check(OpKind::DotGeneral, c.attrs, {a, b}, c.k, name("DotGeneral", dt, a.shape, b.shape));
    }
}

// ---------------------------------------------------------------------------------------------
// GroupedMatMul

TEST(CpuLinearAlgebra, GroupedMatMul) {
  uint64_t seed = 400;
  for (DType dt : kAllTypes)
    for (DType idt : {DType::I64, DType::I32}) {
      HostTensor x = data(dt, {19, 33}, ++seed), w = data(dt, {4, 33, 17}, ++seed);
      HostTensor ids =
          cast_to(i64({19}, {0, 3, 3, 1, 0, 0, 2, 3, 1, 1, 0, 3, 3, 3, 2, 0, 1, 0, 3}), idt);
      check(OpKind::GroupedMatMul, Attrs(), {x, w, ids}, 33,
            name("GroupedMatMul", dt, x.shape, w.shape));
    }
  // Enough tokens per expert to thread each GEMM.
  HostTensor x = data(DType::F32, {300, 256}, 7), w = data(DType::F32, {2, 256, 200}, 8);
  std::vector<int64_t> ids(300);
  for (int i = 0; i < 300; ++i) ids[i] = (i * 7) % 3 == 0 ? 1 : 0;
  check(OpKind::GroupedMatMul, Attrs(), {x, w, i64({300}, ids)}, 256, "GroupedMatMul big");
  // An expert id out of range is a Value error.
  expect_error(
      ErrorKind::Value,
      [] {
        run_op(OpKind::GroupedMatMul, Attrs(),
               {data(DType::F32, {2, 3}, 1), data(DType::F32, {2, 3, 4}, 2), i64({2}, {0, 2})},
               "cpu");
      },
      "bad expert id", "out of range");
}

// ---------------------------------------------------------------------------------------------
// Einsum

TEST(CpuLinearAlgebra, Einsum) {
  uint64_t seed = 500;
  struct Case {
    const char* eq;
    std::vector<Shape> shapes;
    int64_t k;
  };
  const Case cases[] = {
      {"ij,jk->ik", {{15, 17}, {17, 33}}, 17},
      {"ij,jk->ki", {{15, 17}, {17, 33}}, 17},
      {"bij,bjk->bik", {{3, 7, 9}, {3, 9, 5}}, 9},
      {"bhqd,bhkd->bhqk", {{2, 3, 17, 8}, {2, 3, 19, 8}}, 8},
      {"ii->i", {{6, 6}}, 1},
      {"ii", {{6, 6}}, 6},
      {"ij->", {{7, 9}}, 63},
      {"ij->ji", {{7, 9}}, 1},
      {"ij->j", {{7, 33}}, 7},
      {"i,j->ij", {{5}, {33}}, 1},
      {"ij,ij->ij", {{5, 7}, {5, 7}}, 1},
      {"ij,ij->", {{5, 7}, {5, 7}}, 35},
      {"ij,jk,kl->il", {{4, 5}, {5, 6}, {6, 3}}, 30},
      {"...ij,...jk->...ik", {{2, 1, 4, 5}, {3, 5, 6}}, 5},
      {"bij,jk", {{2, 4, 5}, {5, 3}}, 5},
      {"ijk,kj->i", {{4, 5, 6}, {6, 5}}, 30},
      {"ij,jk->ik", {{0, 3}, {3, 4}}, 3},
      {"ij,jk->ik", {{2, 0}, {0, 4}}, 0},
  };
  for (DType dt : kAllTypes)
    for (const Case& c : cases) {
      std::vector<HostTensor> in;
      for (const Shape& s : c.shapes) in.push_back(data(dt, s, ++seed));
      check(OpKind::Einsum, Attrs().set("equation", c.eq), in, c.k,
            std::string("Einsum ") + c.eq + " " + dtype_name(dt),
            // three operands: the reference rounds once, cpu keeps the intermediate in f32.
            c.shapes.size() > 2 ? 2 : 1);
    }
}

// ---------------------------------------------------------------------------------------------
// Fused kinds

TEST(CpuLinearAlgebra, FusedMatMulBiasActEveryActivation) {
  uint64_t seed = 600;
  const int kinds = op_info(OpKind::Activation).num_variants();
  for (DType dt : kFloatDTypes)
    for (int v = 0; v < kinds; ++v) {
      const auto act = static_cast<ActivationKind>(v);
      if (act == ActivationKind::Not) continue;
      for (bool tb : {false, true})
        for (bool bias : {false, true}) {
          HostTensor x = data(dt, {2, 9, 17}, ++seed);
          HostTensor w = data(dt, tb ? Shape{33, 17} : Shape{17, 33}, ++seed);
          std::vector<HostTensor> in = {x, w, bias ? data(dt, {33}, ++seed) : HostTensor{}};
          Attrs at = Attrs().set("act", act).set("transpose_b", tb);
          // Activations near a pole or a branch point (tan, 1/x, acosh at 1, ...) magnify the
          // accumulation-order difference of their input without bound: checked loosely.
          const bool steep = act == ActivationKind::Tan || act == ActivationKind::Reciprocal ||
                             act == ActivationKind::Acosh || act == ActivationKind::Atanh ||
                             act == ActivationKind::Asin || act == ActivationKind::Acos ||
                             act == ActivationKind::Log || act == ActivationKind::Log1p ||
                             act == ActivationKind::Sqrt || act == ActivationKind::Rsqrt;
          check(OpKind::FusedMatMulBiasAct, at, in, 17,
                std::string("FusedMatMulBiasAct ") + op_info(OpKind::Activation).variant_name(v) +
                    (tb ? " tb" : "") + (bias ? " bias " : " ") + dtype_name(dt),
                steep ? 2000 : 4, dt == DType::F32);
        }
    }
}

TEST(CpuLinearAlgebra, FusedMatMulBiasActShapes) {
  uint64_t seed = 700;
  for (DType dt : {DType::F32, DType::F64, DType::BF16}) {
    for (const Mnk& s : kSmall) {
      HostTensor x = data(dt, {s.m, s.k}, ++seed), w = data(dt, {s.k, s.n}, ++seed);
      Attrs at = Attrs().set("act", ActivationKind::Gelu);
      check(OpKind::FusedMatMulBiasAct, at, {x, w, data(dt, {s.n}, ++seed)}, s.k,
            name("FusedMatMulBiasAct", dt, x.shape, w.shape));
    }
    HostTensor x = data(dt, {3, 70, 300}, ++seed), w = data(dt, {200, 300}, ++seed);
    check(OpKind::FusedMatMulBiasAct,
          Attrs().set("act", ActivationKind::Relu).set("transpose_b", true),
          {x, w, data(dt, {200}, ++seed)}, 300,
          name("FusedMatMulBiasAct big", dt, x.shape, w.shape));
    // M = 128 on avx512: the 8-row tile, threads splitting the columns over the whole k loop
    // (k spans three blocks, n ends in a partial panel).
    HostTensor x2 = data(dt, {2, 64, 333}, ++seed), w2 = data(dt, {333, 1000}, ++seed);
    check(OpKind::FusedMatMulBiasAct, Attrs().set("act", ActivationKind::Relu),
          {x2, w2, data(dt, {1000}, ++seed)}, 333,
          name("FusedMatMulBiasAct narrow", dt, x2.shape, w2.shape));
    // Rows past one block a thread: the epilogue runs per row block after the last k block,
    // and on each thread's columns of the odd last panel (680 rows: 49 panels).
    HostTensor x4 = data(dt, {680, 300}, ++seed), w4 = data(dt, {300, 100}, ++seed);
    check(OpKind::FusedMatMulBiasAct, Attrs().set("act", ActivationKind::Relu),
          {x4, w4, data(dt, {100}, ++seed)}, 300,
          name("FusedMatMulBiasAct row blocks", dt, x4.shape, w4.shape));
    // Fewer column panels than threads (N = 40): the rows are split, each part packing all of
    // B, a partial panel, over k blocks; then N = 120, a few panels, a part each.
    for (int64_t n : {40, 120}) {
      HostTensor x3 = data(dt, {60, 1000}, ++seed), w3 = data(dt, {1000, n}, ++seed);
      check(OpKind::FusedMatMulBiasAct, Attrs().set("act", ActivationKind::Tanh),
            {x3, w3, data(dt, {n}, ++seed)}, 1000,
            name("FusedMatMulBiasAct few columns", dt, x3.shape, w3.shape));
    }
  }
}

TEST(CpuLinearAlgebra, FusedSwiGLU) {
  uint64_t seed = 800;
  struct Case {
    Shape x;
    int64_t f, n;
  };
  // {1, 1, 1} / {1, 17}: 1×1 and 1×n products whose low-precision weights are staged (once
  // read as f32: the GEMM took the m == 1 matrix-vector path for an n == 1 product).
  const Case cases[] = {{{5}, 7, 3},          {{3, 17}, 33, 15}, {{2, 5, 64}, 40, 64},
                        {{130, 96}, 200, 90}, {{0, 8}, 4, 6},    {{4, 0}, 5, 3},
                        {{1, 1, 1}, 1, 1},    {{1, 17}, 17, 1}};
  for (DType dt : kFloatDTypes)
    for (const Case& c : cases) {
      const int64_t k = c.x.back();
      std::vector<HostTensor> in = {data(dt, c.x, ++seed), data(dt, {k, c.f}, ++seed),
                                    data(dt, {k, c.f}, ++seed), data(dt, {c.f, c.n}, ++seed)};
      check(OpKind::FusedSwiGLU, Attrs(), in, k * c.f,
            std::string("FusedSwiGLU ") + dtype_name(dt) + " " + shape_str(c.x), 4);
    }
}

}  // namespace
}  // namespace tessel::testing
