// Reference kernels of the LinearAlgebra category: MatMul, DotGeneral, GroupedMatMul and Einsum
// run natively; LoraMatMul runs by its decomposition (src/ops/linear_algebra.cpp). The
// factorizations and solvers are pending and not claimed.
//
// Floats accumulate in f64 and are rounded once into the output; integers accumulate exactly in
// 64-bit two's complement (wrapping) and wrap to the output width on store.
#include "backends/reference/kernels.h"
#include "ops/dot_general_dims.h"
#include "ops/einsum_equation.h"

namespace tessel::reference {
namespace {

// A sum of products, f64 for floats and wrapping int64 for integers.
class Accumulator {
 public:
  explicit Accumulator(DType dtype) : exact_(is_integer(dtype)) {}
  void add_product(const HostTensor& a, int64_t a_off, const HostTensor& b, int64_t b_off) {
    if (exact_)
      i_ += static_cast<uint64_t>(load_i64(a, a_off)) * static_cast<uint64_t>(load_i64(b, b_off));
    else
      f_ += load_f64(a, a_off) * load_f64(b, b_off);
  }
  void store(const HostTensor& out, int64_t off) const {
    if (exact_)
      store_i64(out, off, static_cast<int64_t>(i_));
    else
      store_f64(out, off, f_);
  }

 private:
  bool exact_;
  double f_ = 0;
  uint64_t i_ = 0;
};

// ---------------------------------------------------------------------------------------------
// MatMul

// `t` as a [batch..., rows, cols] view: 1-D operands get their unit dim (stride 0), transposes
// swap the last two dims, batch dims broadcast to `batch`.
HostTensor matrix_view(const HostTensor& t, bool is_lhs, bool transpose, const Shape& batch) {
  HostTensor v = t;
  if (v.rank() == 1) {
    v.shape = is_lhs ? Shape{1, t.shape[0]} : Shape{t.shape[0], 1};
    v.strides =
        is_lhs ? std::vector<int64_t>{0, t.strides[0]} : std::vector<int64_t>{t.strides[0], 0};
  }
  int r = v.rank();
  if (transpose) {
    std::swap(v.shape[r - 2], v.shape[r - 1]);
    std::swap(v.strides[r - 2], v.strides[r - 1]);
  }
  Shape full = batch;
  full.push_back(v.shape[r - 2]);
  full.push_back(v.shape[r - 1]);
  return broadcast_to(v, full);
}

void matmul(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor &a = in[0], &b = in[1];
  Shape ba(a.shape.begin(), a.shape.end() - std::min(a.rank(), 2));
  Shape bb(b.shape.begin(), b.shape.end() - std::min(b.rank(), 2));
  // The batch dims broadcast as the shape rule checked: the longer shape wins each dim.
  Shape batch(std::max(ba.size(), bb.size()), 1);
  for (size_t i = 0; i < batch.size(); ++i) {
    size_t ia = i + ba.size() - batch.size(), ib = i + bb.size() - batch.size();
    int64_t da = ia < ba.size() ? ba[ia] : 1, db = ib < bb.size() ? bb[ib] : 1;
    batch[i] = da == 1 ? db : da;
  }
  HostTensor av = matrix_view(a, true, node.attrs.b("transpose_a"), batch);
  HostTensor bv = matrix_view(b, false, node.attrs.b("transpose_b"), batch);
  const int nb = static_cast<int>(batch.size());
  const int64_t m = av.shape[nb], k = av.shape[nb + 1], n = bv.shape[nb + 1];
  std::vector<int64_t> idx(nb + 2, 0);
  int64_t o = 0;  // the output's dropped unit dims do not change its row-major order
  for_each_index(batch, [&](const std::vector<int64_t>& bi) {
    std::copy(bi.begin(), bi.end(), idx.begin());
    idx[nb] = idx[nb + 1] = 0;
    const int64_t a0 = av.offset_of(idx.data()), b0 = bv.offset_of(idx.data());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        Accumulator acc(out[0].dtype);
        for (int64_t p = 0; p < k; ++p)
          acc.add_product(av, a0 + i * av.strides[nb] + p * av.strides[nb + 1], bv,
                          b0 + p * bv.strides[nb] + j * bv.strides[nb + 1]);
        acc.store(out[0], out[0].offset + o++);
      }
  });
}

// ---------------------------------------------------------------------------------------------
// DotGeneral

void dot_general(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor &a = in[0], &b = in[1];
  const DotGeneralDims dims = dot_general_dims(node.attrs, a.rank(), b.rank());
  const auto &lb = dims.lhs_batch, &rb = dims.rhs_batch, &lc = dims.lhs_contract,
             &rc = dims.rhs_contract, &lf = dims.lhs_free, &rf = dims.rhs_free;
  Shape contract;
  for (int d : lc) contract.push_back(a.shape[d]);
  std::vector<int64_t> ai(a.rank(), 0), bi(b.rank(), 0);
  int64_t o = 0;
  for_each_index(out[0].shape, [&](const std::vector<int64_t>& oi) {
    size_t p = 0;
    for (size_t i = 0; i < lb.size(); ++i, ++p) ai[lb[i]] = bi[rb[i]] = oi[p];
    for (int d : lf) ai[d] = oi[p++];
    for (int d : rf) bi[d] = oi[p++];
    Accumulator acc(out[0].dtype);
    for_each_index(contract, [&](const std::vector<int64_t>& ci) {
      for (size_t i = 0; i < lc.size(); ++i) ai[lc[i]] = bi[rc[i]] = ci[i];
      acc.add_product(a, a.offset_of(ai.data()), b, b.offset_of(bi.data()));
    });
    acc.store(out[0], out[0].offset + o++);
  });
}

// ---------------------------------------------------------------------------------------------
// GroupedMatMul: y[t] = x[t] · w[expert_ids[t]].

void grouped_matmul(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor &x = in[0], &w = in[1], &ids = in[2];
  const int64_t tokens = x.shape[0], k = x.shape[1], experts = w.shape[0], n = w.shape[2];
  for (int64_t t = 0; t < tokens; ++t) {
    int64_t e = ids.get_i64(t);
    if (e < 0 || e >= experts)
      throw_error(ErrorKind::Value, node.where(), ": expert_ids[", t, "] = ", e,
                  " is out of range [0, ", experts, ")");
    for (int64_t j = 0; j < n; ++j) {
      Accumulator acc(out[0].dtype);
      for (int64_t p = 0; p < k; ++p)
        acc.add_product(x, x.offset + t * x.strides[0] + p * x.strides[1], w,
                        w.offset + e * w.strides[0] + p * w.strides[1] + j * w.strides[2]);
      acc.store(out[0], out[0].offset + t * n + j);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Einsum: one loop over every label's range; each operand reads through per-label strides (a
// repeated label sums its strides: the diagonal; a broadcast size-1 dim has stride 0).

void einsum(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  std::vector<Shape> shapes;
  for (const HostTensor& t : in) shapes.push_back(t.shape);
  const EinsumEquation eq = parse_einsum(node.attrs.s("equation"), shapes, node.where());
  const size_t labels = eq.sizes.size();
  std::vector<std::vector<int64_t>> strides(in.size(), std::vector<int64_t>(labels, 0));
  for (size_t o = 0; o < in.size(); ++o)
    for (size_t ax = 0; ax < eq.operands[o].size(); ++ax) {
      int l = eq.operands[o][ax];
      if (in[o].shape[ax] == 1 && eq.sizes[l] != 1) continue;
      strides[o][l] += in[o].strides[ax];
    }
  std::vector<int64_t> out_strides(labels, 0);
  const std::vector<int64_t> contiguous = contiguous_strides(out[0].shape);
  for (size_t ax = 0; ax < eq.output.size(); ++ax) out_strides[eq.output[ax]] = contiguous[ax];

  const bool exact = is_integer(out[0].dtype);
  std::vector<double> fsum(exact ? 0 : out[0].numel(), 0.0);
  std::vector<uint64_t> isum(exact ? out[0].numel() : 0, 0);
  for_each_index(eq.sizes, [&](const std::vector<int64_t>& li) {
    int64_t o = 0;
    for (size_t l = 0; l < labels; ++l) o += li[l] * out_strides[l];
    double fp = 1;
    uint64_t ip = 1;
    for (size_t t = 0; t < in.size(); ++t) {
      int64_t off = in[t].offset;
      for (size_t l = 0; l < labels; ++l) off += li[l] * strides[t][l];
      if (exact)
        ip *= static_cast<uint64_t>(load_i64(in[t], off));
      else
        fp *= load_f64(in[t], off);
    }
    if (exact)
      isum[o] += ip;
    else
      fsum[o] += fp;
  });
  for (int64_t i = 0; i < out[0].numel(); ++i) {
    if (exact)
      store_i64(out[0], out[0].offset + i, static_cast<int64_t>(isum[i]));
    else
      store_f64(out[0], out[0].offset + i, fsum[i]);
  }
}

}  // namespace

void register_LinearAlgebra(Registry& r) {
  r.native(OpKind::MatMul, matmul, kNumbers);
  r.native(OpKind::DotGeneral, dot_general, kNumbers);
  r.native(OpKind::GroupedMatMul, grouped_matmul, kNumbers);
  r.native(OpKind::Einsum, einsum, kNumbers);
  r.decomposed(OpKind::LoraMatMul, kFloats);
}

}  // namespace tessel::reference
