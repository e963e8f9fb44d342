#include <map>
#include <mutex>

#include "api/lazy.h"
#include "passes/passes.h"

namespace tessel {

struct Function::State {
  TensorFn fn;
  Transform transform;
  std::mutex mu;
  // Signature (device, dtypes, shapes of the arguments) -> traced graph and its executable
  // (kept here so a call skips the global cache's lookup by graph text).
  struct Trace {
    std::shared_ptr<Graph> graph;
    std::shared_ptr<Executable> exe;
  };
  std::map<std::string, Trace> traces;
  int trace_count = 0;
  // Whether, applied inline, fn may close over tensors of the enclosing trace (they become
  // trailing inputs of the graph; vjp's trailing inputs are its cotangents, so not for vjp).
  bool closures_ok = true;
};

Function::Function(TensorFn fn) : state_(std::make_shared<State>()) { state_->fn = std::move(fn); }

Function::Function(TensorFn fn, Transform transform) : Function(std::move(fn)) {
  state_->transform = std::move(transform);
}

namespace {
std::string signature(const std::vector<Tensor>& args) {
  std::string s;
  for (const Tensor& a : args)
    s += a.device() + ":" + dtype_name(a.dtype()) + shape_str(a.shape()) + ";";
  return s;
}

// How many Function traces are running on this thread: a Function called inside another's
// trace (grad of grad, a compiled helper called from a traced function) is applied inline.
thread_local int tracing_depth = 0;

// Placeholders of the arguments' types, and fn run on them.
std::vector<Tensor> trace(const TensorFn& fn, const std::vector<Tensor>& args,
                          const std::string& device, std::vector<Tensor>& placeholders) {
  for (size_t i = 0; i < args.size(); ++i) {
    auto op = std::make_shared<detail::LazyOp>();
    op->kind = OpKind::Input;
    op->types = {TensorType{args[i].dtype(), args[i].shape()}};
    op->device = device;
    op->values.resize(1);
    op->placeholder = static_cast<int>(i);
    placeholders.emplace_back(op, 0);
  }
  ++tracing_depth;
  try {
    std::vector<Tensor> outs = fn(placeholders);
    --tracing_depth;
    return outs;
  } catch (...) {
    --tracing_depth;
    throw;
  }
}

// Records g's nodes as lazy ops, its Inputs bound to `inputs` in order and its Constants as
// evaluated tensors on `device`; returns the tensors of g's outputs.
std::vector<Tensor> record_graph(const Graph& g, const std::vector<Tensor>& inputs,
                                 const std::string& device) {
  std::vector<std::vector<Tensor>> values(g.nodes().size());
  size_t next = 0;
  for (const Node& node : g.nodes()) {
    if (node.kind == OpKind::Input) {
      values[node.id] = {inputs.at(next++)};
    } else if (node.kind == OpKind::Constant) {
      values[node.id] = {Tensor(*node.literal, device)};
    } else {
      std::vector<Tensor> ins;
      for (Value v : node.inputs) ins.push_back(v.valid() ? values[v.node].at(v.index) : Tensor());
      values[node.id] = detail::record(node.kind, node.attrs, ins);
    }
  }
  std::vector<Tensor> outs;
  for (Value v : g.outputs) outs.push_back(values[v.node].at(v.index));
  return outs;
}
}  // namespace

std::vector<Tensor> Function::operator()(const std::vector<Tensor>& args) const {
  for (const Tensor& a : args)
    if (!a.defined()) throw_error(ErrorKind::Value, "[compile] undefined argument tensor");
  std::string device = args.empty() ? Tensor::default_device() : args[0].device();
  for (const Tensor& a : args)
    if (a.device() != device)
      throw_error(ErrorKind::Device, "[compile] arguments on devices '", device, "' and '",
                  a.device(), "'");
  if (tracing_depth > 0) return apply_inline(args, device);
  std::string key = signature(args);
  std::shared_ptr<Executable> exe;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->traces.find(key);
    if (it != state_->traces.end()) exe = it->second.exe;
  }
  if (!exe) {
    std::vector<Tensor> placeholders;
    std::vector<Tensor> outs = trace(state_->fn, args, device, placeholders);
    detail::Lowered lowered = detail::lower(outs, /*captured_as_constants=*/true, placeholders);
    auto graph = std::make_shared<Graph>(state_->transform ? state_->transform(lowered.graph)
                                                           : std::move(lowered.graph));
    exe = detail::cached_executable(*graph, device);
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->traces[key] = {graph, exe};
    state_->trace_count++;
  }
  std::vector<HostTensor> inputs;
  for (const Tensor& a : args) inputs.push_back(a.data());
  std::vector<HostTensor> results = exe->run(inputs);
  std::vector<Tensor> outs;
  for (HostTensor& r : results) outs.emplace_back(std::move(r), device);
  return outs;
}

// Inside another trace: fn traced on placeholders, transformed, and recorded again as lazy ops
// on `args` themselves, so the enclosing trace sees (and can differentiate) the whole path.
// Tensors of the enclosing trace that fn closes over become extra graph inputs after the
// arguments, bound to those tensors.
std::vector<Tensor> Function::apply_inline(const std::vector<Tensor>& args,
                                           const std::string& device) const {
  std::vector<Tensor> placeholders, closed_over;
  std::vector<Tensor> outs = trace(state_->fn, args, device, placeholders);
  detail::Lowered lowered = detail::lower(outs, true, placeholders, &closed_over);
  if (!closed_over.empty() && !state_->closures_ok)
    throw_error(ErrorKind::Unsupported,
                "[vjp] inside another transform, the function uses a tensor traced by the "
                "enclosing transform that it did not get as an argument; pass it as a primal");
  Graph g = state_->transform ? state_->transform(lowered.graph) : std::move(lowered.graph);
  std::vector<Tensor> inputs = args;
  inputs.insert(inputs.end(), closed_over.begin(), closed_over.end());
  return record_graph(g, inputs, device);
}

int Function::cache_size() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return static_cast<int>(state_->traces.size());
}

int Function::trace_count() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->trace_count;
}

Function compile(TensorFn fn) { return Function(std::move(fn)); }

Function value_and_grad(TensorFn fn, std::vector<int> argnums) {
  return Function(std::move(fn), [argnums](const Graph& g) { return grad_graph(g, argnums); });
}

Function grad(TensorFn fn, std::vector<int> argnums) {
  return Function(std::move(fn), [argnums](const Graph& g) {
    Graph out = grad_graph(g, argnums);
    out.outputs.erase(out.outputs.begin(), out.outputs.end() - static_cast<long>(argnums.size()));
    return out;
  });
}

VjpResult vjp(const TensorFn& fn, const std::vector<Tensor>& primals,
              const std::vector<Tensor>& cotangents) {
  const auto n = static_cast<int>(primals.size());
  // fn sees the primals only; the cotangents are the graph's trailing inputs.
  Function f(
      [fn, n](const std::vector<Tensor>& a) {
        return fn(std::vector<Tensor>(a.begin(), a.begin() + n));
      },
      [n](const Graph& g) { return vjp_graph(g, n); });
  f.state_->closures_ok = false;
  std::vector<Tensor> args = primals;
  args.insert(args.end(), cotangents.begin(), cotangents.end());
  std::vector<Tensor> all = f(args);
  const size_t n_out = all.size() - primals.size();
  return {std::vector<Tensor>(all.begin(), all.begin() + static_cast<long>(n_out)),
          std::vector<Tensor>(all.begin() + static_cast<long>(n_out), all.end())};
}

}  // namespace tessel
