// Reverse-mode autodiff: the backward pass is appended to the forward graph as ordinary nodes,
// built from each kind's VJP rule (src/ops/*_vjp.cpp). A kind without a rule but with a
// decomposition is differentiated through its decomposition; a differentiable kind with
// neither is an Unsupported error naming the node — never a silent zero gradient.
#include <algorithm>

#include "ops/rules.h"
#include "ops/vjp_util.h"
#include "passes/passes.h"

namespace tessel {
namespace {

// Whether a gradient flows through `node` at all (its kind, or its variant, is differentiable).
bool differentiable(const Node& node) {
  const OpInfo& info = node.info();
  switch (info.differentiable) {
    case Differentiable::No:
      return false;
    case Differentiable::Yes:
      return true;
    case Differentiable::PerVariant:
      return info.variant_differentiable(node.variant());
  }
  return false;
}

class Reverse {
 public:
  Reverse(Graph& g, std::span<const Value> wrt) : g_(g), b_(g), end_(g.size()) {
    cot_.resize(static_cast<size_t>(end_));
    leaf_.assign(static_cast<size_t>(end_), false);
    active_.assign(static_cast<size_t>(end_), false);
    for (Value v : wrt) {
      TESSEL_ASSERT(v.valid() && v.node < end_, "vjp: wrt value is not in the graph");
      leaf_[v.node] = active_[v.node] = true;
    }
    // A node is active when it depends on a wrt value.
    for (int id = 0; id < end_; ++id)
      for (Value in : g_.node(id).inputs)
        if (in.valid() && active_[in.node]) active_[id] = true;
  }

  void seed(Value out, Value cotangent) {
    if (!cotangent.valid() || !is_float(g_.type(out).dtype)) return;
    if (g_.type(cotangent) != g_.type(out))
      throw_error(ErrorKind::Shape, "vjp: cotangent ", g_.type(cotangent).str(),
                  " does not match output ", g_.type(out).str());
    accumulate(out, cotangent);
  }

  void run() {
    for (int id = end_ - 1; id >= 0; --id) {
      if (!active_[id] || leaf_[id]) continue;
      const Node& node = g_.node(id);
      auto& cots = cot_[id];
      if (std::none_of(cots.begin(), cots.end(), [](Value v) { return v.valid(); })) continue;
      if (!differentiable(node)) continue;  // e.g. Compare, ArgMax, StopGradient: no gradient
      pull_back(node, cots);
    }
  }

  // The accumulated gradient of v, or zeros.
  Value gradient(Value v) {
    if (v.node < end_ && !cot_[v.node].empty() && cot_[v.node][v.index].valid())
      return cot_[v.node][v.index];
    return zeros_like(b_, v);
  }

 private:
  void accumulate(Value v, Value c) {
    auto& slots = cot_[v.node];
    if (slots.empty()) slots.resize(g_.node(v.node).outputs.size());
    Value& slot = slots[v.index];
    slot = slot.valid() ? b_.add(slot, c) : c;
  }

  void pull_back(const Node& node, std::vector<Value> cots) {
    cots.resize(node.outputs.size());
    // Copies: the graph's node vector grows while the rule emits.
    const Node fwd = node;
    std::vector<Value> outputs;
    for (int i = 0; i < static_cast<int>(fwd.outputs.size()); ++i) outputs.push_back({fwd.id, i});
    std::vector<bool> needed;
    for (Value in : fwd.inputs)
      needed.push_back(in.valid() && active_[in.node] && is_float(g_.type(in).dtype));
    const OpRules& r = rules_for(fwd.kind);
    std::vector<Value> grads;
    if (r.vjp != nullptr) {
      VjpCtx ctx{b_, fwd, fwd.inputs, outputs, cots, needed};
      grads = r.vjp(ctx);
    } else if (r.decompose != nullptr) {
      // Differentiate the node's decomposition, emitted beside it: exact, not an approximation.
      std::vector<Value> outs = r.decompose(g_, fwd, fwd.inputs);
      std::vector<Value> wrt;
      for (size_t i = 0; i < fwd.inputs.size(); ++i)
        if (needed[i]) wrt.push_back(fwd.inputs[i]);
      std::vector<Value> sub = vjp(g_, outs, cots, wrt);
      grads.assign(fwd.inputs.size(), Value{});
      for (size_t i = 0, k = 0; i < fwd.inputs.size(); ++i)
        if (needed[i]) grads[i] = sub[k++];
    } else {
      throw_error(ErrorKind::Unsupported, fwd.where(),
                  ": no VJP rule for this kind yet, and no decomposition to differentiate "
                  "(it lies between the outputs and a value whose gradient was asked for)");
    }
    TESSEL_ASSERT(grads.size() == fwd.inputs.size(), fwd.where(), ": VJP rule returned ",
                  grads.size(), " gradients for ", fwd.inputs.size(), " inputs");
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i].valid() || !needed[i]) continue;
      TESSEL_ASSERT(g_.type(grads[i]) == g_.type(fwd.inputs[i]), fwd.where(),
                    ": VJP rule gave input ", i, " a gradient of type ", g_.type(grads[i]).str(),
                    "; expected ", g_.type(fwd.inputs[i]).str());
      accumulate(fwd.inputs[i], grads[i]);
    }
  }

  Graph& g_;
  GraphBuilder b_;
  int end_;  // nodes at or past end_ are backward nodes this pass (or an outer one) appended
  std::vector<std::vector<Value>> cot_;  // per forward node, per output
  std::vector<bool> leaf_, active_;
};

}  // namespace

std::vector<Value> vjp(Graph& g, std::span<const Value> outputs, std::span<const Value> cotangents,
                       std::span<const Value> wrt) {
  if (outputs.size() != cotangents.size())
    throw_error(ErrorKind::Value, "vjp: ", outputs.size(), " outputs but ", cotangents.size(),
                " cotangents");
  Reverse rev(g, wrt);
  for (size_t i = 0; i < outputs.size(); ++i) rev.seed(outputs[i], cotangents[i]);
  rev.run();
  std::vector<Value> grads;
  for (Value v : wrt) grads.push_back(rev.gradient(v));
  return grads;
}

Graph grad_graph(const Graph& g, const std::vector<int>& wrt_inputs) {
  if (g.outputs.empty()) throw_error(ErrorKind::Value, "grad: the graph has no output");
  Value loss = g.outputs[0];
  const TensorType& lt = g.type(loss);
  if (lt.numel() != 1 || !is_float(lt.dtype))
    throw_error(ErrorKind::Value, "grad: output 0 is ", lt.str(),
                "; expected one floating-point element (use vjp for other outputs)");
  Graph out = g;
  GraphBuilder b(out);
  std::vector<int> inputs = out.input_nodes();
  std::vector<Value> wrt;
  for (int i : wrt_inputs) {
    if (i < 0 || i >= static_cast<int>(inputs.size()))
      throw_error(ErrorKind::Value, "grad: input index ", i, " out of range (the graph has ",
                  inputs.size(), " inputs)");
    wrt.push_back({inputs[i], 0});
  }
  Value one = b.expand(scalar_like(b, 1, loss), lt.shape);
  std::vector<Value> grads = vjp(out, std::vector<Value>{loss}, std::vector<Value>{one}, wrt);
  for (Value v : grads) out.outputs.push_back(v);
  return out;
}

Graph vjp_graph(const Graph& g, int num_primals) {
  Graph out = g;
  std::vector<int> inputs = out.input_nodes();
  const size_t n_out = out.outputs.size();
  if (num_primals < 0 || static_cast<size_t>(num_primals) + n_out != inputs.size())
    throw_error(ErrorKind::Value, "vjp: ", inputs.size(), " inputs for ", num_primals,
                " primals and ", n_out, " outputs; expected one cotangent per output");
  std::vector<Value> primals, cotangents;
  for (int i = 0; i < num_primals; ++i) primals.push_back({inputs[i], 0});
  for (size_t j = 0; j < n_out; ++j) {
    Value c{inputs[num_primals + j], 0};
    const TensorType &ct = out.type(c), &ot = out.type(out.outputs[j]);
    if (ct != ot)
      throw_error(ErrorKind::Shape, "vjp: cotangent ", j, " is ", ct.str(), "; output ", j, " is ",
                  ot.str());
    cotangents.push_back(c);
  }
  std::vector<Value> outputs = out.outputs;
  for (Value v : vjp(out, outputs, cotangents, primals)) out.outputs.push_back(v);
  return out;
}

}  // namespace tessel
