// Training ONNX ops: the ai.onnx.preview.training optimizers Adagrad, Momentum, Adam, and
// Gradient; the loss SoftmaxCrossEntropyLoss.
#include <algorithm>
#include <string>

#include "frontends/onnx/convert_util.h"
#include "frontends/onnx/model_state.h"

namespace tessel::onnx {
namespace {

// --- training (ai.onnx.preview.training) -------------------------------------------------------

// Inputs R, T, then `groups` lists of n tensors each; returns n.
int64_t optimizer_arity(const NodeCtx& ctx, int groups) {
  const int64_t rest = ctx.num_inputs() - 2;
  if (rest <= 0 || rest % groups != 0)
    ctx.fail(ErrorKind::Format, "takes R, T and ", groups, " equally long lists of tensors; got ",
             ctx.num_inputs(), " inputs");
  return rest / groups;
}

std::vector<Value> adagrad(NodeCtx& ctx) {
  const int64_t n = optimizer_arity(ctx, 3);
  const double decay = ctx.attr_float("decay_factor", 0), eps = ctx.attr_float("epsilon", 1e-6);
  const double norm = ctx.attr_float("norm_coefficient", 0);
  std::vector<Value> xs, hs;
  for (int64_t i = 0; i < n; ++i) {
    Tensor x = ctx.in(static_cast<int>(2 + i)), g = ctx.in(static_cast<int>(2 + n + i));
    Tensor h = ctx.in(static_cast<int>(2 + 2 * n + i));
    const DType dt = x.dtype();
    auto s = [&](double v) { return ctx.scalar_tensor(v, dt); };
    Tensor r = cast(ctx.in(0), dt) / (s(1) + cast(ctx.in(1), dt) * s(decay));
    Tensor g_reg = s(norm) * x + g;
    Tensor h_new = h + g_reg * g_reg;
    xs.emplace_back(x - r * g_reg / (act("Sqrt", h_new) + s(eps)));
    hs.emplace_back(h_new);
  }
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

std::vector<Value> momentum(NodeCtx& ctx) {
  const int64_t n = optimizer_arity(ctx, 3);
  const double alpha = ctx.attr_float("alpha"), beta = ctx.attr_float("beta");
  const double norm = ctx.attr_float("norm_coefficient");
  const std::string mode = ctx.attr_string("mode");
  if (mode != "standard" && mode != "nesterov")
    ctx.fail(ErrorKind::Format, "mode '", mode, "' is not standard or nesterov");
  std::vector<Value> xs, vs;
  for (int64_t i = 0; i < n; ++i) {
    Tensor x = ctx.in(static_cast<int>(2 + i)), g = ctx.in(static_cast<int>(2 + n + i));
    Tensor v = ctx.in(static_cast<int>(2 + 2 * n + i));
    const DType dt = x.dtype();
    auto s = [&](double k) { return ctx.scalar_tensor(k, dt); };
    Tensor r = cast(ctx.in(0), dt);
    // The first step (T = 0) takes the gradient unscaled.
    Tensor beta_t =
        where(compare("Gt", ctx.in(1), ctx.scalar_tensor(0, ctx.in(1).dtype())), s(beta), s(1));
    Tensor g_reg = s(norm) * x + g;
    Tensor v_new = s(alpha) * v + beta_t * g_reg;
    xs.emplace_back(mode == "standard" ? x - r * v_new : x - r * (g_reg + s(alpha) * v_new));
    vs.emplace_back(v_new);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  return xs;
}

std::vector<Value> adam(NodeCtx& ctx) {
  const int64_t n = optimizer_arity(ctx, 4);
  const double alpha = ctx.attr_float("alpha", 0.9), beta = ctx.attr_float("beta", 0.999);
  const double eps = ctx.attr_float("epsilon", 1e-6), norm = ctx.attr_float("norm_coefficient", 0);
  const double post = ctx.attr_float("norm_coefficient_post", 0);
  std::vector<Value> xs, vs, hs;
  for (int64_t i = 0; i < n; ++i) {
    Tensor x = ctx.in(static_cast<int>(2 + i)), g = ctx.in(static_cast<int>(2 + n + i));
    Tensor v = ctx.in(static_cast<int>(2 + 2 * n + i)), h = ctx.in(static_cast<int>(2 + 3 * n + i));
    const DType dt = x.dtype();
    auto s = [&](double k) { return ctx.scalar_tensor(k, dt); };
    Tensor r = cast(ctx.in(0), dt), t = cast(ctx.in(1), dt);
    Tensor g_reg = s(norm) * x + g;
    Tensor v_new = s(alpha) * v + s(1 - alpha) * g_reg;
    Tensor h_new = s(beta) * h + s(1 - beta) * g_reg * g_reg;
    Tensor h_sqrt = act("Sqrt", h_new) + s(eps);
    // Bias correction from the second step on (T > 0).
    Tensor corrected =
        r * act("Sqrt", s(1) - binary("Pow", s(beta), t)) / (s(1) - binary("Pow", s(alpha), t));
    Tensor r_adj = where(compare("Gt", t, s(0)), corrected, r);
    Tensor x_new = x - r_adj * (v_new / h_sqrt);
    xs.emplace_back(s(1 - post) * x_new);
    vs.emplace_back(v_new);
    hs.emplace_back(h_new);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

// The graph that holds `node` (by identity), searched through subgraphs; nullptr if none (a
// node made by function expansion).
const pb::GraphProto* graph_holding(const pb::GraphProto& g, const pb::NodeProto* node) {
  for (const auto& n : g.node()) {
    if (&n == node) return &g;
    for (const auto& a : n.attribute()) {
      if (a.has_g())
        if (const pb::GraphProto* found = graph_holding(a.g(), node)) return found;
      for (const auto& sub : a.graphs())
        if (const pb::GraphProto* found = graph_holding(sub, node)) return found;
    }
  }
  return nullptr;
}

// Gradient: d(Σ y)/d(x) for the named xs, by re-running the nodes between them and y under
// tessel::vjp.
std::vector<Value> gradient(NodeCtx& ctx) {
  const std::vector<std::string> xs = ctx.attr_strings("xs");
  const std::string y = ctx.attr_string("y");
  if (xs.empty() || y.empty()) ctx.fail(ErrorKind::Format, "needs the xs and y attributes");
  if (ctx.num_inputs() < static_cast<int>(xs.size()))
    ctx.fail(ErrorKind::Format, "takes the ", xs.size(), " xs as its first inputs");
  const pb::GraphProto* g = graph_holding(ctx.run().model->proto.graph(), &ctx.node());
  if (!g) ctx.fail(ErrorKind::Unsupported, "is not a node of the model's graphs");
  // The nodes before this one that y depends on, stopping at the xs.
  std::vector<const pb::NodeProto*> before;
  for (const auto& n : g->node()) {
    if (&n == &ctx.node()) break;
    before.push_back(&n);
  }
  std::vector<std::string> needed = {y};
  auto is_needed = [&](const std::string& name) {
    return std::find(needed.begin(), needed.end(), name) != needed.end();
  };
  std::vector<const pb::NodeProto*> slice;
  for (auto it = before.rbegin(); it != before.rend(); ++it) {
    bool used = false;
    for (const auto& o : (*it)->output()) used = used || is_needed(o);
    if (!used) continue;
    slice.insert(slice.begin(), *it);
    for (const auto& i : (*it)->input())
      if (std::find(xs.begin(), xs.end(), i) == xs.end()) needed.push_back(i);
  }
  pb::GraphProto sub;
  sub.set_name("gradient");
  for (const std::string& x : xs) sub.add_input()->set_name(x);
  for (const pb::NodeProto* n : slice) *sub.add_node() = *n;
  sub.add_output()->set_name(y);
  std::vector<Tensor> primals;
  for (size_t i = 0; i < xs.size(); ++i) {
    Tensor x = ctx.in(static_cast<int>(i));
    require_float(ctx, x, "each x");
    primals.push_back(x);
  }
  const NodeCtx& c = ctx;
  TensorFn fn = [&c, &sub](const std::vector<Tensor>& args) {
    std::vector<Value> in(args.begin(), args.end());
    std::vector<Value> out = c.run_subgraph(sub, in);
    if (!out[0].is_tensor()) c.fail(ErrorKind::DType, "y is not a tensor");
    return std::vector<Tensor>{out[0].tensor};
  };
  // The forward pass once for y's type, then the pullback of ones.
  Tensor y_value = fn(primals)[0];
  require_float(ctx, y_value, "y");
  Tensor ones = expand_to(ctx.scalar_tensor(1, y_value.dtype()), y_value.shape());
  VjpResult r = vjp(fn, primals, {ones});
  return values(r.vjps);
}

// --- losses ------------------------------------------------------------------------------------

// SoftmaxCrossEntropyLoss natively: its ONNX function body lists log_prob as an output even
// when the node asks only for the loss, which the function expansion rejects.
//   log_prob = log_softmax(scores, axis 1); loss_i = -log_prob[i, label_i] · w[label_i], 0 where
//   label_i == ignore_index; mean: Σ loss_i / Σ w[label_i] over the labels not ignored.
std::vector<Value> softmax_cross_entropy_loss(NodeCtx& ctx) {
  Tensor scores = ctx.in(0), labels = ctx.in(1);
  require_float(ctx, scores, "scores");
  if (!is_integer(labels.dtype()))
    ctx.fail(ErrorKind::DType, "labels must be integers, not ", dtype_name(labels.dtype()));
  const int64_t rank = scores.rank();
  Shape want = scores.shape();
  if (rank >= 2) want.erase(want.begin() + 1);
  if (rank < 2 || labels.shape() != want)
    ctx.fail(ErrorKind::Shape, "scores ", Value(scores).describe(), " and labels ",
             Value(labels).describe(), " must be [N, C, d...] and [N, d...]");
  const std::string reduction = ctx.attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    ctx.fail(ErrorKind::Format, "reduction '", reduction, "' is not none, sum or mean");
  const DType dt = scores.dtype();
  Tensor log_prob = op1("Softmax", {scores}, {{"axis", int64_t{1}}, {"log", true}});
  labels = cast(labels, DType::I64);
  Tensor keep, safe = labels;  // keep: the labels not ignored
  if (ctx.has_attr("ignore_index")) {
    Tensor ii = ctx.scalar_tensor(static_cast<double>(ctx.attr_int("ignore_index")), DType::I64);
    keep = compare("Ne", labels, ii);
    safe = where(keep, labels, ctx.scalar_tensor(0, DType::I64));
  } else {
    keep = compare("Eq", labels, labels);
  }
  Tensor picked = squeeze_axis(
      op1("GatherElements", {log_prob, unsqueeze_axis(safe, 1)}, {{"axis", int64_t{1}}}), 1);
  Tensor zero = ctx.scalar_tensor(0, dt);
  Tensor w = ctx.has(2) ? take(cast(ctx.in(2), dt), safe, 0)
                        : expand_to(ctx.scalar_tensor(1, dt), picked.shape());
  w = where(keep, w, zero);
  Tensor loss = -(picked * w);
  if (reduction == "sum") loss = tessel::sum(loss);
  if (reduction == "mean") loss = tessel::sum(loss) / tessel::sum(w);
  return {loss, log_prob};
}

constexpr Converter kConverters[] = {
    {"ai.onnx.preview.training", "Adagrad", adagrad},
    {"ai.onnx.preview.training", "Momentum", momentum},
    {"ai.onnx.preview.training", "Adam", adam},
    {"ai.onnx.preview.training", "Gradient", gradient},
    {"", "SoftmaxCrossEntropyLoss", softmax_cross_entropy_loss},
};

}  // namespace

std::span<const Converter> training_converters() { return kConverters; }

}  // namespace tessel::onnx
