// Shape rules of the ControlFlow category (kernels pending: "control flow").
//
// A body graph's parameters are its Input nodes in creation order; its results are its
// `outputs`. Output types come from the bodies:
//   If       cond (bool, one element), xs -> ys: both branches take xs and return ys of the
//            same count and types.
//   While    xs -> ys: cond maps the carried xs to a bool scalar, body maps them to new values
//            of the same types; ys = the final carried values.
//   Scan     carries (num_carry), then scanned xs (length L along axis 0) -> carries, then ys
//            stacked along a new leading axis of length L. body: carries + one slice of each
//            scanned input -> new carries + per-step ys.
//   ScanBackward / ScanBackwardXs (uncertain signature): `body` is the forward Scan body; inputs
//            are the forward operands (carries, scanned xs), then the cotangents of the forward
//            outputs (final carries, stacked ys). ScanBackward returns the gradients of the initial
//            carries, ScanBackwardXs those of the scanned xs (each typed like its primal).
#include <algorithm>

#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

const Graph& body_graph(const InferCtx& ctx, const char* name) {
  const Graph& g = body_attr(ctx, name);
  check_body_results(ctx, g, name);
  return g;
}

std::vector<TensorType> body_inputs(const Graph& g) {
  std::vector<TensorType> types;
  for (int id : g.input_nodes()) types.push_back(g.node(id).outputs.at(0));
  return types;
}

std::vector<TensorType> body_outputs(const Graph& g) {
  std::vector<TensorType> types;
  for (Value v : g.outputs) types.push_back(g.type(v));
  return types;
}

std::string types_str(const std::vector<TensorType>& types) {
  std::string s = "(";
  for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + types[i].str();
  return s + ")";
}

// The body's parameters must be exactly `expected`.
void check_params(const InferCtx& ctx, const Graph& g, const char* name,
                  const std::vector<TensorType>& expected) {
  std::vector<TensorType> got = body_inputs(g);
  if (got != expected)
    ctx.fail(ErrorKind::Shape, name, " takes ", types_str(got), " but is given ",
             types_str(expected));
}

std::vector<TensorType> node_inputs(const InferCtx& ctx, int from, int to) {
  std::vector<TensorType> types;
  for (int i = from; i < to; ++i) types.push_back(ctx.in(i));
  return types;
}

std::vector<TensorType> infer_if(const InferCtx& ctx) {
  const TensorType& cond = ctx.in(0);
  if (cond.dtype != DType::Bool || cond.numel() != 1)
    ctx.fail(ErrorKind::DType, "cond must be a bool scalar, got ", cond.str());
  const Graph& then_g = body_graph(ctx, "then_branch");
  const Graph& else_g = body_graph(ctx, "else_branch");
  std::vector<TensorType> xs = node_inputs(ctx, 1, ctx.num_inputs());
  check_params(ctx, then_g, "then_branch", xs);
  check_params(ctx, else_g, "else_branch", xs);
  std::vector<TensorType> ys = body_outputs(then_g);
  if (body_outputs(else_g) != ys)
    ctx.fail(ErrorKind::Shape, "branches disagree: then_branch returns ", types_str(ys),
             ", else_branch returns ", types_str(body_outputs(else_g)));
  return ys;
}

std::vector<TensorType> infer_while(const InferCtx& ctx) {
  int64_t max_iters = ctx.attrs().i("max_iters");
  if (max_iters < 0) ctx.fail(ErrorKind::Value, "max_iters=", max_iters, " must be >= 0");
  std::vector<TensorType> xs = node_inputs(ctx, 0, ctx.num_inputs());
  const Graph& cond = body_graph(ctx, "cond");
  const Graph& body = body_graph(ctx, "body");
  check_params(ctx, cond, "cond", xs);
  check_params(ctx, body, "body", xs);
  std::vector<TensorType> c = body_outputs(cond);
  if (c.size() != 1 || c[0].dtype != DType::Bool || c[0].numel() != 1)
    ctx.fail(ErrorKind::DType, "cond must return one bool scalar, returns ", types_str(c));
  if (body_outputs(body) != xs)
    ctx.fail(ErrorKind::Shape, "body must return the carried types ", types_str(xs), ", returns ",
             types_str(body_outputs(body)));
  return xs;
}

struct ScanSig {
  int num_carry;
  int num_xs;                       // scanned inputs
  int64_t length = 0;               // L
  std::vector<TensorType> carries;  // carry types
  std::vector<TensorType> xs;       // scanned input types (with the leading L)
  std::vector<TensorType> ys;       // stacked output types (with the leading L)
};

// Checks the forward operands (the node's first `operands` inputs) against the body.
ScanSig scan_signature(const InferCtx& ctx, int operands) {
  const Graph& body = body_graph(ctx, "body");
  int64_t num_carry = ctx.attrs().i("num_carry");
  if (num_carry < 0 || num_carry > operands)
    ctx.fail(ErrorKind::Value, "num_carry=", num_carry, " must be in [0, ", operands, "]");
  ScanSig sig;
  sig.num_carry = static_cast<int>(num_carry);
  sig.num_xs = operands - sig.num_carry;
  if (sig.num_xs == 0)
    ctx.fail(ErrorKind::Value, "Scan needs at least one scanned input to fix its length");
  sig.carries = node_inputs(ctx, 0, sig.num_carry);
  sig.xs = node_inputs(ctx, sig.num_carry, operands);
  std::vector<TensorType> params = sig.carries;
  for (const TensorType& x : sig.xs) {
    if (x.rank() < 1)
      ctx.fail(ErrorKind::Shape, "a scanned input must have rank >= 1, got ", x.str());
    if (params.size() == sig.carries.size()) sig.length = x.shape[0];
    if (x.shape[0] != sig.length)
      ctx.fail(ErrorKind::Shape, "scanned inputs disagree on the length: ", sig.length, " vs ",
               x.str());
    params.push_back({x.dtype, Shape(x.shape.begin() + 1, x.shape.end())});
  }
  check_params(ctx, body, "body", params);
  std::vector<TensorType> outs = body_outputs(body);
  if (outs.size() < sig.carries.size() ||
      !std::equal(sig.carries.begin(), sig.carries.end(), outs.begin()))
    ctx.fail(ErrorKind::Shape, "body must return the carries ", types_str(sig.carries),
             " first, returns ", types_str(outs));
  for (size_t i = sig.carries.size(); i < outs.size(); ++i) {
    Shape s{sig.length};
    s.insert(s.end(), outs[i].shape.begin(), outs[i].shape.end());
    sig.ys.push_back({outs[i].dtype, s});
  }
  return sig;
}

std::vector<TensorType> infer_scan(const InferCtx& ctx) {
  ScanSig sig = scan_signature(ctx, ctx.num_inputs());
  std::vector<TensorType> out = sig.carries;
  out.insert(out.end(), sig.ys.begin(), sig.ys.end());
  return out;
}

// Inputs: carries, xs, d_final_carries, d_ys; the operand count comes from the body.
ScanSig scan_backward_signature(const InferCtx& ctx) {
  const Graph& body = body_graph(ctx, "body");
  int operands = static_cast<int>(body.input_nodes().size());
  int body_outs = static_cast<int>(body.outputs.size());
  int expected = operands + body_outs;
  if (ctx.num_inputs() != expected)
    ctx.fail(ErrorKind::Value, "got ", ctx.num_inputs(), " inputs; expected ", expected, " (",
             operands, " forward operands, then ", body_outs, " output cotangents)");
  ScanSig sig = scan_signature(ctx, operands);
  std::vector<TensorType> cot = sig.carries;
  cot.insert(cot.end(), sig.ys.begin(), sig.ys.end());
  std::vector<TensorType> got = node_inputs(ctx, operands, expected);
  if (got != cot)
    ctx.fail(ErrorKind::Shape, "output cotangents must be typed ", types_str(cot), ", got ",
             types_str(got));
  return sig;
}

std::vector<TensorType> infer_scan_backward(const InferCtx& ctx) {
  ScanSig sig = scan_backward_signature(ctx);
  if (sig.num_carry == 0) ctx.fail(ErrorKind::Value, "ScanBackward needs num_carry >= 1");
  return sig.carries;
}

std::vector<TensorType> infer_scan_backward_xs(const InferCtx& ctx) {
  return scan_backward_signature(ctx).xs;
}

}  // namespace

void register_rules_ControlFlow(RuleTable& table) {
  table[OpKind::If].infer = infer_if;
  table[OpKind::While].infer = infer_while;
  table[OpKind::Scan].infer = infer_scan;
  table[OpKind::ScanBackward].infer = infer_scan_backward;
  table[OpKind::ScanBackwardXs].infer = infer_scan_backward_xs;
}

}  // namespace tessel
