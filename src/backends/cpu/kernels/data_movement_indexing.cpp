// cpu kernels: the index-driven gathers of data movement (Gather, Embedding, GatherNd,
// GatherElements: raw bytes, every dtype) and OneHot. Indices are loaded and checked once up
// front (Value errors, only when the output is non-empty, as the reference reads them), then
// rows are copied on the thread pool.
#include <algorithm>
#include <cstring>

#include "runtime/kernel_util.h"
#include "runtime/thread_pool.h"
// clang-format off
#include "backends/cpu/kernels/data_movement.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

// Element offsets (through `strides`) of every row-major multi-index of `shape`.
std::vector<int64_t> offsets_of(const int64_t* shape, const int64_t* strides, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= shape[d];
  std::vector<int64_t> out(n);
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    out[i] = off;
    for (int d = rank - 1; d >= 0; --d) {
      off += strides[d];
      if (++idx[d] < shape[d]) break;
      off -= shape[d] * strides[d];
      idx[d] = 0;
    }
  }
  return out;
}

// Copies one block of a source view (fixed shape and strides) to contiguous bytes.
class BlockCopier {
 public:
  BlockCopier(int esize, Shape shape, std::vector<int64_t> strides)
      : esize_(esize), shape_(std::move(shape)), strides_(std::move(strides)) {
    numel_ = shape_numel(shape_);
    contiguous_ = strides_ == contiguous_strides(shape_) || numel_ <= 1;
    dst_strides_ = contiguous_strides(shape_);
  }
  int64_t numel() const { return numel_; }
  // dst (contiguous) = the block starting at src.
  void copy(uint8_t* dst, const uint8_t* src) const {
    if (contiguous_)
      std::memcpy(dst, src, static_cast<size_t>(numel_) * esize_);
    else
      copy_strided_serial(esize_, shape_, dst, dst_strides_.data(), src, strides_.data());
  }

 private:
  int esize_;
  Shape shape_;
  std::vector<int64_t> strides_, dst_strides_;
  int64_t numel_ = 0;
  bool contiguous_ = false;
};

// rows × block copies: row r from src + esize·src_off(r); threaded when big.
template <class SrcOff>
void copy_rows(int64_t rows, const BlockCopier& block, int esize, const uint8_t* src, uint8_t* dst,
               SrcOff&& src_off) {
  int64_t row_bytes = block.numel() * esize;
  if (rows == 0 || row_bytes == 0) return;
  auto body = [&](int64_t b, int64_t e) {
    if (block.numel() == 1) {
      with_elem_type(esize, [&]<class T>(T) {
        const T* s = reinterpret_cast<const T*>(src);
        T* d = reinterpret_cast<T*>(dst);
        for (int64_t r = b; r < e; ++r) d[r] = s[src_off(r)];
      });
      return;
    }
    for (int64_t r = b; r < e; ++r) block.copy(dst + r * row_bytes, src + src_off(r) * esize);
  };
  if (rows * row_bytes < kParallelBytes) return body(0, rows);
  parallel_for(rows, std::max<int64_t>(1, kParallelBytes / row_bytes), body);
}

// numpy take: out = x.shape[:axis] + indices.shape + x.shape[axis+1:].
void gather(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& y = out[0];
  if (y.numel() == 0) return;
  int axis = axis_attr(node, x.rank());
  std::vector<int64_t> idx = load_indices(node, in[1], x.shape[axis], "index");
  std::vector<int64_t> outer = offsets_of(x.shape.data(), x.strides.data(), axis);
  BlockCopier block(dtype_size(x.dtype), Shape(x.shape.begin() + axis + 1, x.shape.end()),
                    std::vector<int64_t>(x.strides.begin() + axis + 1, x.strides.end()));
  int64_t q = static_cast<int64_t>(idx.size()), sa = x.strides[axis];
  const int esize = dtype_size(x.dtype);
  if (block.numel() == 1) {
    // The last axis: an element per index, a loop per outer row (copy_rows' row r/q and r%q
    // cost two divisions an element: 1.1 ns, PaddleOCR det's nearest ×4 / ×8 upsampling).
    for (int64_t& i : idx) i *= sa;
    const int64_t rows = static_cast<int64_t>(outer.size());
    auto body = [&](int64_t r0, int64_t r1) {
      with_elem_type(esize, [&]<class T>(T) {
        const T* s = reinterpret_cast<const T*>(x.data());
        T* d = reinterpret_cast<T*>(y.data());
        for (int64_t r = r0; r < r1; ++r) {
          const T* row = s + outer[r];
          T* o = d + r * q;
          for (int64_t j = 0; j < q; ++j) o[j] = row[idx[j]];
        }
      });
    };
    if (rows * q * esize < kParallelBytes) return body(0, rows);
    return parallel_for(rows, std::max<int64_t>(1, kParallelBytes / (q * esize)), body);
  }
  copy_rows(static_cast<int64_t>(outer.size()) * q, block, esize, x.data(), y.data(),
            [&](int64_t r) { return outer[r / q] + idx[r % q] * sa; });
}

void embedding(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& w = in[0];
  const HostTensor& y = out[0];
  if (y.numel() == 0) return;
  std::vector<int64_t> ids = load_indices(node, in[1], -1, "id");
  for (int64_t id : ids)
    if (id < 0 || id >= w.shape[0])
      throw_error(ErrorKind::Value, node.where(), ": id ", id, " is out of range [0, ", w.shape[0],
                  ")");
  BlockCopier block(dtype_size(w.dtype), {w.shape[1]}, {w.strides[1]});
  int64_t s0 = w.strides[0];
  copy_rows(static_cast<int64_t>(ids.size()), block, dtype_size(w.dtype), w.data(), y.data(),
            [&](int64_t r) { return ids[r] * s0; });
}

// ONNX GatherND with b batch dims: out[t, ...] = data[batch(t), indices[t, :], ...].
void gather_nd(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& data = in[0];
  const HostTensor& y = out[0];
  if (y.numel() == 0) return;
  int b = static_cast<int>(node.attrs.i("batch_dims"));
  int64_t k = in[1].shape.back();
  std::vector<int64_t> idx = load_indices(node, in[1], -1, "index");
  int64_t tuples = static_cast<int64_t>(idx.size()) / k;
  std::vector<int64_t> rows(tuples);
  std::vector<int64_t> batch = offsets_of(data.shape.data(), data.strides.data(), b);
  int64_t per_batch = tuples / static_cast<int64_t>(batch.size());
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = batch[t / per_batch];
    for (int64_t j = 0; j < k; ++j)
      off += checked_index(node, idx[t * k + j], data.shape[b + j], "index") * data.strides[b + j];
    rows[t] = off;
  }
  BlockCopier block(dtype_size(data.dtype), Shape(data.shape.begin() + b + k, data.shape.end()),
                    std::vector<int64_t>(data.strides.begin() + b + k, data.strides.end()));
  copy_rows(tuples, block, dtype_size(data.dtype), data.data(), y.data(),
            [&](int64_t r) { return rows[r]; });
}

// out[o] = data[o with o[axis] replaced by indices[o]].
void gather_elements(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& data = in[0];
  const HostTensor& y = out[0];
  if (y.numel() == 0) return;
  int r = data.rank(), axis = axis_attr(node, r);
  std::vector<int64_t> idx = load_indices(node, in[1], data.shape[axis], "index");
  const Shape& shape = y.shape;
  int64_t n = shape[r - 1], rows = y.numel() / n;
  std::vector<int64_t> strides = data.strides;
  int64_t sa = strides[axis];
  strides[axis] = 0;  // the axis' coordinate comes from the index
  int esize = dtype_size(data.dtype);
  auto body = [&](int64_t b, int64_t e) {
    std::vector<int64_t> pos(r - 1, 0);
    int64_t base = 0;
    for (int64_t t = b, d = r - 2; d >= 0; --d) {
      pos[d] = t % shape[d];
      t /= shape[d];
      base += pos[d] * strides[d];
    }
    const int64_t sl = strides[r - 1];
    with_elem_type(esize, [&]<class T>(T) {
      const T* s = reinterpret_cast<const T*>(data.data());
      T* o = reinterpret_cast<T*>(y.data());
      for (int64_t row = b; row < e; ++row) {
        const int64_t* ix = idx.data() + row * n;
        T* orow = o + row * n;
        for (int64_t j = 0; j < n; ++j) orow[j] = s[base + j * sl + ix[j] * sa];
        for (int d = r - 2; d >= 0; --d) {
          base += strides[d];
          if (++pos[d] < shape[d]) break;
          base -= shape[d] * strides[d];
          pos[d] = 0;
        }
      }
    });
  };
  if (y.numel() * esize < kParallelBytes) return body(0, rows);
  parallel_for(rows, std::max<int64_t>(1, kParallelBytes / (n * esize)), body);
}

// ONNX OneHot: indices in [-depth, depth) wrap; any other index gives an all-off row.
void one_hot(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& y = out[0];
  if (y.numel() == 0) return;
  int64_t depth = node.attrs.i("depth");
  int64_t axis = node.attrs.i("axis");
  if (axis < 0) axis += in[0].rank() + 1;
  std::vector<uint8_t> on = encode_scalar(y.dtype, node.attrs.f("on_value"));
  std::vector<uint8_t> off = encode_scalar(y.dtype, node.attrs.f("off_value"));
  std::vector<int64_t> idx = load_indices(node, in[0], -1, "index");
  int64_t inner = 1;
  for (int d = static_cast<int>(axis); d < in[0].rank(); ++d) inner *= in[0].shape[d];
  int64_t outer = static_cast<int64_t>(idx.size()) / std::max<int64_t>(inner, 1);
  int esize = dtype_size(y.dtype);
  uint8_t* base = y.data();
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      uint8_t* block = base + p * depth * inner * esize;
      fill_elements(block, esize, off.data(), depth * inner);
      for (int64_t s = 0; s < inner; ++s) {
        int64_t v = idx[p * inner + s];
        if (v < 0) v += depth;
        if (v >= 0 && v < depth) std::memcpy(block + (v * inner + s) * esize, on.data(), esize);
      }
    }
  };
  int64_t block_bytes = depth * inner * esize;
  parallel_for(outer, std::max<int64_t>(1, kParallelBytes / std::max<int64_t>(block_bytes, 1)),
               body);
}

}  // namespace

void register_data_movement_indexing(KernelRegistry& r) {
  r.native(OpKind::Gather, gather, dtypes::kEvery);
  r.native(OpKind::Embedding, embedding, dtypes::kEvery);
  r.native(OpKind::GatherNd, gather_nd, dtypes::kEvery);
  r.native(OpKind::GatherElements, gather_elements, dtypes::kEvery);
  r.native(OpKind::OneHot, one_hot, dtypes::kInt);
}

TESSEL_ISA_END
