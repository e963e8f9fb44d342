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
}  // namespace

std::vector<Tensor> Function::operator()(const std::vector<Tensor>& args) const {
  for (const Tensor& a : args)
    if (!a.defined()) throw_error(ErrorKind::Value, "[compile] undefined argument tensor");
  std::string device = args.empty() ? Tensor::default_device() : args[0].device();
  for (const Tensor& a : args)
    if (a.device() != device)
      throw_error(ErrorKind::Device, "[compile] arguments on devices '", device, "' and '",
                  a.device(), "'");
  std::string key = signature(args);
  std::shared_ptr<Executable> exe;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->traces.find(key);
    if (it != state_->traces.end()) exe = it->second.exe;
  }
  if (!exe) {
    std::vector<Tensor> placeholders;
    for (size_t i = 0; i < args.size(); ++i) {
      auto op = std::make_shared<detail::LazyOp>();
      op->kind = OpKind::Input;
      op->types = {TensorType{args[i].dtype(), args[i].shape()}};
      op->device = device;
      op->values.resize(1);
      op->placeholder = static_cast<int>(i);
      placeholders.emplace_back(op, 0);
    }
    std::vector<Tensor> outs = state_->fn(placeholders);
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
  std::vector<Tensor> args = primals;
  args.insert(args.end(), cotangents.begin(), cotangents.end());
  std::vector<Tensor> all = f(args);
  const size_t n_out = all.size() - primals.size();
  return {std::vector<Tensor>(all.begin(), all.begin() + static_cast<long>(n_out)),
          std::vector<Tensor>(all.begin() + static_cast<long>(n_out), all.end())};
}

}  // namespace tessel
