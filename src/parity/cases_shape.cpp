// Parity cases for the shape and data-movement kinds. Index inputs stay in range; scatters
// without a reduction get distinct targets (duplicates would make the result order-dependent).
#include "parity/cases.h"

namespace tessel::parity {
namespace {

// Distinct i64 values in [0, n) shaped `shape`: a permutation prefix per column of the first axis
// (shape[0] <= n), so no two rows of one column collide.
HostTensor distinct_rows(const Shape& shape, int64_t n, CaseRng& rng) {
  int64_t rows = shape.empty() ? 1 : shape[0];
  int64_t cols = shape_numel(shape) / std::max<int64_t>(rows, 1);
  HostTensor perm = distinct_indices(cols, n, rows, rng);  // [cols, rows]
  HostTensor t = HostTensor::empty(DType::I64, shape);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t.set_i64(r * cols + c, perm.get_i64(c * rows + r));
  return t;
}

}  // namespace

std::vector<Case> cases_shape(OpKind kind, int v, const Draw& d, CaseRng& rng) {
  const int64_t b = d.b, m = d.m, n = d.n;
  const Shape x3 = {b, m, n};
  auto var = [&](const char* attr) { return Attrs().set(attr, int64_t{v}); };
  auto unary = [&](std::string name, Attrs a, const Shape& s) {
    return make_case(std::move(name), std::move(a), {uniform(s, rng)}, {true});
  };
  switch (kind) {
    case OpKind::Reshape:
      return {unary("merge", Attrs().set("shape", Shape{b * m, n}), x3),
              unary("infer", Attrs().set("shape", Shape{-1}), {std::max<int64_t>(b, 1), m, n})};
    case OpKind::Transpose:
      return {unary("rot", Attrs().set("perm", Shape{2, 0, 1}), x3),
              unary("swap_last", Attrs().set("perm", Shape{0, 2, 1}), x3)};
    case OpKind::Narrow: {
      int64_t start = n / 3, length = std::max<int64_t>(n - start - 1, 0);
      return {unary("axis2",
                    Attrs().set("axis", int64_t{2}).set("start", start).set("length", length), x3)};
    }
    case OpKind::Concat:
      return {make_case("axis1", Attrs().set("axis", int64_t{1}),
                        {uniform(x3, rng), uniform({b, 2, n}, rng)}, {true, true}),
              make_case("axis_last3", Attrs().set("axis", int64_t{-1}),
                        {uniform(x3, rng), uniform({b, m, 3}, rng), uniform(x3, rng)},
                        {true, true, true})};
    case OpKind::Expand:
      return {unary("col", Attrs().set("shape", x3), {m, 1}),
              unary("lead", Attrs().set("shape", x3), {1, m, n})};
    case OpKind::Gather:
      return {make_case("axis0", Attrs(), {uniform({m, n}, rng), indices({b, 3}, rng, -m, m)},
                        {true, false}),
              make_case("axis1", Attrs().set("axis", int64_t{1}),
                        {uniform(x3, rng), indices({5}, rng, -m, m)}, {true, false})};
    case OpKind::Reverse:
      return {unary("axes02", Attrs().set("axes", Shape{0, 2}), x3),
              unary("axis1", Attrs().set("axes", Shape{1}), x3)};
    case OpKind::Slice:
      return {unary("neg_step",
                    Attrs()
                        .set("starts", Shape{-1, 1})
                        .set("ends", Shape{-1000, 1000})
                        .set("axes", Shape{1, 2})
                        .set("steps", Shape{-2, 3}),
                    x3),
              unary("clamped", Attrs().set("starts", Shape{1}).set("ends", Shape{n + 5}), x3)};
    case OpKind::Pad: {
      std::vector<Case> out = {
          unary("grow", var("mode").set("pads", Shape{0, 1, 1, 0, 1, 2}).set("value", 0.5), x3)};
      if (static_cast<PadMode>(v) == PadMode::Constant)
        out.push_back(unary("crop", var("mode").set("pads", Shape{0, 0, -1, 0, 2, 0}), x3));
      return out;
    }
    case OpKind::Clamp:
      return {unary("both", Attrs().set("min", -0.5).set("max", 1.0), x3),
              unary("min_only", Attrs().set("min", 0.0), elem_shape(d))};
    case OpKind::Tile:
      return {unary("r212", Attrs().set("repeats", Shape{2, 1, 2}), x3)};
    case OpKind::Trilu:
      return {unary("upper", Attrs().set("k", int64_t{1}), x3),
              unary("lower", Attrs().set("upper", false).set("k", int64_t{-1}), x3)};
    case OpKind::ScatterAdd: {
      int64_t c = 2 * m + 1;
      return {make_case("axis0", Attrs(),
                        {uniform({m, n}, rng), indices({c}, rng, 0, m), uniform({c, n}, rng)},
                        {true, false, true}),
              make_case("axis1", Attrs().set("axis", int64_t{1}),
                        {uniform({b, m}, rng), indices({3}, rng, 0, m), uniform({b, 3}, rng)},
                        {true, false, true})};
    }
    case OpKind::ScatterNd: {
      bool none = static_cast<ScatterReduction>(v) == ScatterReduction::None;
      int64_t c = none ? std::min<int64_t>(m, 3) : 3;
      HostTensor rows = none ? distinct_rows({c, 1}, m, rng) : indices({c, 1}, rng, 0, m);
      return {make_case("rows", var("reduction"),
                        {uniform({m, n}, rng), rows, uniform({c, n}, rng)}, {true, false, true})};
    }
    case OpKind::ScatterElements: {
      bool none = static_cast<ScatterReduction>(v) == ScatterReduction::None;
      int64_t c = std::min<int64_t>(m, 2);
      HostTensor idx = none ? distinct_rows({c, n}, m, rng) : indices({c, n}, rng, 0, m);
      return {make_case("axis0", var("reduction"),
                        {uniform({m, n}, rng), idx, uniform({c, n}, rng)}, {true, false, true})};
    }
    case OpKind::GatherNd: {
      HostTensor pairs = HostTensor::empty(DType::I64, {4, 2});
      for (int64_t i = 0; i < 4; ++i) {
        pairs.set_i64(2 * i, rng.below(m));
        pairs.set_i64(2 * i + 1, rng.below(n));
      }
      return {make_case("pairs", Attrs(), {uniform({m, n}, rng), pairs}, {true, false}),
              make_case("batch_dims1", Attrs().set("batch_dims", int64_t{1}),
                        {uniform(x3, rng), indices({b, 3, 1}, rng, 0, m)}, {true, false})};
    }
    case OpKind::GatherElements:
      return {make_case("axis1", Attrs().set("axis", int64_t{1}),
                        {uniform({m, n}, rng), indices({m, 3}, rng, 0, n)}, {true, false}),
              make_case("axis0", Attrs(),
                        {uniform(x3, rng), indices({2, m, n}, rng, 0, std::max<int64_t>(b, 1))},
                        {true, false})};
    case OpKind::ResizeNearest2x:
      return {unary("x", Attrs(), x3)};
    case OpKind::Interpolate3d:
      return {unary("x", Attrs().set("size", Shape{4, 2 * m, std::max<int64_t>(n - 2, 1)}),
                    {b, 2, 3, m, n})};
    case OpKind::Embedding:
      return {make_case("lookup", Attrs(),
                        {uniform({m + 3, n}, rng), indices({b, 5}, rng, 0, m + 3)}, {true, false})};
    case OpKind::OneHot: {
      // The cell dtype is the index dtype: the indices follow it (exactly, being integers).
      int64_t depth = std::min<int64_t>(n, 40);
      return {
          make_case("last", Attrs().set("depth", depth), {indices({b, m}, rng, -depth, depth + 2)},
                    {true}),
          make_case("axis0",
                    Attrs().set("depth", int64_t{3}).set("axis", int64_t{0}).set("on_value", 2.5),
                    {indices({m}, rng, -3, 3)}, {true})};
    }
    case OpKind::Range: {
      double start = -3, delta = n % 2 ? 1.0 : 2.0;
      double limit = b == 0 ? start : start + delta * static_cast<double>(n);
      Case c = make_case(
          "range", Attrs().set("start", start).set("limit", limit).set("delta", delta), {}, {});
      c.dtype_attr = "dtype";
      Case down = make_case("down", Attrs().set("start", 5.0).set("limit", -4.0).set("delta", -3.0),
                            {}, {});
      down.dtype_attr = "dtype";
      return {c, down};
    }
    case OpKind::Split:
      return {
          unary("axis2", Attrs().set("axis", int64_t{2}).set("sizes", Shape{n / 2, n - n / 2}), x3),
          unary("axis0_3", Attrs().set("sizes", Shape{1, 2, 1}), {4, m, n})};
    default:
      return {};
  }
}

}  // namespace tessel::parity
