// How one ONNX node becomes Tessel ops. A converter reads the node's inputs (importer Values
// bound to lazy Tensors on the run's device) and attributes through NodeCtx, records Tessel ops
// with tessel::op(...) and returns one Value per ONNX output (it may stop early when trailing
// optional outputs are not produced).
//
// Converters are grouped by family (ops_*.cpp); each family lists its converters in a table
// returned by a function declared here, and find_converter() looks through all of them.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "frontends/onnx/tensor_proto.h"
#include "tessel/ops.h"

namespace tessel::onnx {

// Names bound to values while a graph runs. A subgraph's scope sees its enclosing scopes.
class Env {
 public:
  explicit Env(const Env* parent = nullptr) : parent_(parent) {}
  const Value* find(const std::string& name) const;
  void set(const std::string& name, Value v) { values_[name] = std::move(v); }

 private:
  const Env* parent_;
  std::unordered_map<std::string, Value> values_;
};

struct ModelState;  // the parsed model (model.cpp)

// What a run shares between graphs: the model, the device, the opsets in effect.
struct RunState {
  const ModelState* model;
  std::string device;
};

class NodeCtx {
 public:
  NodeCtx(const pb::NodeProto& node, const Env& env, const RunState& run, int opset,
          const std::unordered_map<std::string, int>& opsets)
      : node_(node), env_(env), run_(run), opset_(opset), opsets_(opsets) {}

  const pb::NodeProto& node() const { return node_; }
  const std::string& op_type() const { return node_.op_type(); }
  int opset() const { return opset_; }  // of the node's domain
  const std::string& device() const { return run_.device; }
  const RunState& run() const { return run_; }

  // Inputs. has(i): present and named (ONNX marks absent optional inputs with "").
  int num_inputs() const { return node_.input_size(); }
  bool has(int i) const { return i < node_.input_size() && !node_.input(i).empty(); }
  const Value& value(int i) const;
  Tensor in(int i) const;                  // a tensor input; Format error if absent
  HostTensor host(int i) const;            // its data, evaluated on the run's device
  std::vector<int64_t> ints(int i) const;  // an integer tensor's elements
  double scalar(int i) const;              // a one-element tensor's value
  int num_outputs() const { return node_.output_size(); }
  bool wants_output(int i) const { return i < node_.output_size() && !node_.output(i).empty(); }

  // Attributes, with a default, or required (Format error naming the node when absent).
  bool has_attr(std::string_view name) const { return attr(name) != nullptr; }
  const pb::AttributeProto* attr(std::string_view name) const;
  int64_t attr_int(std::string_view name) const;
  int64_t attr_int(std::string_view name, int64_t dflt) const;
  double attr_float(std::string_view name) const;
  double attr_float(std::string_view name, double dflt) const;
  std::string attr_string(std::string_view name, const std::string& dflt = "") const;
  std::vector<int64_t> attr_ints(std::string_view name,
                                 const std::vector<int64_t>& dflt = {}) const;
  std::vector<double> attr_floats(std::string_view name,
                                  const std::vector<double>& dflt = {}) const;
  std::vector<std::string> attr_strings(std::string_view name) const;
  const pb::GraphProto& attr_graph(std::string_view name) const;
  Value attr_tensor(std::string_view name) const;         // a TENSOR attribute as a Value
  Value attr_sparse_tensor(std::string_view name) const;  // a SPARSE_TENSOR one, made dense

  // New tensors on the run's device.
  Tensor constant(HostTensor t) const { return Tensor(std::move(t), run_.device); }
  Tensor scalar_tensor(double v, DType dtype) const;
  template <class T>
  Tensor vector_tensor(const std::vector<T>& v, DType dtype) const {
    return constant(HostTensor::from_vector(dtype, {static_cast<int64_t>(v.size())}, v));
  }

  // Runs a subgraph (If / Loop / Scan body) with `inputs` bound to its inputs, in a scope that
  // sees this node's scope; returns its outputs.
  std::vector<Value> run_subgraph(const pb::GraphProto& g, const std::vector<Value>& inputs) const;

  // "[onnx Conv node 'conv1']": the prefix of every message about this node.
  std::string where() const;
  template <class... Args>
  [[noreturn]] void fail(ErrorKind kind, Args&&... args) const {
    throw_error(kind, where(), " ", std::forward<Args>(args)...);
  }

 private:
  const pb::NodeProto& node_;
  const Env& env_;
  const RunState& run_;
  int opset_;
  const std::unordered_map<std::string, int>& opsets_;
};

using ConvertFn = std::vector<Value> (*)(NodeCtx&);

struct Converter {
  std::string_view domain;  // "" for ai.onnx
  std::string_view op_type;
  ConvertFn fn;
};

// The families (ops_*.cpp).
std::span<const Converter> elementwise_converters();
std::span<const Converter> shape_converters();
std::span<const Converter> reduction_converters();
std::span<const Converter> nn_converters();
std::span<const Converter> resample_converters();
std::span<const Converter> quant_converters();
std::span<const Converter> recurrent_converters();
std::span<const Converter> signal_converters();
std::span<const Converter> training_converters();
std::span<const Converter> control_converters();
std::span<const Converter> misc_converters();
std::span<const Converter> detection_converters();

// The converter for (domain, op_type), or nullptr. "ai.onnx" and "" are the same domain.
const Converter* find_converter(std::string_view domain, std::string_view op_type);

std::string_view canonical_domain(std::string_view domain);  // "ai.onnx" -> ""

// Helpers shared by converters (more in convert_util.h).
// One-output tessel::op. `device`: where an op without inputs runs (pass ctx.device()).
Tensor op1(const std::string& kind, const std::vector<Tensor>& inputs,
           const std::vector<NamedAttr>& attrs = {}, const std::string& device = "");
int64_t normalize_axis(const NodeCtx& ctx, int64_t axis, int64_t rank);  // Shape error if out
std::vector<Value> values(std::vector<Tensor> ts);
// The seed of a random op: its `seed` attribute (a float in ONNX), or else one derived from the
// node's first output name, so that unseeded nodes differ from each other and runs repeat.
int64_t random_seed(const NodeCtx& ctx);

}  // namespace tessel::onnx
