#include <chrono>

#include "backends/reference/kernels.h"
#include "ir/dtype_convert.h"

namespace tessel {
namespace reference {

void Registry::native(OpKind kind, HostKernel fn, DTypeSet dtypes, std::vector<int> variants) {
  TESSEL_ASSERT(
      kernels[static_cast<size_t>(kind)] == nullptr || kernels[static_cast<size_t>(kind)] == fn,
      "two reference kernels for ", op_name(kind));
  kernels[static_cast<size_t>(kind)] = fn;
  claims.add({kind, dtypes, How::Native, std::move(variants)});
}

void Registry::decomposed(OpKind kind, DTypeSet dtypes, std::vector<int> variants) {
  claims.add({kind, dtypes, How::Decomposed, std::move(variants)});
}

HostTensor broadcast_to(const HostTensor& t, const Shape& shape) {
  HostTensor v = t;
  size_t n = shape.size();
  TESSEL_ASSERT(t.shape.size() <= n, "broadcast to a lower rank");
  v.shape = shape;
  v.strides.assign(n, 0);
  size_t lead = n - t.shape.size();
  for (size_t i = 0; i < t.shape.size(); ++i) {
    TESSEL_ASSERT(t.shape[i] == shape[lead + i] || t.shape[i] == 1, "bad broadcast");
    v.strides[lead + i] = t.shape[i] == 1 ? 0 : t.strides[i];
  }
  return v;
}

double load_f64(const HostTensor& t, int64_t off) {
  return load_as_f64(t.element_ptr(off), t.dtype);
}
int64_t load_i64(const HostTensor& t, int64_t off) {
  return load_as_i64(t.element_ptr(off), t.dtype);
}
void store_f64(const HostTensor& t, int64_t off, double v) {
  store_from_f64(t.element_ptr(off), t.dtype, v);
}
void store_i64(const HostTensor& t, int64_t off, int64_t v) {
  store_from_i64(t.element_ptr(off), t.dtype, v);
}

int64_t checked_index(const Node& node, int64_t index, int64_t dim, const char* what) {
  if (index < -dim || index >= dim)
    throw_error(ErrorKind::Value, node.where(), ": ", what, " ", index, " is out of range [", -dim,
                ", ", dim, ")");
  return index < 0 ? index + dim : index;
}

namespace {

struct Tables {
  Registry registry;
  Tables() {
#define TESSEL_CATEGORY(e, title) register_##e(registry);
#include "ir/ops.def"
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

class ReferenceExecutable : public Executable {
 public:
  explicit ReferenceExecutable(const Graph& g) : g_(g) {
    last_use_.assign(g_.size(), -1);
    for (const Node& n : g_.nodes())
      for (Value v : n.inputs)
        if (v.valid()) last_use_[v.node] = n.id;
    for (Value v : g_.outputs) last_use_[v.node] = g_.size();
  }

  std::vector<HostTensor> run(std::span<const HostTensor> args) override {
    std::vector<std::vector<HostTensor>> values(g_.size());
    size_t next_arg = 0;
    const auto& kernels = tables().registry.kernels;
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
          values[n.id] = {a};
          break;
        }
        case OpKind::Constant:
          values[n.id] = {*n.literal};
          break;
        default: {
          HostKernel fn = kernels[static_cast<size_t>(n.kind)];
          if (!fn)
            throw_error(ErrorKind::Unsupported, n.where(),
                        ": the reference backend has no kernel (legalize the graph first)");
          std::vector<HostTensor> in;
          for (Value v : n.inputs) in.push_back(v.valid() ? values[v.node][v.index] : HostTensor{});
          std::vector<HostTensor> out;
          for (const TensorType& t : n.outputs) out.push_back(HostTensor::empty(t.dtype, t.shape));
          fn(n, in, out);
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

 private:
  Graph g_;
  std::vector<int> last_use_;
};

class ReferenceBackend : public Backend {
 public:
  const std::string& name() const override { return name_; }
  const ClaimTable& claims() const override { return tables().registry.claims; }
  std::unique_ptr<Executable> compile(const Graph& g) const override {
    return std::make_unique<ReferenceExecutable>(g);
  }

 private:
  std::string name_ = "reference";
};

}  // namespace
}  // namespace reference

std::unique_ptr<Backend> make_reference_backend() {
  return std::make_unique<reference::ReferenceBackend>();
}

}  // namespace tessel
