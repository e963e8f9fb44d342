// Reference kernels of the index-driven ShapeMovement kinds: Gather, Embedding, GatherNd,
// GatherElements (byte copies, every dtype), ScatterAdd, ScatterNd, ScatterElements and OneHot.
// Index values are checked here (Value errors); negative indices wrap once, except Embedding's.
// Scatters walk the updates in row-major order: with reduction None a duplicate index keeps the
// last update written; with a reduction the updates combine exactly (i64 for integer dtypes,
// f64 otherwise) and the output is rounded once at the end.
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/reference/kernels.h"

namespace tessel::reference {
namespace {

using Index = std::vector<int64_t>;

int64_t index_at(const HostTensor& indices, const Index& i) { return at_i64(indices, i); }

int64_t row_major(const Shape& shape, const Index& i) {
  int64_t p = 0;
  for (size_t d = 0; d < shape.size(); ++d) p = p * shape[d] + i[d];
  return p;
}

void gather(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const HostTensor& idx = in[1];
  int axis = axis_attr(node, x.rank());
  size_t q = idx.shape.size();
  Index at(q);
  gather_from(x, out[0], [&](const Index& o, Index& s) {
    for (int d = 0; d < axis; ++d) s[d] = o[d];
    std::copy(o.begin() + axis, o.begin() + axis + q, at.begin());
    s[axis] = checked_index(node, index_at(idx, at), x.shape[axis], "index");
    for (int d = axis + 1; d < x.rank(); ++d) s[d] = o[d + q - 1];
  });
}

void embedding(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& w = in[0];
  const HostTensor& ids = in[1];
  size_t q = ids.shape.size();
  Index at(q);
  gather_from(w, out[0], [&](const Index& o, Index& s) {
    std::copy(o.begin(), o.begin() + q, at.begin());
    int64_t id = index_at(ids, at);
    if (id < 0 || id >= w.shape[0])
      throw_error(ErrorKind::Value, node.where(), ": id ", id, " is out of range [0, ", w.shape[0],
                  ")");
    s[0] = id;
    s[1] = o[q];
  });
}

// ONNX GatherND with b batch dims: out[o] = data[o[:b], indices[o[:q-1]], o[q-1:]].
void gather_nd(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& data = in[0];
  const HostTensor& idx = in[1];
  int64_t b = node.attrs.i("batch_dims");
  size_t q = idx.shape.size();
  int64_t k = idx.shape.back();
  Index at(q);
  gather_from(data, out[0], [&](const Index& o, Index& s) {
    for (int64_t d = 0; d < b; ++d) s[d] = o[d];
    std::copy(o.begin(), o.begin() + q - 1, at.begin());
    for (int64_t j = 0; j < k; ++j) {
      at[q - 1] = j;
      s[b + j] = checked_index(node, index_at(idx, at), data.shape[b + j], "index");
    }
    for (size_t d = q - 1; d < o.size(); ++d) s[b + k + d - (q - 1)] = o[d];
  });
}

void gather_elements(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& data = in[0];
  int axis = axis_attr(node, data.rank());
  gather_from(data, out[0], [&](const Index& o, Index& s) {
    s = o;
    s[axis] = checked_index(node, index_at(in[1], o), data.shape[axis], "index");
  });
}

// The output as exact numbers while scattered updates combine into it.
class Combiner {
 public:
  Combiner(const HostTensor& data, ScatterReduction op)
      : op_(op), integral_(is_integer(data.dtype) || data.dtype == DType::Bool) {
    int64_t n = data.numel();
    if (integral_) {
      ints_.resize(n);
      for (int64_t i = 0; i < n; ++i) ints_[i] = data.get_i64(i);
    } else {
      floats_.resize(n);
      for (int64_t i = 0; i < n; ++i) floats_[i] = data.get_f64(i);
    }
  }

  // Combines update element `u` (of `updates`) into row-major position `pos`.
  void combine(int64_t pos, const HostTensor& updates, const Index& u) {
    if (integral_) {
      int64_t& a = ints_[pos];
      a = combine_int(a, at_i64(updates, u));
    } else {
      double& a = floats_[pos];
      a = combine_float(a, at_f64(updates, u));
    }
  }

  void write(const HostTensor& out) const {
    for (int64_t i = 0; i < out.numel(); ++i) {
      if (integral_)
        out.set_i64(i, ints_[i]);
      else
        out.set_f64(i, floats_[i]);
    }
  }

 private:
  int64_t combine_int(int64_t a, int64_t b) const {
    auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);  // wrap like the dtype
    switch (op_) {
      case ScatterReduction::None:
        return b;
      case ScatterReduction::Add:
        return static_cast<int64_t>(ua + ub);
      case ScatterReduction::Mul:
        return static_cast<int64_t>(ua * ub);
      case ScatterReduction::Max:
        return std::max(a, b);
      case ScatterReduction::Min:
        return std::min(a, b);
    }
    return b;
  }
  double combine_float(double a, double b) const {
    switch (op_) {
      case ScatterReduction::None:
        return b;
      case ScatterReduction::Add:
        return a + b;
      case ScatterReduction::Mul:
        return a * b;
      case ScatterReduction::Max:
        return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN()
                                              : std::max(a, b);
      case ScatterReduction::Min:
        return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN()
                                              : std::min(a, b);
    }
    return b;
  }

  ScatterReduction op_;
  bool integral_;
  std::vector<int64_t> ints_;
  std::vector<double> floats_;
};

// y = data; then every update element u goes to data index dest(u, d) in row-major order.
template <class Dest>
void scatter(const HostTensor& data, const HostTensor& updates, const HostTensor& out,
             ScatterReduction op, Dest&& dest) {
  Index d(data.shape.size(), 0);
  if (op == ScatterReduction::None) {
    for_each_index(data.shape, [&](const Index& i) {
      copy_element(out, out.offset_of(i.data()), data, data.offset_of(i.data()));
    });
    for_each_index(updates.shape, [&](const Index& u) {
      dest(u, d);
      copy_element(out, out.offset_of(d.data()), updates, updates.offset_of(u.data()));
    });
    return;
  }
  Combiner c(data, op);
  for_each_index(updates.shape, [&](const Index& u) {
    dest(u, d);
    c.combine(row_major(data.shape, d), updates, u);
  });
  c.write(out);
}

void scatter_add(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  int axis = axis_attr(node, x.rank());
  scatter(x, in[2], out[0], ScatterReduction::Add, [&](const Index& u, Index& d) {
    d = u;
    int64_t i = u[axis];
    d[axis] = checked_index(node, load_i64(in[1], in[1].offset_of(&i)), x.shape[axis], "index");
  });
}

void scatter_elements(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& data = in[0];
  int axis = axis_attr(node, data.rank());
  auto op = node.attrs.e<ScatterReduction>("reduction");
  scatter(data, in[2], out[0], op, [&](const Index& u, Index& d) {
    d = u;
    d[axis] = checked_index(node, index_at(in[1], u), data.shape[axis], "index");
  });
}

// ONNX ScatterND: update u goes to data[indices[u[:q-1]], u[q-1:]].
void scatter_nd(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& data = in[0];
  const HostTensor& idx = in[1];
  size_t q = idx.shape.size();
  int64_t k = idx.shape.back();
  Index at(q);
  auto op = node.attrs.e<ScatterReduction>("reduction");
  scatter(data, in[2], out[0], op, [&](const Index& u, Index& d) {
    std::copy(u.begin(), u.begin() + q - 1, at.begin());
    for (int64_t j = 0; j < k; ++j) {
      at[q - 1] = j;
      d[j] = checked_index(node, index_at(idx, at), data.shape[j], "index");
    }
    for (size_t e = q - 1; e < u.size(); ++e) d[k + e - (q - 1)] = u[e];
  });
}

// ONNX OneHot: indices in [-depth, depth) wrap; any other index gives an all-off row.
void one_hot(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& idx = in[0];
  int64_t depth = node.attrs.i("depth");
  int64_t axis = node.attrs.i("axis");
  if (axis < 0) axis += idx.rank() + 1;
  double on = node.attrs.f("on_value"), off = node.attrs.f("off_value");
  Index at(idx.shape.size());
  for_each_index(out[0].shape, [&](const Index& o) {
    for (size_t d = 0, j = 0; d < o.size(); ++d)
      if (static_cast<int64_t>(d) != axis) at[j++] = o[d];
    int64_t v = index_at(idx, at);
    if (v < 0) v += depth;
    store_f64(out[0], out[0].offset_of(o.data()), v == o[axis] ? on : off);
  });
}

}  // namespace

void register_ShapeMovementIndexing(Registry& r) {
  r.native(OpKind::Gather, gather, dtypes::kEvery);
  r.native(OpKind::Embedding, embedding, dtypes::kEvery);
  r.native(OpKind::GatherNd, gather_nd, dtypes::kEvery);
  r.native(OpKind::GatherElements, gather_elements, dtypes::kEvery);
  r.native(OpKind::ScatterAdd, scatter_add, kNumbers);
  const std::vector<int> reductions = {
      static_cast<int>(ScatterReduction::Add), static_cast<int>(ScatterReduction::Mul),
      static_cast<int>(ScatterReduction::Max), static_cast<int>(ScatterReduction::Min)};
  for (OpKind k : {OpKind::ScatterNd, OpKind::ScatterElements}) {
    HostKernel fn = k == OpKind::ScatterNd ? scatter_nd : scatter_elements;
    r.native(k, fn, dtypes::kEvery, {static_cast<int>(ScatterReduction::None)});
    r.native(k, fn, kNumbers, reductions);
  }
  r.native(OpKind::OneHot, one_hot, dtypes::kInt);
}

}  // namespace tessel::reference
