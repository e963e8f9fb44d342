// Shape rules of the Training category (optimizers & model surgery); all pending kernels.
#include <cmath>

#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

constexpr DTypeSet kParamTypes = dtypes::kFloat | dtypes::kFp8;

// How many state tensors each update rule keeps, all shaped like the parameter (PyTorch's
// optimizer state, in its order); -1 = free-form (L-BFGS history, Hebbian traces). The op's
// signature wants one state or more, so SGD keeps its momentum buffer even at momentum 0.
struct StateLayout {
  int min_states;
  int max_states;  // -1 = unbounded; otherwise equal to min_states
  bool like_param;
};

StateLayout state_layout(OptimizerKind kind, double momentum) {
  switch (kind) {
    case OptimizerKind::Sgd:
      return {1, 1, true};     // momentum buffer
    case OptimizerKind::Adam:  // exp_avg, exp_avg_sq
    case OptimizerKind::AdamW:
    case OptimizerKind::Lamb:
      return {2, 2, true};
    case OptimizerKind::Adamax:
      return {2, 2, true};  // exp_avg, exp_inf
    case OptimizerKind::Adagrad:
      return {1, 1, true};  // sum
    case OptimizerKind::Adadelta:
      return {2, 2, true};          // square_avg, acc_delta
    case OptimizerKind::RmsProp: {  // square_avg (+ momentum buffer)
      int n = momentum > 0 ? 2 : 1;
      return {n, n, true};
    }
    case OptimizerKind::Lion:
      return {1, 1, true};  // exp_avg
    case OptimizerKind::Lars:
      return {1, 1, true};  // momentum buffer
    case OptimizerKind::Lbfgs:
    case OptimizerKind::Hebbian:
      return {1, -1, false};
  }
  return {1, -1, false};
}

void require_finite_at_least(const InferCtx& ctx, const char* name, double lo) {
  double v = ctx.attrs().f(name);
  if (!std::isfinite(v) || v < lo)
    ctx.fail(ErrorKind::Value, name, " is ", v, "; expected a finite value >= ", lo);
}

void require_beta(const InferCtx& ctx, const char* name) {
  double v = ctx.attrs().f(name);
  if (!(v >= 0 && v < 1))
    ctx.fail(ErrorKind::Value, name, " is ", v, "; expected 0 <= ", name, " < 1");
}

std::vector<TensorType> infer_optimizer_step(const InferCtx& ctx) {
  const Attrs& a = ctx.attrs();
  auto kind = a.e<OptimizerKind>("kind");
  require_finite_at_least(ctx, "lr", 0);
  require_finite_at_least(ctx, "eps", 0);
  require_finite_at_least(ctx, "weight_decay", 0);
  require_finite_at_least(ctx, "momentum", 0);
  require_beta(ctx, "beta1");
  require_beta(ctx, "beta2");
  if (a.i("step") < 1) ctx.fail(ErrorKind::Value, "step is ", a.i("step"), "; expected >= 1");
  if (a.b("nesterov") && (kind != OptimizerKind::Sgd || !(a.f("momentum") > 0)))
    ctx.fail(ErrorKind::Value, "nesterov needs kind Sgd with momentum > 0");

  const TensorType& param = ctx.in(0);
  require_dtype(ctx, 0, kParamTypes, "param");
  const TensorType& grad = ctx.in(1);
  if (grad.shape != param.shape)
    ctx.fail(ErrorKind::Shape, "grad has shape ", shape_str(grad.shape), "; expected param's ",
             shape_str(param.shape));
  if (grad.dtype != param.dtype)
    ctx.fail(ErrorKind::DType, "grad has dtype ", dtype_name(grad.dtype), "; expected param's ",
             dtype_name(param.dtype));

  int num_states = ctx.num_inputs() - 2;
  StateLayout layout = state_layout(kind, a.f("momentum"));
  if (num_states < layout.min_states || (layout.max_states >= 0 && num_states > layout.max_states))
    ctx.fail(ErrorKind::Value, "got ", num_states, " state inputs; ",
             enum_info(VariantEnum::OptimizerKind).values[static_cast<int>(kind)].name,
             layout.max_states < 0 ? " keeps at least " : " keeps exactly ", layout.min_states);
  std::vector<TensorType> outs{param};
  for (int i = 2; i < ctx.num_inputs(); ++i) {
    if (!ctx.has(i)) ctx.fail(ErrorKind::Value, "state ", i - 2, " is absent");
    const TensorType& s = ctx.in(i);
    // States may be kept wider than the parameter (f32 moments for a bf16 weight).
    require_dtype(ctx, i, kParamTypes, "state");
    if (layout.like_param && s.shape != param.shape)
      ctx.fail(ErrorKind::Shape, "state ", i - 2, " has shape ", shape_str(s.shape),
               "; expected param's ", shape_str(param.shape));
    outs.push_back(s);
  }
  return outs;
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

}  // namespace

void register_rules_Training(RuleTable& table) {
  table[OpKind::OptimizerStep].infer = infer_optimizer_step;
  table[OpKind::Freeze].infer = infer_freeze;
  table[OpKind::Graft].infer = infer_graft;
}

}  // namespace tessel
