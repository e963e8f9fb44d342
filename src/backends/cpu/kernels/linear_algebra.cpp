// cpu kernels: linear_algebra. MatMul, DotGeneral and Einsum become labeled contractions
// (linear_algebra_contract.cpp: strided GEMM calls, no copies where layouts allow); GroupedMatMul
// gathers each expert's tokens into one GEMM. LoraMatMul runs by its decomposition.
#include "backends/cpu/kernels/linear_algebra.h"

#include <algorithm>
#include <cstring>

#include "backends/cpu/convert.h"
#include "backends/cpu/families.h"
#include "ops/dot_general_dims.h"
#include "ops/einsum_equation.h"
#include "runtime/host_allocator.h"
#include "runtime/kernel_util.h"
#include "runtime/thread_pool.h"
// clang-format off
#include "backends/cpu/simd.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

constexpr DTypeSet kFloats = dtypes::kFloat | dtypes::kFp8;
constexpr DTypeSet kNumbers = kFloats | dtypes::kInt;

// A view of `t` by label strides; it has every label given a stride or listed in `also`.
LabeledView view_of(const HostTensor& t, std::vector<int64_t> strides,
                    const std::vector<int>& also = {}) {
  std::vector<bool> has(strides.size());
  for (size_t l = 0; l < strides.size(); ++l) has[l] = strides[l] != 0;
  for (int l : also) has[l] = true;
  return {t.data(), t.dtype, std::move(strides), std::move(has)};
}

// ---------------------------------------------------------------------------------------------
// MatMul: labels are the batch dims, then m, n, k. A 1-D operand has stride 0 on its missing
// dim; broadcast batch dims have stride 0 (the contraction then folds them into M or N).

void matmul(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor &a = in[0], &b = in[1];
  const bool ta = node.attrs.b("transpose_a"), tb = node.attrs.b("transpose_b");
  const int ra = a.rank(), rb = b.rank();
  const int nb = static_cast<int>(std::max(std::max(ra, 2), std::max(rb, 2))) - 2;
  // Per operand: (rows, cols) sizes and strides of its matrix, 1-D as a row / column.
  int64_t am = 1, ak, ams = 0, aks;
  if (ra == 1) {
    ak = a.shape[0], aks = a.strides[0];
  } else {
    am = a.shape[ra - 2], ak = a.shape[ra - 1], ams = a.strides[ra - 2], aks = a.strides[ra - 1];
    if (ta) std::swap(am, ak), std::swap(ams, aks);
  }
  int64_t bn = 1, bk, bns = 0, bks;
  if (rb == 1) {
    bk = b.shape[0], bks = b.strides[0];
  } else {
    bk = b.shape[rb - 2], bn = b.shape[rb - 1], bks = b.strides[rb - 2], bns = b.strides[rb - 1];
    if (tb) std::swap(bk, bn), std::swap(bks, bns);
  }
  // Labels: 0 .. nb-1 batch, nb = m, nb+1 = n, nb+2 = k.
  std::vector<int64_t> sizes(nb + 3, 1), xs(nb + 3, 0), ys(nb + 3, 0);
  for (int i = 0; i < nb; ++i) {
    const int da = i - (nb - (ra - 2)), db = i - (nb - (rb - 2));
    const int64_t sa = da >= 0 && ra > 2 ? a.shape[da] : 1,
                  sb = db >= 0 && rb > 2 ? b.shape[db] : 1;
    sizes[i] = sa == 1 ? sb : sa;
    if (sa != 1) xs[i] = a.strides[da];
    if (sb != 1) ys[i] = b.strides[db];
  }
  sizes[nb] = am, sizes[nb + 1] = bn, sizes[nb + 2] = ak;
  xs[nb] = ams, xs[nb + 2] = aks;
  ys[nb + 1] = bns, ys[nb + 2] = bks;
  std::vector<int> out_labels;
  for (int i = 0; i <= nb + 1; ++i) out_labels.push_back(i);
  (void)bk;
  contract(sizes, view_of(a, xs, {nb + 2}), view_of(b, ys, {nb + 2}), out_labels, out[0].data(),
           out[0].dtype);
}

// ---------------------------------------------------------------------------------------------
// DotGeneral: one label per batch pair, per contracted pair and per free dim.

void dot_general(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor &a = in[0], &b = in[1];
  const DotGeneralDims dims = dot_general_dims(node.attrs, a.rank(), b.rank());
  const auto &lb = dims.lhs_batch, &rb = dims.rhs_batch, &lc = dims.lhs_contract,
             &rc = dims.rhs_contract;
  std::vector<int> a_label(a.rank(), -1), b_label(b.rank(), -1);
  std::vector<int64_t> sizes;
  std::vector<int> out_labels;
  for (size_t i = 0; i < lb.size(); ++i) {
    a_label[lb[i]] = b_label[rb[i]] = static_cast<int>(sizes.size());
    out_labels.push_back(static_cast<int>(sizes.size()));
    sizes.push_back(a.shape[lb[i]]);
  }
  for (size_t i = 0; i < lc.size(); ++i) {
    a_label[lc[i]] = b_label[rc[i]] = static_cast<int>(sizes.size());
    sizes.push_back(a.shape[lc[i]]);
  }
  for (int d = 0; d < a.rank(); ++d)
    if (a_label[d] < 0) {
      a_label[d] = static_cast<int>(sizes.size());
      out_labels.push_back(a_label[d]);
      sizes.push_back(a.shape[d]);
    }
  for (int d = 0; d < b.rank(); ++d)
    if (b_label[d] < 0) {
      b_label[d] = static_cast<int>(sizes.size());
      out_labels.push_back(b_label[d]);
      sizes.push_back(b.shape[d]);
    }
  std::vector<int64_t> xs(sizes.size(), 0), ys(sizes.size(), 0);
  for (int d = 0; d < a.rank(); ++d) xs[a_label[d]] = a.strides[d];
  for (int d = 0; d < b.rank(); ++d) ys[b_label[d]] = b.strides[d];
  contract(sizes, view_of(a, xs, a_label), view_of(b, ys, b_label), out_labels, out[0].data(),
           out[0].dtype);
}

// ---------------------------------------------------------------------------------------------
// Einsum: operands contracted left to right; an intermediate keeps the labels the output or a
// later operand needs, in the compute type. One operand is contracted with a constant 1.

DType compute_dtype(DType dt) {
  if (dt == DType::F64) return DType::F64;
  if (is_float(dt)) return DType::F32;
  return dt == DType::I64 ? DType::I64 : DType::I32;
}

void einsum(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  std::vector<Shape> shapes;
  for (const HostTensor& t : in) shapes.push_back(t.shape);
  const EinsumEquation eq = parse_einsum(node.attrs.s("equation"), shapes, node.where());
  const size_t labels = eq.sizes.size();
  std::vector<LabeledView> views;
  for (size_t o = 0; o < in.size(); ++o) {
    std::vector<int64_t> s(labels, 0);
    for (size_t ax = 0; ax < eq.operands[o].size(); ++ax) {
      const int l = eq.operands[o][ax];
      if (in[o].shape[ax] == 1 && eq.sizes[l] != 1) continue;
      s[l] += in[o].strides[ax];  // a repeated label walks the diagonal
    }
    views.push_back(view_of(in[o], s, eq.operands[o]));
  }
  const DType cdt = compute_dtype(out[0].dtype);
  static const float kOneF = 1;
  static const double kOneD = 1;
  static const int64_t kOneI = 1;
  if (views.size() == 1) {
    const void* one = cdt == DType::F64 ? static_cast<const void*>(&kOneD)
                      : is_float(cdt)   ? static_cast<const void*>(&kOneF)
                                        : static_cast<const void*>(&kOneI);
    const DType one_dt = is_float(cdt) ? cdt : DType::I64;
    views.push_back({one, one_dt, std::vector<int64_t>(labels, 0), std::vector<bool>(labels)});
  }
  std::vector<std::shared_ptr<Storage>> keep_alive;
  LabeledView cur = views[0];
  for (size_t t = 1; t < views.size(); ++t) {
    if (t + 1 == views.size()) {
      contract(eq.sizes, cur, views[t], eq.output, out[0].data(), out[0].dtype);
      return;
    }
    // Labels still needed: in the output or in a later operand (where they vary).
    std::vector<bool> needed(labels, false);
    for (int l : eq.output) needed[l] = true;
    for (size_t u = t + 1; u < views.size(); ++u)
      for (size_t l = 0; l < labels; ++l) needed[l] = needed[l] || views[u].has[l];
    std::vector<int> kept;
    int64_t numel = 1;
    for (size_t l = 0; l < labels; ++l)
      if (needed[l] && (cur.has[l] || views[t].has[l])) {
        kept.push_back(static_cast<int>(l));
        numel *= eq.sizes[l];
      }
    keep_alive.push_back(host_allocate(static_cast<size_t>(numel) * dtype_size(cdt)));
    void* buf = keep_alive.back()->bytes.get();
    contract(eq.sizes, cur, views[t], kept, buf, cdt);
    std::vector<int64_t> s(labels, 0);
    std::vector<bool> has(labels, false);
    int64_t stride = 1;
    for (int i = static_cast<int>(kept.size()) - 1; i >= 0; --i) {
      s[kept[i]] = eq.sizes[kept[i]] == 1 ? 0 : stride;
      has[kept[i]] = true;
      stride *= eq.sizes[kept[i]];
    }
    cur = {buf, cdt, s, has};
  }
}

// ---------------------------------------------------------------------------------------------
// GroupedMatMul: y[t] = x[t] · w[expert_ids[t]]. Tokens are grouped by expert; each group's rows
// of x are gathered (in the compute type) into one GEMM with that expert's weights.

template <class T>
void grouped(const HostTensor& x, const HostTensor& w, const std::vector<int64_t>& ids,
             const HostTensor& y) {
  const int64_t tokens = x.shape[0], k = x.shape[1], experts = w.shape[0], n = w.shape[2];
  std::vector<std::vector<int64_t>> groups(static_cast<size_t>(experts));
  for (int64_t t = 0; t < tokens; ++t) groups[ids[t]].push_back(t);
  const int xs = dtype_size(x.dtype), ys = dtype_size(y.dtype), ws = dtype_size(w.dtype);
  auto run = [&](int64_t e) {
    const std::vector<int64_t>& g = groups[e];
    if (g.empty()) return;
    const int64_t rows = static_cast<int64_t>(g.size());
    std::shared_ptr<Storage> sa = host_allocate(static_cast<size_t>(rows * k) * sizeof(T));
    std::shared_ptr<Storage> sc = host_allocate(static_cast<size_t>(rows * n) * sizeof(T));
    T* xa = reinterpret_cast<T*>(sa->bytes.get());
    T* yc = reinterpret_cast<T*>(sc->bytes.get());
    for (int64_t r = 0; r < rows; ++r)
      load_as(x.data() + g[r] * x.strides[0] * xs, x.dtype, x.strides[1], xa + r * k, k);
    GemmOperand a{xa, kComputeDType<T>, k, 1};
    GemmOperand b{w.data() + e * w.strides[0] * ws, w.dtype, w.strides[1], w.strides[2]};
    if constexpr (std::is_floating_point_v<T>)
      gemm_ex<T>(rows, n, k, a, b, yc, n, false);
    else
      int_gemm<T>(rows, n, k, a, b, yc, n, false);
    for (int64_t r = 0; r < rows; ++r)
      store_as(yc + r * n, y.data() + g[r] * n * ys, y.dtype, 1, n);
  };
  // Few tokens per expert: experts in parallel; else each GEMM threads itself.
  size_t most = 0;
  for (const auto& g : groups) most = std::max(most, g.size());
  if (experts > 1 && 2.0 * static_cast<double>(most) * k * n < 4e6)
    parallel_for(experts, 1, [&](int64_t e0, int64_t e1) {
      for (int64_t e = e0; e < e1; ++e) run(e);
    });
  else
    for (int64_t e = 0; e < experts; ++e) run(e);
}

void grouped_matmul(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor &x = in[0], &w = in[1], &idt = in[2];
  const int64_t tokens = x.shape[0], experts = w.shape[0];
  std::vector<int64_t> ids(static_cast<size_t>(tokens));
  for (int64_t t = 0; t < tokens; ++t) {
    const uint8_t* p = idt.data() + t * idt.strides[0] * dtype_size(idt.dtype);
    int64_t e;
    if (idt.dtype == DType::I32) {
      int32_t v;
      std::memcpy(&v, p, 4);
      e = v;
    } else if (idt.dtype == DType::I64) {
      std::memcpy(&e, p, 8);
    } else {
      e = idt.get_i64(t);  // any other index dtype: rare
    }
    if (e < 0 || e >= experts)
      throw_error(ErrorKind::Value, node.where(), ": expert_ids[", t, "] = ", e,
                  " is out of range [0, ", experts, ")");
    ids[t] = e;
  }
  const HostTensor& y = out[0];
  if (y.numel() == 0) return;
  with_compute_type(y.dtype, [&](auto tag) { grouped<decltype(tag)>(x, w, ids, y); });
}

}  // namespace

void register_linear_algebra(KernelRegistry& r) {
  r.native(OpKind::MatMul, matmul, kNumbers);
  r.native(OpKind::DotGeneral, dot_general, kNumbers);
  r.native(OpKind::GroupedMatMul, grouped_matmul, kNumbers);
  r.native(OpKind::Einsum, einsum, kNumbers);
  r.decomposed(OpKind::LoraMatMul, kFloats);
  register_linear_algebra_fused(r);
}

TESSEL_ISA_END
