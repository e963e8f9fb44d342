// ONNX import: load a ModelProto (.onnx), bind inputs, run it on a backend.
//
// A Model is parsed and checked once (every node's op must have a converter or an ONNX function
// body: an unsupported op fails here, naming every one with its domain and opset). Running it
// interprets the graph onto lazy Tensors on the chosen device, with the input shapes bound, so
// dynamic dimensions resolve per call; the lazy graph is compiled (cached by structure) and run
// there. Values that ops need on the host (a Reshape's target shape, a Loop's trip count) are
// evaluated on that same device: nothing runs on another backend behind the caller's back.
// Runs with an input signature (device, dtypes, shapes) seen before replay the graph traced and
// compiled on its first run, unless interpreting it needed input values on the host; those
// models are interpreted on every run.
//
// ONNX values that are not tensors (sequences, optionals, string tensors) are importer-level
// Values; ops that compute on them are lowered onto tensors where they can be.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessel/tensor.h"

namespace tessel::onnx {

// One importer-level value.
struct Value {
  enum class Kind { Tensor, Strings, Sequence, Optional };
  Kind kind = Kind::Tensor;
  tessel::Tensor tensor;             // Kind::Tensor
  Shape shape;                       // Kind::Strings: the shape of...
  std::vector<std::string> strings;  // ...its row-major elements
  std::vector<Value> elements;       // Kind::Sequence; Kind::Optional: none or one
  std::optional<DType> elem_dtype;   // an empty Sequence's / Optional's element type, if known

  Value() = default;
  Value(tessel::Tensor t) : tensor(std::move(t)) {}  // NOLINT: a tensor is a value
  static Value string_tensor(Shape shape, std::vector<std::string> strings);
  static Value sequence(std::vector<Value> elements, std::optional<DType> elem = std::nullopt);
  static Value optional(std::optional<Value> element, std::optional<DType> elem = std::nullopt);
  bool is_tensor() const { return kind == Kind::Tensor; }
  std::string describe() const;  // "f32[2,3]", "string[4]", "seq(f32[2], f32[3])", "optional()"
};

// A graph input or output as the model declares it: dims are sizes, or -1 with a symbolic name
// (or none).
struct ValueInfo {
  std::string name;
  std::string type;                    // "tensor(float)", "seq(tensor(int64))", "optional(...)"
  std::optional<DType> dtype;          // tensors of a numeric or bool element type
  bool has_shape = false;              // false: any rank
  std::vector<int64_t> dims;           // -1: dynamic
  std::vector<std::string> dim_names;  // symbolic names ("" if none), one per dim
};

struct RunOptions {
  std::string device = "cpu";
  // false: return the outputs as lazy tensors, not yet evaluated (values that ops needed on the
  // host while the graph was interpreted have been evaluated already).
  bool evaluate = true;
};

class Model {
 public:
  // Reads and checks a model. External data files are read relative to the model's directory.
  static Model load(const std::string& path);
  static Model parse(std::span<const uint8_t> bytes, const std::string& base_dir = "");

  const std::vector<ValueInfo>& inputs() const;  // graph inputs that are not initializers
  const std::vector<ValueInfo>& outputs() const;
  int64_t ir_version() const;
  int opset(const std::string& domain = "") const;  // 0 when not imported
  int num_nodes() const;                            // top-level graph nodes

  // Runs the model. `inputs` follow inputs() in order; shapes and dtypes are checked against
  // the declared types (a Shape / DType error names the input). Outputs follow outputs().
  std::vector<Value> run(const std::vector<Value>& inputs, const RunOptions& options = {}) const;
  std::vector<Value> run(const std::map<std::string, Value>& inputs,
                         const RunOptions& options = {}) const;

  struct Impl;

 private:
  explicit Model(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// A serialized TensorProto, SequenceProto or OptionalProto (the backend test suite's .pb files),
// as a Value on `device`. `kind` picks the message: "tensor", "sequence", "optional".
Value read_value_pb(const std::string& path, const std::string& kind = "tensor",
                    const std::string& device = "cpu");

}  // namespace tessel::onnx
