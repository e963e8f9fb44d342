// Op kinds, categories and variant enums, all generated from ops.def, plus the parsed schema of
// every kind (inputs, outputs, attributes with defaults, variant enum, aliases).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

enum class OpKind : uint16_t {
#define TESSEL_OP(name, ...) name,
#include "ir/ops.def"
};

enum class Category : uint8_t {
#define TESSEL_CATEGORY(e, title) e,
#include "ir/ops.def"
};

#define TESSEL_ENUMERATOR(value, diff, doc) value,
#define TESSEL_ENUM(e, list, doc) enum class e : int32_t { list(TESSEL_ENUMERATOR) };
#include "ir/ops.def"
#undef TESSEL_ENUMERATOR

#define TESSEL_COUNT_ONE(...) +1
inline constexpr int kNumOpKinds = 0
#define TESSEL_OP(...) TESSEL_COUNT_ONE()
#include "ir/ops.def"
    ;
inline constexpr int kNumCategories = 0
#define TESSEL_CATEGORY(...) TESSEL_COUNT_ONE()
#include "ir/ops.def"
    ;
// Which variant enum a kind uses, as an index into the table of enums (or none).
enum class VariantEnum : uint8_t {
#define TESSEL_ENUM(e, list, doc) e,
#include "ir/ops.def"
  None
};
inline constexpr int kNumVariantEnums = static_cast<int>(VariantEnum::None);
#undef TESSEL_COUNT_ONE

enum class Differentiable : uint8_t { No, Yes, PerVariant };
enum class OpStatus : uint8_t { Ready, Pending };

enum class AttrType : uint8_t { Int, Float, Bool, Ints, Floats, String, DType, Graph, Enum };
const char* attr_type_name(AttrType t);  // as ops.def spells it: "int", "ints", ...; "enum"

struct AttrSpec {
  std::string name;
  AttrType type;
  VariantEnum enum_type = VariantEnum::None;  // for AttrType::Enum
  std::optional<std::string> default_text;    // nullopt = required
};

struct PortSpec {
  std::string name;
  bool optional = false;
  bool variadic = false;
};

struct Alias {
  std::string id;    // seed-000 operation ID, exact spelling
  int variant = -1;  // value of the kind's variant enum, or -1
};

struct VariantInfo {
  std::string name;
  bool differentiable;
  std::string doc;
};

struct EnumInfo {
  std::string name;
  std::string doc;
  std::vector<VariantInfo> values;
};

struct OpInfo {
  OpKind kind;
  std::string name;
  Category category;
  std::vector<PortSpec> inputs;
  std::vector<PortSpec> outputs;
  std::vector<AttrSpec> attrs;
  int variant_attr = -1;  // index into attrs of the variant enum attribute, or -1
  VariantEnum variant_enum = VariantEnum::None;
  Differentiable differentiable;
  OpStatus status;
  std::string topic;  // for pending kinds: the issue they wait for
  std::string description;
  std::vector<Alias> aliases;
  std::string signature;  // "inputs -> outputs | attrs", as written in ops.def

  int num_variants() const;               // 1 when the kind has no variant enum
  std::string variant_name(int v) const;  // "" when the kind has no variant enum
  bool variant_differentiable(int v) const;
  const AttrSpec* find_attr(std::string_view name) const;
  int min_inputs() const;
  int max_inputs() const;  // -1 = unbounded
};

const OpInfo& op_info(OpKind kind);
std::span<const OpInfo> all_ops();
const char* op_name(OpKind kind);
std::optional<OpKind> op_from_name(std::string_view name);

const char* category_name(Category c);   // enum spelling
const char* category_title(Category c);  // section title

const EnumInfo& enum_info(VariantEnum e);
std::optional<int> enum_value_from_name(VariantEnum e, std::string_view name);

// Resolves a seed-000 operation ID to its kind and variant (-1 if none).
struct AliasTarget {
  OpKind kind;
  int variant;
};
std::optional<AliasTarget> resolve_alias(std::string_view id);

}  // namespace tessel
