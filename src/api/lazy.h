// The recorded form of a lazy op, and the bridge from the lazy DAG to a Graph.
#pragma once

#include <optional>
#include <unordered_map>

#include "ir/builder.h"
#include "runtime/backend.h"
#include "tessel/tensor.h"

namespace tessel::detail {

struct LazyOp {
  OpKind kind = OpKind::Constant;
  Attrs attrs;                    // normalized against the schema
  std::vector<Tensor> inputs;     // cleared once every output is evaluated
  std::vector<TensorType> types;  // one per output
  std::string device;
  std::vector<std::optional<HostTensor>> values;  // evaluated outputs
  int placeholder = -1;                           // compile(): index of the traced argument

  bool evaluated() const {
    for (const auto& v : values)
      if (!v) return false;
    return true;
  }
};

// The kind (and variant, or -1) a kind name or seed-000 operation ID names; a Value error for
// neither.
AliasTarget kind_or_alias(const std::string& name);

// Records op `kind` on `inputs`: checks it through the kind's shape rule (via a scratch Graph)
// and returns one Tensor per output. `device`: where an op without inputs runs (default: the
// default device); given with inputs, they must be on it.
std::vector<Tensor> record(OpKind kind, Attrs attrs, const std::vector<Tensor>& inputs,
                           const std::string& device = "");

// Lowers the unevaluated DAG under `targets` to a Graph. Evaluated tensors become Inputs
// (collected into `args`) or, when `captured_as_constants`, Constants; `placeholders` become
// Inputs in placeholder order. Other placeholders (of an enclosing trace) become further Inputs
// collected into `closed_over` when it is given, and are an error otherwise.
struct Lowered {
  Graph graph;
  std::vector<HostTensor> args;
  std::vector<std::pair<LazyOp*, int>> outputs;  // which op output each graph output is
};
Lowered lower(const std::vector<Tensor>& targets, bool captured_as_constants,
              const std::vector<Tensor>& placeholders = {},
              std::vector<Tensor>* closed_over = nullptr);

// The lazy builder: the shared typed constructors of ir/builder.h over Tensors.
class LazyBuilder : public OpBuilders<LazyBuilder, Tensor> {
 public:
  std::vector<Tensor> emit(OpKind kind, Attrs attrs, std::vector<Tensor> inputs) {
    return record(kind, std::move(attrs), inputs);
  }
};

// Compiled executables, keyed by device, the graph's full text (structure, attributes, shapes,
// dtypes) and a digest of its constants' bytes.
std::shared_ptr<Executable> cached_executable(const Graph& g, const std::string& device);

}  // namespace tessel::detail
