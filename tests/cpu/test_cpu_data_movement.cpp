// cpu data movement against the reference: every kind, raw-byte movers on every dtype (compared
// byte for byte), odd / lane-straddling / threaded sizes, broadcast and non-contiguous inputs,
// empty tensors, scatter reductions with duplicate indices, and index errors.
#include <cstring>

#include "op_test_util.h"

namespace tessel::testing {
namespace {

constexpr DType kAllDTypes[] = {
#define TESSEL_MOVE_DTYPE(e, n, b, k, s) DType::e,
    TESSEL_DTYPES(TESSEL_MOVE_DTYPE)
#undef TESSEL_MOVE_DTYPE
};
// One dtype of each element size, for the shape sweeps.
constexpr DType kSizes[] = {DType::U8, DType::F16, DType::F32, DType::F64, DType::C128};
constexpr DType kNumberDTypes[] = {DType::U8,  DType::I8,       DType::I16,   DType::I32,
                                   DType::I64, DType::F16,      DType::BF16,  DType::F32,
                                   DType::F64, DType::F8E4M3FN, DType::F8E5M2};

// Raw pseudo-random bytes of any dtype.
HostTensor random_bytes(DType dt, const Shape& shape, uint64_t seed) {
  HostTensor t = HostTensor::empty(dt, shape);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  size_t n = static_cast<size_t>(t.numel()) * dtype_size(dt);
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    t.data()[i] = static_cast<uint8_t>(s >> 24);
  }
  return t;
}

void for_each_index(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& f) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < shape_numel(shape); ++i) {
    f(idx);
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// The same bytes as a non-contiguous view with a non-zero offset: stored with its axes reversed
// (rank >= 2) or every other element (rank 1).
HostTensor strided_bytes(const HostTensor& t) {
  int r = t.rank();
  if (r == 0) return t;
  HostTensor view;
  if (r == 1) {
    HostTensor big = HostTensor::empty(t.dtype, {t.numel() * 2 + 1});
    view = big;
    view.shape = t.shape;
    view.strides = {2};
    view.offset = 1;
  } else {
    std::vector<int> perm(r);
    for (int i = 0; i < r; ++i) perm[i] = r - 1 - i;
    Shape stored_shape = t.permuted(perm).shape;
    stored_shape[0] += 1;  // a spare leading slab gives the view an offset
    HostTensor stored = HostTensor::empty(t.dtype, stored_shape);
    view = stored.permuted(perm);
    view.shape = t.shape;
    view.offset = view.strides[r - 1];
  }
  int es = dtype_size(t.dtype);
  for_each_index(t.shape, [&](const std::vector<int64_t>& i) {
    std::memcpy(view.element_ptr(view.offset_of(i.data())), t.element_ptr(t.offset_of(i.data())),
                es);
  });
  return view;
}

void expect_same_bytes(const HostTensor& got, const HostTensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype, want.dtype) << what;
  ASSERT_EQ(got.shape, want.shape) << what;
  int es = dtype_size(got.dtype), bad = 0;
  int64_t k = 0;
  for_each_index(got.shape, [&](const std::vector<int64_t>& i) {
    if (std::memcmp(got.element_ptr(got.offset_of(i.data())),
                    want.element_ptr(want.offset_of(i.data())), es) != 0 &&
        bad++ < 5)
      ADD_FAILURE() << what << ": element " << k << " differs";
    ++k;
  });
}

std::string name(OpKind kind, DType dt, const std::string& what) {
  return std::string(op_name(kind)) + " " + dtype_name(dt) + " " + what;
}

// Runs on cpu and reference; every output must match byte for byte.
void check_bytes(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& inputs,
                 const std::string& what) {
  auto want = run_op(kind, attrs, inputs, "reference");
  auto got = run_op(kind, attrs, inputs, "cpu");
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) expect_same_bytes(got[i], want[i], what);
}

// The data as given and as a strided view (first input only, or all with `all`).
void check_layouts(OpKind kind, const Attrs& attrs, std::vector<HostTensor> inputs,
                   const std::string& what, bool all = false) {
  check_bytes(kind, attrs, inputs, what);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (i == 0 || all) inputs[i] = strided_bytes(inputs[i]);
  check_bytes(kind, attrs, inputs, what + " (strided)");
}

using Ints = std::vector<int64_t>;

TEST(CpuDataMovement, ReshapeTransposeEveryDType) {
  for (DType dt : kAllDTypes) {
    HostTensor x = random_bytes(dt, {3, 5, 7}, 1);
    check_layouts(OpKind::Reshape, Attrs().set("shape", Ints{7, 15}), {x},
                  name(OpKind::Reshape, dt, ""));
    check_layouts(OpKind::Transpose, Attrs().set("perm", Ints{2, 0, 1}), {x},
                  name(OpKind::Transpose, dt, ""));
  }
}

TEST(CpuDataMovement, TransposeShapes) {
  const std::vector<std::pair<Shape, Ints>> cases = {
      {{}, {}},
      {{17}, {0}},
      {{15, 17}, {1, 0}},
      {{33, 63}, {1, 0}},
      {{65, 129}, {1, 0}},
      {{300, 257}, {1, 0}},
      {{1024, 1031}, {1, 0}},
      {{3, 65, 129}, {2, 0, 1}},
      {{4, 64, 48}, {0, 2, 1}},
      {{2, 3, 4, 5}, {3, 1, 0, 2}},
      {{6, 1, 33}, {2, 1, 0}},
      {{0, 5}, {1, 0}},
      {{5, 0, 3}, {2, 1, 0}},
  };
  for (DType dt : kSizes)
    for (const auto& [shape, perm] : cases)
      check_layouts(OpKind::Transpose, Attrs().set("perm", perm), {random_bytes(dt, shape, 2)},
                    name(OpKind::Transpose, dt, shape_str(shape)));
}

TEST(CpuDataMovement, ReshapeShapes) {
  for (DType dt : kSizes) {
    check_layouts(OpKind::Reshape, Attrs().set("shape", Ints{}), {random_bytes(dt, {1, 1}, 3)},
                  name(OpKind::Reshape, dt, "scalar"));
    check_layouts(OpKind::Reshape, Attrs().set("shape", Ints{-1}), {random_bytes(dt, {129, 65}, 3)},
                  name(OpKind::Reshape, dt, "flat"));
    check_layouts(OpKind::Reshape, Attrs().set("shape", Ints{0, 4}), {random_bytes(dt, {2, 0}, 3)},
                  name(OpKind::Reshape, dt, "empty"));
  }
}

TEST(CpuDataMovement, NarrowSliceReverse) {
  for (DType dt : kAllDTypes) {
    HostTensor x = random_bytes(dt, {17, 33}, 4);
    check_layouts(OpKind::Narrow, Attrs().set("axis", 1).set("start", -20).set("length", 17), {x},
                  name(OpKind::Narrow, dt, ""));
    check_layouts(
        OpKind::Slice,
        Attrs().set("starts", Ints{-1, 2}).set("ends", Ints{-100, 31}).set("steps", Ints{-3, 2}),
        {x}, name(OpKind::Slice, dt, ""));
    check_layouts(OpKind::Reverse, Attrs().set("axes", Ints{0, -1}), {x},
                  name(OpKind::Reverse, dt, ""));
  }
  for (DType dt : kSizes) {
    HostTensor big = random_bytes(dt, {3, 1000, 65}, 5);
    check_layouts(OpKind::Narrow, Attrs().set("axis", 1).set("start", 7).set("length", 900), {big},
                  name(OpKind::Narrow, dt, "big"));
    check_layouts(OpKind::Slice,
                  Attrs()
                      .set("starts", Ints{1, 5})
                      .set("ends", Ints{1000, 1000})
                      .set("axes", Ints{2, 1})
                      .set("steps", Ints{3, 1}),
                  {big}, name(OpKind::Slice, dt, "big"));
    check_layouts(OpKind::Slice, Attrs().set("starts", Ints{5}).set("ends", Ints{5}), {big},
                  name(OpKind::Slice, dt, "empty"));
    check_layouts(OpKind::Reverse, Attrs().set("axes", Ints{1}), {big},
                  name(OpKind::Reverse, dt, "big"));
    check_layouts(OpKind::Reverse, Attrs().set("axes", Ints{0}), {random_bytes(dt, {0, 3}, 5)},
                  name(OpKind::Reverse, dt, "empty"));
  }
}

TEST(CpuDataMovement, ConcatSplit) {
  for (DType dt : kAllDTypes) {
    HostTensor a = random_bytes(dt, {3, 5}, 6), b = random_bytes(dt, {3, 1}, 7),
               c = random_bytes(dt, {3, 0}, 8);
    check_layouts(OpKind::Concat, Attrs().set("axis", -1), {a, b, c, a},
                  name(OpKind::Concat, dt, ""), true);
    check_layouts(OpKind::Split, Attrs().set("axis", 1).set("sizes", Ints{2, 0, 3}), {a},
                  name(OpKind::Split, dt, ""));
  }
  for (DType dt : kSizes) {
    HostTensor a = random_bytes(dt, {65, 1000}, 9), b = random_bytes(dt, {17, 1000}, 10);
    check_layouts(OpKind::Concat, Attrs().set("axis", 0), {a, b},
                  name(OpKind::Concat, dt, "axis 0"), true);
    HostTensor c = random_bytes(dt, {65, 33}, 11);
    check_layouts(OpKind::Concat, Attrs().set("axis", 1), {a, c},
                  name(OpKind::Concat, dt, "axis 1"), true);
    check_layouts(OpKind::Split, Attrs().set("axis", 1).set("sizes", Ints{15, 17, 968}), {a},
                  name(OpKind::Split, dt, "big"));
    check_bytes(OpKind::Concat, Attrs().set("axis", 0),
                {random_bytes(dt, {1}, 1), random_bytes(dt, {64}, 2)},
                name(OpKind::Concat, dt, "1-D"));
  }
}

TEST(CpuDataMovement, ExpandTile) {
  for (DType dt : kAllDTypes) {
    check_layouts(OpKind::Expand, Attrs().set("shape", Ints{4, 3, 5}),
                  {random_bytes(dt, {3, 1}, 13)}, name(OpKind::Expand, dt, ""));
    check_layouts(OpKind::Tile, Attrs().set("repeats", Ints{2, 3}), {random_bytes(dt, {3, 5}, 14)},
                  name(OpKind::Tile, dt, ""));
  }
  for (DType dt : kSizes) {
    check_bytes(OpKind::Expand, Attrs().set("shape", Ints{129, 1000}), {random_bytes(dt, {}, 15)},
                name(OpKind::Expand, dt, "scalar"));
    check_layouts(OpKind::Expand, Attrs().set("shape", Ints{33, 1000}),
                  {random_bytes(dt, {1, 1000}, 16)}, name(OpKind::Expand, dt, "rows"));
    check_bytes(OpKind::Expand, Attrs().set("shape", Ints{2, 65, 17}),
                {broadcast_view(random_bytes(dt, {65, 1}, 17), {65, 17})},
                name(OpKind::Expand, dt, "view"));
    check_layouts(OpKind::Tile, Attrs().set("repeats", Ints{3, 1, 17}),
                  {random_bytes(dt, {5, 63, 33}, 18)}, name(OpKind::Tile, dt, "big"));
    check_layouts(OpKind::Tile, Attrs().set("repeats", Ints{0, 2}), {random_bytes(dt, {5, 3}, 18)},
                  name(OpKind::Tile, dt, "empty"));
  }
}

TEST(CpuDataMovement, PadEveryMode) {
  for (DType dt : kAllDTypes) {
    bool scalar = dt != DType::F4E2M1FNx2 && dt != DType::F8E8M0FNU;
    for (PadMode m : {PadMode::Constant, PadMode::Reflect, PadMode::Replicate, PadMode::Circular}) {
      if (m == PadMode::Constant && !scalar) continue;
      HostTensor x = random_bytes(dt, {4, 17}, 19);
      Attrs a = Attrs().set("pads", Ints{2, 3, 1, -2}).set("mode", m).set("value", 1.5);
      check_layouts(OpKind::Pad, a, {x},
                    name(OpKind::Pad, dt, std::to_string(static_cast<int>(m))));
    }
  }
  for (DType dt : kSizes)
    for (PadMode m : {PadMode::Constant, PadMode::Reflect, PadMode::Replicate, PadMode::Circular}) {
      std::string w = std::to_string(static_cast<int>(m));
      HostTensor x = random_bytes(dt, {3, 65, 129}, 20);
      check_layouts(OpKind::Pad, Attrs().set("pads", Ints{0, 15, 33, 1, 17, 63}).set("mode", m),
                    {x}, name(OpKind::Pad, dt, w + " big"));
      check_layouts(OpKind::Pad, Attrs().set("pads", Ints{-1, 2, -3, 1}).set("mode", m),
                    {random_bytes(dt, {5, 7}, 21)}, name(OpKind::Pad, dt, w + " crop"));
      check_bytes(OpKind::Pad, Attrs().set("pads", Ints{}).set("mode", m),
                  {random_bytes(dt, {}, 22)}, name(OpKind::Pad, dt, w + " scalar"));
    }
  check_bytes(OpKind::Pad, Attrs().set("pads", Ints{1, 2}).set("value", -2.0),
              {random_bytes(DType::F32, {0}, 23)}, "Pad empty input");
  check_bytes(OpKind::Pad, Attrs().set("pads", Ints{0, 0, 2, 2}).set("value", 3.0),
              {random_bytes(DType::I32, {0, 3}, 23)}, "Pad empty output");
}

TEST(CpuDataMovement, TriluResizeInterpolate) {
  for (DType dt : kAllDTypes) {
    bool scalar = dt != DType::F4E2M1FNx2 && dt != DType::F8E8M0FNU;
    if (scalar)
      for (bool upper : {true, false})
        for (int64_t k : {-2, 0, 3})
          check_layouts(OpKind::Trilu, Attrs().set("upper", upper).set("k", k),
                        {random_bytes(dt, {2, 5, 7}, 24)},
                        name(OpKind::Trilu, dt, std::to_string(k)));
    check_layouts(OpKind::ResizeNearest2x, Attrs(), {random_bytes(dt, {2, 3, 5}, 25)},
                  name(OpKind::ResizeNearest2x, dt, ""));
    check_layouts(OpKind::Interpolate3d, Attrs().set("size", Ints{3, 5, 2}),
                  {random_bytes(dt, {1, 2, 2, 3, 4}, 26)}, name(OpKind::Interpolate3d, dt, ""));
  }
  for (DType dt : kSizes) {
    check_layouts(OpKind::Trilu, Attrs().set("upper", false).set("k", -1),
                  {random_bytes(dt, {3, 129, 257}, 27)}, name(OpKind::Trilu, dt, "big"));
    check_layouts(OpKind::ResizeNearest2x, Attrs(), {random_bytes(dt, {3, 65, 129}, 28)},
                  name(OpKind::ResizeNearest2x, dt, "big"));
    check_layouts(OpKind::Interpolate3d, Attrs().set("size", Ints{7, 33, 65}),
                  {random_bytes(dt, {2, 3, 5, 17, 33}, 29)},
                  name(OpKind::Interpolate3d, dt, "big"));
  }
}

TEST(CpuDataMovement, RangeEveryNumberDType) {
  for (DType dt : kNumberDTypes) {
    for (auto [s, l, d] :
         {std::tuple{0.0, 17.0, 1.0}, {-3.0, 1500.0, 2.0}, {100.0, -20.0, -3.0}, {0.0, 0.0, 1.0}}) {
      Attrs a = Attrs().set("start", s).set("limit", l).set("delta", d).set("dtype", dt);
      check_bytes(OpKind::Range, a, {}, name(OpKind::Range, dt, std::to_string(l)));
    }
    if (is_float(dt))
      check_bytes(
          OpKind::Range,
          Attrs().set("start", 0.1).set("limit", 1000.3).set("delta", 0.37).set("dtype", dt), {},
          name(OpKind::Range, dt, "fractional"));
  }
}

HostTensor indices(DType dt, const Shape& shape, int64_t lo, int64_t hi, uint64_t seed) {
  return cast_to(
      random_tensor(DType::I64, shape, seed, static_cast<double>(lo), static_cast<double>(hi)), dt);
}

TEST(CpuDataMovement, GatherFamily) {
  for (DType dt : kAllDTypes) {
    HostTensor x = random_bytes(dt, {5, 7, 3}, 30);
    for (DType it : {DType::I32, DType::I64}) {
      for (int axis : {0, 1, -1}) {
        int64_t dim = x.shape[axis < 0 ? 2 : axis];
        check_layouts(OpKind::Gather, Attrs().set("axis", axis),
                      {x, indices(it, {2, 4}, -dim, dim, 31)},
                      name(OpKind::Gather, dt, std::to_string(axis)), true);
        check_layouts(OpKind::GatherElements, Attrs().set("axis", axis),
                      {x, indices(it, {4, 5, 2}, -dim, dim, 32)},
                      name(OpKind::GatherElements, dt, ""), true);
      }
      check_layouts(OpKind::GatherNd, Attrs(), {x, indices(it, {4, 2}, -5, 5, 33)},
                    name(OpKind::GatherNd, dt, "b0"), true);
      check_layouts(OpKind::GatherNd, Attrs().set("batch_dims", 1),
                    {x, indices(it, {5, 3, 1}, -7, 7, 34)}, name(OpKind::GatherNd, dt, "b1"), true);
    }
    for (DType it : {DType::U8, DType::I8, DType::I16, DType::I32, DType::I64})
      check_layouts(OpKind::Embedding, Attrs(),
                    {random_bytes(dt, {9, 6}, 35), indices(it, {3, 4}, 0, 9, 36)},
                    name(OpKind::Embedding, dt, dtype_name(it)), true);
  }
  for (DType dt : kSizes) {
    HostTensor big = random_bytes(dt, {65, 129, 17}, 37);
    check_layouts(OpKind::Gather, Attrs().set("axis", 1),
                  {big, indices(DType::I64, {200}, -129, 129, 38)}, name(OpKind::Gather, dt, "big"),
                  true);
    check_layouts(OpKind::Gather, Attrs().set("axis", 2),
                  {big, indices(DType::I32, {33}, 0, 17, 39)},
                  name(OpKind::Gather, dt, "last axis"), true);
    check_layouts(OpKind::GatherElements, Attrs().set("axis", 1),
                  {big, indices(DType::I64, {65, 300, 17}, -129, 129, 40)},
                  name(OpKind::GatherElements, dt, "big"), true);
    check_layouts(OpKind::Embedding, Attrs(),
                  {random_bytes(dt, {1000, 65}, 41), indices(DType::I32, {7, 129}, 0, 1000, 42)},
                  name(OpKind::Embedding, dt, "big"), true);
    check_layouts(OpKind::GatherNd, Attrs(), {big, indices(DType::I64, {300, 2}, 0, 65, 43)},
                  name(OpKind::GatherNd, dt, "big"), true);
    check_bytes(OpKind::Gather, Attrs(), {big, indices(DType::I64, {0}, 0, 1, 44)},
                name(OpKind::Gather, dt, "empty"));
  }
}

TEST(CpuDataMovement, IndexErrors) {
  HostTensor x = random_tensor(DType::F32, {4, 5}, 45);
  auto fails = [&](OpKind k, const Attrs& a, const std::vector<HostTensor>& in, const char* what) {
    expect_error(
        ErrorKind::Value, [&] { run_op(k, a, in, "cpu"); }, what);
  };
  fails(OpKind::Gather, Attrs(), {x, i64({2}, {0, 4})}, "gather high");
  fails(OpKind::Gather, Attrs().set("axis", 1), {x, i64({1}, {-6})}, "gather low");
  fails(OpKind::Embedding, Attrs(), {x, i64({1}, {-1})}, "embedding negative");
  fails(OpKind::GatherNd, Attrs(), {x, i64({1, 2}, {1, 5})}, "gather_nd");
  fails(OpKind::GatherElements, Attrs(), {x, i64({1, 1}, {9})}, "gather_elements");
  fails(OpKind::ScatterAdd, Attrs(), {x, i64({1}, {4}), random_tensor(DType::F32, {1, 5}, 1)},
        "scatter_add");
  fails(OpKind::ScatterNd, Attrs(), {x, i64({1, 1}, {-5}), random_tensor(DType::F32, {1, 5}, 1)},
        "scatter_nd");
  fails(OpKind::ScatterElements, Attrs().set("axis", 1),
        {x, i64({1, 1}, {5}), random_tensor(DType::F32, {1, 1}, 1)}, "scatter_elements");
  // Indices are not read when nothing is moved (as the reference).
  check_bytes(OpKind::Gather, Attrs().set("axis", 1),
              {random_tensor(DType::F32, {0, 5}, 1), i64({1}, {99})}, "gather of nothing");
}

TEST(CpuDataMovement, OneHot) {
  for (DType it : {DType::U8, DType::I8, DType::I16, DType::I32, DType::I64})
    for (DType out : {DType::F32, DType::I64, DType::Bool, DType::F16, DType::F8E5M2, DType::U8})
      for (int64_t axis : {-1, 0, 1}) {
        Attrs a = Attrs()
                      .set("depth", 5)
                      .set("axis", axis)
                      .set("dtype", out)
                      .set("on_value", 3.0)
                      .set("off_value", -1.0);
        check_layouts(OpKind::OneHot, a, {indices(it, {3, 7}, -7, 8, 46)},
                      name(OpKind::OneHot, out, dtype_name(it)));
      }
  check_bytes(OpKind::OneHot, Attrs().set("depth", 1000),
              {indices(DType::I32, {129}, -1000, 1000, 47)}, "OneHot big");
  check_bytes(OpKind::OneHot, Attrs().set("depth", 3), {indices(DType::I32, {0, 2}, 0, 3, 47)},
              "OneHot empty");
}

constexpr PerFloatDType<double> kTolerance = {
    .f32 = 1e-5, .f64 = 1e-12, .f16 = 1e-3, .bf16 = 8e-3, .f8e4m3fn = 0.07, .f8e5m2 = 0.13};

void check_close(OpKind kind, const Attrs& attrs, std::vector<HostTensor> inputs, double tol,
                 const std::string& what) {
  for (int pass = 0; pass < 2; ++pass) {
    auto want = run_op(kind, attrs, inputs, "reference");
    auto got = run_op(kind, attrs, inputs, "cpu");
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      expect_close(got[i], want[i], tol, tol, what + (pass ? " (strided)" : ""));
    for (HostTensor& t : inputs) t = strided_bytes(t);
  }
}

TEST(CpuDataMovement, ScatterReductions) {
  for (DType dt : kNumberDTypes) {
    double tol = kTolerance.of(dt);
    auto data = [&](const Shape& s, uint64_t seed) {
      return cast_to(random_tensor(DType::F64, s, seed, -4, 4), dt);
    };
    for (int axis : {0, 1}) {
      Shape us = {5, 4};
      us[axis] = 6;
      check_close(OpKind::ScatterAdd, Attrs().set("axis", axis),
                  {data({5, 4}, 48), i64({6}, {1, -1, 1, 0, 2, 1}), data(us, 49)}, tol,
                  name(OpKind::ScatterAdd, dt, std::to_string(axis)));
    }
    for (ScatterReduction r : {ScatterReduction::None, ScatterReduction::Add, ScatterReduction::Mul,
                               ScatterReduction::Max, ScatterReduction::Min}) {
      std::string w = std::to_string(static_cast<int>(r));
      check_close(OpKind::ScatterNd, Attrs().set("reduction", r),
                  {data({5, 4}, 50), i64({4, 1}, {1, 3, 1, -4}), data({4, 4}, 51)}, tol,
                  name(OpKind::ScatterNd, dt, w));
      check_close(OpKind::ScatterNd, Attrs().set("reduction", r),
                  {data({5, 4}, 52), i64({3, 2}, {1, 3, 1, 3, 4, 0}), data({3}, 53)}, tol,
                  name(OpKind::ScatterNd, dt, w + " k=2"));
      check_close(OpKind::ScatterElements, Attrs().set("reduction", r).set("axis", 1),
                  {data({5, 4}, 54), indices(DType::I64, {4, 6}, -4, 4, 55), data({4, 6}, 56)}, tol,
                  name(OpKind::ScatterElements, dt, w));
      check_close(OpKind::ScatterElements, Attrs().set("reduction", r),
                  {data({5, 4}, 57), indices(DType::I32, {7, 3}, -5, 5, 58), data({7, 3}, 59)}, tol,
                  name(OpKind::ScatterElements, dt, w + " axis 0"));
    }
  }
  // Big (threaded) cases in f32 and i32.
  for (DType dt : {DType::F32, DType::I32}) {
    double tol = kTolerance.of(dt);
    auto data = [&](const Shape& s, uint64_t seed) {
      return cast_to(random_tensor(DType::F64, s, seed, -4, 4), dt);
    };
    check_close(OpKind::ScatterAdd, Attrs().set("axis", 1),
                {data({3, 100, 1000}, 60), indices(DType::I64, {150}, -100, 100, 61),
                 data({3, 150, 1000}, 62)},
                tol, name(OpKind::ScatterAdd, dt, "big"));
    check_close(
        OpKind::ScatterAdd, Attrs(),
        {data({100, 33}, 60), indices(DType::I64, {2000}, 0, 100, 61), data({2000, 33}, 62)}, tol,
        name(OpKind::ScatterAdd, dt, "many rows"));
    for (ScatterReduction r :
         {ScatterReduction::None, ScatterReduction::Add, ScatterReduction::Max}) {
      check_close(
          OpKind::ScatterNd, Attrs().set("reduction", r),
          {data({300, 1000}, 63), indices(DType::I64, {200, 1}, 0, 300, 64), data({200, 1000}, 65)},
          tol, name(OpKind::ScatterNd, dt, "big"));
      check_close(
          OpKind::ScatterElements, Attrs().set("reduction", r).set("axis", 0),
          {data({300, 257}, 66), indices(DType::I64, {400, 257}, 0, 300, 67), data({400, 257}, 68)},
          tol, name(OpKind::ScatterElements, dt, "big"));
    }
  }
  // None moves bytes: every dtype.
  for (DType dt : kAllDTypes) {
    check_bytes(
        OpKind::ScatterNd, Attrs(),
        {random_bytes(dt, {5, 3}, 69), i64({3, 1}, {4, 0, 4}), random_bytes(dt, {3, 3}, 70)},
        name(OpKind::ScatterNd, dt, "none"));
    check_bytes(OpKind::ScatterElements, Attrs().set("axis", 1),
                {random_bytes(dt, {5, 3}, 71), indices(DType::I32, {4, 5}, -3, 3, 72),
                 random_bytes(dt, {4, 5}, 73)},
                name(OpKind::ScatterElements, dt, "none"));
  }
  // Empty updates.
  check_close(
      OpKind::ScatterAdd, Attrs(),
      {random_tensor(DType::F32, {4, 3}, 74), i64({0}, {}), random_tensor(DType::F32, {0, 3}, 75)},
      0, "ScatterAdd empty");
}

}  // namespace
}  // namespace tessel::testing
