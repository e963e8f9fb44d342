// Shape rules of the Training category (optimizers & model surgery), and OptimizerStep's
// decomposition into primitives through the update template shared with tessel::Optimizer.
#include <algorithm>
#include <cmath>
#include <string>

#include "ops/rules.h"
#include "ops/shape_util.h"
#include "ops/vjp_util.h"
#include "train/optimizer_update.h"

namespace tessel {
namespace {

constexpr DTypeSet kParamTypes = dtypes::kFloat;

std::vector<TensorType> infer_optimizer_step(const InferCtx& ctx) {
  const Attrs& a = ctx.attrs();
  UpdateRule rule = update_rule_from_attrs(a);
  const std::string& name =
      enum_info(VariantEnum::OptimizerKind).values[static_cast<int>(rule.kind)].name;
  if (rule.kind == OptimizerKind::Lbfgs)
    ctx.fail(ErrorKind::Unsupported, "kind Lbfgs is not a per-tensor update: it re-evaluates the ",
             "loss and keeps curvature pairs over all parameters; use tessel::LBFGS");
  if (rule.kind == OptimizerKind::Hebbian)
    ctx.fail(ErrorKind::Unsupported, "kind Hebbian learns from pre/post activities, not from a ",
             "gradient; use tessel::hebbian_update");
  double lr = a.f("lr");
  if (!std::isfinite(lr) || lr < 0)
    ctx.fail(ErrorKind::Value, "lr is ", lr, "; expected a finite value >= 0");
  if (a.i("step") < 1) ctx.fail(ErrorKind::Value, "step is ", a.i("step"), "; expected >= 1");
  try {
    check_update_rule(rule, "");
  } catch (const Error& e) {
    ctx.fail(e.kind(), e.what());
  }

  const TensorType& param = ctx.in(0);
  require_dtype(ctx, 0, kParamTypes, "param");
  const TensorType& grad = ctx.in(1);
  if (grad.shape != param.shape)
    ctx.fail(ErrorKind::Shape, "grad has shape ", shape_str(grad.shape), "; expected param's ",
             shape_str(param.shape));
  if (grad.dtype != param.dtype)
    ctx.fail(ErrorKind::DType, "grad has dtype ", dtype_name(grad.dtype), "; expected param's ",
             dtype_name(param.dtype));

  // The signature wants one state or more: rules that keep none (SGD / LARS without momentum)
  // take one that passes through unchanged.
  int num_states = ctx.num_inputs() - 2;
  std::vector<std::string> names = state_names(rule);
  int want = std::max<int>(1, static_cast<int>(names.size()));
  if (num_states != want) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    ctx.fail(ErrorKind::Value, "got ", num_states, " state inputs; ", name,
             " with these attributes keeps ", want,
             names.empty() ? " (unused)" : " (" + list + ")");
  }
  std::vector<TensorType> outs{param};
  for (int i = 2; i < ctx.num_inputs(); ++i) {
    if (!ctx.has(i)) ctx.fail(ErrorKind::Value, "state ", i - 2, " is absent");
    const TensorType& s = ctx.in(i);
    // States may be kept wider than the parameter (f32 moments for a bf16 weight).
    require_dtype(ctx, i, kParamTypes, "state");
    if (s.shape != param.shape)
      ctx.fail(ErrorKind::Shape, "state ", i - 2, " has shape ", shape_str(s.shape),
               "; expected param's ", shape_str(param.shape));
    outs.push_back(s);
  }
  return outs;
}

// The update template with lr and step as constants of the hyper dtype (f64 for an f64
// update, f32 otherwise); a pass-through state (see above) is returned unchanged.
std::vector<Value> decompose_optimizer_step(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  UpdateRule rule = update_rule_from_attrs(node.attrs);
  size_t used = state_names(rule).size();
  std::span<const Value> states = in.subspan(2, used);
  DType compute = update_compute_dtype(b, in[0], states);
  DType hyper = compute == DType::F64 ? DType::F64 : DType::F32;
  Value lr = b.scalar(node.attrs.f("lr"), hyper);
  Value step = b.scalar(static_cast<double>(node.attrs.i("step")), hyper);
  std::vector<Value> out = optimizer_update(b, rule, lr, step, in[0], in[1], states);
  for (size_t i = 2 + used; i < in.size(); ++i) out.push_back(in[i]);
  return out;
}

// mask (true / nonzero = frozen) must broadcast to x without growing it.
std::vector<TensorType> infer_freeze(const InferCtx& ctx) {
  const TensorType& x = ctx.in(0);
  if (ctx.has(1)) {
    const TensorType& m = ctx.in(1);
    require_dtype(ctx, 1, dtypes::kNumeric | dtypes::kFp8 | DTypeSet{DType::Bool}, "mask");
    auto b = broadcast_shapes(m.shape, x.shape);
    if (!b || *b != x.shape)
      ctx.fail(ErrorKind::Shape, "mask ", shape_str(m.shape), " does not broadcast to x ",
               shape_str(x.shape));
  }
  return {x};
}

std::vector<TensorType> infer_graft(const InferCtx& ctx) {
  const TensorType& dst = ctx.in(0);
  const TensorType& src = ctx.in(1);
  if (src.shape != dst.shape)
    ctx.fail(ErrorKind::Shape, "src has shape ", shape_str(src.shape), "; dst's slot is ",
             shape_str(dst.shape));
  if (src.dtype != dst.dtype)
    ctx.fail(ErrorKind::DType, "src has dtype ", dtype_name(src.dtype), "; dst's slot is ",
             dtype_name(dst.dtype));
  return {dst};
}

// Freeze and Graft move no data: forward, each is a copy (StopGradient) of its value — x, or
// src into dst's slot.
std::vector<Value> decompose_freeze(Graph& g, const Node&, std::span<const Value> in) {
  return {GraphBuilder(g).stop_gradient(in[0])};
}

std::vector<Value> decompose_graft(Graph& g, const Node&, std::span<const Value> in) {
  return {GraphBuilder(g).stop_gradient(in[1])};
}

// model.freeze: no gradient without a mask; with one, the gradient is zero where the mask is
// true / nonzero (frozen) and passes elsewhere.
std::vector<Value> vjp_freeze(VjpCtx& c) {
  std::vector<Value> grads(c.inputs.size());
  if (!c.cotangents[0].valid() || !c.needs(0)) return grads;
  if (c.inputs.size() < 2 || !c.inputs[1].valid()) return grads;  // no mask: all frozen
  GraphBuilder& b = c.b;
  Value mask = c.inputs[1];
  if (c.type(mask).dtype != DType::Bool) mask = b.compare(CmpOp::Ne, mask, scalar_like(b, 0, mask));
  Value dy = c.cotangents[0];
  grads[0] = b.where(mask, zeros_like(b, dy), dy);
  return grads;
}

}  // namespace

void register_rules_Training(RuleTable& table) {
  table[OpKind::OptimizerStep].infer = infer_optimizer_step;
  table[OpKind::OptimizerStep].decompose = decompose_optimizer_step;
  table[OpKind::Freeze].infer = infer_freeze;
  table[OpKind::Freeze].decompose = decompose_freeze;
  table[OpKind::Freeze].vjp = vjp_freeze;
  table[OpKind::Graft].infer = infer_graft;
  table[OpKind::Graft].decompose = decompose_graft;
}

}  // namespace tessel
