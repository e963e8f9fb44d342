// Recurrent-layer ONNX ops: RNN, GRU, LSTM.
//
// Tessel's Lstm kind is still pending, so the layers are unrolled into one MatMul and a few
// activations per time step.
#include <cctype>
#include <string>

#include "frontends/onnx/convert_util.h"

namespace tessel::onnx {
namespace {

// --- recurrent layers --------------------------------------------------------------------------

// One ONNX RNN activation, with its alpha / beta (consumed in order by those that take them).
struct RnnAct {
  std::string name;
  double alpha = 0, beta = 0;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<RnnAct> rnn_activations(const NodeCtx& ctx, const std::vector<std::string>& dflt,
                                    int num_dirs) {
  std::vector<std::string> names = ctx.attr_strings("activations");
  if (names.empty())
    for (int d = 0; d < num_dirs; ++d) names.insert(names.end(), dflt.begin(), dflt.end());
  if (names.size() != dflt.size() * num_dirs)
    ctx.fail(ErrorKind::Format, "activations lists ", names.size(), " functions; ",
             dflt.size() * num_dirs, " are needed (", dflt.size(), " per direction)");
  const std::vector<double> alphas = ctx.attr_floats("activation_alpha");
  const std::vector<double> betas = ctx.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  std::vector<RnnAct> acts;
  for (const std::string& name : names) {
    RnnAct a{lower(name)};
    auto take = [&](const std::vector<double>& v, size_t& i, double d) {
      return i < v.size() ? v[i++] : d;
    };
    if (a.name == "affine")
      a.alpha = take(alphas, ai, 1.0), a.beta = take(betas, bi, 0.0);
    else if (a.name == "leakyrelu")
      a.alpha = take(alphas, ai, 0.01);
    else if (a.name == "thresholdedrelu")
      a.alpha = take(alphas, ai, 1.0);
    else if (a.name == "scaledtanh")
      a.alpha = take(alphas, ai, 1.0), a.beta = take(betas, bi, 1.0);
    else if (a.name == "hardsigmoid")
      a.alpha = take(alphas, ai, 0.2), a.beta = take(betas, bi, 0.5);
    else if (a.name == "elu")
      a.alpha = take(alphas, ai, 1.0);
    else if (a.name != "relu" && a.name != "tanh" && a.name != "sigmoid" && a.name != "softsign" &&
             a.name != "softplus")
      ctx.fail(ErrorKind::Format, "unknown activation '", name, "'");
    acts.push_back(a);
  }
  return acts;
}

Tensor apply(const NodeCtx& ctx, const RnnAct& a, const Tensor& x) {
  auto s = [&](double v) { return ctx.scalar_tensor(v, x.dtype()); };
  if (a.name == "relu") return act("Relu", x);
  if (a.name == "tanh") return act("Tanh", x);
  if (a.name == "sigmoid") return act("Sigmoid", x);
  if (a.name == "softsign") return act("Softsign", x);
  if (a.name == "softplus") return act("Softplus", x);
  if (a.name == "affine") return x * s(a.alpha) + s(a.beta);
  if (a.name == "leakyrelu") return act("LeakyRelu", x, a.alpha);
  if (a.name == "elu") return act("Elu", x, a.alpha);
  if (a.name == "thresholdedrelu") return where(compare("Gt", x, s(a.alpha)), x, s(0));
  if (a.name == "scaledtanh") return s(a.alpha) * act("Tanh", x * s(a.beta));
  return clamp(x * s(a.alpha) + s(a.beta), 0.0, 1.0);  // hardsigmoid
}

enum class Cell { Rnn, Gru, Lstm };

// RNN / GRU / LSTM unrolled over time: per direction, the input projection of every step in one
// MatMul, then per step one MatMul with R and the gates' activations. With sequence_lens,
// steps past a sequence's end keep its state and give zeros (a device-computed mask), and a
// reverse pass first reverses each sequence within its length (a device-computed gather).
std::vector<Value> recurrent(NodeCtx& ctx, Cell cell) {
  const int gates = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 3 : 4;
  Tensor x = ctx.in(0), w = ctx.in(1), r = ctx.in(2);
  require_float(ctx, x, "X");
  const DType dt = x.dtype();
  const bool batch_first = ctx.attr_int("layout", 0) != 0;
  if (x.rank() != 3) ctx.fail(ErrorKind::Shape, "X must be rank 3, not ", Value(x).describe());
  if (batch_first) x = transpose(x, {1, 0, 2});
  const int64_t steps = x.shape()[0], batch = x.shape()[1], input = x.shape()[2];
  const std::string direction = ctx.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    ctx.fail(ErrorKind::Format, "direction '", direction,
             "' is not forward, reverse or "
             "bidirectional");
  const int dirs = direction == "bidirectional" ? 2 : 1;
  const int64_t hidden =
      ctx.attr_int("hidden_size", w.shape().size() == 3 ? w.shape()[1] / gates : 0);
  const int64_t gh = gates * hidden;
  if (w.shape() != Shape{dirs, gh, input} || r.shape() != Shape{dirs, gh, hidden})
    ctx.fail(ErrorKind::Shape, "W ", Value(w).describe(), " and R ", Value(r).describe(),
             " must be [", dirs, ",", gh, ",", input, "] and [", dirs, ",", gh, ",", hidden, "]");
  Tensor bias = ctx.has(3) ? ctx.in(3) : Tensor();
  if (bias.defined() && bias.shape() != Shape{dirs, 2 * gh})
    ctx.fail(ErrorKind::Shape, "B ", Value(bias).describe(), " must be [", dirs, ",", 2 * gh, "]");
  auto state_in = [&](int i, const char* what) {
    if (!ctx.has(i)) return Tensor();
    Tensor s = ctx.in(i);
    if (batch_first && s.rank() == 3) s = transpose(s, {1, 0, 2});
    if (s.shape() != Shape{dirs, batch, hidden})
      ctx.fail(ErrorKind::Shape, what, " ", Value(s).describe(), " must be [", dirs, ",", batch,
               ",", hidden, "] (layout ", batch_first, ")");
    return s;
  };
  Tensor h0 = state_in(5, "initial_h");
  Tensor c0 = cell == Cell::Lstm ? state_in(6, "initial_c") : Tensor();
  Tensor peep = cell == Cell::Lstm && ctx.has(7) ? ctx.in(7) : Tensor();
  if (peep.defined() && peep.shape() != Shape{dirs, 3 * hidden})
    ctx.fail(ErrorKind::Shape, "P ", Value(peep).describe(), " must be [", dirs, ",", 3 * hidden,
             "]");
  const std::vector<std::string> dflt = cell == Cell::Rnn ? std::vector<std::string>{"Tanh"}
                                        : cell == Cell::Gru
                                            ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                            : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  const std::vector<RnnAct> acts = rnn_activations(ctx, dflt, dirs);
  const bool has_clip = ctx.has_attr("clip");
  const double clip_v = ctx.attr_float("clip", 0);
  auto clip = [&](const Tensor& t) { return has_clip ? clamp(t, -clip_v, clip_v) : t; };
  const bool lbr = ctx.attr_int("linear_before_reset", 0) != 0;
  const bool input_forget = ctx.attr_int("input_forget", 0) != 0;

  // Per-step masks and the within-length reversal, from sequence_lens on the device.
  std::vector<Tensor> masks;
  Tensor rev_index;  // [T, B] i64
  if (ctx.has(4)) {
    Tensor lens = ctx.in(4);
    if (lens.shape() != Shape{batch})
      ctx.fail(ErrorKind::Shape, "sequence_lens ", Value(lens).describe(), " must be [", batch,
               "]");
    lens = reshape(cast(lens, DType::I64), {1, batch});
    std::vector<int64_t> t_idx(static_cast<size_t>(steps));
    for (int64_t t = 0; t < steps; ++t) t_idx[t] = t;
    Tensor t_col = reshape(ctx.vector_tensor(t_idx, DType::I64), {steps, 1});
    Tensor one = ctx.scalar_tensor(1, DType::I64);
    Tensor valid = compare("Lt", t_col, lens);  // [T, B]
    rev_index = where(valid, lens - one - t_col, expand_to(t_col, {steps, batch}));
    for (int64_t t = 0; t < steps; ++t)
      masks.push_back(reshape(narrow(valid, 0, t, 1), {batch, 1}));
  }
  auto gather_time = [&](const Tensor& v) {  // v [T, B, F] reversed within each length
    Tensor idx = expand_to(reshape(rev_index, {steps, batch, 1}), v.shape());
    return op1("GatherElements", {v, idx}, {{"axis", int64_t{0}}});
  };

  std::vector<Tensor> ys, hs, cs;
  for (int d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const RnnAct* f = &acts[d * dflt.size()];
    Tensor wd = take_slice(w, 0, d), rd = take_slice(r, 0, d);
    Tensor xs = x;
    if (reverse && rev_index.defined()) xs = gather_time(x);
    // Input projection of every step: [T·B, I] · Wᵀ -> [T, B, G·H].
    Tensor xw = op1("MatMul", {reshape(xs, {steps * batch, input}), wd}, {{"transpose_b", true}});
    xw = reshape(xw, {steps, batch, gh});
    Tensor wb, rb;
    if (bias.defined()) {
      Tensor bd = take_slice(bias, 0, d);
      wb = narrow(bd, 0, 0, gh), rb = narrow(bd, 0, gh, gh);
      // GRU keeps R's h-gate bias apart: it is applied inside the reset gate's product.
      xw = cell == Cell::Gru ? xw + wb : xw + wb + rb;
    }
    Tensor h =
        h0.defined() ? take_slice(h0, 0, d) : ctx.constant(HostTensor::empty(dt, {batch, hidden}));
    Tensor c =
        c0.defined() ? take_slice(c0, 0, d) : ctx.constant(HostTensor::empty(dt, {batch, hidden}));
    Tensor pi, po, pf;
    if (peep.defined()) {
      Tensor pd = take_slice(peep, 0, d);
      pi = narrow(pd, 0, 0, hidden), po = narrow(pd, 0, hidden, hidden);
      pf = narrow(pd, 0, 2 * hidden, hidden);
    }
    Tensor zero = ctx.scalar_tensor(0, dt), one = ctx.scalar_tensor(1, dt);
    std::vector<Tensor> y(static_cast<size_t>(steps));
    for (int64_t k = 0; k < steps; ++k) {
      // With sequence_lens the reversed input already runs forward; without it, walk back.
      const int64_t t = reverse && !rev_index.defined() ? steps - 1 - k : k;
      Tensor xt = take_slice(xw, 0, t);  // [B, G·H]
      auto gate = [&](const Tensor& v, int g) { return narrow(v, 1, g * hidden, hidden); };
      Tensor h_new, c_new;
      if (cell == Cell::Rnn) {
        h_new = apply(ctx, f[0], clip(xt + op1("MatMul", {h, rd}, {{"transpose_b", true}})));
      } else if (cell == Cell::Gru) {
        Tensor hr = op1("MatMul", {h, rd}, {{"transpose_b", true}});  // [B, 3H]
        if (rb.defined()) hr = hr + rb;
        Tensor z = apply(ctx, f[0], clip(gate(xt, 0) + gate(hr, 0)));
        Tensor rg = apply(ctx, f[0], clip(gate(xt, 1) + gate(hr, 1)));
        Tensor hh;
        if (lbr) {
          hh = gate(xt, 2) + rg * gate(hr, 2);
        } else {
          Tensor rh = narrow(rd, 0, 2 * hidden, hidden);
          hh = gate(xt, 2) + op1("MatMul", {rg * h, rh}, {{"transpose_b", true}});
          if (rb.defined()) hh = hh + narrow(rb, 0, 2 * hidden, hidden);
        }
        Tensor ht = apply(ctx, f[1], clip(hh));
        h_new = (one - z) * ht + z * h;
      } else {
        Tensor g = xt + op1("MatMul", {h, rd}, {{"transpose_b", true}});  // i, o, f, c
        Tensor gi = gate(g, 0), go = gate(g, 1), gf = gate(g, 2), gc = gate(g, 3);
        if (pi.defined()) gi = gi + pi * c, gf = gf + pf * c;
        Tensor i = apply(ctx, f[0], clip(gi));
        Tensor fg = input_forget ? one - i : apply(ctx, f[0], clip(gf));
        c_new = fg * c + i * apply(ctx, f[1], clip(gc));
        if (po.defined()) go = go + po * c_new;
        h_new = apply(ctx, f[0], clip(go)) * apply(ctx, f[2], c_new);
      }
      if (!masks.empty()) {
        y[t] = where(masks[t], h_new, zero);
        h = where(masks[t], h_new, h);
        if (c_new.defined()) c = where(masks[t], c_new, c);
      } else {
        y[t] = h_new;
        h = h_new;
        if (c_new.defined()) c = c_new;
      }
    }
    Tensor yd = stack(ctx, y, 0);  // [T, B, H]
    if (reverse && rev_index.defined()) yd = gather_time(yd);
    ys.push_back(yd);
    hs.push_back(h);
    cs.push_back(c);
  }
  Tensor y = stack(ctx, ys, 1);  // [T, D, B, H]
  Tensor yh = stack(ctx, hs, 0), yc = stack(ctx, cs, 0);
  if (batch_first) {
    y = transpose(y, {2, 0, 1, 3});
    yh = transpose(yh, {1, 0, 2});
    yc = transpose(yc, {1, 0, 2});
  }
  if (cell == Cell::Lstm) return {y, yh, yc};
  return {y, yh};
}

std::vector<Value> rnn(NodeCtx& ctx) { return recurrent(ctx, Cell::Rnn); }
std::vector<Value> gru(NodeCtx& ctx) { return recurrent(ctx, Cell::Gru); }
std::vector<Value> lstm(NodeCtx& ctx) { return recurrent(ctx, Cell::Lstm); }

constexpr Converter kConverters[] = {
    {"", "RNN", rnn},
    {"", "GRU", gru},
    {"", "LSTM", lstm},
};

}  // namespace

std::span<const Converter> recurrent_converters() { return kConverters; }

}  // namespace tessel::onnx
