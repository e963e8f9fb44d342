// Running an ONNX graph onto lazy Tensors: scopes, node dispatch to converters, and the
// expansion of functions (model-local ones, and the ONNX operator schemas' function bodies).
#include <onnx/defs/schema.h>

#include <cmath>
#include <unordered_set>

#include "frontends/onnx/convert_util.h"
#include "frontends/onnx/model_state.h"

namespace tessel::onnx {

// --- Env ---------------------------------------------------------------------------------------

const Value* Env::find(const std::string& name) const {
  for (const Env* e = this; e; e = e->parent_) {
    auto it = e->values_.find(name);
    if (it != e->values_.end()) return &it->second;
  }
  return nullptr;
}

// --- NodeCtx -----------------------------------------------------------------------------------

std::string NodeCtx::where() const {
  std::string s = "[onnx " + node_.op_type();
  if (!node_.name().empty())
    s += " node '" + node_.name() + "'";
  else if (node_.output_size() > 0)
    s += " node producing '" + node_.output(0) + "'";
  return s + "]";
}

const Value& NodeCtx::value(int i) const {
  if (!has(i)) fail(ErrorKind::Format, "input ", i, " is required but absent");
  const Value* v = env_.find(node_.input(i));
  if (!v) fail(ErrorKind::Format, "input '", node_.input(i), "' is not defined");
  return *v;
}

Tensor NodeCtx::in(int i) const {
  const Value& v = value(i);
  if (!v.is_tensor())
    fail(ErrorKind::DType, "input ", i, " ('", node_.input(i), "') is ", v.describe(),
         "; a numeric tensor is needed");
  return v.tensor;
}

HostTensor NodeCtx::host(int i) const { return in(i).data(); }

std::vector<int64_t> NodeCtx::ints(int i) const {
  HostTensor h = host(i);
  if (is_inexact(h.dtype))
    fail(ErrorKind::DType, "input ", i, " must be an integer tensor, not ", dtype_name(h.dtype));
  std::vector<int64_t> out(static_cast<size_t>(h.numel()));
  for (int64_t k = 0; k < h.numel(); ++k) out[k] = h.get_i64(k);
  return out;
}

double NodeCtx::scalar(int i) const {
  HostTensor h = host(i);
  if (h.numel() != 1)
    fail(ErrorKind::Shape, "input ", i, " must hold one element, not ", shape_str(h.shape));
  return h.get_f64(0);
}

const pb::AttributeProto* NodeCtx::attr(std::string_view name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

namespace {

const pb::AttributeProto& typed_attr(const NodeCtx& ctx, std::string_view name,
                                     pb::AttributeProto::AttributeType type) {
  const pb::AttributeProto* a = ctx.attr(name);
  if (!a) ctx.fail(ErrorKind::Format, "attribute '", name, "' is required");
  // Old exporters leave `type` unset; accept it when the expected field is present.
  if (a->type() != type && a->type() != pb::AttributeProto::UNDEFINED)
    ctx.fail(ErrorKind::Format, "attribute '", name, "' has type ",
             pb::AttributeProto::AttributeType_Name(a->type()), ", expected ",
             pb::AttributeProto::AttributeType_Name(type));
  return *a;
}

}  // namespace

int64_t NodeCtx::attr_int(std::string_view name) const {
  return typed_attr(*this, name, pb::AttributeProto::INT).i();
}
int64_t NodeCtx::attr_int(std::string_view name, int64_t dflt) const {
  return has_attr(name) ? attr_int(name) : dflt;
}
double NodeCtx::attr_float(std::string_view name) const {
  return typed_attr(*this, name, pb::AttributeProto::FLOAT).f();
}
double NodeCtx::attr_float(std::string_view name, double dflt) const {
  return has_attr(name) ? attr_float(name) : dflt;
}
std::string NodeCtx::attr_string(std::string_view name, const std::string& dflt) const {
  return has_attr(name) ? typed_attr(*this, name, pb::AttributeProto::STRING).s() : dflt;
}
std::vector<int64_t> NodeCtx::attr_ints(std::string_view name,
                                        const std::vector<int64_t>& dflt) const {
  if (!has_attr(name)) return dflt;
  const auto& a = typed_attr(*this, name, pb::AttributeProto::INTS);
  return {a.ints().begin(), a.ints().end()};
}
std::vector<double> NodeCtx::attr_floats(std::string_view name,
                                         const std::vector<double>& dflt) const {
  if (!has_attr(name)) return dflt;
  const auto& a = typed_attr(*this, name, pb::AttributeProto::FLOATS);
  return {a.floats().begin(), a.floats().end()};
}
std::vector<std::string> NodeCtx::attr_strings(std::string_view name) const {
  if (!has_attr(name)) return {};
  const auto& a = typed_attr(*this, name, pb::AttributeProto::STRINGS);
  return {a.strings().begin(), a.strings().end()};
}
const pb::GraphProto& NodeCtx::attr_graph(std::string_view name) const {
  return typed_attr(*this, name, pb::AttributeProto::GRAPH).g();
}
Value NodeCtx::attr_tensor(std::string_view name) const {
  const pb::TensorProto& t = typed_attr(*this, name, pb::AttributeProto::TENSOR).t();
  auto it = run_.model->literals.find(&t);
  if (it != run_.model->literals.end()) return it->second.bind(run_.device);
  // A tensor attribute of a node synthesized by function expansion: decode now.
  return value_from_tensor_proto(t, run_.model->base_dir,
                                 where() + " attribute " + std::string(name), run_.device);
}

Value NodeCtx::attr_sparse_tensor(std::string_view name) const {
  const pb::SparseTensorProto& t =
      typed_attr(*this, name, pb::AttributeProto::SPARSE_TENSOR).sparse_tensor();
  auto it = run_.model->literals.find(&t.values());
  if (it != run_.model->literals.end()) return it->second.bind(run_.device);
  return Value(constant(host_tensor_from_sparse_proto(
      t, run_.model->base_dir, where() + " attribute " + std::string(name))));
}

Tensor NodeCtx::scalar_tensor(double v, DType dtype) const {
  HostTensor t = HostTensor::empty(dtype, {});
  t.set_f64(0, v);
  return constant(std::move(t));
}

std::vector<Value> NodeCtx::run_subgraph(const pb::GraphProto& g,
                                         const std::vector<Value>& inputs) const {
  return run_graph(g, inputs, &env_, run_, opsets_);
}

// --- shared helpers ----------------------------------------------------------------------------

Tensor op1(const std::string& kind, const std::vector<Tensor>& inputs,
           const std::vector<NamedAttr>& attrs, const std::string& device) {
  auto outs = tessel::op(kind, inputs, attrs, device);
  TESSEL_ASSERT(outs.size() == 1, kind, " has several outputs");
  return outs[0];
}

int64_t normalize_axis(const NodeCtx& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    ctx.fail(ErrorKind::Shape, "axis ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

std::vector<Value> values(std::vector<Tensor> ts) {
  return std::vector<Value>(std::make_move_iterator(ts.begin()), std::make_move_iterator(ts.end()));
}

int64_t random_seed(const NodeCtx& ctx) {
  if (const pb::AttributeProto* a = ctx.attr("seed"))
    return a->type() == pb::AttributeProto::INT ? a->i() : to_int64(ctx, a->f(), "seed");
  const std::string name = ctx.num_outputs() ? ctx.node().output(0) : ctx.op_type();
  return static_cast<int64_t>(std::hash<std::string>{}(name)&0x7fffffffffffLL);
}

std::string_view canonical_domain(std::string_view domain) {
  return domain == "ai.onnx" ? std::string_view() : domain;
}

const Converter* find_converter(std::string_view domain, std::string_view op_type) {
  // Every family's table, indexed once by "domain:op_type" (looked up for every node of every
  // run). Two families claiming one op is a programming error.
  static const std::unordered_map<std::string, const Converter*> index = [] {
    std::unordered_map<std::string, const Converter*> m;
    for (auto family :
         {elementwise_converters(), shape_converters(), reduction_converters(), nn_converters(),
          resample_converters(), quant_converters(), recurrent_converters(), signal_converters(),
          training_converters(), control_converters(), misc_converters(), detection_converters()})
      for (const Converter& c : family) {
        const bool fresh =
            m.emplace(std::string(c.domain) + ":" + std::string(c.op_type), &c).second;
        TESSEL_ASSERT(fresh, "two ONNX converters for ", c.domain, ":", c.op_type);
      }
    return m;
  }();
  auto it = index.find(std::string(canonical_domain(domain)) + ":" + std::string(op_type));
  return it == index.end() ? nullptr : it->second;
}

// --- function expansion ------------------------------------------------------------------------

namespace {

const pb::FunctionProto* local_function(const ModelState& m, const std::string& domain,
                                        const std::string& op_type) {
  auto it = m.functions.find({std::string(canonical_domain(domain)), op_type});
  return it == m.functions.end() ? nullptr : it->second;
}

const ::onnx::OpSchema* schema_of(const std::string& domain, const std::string& op_type,
                                  int opset) {
  if (opset <= 0) return nullptr;
  return ::onnx::OpSchemaRegistry::Schema(op_type, opset, domain == "ai.onnx" ? "" : domain);
}

pb::TypeProto type_of(const Value& v) {
  pb::TypeProto t;
  if (v.kind == Value::Kind::Tensor) {
    auto* tt = t.mutable_tensor_type();
    tt->set_elem_type(onnx_from_dtype(v.tensor.dtype()));
    auto* shape = tt->mutable_shape();
    for (int64_t d : v.tensor.shape()) shape->add_dim()->set_dim_value(d);
  } else if (v.kind == Value::Kind::Strings) {
    t.mutable_tensor_type()->set_elem_type(pb::TensorProto::STRING);
  }
  return t;
}

// A function body's node with attribute references (ref_attr_name) replaced by the caller's
// attributes. A reference to an attribute the caller lacks takes the operator schema's default
// (`schema`, for schema-defined functions), or is dropped so the body op's own default applies.
pb::NodeProto instantiate(const pb::NodeProto& body_node, const pb::NodeProto& caller,
                          const ::onnx::OpSchema* schema) {
  pb::NodeProto n = body_node;
  n.clear_attribute();
  for (const auto& a : body_node.attribute()) {
    if (a.ref_attr_name().empty()) {
      *n.add_attribute() = a;
      continue;
    }
    const pb::AttributeProto* source = nullptr;
    for (const auto& ca : caller.attribute())
      if (ca.name() == a.ref_attr_name()) source = &ca;
    if (!source && schema) {
      auto it = schema->attributes().find(a.ref_attr_name());
      if (it != schema->attributes().end() &&
          it->second.default_value.type() != pb::AttributeProto::UNDEFINED)
        source = &it->second.default_value;
    }
    if (source) {
      pb::AttributeProto copy = *source;
      copy.set_name(a.name());
      *n.add_attribute() = copy;
    }
  }
  return n;
}

void run_node(const pb::NodeProto& node, Env& env, const RunState& run,
              const std::unordered_map<std::string, int>& opsets);

std::vector<Value> expand_function(const NodeCtx& ctx, const pb::FunctionProto& f,
                                   const ::onnx::OpSchema* schema, const RunState& run,
                                   const std::unordered_map<std::string, int>& caller_opsets) {
  std::unordered_map<std::string, int> opsets = caller_opsets;
  for (const auto& o : f.opset_import())
    opsets[std::string(canonical_domain(o.domain()))] = static_cast<int>(o.version());
  Env scope;  // a function body sees only its inputs
  for (int i = 0; i < f.input_size(); ++i)
    if (ctx.has(i)) scope.set(f.input(i), ctx.value(i));
  for (const auto& body_node : f.node()) {
    pb::NodeProto n = instantiate(body_node, ctx.node(), schema);
    run_node(n, scope, run, opsets);
  }
  std::vector<Value> outs;
  for (int i = 0; i < f.output_size(); ++i) {
    if (!ctx.wants_output(i)) {  // a body may leave outputs the caller did not ask for unset
      outs.emplace_back();
      continue;
    }
    const Value* v = scope.find(f.output(i));
    if (!v)
      ctx.fail(ErrorKind::Format, "function body of ", f.name(), " leaves output '", f.output(i),
               "' undefined");
    outs.push_back(*v);
  }
  return outs;
}

std::vector<Value> convert(NodeCtx& ctx, const RunState& run,
                           const std::unordered_map<std::string, int>& opsets) {
  const pb::NodeProto& node = ctx.node();
  if (const Converter* c = find_converter(node.domain(), node.op_type())) return c->fn(ctx);
  if (const pb::FunctionProto* f = local_function(*run.model, node.domain(), node.op_type()))
    return expand_function(ctx, *f, nullptr, run, opsets);
  if (const ::onnx::OpSchema* s = schema_of(node.domain(), node.op_type(), ctx.opset())) {
    if (s->HasFunction()) return expand_function(ctx, *s->GetFunction(), s, run, opsets);
    if (s->HasContextDependentFunction()) {
      // The builders read their inputs' tensor types (libonnx crashes on other kinds).
      std::vector<pb::TypeProto> types;
      for (int i = 0; i < node.input_size(); ++i) {
        if (ctx.has(i) && !ctx.value(i).is_tensor())
          ctx.fail(ErrorKind::Unsupported, "input ", i, " is ", ctx.value(i).describe(),
                   "; the ONNX function body of ", node.op_type(), " is built for tensors only");
        types.push_back(ctx.has(i) ? type_of(ctx.value(i)) : pb::TypeProto());
      }
      ::onnx::FunctionBodyBuildContextImpl build(node, types);
      pb::FunctionProto f;
      if (!s->BuildContextDependentFunction(build, f))
        ctx.fail(ErrorKind::Unsupported, "its ONNX function body cannot be built for ",
                 "these inputs");
      return expand_function(ctx, f, s, run, opsets);
    }
  }
  ctx.fail(ErrorKind::Unsupported, "has no converter (domain '", node.domain(), "', opset ",
           ctx.opset(), ")");
}

void run_node(const pb::NodeProto& node, Env& env, const RunState& run,
              const std::unordered_map<std::string, int>& opsets) {
  auto it = opsets.find(std::string(canonical_domain(node.domain())));
  const int opset = it == opsets.end() ? 0 : it->second;
  NodeCtx ctx(node, env, run, opset, opsets);
  std::vector<Value> outs = convert(ctx, run, opsets);
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty()) continue;
    if (i >= static_cast<int>(outs.size()))
      ctx.fail(ErrorKind::Unsupported, "output ", i, " ('", node.output(i),
               "') is not produced by this converter");
    env.set(node.output(i), std::move(outs[i]));
  }
}

}  // namespace

std::vector<Value> run_graph(const pb::GraphProto& g, const std::vector<Value>& inputs,
                             const Env* parent, const RunState& run,
                             const std::unordered_map<std::string, int>& opsets) {
  Env env(parent);
  std::unordered_set<std::string> initialized;
  for (const auto& init : g.initializer()) {
    env.set(init.name(), run.model->literal(init).bind(run.device));
    initialized.insert(init.name());
  }
  for (const auto& sparse : g.sparse_initializer()) {
    env.set(sparse.values().name(), run.model->literal(sparse.values()).bind(run.device));
    initialized.insert(sparse.values().name());
  }
  // Inputs with an initializer of the same name (IR < 4 models list weights as inputs) keep
  // the initializer; the others take `inputs` in order.
  size_t bound = 0;
  for (const auto& in : g.input()) {
    if (initialized.count(in.name())) continue;
    if (bound >= inputs.size())
      throw_error(ErrorKind::Format, "[onnx] graph '", g.name(), "': input '", in.name(),
                  "' is not bound (", inputs.size(), " values given)");
    env.set(in.name(), inputs[bound++]);
  }
  for (const auto& node : g.node()) run_node(node, env, run, opsets);
  std::vector<Value> outs;
  for (const auto& out : g.output()) {
    const Value* v = env.find(out.name());
    if (!v)
      throw_error(ErrorKind::Format, "[onnx] graph '", g.name(), "': output '", out.name(),
                  "' is never produced");
    outs.push_back(*v);
  }
  return outs;
}

bool is_supported(const ModelState& m, const std::string& domain, const std::string& op_type,
                  int opset) {
  if (find_converter(domain, op_type)) return true;
  if (local_function(m, domain, op_type)) return true;
  const ::onnx::OpSchema* s = schema_of(domain, op_type, opset);
  if (!s) return false;
  if (s->HasContextDependentFunction()) return true;  // its body depends on the input types
  if (!s->HasFunction()) return false;
  // A fixed function body: every op in it must be supported, at the body's opsets.
  const pb::FunctionProto& f = *s->GetFunction();
  std::unordered_map<std::string, int> opsets = {{domain, opset}};
  for (const auto& o : f.opset_import())
    opsets[std::string(canonical_domain(o.domain()))] = static_cast<int>(o.version());
  for (const auto& n : f.node()) {
    auto it = opsets.find(std::string(canonical_domain(n.domain())));
    if (it == opsets.end() || !is_supported(m, n.domain(), n.op_type(), it->second)) return false;
  }
  return true;
}

}  // namespace tessel::onnx
