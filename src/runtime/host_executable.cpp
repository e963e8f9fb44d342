#include "runtime/host_executable.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "runtime/host_allocator.h"

namespace tessel {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kGuard = 64;
constexpr uint8_t kGuardByte = 0xA5;

size_t bytes_of(const TensorType& t) {
  return static_cast<size_t>(shape_numel(t.shape)) * dtype_size(t.dtype);
}

bool runs_kernel(const Node& n) {
  return n.kind != OpKind::Input && n.kind != OpKind::Param && n.kind != OpKind::Constant;
}

std::vector<bool> output_nodes(const Graph& g) {
  std::vector<bool> is_output(g.size(), false);
  for (Value v : g.outputs) is_output[v.node] = true;
  return is_output;
}

// Where a value is read last: a node id, or g.size() for a graph output. A Reshape that aliases
// its input keeps the input's bytes alive as long as itself.
std::vector<int> last_uses(const Graph& g, const std::vector<bool>& alias) {
  std::vector<int> last(g.size(), -1);
  for (const Node& n : g.nodes())
    for (Value v : n.inputs)
      if (v.valid()) last[v.node] = n.id;
  for (Value v : g.outputs) last[v.node] = g.size();
  for (int id = g.size() - 1; id >= 0; --id)
    if (alias[id]) {
      const int src = g.node(id).inputs[0].node;
      last[src] = std::max(last[src], last[id]);
    }
  return last;
}

}  // namespace

std::vector<bool> reshape_aliases(const Graph& g) {
  std::vector<bool> alias(g.size(), false);
  const std::vector<bool> is_output = output_nodes(g);
  for (const Node& n : g.nodes()) {
    if (n.kind != OpKind::Reshape || is_output[n.id]) continue;
    const Node& src = g.node(n.inputs[0].node);
    alias[n.id] = (runs_kernel(src) && src.outputs.size() == 1) || alias[src.id];
  }
  return alias;
}

// Greedy by size: the largest buffers are placed first, each at the lowest aligned offset that
// no placed buffer with an overlapping lifetime occupies.
MemoryPlan plan_memory(const Graph& g) {
  MemoryPlan plan;
  const std::vector<bool> alias = reshape_aliases(g);
  const std::vector<int> last = last_uses(g, alias);
  const std::vector<bool> is_output = output_nodes(g);
  for (const Node& n : g.nodes()) {
    if (!runs_kernel(n) || is_output[n.id] || alias[n.id]) continue;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      size_t b = (bytes_of(n.outputs[i]) + kAlign - 1) / kAlign * kAlign;
      plan.buffers.push_back({n.id, static_cast<int>(i), b, n.id, std::max(last[n.id], n.id)});
      plan.naive_bytes += b;
    }
  }
  std::vector<size_t> order(plan.buffers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return plan.buffers[a].bytes > plan.buffers[b].bytes;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    MemoryPlan::Buffer& buf = plan.buffers[i];
    std::vector<std::pair<size_t, size_t>> busy;  // [offset, end) of live neighbours
    for (size_t j : placed) {
      const MemoryPlan::Buffer& o = plan.buffers[j];
      if (o.first <= buf.last && buf.first <= o.last)
        busy.push_back({o.offset, o.offset + o.bytes});
    }
    std::sort(busy.begin(), busy.end());
    size_t at = 0;
    for (auto [lo, hi] : busy) {
      if (at + buf.bytes <= lo) break;
      at = std::max(at, hi);
    }
    buf.offset = at;
    plan.arena_bytes = std::max(plan.arena_bytes, at + buf.bytes);
    placed.push_back(i);
  }
  return plan;
}

HostExecutable::HostExecutable(const Graph& g, const KernelRegistry& kernels,
                               std::string backend_name, HostExecOptions options)
    : g_(g),
      kernels_(kernels),
      backend_name_(std::move(backend_name)),
      options_(options),
      plan_(plan_memory(g_)),
      alias_(options_.poison_and_guard ? std::vector<bool>(g_.size(), false) : reshape_aliases(g_)),
      last_use_(last_uses(g_, alias_)),
      derived_(g_.size()) {
  planned_.resize(g_.size());
  constant_inputs_.resize(g_.size());
  for (const Node& n : g_.nodes()) {
    for (Value v : n.inputs)
      constant_inputs_[n.id].push_back(v.valid() && g_.node(v.node).kind == OpKind::Constant);
    planned_[n.id].assign(n.outputs.size(), -1);
    if (runs_kernel(n) && !kernels_.kernel(n.kind))
      throw_error(ErrorKind::Unsupported, n.where(), ": the ", backend_name_,
                  " backend has no kernel for it (legalize the graph first)");
  }
  for (size_t b = 0; b < plan_.buffers.size(); ++b)
    planned_[plan_.buffers[b].node][plan_.buffers[b].index] = static_cast<int>(b);
}

std::vector<HostTensor> HostExecutable::run(std::span<const HostTensor> args) {
  std::vector<std::vector<HostTensor>> values(g_.size());
  std::shared_ptr<Storage> arena;
  // Always some storage, so that empty outputs still have a valid data() pointer.
  if (!options_.poison_and_guard)
    arena = host_allocate(std::max<size_t>(plan_.arena_bytes, kAlign));
  size_t next_arg = 0;
  for (const Node& n : g_.nodes()) {
    auto start = std::chrono::steady_clock::now();
    switch (n.kind) {
      case OpKind::Input:
      case OpKind::Param: {
        if (next_arg >= args.size())
          throw_error(ErrorKind::Value, n.where(), ": missing argument ", next_arg, " (",
                      args.size(), " given)");
        const HostTensor& a = args[next_arg++];
        if (a.dtype != n.outputs[0].dtype || a.shape != n.outputs[0].shape)
          throw_error(ErrorKind::Shape, n.where(), ": argument is ", dtype_name(a.dtype),
                      shape_str(a.shape), ", expected ", n.outputs[0].str());
        if (a.numel() > 0 && !a.storage)
          throw_error(ErrorKind::Value, n.where(), ": argument ", next_arg - 1, " has no storage");
        values[n.id] = {a};
        break;
      }
      case OpKind::Constant:
        values[n.id] = {*n.literal};
        break;
      default: {
        if (alias_[n.id]) {
          // The input's bytes under the new shape (a kernel's output: contiguous).
          HostTensor view = values[n.inputs[0].node][n.inputs[0].index];
          if (view.is_contiguous()) {
            view.shape = n.outputs[0].shape;
            view.strides = contiguous_strides(view.shape);
            values[n.id] = {std::move(view)};
            break;
          }
        }
        std::vector<HostTensor> in;
        in.reserve(n.inputs.size());
        for (Value v : n.inputs) in.push_back(v.valid() ? values[v.node][v.index] : HostTensor{});
        // Trailing optional inputs a node leaves out reach the kernel as absent tensors, so a
        // kernel can index every input of its kind's schema.
        if (const int max = n.info().max_inputs(); max > static_cast<int>(in.size()))
          in.resize(static_cast<size_t>(max));
        std::vector<HostTensor> out;
        for (size_t i = 0; i < n.outputs.size(); ++i) {
          const TensorType& t = n.outputs[i];
          size_t bytes = bytes_of(t);
          HostTensor o;
          o.dtype = t.dtype;
          o.shape = t.shape;
          o.strides = contiguous_strides(t.shape);
          if (options_.poison_and_guard) {
            o.storage = host_allocate(bytes + 2 * kGuard);
            std::memset(o.storage->bytes.get(), kGuardByte, kGuard);
            std::memset(o.storage->bytes.get() + kGuard, 0xFF, bytes);
            std::memset(o.storage->bytes.get() + kGuard + bytes, kGuardByte, kGuard);
            o.offset = static_cast<int64_t>(kGuard / dtype_size(t.dtype));
          } else if (int b = planned_[n.id][i]; b >= 0) {
            o.storage = arena;
            o.offset = static_cast<int64_t>(plan_.buffers[b].offset / dtype_size(t.dtype));
          } else {
            o.storage = host_allocate(bytes);
          }
          if (options_.zero_outputs && bytes > 0) std::memset(o.data(), 0, bytes);
          out.push_back(std::move(o));
        }
        {
          DerivedScope scope(constant_inputs_[n.id], derived_[n.id]);
          kernels_.kernel(n.kind)(n, in, out);
        }
        if (options_.poison_and_guard) {
          for (size_t i = 0; i < out.size(); ++i) {
            const uint8_t* base = out[i].storage->bytes.get();
            size_t bytes = bytes_of(n.outputs[i]);
            for (size_t k = 0; k < kGuard; ++k)
              if (base[k] != kGuardByte || base[kGuard + bytes + k] != kGuardByte)
                throw_error(ErrorKind::Internal, n.where(), ": the ", backend_name_,
                            " kernel wrote outside output ", i, " (guard byte ",
                            base[k] != kGuardByte ? "before" : "after", " the buffer changed)");
          }
        }
        values[n.id] = std::move(out);
      }
    }
    if (profiler_) {
      std::chrono::duration<double> dt = std::chrono::steady_clock::now() - start;
      profiler_({n.id, n.kind, dt.count()});
    }
    for (Value v : n.inputs)
      if (v.valid() && last_use_[v.node] == n.id) values[v.node].clear();
  }
  if (next_arg != args.size())
    throw_error(ErrorKind::Value, "[run] ", args.size(), " arguments given, graph takes ",
                next_arg);
  std::vector<HostTensor> results;
  for (Value v : g_.outputs) results.push_back(values[v.node][v.index]);
  return results;
}

}  // namespace tessel
