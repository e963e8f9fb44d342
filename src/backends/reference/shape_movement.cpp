// Reference kernels of the ShapeMovement category's layout kinds (the index-driven ones are in
// shape_movement_indexing.cpp). Pure data movement copies each element's bytes, so those kinds
// run on every dtype, storage-only ones included: each output element is found by mapping its
// index back to one source index and read through the source's strides.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/reference/kernels.h"
#include "ops/pad_source.h"
#include "ops/slice_range.h"

namespace tessel::reference {

void register_ShapeMovementIndexing(Registry& r);  // shape_movement_indexing.cpp

namespace {

using Index = std::vector<int64_t>;

// Dtypes with one value per element (f4_e2m1fn_x2 packs two into a byte) and a zero encoding.
constexpr DTypeSet kScalarDTypes = DTypeSet::from_bits(
    dtypes::kEvery.bits() & ~DTypeSet{DType::F4E2M1FNx2, DType::F8E8M0FNU}.bits());

void reshape(const Node&, std::span<const HostTensor> in, std::span<HostTensor> out) {
  int64_t k = 0;  // the output is contiguous: row-major position k is element offset + k
  for_each_index(in[0].shape, [&](const Index& i) {
    copy_element(out[0], out[0].offset + k++, in[0], in[0].offset_of(i.data()));
  });
}

void transpose(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const auto& perm = node.attrs.ints("perm");
  gather_from(in[0], out[0], [&](const Index& o, Index& s) {
    for (size_t d = 0; d < perm.size(); ++d) s[perm[d]] = o[d];
  });
}

// Copies x into out shifted by `shift` along `axis` (out[.., i + shift, ..] = x[.., i, ..]).
void place(const HostTensor& x, const HostTensor& out, int axis, int64_t shift) {
  Index dst(x.shape.size());
  for_each_index(x.shape, [&](const Index& i) {
    dst = i;
    dst[axis] += shift;
    copy_element(out, out.offset_of(dst.data()), x, x.offset_of(i.data()));
  });
}

void narrow(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  int axis = axis_attr(node, in[0].rank());
  int64_t start = node.attrs.i("start");
  if (start < 0) start += in[0].shape[axis];
  gather_from(in[0], out[0], [&](const Index& o, Index& s) {
    s = o;
    s[axis] += start;
  });
}

void concat(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  int axis = axis_attr(node, out[0].rank());
  int64_t at = 0;
  for (const HostTensor& x : in) {
    place(x, out[0], axis, at);
    at += x.shape[axis];
  }
}

void split(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  int axis = axis_attr(node, in[0].rank());
  int64_t at = 0;
  for (const HostTensor& y : out) {
    gather_from(in[0], y, [&](const Index& o, Index& s) {
      s = o;
      s[axis] += at;
    });
    at += y.shape[axis];
  }
}

void expand(const Node&, std::span<const HostTensor> in, std::span<HostTensor> out) {
  HostTensor view = broadcast_to(in[0], out[0].shape);
  gather_from(view, out[0], [](const Index& o, Index& s) { s = o; });
}

void reverse(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  std::vector<int> axes;
  for (int64_t a : node.attrs.ints("axes"))
    axes.push_back(static_cast<int>(a < 0 ? a + in[0].rank() : a));
  gather_from(in[0], out[0], [&](const Index& o, Index& s) {
    s = o;
    for (int a : axes) s[a] = in[0].shape[a] - 1 - o[a];
  });
}

// ONNX Slice: the first source index and the step of every axis (unsliced axes: 0 and 1). The
// output shape (from the shape rule) gives the counts.
void slice(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const auto& starts = node.attrs.ints("starts");
  const auto& ends = node.attrs.ints("ends");
  const auto& axes = node.attrs.ints("axes");
  const auto& steps = node.attrs.ints("steps");
  Index first(x.rank(), 0), step(x.rank(), 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    int a = static_cast<int>(axes.empty() ? i : axes[i] < 0 ? axes[i] + x.rank() : axes[i]);
    int64_t dim = x.shape[a], st = steps.empty() ? 1 : steps[i];
    step[a] = st;
    first[a] = slice_range(starts[i], ends[i], st, dim).start;
  }
  gather_from(x, out[0], [&](const Index& o, Index& s) {
    for (int d = 0; d < x.rank(); ++d) s[d] = first[d] + o[d] * step[d];
  });
}

void pad(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const auto& pads = node.attrs.ints("pads");
  auto mode = node.attrs.e<PadMode>("mode");
  HostTensor fill = HostTensor::empty(x.dtype, {});
  if (mode == PadMode::Constant) fill.set_f64(0, node.attrs.f("value"));
  Index s(x.rank());
  for_each_index(out[0].shape, [&](const Index& o) {
    bool inside = true;
    for (int d = 0; d < x.rank() && inside; ++d) {
      s[d] = pad_source(mode, o[d] - pads[d], x.shape[d]);
      inside = s[d] >= 0;
    }
    if (inside)
      copy_element(out[0], out[0].offset_of(o.data()), x, x.offset_of(s.data()));
    else
      copy_element(out[0], out[0].offset_of(o.data()), fill, 0);
  });
}

// Integer bound: saturated into [lo, hi] of the dtype (compared in f64, converted exactly).
int64_t saturate(double v, int64_t lo, int64_t hi) {
  if (v <= static_cast<double>(lo)) return lo;
  if (v >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(v);
}

std::pair<int64_t, int64_t> int_range(DType t) {
  switch (dtype_size(t)) {
    case 1:
      return t == DType::U8 ? std::pair<int64_t, int64_t>{0, 255}
                            : std::pair<int64_t, int64_t>{-128, 127};
    case 2:
      return {-32768, 32767};
    case 4:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    default:
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

// clamp(x, lo, hi) = min(max(x, lo), hi) as torch: NaN propagates and lo > hi gives hi.
// Integer x: the bounds become ceil(lo) / floor(hi) (the integers inside [lo, hi]), saturated to
// the dtype's range, and the comparison is exact in i64.
void clamp(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  double lo = node.attrs.f("min"), hi = node.attrs.f("max");
  if (is_integer(x.dtype)) {
    auto [tmin, tmax] = int_range(x.dtype);
    int64_t ilo = saturate(std::ceil(lo), tmin, tmax), ihi = saturate(std::floor(hi), tmin, tmax);
    for (int64_t i = 0; i < x.numel(); ++i)
      out[0].set_i64(i, std::min(std::max(x.get_i64(i), ilo), ihi));
    return;
  }
  for (int64_t i = 0; i < x.numel(); ++i) {
    double v = x.get_f64(i);
    out[0].set_f64(i, std::isnan(v) ? v : std::min(std::max(v, lo), hi));
  }
}

void tile(const Node&, std::span<const HostTensor> in, std::span<HostTensor> out) {
  gather_from(in[0], out[0], [&](const Index& o, Index& s) {
    for (size_t d = 0; d < o.size(); ++d) s[d] = o[d] % in[0].shape[d];
  });
}

// Keeps (i, j) of the last two axes where j - i >= k (upper) or j - i <= k (lower); zero bytes
// elsewhere (zero in every claimed dtype).
void trilu(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  bool upper = node.attrs.b("upper");
  int64_t k = node.attrs.i("k");
  size_t r = in[0].shape.size();
  for_each_index(out[0].shape, [&](const Index& o) {
    int64_t diag = o[r - 1] - o[r - 2];
    int64_t dst = out[0].offset_of(o.data());
    if (upper ? diag >= k : diag <= k)
      copy_element(out[0], dst, in[0], in[0].offset_of(o.data()));
    else
      std::memset(out[0].element_ptr(dst), 0, dtype_size(out[0].dtype));
  });
}

void resize_nearest2x(const Node&, std::span<const HostTensor> in, std::span<HostTensor> out) {
  size_t r = in[0].shape.size();
  gather_from(in[0], out[0], [&](const Index& o, Index& s) {
    s = o;
    s[r - 1] /= 2;
    s[r - 2] /= 2;
  });
}

// torch 'nearest': src = floor(dst · in / out), computed exactly in integers.
void interpolate3d(const Node&, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const Shape& from = in[0].shape;
  const Shape& to = out[0].shape;
  gather_from(in[0], out[0], [&](const Index& o, Index& s) {
    s = o;
    for (int d = 2; d < 5; ++d) s[d] = o[d] * from[d] / to[d];
  });
}

void range(const Node& node, std::span<const HostTensor>, std::span<HostTensor> out) {
  double start = node.attrs.f("start"), delta = node.attrs.f("delta");
  const HostTensor& y = out[0];
  if (is_integer(y.dtype)) {
    auto s = static_cast<int64_t>(start), d = static_cast<int64_t>(delta);
    for (int64_t i = 0; i < y.numel(); ++i) y.set_i64(i, s + i * d);
  } else {
    for (int64_t i = 0; i < y.numel(); ++i) y.set_f64(i, start + static_cast<double>(i) * delta);
  }
}

}  // namespace

void register_ShapeMovement(Registry& r) {
  r.native(OpKind::Reshape, reshape, dtypes::kEvery);
  r.native(OpKind::Transpose, transpose, dtypes::kEvery);
  r.native(OpKind::Narrow, narrow, dtypes::kEvery);
  r.native(OpKind::Concat, concat, dtypes::kEvery);
  r.native(OpKind::Expand, expand, dtypes::kEvery);
  r.native(OpKind::Reverse, reverse, dtypes::kEvery);
  r.native(OpKind::Slice, slice, dtypes::kEvery);
  r.native(OpKind::Pad, pad, kScalarDTypes, {static_cast<int>(PadMode::Constant)});
  r.native(OpKind::Pad, pad, dtypes::kEvery,
           {static_cast<int>(PadMode::Reflect), static_cast<int>(PadMode::Replicate),
            static_cast<int>(PadMode::Circular)});
  r.native(OpKind::Clamp, clamp, kNumbers);
  r.native(OpKind::Tile, tile, dtypes::kEvery);
  r.native(OpKind::Trilu, trilu, kScalarDTypes);
  r.native(OpKind::ResizeNearest2x, resize_nearest2x, dtypes::kEvery);
  r.native(OpKind::Interpolate3d, interpolate3d, dtypes::kEvery);
  r.native(OpKind::Range, range, kNumbers);
  r.native(OpKind::Split, split, dtypes::kEvery);
  register_ShapeMovementIndexing(r);
}

}  // namespace tessel::reference
