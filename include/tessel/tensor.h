// Tensor: a lazy handle to a value (MLX-style). Creating a tensor from an op records the op and
// checks shapes and dtypes at once (a tessel::Error names the op and what was wrong); nothing
// runs until eval() (or data()), which compiles the pending subgraph for the tensors' device —
// cached by structure, shapes and dtypes — and runs it there. Tensors are cheap to copy (shared
// ownership of the recorded op); an evaluated tensor owns its host data.
//
// Devices are backends by name ("reference", later "cpu", "cuda"). All inputs of an op must be
// on one device; moving data is explicit (to()), never implicit.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "tessel/dtype.h"
#include "tessel/error.h"
#include "tessel/host_tensor.h"

namespace tessel {

namespace detail {
struct LazyOp;
}

class Tensor {
 public:
  Tensor() = default;
  // Wraps host data (evaluated). The data is shared, not copied.
  explicit Tensor(HostTensor value, std::string device = default_device());
  static Tensor scalar(double value, DType dtype = DType::F32,
                       std::string device = default_device());
  template <class T>
  static Tensor from_vector(const std::vector<T>& values, Shape shape, DType dtype = DType::F32,
                            std::string device = default_device()) {
    return Tensor(HostTensor::from_vector(dtype, shape, values), std::move(device));
  }

  bool defined() const { return op_ != nullptr; }
  DType dtype() const;
  const Shape& shape() const;
  int rank() const { return static_cast<int>(shape().size()); }
  int64_t numel() const { return shape_numel(shape()); }
  const std::string& device() const;

  bool is_evaluated() const;
  void eval() const;
  HostTensor data() const;  // evaluates if needed
  std::vector<double> to_f64() const;
  double item() const;                         // one-element tensors
  Tensor to(const std::string& device) const;  // explicit transfer (evaluates)
  Tensor astype(DType dtype) const;

  static const std::string& default_device();
  static void set_default_device(std::string name);

  // Internal: the recorded op and which of its outputs this tensor is.
  Tensor(std::shared_ptr<detail::LazyOp> op, int index) : op_(std::move(op)), index_(index) {}
  const std::shared_ptr<detail::LazyOp>& op() const { return op_; }
  int index() const { return index_; }

 private:
  std::shared_ptr<detail::LazyOp> op_;
  int index_ = 0;
};

// Evaluates several tensors in one compiled graph.
void eval(const std::vector<Tensor>& tensors);

// An attribute value for op(): enum attributes take the variant's name ("Causal").
using AttrArg = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>,
                             std::vector<double>, DType>;
struct NamedAttr {
  std::string name;
  AttrArg value;
  NamedAttr(std::string n, int v) : name(std::move(n)), value(int64_t{v}) {}
  NamedAttr(std::string n, int64_t v) : name(std::move(n)), value(v) {}
  NamedAttr(std::string n, double v) : name(std::move(n)), value(v) {}
  NamedAttr(std::string n, bool v) : name(std::move(n)), value(v) {}
  NamedAttr(std::string n, const char* v) : name(std::move(n)), value(std::string(v)) {}
  NamedAttr(std::string n, std::string v) : name(std::move(n)), value(std::move(v)) {}
  NamedAttr(std::string n, std::vector<int64_t> v) : name(std::move(n)), value(std::move(v)) {}
  NamedAttr(std::string n, std::vector<double> v) : name(std::move(n)), value(std::move(v)) {}
  NamedAttr(std::string n, DType v) : name(std::move(n)), value(v) {}
};

// Any op of the table by kind name (e.g. "Attention") or seed-000 operation ID (e.g.
// "attention.sliding_window", which also sets the variant). Absent optional inputs: Tensor().
// `device`: where an op without inputs (Range, RngUniform, ...) runs — the default device when
// empty; when given for an op with inputs, they must be on it (a Device error otherwise).
std::vector<Tensor> op(const std::string& kind_or_alias, const std::vector<Tensor>& inputs,
                       const std::vector<NamedAttr>& attrs = {}, const std::string& device = "");

// compile(fn): traces fn once per distinct (shapes, dtypes, device) signature of its arguments
// and reuses the compiled graph afterwards. Tensors fn captures become constants of the graph.
// Called inside another Function's trace, a Function is applied inline instead: its (transformed)
// graph is recorded as lazy ops on the traced arguments, so transforms compose — grad of grad,
// a compiled helper inside a differentiated function.
using TensorFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
class Graph;
struct VjpResult;
class Function {
 public:
  explicit Function(TensorFn fn);
  // A graph rewrite applied to each traced graph before it is compiled (e.g. the gradient
  // transform of grad / value_and_grad).
  using Transform = std::function<Graph(const Graph&)>;
  Function(TensorFn fn, Transform transform);
  std::vector<Tensor> operator()(const std::vector<Tensor>& args) const;
  int cache_size() const;   // distinct signatures compiled so far
  int trace_count() const;  // how many times fn was traced (not counting inline applications)

 private:
  std::vector<Tensor> apply_inline(const std::vector<Tensor>& args,
                                   const std::string& device) const;
  friend VjpResult vjp(const TensorFn&, const std::vector<Tensor>&, const std::vector<Tensor>&);
  struct State;
  std::shared_ptr<State> state_;
};
Function compile(TensorFn fn);

// Reverse-mode gradients of a function whose output 0 holds one floating-point element (a
// loss): value_and_grad returns fn's outputs followed by d(output 0)/d(args[i]) for each i in
// `argnums`; grad returns only the gradients. Compiled and cached like compile(fn); the
// backward pass is built from per-op VJP rules (src/passes/autodiff.cpp).
Function value_and_grad(TensorFn fn, std::vector<int> argnums = {0});
Function grad(TensorFn fn, std::vector<int> argnums = {0});

// The outputs of fn at `primals` and, for each primal i, the vector-Jacobian product
// Σ_j cotangents[j]ᵀ·∂output_j/∂primals[i] (cotangents: one per output, of its shape and dtype).
// One graph: fn is traced at each call, and the compiled executable is reused for a graph of
// the same structure.
struct VjpResult {
  std::vector<Tensor> outputs;
  std::vector<Tensor> vjps;
};
VjpResult vjp(const TensorFn& fn, const std::vector<Tensor>& primals,
              const std::vector<Tensor>& cotangents);

}  // namespace tessel
