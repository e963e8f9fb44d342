// cpu kernels: the layout kinds of data movement (Reshape, Transpose, Narrow, Concat, Split,
// Expand, Reverse, Slice, Pad, Tile, Trilu, ResizeNearest2x, Interpolate3d, Range). Each maps the
// output back to a strided view or per-axis tables of its input and runs the engine in
// data_movement_engine.cpp; every dtype moves as raw bytes.
#include <algorithm>
#include <cstring>

#include "backends/cpu/convert.h"
#include "ops/pad_source.h"
#include "ops/slice_range.h"
#include "runtime/kernel_util.h"
#include "runtime/thread_pool.h"
// clang-format off
#include "backends/cpu/kernels/data_movement.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

using Strides = std::vector<int64_t>;

int esize_of(const HostTensor& t) { return dtype_size(t.dtype); }

// Copies the view (shape, strides, element offset into x's storage) into contiguous `out`.
void copy_view(const HostTensor& x, const Shape& shape, const Strides& strides, int64_t offset,
               const HostTensor& out) {
  if (shape_numel(shape) == 0) return;
  Strides ds = contiguous_strides(shape);
  copy_strided(esize_of(x), shape, out.data(), ds.data(), x.element_ptr(offset), strides.data());
}

void reshape(const Node&, std::span<const HostTensor> in, std::span<HostTensor> out) {
  copy_to_contiguous(in[0], out[0].data());
}

void transpose(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const auto& perm = node.attrs.ints("perm");
  Shape shape(perm.size());
  Strides strides(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) {
    shape[d] = x.shape[perm[d]];
    strides[d] = x.strides[perm[d]];
  }
  copy_view(x, shape, strides, x.offset, out[0]);
}

void narrow(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  int axis = axis_attr(node, x.rank());
  int64_t start = node.attrs.i("start");
  if (start < 0) start += x.shape[axis];
  copy_view(x, out[0].shape, x.strides, x.offset + start * x.strides[axis], out[0]);
}

void concat(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  int axis = axis_attr(node, y.rank());
  Strides ys = contiguous_strides(y.shape);
  int64_t at = 0;
  for (const HostTensor& x : in) {
    if (x.numel() > 0)
      copy_strided(esize_of(y), x.shape, y.element_ptr(y.offset + at * ys[axis]), ys.data(),
                   x.data(), x.strides.data());
    at += x.shape[axis];
  }
}

void split(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  int axis = axis_attr(node, x.rank());
  int64_t at = 0;
  for (const HostTensor& y : out) {
    copy_view(x, y.shape, x.strides, x.offset + at * x.strides[axis], y);
    at += y.shape[axis];
  }
}

void expand(const Node&, std::span<const HostTensor> in, std::span<HostTensor> out) {
  HostTensor view = broadcast_to(in[0], out[0].shape);
  copy_view(view, view.shape, view.strides, view.offset, out[0]);
}

void reverse(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  std::vector<bool> flip(x.rank(), false);
  for (int64_t a : node.attrs.ints("axes")) flip[a < 0 ? a + x.rank() : a] = true;
  Strides strides = x.strides;
  int64_t offset = x.offset;
  for (int d = 0; d < x.rank(); ++d) {
    if (!flip[d] || x.shape[d] == 0) continue;
    offset += (x.shape[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  copy_view(x, x.shape, strides, offset, out[0]);
}

// ONNX Slice: a view with the first index of every axis and its step (out's shape the counts).
void slice(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  if (out[0].numel() == 0) return;
  const auto& starts = node.attrs.ints("starts");
  const auto& ends = node.attrs.ints("ends");
  const auto& axes = node.attrs.ints("axes");
  const auto& steps = node.attrs.ints("steps");
  Strides strides = x.strides;
  int64_t offset = x.offset;
  for (size_t i = 0; i < starts.size(); ++i) {
    int a = static_cast<int>(axes.empty() ? i : axes[i] < 0 ? axes[i] + x.rank() : axes[i]);
    int64_t st = steps.empty() ? 1 : steps[i];
    offset += slice_range(starts[i], ends[i], st, x.shape[a]).start * x.strides[a];
    strides[a] = x.strides[a] * st;
  }
  copy_view(x, out[0].shape, strides, offset, out[0]);
}

void pad(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  const auto& pads = node.attrs.ints("pads");
  auto mode = node.attrs.e<PadMode>("mode");
  std::vector<uint8_t> fill =
      encode_scalar(x.dtype, mode == PadMode::Constant ? node.attrs.f("value") : 0.0);
  std::vector<std::vector<int64_t>> table(x.rank());
  for (int d = 0; d < x.rank(); ++d) {
    table[d].resize(y.shape[d]);
    for (int64_t o = 0; o < y.shape[d]; ++o) {
      int64_t s = pad_source(mode, o - pads[d], x.shape[d]);
      table[d][o] = s < 0 ? kFillEntry : s * x.strides[d];
    }
  }
  table_gather(esize_of(x), y.shape, table, x.data(), fill.data(), y.data());
}

void tile(const Node&, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  if (y.numel() == 0) return;
  std::vector<std::vector<int64_t>> table(x.rank());
  for (int d = 0; d < x.rank(); ++d) {
    table[d].resize(y.shape[d]);
    for (int64_t o = 0; o < y.shape[d]; ++o) table[d][o] = o % x.shape[d] * x.strides[d];
  }
  table_gather(esize_of(x), y.shape, table, x.data(), nullptr, y.data());
}

// Keeps (i, j) of the last two axes where j - i >= k (upper) or j - i <= k (lower), zero bytes
// elsewhere: the input is copied whole, then each row's other part is cleared.
void trilu(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  if (y.numel() == 0) return;
  copy_to_contiguous(in[0], y.data());
  bool upper = node.attrs.b("upper");
  int64_t k = node.attrs.i("k");
  int64_t h = y.shape[y.rank() - 2], w = y.shape[y.rank() - 1];
  int64_t rows = y.numel() / w;
  int es = esize_of(y);
  uint8_t* base = y.data();
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      int64_t i = r % h;
      int64_t z0 = upper ? 0 : std::clamp<int64_t>(i + k + 1, 0, w);
      int64_t z1 = upper ? std::clamp<int64_t>(i + k, 0, w) : w;
      if (z1 > z0) std::memset(base + (r * w + z0) * es, 0, static_cast<size_t>(z1 - z0) * es);
    }
  };
  if (y.numel() * es < kParallelBytes) return body(0, rows);
  parallel_for(rows, std::max<int64_t>(1, kParallelBytes / (w * es)), body);
}

// Identity tables for every axis of x (offsets through its strides).
std::vector<std::vector<int64_t>> identity_tables(const HostTensor& x, const Shape& out) {
  std::vector<std::vector<int64_t>> table(x.rank());
  for (int d = 0; d < x.rank(); ++d) {
    table[d].resize(out[d]);
    for (int64_t o = 0; o < out[d]; ++o) table[d][o] = o * x.strides[d];
  }
  return table;
}

void resize_nearest2x(const Node&, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  if (esize_of(x) == 4 && x.is_contiguous() && x.rank() >= 2 && x.numel() > 0) {
    // 4-byte elements of a dense input: each input row becomes an output row of doubled
    // elements (one 8-byte store each), then that row again (the generic table gather took
    // 1.2 ns an output element: 2.8 ms of PaddleOCR det's 2x upsampling to [1,96,160,160]).
    const int64_t w = x.shape.back(), rows = x.numel() / w;
    const auto* src = reinterpret_cast<const uint32_t*>(x.data());
    auto* dst = reinterpret_cast<uint32_t*>(y.data());
    parallel_for(rows, std::max<int64_t>(1, 16384 / w), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const uint32_t* s = src + r * w;
        uint32_t* d = dst + r * 4 * w;  // input row r -> output rows 2r, 2r + 1
        for (int64_t i = 0; i < w; ++i) {
          const uint64_t v = s[i] | (uint64_t{s[i]} << 32);
          std::memcpy(d + 2 * i, &v, sizeof v);
        }
        std::memcpy(d + 2 * w, d, static_cast<size_t>(2 * w) * sizeof(uint32_t));
      }
    });
    return;
  }
  auto table = identity_tables(x, y.shape);
  for (int d = x.rank() - 2; d < x.rank(); ++d)
    for (int64_t o = 0; o < y.shape[d]; ++o) table[d][o] = o / 2 * x.strides[d];
  table_gather(esize_of(x), y.shape, table, x.data(), nullptr, y.data());
}

// torch 'nearest': src = floor(dst · in / out), exact in integers.
void interpolate3d(const Node&, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  if (y.numel() == 0) return;
  auto table = identity_tables(x, y.shape);
  for (int d = 2; d < 5; ++d)
    for (int64_t o = 0; o < y.shape[d]; ++o)
      table[d][o] = o * x.shape[d] / y.shape[d] * x.strides[d];
  table_gather(esize_of(x), y.shape, table, x.data(), nullptr, y.data());
}

template <class T>
void range_int(T* y, int64_t begin, int64_t end, int64_t start, int64_t delta) {
  auto s = static_cast<uint64_t>(start), d = static_cast<uint64_t>(delta);
  for (int64_t i = begin; i < end; ++i) y[i] = static_cast<T>(s + static_cast<uint64_t>(i) * d);
}

// start + i·delta in f64 (product and sum rounded separately, like the reference), then rounded
// once to the dtype.
void range_float(const HostTensor& y, int64_t begin, int64_t end, double start, double delta) {
  double buf[kStageBlock];
  for (int64_t b = begin; b < end; b += kStageBlock) {
    int64_t n = std::min(kStageBlock, end - b);
    int64_t i = 0;
    for (; i + kLanesD <= n; i += kLanesD) {
      Vd idx = splat<Vd>(static_cast<double>(b + i)) + lane_index<Vd>();
      store(buf + i, splat<Vd>(start) + opaque(idx * delta));
    }
    for (; i < n; ++i) buf[i] = start + opaque(static_cast<double>(b + i) * delta);
    from_f64(buf, y.element_ptr(y.offset + b), y.dtype, 1, n);
  }
}

void range(const Node& node, std::span<const HostTensor>, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  double start = node.attrs.f("start"), delta = node.attrs.f("delta");
  auto body = [&](int64_t b, int64_t e) {
    auto s = static_cast<int64_t>(start), d = static_cast<int64_t>(delta);
    switch (y.dtype) {
      case DType::U8:
        return range_int(reinterpret_cast<uint8_t*>(y.data()), b, e, s, d);
      case DType::I8:
        return range_int(reinterpret_cast<int8_t*>(y.data()), b, e, s, d);
      case DType::I16:
        return range_int(reinterpret_cast<int16_t*>(y.data()), b, e, s, d);
      case DType::I32:
        return range_int(reinterpret_cast<int32_t*>(y.data()), b, e, s, d);
      case DType::I64:
        return range_int(reinterpret_cast<int64_t*>(y.data()), b, e, s, d);
      default:
        return range_float(y, b, e, start, delta);
    }
  };
  parallel_for(y.numel(), 1 << 15, body);
}

// Dtypes with one value per element (f4_e2m1fn_x2 packs two into a byte) and a zero encoding.
constexpr DTypeSet kScalarDTypes = DTypeSet::from_bits(
    dtypes::kEvery.bits() & ~DTypeSet{DType::F4E2M1FNx2, DType::F8E8M0FNU}.bits());
constexpr DTypeSet kNumbers = dtypes::kFloat | dtypes::kFp8 | dtypes::kInt;

}  // namespace

void register_data_movement(KernelRegistry& r) {
  const DTypeSet every = dtypes::kEvery;
  r.native(OpKind::Reshape, reshape, every);
  r.native(OpKind::Transpose, transpose, every);
  r.native(OpKind::Narrow, narrow, every);
  r.native(OpKind::Concat, concat, every);
  r.native(OpKind::Split, split, every);
  r.native(OpKind::Expand, expand, every);
  r.native(OpKind::Reverse, reverse, every);
  r.native(OpKind::Slice, slice, every);
  r.native(OpKind::Pad, pad, kScalarDTypes, {static_cast<int>(PadMode::Constant)});
  r.native(OpKind::Pad, pad, every,
           {static_cast<int>(PadMode::Reflect), static_cast<int>(PadMode::Replicate),
            static_cast<int>(PadMode::Circular)});
  r.native(OpKind::Tile, tile, every);
  r.native(OpKind::Trilu, trilu, kScalarDTypes);
  r.native(OpKind::ResizeNearest2x, resize_nearest2x, every);
  r.native(OpKind::Interpolate3d, interpolate3d, every);
  r.native(OpKind::Range, range, kNumbers);
  register_data_movement_indexing(r);
  register_data_movement_scatter(r);
}

TESSEL_ISA_END
