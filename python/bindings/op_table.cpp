// The op table as Python data (what tessel/_ops.py generates a function per kind from, and the
// stub generator writes signatures from), and the one generic entry point every generated
// function calls: op(kind, inputs, attrs).
#include "api/lazy.h"
#include "bindings.h"
#include "ir/op.h"

namespace tessel::python {
namespace {

py::list ports(const std::vector<PortSpec>& specs) {
  py::list out;
  for (const PortSpec& p : specs)
    out.append(py::dict("name"_a = p.name, "optional"_a = p.optional, "variadic"_a = p.variadic));
  return out;
}

py::dict op_entry(const OpInfo& op) {
  py::list attrs;
  for (const AttrSpec& a : op.attrs) {
    py::object def = a.default_text ? py::object(py::str(*a.default_text)) : py::none();
    py::object enum_name =
        a.type == AttrType::Enum ? py::object(py::str(enum_info(a.enum_type).name)) : py::none();
    attrs.append(py::dict("name"_a = a.name, "type"_a = attr_type_name(a.type),
                          "enum"_a = enum_name, "default"_a = def));
  }
  py::list variants;
  if (op.variant_enum != VariantEnum::None)
    for (const VariantInfo& v : enum_info(op.variant_enum).values)
      variants.append(
          py::dict("name"_a = v.name, "differentiable"_a = v.differentiable, "doc"_a = v.doc));
  py::list aliases;
  for (const Alias& a : op.aliases)
    aliases.append(
        py::dict("id"_a = a.id, "variant"_a = a.variant >= 0
                                                  ? py::object(py::str(op.variant_name(a.variant)))
                                                  : py::none()));
  const char* diff = op.differentiable == Differentiable::Yes  ? "yes"
                     : op.differentiable == Differentiable::No ? "no"
                                                               : "per-variant";
  return py::dict(
      "name"_a = op.name, "category"_a = category_name(op.category),
      "category_title"_a = category_title(op.category), "inputs"_a = ports(op.inputs),
      "outputs"_a = ports(op.outputs), "attrs"_a = attrs,
      "variant_attr"_a =
          op.variant_attr >= 0 ? py::object(py::str(op.attrs[op.variant_attr].name)) : py::none(),
      "variants"_a = variants, "differentiable"_a = diff,
      "status"_a = op.status == OpStatus::Ready ? "ready" : "pending", "topic"_a = op.topic,
      "description"_a = op.description, "aliases"_a = aliases, "signature"_a = op.signature);
}

std::vector<int64_t> ints_from_py(const py::handle& v) {
  if (py::isinstance<py::int_>(v)) return {v.cast<int64_t>()};
  std::vector<int64_t> out;
  for (const py::handle& x : v) out.push_back(x.cast<int64_t>());
  return out;
}

std::vector<double> floats_from_py(const py::handle& v) {
  if (py::isinstance<py::float_>(v) || py::isinstance<py::int_>(v)) return {v.cast<double>()};
  std::vector<double> out;
  for (const py::handle& x : v) out.push_back(x.cast<double>());
  return out;
}

// One attribute, converted to what its schema type says. Python's numbers are accepted where
// they convert exactly (an int for a float attribute; a numpy integer for an int).
NamedAttr attr_from_py(const OpInfo& info, const std::string& name, const py::handle& v) {
  const AttrSpec* spec = info.find_attr(name);
  if (!spec) {
    std::string valid;
    for (const AttrSpec& a : info.attrs) valid += (valid.empty() ? "" : ", ") + a.name;
    throw_error(ErrorKind::Value, "[", info.name, "] no attribute '", name, "' (it has ",
                valid.empty() ? "none" : valid, ")");
  }
  try {
    switch (spec->type) {
      case AttrType::Int:
        if (py::isinstance<py::float_>(v))
          throw_error(ErrorKind::DType, "[", info.name, "] attribute '", name,
                      "' is an int, got a float");
        return {name, v.cast<int64_t>()};
      case AttrType::Float:
        return {name, v.cast<double>()};
      case AttrType::Bool:
        return {name, v.cast<bool>()};
      case AttrType::Ints:
        return {name, ints_from_py(v)};
      case AttrType::Floats:
        return {name, floats_from_py(v)};
      case AttrType::String:
        return {name, v.cast<std::string>()};
      case AttrType::DType:
        return {name, dtype_from_py(v)};
      case AttrType::Enum:
        if (py::isinstance<py::int_>(v)) {
          int64_t i = v.cast<int64_t>();
          const EnumInfo& e = enum_info(spec->enum_type);
          if (i < 0 || i >= static_cast<int64_t>(e.values.size()))
            throw_error(ErrorKind::Value, "[", info.name, "] ", i, " is not a value of ", e.name);
          return {name, e.values[i].name};
        }
        return {name, v.cast<std::string>()};
      case AttrType::Graph:
        throw_error(ErrorKind::Unsupported, "[", info.name, "] attribute '", name,
                    "' is a graph; graph attributes cannot be given from Python yet");
    }
  } catch (const py::error_already_set& e) {
    throw_error(ErrorKind::DType, "[", info.name, "] attribute '", name, "' (",
                attr_type_name(spec->type), "): cannot use ", py::repr(v).cast<std::string>());
  } catch (const py::cast_error&) {
    throw_error(ErrorKind::DType, "[", info.name, "] attribute '", name, "' (",
                attr_type_name(spec->type), "): cannot use ", py::repr(v).cast<std::string>());
  }
  TESSEL_ASSERT(false);
}

}  // namespace

void bind_op_table(py::module_& m) {
  m.def(
      "op_table",
      [] {
        py::list out;
        for (const OpInfo& op : all_ops()) out.append(op_entry(op));
        return out;
      },
      "Every op kind of the table (src/ir/ops.def) as a dict: name, category, inputs, outputs, "
      "attrs (name, type, enum, default text or None when required), variants, status, "
      "description, aliases.");
  m.def(
      "enums",
      [] {
        py::dict out;
        for (int e = 0; e < kNumVariantEnums; ++e) {
          const EnumInfo& info = enum_info(static_cast<VariantEnum>(e));
          py::list values;
          for (const VariantInfo& v : info.values)
            values.append(py::dict("name"_a = v.name, "differentiable"_a = v.differentiable,
                                   "doc"_a = v.doc));
          out[py::str(info.name)] = py::dict("doc"_a = info.doc, "values"_a = values);
        }
        return out;
      },
      "Every variant enum of the op table: {name: {doc, values: [{name, differentiable, doc}]}}.");
  m.def(
      "op",
      [](const std::string& kind, const std::vector<std::optional<Tensor>>& inputs,
         const py::dict& attrs) {
        const OpInfo& info = op_info(detail::kind_or_alias(kind).kind);
        std::vector<NamedAttr> named;
        for (auto [name, value] : attrs) {
          if (value.is_none()) continue;  // None: the schema's default
          named.push_back(attr_from_py(info, py::str(name).cast<std::string>(), value));
        }
        std::vector<Tensor> ins;
        for (const auto& t : inputs) ins.push_back(t ? *t : Tensor());
        return tessel::op(kind, ins, named);
      },
      "kind"_a, "inputs"_a, "attrs"_a = py::dict(),
      "Records op `kind` (a kind name or a seed operation ID) on `inputs` (None for an absent "
      "optional input) with `attrs` (None values take the default); returns its outputs.");
}

}  // namespace tessel::python
