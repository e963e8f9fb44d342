#include "ops/shape_util.h"

namespace tessel {

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int normalize_axis(const InferCtx& ctx, int64_t axis, int rank, const char* what) {
  if (axis < -rank || axis >= std::max(rank, 1))
    ctx.fail(ErrorKind::Shape, what, " ", axis, " is out of range for rank ", rank,
             " (valid: ", -rank, " to ", std::max(rank, 1) - 1, ")");
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

DType same_dtype(const InferCtx& ctx, std::initializer_list<int> inputs) {
  DType t = ctx.in(*inputs.begin()).dtype;
  for (int i : inputs)
    if (ctx.has(i) && ctx.in(i).dtype != t)
      ctx.fail(ErrorKind::DType, "inputs must share one dtype, got ", dtype_name(t), " and ",
               dtype_name(ctx.in(i).dtype));
  return t;
}

void require_dtype(const InferCtx& ctx, int i, DTypeSet allowed, const char* what) {
  if (!allowed.contains(ctx.in(i).dtype))
    ctx.fail(ErrorKind::DType, what, " has dtype ", dtype_name(ctx.in(i).dtype),
             "; expected one of ", allowed.to_string());
}

void require_rank(const InferCtx& ctx, int i, int rank) {
  if (ctx.in(i).rank() != rank)
    ctx.fail(ErrorKind::Shape, "input ", i, " must have rank ", rank, ", got ", ctx.in(i).str());
}

void require_rank_between(const InferCtx& ctx, int i, int lo, int hi) {
  int r = ctx.in(i).rank();
  if (r < lo || r > hi)
    ctx.fail(ErrorKind::Shape, "input ", i, " must have rank ", lo, " to ", hi, ", got ",
             ctx.in(i).str());
}

std::vector<TensorType> same_as_input(const InferCtx& ctx) { return {ctx.in(0)}; }

const Graph& body_attr(const InferCtx& ctx, const char* name) {
  const auto& g = ctx.attrs().graph(name);
  if (!g) ctx.fail(ErrorKind::Value, "graph attribute '", name, "' is not set");
  return *g;
}

void check_body_results(const InferCtx& ctx, const Graph& body, const char* name) {
  if (body.outputs.empty()) ctx.fail(ErrorKind::Value, name, " has no outputs");
  for (Value v : body.outputs)
    if (v.node < 0 || v.node >= body.size() || v.index < 0 ||
        v.index >= static_cast<int>(body.node(v.node).outputs.size()))
      ctx.fail(ErrorKind::Value, name, " returns a value it does not hold (%", v.node, ".", v.index,
               ")");
}

void check_body_takes_inputs(const InferCtx& ctx, const Graph& body, const char* name) {
  std::vector<int> params = body.input_nodes();
  if (static_cast<int>(params.size()) != ctx.num_inputs())
    ctx.fail(ErrorKind::Value, name, " takes ", params.size(), " inputs, the node has ",
             ctx.num_inputs());
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType& want = body.node(params[i]).outputs.at(0);
    if (ctx.in(i) != want)
      ctx.fail(ErrorKind::Shape, "input ", i, " is ", ctx.in(i).str(), " but ", name, " input ", i,
               " is ", want.str());
  }
}

std::vector<Value> inline_graph(Graph& g, const Graph& body, std::span<const Value> in) {
  std::vector<std::vector<Value>> map(body.size());
  size_t next = 0;
  for (const Node& n : body.nodes()) {
    if (n.kind == OpKind::Input) {
      map[n.id] = {in[next++]};
    } else if (n.kind == OpKind::Constant) {
      map[n.id] = {g.constant(*n.literal, n.name)};
    } else {
      std::vector<Value> args;
      for (Value v : n.inputs) args.push_back(v.valid() ? map[v.node][v.index] : Value{});
      map[n.id] = g.add(n.kind, n.attrs, std::move(args), n.name);
    }
  }
  std::vector<Value> out;
  for (Value y : body.outputs) out.push_back(map[y.node][y.index]);
  return out;
}

}  // namespace tessel
