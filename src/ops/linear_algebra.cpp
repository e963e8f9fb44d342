// Shape rules and decompositions of the LinearAlgebra category.
//
// Ready: MatMul, DotGeneral, GroupedMatMul, Einsum (native on the reference) and LoraMatMul (a
// decomposition into MatMul and Binary). Pending (shape rules only, no kernel yet): DenseSolve,
// BatchedDenseSolve, ScaledGroupedMatMul, Cholesky, TriangularSolve, Det, LogDet, Svd, Qr.
#include <algorithm>
#include <cmath>

#include "ir/builder.h"
#include "ops/einsum_equation.h"
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

// What the contractions compute on: every real dtype but bool (integers exactly, wrapping).
constexpr DTypeSet kContractDTypes = dtypes::kNumeric | dtypes::kFp8;
// The factorizations and solvers (and LoRA's scale) need a real float.
constexpr DTypeSet kLinalgFloats = dtypes::kFloat | dtypes::kFp8;

Shape concat_shapes(Shape a, const Shape& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Shape leading(const Shape& s, int drop) { return Shape(s.begin(), s.end() - drop); }

// Broadcasts the batch dims (all but the last `core` of each) of inputs i and j.
Shape broadcast_batch(const InferCtx& ctx, int i, int j, int core) {
  Shape a = leading(ctx.in(i).shape, core), b = leading(ctx.in(j).shape, core);
  auto out = broadcast_shapes(a, b);
  if (!out)
    ctx.fail(ErrorKind::Shape, "batch dims ", shape_str(a), " and ", shape_str(b),
             " do not broadcast");
  return *out;
}

// ---------------------------------------------------------------------------------------------
// MatMul: numpy matmul. A 1-D a is [1,K] and a 1-D b is [K,1], the added dim removed from the
// result; transposes swap the last two dims (rank >= 2 only).

std::vector<TensorType> infer_matmul(const InferCtx& ctx) {
  DType dt = same_dtype(ctx, {0, 1});
  require_dtype(ctx, 0, kContractDTypes, "a");
  const Shape &a = ctx.in(0).shape, &b = ctx.in(1).shape;
  if (a.empty() || b.empty())
    ctx.fail(ErrorKind::Shape, "operands must have rank >= 1 (a scalar product is Binary Mul)");
  bool ta = ctx.attrs().b("transpose_a"), tb = ctx.attrs().b("transpose_b");
  if (ta && a.size() < 2) ctx.fail(ErrorKind::Value, "transpose_a needs a of rank >= 2");
  if (tb && b.size() < 2) ctx.fail(ErrorKind::Value, "transpose_b needs b of rank >= 2");
  int ra = static_cast<int>(a.size()), rb = static_cast<int>(b.size());
  int64_t m = ra == 1 ? 1 : (ta ? a[ra - 1] : a[ra - 2]);
  int64_t ka = ra == 1 ? a[0] : (ta ? a[ra - 2] : a[ra - 1]);
  int64_t kb = rb == 1 ? b[0] : (tb ? b[rb - 1] : b[rb - 2]);
  int64_t n = rb == 1 ? 1 : (tb ? b[rb - 2] : b[rb - 1]);
  if (ka != kb)
    ctx.fail(ErrorKind::Shape, "contracted dims differ: a gives K = ", ka, ", b gives K = ", kb);
  Shape ba = ra > 2 ? leading(a, 2) : Shape{}, bb = rb > 2 ? leading(b, 2) : Shape{};
  auto broadcast = broadcast_shapes(ba, bb);
  if (!broadcast)
    ctx.fail(ErrorKind::Shape, "batch dims ", shape_str(ba), " and ", shape_str(bb),
             " do not broadcast");
  Shape batch = *broadcast;
  if (ra > 1) batch.push_back(m);
  if (rb > 1) batch.push_back(n);
  return {{dt, batch}};
}

// ---------------------------------------------------------------------------------------------
// DotGeneral (XLA): output = batch dims (lhs_batch order), lhs free dims, rhs free dims, each
// free group in ascending order. Negative dims count from the end.

std::vector<int> normalize_dims(const InferCtx& ctx, const std::vector<int64_t>& dims, int rank,
                                const char* what) {
  std::vector<int> out;
  for (int64_t d : dims) {
    if (d < -rank || d >= rank)
      ctx.fail(ErrorKind::Value, what, " dim ", d, " is out of range for rank ", rank);
    out.push_back(static_cast<int>(d < 0 ? d + rank : d));
  }
  return out;
}

std::vector<TensorType> infer_dot_general(const InferCtx& ctx) {
  DType dt = same_dtype(ctx, {0, 1});
  require_dtype(ctx, 0, kContractDTypes, "a");
  const Shape &a = ctx.in(0).shape, &b = ctx.in(1).shape;
  int ra = static_cast<int>(a.size()), rb = static_cast<int>(b.size());
  const Attrs& at = ctx.attrs();
  auto lb = normalize_dims(ctx, at.ints("lhs_batch"), ra, "lhs_batch");
  auto rbd = normalize_dims(ctx, at.ints("rhs_batch"), rb, "rhs_batch");
  auto lc = normalize_dims(ctx, at.ints("lhs_contract"), ra, "lhs_contract");
  auto rc = normalize_dims(ctx, at.ints("rhs_contract"), rb, "rhs_contract");
  if (lb.size() != rbd.size())
    ctx.fail(ErrorKind::Value, "lhs_batch has ", lb.size(), " dims but rhs_batch has ", rbd.size());
  if (lc.size() != rc.size())
    ctx.fail(ErrorKind::Value, "lhs_contract has ", lc.size(), " dims but rhs_contract has ",
             rc.size());
  auto free_dims = [&](const std::vector<int>& batch, const std::vector<int>& contract, int rank,
                       const char* side) {
    std::vector<bool> used(rank, false);
    for (const auto* group : {&batch, &contract})
      for (int d : *group) {
        if (used[d])
          ctx.fail(ErrorKind::Value, side, " dim ", d, " appears twice in the batch/contract dims");
        used[d] = true;
      }
    std::vector<int> free;
    for (int d = 0; d < rank; ++d)
      if (!used[d]) free.push_back(d);
    return free;
  };
  auto lf = free_dims(lb, lc, ra, "lhs");
  auto rf = free_dims(rbd, rc, rb, "rhs");
  Shape out;
  for (size_t i = 0; i < lb.size(); ++i) {
    if (a[lb[i]] != b[rbd[i]])
      ctx.fail(ErrorKind::Shape, "batch dim sizes differ: lhs dim ", lb[i], " is ", a[lb[i]],
               ", rhs dim ", rbd[i], " is ", b[rbd[i]]);
    out.push_back(a[lb[i]]);
  }
  for (size_t i = 0; i < lc.size(); ++i)
    if (a[lc[i]] != b[rc[i]])
      ctx.fail(ErrorKind::Shape, "contracted dim sizes differ: lhs dim ", lc[i], " is ", a[lc[i]],
               ", rhs dim ", rc[i], " is ", b[rc[i]]);
  for (int d : lf) out.push_back(a[d]);
  for (int d : rf) out.push_back(b[d]);
  return {{dt, out}};
}

// ---------------------------------------------------------------------------------------------
// Mixture-of-experts matmuls.

std::vector<TensorType> infer_grouped_matmul(const InferCtx& ctx) {
  DType dt = same_dtype(ctx, {0, 1});
  require_dtype(ctx, 0, kContractDTypes, "x");
  require_dtype(ctx, 2, dtypes::kIndex, "expert_ids");
  const Shape &x = ctx.in(0).shape, &w = ctx.in(1).shape, &ids = ctx.in(2).shape;
  if (x.size() != 2) ctx.fail(ErrorKind::Shape, "x must be [T,K], got ", ctx.in(0).str());
  if (w.size() != 3) ctx.fail(ErrorKind::Shape, "w must be [E,K,N], got ", ctx.in(1).str());
  if (ids != Shape{x[0]})
    ctx.fail(ErrorKind::Shape, "expert_ids must be [T] = [", x[0], "], got ", ctx.in(2).str());
  if (w[1] != x[1])
    ctx.fail(ErrorKind::Shape, "w's K (", w[1], ") differs from x's K (", x[1], ")");
  return {{dt, {x[0], w[2]}}};
}

// Provisional NVFP4 layout (the signature is uncertain until the quantization issue lands):
// x [T,K] float; w u8 [E,N,K/2], two e2m1 codes per byte (element 2i in the low nibble, as
// ONNX packs F4E2M1FNx2); scales f8_e4m3fn [E,N,K/16], one per block of 16 along K;
// expert_ids [T] i32/i64; y [T,N] f32 = x[t] · dequant(w[e])ᵀ.
std::vector<TensorType> infer_scaled_grouped_matmul(const InferCtx& ctx) {
  require_dtype(ctx, 0, kLinalgFloats, "x");
  require_dtype(ctx, 1, {DType::U8}, "w (packed e2m1 pairs)");
  require_dtype(ctx, 2, {DType::F8E4M3FN}, "scales");
  require_dtype(ctx, 3, dtypes::kIndex, "expert_ids");
  if (ctx.attrs().e<QuantScheme>("scheme") != QuantScheme::Nvfp4Block)
    ctx.fail(ErrorKind::Value, "only scheme Nvfp4Block is defined for ScaledGroupedMatMul");
  const Shape &x = ctx.in(0).shape, &w = ctx.in(1).shape, &s = ctx.in(2).shape;
  if (x.size() != 2) ctx.fail(ErrorKind::Shape, "x must be [T,K], got ", ctx.in(0).str());
  int64_t t = x[0], k = x[1];
  if (k % 16 != 0) ctx.fail(ErrorKind::Shape, "K must be a multiple of 16 (the block), got ", k);
  if (w.size() != 3 || w[2] != k / 2)
    ctx.fail(ErrorKind::Shape, "w must be [E,N,K/2] = [E,N,", k / 2, "], got ", ctx.in(1).str());
  if (s != Shape{w[0], w[1], k / 16})
    ctx.fail(ErrorKind::Shape, "scales must be [E,N,K/16] = ", shape_str({w[0], w[1], k / 16}),
             ", got ", ctx.in(2).str());
  if (ctx.in(3).shape != Shape{t})
    ctx.fail(ErrorKind::Shape, "expert_ids must be [T] = [", t, "], got ", ctx.in(3).str());
  return {{DType::F32, {t, w[1]}}};
}

// ---------------------------------------------------------------------------------------------
// LoraMatMul: x [...,K], w [K,N], lora_a [K,r], lora_b [r,N] -> x·W + scale·(x·A)·B.

std::vector<TensorType> infer_lora_matmul(const InferCtx& ctx) {
  DType dt = same_dtype(ctx, {0, 1, 2, 3});
  require_dtype(ctx, 0, kLinalgFloats, "x");
  const Shape &x = ctx.in(0).shape, &w = ctx.in(1).shape, &a = ctx.in(2).shape,
              &b = ctx.in(3).shape;
  if (x.empty()) ctx.fail(ErrorKind::Shape, "x must have rank >= 1 ([...,K])");
  if (w.size() != 2 || a.size() != 2 || b.size() != 2)
    ctx.fail(ErrorKind::Shape, "w, lora_a and lora_b must be matrices [K,N], [K,r], [r,N]");
  int64_t k = x.back();
  if (w[0] != k || a[0] != k) ctx.fail(ErrorKind::Shape, "w and lora_a must have K = ", k, " rows");
  if (b[0] != a[1])
    ctx.fail(ErrorKind::Shape, "lora_b must have r = ", a[1], " rows (lora_a's columns)");
  if (b[1] != w[1])
    ctx.fail(ErrorKind::Shape, "lora_b must have N = ", w[1], " columns (w's columns)");
  if (!std::isfinite(ctx.attrs().f("scale")))
    ctx.fail(ErrorKind::Value, "scale must be finite, got ", ctx.attrs().f("scale"));
  Shape out = leading(x, 1);
  out.push_back(w[1]);
  return {{dt, out}};
}

std::vector<Value> decompose_lora_matmul(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  Value base = b.matmul(in[0], in[1]);
  Value low = b.matmul(b.matmul(in[0], in[2]), in[3]);
  double scale = node.attrs.f("scale");
  if (scale != 1.0) low = b.mul(low, b.scalar(scale, g.type(in[0]).dtype));
  return {b.add(base, low)};
}

// ---------------------------------------------------------------------------------------------
// Einsum.

std::vector<TensorType> infer_einsum(const InferCtx& ctx) {
  DType dt = ctx.in(0).dtype;
  std::vector<Shape> shapes;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.in(i).dtype != dt)
      ctx.fail(ErrorKind::DType, "operands must share one dtype, got ", dtype_name(dt), " and ",
               dtype_name(ctx.in(i).dtype));
    shapes.push_back(ctx.in(i).shape);
  }
  require_dtype(ctx, 0, kContractDTypes, "operand 0");
  EinsumEquation eq = parse_einsum(ctx.attrs().s("equation"), shapes, ctx.node().where());
  return {{dt, eq.output_shape()}};
}

// ---------------------------------------------------------------------------------------------
// Pending kinds: shape rules only.

// a [...,N,N] of a float dtype; returns N.
int64_t require_square(const InferCtx& ctx, int i, const char* what) {
  require_dtype(ctx, i, kLinalgFloats, what);
  const Shape& a = ctx.in(i).shape;
  if (a.size() < 2 || a[a.size() - 1] != a[a.size() - 2])
    ctx.fail(ErrorKind::Shape, what, " must be square matrices [...,N,N], got ", ctx.in(i).str());
  return a.back();
}

std::vector<TensorType> infer_dense_solve(const InferCtx& ctx) {
  same_dtype(ctx, {0, 1});
  if (ctx.in(0).rank() != 2) ctx.fail(ErrorKind::Shape, "a must be [N,N], got ", ctx.in(0).str());
  int64_t n = require_square(ctx, 0, "a");
  const Shape& b = ctx.in(1).shape;
  if ((b.size() != 1 && b.size() != 2) || b[0] != n)
    ctx.fail(ErrorKind::Shape, "b must be [N] or [N,K] with N = ", n, ", got ", ctx.in(1).str());
  return {ctx.in(1)};
}

std::vector<TensorType> infer_batched_dense_solve(const InferCtx& ctx) {
  DType dt = same_dtype(ctx, {0, 1});
  int64_t n = require_square(ctx, 0, "a");
  const Shape& b = ctx.in(1).shape;
  if (b.size() < 2 || b[b.size() - 2] != n)
    ctx.fail(ErrorKind::Shape, "b must be [...,N,K] with N = ", n, ", got ", ctx.in(1).str());
  Shape out = broadcast_batch(ctx, 0, 1, 2);
  out.push_back(n);
  out.push_back(b.back());
  return {{dt, out}};
}

std::vector<TensorType> infer_cholesky(const InferCtx& ctx) {
  require_square(ctx, 0, "a");
  return {ctx.in(0)};
}

// left: op(A)·X = B with B [...,N,K]; right: X·op(A) = B with B [...,K,N].
std::vector<TensorType> infer_triangular_solve(const InferCtx& ctx) {
  DType dt = same_dtype(ctx, {0, 1});
  int64_t n = require_square(ctx, 0, "a");
  const Shape& b = ctx.in(1).shape;
  bool left = ctx.attrs().b("left");
  if (b.size() < 2 || (left ? b[b.size() - 2] : b[b.size() - 1]) != n)
    ctx.fail(ErrorKind::Shape, "b must be ", left ? "[...,N,K]" : "[...,K,N]", " with N = ", n,
             ", got ", ctx.in(1).str());
  Shape out = broadcast_batch(ctx, 0, 1, 2);
  out.push_back(b[b.size() - 2]);
  out.push_back(b.back());
  return {{dt, out}};
}

std::vector<TensorType> infer_determinant(const InferCtx& ctx) {
  require_square(ctx, 0, "a");
  return {{ctx.in(0).dtype, leading(ctx.in(0).shape, 2)}};
}

std::vector<TensorType> infer_svd(const InferCtx& ctx) {
  require_dtype(ctx, 0, kLinalgFloats, "a");
  const Shape& a = ctx.in(0).shape;
  if (a.size() < 2) ctx.fail(ErrorKind::Shape, "a must be [...,M,N], got ", ctx.in(0).str());
  int64_t m = a[a.size() - 2], n = a.back(), k = std::min(m, n);
  Shape batch = leading(a, 2);
  switch (ctx.attrs().e<SvdPart>("part")) {
    case SvdPart::U:
      return {{ctx.in(0).dtype, concat_shapes(batch, {m, k})}};
    case SvdPart::S:
      return {{ctx.in(0).dtype, concat_shapes(batch, {k})}};
    case SvdPart::Vt:
      return {{ctx.in(0).dtype, concat_shapes(batch, {k, n})}};
  }
  ctx.fail(ErrorKind::Value, "unknown SVD part");
}

std::vector<TensorType> infer_qr(const InferCtx& ctx) {
  require_dtype(ctx, 0, kLinalgFloats, "a");
  const Shape& a = ctx.in(0).shape;
  if (a.size() < 2) ctx.fail(ErrorKind::Shape, "a must be [...,M,N], got ", ctx.in(0).str());
  int64_t m = a[a.size() - 2], n = a.back();
  if (m < n) ctx.fail(ErrorKind::Shape, "thin QR needs M >= N, got M = ", m, ", N = ", n);
  Shape batch = leading(a, 2);
  switch (ctx.attrs().e<QrPart>("part")) {
    case QrPart::Q:
      return {{ctx.in(0).dtype, concat_shapes(batch, {m, n})}};
    case QrPart::R:
      return {{ctx.in(0).dtype, concat_shapes(batch, {n, n})}};
  }
  ctx.fail(ErrorKind::Value, "unknown QR part");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Einsum equation parsing (declared in ops/einsum_equation.h).

Shape EinsumEquation::output_shape() const {
  Shape s;
  for (int l : output) s.push_back(sizes[l]);
  return s;
}

namespace {

bool is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

EinsumEquation parse_einsum(const std::string& equation, const std::vector<Shape>& shapes,
                            const std::string& where) {
  auto fail = [&](ErrorKind kind, auto&&... args) {
    throw_error(kind, where, ": equation \"", equation, "\": ", args...);
  };
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  // Split into terms; "..." becomes a single '.'.
  auto parse_term = [&](const std::string& text, const char* what) {
    std::string term;  // the labels in order, one '.' standing for '...'
    for (size_t i = 0; i < text.size(); ++i) {
      char c = text[i];
      if (is_label(c)) {
        term += c;
      } else if (c == '.') {
        if (text.compare(i, 3, "...") != 0)
          fail(ErrorKind::Value, "a '.' that is not part of '...' in the ", what);
        if (term.find('.') != std::string::npos)
          fail(ErrorKind::Value, "more than one '...' in one ", what);
        term += '.';
        i += 2;
      } else {
        fail(ErrorKind::Value, "unexpected character '", c, "' (labels are letters a-z, A-Z)");
      }
    }
    return term;
  };
  size_t arrow = eq.find("->");
  bool explicit_output = arrow != std::string::npos;
  std::string lhs = explicit_output ? eq.substr(0, arrow) : eq;
  std::string rhs = explicit_output ? eq.substr(arrow + 2) : "";
  if (rhs.find("->") != std::string::npos || rhs.find(',') != std::string::npos)
    fail(ErrorKind::Value, "the output must be one term after a single '->'");
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(lhs.substr(start, comma - start), "operand"));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != shapes.size())
    fail(ErrorKind::Value, "it has ", terms.size(), " operand(s) but ", shapes.size(),
         " input(s) were given");

  // Ellipsis ranks, and the broadcast ellipsis dims (labels 0 .. ell-1).
  int ell = 0;
  std::vector<int> ell_rank(terms.size(), 0);
  for (size_t o = 0; o < terms.size(); ++o) {
    const std::string& t = terms[o];
    bool has_ell = t.find('.') != std::string::npos;
    int named = static_cast<int>(t.size()) - (has_ell ? 1 : 0);
    int rank = static_cast<int>(shapes[o].size());
    if (has_ell ? rank < named : rank != named)
      fail(ErrorKind::Shape, "operand ", o, " '", t == "." ? "..." : t, "' names ", named,
           " dim(s) but has rank ", rank, " (shape ", shape_str(shapes[o]), ")");
    ell_rank[o] = has_ell ? rank - named : 0;
    ell = std::max(ell, ell_rank[o]);
  }
  EinsumEquation out;
  out.sizes.assign(ell, -1);
  int letter_label[128];
  std::fill(std::begin(letter_label), std::end(letter_label), -1);
  int letter_count[128] = {};
  auto describe = [&](int label) {
    for (int c = 0; c < 128; ++c)
      if (letter_label[c] == label) return std::string("label '") + static_cast<char>(c) + "'";
    return "'...' dim " + std::to_string(label);
  };
  for (size_t o = 0; o < terms.size(); ++o) {
    std::vector<int> axes;
    for (char c : terms[o]) {
      if (c == '.') {
        for (int e = ell - ell_rank[o]; e < ell; ++e) axes.push_back(e);
        continue;
      }
      if (letter_label[static_cast<int>(c)] < 0) {
        letter_label[static_cast<int>(c)] = static_cast<int>(out.sizes.size());
        out.sizes.push_back(-1);
      }
      ++letter_count[static_cast<int>(c)];
      axes.push_back(letter_label[static_cast<int>(c)]);
    }
    // Sizes: equal within one operand (a diagonal); size 1 broadcasts across operands.
    std::vector<int64_t> mine(out.sizes.size(), -1);
    for (size_t a = 0; a < axes.size(); ++a) {
      int l = axes[a];
      int64_t d = shapes[o][a];
      if (mine[l] >= 0 && mine[l] != d)
        fail(ErrorKind::Shape, describe(l), " repeats in operand ", o,
             " over dims of different sizes (", mine[l], " and ", d, ")");
      mine[l] = d;
      int64_t& s = out.sizes[l];
      if (s < 0 || s == 1)
        s = d;
      else if (d != s && d != 1)
        fail(ErrorKind::Shape, describe(l), " has size ", s, " in one operand and ", d,
             " in operand ", o, " (sizes must match or be 1)");
    }
    out.operands.push_back(std::move(axes));
  }

  if (explicit_output) {
    std::string t = parse_term(rhs, "output");
    std::vector<bool> seen(out.sizes.size(), false);
    bool has_ell = false;
    for (char c : t) {
      if (c == '.') {
        has_ell = true;
        for (int e = 0; e < ell; ++e) out.output.push_back(e);
        continue;
      }
      int l = letter_label[static_cast<int>(c)];
      if (l < 0) fail(ErrorKind::Value, "output label '", c, "' appears in no operand");
      if (seen[l]) fail(ErrorKind::Value, "output label '", c, "' appears twice");
      seen[l] = true;
      out.output.push_back(l);
    }
    if (!has_ell && ell > 0)
      fail(ErrorKind::Value, "the operands' '...' covers ", ell,
           " dim(s) but the output has no '...' to keep them");
  } else {
    for (int e = 0; e < ell; ++e) out.output.push_back(e);
    for (int c = 0; c < 128; ++c)
      if (letter_count[c] == 1) out.output.push_back(letter_label[c]);
  }
  return out;
}

void register_rules_LinearAlgebra(RuleTable& table) {
  table[OpKind::MatMul].infer = infer_matmul;
  table[OpKind::DotGeneral].infer = infer_dot_general;
  table[OpKind::GroupedMatMul].infer = infer_grouped_matmul;
  table[OpKind::LoraMatMul].infer = infer_lora_matmul;
  table[OpKind::LoraMatMul].decompose = decompose_lora_matmul;
  table[OpKind::Einsum].infer = infer_einsum;

  table[OpKind::DenseSolve].infer = infer_dense_solve;
  table[OpKind::BatchedDenseSolve].infer = infer_batched_dense_solve;
  table[OpKind::ScaledGroupedMatMul].infer = infer_scaled_grouped_matmul;
  table[OpKind::Cholesky].infer = infer_cholesky;
  table[OpKind::TriangularSolve].infer = infer_triangular_solve;
  table[OpKind::Det].infer = infer_determinant;
  table[OpKind::LogDet].infer = infer_determinant;
  table[OpKind::Svd].infer = infer_svd;
  table[OpKind::Qr].infer = infer_qr;
}

}  // namespace tessel
