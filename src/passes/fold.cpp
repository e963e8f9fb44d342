#include <cmath>

#include "passes/passes.h"

namespace tessel {

// Evaluates nodes whose inputs are all constants on the reference backend (the oracle), when
// their outputs are small. Random kinds fold too: they are pure functions of their seed.
Graph fold_constants(const Graph& g, int64_t max_elements) {
  const Backend& ref = backend("reference");
  return rewrite_graph(g, [&](Graph& out, const Node& n, std::span<const Value> in) {
    if (n.kind == OpKind::Input || n.kind == OpKind::Param || n.kind == OpKind::Constant ||
        in.empty())
      return std::vector<Value>{};
    for (Value v : in)
      if (v.valid() && out.node(v.node).kind != OpKind::Constant) return std::vector<Value>{};
    for (const TensorType& t : n.outputs)
      if (t.numel() > max_elements) return std::vector<Value>{};
    Graph sub;
    std::vector<Value> sub_in;
    for (Value v : in)
      sub_in.push_back(v.valid() ? sub.constant(*out.node(v.node).literal) : Value{});
    sub.outputs = sub.add(n.kind, n.attrs, sub_in, n.name);
    std::vector<HostTensor> results;
    try {
      results = ref.compile(legalize(sub, ref))->run({});
    } catch (const Error&) {
      return std::vector<Value>{};  // leave it for run time, where the error has its context
    }
    std::vector<Value> folded;
    for (HostTensor& t : results) folded.push_back(out.constant(std::move(t), n.name));
    return folded;
  });
}

// A frozen batch norm after a convolution (Conv or ConvTranspose2d) whose weights and statistics
// are constants is folded into the convolution: with s = gamma / sqrt(var + eps) per output
// channel, w' = w·s and b' = (b − mean)·s + beta (computed in f64). One pass over the output
// fewer; f32 / f64 only.
Graph fold_batch_norms(const Graph& g) {
  std::vector<int> uses(g.size(), 0);
  for (const Node& n : g.nodes())
    for (Value v : n.inputs)
      if (v.valid()) ++uses[v.node];
  for (Value v : g.outputs) ++uses[v.node];
  auto constant = [&](Value v) { return v.valid() && g.node(v.node).kind == OpKind::Constant; };
  return rewrite_graph(g, [&](Graph& out, const Node& n, std::span<const Value> in) {
    if (n.kind != OpKind::BatchNormInference) return std::vector<Value>{};
    const Node& conv = g.node(n.inputs[0].node);
    const DType dt = n.outputs[0].dtype;
    const bool transposed = conv.kind == OpKind::ConvTranspose2d;
    if ((conv.kind != OpKind::Conv && !transposed) || uses[conv.id] != 1 ||
        (dt != DType::F32 && dt != DType::F64))
      return std::vector<Value>{};
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (n.inputs[i].valid() && !constant(n.inputs[i])) return std::vector<Value>{};
    if (!constant(conv.inputs[1]) ||
        (conv.inputs.size() > 2 && conv.inputs[2].valid() && !constant(conv.inputs[2])))
      return std::vector<Value>{};
    auto lit = [&](Value v) { return g.node(v.node).literal->contiguous(); };
    auto input = [&](size_t i) {
      return i < n.inputs.size() && n.inputs[i].valid() ? lit(n.inputs[i]) : HostTensor{};
    };
    const HostTensor mean = input(1), var = input(2), gamma = input(3), beta = input(4);
    const HostTensor w = lit(conv.inputs[1]);
    const HostTensor b =
        conv.inputs.size() > 2 && conv.inputs[2].valid() ? lit(conv.inputs[2]) : HostTensor{};
    // Conv's w is [O, C/groups, k...]; ConvTranspose2d's [C, O/groups, kh, kw], its output
    // channel (c / (C/groups))·(O/groups) + j for w[c, j].
    const int64_t groups = conv.attrs.i("groups");
    const int64_t per_out = transposed ? w.shape[1] : 0;  // O/groups
    const int64_t channels = transposed ? per_out * groups : w.shape[0];
    const int64_t per =
        transposed ? w.shape[2] * w.shape[3] : w.numel() / std::max<int64_t>(channels, 1);
    const int64_t in_per_group = transposed ? w.shape[0] / std::max<int64_t>(groups, 1) : 0;
    auto channel_of = [&](int64_t i) {  // the output channel of weight element i
      if (!transposed) return i / per;
      const int64_t j = i / per % per_out, c = i / (per * per_out);
      return c / in_per_group * per_out + j;
    };
    // Channel o of a statistic ([C], or one value broadcast); `fallback` when it is absent.
    auto at = [&](const HostTensor& t, int64_t o, double fallback) {
      return !t.storage ? fallback : t.get_f64(t.numel() == 1 ? 0 : o);
    };
    for (const HostTensor* t : {&mean, &var, &gamma, &beta})
      if (t->storage && t->numel() != 1 && t->numel() != channels) return std::vector<Value>{};
    const double eps = n.attrs.f("eps");
    HostTensor w2 = HostTensor::empty(w.dtype, w.shape), b2 = HostTensor::empty(dt, {channels});
    std::vector<double> scale(static_cast<size_t>(channels));
    for (int64_t o = 0; o < channels; ++o) {
      scale[o] = at(gamma, o, 1.0) / std::sqrt(at(var, o, 0.0) + eps);
      b2.set_f64(o, (at(b, o, 0.0) - at(mean, o, 0.0)) * scale[o] + at(beta, o, 0.0));
    }
    for (int64_t i = 0; i < w.numel(); ++i) w2.set_f64(i, w.get_f64(i) * scale[channel_of(i)]);
    const std::vector<Value> conv_inputs = {
        in[0].valid() ? out.node(in[0].node).inputs[0] : Value{},
        out.constant(std::move(w2), g.node(conv.inputs[1].node).name),
        out.constant(std::move(b2), n.name)};
    return out.add(conv.kind, conv.attrs, conv_inputs, conv.name);
  });
}

}  // namespace tessel
