// A mechanical check that every VJP rule reads every attribute of its kind: for each kind with a
// rule, the parity harness's cases (every variant) give valid example nodes; the rule runs on each
// with an AttrReadLog on the node's attributes, and the Backward kinds it emits are decomposed
// (their decompositions read the attributes forwarded to them); attributes forwarded to a node of
// a kind that declares them count as used. An attribute no example read is a failure, unless waived
// below with its reason — a rule that ignores an attribute usually computes the gradient of a
// different op. Kinds that gain a rule (Conv, Pool, ...) are checked as they land.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "ops/rules.h"
#include "parity/cases.h"

namespace tessel {
namespace {

// Per kind, the attributes its VJP rule may leave unread, each with the reason.
const std::map<std::string, std::map<std::string, std::string>> kWaivers = {
    {"Cast",
     {{"to", "the cotangent is cast back to the input's dtype, whatever x was cast to"},
      {"saturate", "straight through, as PyTorch's casts: a clamped element's gradient passes"}}},
    {"ALiBi", {{"max_bias", "the biases are constants: the gradient is the cotangent"}}},
    {"Reshape",
     {{"shape", "the gradient is reshaped to x's shape; the attribute only restates y's"}}},
    {"Expand", {{"shape", "the gradient is summed to x's shape; the attribute only restates y's"}}},
    {"Pad", {{"value", "the padding constant does not depend on x"}}},
    {"Reduce",
     {{"keepdims", "the cotangent is reshaped to the keepdims shape whether or not y kept them"}}},
    {"TopK",
     {{"k", "the indices output says where each value came from"},
      {"largest", "the indices output says where each value came from"},
      {"sorted", "the indices output says where each value came from"}}},
    {"ConvTranspose2d",
     {{"output_padding", "the rows / columns it adds are in dy's shape, which the rule reads"}}},
    {"Pool", {{"output_size", "adaptive windows come from dy's shape (the output size)"}}},
};

// Runs `kind`'s VJP rule on the node case `c` builds (false: not a valid example), with `log` on
// the node's attributes, and decomposes the nodes the rule emitted with those attributes.
bool run_rule(OpKind kind, const parity::Case& c, const std::shared_ptr<AttrReadLog>& log) {
  Graph g;
  GraphBuilder b(g);
  std::vector<Value> ins;
  std::vector<TensorType> types;
  for (const HostTensor& t : c.inputs) {
    ins.push_back(t.storage ? g.input(t.dtype, t.shape) : Value{});
    if (t.storage) types.push_back({t.dtype, t.shape});
  }
  try {
    Attrs attrs = c.attrs;
    if (c.finalize) c.finalize(attrs, types);
    std::vector<Value> outs = g.add(kind, attrs, ins);
    Node fwd = g.node(outs[0].node);  // a copy, with the log on its attributes
    fwd.attrs.log_reads(log);
    std::vector<Value> cots;
    for (Value o : outs) {
      const TensorType t = g.type(o);  // a copy: the graph grows
      cots.push_back(is_float(t.dtype) ? g.input(t.dtype, t.shape) : Value{});
    }
    std::vector<bool> needed;
    for (Value in : ins) needed.push_back(in.valid() && is_float(g.type(in).dtype));
    if (std::find(needed.begin(), needed.end(), true) == needed.end()) return false;
    const int first = g.size();
    VjpCtx ctx{b, fwd, fwd.inputs, outs, cots, needed};
    rules_for(kind).vjp(ctx);
    for (int id = first; id < g.size(); ++id) {
      const Node n = g.node(id);
      if (n.attrs.read_log() != log) continue;
      // Forwarded to a kind that declares the attribute: that kind interprets it.
      for (const AttrSpec& a : n.info().attrs) log->names.insert(a.name);
      if (DecomposeFn d = rules_for(n.kind).decompose) d(g, n, n.inputs);
    }
  } catch (const Error&) {
    return false;  // not valid for this kind, or a gradient the rule refuses (it says so)
  } catch (const std::exception& e) {  // a bug in the rule, not a refusal
    ADD_FAILURE() << op_name(kind) << "'s VJP rule threw on case " << c.name << ": " << e.what();
    return false;
  }
  return true;
}

TEST(VjpAttrUse, EveryRuleReadsEveryAttributeOfItsKind) {
  parity::Draw draw;
  draw.family = "batch";
  draw.b = 2;
  draw.m = 3;
  draw.n = 4;
  draw.k = 4;
  int kinds = 0;
  for (const OpInfo& op : all_ops()) {
    if (rules_for(op.kind).vjp == nullptr) continue;
    ++kinds;
    auto log = std::make_shared<AttrReadLog>();
    int examples = 0;
    for (int v = 0; v < op.num_variants(); ++v) {
      parity::CaseRng rng(1000 + v);
      for (const parity::Case& c : parity::cases_for(op.kind, v, draw, rng))
        examples += run_rule(op.kind, c, log) ? 1 : 0;
    }
    if (op.attrs.empty()) continue;
    ASSERT_GT(examples, 0) << op.name << " has a VJP rule and attributes but the parity cases give "
                           << "no valid example node to check it on";
    const auto waived = kWaivers.find(op.name);
    for (const AttrSpec& a : op.attrs) {
      const bool read = log->names.count(a.name) > 0;
      const bool waiver = waived != kWaivers.end() && waived->second.count(a.name) > 0;
      EXPECT_TRUE(read || waiver) << op.name << "'s VJP rule never read attribute '" << a.name
                                  << "' on " << examples << " example nodes: read it, or waive "
                                  << "it in kWaivers with the reason";
      EXPECT_FALSE(read && waiver)
          << op.name << "'s VJP rule reads '" << a.name << "' now: remove its waiver";
    }
  }
  std::printf("attribute use checked for %d kinds with a VJP rule\n", kinds);
  for (const auto& [name, attrs] : kWaivers) {
    auto kind = op_from_name(name);
    ASSERT_TRUE(kind.has_value()) << "waiver for unknown kind " << name;
    for (const auto& [attr, reason] : attrs) {
      EXPECT_NE(op_info(*kind).find_attr(attr), nullptr) << name << " has no attribute " << attr;
      EXPECT_FALSE(reason.empty()) << name << "." << attr << " is waived without a reason";
    }
  }
}

}  // namespace
}  // namespace tessel
