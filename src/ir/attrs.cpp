#include "ir/attrs.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>

#include "ir/graph.h"

namespace tessel {

Attrs& Attrs::set(std::string name, AttrValue value) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& item, const std::string& n) { return item.first < n; });
  if (it != items_.end() && it->first == name)
    it->second = std::move(value);
  else
    items_.insert(it, {std::move(name), std::move(value)});
  return *this;
}

const AttrValue* Attrs::find(std::string_view name) const {
  for (const auto& [n, v] : items_)
    if (n == name) return &v;
  return nullptr;
}

const AttrValue& Attrs::get(std::string_view name) const {
  if (read_log_) read_log_->names.insert(std::string(name));
  const AttrValue* v = find(name);
  TESSEL_ASSERT(v != nullptr, "attribute '", std::string(name), "' not set");
  return *v;
}

namespace {
template <class T>
const T& as(const AttrValue& v, std::string_view name) {
  const T* p = std::get_if<T>(&v);
  TESSEL_ASSERT(p != nullptr, "attribute '", std::string(name), "' has another type");
  return *p;
}
}  // namespace

int64_t Attrs::i(std::string_view name) const { return as<int64_t>(get(name), name); }
double Attrs::f(std::string_view name) const {
  const AttrValue& v = get(name);
  if (auto p = std::get_if<int64_t>(&v)) return static_cast<double>(*p);
  return as<double>(v, name);
}
bool Attrs::b(std::string_view name) const { return as<bool>(get(name), name); }
const std::vector<int64_t>& Attrs::ints(std::string_view name) const {
  return as<std::vector<int64_t>>(get(name), name);
}
std::vector<double> Attrs::floats(std::string_view name) const {
  return as<std::vector<double>>(get(name), name);
}
const std::string& Attrs::s(std::string_view name) const {
  return as<std::string>(get(name), name);
}
DType Attrs::dtype(std::string_view name) const { return as<DType>(get(name), name); }
const std::shared_ptr<const Graph>& Attrs::graph(std::string_view name) const {
  return as<std::shared_ptr<const Graph>>(get(name), name);
}

namespace {

double parse_float(const std::string& text) {
  if (text == "nan") return std::nan("");
  if (text == "inf") return INFINITY;
  if (text == "-inf") return -INFINITY;
  return std::stod(text);
}

AttrValue parse_default(const AttrSpec& spec, const std::string& where) {
  const std::string& text = *spec.default_text;
  switch (spec.type) {
    case AttrType::Int:
      return int64_t{std::stoll(text)};
    case AttrType::Float:
      return parse_float(text);
    case AttrType::Bool:
      return text == "true";
    case AttrType::Ints: {
      std::vector<int64_t> v;
      std::stringstream ss(text);
      for (std::string tok; std::getline(ss, tok, ',');)
        if (!tok.empty()) v.push_back(std::stoll(tok));
      return v;
    }
    case AttrType::Floats: {
      std::vector<double> v;
      std::stringstream ss(text);
      for (std::string tok; std::getline(ss, tok, ',');)
        if (!tok.empty()) v.push_back(parse_float(tok));
      return v;
    }
    case AttrType::String:
      return text;
    case AttrType::DType: {
      auto t = dtype_from_name(text);
      TESSEL_ASSERT(t.has_value(), "ops.def: bad dtype default ", text);
      return *t;
    }
    case AttrType::Graph:
      return std::shared_ptr<const Graph>();
    case AttrType::Enum: {
      auto v = enum_value_from_name(spec.enum_type, text);
      TESSEL_ASSERT(v.has_value(), "ops.def: bad enum default ", text, " for ", spec.name);
      return int64_t{*v};
    }
  }
  throw_error(ErrorKind::Internal, where, " unreachable attribute type");
}

bool type_matches(const AttrSpec& spec, AttrValue& v) {
  switch (spec.type) {
    case AttrType::Int:
    case AttrType::Enum:
      return std::holds_alternative<int64_t>(v);
    case AttrType::Float:
      if (auto p = std::get_if<int64_t>(&v)) v = static_cast<double>(*p);
      return std::holds_alternative<double>(v);
    case AttrType::Bool:
      if (auto p = std::get_if<int64_t>(&v)) v = (*p != 0);
      return std::holds_alternative<bool>(v);
    case AttrType::Ints:
      return std::holds_alternative<std::vector<int64_t>>(v);
    case AttrType::Floats:
      if (auto p = std::get_if<std::vector<int64_t>>(&v))
        v = std::vector<double>(p->begin(), p->end());
      return std::holds_alternative<std::vector<double>>(v);
    case AttrType::String:
      return std::holds_alternative<std::string>(v);
    case AttrType::DType:
      return std::holds_alternative<DType>(v);
    case AttrType::Graph:
      return std::holds_alternative<std::shared_ptr<const Graph>>(v);
  }
  return false;
}

}  // namespace

const char* attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::Int:
      return "int";
    case AttrType::Float:
      return "float";
    case AttrType::Bool:
      return "bool";
    case AttrType::Ints:
      return "ints";
    case AttrType::Floats:
      return "floats";
    case AttrType::String:
      return "string";
    case AttrType::DType:
      return "dtype";
    case AttrType::Graph:
      return "graph";
    case AttrType::Enum:
      return "enum";
  }
  return "?";
}

void Attrs::normalize(const OpInfo& info, const std::string& where) {
  for (auto& [name, value] : items_) {
    const AttrSpec* spec = info.find_attr(name);
    if (!spec) {
      std::string known;
      for (const AttrSpec& a : info.attrs) known += (known.empty() ? "" : ", ") + a.name;
      throw_error(ErrorKind::Value, where, " unknown attribute '", name, "'; ", info.name,
                  " takes: ", known.empty() ? "none" : known);
    }
    if (!type_matches(*spec, value))
      throw_error(ErrorKind::Value, where, " attribute '", name, "' must be of type ",
                  spec->type == AttrType::Enum ? enum_info(spec->enum_type).name
                                               : attr_type_name(spec->type));
    if (spec->type == AttrType::Enum) {
      int64_t v = std::get<int64_t>(value);
      int64_t n = static_cast<int64_t>(enum_info(spec->enum_type).values.size());
      if (v < 0 || v >= n)
        throw_error(ErrorKind::Value, where, " attribute '", name, "' = ", v, " is not a valid ",
                    enum_info(spec->enum_type).name);
    }
  }
  for (const AttrSpec& spec : info.attrs) {
    if (has(spec.name)) continue;
    if (!spec.default_text)
      throw_error(
          ErrorKind::Value, where, " required attribute '", spec.name, "' (",
          spec.type == AttrType::Enum ? enum_info(spec.enum_type).name : attr_type_name(spec.type),
          ") is missing");
    set(spec.name, parse_default(spec, where));
  }
}

bool Attrs::operator==(const Attrs& other) const {
  if (items_.size() != other.items_.size()) return false;
  for (size_t k = 0; k < items_.size(); ++k) {
    if (items_[k].first != other.items_[k].first) return false;
    const AttrValue& a = items_[k].second;
    const AttrValue& b = other.items_[k].second;
    if (a.index() != b.index()) return false;
    if (auto p = std::get_if<double>(&a)) {
      double q = std::get<double>(b);
      if (!(*p == q || (std::isnan(*p) && std::isnan(q)))) return false;
    } else if (!(a == b)) {
      return false;
    }
  }
  return true;
}

size_t Attrs::hash() const {
  size_t h = 0x9e3779b97f4a7c15ull;
  auto mix = [&](size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  for (const auto& [name, value] : items_) {
    mix(std::hash<std::string>()(name));
    mix(value.index());
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, bool>)
            mix(std::hash<int64_t>()(v));
          else if constexpr (std::is_same_v<T, double>)
            mix(std::isnan(v) ? 7 : std::hash<double>()(v));
          else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
            for (auto x : v) mix(std::hash<int64_t>()(x));
          else if constexpr (std::is_same_v<T, std::vector<double>>)
            for (auto x : v) mix(std::hash<double>()(x));
          else if constexpr (std::is_same_v<T, std::string>)
            mix(std::hash<std::string>()(v));
          else if constexpr (std::is_same_v<T, DType>)
            mix(static_cast<size_t>(v));
          else
            mix(std::hash<const void*>()(v.get()));
        },
        value);
  }
  return h;
}

std::string Attrs::to_string(const OpInfo& info) const {
  std::ostringstream os;
  bool first = true;
  for (const auto& [name, value] : items_) {
    os << (first ? "" : ", ") << name << '=';
    first = false;
    const AttrSpec* spec = info.find_attr(name);
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, int64_t>) {
            if (spec && spec->type == AttrType::Enum)
              os << enum_info(spec->enum_type).values.at(v).name;
            else
              os << v;
          } else if constexpr (std::is_same_v<T, bool>)
            os << (v ? "true" : "false");
          else if constexpr (std::is_same_v<T, double>)
            os << v;
          else if constexpr (std::is_same_v<T, std::vector<int64_t>> ||
                             std::is_same_v<T, std::vector<double>>) {
            os << '[';
            for (size_t k = 0; k < v.size(); ++k) os << (k ? "," : "") << v[k];
            os << ']';
          } else if constexpr (std::is_same_v<T, std::string>)
            os << '"' << v << '"';
          else if constexpr (std::is_same_v<T, DType>)
            os << dtype_name(v);
          else
            os << "<graph>";
        },
        value);
  }
  return os.str();
}

int variant_of(const OpInfo& info, const Attrs& attrs) {
  if (info.variant_attr < 0) return 0;
  return static_cast<int>(attrs.i(info.attrs[info.variant_attr].name));
}

}  // namespace tessel
