// Attribute values of a node, checked against the op's schema at creation: unknown names,
// wrong types and missing required attributes are errors; absent optional ones get their
// ops.def default, so readers never need to know the defaults.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ir/op.h"
#include "tessel/dtype.h"
#include "tessel/error.h"

namespace tessel {

class Graph;

// The names of the attributes read through an Attrs (get and the typed getters; not has, which
// schema checks use), shared by its copies. For the attribute-use check of the VJP rules
// (tests/autodiff/test_vjp_attr_use.cpp): it attaches a log to a node's attributes, runs the rule,
// and sees what the rule — or a node it forwarded the attributes to — read.
struct AttrReadLog {
  std::set<std::string> names;
};

using AttrValue = std::variant<int64_t, double, bool, std::vector<int64_t>, std::vector<double>,
                               std::string, DType, std::shared_ptr<const Graph>>;

class Attrs {
 public:
  Attrs() = default;

  Attrs& set(std::string name, AttrValue value);
  template <class E>
  requires std::is_enum_v<E> Attrs& set(std::string name, E value) {
    return set(std::move(name), AttrValue(static_cast<int64_t>(value)));
  }
  // Exact overloads, so that a double never binds to an int (and so on).
  Attrs& set(std::string name, int64_t v) { return set(std::move(name), AttrValue(v)); }
  Attrs& set(std::string name, int v) { return set(std::move(name), AttrValue(int64_t{v})); }
  Attrs& set(std::string name, double v) { return set(std::move(name), AttrValue(v)); }
  Attrs& set(std::string name, bool v) { return set(std::move(name), AttrValue(v)); }
  Attrs& set(std::string name, const char* v) {
    return set(std::move(name), AttrValue(std::string(v)));
  }
  Attrs& set(std::string name, std::string v) {
    return set(std::move(name), AttrValue(std::move(v)));
  }
  Attrs& set(std::string name, std::vector<int64_t> v) {
    return set(std::move(name), AttrValue(std::move(v)));
  }
  Attrs& set(std::string name, std::vector<double> v) {
    return set(std::move(name), AttrValue(std::move(v)));
  }
  Attrs& set(std::string name, DType v) { return set(std::move(name), AttrValue(v)); }

  bool has(std::string_view name) const { return find(name) != nullptr; }
  const AttrValue& get(std::string_view name) const;

  int64_t i(std::string_view name) const;
  double f(std::string_view name) const;  // ints are widened
  bool b(std::string_view name) const;
  const std::vector<int64_t>& ints(std::string_view name) const;
  std::vector<double> floats(std::string_view name) const;
  const std::string& s(std::string_view name) const;
  DType dtype(std::string_view name) const;
  const std::shared_ptr<const Graph>& graph(std::string_view name) const;
  template <class E>
  E e(std::string_view name) const {
    return static_cast<E>(i(name));
  }

  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }

  // Records every later read, through this Attrs and its copies, into `log` (null: stop).
  void log_reads(std::shared_ptr<AttrReadLog> log) { read_log_ = std::move(log); }
  const std::shared_ptr<AttrReadLog>& read_log() const { return read_log_; }

  // Checks names/types against the schema and fills defaults. `where` prefixes errors.
  void normalize(const OpInfo& info, const std::string& where);

  bool operator==(const Attrs& other) const;
  size_t hash() const;
  std::string to_string(const OpInfo& info) const;  // "axis=-1, eps=1e-05"

 private:
  const AttrValue* find(std::string_view name) const;
  std::vector<std::pair<std::string, AttrValue>> items_;  // sorted by name
  std::shared_ptr<AttrReadLog> read_log_;                 // not part of the value (==, hash)
};

// The value of a kind's variant attribute for a node (0 when the kind has none).
int variant_of(const OpInfo& info, const Attrs& attrs);

}  // namespace tessel
