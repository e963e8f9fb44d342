#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "api/lazy.h"
#include "passes/passes.h"
#include "runtime/backend.h"

namespace tessel {

namespace {
std::string& default_device_name() {
  static std::string name = "reference";
  return name;
}
}  // namespace

const std::string& Tensor::default_device() { return default_device_name(); }
void Tensor::set_default_device(std::string name) {
  backend(name);  // throws a Device error for unknown names
  default_device_name() = std::move(name);
}

Tensor::Tensor(HostTensor value, std::string device) {
  backend(device);
  auto op = std::make_shared<detail::LazyOp>();
  op->kind = OpKind::Constant;
  op->types = {TensorType{value.dtype, value.shape}};
  op->device = std::move(device);
  op->values = {std::move(value)};
  op_ = std::move(op);
}

Tensor Tensor::scalar(double value, DType dtype, std::string device) {
  HostTensor t = HostTensor::empty(dtype, {});
  t.set_f64(0, value);
  return Tensor(std::move(t), std::move(device));
}

namespace {
const detail::LazyOp& checked(const std::shared_ptr<detail::LazyOp>& op) {
  if (!op)
    throw_error(ErrorKind::Value, "[Tensor] use of an undefined (default-constructed) tensor");
  return *op;
}
}  // namespace

DType Tensor::dtype() const { return checked(op_).types.at(index_).dtype; }
const Shape& Tensor::shape() const { return checked(op_).types.at(index_).shape; }
const std::string& Tensor::device() const { return checked(op_).device; }
bool Tensor::is_evaluated() const { return checked(op_).values.at(index_).has_value(); }

void Tensor::eval() const { tessel::eval({*this}); }

HostTensor Tensor::data() const {
  eval();
  return *op_->values.at(index_);
}

std::vector<double> Tensor::to_f64() const { return data().to_f64(); }

double Tensor::item() const {
  if (numel() != 1)
    throw_error(ErrorKind::Shape, "[Tensor::item] needs one element, tensor is ",
                shape_str(shape()));
  return data().get_f64(0);
}

Tensor Tensor::to(const std::string& device) const {
  backend(device);
  return Tensor(data().contiguous(), device);
}

Tensor Tensor::astype(DType dtype) const { return detail::LazyBuilder().cast(*this, dtype); }

namespace detail {

std::vector<Tensor> record(OpKind kind, Attrs attrs, const std::vector<Tensor>& inputs,
                           const std::string& on_device) {
  std::string device = on_device;
  for (const Tensor& t : inputs) {
    if (!t.defined()) continue;
    if (device.empty())
      device = t.device();
    else if (t.device() != device)
      throw_error(ErrorKind::Device, "[", op_name(kind), "] inputs are on devices '", device,
                  "' and '", t.device(), "'; move one explicitly with Tensor::to()");
  }
  if (device.empty()) device = Tensor::default_device();
  Graph scratch;
  std::vector<Value> values;
  for (const Tensor& t : inputs)
    values.push_back(t.defined() ? scratch.input(t.dtype(), t.shape()) : Value{});
  scratch.add(kind, std::move(attrs), values);
  const Node& node = scratch.nodes().back();
  auto op = std::make_shared<LazyOp>();
  op->kind = kind;
  op->attrs = node.attrs;
  op->inputs = inputs;
  op->types = node.outputs;
  op->device = device;
  op->values.resize(node.outputs.size());
  std::vector<Tensor> outs;
  for (int i = 0; i < static_cast<int>(node.outputs.size()); ++i) outs.emplace_back(op, i);
  return outs;
}

namespace {
// Post-order of the ops under `targets`, stopping at evaluated ops and placeholders.
std::vector<std::shared_ptr<LazyOp>> post_order(const std::vector<Tensor>& targets) {
  std::vector<std::shared_ptr<LazyOp>> order;
  std::unordered_map<const LazyOp*, bool> seen;
  std::vector<std::pair<std::shared_ptr<LazyOp>, size_t>> stack;
  for (const Tensor& t : targets) stack.push_back({t.op(), 0});
  while (!stack.empty()) {
    const std::shared_ptr<LazyOp> op = stack.back().first;
    size_t next = stack.back().second;
    if (next == 0 && seen[op.get()]) {
      stack.pop_back();
      continue;
    }
    bool leaf = op->evaluated() || op->placeholder >= 0;
    if (!leaf && next < op->inputs.size()) {
      stack.back().second++;
      const Tensor& in = op->inputs[next];
      if (in.defined() && !seen[in.op().get()]) stack.push_back({in.op(), 0});
      continue;
    }
    if (!seen[op.get()]) order.push_back(op);
    seen[op.get()] = true;
    stack.pop_back();
  }
  return order;
}
}  // namespace

Lowered lower(const std::vector<Tensor>& targets, bool captured_as_constants,
              const std::vector<Tensor>& placeholders, std::vector<Tensor>* closed_over) {
  Lowered out;
  std::vector<std::shared_ptr<LazyOp>> order = post_order(targets);
  std::unordered_map<const LazyOp*, std::vector<Value>> done;
  // Placeholders first, so the graph's Inputs are in argument order (used or not).
  for (size_t p = 0; p < placeholders.size(); ++p) {
    const TensorType& t = placeholders[p].op()->types[0];
    done[placeholders[p].op().get()] = {
        out.graph.input(t.dtype, t.shape, "arg" + std::to_string(p))};
  }
  for (const std::shared_ptr<LazyOp>& shared : order) {
    LazyOp* op = shared.get();
    if (done.count(op)) continue;
    if (op->placeholder >= 0 && closed_over) {
      const TensorType& t = op->types[0];
      done[op] = {
          out.graph.input(t.dtype, t.shape, "closed_over" + std::to_string(closed_over->size()))};
      closed_over->emplace_back(shared, 0);  // a placeholder has one output
      continue;
    }
    if (op->placeholder >= 0)
      throw_error(ErrorKind::Value,
                  "[eval] this tensor depends on an argument of a function being traced "
                  "(compile, grad, vjp): it has no value until the compiled function runs; "
                  "return it from the function instead of evaluating it inside");
    if (op->evaluated()) {
      std::vector<Value> vs;
      for (const auto& v : op->values) {
        if (captured_as_constants) {
          vs.push_back(out.graph.constant(*v));
        } else {
          vs.push_back(out.graph.input(v->dtype, v->shape));
          out.args.push_back(*v);
        }
      }
      done[op] = std::move(vs);
      continue;
    }
    std::vector<Value> ins;
    for (const Tensor& t : op->inputs)
      ins.push_back(t.defined() ? done.at(t.op().get()).at(t.index()) : Value{});
    done[op] = out.graph.add(op->kind, op->attrs, ins);
  }
  for (const Tensor& t : targets) {
    out.graph.outputs.push_back(done.at(t.op().get()).at(t.index()));
    out.outputs.push_back({t.op().get(), t.index()});
  }
  return out;
}

namespace {
// A 64-bit digest of the bytes of every Constant: Graph::to_string() shows a constant's type, not
// its value, and graphs that differ only in a captured value must not share an executable. Eight
// bytes a step in four independent lanes, each word multiplied in and folded (xor-shift); byte by
// byte through one FNV-1a chain (~4 cycles a byte) it took ~40 ms of compiling the d = 512
// encoder layer's 12 MB of weights, as long as running it.
uint64_t fold(uint64_t h, uint64_t w) {
  h = (h ^ w) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}
uint64_t digest_bytes(uint64_t h, const uint8_t* p, size_t bytes) {
  uint64_t lane[4] = {h, h ^ 0x243F6A8885A308D3ull, h ^ 0x13198A2E03707344ull,
                      h ^ 0xA4093822299F31D0ull};
  size_t i = 0;
  for (; i + 32 <= bytes; i += 32)
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * l, 8);
      lane[l] = fold(lane[l], w);
    }
  h = fold(fold(fold(lane[0], lane[1]), lane[2]), lane[3]);
  for (; i < bytes; i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, std::min<size_t>(8, bytes - i));
    h = fold(h, w);
  }
  return fold(h, bytes);
}
std::string constants_digest(const Graph& g) {
  uint64_t h = 1469598103934665603ull;
  for (const Node& n : g.nodes()) {
    if (!n.literal) continue;
    HostTensor c = n.literal->contiguous();
    const uint8_t* p = c.numel() > 0 ? c.data() : nullptr;
    h = digest_bytes(h, p, static_cast<size_t>(c.numel()) * dtype_size(c.dtype));
  }
  return std::to_string(h);
}
}  // namespace

std::shared_ptr<Executable> cached_executable(const Graph& g, const std::string& device) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<Executable>> cache;
  std::string key = device + "\n" + constants_digest(g) + "\n" + g.to_string();
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  std::shared_ptr<Executable> exe = compile_for(g, backend(device));
  std::lock_guard<std::mutex> lock(mu);
  return cache.emplace(key, exe).first->second;
}

}  // namespace detail

void eval(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> pending;
  for (const Tensor& t : tensors) {
    if (!t.defined()) throw_error(ErrorKind::Value, "[eval] undefined tensor");
    if (t.is_evaluated()) continue;
    // Evaluate every output of the op, so multi-output ops run once.
    for (int i = 0; i < static_cast<int>(t.op()->types.size()); ++i)
      pending.emplace_back(t.op(), i);
  }
  if (pending.empty()) return;
  const std::string& device = pending[0].device();
  for (const Tensor& t : pending)
    if (t.device() != device)
      throw_error(ErrorKind::Device, "[eval] tensors on devices '", device, "' and '", t.device(),
                  "' cannot be evaluated together");
  detail::Lowered lowered = detail::lower(pending, false);
  std::vector<HostTensor> results =
      detail::cached_executable(lowered.graph, device)->run(lowered.args);
  for (size_t i = 0; i < results.size(); ++i) {
    auto [op, index] = lowered.outputs[i];
    op->values[index] = std::move(results[i]);
  }
  for (const Tensor& t : pending)
    if (t.op()->evaluated()) t.op()->inputs.clear();  // release the recorded graph
}

}  // namespace tessel
