// Fusion, after legalization: rewrites groups of nodes into fused kinds the backend claims
// natively — never into one it would have to decompose again.
//  1. GEMM epilogues: MatMul(x, w[K,N]) -> Add(bias[N]) -> Activation becomes one
//     FusedMatMulBiasAct (bias and activation each optional), so the epilogue is applied to each
//     output tile while it is in registers.
//  2. Elementwise chains: connected elementwise nodes whose intermediate values are used only
//     inside the chain become one ElementwiseRegion whose body holds it; the region runs as one
//     loop.
//  3. Convolution epilogues: a region that reads a convolution's output and otherwise only
//     constants joins the convolution as one ConvRegion.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/shape_util.h"
#include "passes/passes.h"

namespace tessel {
namespace {

std::vector<int> use_counts(const Graph& g) {
  std::vector<int> uses(g.size(), 0);
  for (const Node& n : g.nodes())
    for (Value v : n.inputs)
      if (v.valid()) ++uses[v.node];
  for (Value v : g.outputs) ++uses[v.node];
  return uses;
}

bool claims_native(const Backend& b, OpKind kind, int variant, DType dt) {
  auto how = b.claims().find(kind, variant, dt);
  return how && *how == How::Native;
}

// ---- GEMM epilogues ---------------------------------------------------------------------------

struct Epilogue {
  int matmul = -1;
  Value bias;    // invalid: none
  int add = -1;  // the Add node, when there is a bias
  int act = -1;  // the Activation node, when there is one
  ActivationKind kind = ActivationKind::Identity;
};

// For every MatMul that heads a fusible epilogue, the chain; indexed by the chain's last node.
std::vector<Epilogue> find_epilogues(const Graph& g, const Backend& backend) {
  std::vector<int> uses = use_counts(g);
  std::vector<int> consumer(g.size(), -1);
  for (const Node& n : g.nodes())
    for (Value v : n.inputs)
      if (v.valid()) consumer[v.node] = n.id;
  std::vector<Epilogue> at(g.size());
  for (const Node& mm : g.nodes()) {
    if (mm.kind != OpKind::MatMul) continue;
    const TensorType& w = g.type(mm.inputs[1]);
    DType dt = mm.outputs[0].dtype;
    bool tb = mm.attrs.b("transpose_b");
    if (mm.attrs.b("transpose_a") || w.shape.size() != 2 || g.type(mm.inputs[0]).dtype != dt ||
        w.dtype != dt)
      continue;
    int64_t n_out = w.shape[tb ? 0 : 1];
    Epilogue e;
    e.matmul = mm.id;
    int last = mm.id;
    if (uses[last] == 1 && consumer[last] >= 0) {
      const Node& add = g.node(consumer[last]);
      if (add.kind == OpKind::Binary && add.attrs.e<BinaryOp>("op") == BinaryOp::Add) {
        Value other = add.inputs[0].node == last ? add.inputs[1] : add.inputs[0];
        const TensorType& bt = g.type(other);
        if (other.node != last && bt.dtype == dt && bt.shape == Shape{n_out} &&
            add.outputs[0] == mm.outputs[0]) {
          e.bias = other;
          e.add = add.id;
          last = add.id;
        }
      }
    }
    if (uses[last] == 1 && consumer[last] >= 0) {
      const Node& act = g.node(consumer[last]);
      if (act.kind == OpKind::Activation && std::isnan(act.attrs.f("alpha")) &&
          act.outputs[0] == mm.outputs[0]) {
        e.act = act.id;
        e.kind = act.attrs.e<ActivationKind>("kind");
        last = act.id;
      }
    }
    if (last == mm.id) continue;  // nothing to fuse
    if (!claims_native(backend, OpKind::FusedMatMulBiasAct, static_cast<int>(e.kind), dt)) continue;
    at[last] = e;
  }
  return at;
}

// ---- Elementwise chains -------------------------------------------------------------------------

bool region_dtype(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::Bool;
}

bool elementwise_member(const Graph& g, const Node& n, const Backend& backend) {
  switch (n.kind) {
    case OpKind::Activation:
    case OpKind::Compare:
    case OpKind::Where:
    case OpKind::Cast:
    case OpKind::Clamp:
    case OpKind::StopGradient:
      break;
    case OpKind::Binary:
      switch (n.attrs.e<BinaryOp>("op")) {
        case BinaryOp::BitAnd:
        case BinaryOp::BitOr:
        case BinaryOp::BitXor:
        case BinaryOp::Shl:
        case BinaryOp::Shr:
          return false;
        default:
          break;
      }
      break;
    default:
      return false;
  }
  // Every float dtype in the chain must be one the backend runs regions of natively.
  auto ok = [&](DType t) {
    return region_dtype(t) &&
           (t == DType::Bool || claims_native(backend, OpKind::ElementwiseRegion, 0, t));
  };
  for (Value v : n.inputs)
    if (!v.valid() || !ok(g.type(v).dtype)) return false;
  return ok(n.outputs[0].dtype);
}

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) { return parent[x] == x ? x : parent[x] = find(parent[x]); }
  void join(int a, int b) { parent[find(a)] = find(b); }
};

// ---- Convolution epilogues ----------------------------------------------------------------------

// Conv -> ElementwiseRegion becomes one ConvRegion where the region reads the convolution's
// output (its only use, of the region's own type) and otherwise only constants, which move into
// the body: the body then runs on each block of the output while it is in cache, instead of a
// second pass over memory.
Graph fuse_conv_regions(const Graph& g, const Backend& backend) {
  std::vector<int> uses = use_counts(g);
  std::vector<int> conv_arg(g.size(), -1);  // region -> which input is the Conv it absorbs
  for (const Node& r : g.nodes()) {
    if (r.kind != OpKind::ElementwiseRegion) continue;
    const TensorType& y = r.outputs[0];
    if (!claims_native(backend, OpKind::ConvRegion, 0, y.dtype)) continue;
    int conv = -1;
    bool ok = true;
    for (size_t i = 0; i < r.inputs.size(); ++i) {
      const Node& p = g.node(r.inputs[i].node);
      if (p.kind == OpKind::Conv && uses[p.id] == 1 && g.type(r.inputs[i]) == y && conv < 0)
        conv = static_cast<int>(i);
      else if (p.kind != OpKind::Constant)
        ok = false;
    }
    if (ok && conv >= 0) conv_arg[r.id] = conv;
  }
  // The region becomes a ConvRegion on the Conv's inputs; the Conv, then unused, is dropped.
  Graph out = rewrite_graph(g, [&](Graph& out, const Node& n, std::span<const Value> in) {
    if (conv_arg[n.id] < 0) return std::vector<Value>{};
    const Node& conv = out.node(in[conv_arg[n.id]].node);
    const Graph& region = *n.attrs.graph("body");
    auto body = std::make_shared<Graph>();
    std::vector<Value> params;
    for (size_t i = 0; i < in.size(); ++i) {
      const Node& src = out.node(in[i].node);
      params.push_back(static_cast<int>(i) == conv_arg[n.id]
                           ? body->input(conv.outputs[0].dtype, conv.outputs[0].shape)
                           : body->constant(*src.literal, src.name));
    }
    body->outputs = inline_graph(*body, region, params);
    Attrs attrs = conv.attrs;
    attrs.set("body", std::shared_ptr<const Graph>(body));
    const std::vector<Value> conv_inputs = conv.inputs;  // out.add may move the nodes
    return out.add(OpKind::ConvRegion, attrs, conv_inputs, n.name);
  });
  return eliminate_dead_code(out);
}

}  // namespace

Graph fuse(const Graph& g, const Backend& backend) {
  std::vector<Epilogue> epilogues = find_epilogues(g, backend);
  std::vector<bool> in_epilogue(g.size(), false);
  for (const Epilogue& e : epilogues)
    for (int id : {e.matmul, e.add, e.act})
      if (e.matmul >= 0 && id >= 0) in_epilogue[id] = true;

  // Chains: a member joins the group of each member producer whose value it alone uses.
  std::vector<int> uses = use_counts(g);
  std::vector<bool> member(g.size(), false);
  for (const Node& n : g.nodes())
    member[n.id] = !in_epilogue[n.id] && elementwise_member(g, n, backend);
  UnionFind groups(g.size());
  for (const Node& n : g.nodes()) {
    if (!member[n.id]) continue;
    for (Value v : n.inputs)
      if (member[v.node] && uses[v.node] == 1 && g.node(v.node).outputs.size() == 1 &&
          g.type(v).shape == n.outputs[0].shape)
        groups.join(v.node, n.id);
  }
  // A member used more than once joins too when every use is by members of one group (x in
  // x * relu6(x + 3) / 6): its value then never leaves the group. Joining can put the uses of
  // another value into one group, so repeat until nothing changes.
  std::vector<std::vector<int>> consumers(g.size());
  for (const Node& n : g.nodes())
    for (Value v : n.inputs)
      if (v.valid()) consumers[v.node].push_back(n.id);
  for (bool changed = true; changed;) {
    changed = false;
    for (const Node& n : g.nodes()) {
      const std::vector<int>& cs = consumers[n.id];
      if (!member[n.id] || uses[n.id] < 2 || static_cast<int>(cs.size()) != uses[n.id] ||
          n.outputs.size() != 1)
        continue;  // not a member, used once (joined above), or a graph output
      const int group = groups.find(cs[0]);
      if (groups.find(n.id) == group) continue;
      bool one_group = true;
      for (int c : cs)
        one_group = one_group && member[c] && groups.find(c) == group &&
                    g.node(c).outputs[0].shape == n.outputs[0].shape;
      if (!one_group) continue;
      groups.join(n.id, cs[0]);
      changed = true;
    }
  }
  std::vector<int> group_size(g.size(), 0);
  for (const Node& n : g.nodes())
    if (member[n.id]) ++group_size[groups.find(n.id)];
  // A group's root is the member whose value leaves the group; its id is the group's find().
  // Union order makes the consumer the representative, so the root is find() of any member.
  // A lone member is a region too where it will join a convolution (step 3): it reads the
  // convolution's output, that output's only use, and otherwise constants (Conv -> Relu, Conv ->
  // HardSwish: the activation then runs on each finished block of the convolution's output
  // instead of in a second pass over memory).
  auto joins_conv = [&](const Node& n) {
    if (!claims_native(backend, OpKind::ConvRegion, 0, n.outputs[0].dtype)) return false;
    int convs = 0;
    for (Value v : n.inputs) {
      const Node& p = g.node(v.node);
      if (p.kind == OpKind::Conv && uses[p.id] == 1 && g.type(v) == n.outputs[0])
        ++convs;
      else if (p.kind != OpKind::Constant)
        return false;
    }
    return convs == 1;
  };
  std::vector<int> root_of(g.size(), -1);
  for (const Node& n : g.nodes())
    if (member[n.id] && (group_size[groups.find(n.id)] >= 2 || joins_conv(n)))
      root_of[n.id] = groups.find(n.id);

  Graph out;
  std::vector<std::vector<Value>> map(g.size());
  for (const Node& n : g.nodes()) {
    auto mapped = [&](Value v) { return v.valid() ? map[v.node][v.index] : Value{}; };
    if (n.kind == OpKind::Constant) {
      map[n.id] = {out.constant(*n.literal, n.name)};
      continue;
    }
    if (const Epilogue& e = epilogues[n.id]; e.matmul >= 0) {
      const Node& mm = g.node(e.matmul);
      Attrs attrs;
      attrs.set("act", e.kind).set("transpose_b", mm.attrs.b("transpose_b"));
      std::vector<Value> ins = {mapped(mm.inputs[0]), mapped(mm.inputs[1]), mapped(e.bias)};
      map[n.id] = out.add(OpKind::FusedMatMulBiasAct, attrs, ins, n.name);
      continue;
    }
    if (in_epilogue[n.id]) continue;  // emitted with its chain's last node
    int root = root_of[n.id];
    if (root >= 0 && root != n.id) continue;  // emitted with its group's root
    if (root == n.id) {
      // Members in topological order; externals become the body's inputs.
      std::vector<int> members;
      for (const Node& m : g.nodes())
        if (root_of[m.id] == root) members.push_back(m.id);
      auto body = std::make_shared<Graph>();
      std::vector<Value> externals;
      std::vector<std::vector<Value>> inner(g.size());
      for (int id : members) {
        const Node& m = g.node(id);
        std::vector<Value> args;
        for (Value v : m.inputs) {
          if (root_of[v.node] == root) {
            args.push_back(inner[v.node][v.index]);
            continue;
          }
          auto it = std::find(externals.begin(), externals.end(), v);
          if (it == externals.end()) {
            externals.push_back(v);
            inner[v.node].resize(std::max<size_t>(inner[v.node].size(), v.index + 1));
            inner[v.node][v.index] = body->input(g.type(v).dtype, g.type(v).shape);
          }
          args.push_back(inner[v.node][v.index]);
        }
        inner[id] = body->add(m.kind, m.attrs, args, m.name);
      }
      body->outputs = {inner[root][0]};
      std::vector<Value> ins;
      for (Value v : externals) ins.push_back(mapped(v));
      Attrs attrs;
      attrs.set("body", std::shared_ptr<const Graph>(body));
      map[n.id] = out.add(OpKind::ElementwiseRegion, attrs, ins, n.name);
      continue;
    }
    std::vector<Value> ins;
    for (Value v : n.inputs) ins.push_back(mapped(v));
    map[n.id] = out.add(n.kind, n.attrs, ins, n.name);
  }
  for (Value v : g.outputs) out.outputs.push_back(map[v.node][v.index]);
  return fuse_conv_regions(out, backend);
}

}  // namespace tessel
