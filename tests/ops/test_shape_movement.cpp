// ShapeMovement: all 24 kinds on the reference backend, against PyTorch / numpy goldens
// (tests/goldens/gen_shape_movement.py) run contiguous, non-contiguous, decomposed (where a kind
// has a decomposition) and in several dtypes, plus hand-computed cases for what torch cannot
// check (ONNX clamping corners, negative indices, duplicate scatters, rounding once) and errors.
#include <cmath>
#include <limits>
#include <set>

#include "op_test_util.h"
#include "ops/rules.h"

namespace tessel::testing {
namespace {

using nlohmann::json;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

void expect_fails(ErrorKind kind, OpKind op, const Attrs& attrs, std::vector<HostTensor> in,
                  const std::string& what) {
  expect_error(
      kind, [&] { run_op(op, attrs, in); }, std::string(op_name(op)) + ": " + what);
}

struct GoldenCase {
  OpKind kind;
  Attrs attrs;
  std::vector<HostTensor> inputs, outputs;
  std::string name;
};

std::vector<GoldenCase> golden_cases() {
  std::vector<GoldenCase> out;
  for (const json& c : golden_cases_of("shape_movement")) {
    GoldenCase g;
    g.kind = *op_from_name(c.at("kind").get<std::string>());
    g.attrs = attrs_from_json(g.kind, c.at("attrs"));
    for (const json& t : c.at("inputs")) g.inputs.push_back(tensor_from_json(t));
    for (const json& t : c.at("outputs")) g.outputs.push_back(tensor_from_json(t));
    g.name = std::string(op_name(g.kind)) + " #" + std::to_string(out.size()) + " " +
             g.attrs.to_string(op_info(g.kind));
    out.push_back(std::move(g));
  }
  return out;
}

// Runs the node after replacing it by its decomposition (which must remove it).
std::vector<HostTensor> run_decomposed(OpKind kind, const Attrs& attrs,
                                       const std::vector<HostTensor>& inputs) {
  Graph g;
  std::vector<Value> ins;
  for (const HostTensor& t : inputs) ins.push_back(g.input(t.dtype, t.shape));
  g.outputs = g.add(kind, attrs, ins);
  Graph d = decompose(g);
  for (const Node& n : d.nodes()) EXPECT_NE(n.kind, kind) << "decomposition kept the node";
  return compile_for(d, backend("reference"))->run(inputs);
}

void expect_outputs(const std::vector<HostTensor>& got, const std::vector<HostTensor>& want,
                    const std::string& what, double tol = 0) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].dtype, want[i].dtype) << what;
    expect_close(got[i], want[i], tol, tol, what + " output " + std::to_string(i));
  }
}

bool is_data(const HostTensor& t) { return t.dtype == DType::F64; }

TEST(ShapeMovementGolden, EveryCaseContiguousAndNonContiguous) {
  std::set<std::string> kinds;
  for (const GoldenCase& c : golden_cases()) {
    kinds.insert(op_name(c.kind));
    expect_outputs(run_op(c.kind, c.attrs, c.inputs), c.outputs, c.name, 1e-12);
    std::vector<HostTensor> strided;
    for (const HostTensor& t : c.inputs) strided.push_back(non_contiguous(t));
    expect_outputs(run_op(c.kind, c.attrs, strided), c.outputs, c.name + " (non-contiguous)",
                   1e-12);
    if (rules_for(c.kind).decompose)
      expect_outputs(run_decomposed(c.kind, c.attrs, c.inputs), c.outputs, c.name + " (decomposed)",
                     1e-12);
  }
  size_t category = 0;
  for (const OpInfo& op : all_ops()) category += op.category == Category::ShapeMovement;
  EXPECT_EQ(kinds.size(), category) << "every ShapeMovement kind has goldens";
}

// Pure movement commutes with a cast, so each golden holds in every dtype: cast the data inputs
// and the expected outputs and require exact equality.
TEST(ShapeMovementGolden, MovementKindsInEveryDtype) {
  const std::set<OpKind> movement = {
      OpKind::Reshape,  OpKind::Transpose,      OpKind::Narrow,          OpKind::Concat,
      OpKind::Expand,   OpKind::Gather,         OpKind::Reverse,         OpKind::Slice,
      OpKind::Pad,      OpKind::Tile,           OpKind::Trilu,           OpKind::GatherNd,
      OpKind::Split,    OpKind::GatherElements, OpKind::ResizeNearest2x, OpKind::Interpolate3d,
      OpKind::Embedding};
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32, DType::U8,
                      DType::Bool, DType::C64, DType::F8E4M3FN, DType::U16, DType::U64}) {
    int ran = 0;
    for (const GoldenCase& c : golden_cases()) {
      bool none_scatter = (c.kind == OpKind::ScatterNd || c.kind == OpKind::ScatterElements) &&
                          (!c.attrs.has("reduction") ||
                           c.attrs.i("reduction") == static_cast<int64_t>(ScatterReduction::None));
      if (!movement.count(c.kind) && !none_scatter) continue;
      std::vector<HostTensor> in, want;
      for (const HostTensor& t : c.inputs) in.push_back(is_data(t) ? cast_to(t, dtype) : t);
      for (const HostTensor& t : c.outputs) want.push_back(cast_to(t, dtype));
      std::string what = c.name + " in " + dtype_name(dtype);
      expect_outputs(run_op(c.kind, c.attrs, in), want, what);
      for (HostTensor& t : in) t = non_contiguous(t);
      expect_outputs(run_op(c.kind, c.attrs, in), want, what + " (non-contiguous)");
      ++ran;
    }
    EXPECT_GT(ran, 30) << dtype_name(dtype);
  }
}

TEST(ShapeMovement, ComplexAndPackedElementsMoveWhole) {
  HostTensor z = HostTensor::empty(DType::C64, {2, 3});
  for (int64_t i = 0; i < 6; ++i) z.set_c128(i, {double(i), -0.5 * double(i + 1)});
  HostTensor t = run_op1(OpKind::Transpose, Attrs().set("perm", std::vector<int64_t>{1, 0}),
                         {non_contiguous(z)});
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 2; ++c) EXPECT_EQ(t.get_c128(r * 2 + c), z.get_c128(c * 3 + r));
  // f4_e2m1fn_x2 (two values per byte): a byte moves intact.
  HostTensor p = HostTensor::empty(DType::F4E2M1FNx2, {4});
  for (int64_t i = 0; i < 4; ++i) *p.element_ptr(i) = static_cast<uint8_t>(0x10 * i + 0x0F - i);
  HostTensor r = run_op1(OpKind::Reverse, Attrs().set("axes", std::vector<int64_t>{0}), {p});
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(*r.element_ptr(i), *p.element_ptr(3 - i));
}

// ---- Layout kinds ----------------------------------------------------------------------------

TEST(ShapeMovement, ReshapeInfersOneDimAndKeepsLiteralZeros) {
  HostTensor x = random_tensor(DType::I64, {2, 3, 4}, 1, -50, 50);
  HostTensor y = run_op1(OpKind::Reshape, Attrs().set("shape", Shape{3, -1}), {non_contiguous(x)});
  EXPECT_EQ(y.shape, (Shape{3, 8}));
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(y.get_i64(i), x.get_i64(i));
  HostTensor e = HostTensor::empty(DType::F32, {2, 0});
  EXPECT_EQ(run_op1(OpKind::Reshape, Attrs().set("shape", Shape{0, 5}), {e}).shape, (Shape{0, 5}));
  Attrs two = Attrs().set("shape", Shape{-1, -1});
  expect_fails(ErrorKind::Shape, OpKind::Reshape, two, {x}, "two -1");
  expect_fails(ErrorKind::Shape, OpKind::Reshape, Attrs().set("shape", Shape{5, -1}), {x},
               "24 % 5");
  expect_fails(ErrorKind::Shape, OpKind::Reshape, Attrs().set("shape", Shape{4, 5}), {x}, "numel");
  expect_fails(ErrorKind::Shape, OpKind::Reshape, Attrs().set("shape", Shape{0, -1}), {e},
               "-1 next to 0");
  expect_fails(ErrorKind::Shape, OpKind::Reshape, Attrs().set("shape", Shape{-2, -12}), {x},
               "negative");
}

TEST(ShapeMovement, TransposeNarrowConcatSplitErrors) {
  HostTensor x = random_tensor(DType::F32, {2, 3, 5}, 2);
  expect_fails(ErrorKind::Value, OpKind::Transpose, Attrs().set("perm", Shape{0, 0, 1}), {x},
               "repeated perm");
  expect_fails(ErrorKind::Shape, OpKind::Transpose, Attrs().set("perm", Shape{1, 0}), {x},
               "short perm");
  auto narrow = [](int64_t axis, int64_t start, int64_t len) {
    return Attrs().set("axis", axis).set("start", start).set("length", len);
  };
  EXPECT_EQ(run_op1(OpKind::Narrow, narrow(-1, 5, 0), {x}).shape, (Shape{2, 3, 0}));
  expect_fails(ErrorKind::Value, OpKind::Narrow, narrow(2, 4, 2), {x}, "past the end");
  expect_fails(ErrorKind::Value, OpKind::Narrow, narrow(2, -6, 1), {x}, "start < -dim");
  expect_fails(ErrorKind::Value, OpKind::Narrow, narrow(2, 0, -1), {x}, "negative length");
  expect_fails(ErrorKind::Shape, OpKind::Narrow, narrow(3, 0, 1), {x}, "axis");
  // Concat with an empty part, and its errors.
  HostTensor e = HostTensor::empty(DType::F32, {2, 0, 5});
  HostTensor c = run_op1(OpKind::Concat, Attrs().set("axis", 1), {e, non_contiguous(x), e});
  expect_close(c, x);
  expect_fails(ErrorKind::DType, OpKind::Concat, Attrs().set("axis", 1),
               {x, random_tensor(DType::F16, {2, 1, 5}, 3)}, "dtype");
  expect_fails(ErrorKind::Shape, OpKind::Concat, Attrs().set("axis", 1),
               {x, random_tensor(DType::F32, {2, 1, 4}, 3)}, "non-axis dim");
  expect_fails(ErrorKind::Shape, OpKind::Concat, Attrs().set("axis", 0),
               {x, random_tensor(DType::F32, {2, 3}, 3)}, "rank");
  // Split outputs and errors.
  auto parts = run_op(OpKind::Split, Attrs().set("axis", 2).set("sizes", Shape{2, 0, 3}), {x});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1].shape, (Shape{2, 3, 0}));
  for (int64_t b = 0; b < 6; ++b)
    for (int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(parts[2].get_f64(b * 3 + j), x.get_f64(b * 5 + 2 + j));
  expect_fails(ErrorKind::Value, OpKind::Split, Attrs().set("axis", 2).set("sizes", Shape{2, 2}),
               {x}, "sum");
  expect_fails(ErrorKind::Value, OpKind::Split, Attrs().set("axis", 2).set("sizes", Shape{6, -1}),
               {x}, "negative size");
}

TEST(ShapeMovement, ExpandIsBidirectional) {
  HostTensor x = f32({3, 1}, {1, 2, 3});
  HostTensor y = run_op1(OpKind::Expand, Attrs().set("shape", Shape{2, 1, 4}), {non_contiguous(x)});
  EXPECT_EQ(y.shape, (Shape{2, 3, 4}));
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(y.get_f64(i), 1 + (i / 4) % 3);
  EXPECT_EQ(run_op1(OpKind::Expand, Attrs().set("shape", Shape{0, 1, 1}), {x}).shape,
            (Shape{0, 3, 1}));
  expect_fails(ErrorKind::Shape, OpKind::Expand, Attrs().set("shape", Shape{2, 2}), {x}, "3 vs 2");
  expect_fails(ErrorKind::Shape, OpKind::Expand, Attrs().set("shape", Shape{-1}), {x}, "negative");
}

Attrs pad_attrs(Shape pads, PadMode mode, double value = 0) {
  return Attrs().set("pads", pads).set("mode", mode).set("value", value);
}

TEST(ShapeMovement, ReverseAndTileErrors) {
  HostTensor x = random_tensor(DType::I32, {3, 4}, 5, -9, 9);
  EXPECT_EQ(run_op1(OpKind::Reverse, Attrs().set("axes", Shape{}), {x}).get_i64(5), x.get_i64(5));
  expect_fails(ErrorKind::Value, OpKind::Reverse, Attrs().set("axes", Shape{1, -1}), {x}, "dup");
  expect_fails(ErrorKind::Shape, OpKind::Reverse, Attrs().set("axes", Shape{2}), {x}, "range");
  expect_fails(ErrorKind::Value, OpKind::Tile, Attrs().set("repeats", Shape{2}), {x}, "length");
  expect_fails(ErrorKind::Value, OpKind::Tile, Attrs().set("repeats", Shape{1, -1}), {x}, "neg");
  expect_fails(ErrorKind::Value, OpKind::Tile, Attrs().set("repeats", Shape{kMax, 2}), {x},
               "overflow");
  expect_fails(ErrorKind::Shape, OpKind::Reshape, Attrs().set("shape", Shape{kMax, 4, -1}), {x},
               "overflow");
  expect_fails(ErrorKind::Value, OpKind::Pad, pad_attrs({kMax, 0, 1, 0}, PadMode::Constant), {x},
               "overflow");
}

Attrs slice_attrs(Shape starts, Shape ends, Shape axes = {}, Shape steps = {}) {
  return Attrs().set("starts", starts).set("ends", ends).set("axes", axes).set("steps", steps);
}

TEST(ShapeMovement, SliceFollowsOnnxClamping) {
  HostTensor x = f32({6}, {0, 1, 2, 3, 4, 5});
  auto slice = [&](Attrs a) { return run_op1(OpKind::Slice, a, {non_contiguous(x)}).to_f64(); };
  using V = std::vector<double>;
  // Negative step, start below -dim: clamped to 0 (numpy would give an empty slice).
  EXPECT_EQ(slice(slice_attrs({-100}, {kMin}, {0}, {-1})), V({0}));
  EXPECT_EQ(slice(slice_attrs({kMax}, {kMin}, {0}, {-2})), V({5, 3, 1}));
  EXPECT_EQ(slice(slice_attrs({kMin}, {kMax})), V({0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(slice(slice_attrs({2}, {-1}, {0}, {-1})), V({}));
  EXPECT_EQ(slice(slice_attrs({4}, {-7}, {-1}, {-3})), V({4, 1}));
  EXPECT_EQ(slice(slice_attrs({6}, {6})), V({}));
  HostTensor e = HostTensor::empty(DType::F32, {0, 3});
  EXPECT_EQ(run_op1(OpKind::Slice, slice_attrs({-1}, {kMin}, {0}, {-1}), {e}).shape, (Shape{0, 3}));
  expect_fails(ErrorKind::Value, OpKind::Slice, slice_attrs({0}, {3}, {0}, {0}), {x}, "step 0");
  expect_fails(ErrorKind::Value, OpKind::Slice, slice_attrs({0, 1}, {3, 4}, {0, -1}), {x},
               "duplicate axes");
  expect_fails(ErrorKind::Value, OpKind::Slice, slice_attrs({0}, {3, 4}), {x}, "lengths");
  expect_fails(ErrorKind::Value, OpKind::Slice, slice_attrs({0, 0}, {3, 4}), {x}, "too many");
  expect_fails(ErrorKind::Shape, OpKind::Slice, slice_attrs({0}, {3}, {1}), {x}, "axis range");
}

TEST(ShapeMovement, PadCropsAndValidates) {
  HostTensor x = i64({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  // Crop one column at the front, reflect two at the end of axis 1; pad one row of axis 0.
  HostTensor y =
      run_op1(OpKind::Pad, pad_attrs({1, -1, 0, 2}, PadMode::Reflect), {non_contiguous(x)});
  EXPECT_EQ(y.shape, (Shape{3, 5}));
  std::vector<double> want = {6, 7, 8, 7, 6, 2, 3, 4, 3, 2, 6, 7, 8, 7, 6};
  expect_close(y, want);
  HostTensor c = run_op1(OpKind::Pad, pad_attrs({0, 4, 0, 4}, PadMode::Circular), {x});
  EXPECT_EQ(c.shape, (Shape{2, 12}));
  std::vector<int64_t> row1 = {5, 6, 7, 8, 5, 6, 7, 8, 5, 6, 7, 8};
  for (int j = 0; j < 12; ++j) EXPECT_EQ(c.get_i64(12 + j), row1[j]);
  HostTensor b = random_tensor(DType::Bool, {2, 2}, 1, 0, 2);
  HostTensor bp = run_op1(OpKind::Pad, pad_attrs({0, 1, 0, 0}, PadMode::Constant, 1.0), {b});
  EXPECT_EQ(bp.get_i64(0), 1);
  EXPECT_EQ(bp.get_i64(1), b.get_i64(0));
  expect_fails(ErrorKind::Value, OpKind::Pad, pad_attrs({0, 4, 0, 0}, PadMode::Reflect), {x},
               "reflect pad == dim");
  expect_fails(ErrorKind::Value, OpKind::Pad, pad_attrs({0, 5, 0, 0}, PadMode::Circular), {x},
               "circular pad > dim");
  expect_fails(ErrorKind::Value, OpKind::Pad, pad_attrs({0, 0, 0}, PadMode::Constant), {x},
               "pads length");
  expect_fails(ErrorKind::Value, OpKind::Pad, pad_attrs({-2, 0, -1, 0}, PadMode::Constant), {x},
               "crop below zero");
  expect_fails(ErrorKind::Value, OpKind::Pad, pad_attrs({1, 0, 0, 0}, PadMode::Replicate),
               {HostTensor::empty(DType::F32, {0, 2})}, "replicate of empty");
}

TEST(ShapeMovement, ClampFloatsIntsAndErrors) {
  auto clamp = [](double lo, double hi) { return Attrs().set("min", lo).set("max", hi); };
  HostTensor h = HostTensor::empty(DType::F16, {3});
  for (int i = 0; i < 3; ++i) h.set_f64(i, std::vector<double>{-3, NAN, 0.25}[i]);
  expect_close(run_op1(OpKind::Clamp, clamp(-1.5, 0.1), {h}), {-1.5, NAN, 0.0999755859375}, 0, 0);
  // Integers: the bounds become ceil(min) and floor(max), compared exactly.
  HostTensor x = i64({2, 3}, {-5, 0, 7, 4, (int64_t{1} << 62) + 1, -(int64_t{1} << 62)});
  HostTensor y = run_op1(OpKind::Clamp, clamp(-2.5, 5.9), {non_contiguous(x)});
  std::vector<int64_t> want = {-2, 0, 5, 4, 5, -2};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y.get_i64(i), want[i]);
  HostTensor big = run_op1(OpKind::Clamp, Attrs().set("min", 0.0), {x});
  EXPECT_EQ(big.get_i64(4), (int64_t{1} << 62) + 1);  // exact, not through f64
  HostTensor u = HostTensor::from_vector(DType::U8, {3}, std::vector<int64_t>{0, 100, 255});
  HostTensor uy = run_op1(OpKind::Clamp, clamp(-7, 1000), {u});
  EXPECT_EQ(uy.get_i64(0), 0);
  EXPECT_EQ(uy.get_i64(2), 255);
  EXPECT_EQ(run_op1(OpKind::Clamp, clamp(3, 1), {x}).get_i64(0), 1);  // min > max: max
  expect_fails(ErrorKind::Value, OpKind::Clamp, clamp(NAN, 1), {x}, "NaN bound");
  expect_fails(ErrorKind::DType, OpKind::Clamp, clamp(0, 1), {HostTensor::empty(DType::Bool, {2})},
               "bool");
}

TEST(ShapeMovement, TriluAndResizeOnIntsAndBools) {
  HostTensor x = random_tensor(DType::I64, {3, 2, 3}, 7, 1, 100);
  HostTensor y =
      run_op1(OpKind::Trilu, Attrs().set("upper", false).set("k", 1), {non_contiguous(x)});
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        int64_t at = (b * 2 + i) * 3 + j;
        EXPECT_EQ(y.get_i64(at), j - i <= 1 ? x.get_i64(at) : 0);
      }
  expect_fails(ErrorKind::Shape, OpKind::Trilu, Attrs(), {random_tensor(DType::F32, {4}, 1)},
               "rank 1");
  HostTensor b = random_tensor(DType::Bool, {3, 1, 2}, 9, 0, 2);
  HostTensor r = run_op1(OpKind::ResizeNearest2x, Attrs(), {b});
  EXPECT_EQ(r.shape, (Shape{3, 2, 4}));
  for (int64_t n = 0; n < 3; ++n)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 4; ++j)
        EXPECT_EQ(r.get_i64((n * 2 + i) * 4 + j), b.get_i64(n * 2 + j / 2));
  expect_fails(ErrorKind::Shape, OpKind::ResizeNearest2x, Attrs(),
               {random_tensor(DType::F32, {4}, 1)}, "rank 1");
  HostTensor v = random_tensor(DType::F32, {1, 2, 2, 3, 3}, 3);
  expect_fails(ErrorKind::Value, OpKind::Interpolate3d, Attrs().set("size", Shape{2, 0, 3}), {v},
               "size 0");
  expect_fails(ErrorKind::Value, OpKind::Interpolate3d, Attrs().set("size", Shape{2, 3}), {v},
               "2 sizes");
  expect_fails(ErrorKind::Shape, OpKind::Interpolate3d, Attrs().set("size", Shape{2, 2, 3}),
               {random_tensor(DType::F32, {2, 2, 3, 3}, 3)}, "rank 4");
}

TEST(ShapeMovement, RangeDtypesAndErrors) {
  auto range = [](double s, double l, double d, DType t) {
    return Attrs().set("start", s).set("limit", l).set("delta", d).set("dtype", t);
  };
  expect_close(run_op1(OpKind::Range, range(1, 2, 0.25, DType::F16), {}), {1, 1.25, 1.5, 1.75});
  HostTensor i = run_op1(OpKind::Range, range(7, -4, -3, DType::I32), {});
  EXPECT_EQ(i.dtype, DType::I32);
  expect_close(i, {7, 4, 1, -2});
  EXPECT_EQ(run_op1(OpKind::Range, range(3, 1, 1, DType::I64), {}).numel(), 0);
  expect_fails(ErrorKind::Value, OpKind::Range, range(0, 5, 0, DType::F32), {}, "delta 0");
  expect_fails(ErrorKind::Value, OpKind::Range, range(0, 5, 0.5, DType::I64), {}, "fractional");
  expect_fails(ErrorKind::Value, OpKind::Range, range(0, INFINITY, 1, DType::F32), {}, "inf");
  expect_fails(ErrorKind::DType, OpKind::Range, range(0, 5, 1, DType::Bool), {}, "bool");
}

// ---- Index-driven kinds ------------------------------------------------------------------------

TEST(ShapeMovement, GatherAndEmbeddingIndices) {
  HostTensor x = random_tensor(DType::F32, {2, 5, 3}, 11);
  HostTensor idx = HostTensor::from_vector(DType::I32, {2, 2}, std::vector<int64_t>{-1, 0, -5, 4});
  HostTensor y = run_op1(OpKind::Gather, Attrs().set("axis", 1), {non_contiguous(x), idx});
  EXPECT_EQ(y.shape, (Shape{2, 2, 2, 3}));
  int64_t src[] = {4, 0, 0, 4};
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t k = 0; k < 4; ++k)
      for (int64_t c = 0; c < 3; ++c)
        EXPECT_EQ(y.get_f64((b * 4 + k) * 3 + c), x.get_f64((b * 5 + src[k]) * 3 + c));
  expect_fails(ErrorKind::Value, OpKind::Gather, Attrs().set("axis", 1), {x, i64({1}, {5})},
               "index 5");
  expect_fails(ErrorKind::Value, OpKind::Gather, Attrs().set("axis", 1), {x, i64({1}, {-6})},
               "index -6");
  expect_fails(ErrorKind::DType, OpKind::Gather, Attrs(), {x, f32({1}, {0})}, "float indices");
  HostTensor w = random_tensor(DType::BF16, {4, 3}, 12);
  HostTensor ids = HostTensor::from_vector(DType::I32, {2}, std::vector<int64_t>{3, 0});
  HostTensor e = run_op1(OpKind::Embedding, Attrs(), {w, ids});
  EXPECT_EQ(e.dtype, DType::BF16);
  for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(e.get_f64(j), w.get_f64(9 + j));
  expect_fails(ErrorKind::Value, OpKind::Embedding, Attrs(), {w, i64({1}, {-1})}, "id -1");
  expect_fails(ErrorKind::Value, OpKind::Embedding, Attrs(), {w, i64({1}, {4})}, "id 4");
  expect_fails(ErrorKind::Shape, OpKind::Embedding, Attrs(), {x, i64({1}, {0})}, "rank 3 weight");
}

Attrs scatter_attrs(ScatterReduction r, int64_t axis = 0) {
  return Attrs().set("reduction", r).set("axis", axis);
}

TEST(ShapeMovement, ScatterAddAccumulatesExactly) {
  int64_t big = int64_t{1} << 60;
  HostTensor x = i64({3, 2}, {big, 1, 0, 0, 5, 5});
  HostTensor upd = i64({4, 2}, {1, 2, 3, 4, 10, 20, -1, -1});
  HostTensor idx = HostTensor::from_vector(DType::I32, {4}, std::vector<int64_t>{0, -1, 2, 0});
  HostTensor y = run_op1(OpKind::ScatterAdd, Attrs().set("axis", 0), {x, idx, non_contiguous(upd)});
  std::vector<int64_t> want = {big, 2, 0, 0, 18, 29};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y.get_i64(i), want[i]);
  // f16 accumulates in f64 and rounds once: 1 + 8 · 2^-12 = 1.001953125 (stepwise f16 adds stay 1).
  HostTensor h = HostTensor::empty(DType::F16, {1});
  h.set_f64(0, 1.0);
  HostTensor hu = HostTensor::empty(DType::F16, {8});
  for (int i = 0; i < 8; ++i) hu.set_f64(i, std::ldexp(1.0, -12));
  HostTensor hy = run_op1(OpKind::ScatterAdd, Attrs(), {h, i64({8}, {0, 0, 0, 0, 0, 0, 0, 0}), hu});
  EXPECT_EQ(hy.get_f64(0), 1.001953125);
  expect_fails(ErrorKind::Value, OpKind::ScatterAdd, Attrs(), {x, i64({4}, {0, 3, 0, 0}), upd},
               "index 3");
  expect_fails(ErrorKind::Shape, OpKind::ScatterAdd, Attrs(), {x, i64({3}, {0, 1, 0}), upd},
               "updates length");
  expect_fails(ErrorKind::DType, OpKind::ScatterAdd, Attrs(),
               {x, i64({4}, {0, 1, 0, 0}), cast_to(upd, DType::F32)}, "updates dtype");
}

TEST(ShapeMovement, ScatterNdDuplicatesAndReductions) {
  HostTensor data = f32({4}, {1, 2, 3, 4});
  HostTensor idx = i64({3, 1}, {2, -1, 2});
  HostTensor upd = f32({3}, {10, 20, 30});
  auto run = [&](ScatterReduction r) {
    return run_op1(OpKind::ScatterNd, Attrs().set("reduction", r), {data, idx, upd}).to_f64();
  };
  using V = std::vector<double>;
  EXPECT_EQ(run(ScatterReduction::None), V({1, 2, 30, 20}));  // last write wins
  EXPECT_EQ(run(ScatterReduction::Add), V({1, 2, 43, 24}));
  EXPECT_EQ(run(ScatterReduction::Mul), V({1, 2, 900, 80}));
  EXPECT_EQ(run(ScatterReduction::Max), V({1, 2, 30, 20}));
  EXPECT_EQ(run(ScatterReduction::Min), V({1, 2, 3, 4}));
  HostTensor bools = HostTensor::from_vector(DType::Bool, {2, 2}, std::vector<int64_t>{0, 0, 1, 1});
  HostTensor bu = HostTensor::from_vector(DType::Bool, {1, 2}, std::vector<int64_t>{1, 0});
  HostTensor by = run_op1(OpKind::ScatterNd, Attrs(), {bools, i64({1, 1}, {0}), bu});
  EXPECT_EQ(by.to_f64(), V({1, 0, 1, 1}));
  expect_fails(ErrorKind::Value, OpKind::ScatterNd, Attrs(),
               {data, i64({1, 1}, {4}), f32({1}, {0})}, "index 4");
  expect_fails(ErrorKind::Shape, OpKind::ScatterNd, Attrs(),
               {data, i64({1, 2}, {0, 0}), f32({1}, {0})}, "k > rank");
  expect_fails(ErrorKind::Shape, OpKind::ScatterNd, Attrs(), {data, idx, f32({2}, {0, 0})},
               "updates shape");
  expect_fails(ErrorKind::DType, OpKind::ScatterNd, Attrs().set("reduction", ScatterReduction::Add),
               {bools, i64({1, 1}, {0}), bu}, "bool add");
}

TEST(ShapeMovement, ScatterElementsNegativeIndicesAndNaN) {
  HostTensor data = f64({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor idx = i64({2, 2}, {-1, -1, 0, -3});
  HostTensor upd = f64({2, 2}, {7, 8, NAN, 9});
  auto run = [&](ScatterReduction r) {
    return run_op1(OpKind::ScatterElements, scatter_attrs(r, 1),
                   {non_contiguous(data), idx, non_contiguous(upd)});
  };
  expect_close(run(ScatterReduction::None), {1, 2, 8, 9, 5, 6}, 0, 0);
  expect_close(run(ScatterReduction::Add), {1, 2, 18, NAN, 5, 6}, 0, 0);
  expect_close(run(ScatterReduction::Max), {1, 2, 8, NAN, 5, 6}, 0, 0);
  expect_close(run(ScatterReduction::Min), {1, 2, 3, NAN, 5, 6}, 0, 0);
  HostTensor id = i64({2, 3}, {2, 3, 4, -5, 6, 7});
  HostTensor iy = run_op1(OpKind::ScatterElements, scatter_attrs(ScatterReduction::Mul, 0),
                          {id, i64({2, 1}, {0, 0}), i64({2, 1}, {-3, int64_t{1} << 40})});
  EXPECT_EQ(iy.get_i64(0), -6 * (int64_t{1} << 40));
  expect_fails(ErrorKind::Value, OpKind::ScatterElements, scatter_attrs(ScatterReduction::None, 1),
               {data, i64({1, 1}, {3}), f64({1, 1}, {0})}, "index 3");
  expect_fails(ErrorKind::Shape, OpKind::ScatterElements, scatter_attrs(ScatterReduction::None, 1),
               {data, i64({3, 1}, {0, 0, 0}), f64({3, 1}, {0, 0, 0})}, "indices exceed data");
  expect_fails(ErrorKind::Shape, OpKind::ScatterElements, scatter_attrs(ScatterReduction::None, 1),
               {data, i64({1, 1}, {0}), f64({1, 2}, {0, 0})}, "updates shape");
}

TEST(ShapeMovement, GatherNdAndGatherElementsErrors) {
  HostTensor data = random_tensor(DType::F32, {2, 3, 4}, 13);
  HostTensor g = run_op1(OpKind::GatherNd, Attrs().set("batch_dims", 1),
                         {non_contiguous(data), i64({2, 1, 2}, {-1, -1, 0, 1})});
  EXPECT_EQ(g.shape, (Shape{2, 1}));
  EXPECT_EQ(g.get_f64(0), data.get_f64(2 * 4 + 3));
  EXPECT_EQ(g.get_f64(1), data.get_f64(12 + 1));
  expect_fails(ErrorKind::Value, OpKind::GatherNd, Attrs(), {data, i64({1, 1}, {2})}, "index 2");
  expect_fails(ErrorKind::Value, OpKind::GatherNd, Attrs().set("batch_dims", 2),
               {data, i64({2, 1}, {0, 0})}, "batch_dims >= indices rank");
  expect_fails(ErrorKind::Shape, OpKind::GatherNd, Attrs().set("batch_dims", 1),
               {data, i64({3, 1}, {0, 0, 0})}, "batch dims differ");
  expect_fails(ErrorKind::Shape, OpKind::GatherNd, Attrs(), {data, i64({1, 4}, {0, 0, 0, 0})},
               "k > rank");
  HostTensor e =
      run_op1(OpKind::GatherElements, Attrs().set("axis", -1), {data, i64({1, 1, 2}, {-1, 0})});
  EXPECT_EQ(e.get_f64(0), data.get_f64(3));
  expect_fails(ErrorKind::Value, OpKind::GatherElements, Attrs(), {data, i64({1, 1, 1}, {2})},
               "index 2");
  expect_fails(ErrorKind::Shape, OpKind::GatherElements, Attrs(), {data, i64({1, 1}, {0})}, "rank");
}

TEST(ShapeMovement, OneHotDtypesAxesAndErrors) {
  auto attrs = [](int64_t depth, int64_t axis, DType t) {
    return Attrs().set("depth", depth).set("axis", axis).set("dtype", t);
  };
  HostTensor idx = HostTensor::from_vector(DType::I32, {3}, std::vector<int64_t>{2, -2, 9});
  HostTensor y = run_op1(OpKind::OneHot, attrs(3, 0, DType::Bool), {non_contiguous(idx)});
  EXPECT_EQ(y.shape, (Shape{3, 3}));
  // y[k, i] = (idx[i] wraps to k): columns 2, 1 and none.
  expect_close(y, {0, 0, 0, 0, 1, 0, 1, 0, 0}, 0, 0);
  HostTensor s = run_op1(OpKind::OneHot, attrs(4, -1, DType::I64), {i64({}, {3})});
  expect_close(s, {0, 0, 0, 1}, 0, 0);
  expect_fails(ErrorKind::Value, OpKind::OneHot, attrs(0, -1, DType::F32), {idx}, "depth 0");
  expect_fails(ErrorKind::Value, OpKind::OneHot, attrs(3, 2, DType::F32), {idx}, "axis 2");
  expect_fails(ErrorKind::Value, OpKind::OneHot, attrs(3, -3, DType::F32), {idx}, "axis -3");
  expect_fails(ErrorKind::DType, OpKind::OneHot, attrs(3, 0, DType::F32), {f32({1}, {0})},
               "float indices");
}

TEST(ShapeMovement, ReferenceClaimsEveryDtypeForMovement) {
  const Backend& ref = backend("reference");
  for (OpKind k :
       {OpKind::Reshape, OpKind::Gather, OpKind::Slice, OpKind::Split, OpKind::Embedding})
    for (DType t : {DType::C128, DType::F4E2M1FNx2, DType::U32, DType::Bool, DType::C64})
      EXPECT_TRUE(ref.claims().find(k, 0, t).has_value()) << op_name(k) << " " << dtype_name(t);
  int none = static_cast<int>(ScatterReduction::None),
      add = static_cast<int>(ScatterReduction::Add);
  EXPECT_TRUE(ref.claims().find(OpKind::ScatterNd, none, DType::C64).has_value());
  EXPECT_FALSE(ref.claims().find(OpKind::ScatterNd, add, DType::C64).has_value());
  EXPECT_TRUE(ref.claims().find(OpKind::ScatterNd, add, DType::F8E5M2).has_value());
}

}  // namespace
}  // namespace tessel::testing
