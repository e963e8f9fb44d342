// VJP rules of the linear-algebra kinds: MatMul (transposes, numpy batch broadcasting, 1-D
// operands), DotGeneral (any batch / contract dims), GroupedMatMul and Einsum (any equation).
#include <algorithm>

#include "ops/dot_general_dims.h"
#include "ops/einsum_equation.h"
#include "ops/vjp_util.h"

namespace tessel {
namespace {

// y = op(a)·op(b) with op = transpose where asked. A 1-D a is a row [1, K] and a 1-D b a column
// [K, 1] whose unit dim the output drops; the gradients are formed on those 2-D views, summed
// over the batch dims the operand was broadcast along, and reshaped back.
std::vector<Value> vjp_matmul(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  const bool ta = ctx.node.attrs.b("transpose_a"), tb = ctx.node.attrs.b("transpose_b");
  Value a = ctx.inputs[0], w = ctx.inputs[1], g = ctx.cotangents[0];
  const Shape sa = ctx.type(a).shape, sw = ctx.type(w).shape;
  const bool a1 = sa.size() == 1, w1 = sw.size() == 1;
  Shape g_shape = ctx.type(g).shape;
  if (w1) g_shape.push_back(1);
  if (a1) g_shape.insert(g_shape.end() - 1, 1);
  Value a2 = a1 ? b.reshape(a, {1, sa[0]}) : a;
  Value w2 = w1 ? b.reshape(w, {sw[0], 1}) : w;
  Value g2 = b.reshape(g, g_shape);
  Value ga, gw;
  if (ctx.needs(0)) {
    Value d = ta ? b.matmul(w2, g2, tb, true) : b.matmul(g2, w2, false, !tb);
    ga = b.reshape(unbroadcast(b, d, ctx.type(a2).shape), sa);
  }
  if (ctx.needs(1)) {
    Value d = tb ? b.matmul(g2, a2, true, ta) : b.matmul(a2, g2, !ta, false);
    gw = b.reshape(unbroadcast(b, d, ctx.type(w2).shape), sw);
  }
  return {ga, gw};
}

// The gradient of one operand ("this": batch dims tb, contract dims tc, rank tr) of
// y = [batch, lhs free, rhs free]: DotGeneral of g with the other operand over the other's free
// dims, giving [batch, this free, this contract (in the other's ascending contract order)],
// then transposed into this operand's layout.
Value dot_general_operand_grad(GraphBuilder& b, Value g, Value other, int g_free_begin,
                               const std::vector<int>& tb, const std::vector<int>& tc,
                               const std::vector<int>& this_free, int tr,
                               const std::vector<int>& ob, const std::vector<int>& oc,
                               const std::vector<int>& other_free) {
  auto i64 = [](const std::vector<int>& v) { return std::vector<int64_t>(v.begin(), v.end()); };
  const int nb = static_cast<int>(tb.size());
  std::vector<int64_t> g_batch, g_contract;
  for (int i = 0; i < nb; ++i) g_batch.push_back(i);
  for (size_t i = 0; i < other_free.size(); ++i) g_contract.push_back(g_free_begin + i);
  Value r = b.op1(OpKind::DotGeneral,
                  Attrs()
                      .set("lhs_batch", g_batch)
                      .set("rhs_batch", i64(ob))
                      .set("lhs_contract", g_contract)
                      .set("rhs_contract", i64(other_free)),
                  {g, other});
  // Which of this operand's dims each dim of r is.
  std::vector<int> source = tb;
  source.insert(source.end(), this_free.begin(), this_free.end());
  std::vector<int> other_contract_sorted = oc;
  std::sort(other_contract_sorted.begin(), other_contract_sorted.end());
  for (int d : other_contract_sorted) {
    const size_t k = std::find(oc.begin(), oc.end(), d) - oc.begin();
    source.push_back(tc[k]);
  }
  std::vector<int64_t> perm(static_cast<size_t>(tr));
  for (int i = 0; i < tr; ++i) perm[source[i]] = i;
  return b.transpose(r, perm);
}

std::vector<Value> vjp_dot_general(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value lhs = ctx.inputs[0], rhs = ctx.inputs[1], g = ctx.cotangents[0];
  const int lr = ctx.type(lhs).rank(), rr = ctx.type(rhs).rank();
  const DotGeneralDims d = dot_general_dims(ctx.node.attrs, lr, rr);
  const int nb = static_cast<int>(d.lhs_batch.size());
  const int n_lhs_free = static_cast<int>(d.lhs_free.size());
  Value gl, gr;
  if (ctx.needs(0))
    gl = dot_general_operand_grad(b, g, rhs, nb + n_lhs_free, d.lhs_batch, d.lhs_contract,
                                  d.lhs_free, lr, d.rhs_batch, d.rhs_contract, d.rhs_free);
  if (ctx.needs(1))
    gr = dot_general_operand_grad(b, g, lhs, nb, d.rhs_batch, d.rhs_contract, d.rhs_free, rr,
                                  d.lhs_batch, d.lhs_contract, d.lhs_free);
  return {gl, gr};
}

// y[t] = x[t]·w[e(t)]: dx[t] = g[t]·w[e(t)]ᵀ (a grouped matmul with the experts transposed);
// dw[e] = Σ_{t: e(t) = e} x[t]ᵀ g[t], the per-token outer products added into their expert.
std::vector<Value> vjp_grouped_matmul(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value x = ctx.inputs[0], w = ctx.inputs[1], ids = ctx.inputs[2], g = ctx.cotangents[0];
  Value gx, gw;
  if (ctx.needs(0)) gx = b.op1(OpKind::GroupedMatMul, Attrs(), {g, b.transpose(w, {0, 2, 1}), ids});
  if (ctx.needs(1)) {
    const Shape& xs = ctx.type(x).shape;
    const Shape& gs = ctx.type(g).shape;
    Value outer = b.mul(b.reshape(x, {xs[0], xs[1], 1}), b.reshape(g, {gs[0], 1, gs[1]}));
    gw = b.op1(OpKind::ScatterAdd, Attrs().set("axis", int64_t{0}), {zeros_like(b, w), ids, outer});
  }
  return {gx, gw, Value{}};
}

// An Einsum equation from per-operand label ids: id i is the i-th of a..z, A..Z.
std::string einsum_equation(const std::vector<std::vector<int>>& terms,
                            const std::vector<int>& output, const std::string& where) {
  auto letter = [&](int id) {
    if (id >= 52)
      throw_error(ErrorKind::Unsupported, where,
                  ": the Einsum gradient needs more than 52 index letters");
    return static_cast<char>(id < 26 ? 'a' + id : 'A' + (id - 26));
  };
  std::string eq;
  for (size_t t = 0; t < terms.size(); ++t) {
    if (t > 0) eq += ',';
    for (int id : terms[t]) eq += letter(id);
  }
  eq += "->";
  for (int id : output) eq += letter(id);
  return eq;
}

// Operand t's gradient is an Einsum of the cotangent (y's labels) with the other operands, out to
// t's labels. Where t differs from a plain product term: a label it repeats (a diagonal) gets a
// fresh label per repeat, tied to the first by an identity [n, n] operand; a label only t has
// (summed out of y) comes from a ones [n] operand, spreading the gradient along it; an axis of
// size 1 that broadcast against a wider label gets a fresh size-1 label (ones [1]), so the
// gradient sums over the wider label.
std::vector<Value> vjp_einsum(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  std::vector<Shape> shapes;
  for (Value in : ctx.inputs) shapes.push_back(ctx.type(in).shape);
  const EinsumEquation eq = parse_einsum(ctx.node.attrs.s("equation"), shapes, ctx.node.where());
  const int labels = static_cast<int>(eq.sizes.size());
  const DType dt = ctx.type(ctx.cotangents[0]).dtype;
  auto ones = [&](int64_t n) { return b.expand(b.scalar(1, dt), {n}); };
  auto eye = [&](int64_t n) {
    HostTensor t = HostTensor::empty(dt, {n, n});
    for (int64_t i = 0; i < n; ++i) t.set_f64(i * n + i, 1);
    return b.graph().constant(std::move(t));
  };
  std::vector<Value> grads(ctx.inputs.size());
  for (size_t t = 0; t < ctx.inputs.size(); ++t) {
    if (!ctx.needs(static_cast<int>(t))) continue;
    std::vector<std::vector<int>> terms = {eq.output};
    std::vector<Value> operands = {ctx.cotangents[0]};
    std::vector<bool> present(static_cast<size_t>(labels), false), seen = present;
    for (int l : eq.output) present[l] = true;
    for (size_t o = 0; o < ctx.inputs.size(); ++o) {
      if (o == t) continue;
      terms.push_back(eq.operands[o]);
      operands.push_back(ctx.inputs[o]);
      for (int l : eq.operands[o]) present[l] = true;
    }
    int fresh = labels;
    std::vector<int> out;
    for (size_t ax = 0; ax < eq.operands[t].size(); ++ax) {
      const int l = eq.operands[t][ax];
      const int64_t n = eq.sizes[l];
      if (shapes[t][ax] == 1 && n != 1) {  // broadcast in the forward
        terms.push_back({fresh});
        operands.push_back(ones(1));
        out.push_back(fresh++);
      } else if (seen[l]) {  // a repeat: the diagonal
        terms.push_back({l, fresh});
        operands.push_back(eye(n));
        out.push_back(fresh++);
      } else {
        seen[l] = true;
        out.push_back(l);
        if (!present[l]) {
          terms.push_back({l});
          operands.push_back(ones(n));
          present[l] = true;
        }
      }
    }
    grads[t] =
        b.op1(OpKind::Einsum,
              Attrs().set("equation", einsum_equation(terms, out, ctx.node.where())), operands);
  }
  return grads;
}

}  // namespace

void register_vjp_linear_algebra(RuleTable& table) {
  table[OpKind::GroupedMatMul].vjp = vjp_grouped_matmul;
  table[OpKind::MatMul].vjp = vjp_matmul;
  table[OpKind::DotGeneral].vjp = vjp_dot_general;
  table[OpKind::Einsum].vjp = vjp_einsum;
}

}  // namespace tessel
