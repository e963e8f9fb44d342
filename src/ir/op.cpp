// Builds the op table from ops.def once, parsing each row's signature. A malformed row is a bug
// in ops.def and throws Internal at first use (the walk-the-table test catches it).
#include "ir/op.h"

#include <array>
#include <cmath>
#include <sstream>

#include "tessel/error.h"

namespace tessel {
namespace {

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) end = s.size();
    std::string part = trim(s.substr(start, end - start));
    if (!part.empty()) parts.push_back(part);
    start = end + 1;
  }
  return parts;
}

struct RawEnum {
  const char* name;
  const char* doc;
  std::vector<VariantInfo> values;
};

std::vector<EnumInfo> build_enums() {
  std::vector<EnumInfo> enums;
#define TESSEL_VARIANT_ROW(value, diff, doc) \
  info.values.push_back({#value, std::string_view(#diff) == "Yes", doc});
#define TESSEL_ENUM(e, list, d)       \
  {                                   \
    EnumInfo info{#e, d, {}};         \
    list(TESSEL_VARIANT_ROW);         \
    enums.push_back(std::move(info)); \
  }
#include "ir/ops.def"
#undef TESSEL_VARIANT_ROW
  return enums;
}

const std::vector<EnumInfo>& enums() {
  static const std::vector<EnumInfo> table = build_enums();
  return table;
}

VariantEnum enum_from_name(std::string_view name) {
  for (int i = 0; i < kNumVariantEnums; ++i)
    if (enums()[i].name == name) return static_cast<VariantEnum>(i);
  return VariantEnum::None;
}

std::vector<PortSpec> parse_ports(std::string_view text, const std::string& op) {
  std::vector<PortSpec> ports;
  for (std::string p : split(text, ',')) {
    PortSpec port;
    if (p.back() == '?')
      port.optional = true, p.pop_back();
    else if (p.back() == '*')
      port.variadic = true, p.pop_back();
    TESSEL_ASSERT(!p.empty(), "ops.def: empty port name in ", op);
    port.name = p;
    ports.push_back(port);
  }
  return ports;
}

AttrSpec parse_attr(const std::string& text, const std::string& op) {
  AttrSpec spec;
  size_t colon = text.find(':');
  TESSEL_ASSERT(colon != std::string::npos, "ops.def: attribute without type in ", op, ": ", text);
  spec.name = trim(std::string_view(text).substr(0, colon));
  std::string rest = trim(std::string_view(text).substr(colon + 1));
  size_t eq = rest.find('=');
  std::string type = trim(std::string_view(rest).substr(0, eq));
  if (eq != std::string::npos) spec.default_text = trim(std::string_view(rest).substr(eq + 1));
  static const std::pair<const char*, AttrType> kTypes[] = {
      {"int", AttrType::Int},     {"float", AttrType::Float},   {"bool", AttrType::Bool},
      {"ints", AttrType::Ints},   {"floats", AttrType::Floats}, {"string", AttrType::String},
      {"dtype", AttrType::DType}, {"graph", AttrType::Graph}};
  for (auto& [n, t] : kTypes)
    if (type == n) {
      spec.type = t;
      return spec;
    }
  spec.type = AttrType::Enum;
  spec.enum_type = enum_from_name(type);
  TESSEL_ASSERT(spec.enum_type != VariantEnum::None, "ops.def: unknown attribute type '", type,
                "' in ", op);
  return spec;
}

std::vector<OpInfo> build_ops() {
  std::vector<OpInfo> ops;
  auto add = [&](OpKind kind, const char* name, Category cat, std::string_view io,
                 std::string_view attrs, Differentiable diff, OpStatus status, const char* topic,
                 const char* desc, std::string_view aliases) {
    OpInfo info;
    info.kind = kind;
    info.name = name;
    info.category = cat;
    size_t arrow = io.find("->");
    TESSEL_ASSERT(arrow != std::string_view::npos, "ops.def: no '->' in ", name);
    info.inputs = parse_ports(io.substr(0, arrow), name);
    info.outputs = parse_ports(io.substr(arrow + 2), name);
    for (const std::string& a : split(attrs, ';')) info.attrs.push_back(parse_attr(a, name));
    for (size_t i = 0; i < info.attrs.size(); ++i)
      if (info.attrs[i].type == AttrType::Enum) {
        info.variant_attr = static_cast<int>(i);
        info.variant_enum = info.attrs[i].enum_type;
        break;
      }
    info.differentiable = diff;
    info.status = status;
    info.topic = topic;
    info.description = desc;
    info.signature = trim(io) + (attrs.empty() ? "" : " | " + std::string(attrs));
    for (const std::string& tok : split(aliases, ' ')) {
      Alias alias;
      size_t eq = tok.find('=');
      alias.id = tok.substr(0, eq);
      if (eq != std::string::npos) {
        TESSEL_ASSERT(info.variant_enum != VariantEnum::None, "ops.def: alias ", tok, " of ", name,
                      " names a variant but the kind has none");
        auto v = enum_value_from_name(info.variant_enum, tok.substr(eq + 1));
        TESSEL_ASSERT(v.has_value(), "ops.def: alias ", tok, " of ", name, " names no variant");
        alias.variant = *v;
      }
      info.aliases.push_back(alias);
    }
    ops.push_back(std::move(info));
  };
  using D = Differentiable;
  using S = OpStatus;
  (void)sizeof(D);
  (void)sizeof(S);
#define TESSEL_OP(name, cat, io, attrs, diff, status, topic, desc, aliases) \
  add(OpKind::name, #name, Category::cat, io, attrs, D::diff, S::status, topic, desc, aliases);
#include "ir/ops.def"
  return ops;
}

const std::vector<OpInfo>& ops_table() {
  static const std::vector<OpInfo> table = build_ops();
  return table;
}

}  // namespace

int OpInfo::num_variants() const {
  return variant_enum == VariantEnum::None
             ? 1
             : static_cast<int>(enum_info(variant_enum).values.size());
}

std::string OpInfo::variant_name(int v) const {
  if (variant_enum == VariantEnum::None) return "";
  return enum_info(variant_enum).values.at(v).name;
}

bool OpInfo::variant_differentiable(int v) const {
  switch (differentiable) {
    case Differentiable::No:
      return false;
    case Differentiable::Yes:
      return true;
    case Differentiable::PerVariant:
      return enum_info(variant_enum).values.at(v).differentiable;
  }
  return false;
}

const AttrSpec* OpInfo::find_attr(std::string_view n) const {
  for (const AttrSpec& a : attrs)
    if (a.name == n) return &a;
  return nullptr;
}

int OpInfo::min_inputs() const {
  int n = 0;
  for (const PortSpec& p : inputs) n += p.optional ? 0 : 1;
  return n;
}

int OpInfo::max_inputs() const {
  for (const PortSpec& p : inputs)
    if (p.variadic) return -1;
  return static_cast<int>(inputs.size());
}

const OpInfo& op_info(OpKind kind) { return ops_table().at(static_cast<size_t>(kind)); }
std::span<const OpInfo> all_ops() { return ops_table(); }
const char* op_name(OpKind kind) { return op_info(kind).name.c_str(); }

std::optional<OpKind> op_from_name(std::string_view name) {
  for (const OpInfo& op : ops_table())
    if (op.name == name) return op.kind;
  return std::nullopt;
}

namespace {
struct CategoryRow {
  const char* name;
  const char* title;
};
constexpr CategoryRow kCategories[] = {
#define TESSEL_CATEGORY(e, title) {#e, title},
#include "ir/ops.def"
};
static_assert(std::size(kCategories) == kNumCategories);
}  // namespace

const char* category_name(Category c) { return kCategories[static_cast<int>(c)].name; }
const char* category_title(Category c) { return kCategories[static_cast<int>(c)].title; }

const EnumInfo& enum_info(VariantEnum e) { return enums().at(static_cast<size_t>(e)); }

std::optional<int> enum_value_from_name(VariantEnum e, std::string_view name) {
  const EnumInfo& info = enum_info(e);
  for (size_t i = 0; i < info.values.size(); ++i)
    if (info.values[i].name == name) return static_cast<int>(i);
  return std::nullopt;
}

std::optional<AliasTarget> resolve_alias(std::string_view id) {
  for (const OpInfo& op : ops_table())
    for (const Alias& a : op.aliases)
      if (a.id == id) return AliasTarget{op.kind, a.variant};
  return std::nullopt;
}

}  // namespace tessel
