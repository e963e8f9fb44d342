// Model: parsing, the load-time checks (structure, names defined before use, every op
// supported, every literal decodable), input binding and running.
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_set>

#include "frontends/onnx/model_state.h"

namespace tessel::onnx {

// The newest ai.onnx opset whose operator versions the converters know.
constexpr int kMaxOnnxOpset = 18;

// --- Value -------------------------------------------------------------------------------------

Value Value::string_tensor(Shape shape, std::vector<std::string> strings) {
  Value v;
  v.kind = Kind::Strings;
  v.shape = std::move(shape);
  v.strings = std::move(strings);
  return v;
}

Value Value::sequence(std::vector<Value> elements, std::optional<DType> elem) {
  Value v;
  v.kind = Kind::Sequence;
  v.elements = std::move(elements);
  v.elem_dtype = elem;
  return v;
}

Value Value::optional(std::optional<Value> element, std::optional<DType> elem) {
  Value v;
  v.kind = Kind::Optional;
  if (element) v.elements.push_back(std::move(*element));
  v.elem_dtype = elem;
  return v;
}

std::string Value::describe() const {
  switch (kind) {
    case Kind::Tensor:
      return tensor.defined() ? std::string(dtype_name(tensor.dtype())) + shape_str(tensor.shape())
                              : "undefined";
    case Kind::Strings:
      return "string" + shape_str(shape);
    case Kind::Sequence:
    case Kind::Optional: {
      std::string s = kind == Kind::Sequence ? "seq(" : "optional(";
      for (size_t i = 0; i < elements.size(); ++i) s += (i ? ", " : "") + elements[i].describe();
      return s + ")";
    }
  }
  return "?";
}

Value Literal::bind(const std::string& device) const {
  if (tensor) return Value(Tensor(*tensor, device));
  return Value::string_tensor(shape, strings);
}

// --- load-time checks --------------------------------------------------------------------------

namespace {

ValueInfo value_info(const pb::ValueInfoProto& v) {
  ValueInfo info;
  info.name = v.name();
  info.type = type_proto_str(v.type());
  if (v.type().has_tensor_type()) {
    const auto& tt = v.type().tensor_type();
    info.dtype = dtype_from_onnx(tt.elem_type());
    if (tt.has_shape()) {
      info.has_shape = true;
      for (const auto& d : tt.shape().dim()) {
        info.dims.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value() : -1);
        info.dim_names.push_back(d.has_dim_param() ? d.dim_param() : "");
      }
    }
  }
  return info;
}

struct Checker {
  ModelState& m;
  std::vector<std::string> unsupported;  // "Op (domain 'd', opset N): node 'n'"
  std::set<std::string> unsupported_seen;

  void literal(const pb::TensorProto& t, const std::string& what) {
    Literal lit;
    if (t.data_type() == pb::TensorProto::STRING) {
      Value v = value_from_tensor_proto(t, m.base_dir, what, "reference");
      lit.shape = v.shape;
      lit.strings = std::move(v.strings);
    } else {
      lit.tensor = host_tensor_from_proto(t, m.base_dir, what);
    }
    m.literals.emplace(&t, std::move(lit));
  }

  // Keyed by the values' TensorProto.
  void sparse_literal(const pb::SparseTensorProto& s, const std::string& what) {
    Literal lit;
    lit.tensor = host_tensor_from_sparse_proto(s, m.base_dir, what);
    m.literals.emplace(&s.values(), std::move(lit));
  }

  static std::string node_label(const pb::NodeProto& n) {
    if (!n.name().empty()) return "node '" + n.name() + "'";
    return n.output_size() ? "node producing '" + n.output(0) + "'" : "unnamed node";
  }

  void node_op(const pb::NodeProto& n, const std::unordered_map<std::string, int>& opsets) {
    std::string domain(canonical_domain(n.domain()));
    auto it = opsets.find(domain);
    if (it == opsets.end()) {
      std::string key = n.op_type() + "@" + domain;
      if (unsupported_seen.insert(key).second)
        unsupported.push_back(n.op_type() + " (domain '" + n.domain() +
                              "' is not in the model's opset_import): " + node_label(n));
      return;
    }
    if (!is_supported(m, domain, n.op_type(), it->second)) {
      std::string key = n.op_type() + "@" + domain;
      if (unsupported_seen.insert(key).second)
        unsupported.push_back(n.op_type() + " (domain '" +
                              (domain.empty() ? std::string("ai.onnx") : domain) + "', opset " +
                              std::to_string(it->second) + "): " + node_label(n));
    }
  }

  // Every node's inputs must be defined earlier (an input, an initializer, an earlier node's
  // output, or a name of an enclosing scope): this also rejects cycles.
  void graph(const pb::GraphProto& g, std::unordered_set<std::string> visible,
             const std::unordered_map<std::string, int>& opsets, const std::string& where) {
    for (const auto& init : g.initializer()) {
      literal(init, "initializer '" + init.name() + "' of " + where);
      visible.insert(init.name());
    }
    for (const auto& sparse : g.sparse_initializer()) {
      sparse_literal(sparse, "sparse initializer '" + sparse.values().name() + "' of " + where);
      visible.insert(sparse.values().name());
    }
    for (const auto& in : g.input()) visible.insert(in.name());
    for (const auto& n : g.node()) {
      for (const auto& in : n.input())
        if (!in.empty() && !visible.count(in))
          throw_error(ErrorKind::Format, "[onnx] ", where, ": ", node_label(n), " (", n.op_type(),
                      ") reads '", in,
                      "', which no graph input, initializer or earlier node defines (the "
                      "graph is cyclic, unsorted or missing an initializer)");
      node_op(n, opsets);
      for (const auto& a : n.attribute()) {
        if (a.has_t()) literal(a.t(), node_label(n) + " attribute '" + a.name() + "'");
        if (a.has_sparse_tensor())
          sparse_literal(a.sparse_tensor(), node_label(n) + " attribute '" + a.name() + "'");
        if (a.has_g())
          graph(a.g(), visible, opsets, node_label(n) + " attribute '" + a.name() + "'");
        for (const auto& sg : a.graphs())
          graph(sg, visible, opsets, node_label(n) + " attribute '" + a.name() + "'");
      }
      for (const auto& out : n.output())
        if (!out.empty()) visible.insert(out);
    }
    for (const auto& out : g.output())
      if (!visible.count(out.name()))
        throw_error(ErrorKind::Format, "[onnx] ", where, ": output '", out.name(),
                    "' is never produced");
  }

  void function(const pb::FunctionProto& f) {
    std::unordered_map<std::string, int> opsets = m.opsets;
    for (const auto& o : f.opset_import())
      opsets[std::string(canonical_domain(o.domain()))] = static_cast<int>(o.version());
    // Its literals are decoded when it runs.
    std::unordered_set<std::string> visible(f.input().begin(), f.input().end());
    for (const auto& n : f.node()) {
      for (const auto& in : n.input())
        if (!in.empty() && !visible.count(in))
          throw_error(ErrorKind::Format, "[onnx] function '", f.name(), "': ", node_label(n),
                      " reads undefined '", in, "'");
      node_op(n, opsets);
      for (const auto& out : n.output()) visible.insert(out);
    }
  }
};

}  // namespace

namespace {
// Set by the traced function when its interpretation finished: an error after it (compiling,
// running) is the run's own, one before it may mean only that the signature cannot be traced.
thread_local bool trace_finished = false;

Function traced_model(const ModelState* m) {
  return compile([m](const std::vector<Tensor>& args) {
    std::vector<Value> inputs(args.begin(), args.end());
    RunState run{m, args.at(0).device()};
    std::vector<Value> outs = run_graph(m->proto.graph(), inputs, nullptr, run, m->opsets);
    std::vector<Tensor> tensors;
    for (const Value& v : outs) {
      if (!v.is_tensor() || !v.tensor.defined())
        throw_error(ErrorKind::Unsupported, "[onnx] an output that is not a tensor is not traced");
      tensors.push_back(v.tensor);
    }
    trace_finished = true;
    return tensors;
  });
}

std::string signature(const std::vector<Value>& inputs, const std::string& device) {
  std::string s = device;
  for (const Value& v : inputs)
    s += std::string(";") + dtype_name(v.tensor.dtype()) + shape_str(v.tensor.shape());
  return s;
}
}  // namespace

// Runs of one input signature (device, dtypes, shapes) after the first replay one traced,
// compiled graph: the model is interpreted once onto placeholders (`compile`), and later runs
// only bind the inputs and execute. A model whose interpretation needs input-derived values on
// the host (a data-dependent Reshape, a Loop's trip count, NonZero's count) cannot be traced:
// lowering such a value throws, and that signature is interpreted on every run instead.
struct Model::Impl {
  ModelState state;
  Function traced{traced_model(&state)};
  mutable std::mutex mu;
  mutable std::set<std::string> untraceable;  // signatures interpreted on every run
};

Model Model::parse(std::span<const uint8_t> bytes, const std::string& base_dir) {
  auto impl = std::make_shared<Impl>();
  ModelState& m = impl->state;
  m.base_dir = base_dir;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw_error(ErrorKind::Format, "[onnx] model of ", bytes.size(),
                " bytes exceeds protobuf's 2 GiB limit (keep weights in external data)");
  if (!m.proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw_error(ErrorKind::Format, "[onnx] not a valid ModelProto: protobuf parsing failed on ",
                bytes.size(), " bytes (truncated or corrupted file?)");
  if (!m.proto.has_graph()) throw_error(ErrorKind::Format, "[onnx] the ModelProto has no graph");
  if (m.proto.opset_import_size() == 0)
    throw_error(ErrorKind::Format, "[onnx] the ModelProto imports no opset");
  for (const auto& o : m.proto.opset_import()) {
    std::string domain(canonical_domain(o.domain()));
    if (o.version() <= 0 || o.version() > 1000)
      throw_error(ErrorKind::Format, "[onnx] opset_import of domain '", o.domain(),
                  "' has version ", o.version());
    if (domain.empty() && o.version() > kMaxOnnxOpset)
      throw_error(ErrorKind::Unsupported, "[onnx] the model imports ai.onnx opset ", o.version(),
                  "; this importer knows opsets up to ", kMaxOnnxOpset);
    m.opsets[domain] = static_cast<int>(o.version());
  }
  for (const auto& f : m.proto.functions())
    m.functions[{std::string(canonical_domain(f.domain())), f.name()}] = &f;

  Checker check{m, {}, {}};
  for (const auto& f : m.proto.functions()) check.function(f);
  check.graph(m.proto.graph(), {}, m.opsets, "the main graph");
  if (!check.unsupported.empty()) {
    std::ostringstream os;
    os << "[onnx] " << check.unsupported.size() << " unsupported op"
       << (check.unsupported.size() == 1 ? "" : "s") << ":";
    for (const auto& u : check.unsupported) os << "\n  " << u;
    throw Error(ErrorKind::Unsupported, os.str());
  }

  std::unordered_set<std::string> initialized;
  for (const auto& init : m.proto.graph().initializer()) initialized.insert(init.name());
  for (const auto& in : m.proto.graph().input())
    if (!initialized.count(in.name())) m.inputs.push_back(value_info(in));
  for (const auto& out : m.proto.graph().output()) m.outputs.push_back(value_info(out));
  return Model(std::move(impl));
}

Model Model::load(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw_error(ErrorKind::Io, "[onnx] cannot open '", path, "'");
  const auto size = static_cast<int64_t>(f.tellg());
  if (size < 0) throw_error(ErrorKind::Io, "[onnx] cannot read '", path, "'");
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(bytes.data()), size);
  if (!f) throw_error(ErrorKind::Io, "[onnx] reading '", path, "' failed");
  try {
    return parse(bytes, std::filesystem::path(path).parent_path().string());
  } catch (const Error& e) {
    throw Error(e.kind(), std::string(e.what()) + " (in '" + path + "')");
  }
}

const std::vector<ValueInfo>& Model::inputs() const { return impl_->state.inputs; }
const std::vector<ValueInfo>& Model::outputs() const { return impl_->state.outputs; }
int64_t Model::ir_version() const { return impl_->state.proto.ir_version(); }
int Model::num_nodes() const { return impl_->state.proto.graph().node_size(); }
int Model::opset(const std::string& domain) const {
  auto it = impl_->state.opsets.find(std::string(canonical_domain(domain)));
  return it == impl_->state.opsets.end() ? 0 : it->second;
}

// --- running -----------------------------------------------------------------------------------

namespace {

// Checks a bound input against its declared type; symbolic dims must agree across inputs.
void check_input(const ValueInfo& info, const Value& v,
                 std::unordered_map<std::string, int64_t>& symbols) {
  const bool want_tensor = info.type.rfind("tensor(", 0) == 0;
  if (want_tensor && info.type != "tensor(string)" && !v.is_tensor())
    throw_error(ErrorKind::DType, "[onnx] input '", info.name, "' is declared ", info.type,
                " but a ", v.describe(), " was given");
  if (!v.is_tensor()) return;
  if (!v.tensor.defined())
    throw_error(ErrorKind::Value, "[onnx] input '", info.name, "' is an undefined tensor");
  if (info.dtype && *info.dtype != v.tensor.dtype())
    throw_error(ErrorKind::DType, "[onnx] input '", info.name, "' is declared ", info.type,
                " but a ", v.describe(), " was given");
  if (!info.has_shape) return;
  const Shape& shape = v.tensor.shape();
  auto declared = [&] {
    std::string s = "[";
    for (size_t i = 0; i < info.dims.size(); ++i)
      s += (i ? "," : "") + (info.dims[i] >= 0           ? std::to_string(info.dims[i])
                             : info.dim_names[i].empty() ? "?"
                                                         : info.dim_names[i]);
    return s + "]";
  };
  if (shape.size() != info.dims.size())
    throw_error(ErrorKind::Shape, "[onnx] input '", info.name, "' is declared ", declared(),
                " but has shape ", shape_str(shape));
  for (size_t i = 0; i < shape.size(); ++i) {
    if (info.dims[i] >= 0 && info.dims[i] != shape[i])
      throw_error(ErrorKind::Shape, "[onnx] input '", info.name, "' is declared ", declared(),
                  " but has shape ", shape_str(shape));
    if (info.dims[i] < 0 && !info.dim_names[i].empty()) {
      auto [it, fresh] = symbols.emplace(info.dim_names[i], shape[i]);
      if (!fresh && it->second != shape[i])
        throw_error(ErrorKind::Shape, "[onnx] input '", info.name, "' binds dimension '",
                    info.dim_names[i], "' to ", shape[i], " but an earlier input bound it to ",
                    it->second);
    }
  }
}

void collect_tensors(const Value& v, std::vector<Tensor>& out) {
  if (v.is_tensor()) {
    if (v.tensor.defined()) out.push_back(v.tensor);
    return;
  }
  for (const Value& e : v.elements) collect_tensors(e, out);
}

}  // namespace

std::vector<Value> Model::run(const std::vector<Value>& inputs, const RunOptions& options) const {
  const ModelState& m = impl_->state;
  if (inputs.size() != m.inputs.size())
    throw_error(ErrorKind::Value, "[onnx] the model takes ", m.inputs.size(), " inputs; ",
                inputs.size(), " were given");
  std::unordered_map<std::string, int64_t> symbols;
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_input(m.inputs[i], inputs[i], symbols);
    if (inputs[i].is_tensor() && inputs[i].tensor.device() != options.device)
      throw_error(ErrorKind::Device, "[onnx] input '", m.inputs[i].name, "' is on device '",
                  inputs[i].tensor.device(), "', the run on '", options.device,
                  "' (move it with to())");
  }
  bool tensors_in = !inputs.empty();
  for (const Value& v : inputs) tensors_in = tensors_in && v.is_tensor() && v.tensor.defined();
  if (options.evaluate && tensors_in) {
    const std::string sig = signature(inputs, options.device);
    bool traceable;
    {
      std::lock_guard<std::mutex> lock(impl_->mu);
      traceable = !impl_->untraceable.count(sig);
    }
    if (traceable) {
      std::vector<Tensor> args;
      for (const Value& v : inputs) args.push_back(v.tensor);
      trace_finished = false;
      try {
        std::vector<Tensor> outs = impl_->traced(args);
        return std::vector<Value>(outs.begin(), outs.end());
      } catch (const Error&) {
        if (trace_finished) throw;
        std::lock_guard<std::mutex> lock(impl_->mu);
        impl_->untraceable.insert(sig);
      }
    }
  }
  RunState run{&m, options.device};
  std::vector<Value> outs = run_graph(m.proto.graph(), inputs, nullptr, run, m.opsets);
  if (!options.evaluate) return outs;
  std::vector<Tensor> pending;
  for (const Value& v : outs) collect_tensors(v, pending);
  tessel::eval(pending);
  return outs;
}

std::vector<Value> Model::run(const std::map<std::string, Value>& inputs,
                              const RunOptions& options) const {
  std::vector<Value> ordered;
  for (const ValueInfo& info : impl_->state.inputs) {
    auto it = inputs.find(info.name);
    if (it == inputs.end())
      throw_error(ErrorKind::Value, "[onnx] input '", info.name, "' is not given");
    ordered.push_back(it->second);
  }
  for (const auto& [name, v] : inputs) {
    bool known = false;
    for (const ValueInfo& info : impl_->state.inputs) known |= info.name == name;
    if (!known) throw_error(ErrorKind::Value, "[onnx] the model has no input '", name, "'");
  }
  return run(ordered, options);
}

// --- .pb files ---------------------------------------------------------------------------------

Value read_value_pb(const std::string& path, const std::string& kind, const std::string& device) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw_error(ErrorKind::Io, "[onnx] cannot open '", path, "'");
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::string dir = std::filesystem::path(path).parent_path().string();
  auto parse = [&](auto& msg) {
    if (!msg.ParseFromString(bytes))
      throw_error(ErrorKind::Format, "[onnx] '", path, "' is not a valid ", kind, " protobuf");
  };
  if (kind == "tensor") {
    pb::TensorProto t;
    parse(t);
    return value_from_tensor_proto(t, dir, "'" + path + "'", device);
  }
  if (kind == "sequence") {
    pb::SequenceProto s;
    parse(s);
    return value_from_sequence_proto(s, dir, "'" + path + "'", device);
  }
  if (kind == "optional") {
    pb::OptionalProto o;
    parse(o);
    return value_from_optional_proto(o, dir, "'" + path + "'", device);
  }
  throw_error(ErrorKind::Value, "[onnx] read_value_pb: kind '", kind,
              "' is not one of tensor, sequence, optional");
}

}  // namespace tessel::onnx
