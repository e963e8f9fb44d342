#include <sstream>

#include "ops/rules.h"
#include "passes/passes.h"

namespace tessel {
namespace {

bool is_source(OpKind k) {
  return k == OpKind::Input || k == OpKind::Param || k == OpKind::Constant;
}

bool claimed_directly(const Graph& g, const Node& n, const ClaimTable& claims) {
  if (is_source(n.kind)) return true;
  auto how = claims.find(n.kind, n.variant(), claim_dtype(g, n));
  return how && *how != How::Decomposed;
}

std::string describe(const Graph& g, const Node& n, const Backend& backend) {
  std::ostringstream os;
  const OpInfo& info = n.info();
  os << "  " << n.where();
  if (info.variant_enum != VariantEnum::None) os << " variant " << info.variant_name(n.variant());
  os << " inputs (";
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (i) os << ", ";
    os << (n.inputs[i].valid() ? g.type(n.inputs[i]).str() : "absent");
  }
  os << ") on backend '" << backend.name() << "': ";
  DTypeSet supported = backend.claims().dtypes(n.kind, n.variant());
  if (supported.empty())
    os << "not claimed for any dtype";
  else
    os << "claimed for " << supported.to_string() << " only";
  if (info.status == OpStatus::Pending) os << " (kind is pending: " << info.topic << ")";
  return os.str();
}

}  // namespace

Graph legalize(const Graph& g, const Backend& backend) {
  const ClaimTable& claims = backend.claims();
  Graph cur = g;
  constexpr int kMaxRounds = 64;
  for (int round = 0; round < kMaxRounds; ++round) {
    bool changed = false;
    cur = rewrite_graph(cur, [&](Graph& out, const Node& n, std::span<const Value> in) {
      if (claimed_directly(cur, n, claims)) return std::vector<Value>{};
      DecomposeFn d = rules_for(n.kind).decompose;
      if (!d) return std::vector<Value>{};
      changed = true;
      return d(out, n, in);
    });
    if (!changed) break;
    TESSEL_ASSERT(round + 1 < kMaxRounds, "legalize did not reach a fixed point");
  }
  std::vector<std::string> failures;
  for (const Node& n : cur.nodes())
    if (!claimed_directly(cur, n, claims)) failures.push_back(describe(cur, n, backend));
  if (!failures.empty()) {
    std::ostringstream os;
    os << "[legalize] " << failures.size() << " node(s) cannot run on backend '" << backend.name()
       << "' (no native claim and no decomposition into claimed kinds; nothing falls back to "
          "another device):";
    for (const std::string& f : failures) os << '\n' << f;
    throw Error(ErrorKind::Unsupported, os.str());
  }
  return cur;
}

}  // namespace tessel
