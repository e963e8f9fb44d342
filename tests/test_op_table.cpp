// Walks the op table: every kind parses, has a shape rule; every ready kind the reference claims
// runs natively or decomposes; the seed catalogues are all present. Pending kinds are counted
// and printed as pending, never as passed.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "ops/rules.h"
#include "runtime/backend.h"
#include "runtime/coverage.h"

namespace tessel {
namespace {

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << path;
  std::vector<std::string> lines;
  for (std::string l; std::getline(f, l);)
    if (!l.empty()) lines.push_back(l);
  return lines;
}

TEST(OpTable, EveryKindHasAShapeRule) {
  std::vector<std::string> missing;
  for (const OpInfo& op : all_ops())
    if (!rules_for(op.kind).infer) missing.push_back(op.name);
  EXPECT_TRUE(missing.empty()) << "kinds without a shape rule: "
                               << ::testing::PrintToString(missing);
}

TEST(OpTable, ContainsEverySeed002Kind) {
  auto kinds = read_lines(std::string(TESSEL_SOURCE_DIR) + "/tests/data/seed002_kinds.txt");
  EXPECT_EQ(kinds.size(), 142u);
  for (const std::string& k : kinds) EXPECT_TRUE(op_from_name(k).has_value()) << k;
}

TEST(OpTable, EverySeed000IdIsAnAlias) {
  auto ids = read_lines(std::string(TESSEL_SOURCE_DIR) + "/tests/data/seed000_ids.txt");
  EXPECT_EQ(ids.size(), 119u);
  for (const std::string& id : ids) EXPECT_TRUE(resolve_alias(id).has_value()) << id;
}

TEST(OpTable, OpsJsonHasTheRequiredFields) {
  auto json = nlohmann::json::parse(ops_json());
  ASSERT_TRUE(json.is_array());
  ASSERT_EQ(json.size(), all_ops().size());
  std::set<std::string> aliases;
  for (const auto& o : json) {
    EXPECT_TRUE(o["name"].is_string());
    EXPECT_TRUE(o["category"].is_string());
    EXPECT_TRUE(o["differentiable"].is_boolean() || o["differentiable"] == "per-variant");
    EXPECT_TRUE(o["status"] == "ready" || o["status"] == "pending");
    for (const auto& a : o["aliases"]) aliases.insert(a.get<std::string>());
  }
  for (const std::string& id :
       read_lines(std::string(TESSEL_SOURCE_DIR) + "/tests/data/seed000_ids.txt"))
    EXPECT_TRUE(aliases.count(id)) << id;
}

TEST(OpTable, ReadyKindsRunOnTheReference) {
  const Backend& ref = backend("reference");
  int pending = 0;
  std::vector<std::string> problems;
  for (const OpInfo& op : all_ops()) {
    if (op.status == OpStatus::Pending) {
      ++pending;
      EXPECT_FALSE(ref.claims().claims_kind(op.kind))
          << op.name << " is pending but the reference claims it: mark it ready";
      continue;
    }
    bool native = false, decomposed = false;
    for (const Claim& c : ref.claims().all())
      if (c.kind == op.kind) (c.how == How::Decomposed ? decomposed : native) = true;
    if (!native && !decomposed)
      problems.push_back(op.name + ": ready but not claimed by reference");
    if (decomposed && !rules_for(op.kind).decompose)
      problems.push_back(op.name + ": claimed decomposed but has no decomposition");
  }
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
  std::cout << "[ pending  ] " << pending << " of " << all_ops().size()
            << " kinds are pending (reported as pending, not passed)\n";
}

TEST(OpTable, CompositesHaveDecompositions) {
  std::vector<std::string> missing;
  for (const OpInfo& op : all_ops())
    if (op.category == Category::FusedComposites && !rules_for(op.kind).decompose)
      missing.push_back(op.name);
  EXPECT_TRUE(missing.empty()) << ::testing::PrintToString(missing);
}

}  // namespace
}  // namespace tessel
