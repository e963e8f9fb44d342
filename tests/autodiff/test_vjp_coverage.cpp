// Walks the op table: every ready, differentiable kind has a VJP rule or a decomposition to
// differentiate through — except the kinds listed here, whose rules are still to be written
// (issue 4). The list must shrink as rules land: a kind that gains one fails the test until it
// is removed from the list, and a new kind without one fails until it gets one.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ops/rules.h"

namespace tessel {
namespace {

const std::set<std::string> kNoVjpYet = {};

TEST(AutodiffCoverage, EveryReadyDifferentiableKindHasAWayToDifferentiate) {
  std::set<std::string> missing;
  int with_rule = 0, through_decomposition = 0;
  for (int k = 0; k < kNumOpKinds; ++k) {
    const auto kind = static_cast<OpKind>(k);
    const OpInfo& info = op_info(kind);
    if (info.status != OpStatus::Ready || info.differentiable == Differentiable::No) continue;
    const OpRules& r = rules_for(kind);
    if (r.vjp != nullptr)
      ++with_rule;
    else if (r.decompose != nullptr)
      ++through_decomposition;
    else
      missing.insert(op_name(kind));
  }
  std::printf("VJP: %d kinds with a rule, %d through their decomposition, %zu without yet\n",
              with_rule, through_decomposition, missing.size());
  for (const std::string& k : missing)
    EXPECT_TRUE(kNoVjpYet.count(k)) << k << " is ready and differentiable but has no VJP rule";
  for (const std::string& k : kNoVjpYet)
    EXPECT_TRUE(missing.count(k)) << k << " now has a VJP rule: remove it from kNoVjpYet";
}

}  // namespace
}  // namespace tessel
