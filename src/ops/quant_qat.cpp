// Shape rules of the QuantQat category (kernels pending: "quantization").
//
// A scale (FakeQuantize's state, the LSQ scale, the STE backward's scale) is per tensor (one
// value) or per channel along an axis; as a tensor it must broadcast to x without changing x's
// shape. FakeQuantize's state is the running / calibrated scale: absent for PerBatch (the scale is
// recomputed from x, per channel along `axis`), required for Ema and Fixed.
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

void check_bits(const InferCtx& ctx) {
  int64_t bits = ctx.attrs().i("bits");
  if (bits < 2 || bits > 16)
    ctx.fail(ErrorKind::Value, "bits=", bits, " is out of range; expected 2 to 16");
}

// Input s is a scale for x (input xi): one value, or a tensor broadcasting to x's shape.
void check_scale_for(const InferCtx& ctx, int s, int xi, const char* what) {
  require_dtype(ctx, s, dtypes::kFloat, what);
  const TensorType& scale = ctx.in(s);
  if (scale.numel() == 1 && scale.rank() <= 1) return;
  auto b = broadcast_shapes(scale.shape, ctx.in(xi).shape);
  if (!b || *b != ctx.in(xi).shape)
    ctx.fail(ErrorKind::Shape, what, " ", scale.str(), " must be one value or broadcast to x ",
             shape_str(ctx.in(xi).shape));
}

std::vector<TensorType> infer_fake_quantize(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat, "x");
  check_bits(ctx);
  const TensorType& x = ctx.in(0);
  auto mode = ctx.attrs().e<ScaleMode>("scale_mode");
  double decay = ctx.attrs().f("decay");
  if (!(decay >= 0 && decay <= 1))
    ctx.fail(ErrorKind::Value, "decay=", decay, " must be in [0, 1]");
  int axis = x.rank() > 0 ? normalize_axis(ctx, ctx.attrs().i("axis"), x.rank()) : 0;
  bool needs_state = mode != ScaleMode::PerBatch;
  if (needs_state && !ctx.has(1))
    ctx.fail(ErrorKind::Value, "scale_mode ", mode == ScaleMode::Ema ? "Ema" : "Fixed",
             " needs the state (scale) input");
  if (!needs_state && ctx.has(1))
    ctx.fail(ErrorKind::Value, "scale_mode PerBatch recomputes its scale: state must be absent");
  if (ctx.has(1)) {
    require_dtype(ctx, 1, dtypes::kFloat, "state");
    const TensorType& s = ctx.in(1);
    bool per_tensor = s.numel() == 1 && s.rank() <= 1;
    bool per_channel = x.rank() > 0 && s.rank() == 1 && s.shape[0] == x.shape[axis];
    if (!per_tensor && !per_channel)
      ctx.fail(ErrorKind::Shape, "state ", s.str(), " must be one value or [x.shape[", axis,
               "] = ", x.rank() > 0 ? x.shape[axis] : 1, "]");
  }
  return {x};
}

// dy, x, scale -> dx (STE); also the LSQ backward w.r.t. x.
std::vector<TensorType> infer_ste_backward(const InferCtx& ctx) {
  require_dtype(ctx, 1, dtypes::kFloat, "x");
  same_dtype(ctx, {0, 1});
  if (ctx.in(0).shape != ctx.in(1).shape)
    ctx.fail(ErrorKind::Shape, "dy ", ctx.in(0).str(), " must have x's shape ", ctx.in(1).str());
  check_bits(ctx);
  check_scale_for(ctx, 2, 1, "scale");
  return {ctx.in(1)};
}

std::vector<TensorType> infer_lsq(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat, "x");
  check_bits(ctx);
  check_scale_for(ctx, 1, 0, "scale");
  return {ctx.in(0)};
}

// dy, x, scale -> dscale, shaped like the scale (the gradient summed over what it broadcasts).
std::vector<TensorType> infer_lsq_backward_scale(const InferCtx& ctx) {
  infer_ste_backward(ctx);
  return {ctx.in(2)};
}

}  // namespace

void register_rules_QuantQat(RuleTable& table) {
  table[OpKind::FakeQuantize].infer = infer_fake_quantize;
  table[OpKind::FakeQuantizeBackward].infer = infer_ste_backward;
  table[OpKind::FakeQuantizeLSQ].infer = infer_lsq;
  table[OpKind::FakeQuantizeLSQBackwardX].infer = infer_ste_backward;
  table[OpKind::FakeQuantizeLSQBackwardScale].infer = infer_lsq_backward_scale;
}

}  // namespace tessel
