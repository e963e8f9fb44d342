// The parsed, checked form of a model that runs share (read-only while running).
#pragma once

#include <map>
#include <unordered_map>
#include <utility>

#include "frontends/onnx/converter.h"

namespace tessel::onnx {

// A decoded TensorProto: numeric data, or a string tensor's shape and elements.
struct Literal {
  std::optional<HostTensor> tensor;
  Shape shape;
  std::vector<std::string> strings;
  Value bind(const std::string& device) const;
};

struct ModelState {
  pb::ModelProto proto;
  std::string base_dir;
  std::unordered_map<std::string, int> opsets;  // canonical domain -> version
  // Model-local functions by (canonical domain, name).
  std::map<std::pair<std::string, std::string>, const pb::FunctionProto*> functions;
  // Every initializer (of every graph) and every Constant node's tensor attribute, decoded once
  // at load.
  std::unordered_map<const pb::TensorProto*, Literal> literals;
  std::vector<ValueInfo> inputs, outputs;

  const Literal& literal(const pb::TensorProto& t) const { return literals.at(&t); }
};

// Runs graph `g` (the model's, or a subgraph) in a scope under `parent` with `inputs` bound to
// its non-initializer inputs in order; returns its outputs in order.
std::vector<Value> run_graph(const pb::GraphProto& g, const std::vector<Value>& inputs,
                             const Env* parent, const RunState& run,
                             const std::unordered_map<std::string, int>& opsets);

// Whether an (domain, op_type) node at `opset` can be converted: a converter, a model-local
// function or an ONNX function body.
bool is_supported(const ModelState& m, const std::string& domain, const std::string& op_type,
                  int opset);

}  // namespace tessel::onnx
