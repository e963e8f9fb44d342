// The graph IR: nodes in topological order (a node's inputs are always earlier nodes), each
// with its kind, normalized attributes, input values and inferred output types. Adding a node
// runs the kind's shape/dtype rule, so a graph is always well-typed.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/op.h"
#include "tessel/host_tensor.h"

namespace tessel {

struct TensorType {
  DType dtype = DType::F32;
  Shape shape;
  bool operator==(const TensorType&) const = default;
  std::string str() const;  // "f32[2,3]"
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const { return shape_numel(shape); }
};

// One output of one node. node == -1 marks an absent optional input.
struct Value {
  int node = -1;
  int index = 0;
  bool valid() const { return node >= 0; }
  bool operator==(const Value&) const = default;
};

struct Node {
  int id = -1;
  OpKind kind;
  Attrs attrs;
  std::vector<Value> inputs;
  std::vector<TensorType> outputs;
  std::shared_ptr<const HostTensor> literal;  // Constant's value
  std::string name;                           // optional, for messages

  const OpInfo& info() const { return op_info(kind); }
  int variant() const { return variant_of(info(), attrs); }
  std::string where() const;  // "[Kind] node %3 (name)"
};

class Graph {
 public:
  // Adds a node after checking arity, normalizing attributes and inferring output types.
  // Throws tessel::Error (Shape / DType / Value) naming the op, node and what was expected.
  std::vector<Value> add(OpKind kind, Attrs attrs, std::vector<Value> inputs,
                         std::string name = "");
  Value add1(OpKind kind, Attrs attrs, std::vector<Value> inputs, std::string name = "");
  Value input(DType dtype, const Shape& shape, std::string name = "");
  Value param(DType dtype, const Shape& shape, std::string name = "");
  Value constant(HostTensor value, std::string name = "");

  const TensorType& type(Value v) const { return nodes_.at(v.node).outputs.at(v.index); }
  const Node& node(int id) const { return nodes_.at(id); }
  const std::vector<Node>& nodes() const { return nodes_; }
  int size() const { return static_cast<int>(nodes_.size()); }

  std::vector<Value> outputs;            // the graph's results
  std::vector<int> input_nodes() const;  // Input nodes, in creation order

  // Structural hash: kinds, attrs, wiring, types (and constant identity); equal graphs hash equal.
  size_t structure_hash() const;
  std::string to_string() const;  // one node per line

 private:
  std::vector<Node> nodes_;
};

// What a shape/dtype rule sees.
class InferCtx {
 public:
  InferCtx(const Node& node, std::vector<std::optional<TensorType>> inputs)
      : node_(node), inputs_(std::move(inputs)) {}
  const Node& node() const { return node_; }
  const Attrs& attrs() const { return node_.attrs; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  bool has(int i) const { return i < num_inputs() && inputs_[i].has_value(); }
  const TensorType& in(int i) const;
  std::string describe_inputs() const;  // "x: f32[2,3], w: f32[3,4]"

  // throw fail(ErrorKind::Shape, "inner dims differ: ", a, " vs ", b);
  template <class... Args>
  [[noreturn]] void fail(ErrorKind kind, Args&&... args) const {
    throw_error(kind, node_.where(), ": ", std::forward<Args>(args)...,
                " (inputs: ", describe_inputs(), ")");
  }

 private:
  const Node& node_;
  std::vector<std::optional<TensorType>> inputs_;
};

}  // namespace tessel
