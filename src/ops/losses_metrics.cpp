// Shape rules of the LossesMetrics category (Loss, LossBackward, Metric) and Metric's
// decomposition into forward kinds.
#include <cmath>

#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

constexpr DTypeSet kLossTypes = dtypes::kFloat | dtypes::kFp8;

// Loss and LossBackward share their operands' contract: input and target of one float dtype and
// one shape (no broadcasting: PyTorch warns about it for mse and rejects it for bce); Huber's
// delta must be positive, as torch requires.
void check_loss_operands(const InferCtx& ctx, int input, int target) {
  require_dtype(ctx, input, kLossTypes, "input");
  if (ctx.in(target).dtype != ctx.in(input).dtype)
    ctx.fail(ErrorKind::DType, "target has dtype ", dtype_name(ctx.in(target).dtype),
             "; expected the input's dtype ", dtype_name(ctx.in(input).dtype));
  if (ctx.in(target).shape != ctx.in(input).shape)
    ctx.fail(ErrorKind::Shape, "target has shape ", shape_str(ctx.in(target).shape),
             "; expected the input's shape ", shape_str(ctx.in(input).shape));
  if (ctx.attrs().e<LossKind>("kind") == LossKind::Huber) {
    double delta = ctx.attrs().f("delta");
    if (!(delta > 0) || !std::isfinite(delta))
      ctx.fail(ErrorKind::Value, "Huber delta is ", delta, "; expected a finite value > 0");
  }
}

std::vector<TensorType> infer_loss(const InferCtx& ctx) {
  check_loss_operands(ctx, 0, 1);
  const TensorType& x = ctx.in(0);
  if (ctx.attrs().e<Reduction>("reduction") == Reduction::None) return {x};
  return {{x.dtype, {}}};
}

std::vector<TensorType> infer_loss_backward(const InferCtx& ctx) {
  check_loss_operands(ctx, 1, 2);
  const TensorType& x = ctx.in(1);
  const TensorType& dloss = ctx.in(0);
  Shape expected = ctx.attrs().e<Reduction>("reduction") == Reduction::None ? x.shape : Shape{};
  if (dloss.dtype != x.dtype)
    ctx.fail(ErrorKind::DType, "dloss has dtype ", dtype_name(dloss.dtype),
             "; expected the input's dtype ", dtype_name(x.dtype));
  if (dloss.shape != expected)
    ctx.fail(ErrorKind::Shape, "dloss has shape ", shape_str(dloss.shape),
             "; expected the forward loss shape ", shape_str(expected));
  return {x};
}

// pred: float logits [N,C] or integer class ids [N]; labels: integer class ids [N].
std::vector<TensorType> infer_metric(const InferCtx& ctx) {
  const TensorType& pred = ctx.in(0);
  const TensorType& labels = ctx.in(1);
  auto kind = ctx.attrs().e<MetricKind>("kind");
  int64_t num_classes = ctx.attrs().i("num_classes");
  if (num_classes < 0)
    ctx.fail(ErrorKind::Value, "num_classes is ", num_classes, "; expected >= 0 (0 = from pred)");
  require_dtype(ctx, 1, dtypes::kInt, "labels");
  if (labels.rank() != 1)
    ctx.fail(ErrorKind::Shape, "labels must be class ids [N], got ", labels.str());
  bool logits = is_float(pred.dtype);
  if (logits) {
    if (pred.rank() != 2) ctx.fail(ErrorKind::Shape, "logits must be [N,C], got ", pred.str());
    if (pred.shape[1] < 1) ctx.fail(ErrorKind::Shape, "logits need at least one class");
    if (num_classes != 0 && num_classes != pred.shape[1])
      ctx.fail(ErrorKind::Shape, "num_classes ", num_classes, " differs from the logits' ",
               pred.shape[1], " classes");
  } else {
    require_dtype(ctx, 0, dtypes::kInt, "pred (float logits [N,C] or integer class ids [N])");
    if (pred.rank() != 1)
      ctx.fail(ErrorKind::Shape, "class-id predictions must be [N], got ", pred.str());
  }
  if (pred.shape[0] != labels.shape[0])
    ctx.fail(ErrorKind::Shape, "pred has ", pred.shape[0], " rows but labels has ",
             labels.shape[0]);
  switch (kind) {
    case MetricKind::Perplexity:
      if (!logits) ctx.fail(ErrorKind::DType, "Perplexity needs float logits [N,C], not class ids");
      break;
    case MetricKind::Accuracy:
      break;
    case MetricKind::F1:
      if (!logits && num_classes == 0 && ctx.attrs().e<F1Average>("average") != F1Average::Binary)
        ctx.fail(ErrorKind::Value,
                 "F1 over class-id predictions needs num_classes (the class count is not in "
                 "the ids' shape)");
      if (logits && pred.shape[1] < 2)
        ctx.fail(ErrorKind::Shape, "F1 needs at least two classes, got ", pred.str());
      break;
  }
  return {{DType::F32, {}}};
}

// ---- Metric's decomposition ---------------------------------------------------------------------

// Per-class F1 = 2·tp / (2·tp + fp + fn) = 2·tp / (predicted + present), 0 where a class is
// neither predicted nor present (scikit-learn's zero_division=0). Counts are f32.
Value f1_of(GraphBuilder& b, Value tp, Value predicted, Value present) {
  return b.div(b.add(tp, tp), b.maximum(b.add(predicted, present), b.scalar(1, DType::F32)));
}

std::vector<Value> decompose_metric(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  const Attrs& a = node.attrs;
  const TensorType pred_t = g.type(in[0]);  // a copy: emitting nodes moves the graph's storage
  const bool logits = is_float(pred_t.dtype);
  const auto kind = a.e<MetricKind>("kind");
  Value labels = b.cast(in[1], DType::I64);
  if (kind == MetricKind::Perplexity) {
    Value ce = b.op1(OpKind::SoftmaxCrossEntropyWithLogits, Attrs(), {in[0], labels});
    return {b.exp(b.cast(ce, DType::F32))};
  }
  Value ids = logits ? b.op1(OpKind::ArgMax, Attrs().set("axis", int64_t{1}), {in[0]})
                     : b.cast(in[0], DType::I64);
  if (kind == MetricKind::Accuracy)
    return {b.mean(b.cast(b.compare(CmpOp::Eq, ids, labels), DType::F32), {0})};
  int64_t classes = a.i("num_classes");
  if (classes == 0) classes = logits ? pred_t.shape[1] : 2;  // Binary needs classes 0 and 1
  auto one_hot = [&](Value x) {
    return b.op1(OpKind::OneHot, Attrs().set("depth", classes).set("dtype", DType::F32), {x});
  };
  Value p = one_hot(ids), t = one_hot(labels);
  Value tp = b.sum(b.mul(p, t), {0}), predicted = b.sum(p, {0}), present = b.sum(t, {0});
  switch (a.e<F1Average>("average")) {
    case F1Average::Binary:
      return {b.reshape(b.narrow(f1_of(b, tp, predicted, present), 0, 1, 1), {})};
    case F1Average::Macro:
      return {b.mean(f1_of(b, tp, predicted, present), {0})};
    case F1Average::Micro:
      return {f1_of(b, b.sum(tp, {0}), b.sum(predicted, {0}), b.sum(present, {0}))};
  }
  TESSEL_ASSERT(false, "unhandled F1Average");
}

}  // namespace

void register_rules_LossesMetrics(RuleTable& table) {
  table[OpKind::Loss].infer = infer_loss;
  table[OpKind::LossBackward].infer = infer_loss_backward;
  table[OpKind::Metric].infer = infer_metric;
  table[OpKind::Metric].decompose = decompose_metric;
}

}  // namespace tessel
