#include "ir/graph.h"

#include <functional>
#include <sstream>

#include "ops/rules.h"

namespace tessel {

std::string TensorType::str() const { return std::string(dtype_name(dtype)) + shape_str(shape); }

std::string Node::where() const {
  std::ostringstream os;
  os << '[' << info().name << "] node %" << id;
  if (!name.empty()) os << " (" << name << ')';
  return os.str();
}

const TensorType& InferCtx::in(int i) const {
  if (!has(i)) fail(ErrorKind::Value, "input ", i, " is required");
  return *inputs_[i];
}

std::string InferCtx::describe_inputs() const {
  const OpInfo& info = node_.info();
  std::ostringstream os;
  for (int i = 0; i < num_inputs(); ++i) {
    if (i) os << ", ";
    size_t spec = std::min<size_t>(i, info.inputs.empty() ? 0 : info.inputs.size() - 1);
    std::string name = info.inputs.empty() ? "?" : info.inputs[spec].name;
    if (!info.inputs.empty() && info.inputs[spec].variadic) name += std::to_string(i - spec);
    os << name << ": " << (inputs_[i] ? inputs_[i]->str() : "absent");
  }
  if (num_inputs() == 0) os << "none";
  return os.str();
}

std::vector<Value> Graph::add(OpKind kind, Attrs attrs, std::vector<Value> inputs,
                              std::string name) {
  const OpInfo& info = op_info(kind);
  Node node;
  node.id = size();
  node.kind = kind;
  node.inputs = std::move(inputs);
  node.name = std::move(name);
  const std::string where = node.where();
  int n = static_cast<int>(node.inputs.size());
  if (n < info.min_inputs() || (info.max_inputs() >= 0 && n > info.max_inputs()))
    throw_error(
        ErrorKind::Value, where, ": got ", n, " inputs, expected ",
        info.max_inputs() < 0 ? "at least " + std::to_string(info.min_inputs())
        : info.min_inputs() == info.max_inputs()
            ? std::to_string(info.min_inputs())
            : std::to_string(info.min_inputs()) + " to " + std::to_string(info.max_inputs()),
        " (", info.signature, ")");
  std::vector<std::optional<TensorType>> in_types;
  for (int i = 0; i < n; ++i) {
    Value v = node.inputs[i];
    bool optional = i < static_cast<int>(info.inputs.size()) && info.inputs[i].optional;
    if (!v.valid()) {
      if (!optional && !(info.max_inputs() < 0))
        throw_error(ErrorKind::Value, where, ": input ", i, " (", info.inputs[i].name,
                    ") is required");
      in_types.push_back(std::nullopt);
      continue;
    }
    TESSEL_ASSERT(v.node < size() && v.index < static_cast<int>(nodes_[v.node].outputs.size()),
                  where, " refers to a missing value");
    in_types.push_back(type(v));
  }
  attrs.normalize(info, where);
  node.attrs = std::move(attrs);
  InferFn infer = rules_for(kind).infer;
  if (!infer) throw_error(ErrorKind::Unsupported, where, ": no shape rule for ", info.name);
  InferCtx ctx(node, std::move(in_types));
  node.outputs = infer(ctx);
  bool variadic_out = !info.outputs.empty() && info.outputs.back().variadic;
  TESSEL_ASSERT(variadic_out || node.outputs.size() == info.outputs.size(), where,
                " rule returned ", node.outputs.size(), " outputs");
  for (const TensorType& t : node.outputs)
    for (int64_t d : t.shape)
      if (d < 0) ctx.fail(ErrorKind::Shape, "computed a negative dimension in ", t.str());
  nodes_.push_back(std::move(node));
  std::vector<Value> outs;
  for (int i = 0; i < static_cast<int>(nodes_.back().outputs.size()); ++i)
    outs.push_back({nodes_.back().id, i});
  return outs;
}

Value Graph::add1(OpKind kind, Attrs attrs, std::vector<Value> inputs, std::string name) {
  std::vector<Value> outs = add(kind, std::move(attrs), std::move(inputs), std::move(name));
  TESSEL_ASSERT(outs.size() == 1, op_name(kind), " has ", outs.size(), " outputs, not 1");
  return outs[0];
}

Value Graph::input(DType dtype, const Shape& shape, std::string name) {
  return add1(OpKind::Input, Attrs().set("dtype", dtype).set("shape", shape).set("name", name), {},
              name);
}

Value Graph::param(DType dtype, const Shape& shape, std::string name) {
  return add1(OpKind::Param, Attrs().set("dtype", dtype).set("shape", shape).set("name", name), {},
              name);
}

Value Graph::constant(HostTensor value, std::string name) {
  Node node;
  node.id = size();
  node.kind = OpKind::Constant;
  node.name = std::move(name);
  node.outputs = {TensorType{value.dtype, value.shape}};
  node.literal = std::make_shared<const HostTensor>(std::move(value));
  nodes_.push_back(std::move(node));
  return {nodes_.back().id, 0};
}

std::vector<int> Graph::input_nodes() const {
  std::vector<int> ids;
  for (const Node& n : nodes_)
    if (n.kind == OpKind::Input) ids.push_back(n.id);
  return ids;
}

size_t Graph::structure_hash() const {
  size_t h = 1469598103934665603ull;
  auto mix = [&](size_t v) { h = (h ^ v) * 1099511628211ull; };
  for (const Node& n : nodes_) {
    mix(static_cast<size_t>(n.kind));
    mix(n.attrs.hash());
    for (Value v : n.inputs) mix(static_cast<size_t>(v.node) * 31 + v.index);
    for (const TensorType& t : n.outputs) {
      mix(static_cast<size_t>(t.dtype));
      for (int64_t d : t.shape) mix(static_cast<size_t>(d));
    }
    if (n.literal) mix(std::hash<const void*>()(n.literal.get()));
  }
  for (Value v : outputs) mix(static_cast<size_t>(v.node) * 31 + v.index);
  return h;
}

std::string Graph::to_string() const {
  std::ostringstream os;
  for (const Node& n : nodes_) {
    os << '%' << n.id << " = " << n.info().name << '(';
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (i) os << ", ";
      if (!n.inputs[i].valid())
        os << "_";
      else
        os << '%' << n.inputs[i].node
           << (n.inputs[i].index ? "." + std::to_string(n.inputs[i].index) : "");
    }
    os << ')';
    std::string attrs = n.attrs.to_string(n.info());
    if (!attrs.empty()) os << " {" << attrs << '}';
    os << " :";
    for (const TensorType& t : n.outputs) os << ' ' << t.str();
    os << '\n';
  }
  os << "return";
  for (Value v : outputs) os << " %" << v.node << (v.index ? "." + std::to_string(v.index) : "");
  os << '\n';
  return os.str();
}

}  // namespace tessel
