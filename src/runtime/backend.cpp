#include "runtime/backend.h"

#include <algorithm>
#include <mutex>

namespace tessel {

const char* how_name(How how) {
  switch (how) {
    case How::Native:
      return "native";
    case How::Decomposed:
      return "decomposed";
    case How::Host:
      return "host";
  }
  return "?";
}

std::optional<How> ClaimTable::find(OpKind kind, int variant, DType dtype) const {
  for (const Claim& c : claims_) {
    if (c.kind != kind || !c.dtypes.contains(dtype)) continue;
    if (!c.variants.empty() &&
        std::find(c.variants.begin(), c.variants.end(), variant) == c.variants.end())
      continue;
    return c.how;
  }
  return std::nullopt;
}

DTypeSet ClaimTable::dtypes(OpKind kind, int variant) const {
  DTypeSet s;
  for (const Claim& c : claims_)
    if (c.kind == kind && (c.variants.empty() || std::find(c.variants.begin(), c.variants.end(),
                                                           variant) != c.variants.end()))
      s = s | c.dtypes;
  return s;
}

bool ClaimTable::claims_kind(OpKind kind) const {
  return std::any_of(claims_.begin(), claims_.end(),
                     [&](const Claim& c) { return c.kind == kind; });
}

DType claim_dtype(const Graph& g, const Node& node) {
  // The data dtype: a leading bool condition (Where) does not name the cell.
  for (Value v : node.inputs)
    if (v.valid() && g.type(v).dtype != DType::Bool) return g.type(v).dtype;
  for (Value v : node.inputs)
    if (v.valid()) return g.type(v).dtype;
  TESSEL_ASSERT(!node.outputs.empty(), node.where(), " has no inputs and no outputs");
  return node.outputs[0].dtype;
}

namespace {
std::vector<std::unique_ptr<Backend>>& registry() {
  static std::vector<std::unique_ptr<Backend>> r;
  return r;
}
std::once_flag builtins_once;
void register_builtin_backends();
}  // namespace

std::unique_ptr<Backend> make_reference_backend();  // src/backends/reference/backend.cpp
// src/backends/cpu/backend.cpp; cpu claims at least what the reference does.
std::unique_ptr<Backend> make_cpu_backend(const Backend& reference);

void register_backend(std::unique_ptr<Backend> backend) {
  registry().push_back(std::move(backend));
}

namespace {
void ensure_builtins() {
  std::call_once(builtins_once, [] { register_builtin_backends(); });
}
}  // namespace

std::vector<const Backend*> backends() {
  ensure_builtins();
  std::vector<const Backend*> out;
  for (auto& b : registry()) out.push_back(b.get());
  return out;
}

const Backend& backend(std::string_view name) {
  ensure_builtins();
  std::string known;
  for (auto& b : registry()) {
    if (b->name() == name) return *b;
    known += (known.empty() ? "" : ", ") + b->name();
  }
  throw_error(ErrorKind::Device, "[backend] no backend named '", std::string(name),
              "'; registered: ", known);
}

namespace {
// The built-in backends, in matrix column order. Deleting a backend's directory means deleting
// its line here.
void register_builtin_backends() {
  register_backend(make_reference_backend());
  register_backend(make_cpu_backend(*registry().front()));
}
}  // namespace

}  // namespace tessel
