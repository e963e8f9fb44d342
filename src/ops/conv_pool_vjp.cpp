// VJP rules of the convolution and pooling kinds, and the decompositions of the Backward kinds
// they emit (Conv{2,3}dBackward{Input,Weight}, MaxPool{2,3}dBackward) into forward kinds.
//
// Conv pulls back through Conv{2,3}dBackward{Input,Weight} (1-D as 2-D with a unit height).
// ConvTranspose2d is the adjoint of a convolution: its dx is a forward Conv of dy, its dw a
// Conv2dBackwardWeight with x and dy in each other's roles. Max pooling pulls back through
// MaxPool{2,3}dBackward; the other pools use window tables (every output's in-bounds input
// positions, computed from the static shapes): averaging pools scatter-add dy / divisor to
// their taps, AdaptiveMax (and the MaxPool backward kinds' decomposition) routes dy to the
// ArgMax of each gathered window.
#include <cmath>
#include <limits>

#include "ops/conv_geometry.h"
#include "ops/vjp_util.h"

namespace tessel {
namespace {

// The axes [from, to).
std::vector<int64_t> iota_axes(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t i = from; i < to; ++i) v.push_back(i);
  return v;
}

// `s` with a unit dim inserted before the last: a 1-D window as 2-D.
Shape lift_1d(const Shape& s) { return {s[0], s[1], 1, s[2]}; }

// The attributes of a 1-D window as those of the 2-D window over [1, W].
Attrs lift_1d_attrs(const Attrs& a, const WindowAttrs& w, bool pool) {
  Attrs out = a;
  out.set("strides", Shape{1, w.strides[0]});
  out.set("dilations", Shape{1, w.dilations[0]});
  out.set("pads", Shape{0, w.pads.begin[0], 0, w.pads.end[0]});
  if (pool) out.set("kernel", Shape{1, a.ints("kernel")[0]});
  return out;
}

// ---- Conv ---------------------------------------------------------------------------------------

// v [N, C, ...] summed over every axis but the channel axis: [C].
Value channel_sum(GraphBuilder& b, Value v) {
  std::vector<int64_t> axes = iota_axes(0, b.type(v).rank());
  axes.erase(axes.begin() + 1);
  return b.sum(v, axes);
}

std::vector<Value> conv_vjp(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value dy = ctx.cotangents[0], x = ctx.inputs[0], w = ctx.inputs[1];
  std::vector<Value> grads(ctx.inputs.size());
  if (ctx.needs(2)) grads[2] = channel_sum(b, dy);
  if (!ctx.needs(0) && !ctx.needs(1)) return grads;
  const Shape xs = ctx.type(x).shape, ws = ctx.type(w).shape;  // copies: the graph grows
  const int sd = static_cast<int>(xs.size()) - 2;
  Attrs a = ctx.node.attrs;
  Shape xs2 = xs, ws2 = ws;
  if (sd == 1) {
    a = lift_1d_attrs(a, conv_window_attrs(a, 1), false);
    xs2 = lift_1d(xs);
    ws2 = lift_1d(ws);
    x = b.reshape(x, xs2);
    w = b.reshape(w, ws2);
    dy = b.reshape(dy, lift_1d(ctx.type(dy).shape));
  }
  const bool three = sd == 3;
  if (ctx.needs(0)) {
    Value dx = b.op1(three ? OpKind::Conv3dBackwardInput : OpKind::Conv2dBackwardInput,
                     Attrs(a).set("input_shape", xs2), {dy, w});
    grads[0] = b.reshape(dx, xs);
  }
  if (ctx.needs(1)) {
    Value dw = b.op1(three ? OpKind::Conv3dBackwardWeight : OpKind::Conv2dBackwardWeight,
                     Attrs(a).set("weight_shape", ws2), {dy, x});
    grads[1] = b.reshape(dw, ws);
  }
  return grads;
}

// ---- ConvTranspose2d ----------------------------------------------------------------------------

// y = ConvTranspose2d(x, w) is Conv2dBackwardInput(x, w) for a convolution from y's shape to
// x's; that convolution of y's shape may have more rows / columns than x (output_padding >=
// stride, allowed when below the dilation), which hold no x: dx drops them, and dw sees x
// zero-padded to them.
std::vector<Value> conv_transpose2d_vjp(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  Value dy = ctx.cotangents[0], x = ctx.inputs[0], w = ctx.inputs[1];
  std::vector<Value> grads(ctx.inputs.size());
  if (ctx.needs(2)) grads[2] = channel_sum(b, dy);
  if (!ctx.needs(0) && !ctx.needs(1)) return grads;
  const Shape xs = ctx.type(x).shape, ws = ctx.type(w).shape, ys = ctx.type(dy).shape;
  const WindowAttrs win = conv_window_attrs(ctx.node.attrs, 2);
  Attrs conv = Attrs()
                   .set("strides", win.strides)
                   .set("dilations", win.dilations)
                   .set("pads", win.pads.begin_end())
                   .set("groups", ctx.node.attrs.i("groups"));
  Shape conv_x = xs;  // the convolution's output shape
  for (int d = 0; d < 2; ++d)
    conv_x[2 + d] = window_out_size(ys[2 + d], win.pads.begin[d], win.pads.end[d], ws[2 + d],
                                    win.strides[d], win.dilations[d]);
  if (ctx.needs(0)) {
    Value dx = b.op1(OpKind::Conv, conv, {dy, w, Value{}});
    for (int d = 0; d < 2; ++d)
      if (conv_x[2 + d] != xs[2 + d]) dx = b.narrow(dx, 2 + d, 0, xs[2 + d]);
    grads[0] = dx;
  }
  if (ctx.needs(1)) {
    Value xp = x;
    if (conv_x != xs)
      xp = b.op1(OpKind::Pad,
                 Attrs().set("pads", Shape{0, 0, 0, 0, 0, 0, conv_x[2] - xs[2], conv_x[3] - xs[3]}),
                 {x});
    grads[1] = b.op1(OpKind::Conv2dBackwardWeight, Attrs(conv).set("weight_shape", ws), {xp, dy});
  }
  return grads;
}

// ---- Window tables ------------------------------------------------------------------------------

// Per output position of a pool (row-major over the output's spatial dims), its in-bounds input
// positions as flat indices into the input's spatial dims, `taps` slots each; unused slots hold
// `in_size` (one past the input: a padding slot). divisor: Avg's divisor of each output.
struct WindowTable {
  int64_t in_size = 1, outputs = 1, taps = 1;
  std::vector<int64_t> index;
  std::vector<double> divisor;
};

// One spatial dim's windows: per output, its in-bounds input positions and its window clipped
// to the padded input (count_include_pad's divisor).
struct DimWindows {
  std::vector<std::vector<int64_t>> positions;
  std::vector<int64_t> padded_size;
};

// Kernel windows [o·stride − pad_begin, + (k − 1)·dilation] or, when `kernel` is 0, PyTorch's
// adaptive windows [floor(o·in/out), ceil((o + 1)·in/out)).
DimWindows dim_windows(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dil,
                       int64_t pb, int64_t pe) {
  DimWindows w;
  for (int64_t o = 0; o < out; ++o) {
    int64_t lo, hi, step = 1;
    if (kernel == 0) {
      lo = o * in / out;
      hi = ((o + 1) * in + out - 1) / out;
    } else {
      lo = o * stride - pb;
      hi = lo + (kernel - 1) * dil + 1;
      step = dil;
    }
    std::vector<int64_t> pos;
    for (int64_t q = lo; q < hi; q += step)
      if (q >= 0 && q < in) pos.push_back(q);
    // Adaptive windows have no padded size: Pool's shape rule rejects count_include_pad for them.
    w.padded_size.push_back(kernel == 0 ? 1 : std::min(hi, in + pe) - lo);
    w.positions.push_back(std::move(pos));
  }
  return w;
}

// The window table of a pool from input spatial shape `in` to output spatial shape `out` under
// `a` (kernel empty: adaptive windows).
WindowTable window_table(const Attrs& a, const Shape& in, const Shape& out) {
  const int sd = static_cast<int>(in.size());
  const std::vector<int64_t> kernel = a.ints("kernel");
  const WindowAttrs win = pool_window_attrs(a, sd);
  const bool include_pad = a.has("count_include_pad") && a.b("count_include_pad");
  std::vector<DimWindows> dims;
  WindowTable t;
  for (int d = 0; d < sd; ++d) {
    dims.push_back(dim_windows(in[d], out[d], kernel.empty() ? 0 : kernel[d], win.strides[d],
                               win.dilations[d], win.pads.begin[d], win.pads.end[d]));
    int64_t widest = 0;
    for (const auto& p : dims.back().positions)
      widest = std::max<int64_t>(widest, static_cast<int64_t>(p.size()));
    t.in_size *= in[d];
    t.outputs *= out[d];
    t.taps *= widest;
  }
  t.index.assign(t.outputs * t.taps, t.in_size);
  std::vector<int64_t> o(sd, 0);
  for (int64_t q = 0; q < t.outputs; ++q) {
    // The cartesian product of the dims' positions, row-major.
    std::vector<int64_t> flat = {0};
    double count = 1, padded = 1;
    for (int d = 0; d < sd; ++d) {
      std::vector<int64_t> next;
      for (int64_t f : flat)
        for (int64_t p : dims[d].positions[o[d]]) next.push_back(f * in[d] + p);
      flat = std::move(next);
      count *= static_cast<double>(dims[d].positions[o[d]].size());
      padded *= static_cast<double>(dims[d].padded_size[o[d]]);
    }
    std::copy(flat.begin(), flat.end(), t.index.begin() + q * t.taps);
    t.divisor.push_back(include_pad ? padded : count);
    for (int d = sd - 1; d >= 0 && ++o[d] == out[d]; --d) o[d] = 0;
  }
  return t;
}

// The spatial dims of a pooled tensor: its last `sd`.
Shape spatial(const Shape& s, int sd) { return Shape(s.end() - sd, s.end()); }

// dx of shape x_shape [..., *in]: updates [planes, outputs·taps] scatter-added at the table's
// positions (padding slots dropped).
Value scatter_windows(GraphBuilder& b, const WindowTable& t, Value updates, const Shape& x_shape) {
  const int64_t planes = b.type(updates).shape[0];
  Value zeros = b.expand(scalar_like(b, 0, updates), {planes, t.in_size + 1});
  Value dx = b.op1(OpKind::ScatterAdd, Attrs().set("axis", int64_t{1}),
                   {zeros, i64_vector(b, t.index), updates});
  return b.reshape(b.narrow(dx, 1, 0, t.in_size), x_shape);
}

// dx of an averaging pool: dy / divisor added to every tap of each window.
Value average_pool_backward(GraphBuilder& b, const WindowTable& t, Value dy, const Shape& x_shape) {
  const int64_t planes = shape_numel(b.type(dy).shape) / t.outputs;
  std::vector<double> inv;
  for (double d : t.divisor) inv.push_back(1.0 / d);
  Value scale = b.cast(b.graph().constant(HostTensor::from_vector(DType::F64, {t.outputs}, inv)),
                       b.type(dy).dtype);
  Value per_output = b.mul(b.reshape(dy, {planes, t.outputs}), scale);
  Value updates =
      b.expand(b.reshape(per_output, {planes, t.outputs, 1}), {planes, t.outputs, t.taps});
  return scatter_windows(b, t, b.reshape(updates, {planes, t.outputs * t.taps}), x_shape);
}

// dx of a max pool: each dy element goes to the ArgMax of its window gathered from x (padding
// slots read −inf, so an in-bounds tap always wins; ties and NaN: the first).
Value max_pool_backward(GraphBuilder& b, const WindowTable& t, Value dy, Value x) {
  const Shape x_shape = b.type(x).shape;
  const int64_t planes = shape_numel(x_shape) / t.in_size, q = t.outputs, k = t.taps;
  Value neg_inf =
      b.expand(scalar_like(b, -std::numeric_limits<double>::infinity(), x), {planes, 1});
  Value padded = b.concat({b.reshape(x, {planes, t.in_size}), neg_inf}, 1);
  Value index = i64_vector(b, t.index);
  Value windows = b.reshape(b.gather(padded, index, 1), {planes, q, k});
  Value best = b.op1(OpKind::ArgMax, Attrs().set("axis", int64_t{2}), {windows});  // [P, Q]
  std::vector<int64_t> row_start;
  for (int64_t i = 0; i < q; ++i) row_start.push_back(i * k);
  Value slot = b.add(best, b.reshape(i64_vector(b, row_start), {1, q}));
  Value at = b.gather(index, slot, 0);  // [P, Q]: positions in the input
  Value zeros = b.expand(scalar_like(b, 0, dy), {planes, t.in_size + 1});
  Value dx = b.op1(OpKind::ScatterElements,
                   Attrs().set("axis", int64_t{1}).set("reduction", ScatterReduction::Add),
                   {zeros, at, b.reshape(dy, {planes, q})});
  return b.reshape(b.narrow(dx, 1, 0, t.in_size), x_shape);
}

// ---- Pool ---------------------------------------------------------------------------------------

// Max pooling through MaxPool2dBackward / MaxPool3dBackward (1-D as 2-D with a unit height).
Value max_pool_vjp(GraphBuilder& b, const Attrs& a, Value dy, Value x) {
  const Shape xs = b.type(x).shape;
  const int sd = static_cast<int>(xs.size()) - 2;
  Attrs k = Attrs()
                .set("kernel", a.ints("kernel"))
                .set("strides", a.ints("strides"))
                .set("pads", a.ints("pads"))
                .set("dilations", a.ints("dilations"))
                .set("ceil_mode", a.b("ceil_mode"));
  if (sd == 1) {
    k = lift_1d_attrs(k, pool_window_attrs(a, 1), true);
    Value dx = b.op1(OpKind::MaxPool2dBackward, k,
                     {b.reshape(dy, lift_1d(b.type(dy).shape)), b.reshape(x, lift_1d(xs))});
    return b.reshape(dx, xs);
  }
  return b.op1(sd == 3 ? OpKind::MaxPool3dBackward : OpKind::MaxPool2dBackward, k, {dy, x});
}

// Lp: y = (K · mean_window(x^p))^(1/p) with K the kernel size, so dx = p·x^(p−1) · the
// averaging pool's backward of dy · (K/p) · y^(1−p).
Value lp_pool_vjp(GraphBuilder& b, const Attrs& a, const WindowTable& t, Value dy, Value x,
                  Value y) {
  const double p = static_cast<double>(a.i("p"));
  double kernel_size = 1;
  for (int64_t k : a.ints("kernel")) kernel_size *= static_cast<double>(k);
  Value dmean =
      b.mul(b.mul(dy, scalar_like(b, kernel_size / p, dy)), b.pow(y, scalar_like(b, 1 - p, y)));
  Value dpow = average_pool_backward(b, t, dmean, b.type(x).shape);
  return b.mul(dpow, b.mul(scalar_like(b, p, x), b.pow(x, scalar_like(b, p - 1, x))));
}

std::vector<Value> pool_vjp(VjpCtx& ctx) {
  GraphBuilder& b = ctx.b;
  const Attrs& a = ctx.node.attrs;
  Value dy = ctx.cotangents[0], x = ctx.inputs[0];
  const auto kind = a.e<PoolKind>("kind");
  if (kind == PoolKind::Max) return {max_pool_vjp(b, a, dy, x)};
  const Shape xs = ctx.type(x).shape;
  const int sd = static_cast<int>(xs.size()) - 2;
  const WindowTable t = window_table(a, spatial(xs, sd), spatial(ctx.type(dy).shape, sd));
  switch (kind) {
    case PoolKind::Avg:
    case PoolKind::AdaptiveAvg:
      return {average_pool_backward(b, t, dy, xs)};
    case PoolKind::AdaptiveMax:
    case PoolKind::Max:
      return {max_pool_backward(b, t, dy, x)};
    case PoolKind::Lp:
      return {lp_pool_vjp(b, a, t, dy, x, ctx.outputs[0])};
  }
  return {Value{}};  // unreachable: the switch is exhaustive
}

// ---- Decompositions of the Backward kinds -------------------------------------------------------

// MaxPool{2,3}dBackward (dy, x) through the window table.
std::vector<Value> decompose_max_pool_backward(Graph& g, const Node& node,
                                               std::span<const Value> in) {
  GraphBuilder b(g);
  const int sd = static_cast<int>(node.attrs.ints("kernel").size());
  const WindowTable t =
      window_table(node.attrs, spatial(b.type(in[1]).shape, sd), spatial(b.type(in[0]).shape, sd));
  return {max_pool_backward(b, t, in[0], in[1])};
}

// Conv{2,3}dBackwardInput (dy, w): dy dilated by the strides (zeros between its elements),
// padded by dilation·(k − 1) − pad_begin before and what makes the input size after (negative
// pads crop), convolved with w's kernels flipped and its two channel dims swapped per group.
std::vector<Value> decompose_conv_backward_input(Graph& g, const Node& node,
                                                 std::span<const Value> in) {
  GraphBuilder b(g);
  Value dy = in[0], w = in[1];
  const Shape ys = b.type(dy).shape, ws = b.type(w).shape;
  const Shape xs = node.attrs.ints("input_shape");
  const int sd = static_cast<int>(ys.size()) - 2;
  const int64_t groups = node.attrs.i("groups");
  const WindowAttrs win = conv_window_attrs(node.attrs, sd);
  // Zeros between dy's elements: [N, O, o0, 1, o1, 1, ...] padded to the strides, then cut to
  // (o − 1)·stride + 1.
  Shape split = {ys[0], ys[1]}, merged = {ys[0], ys[1]};
  std::vector<int64_t> stride_pads(2 * (2 + 2 * sd), 0);
  for (int d = 0; d < sd; ++d) {
    split.insert(split.end(), {ys[2 + d], 1});
    merged.push_back(ys[2 + d] * win.strides[d]);
    stride_pads[(2 + 2 * sd) + 3 + 2 * d] = win.strides[d] - 1;
  }
  Value z = b.reshape(b.op1(OpKind::Pad, Attrs().set("pads", stride_pads), {b.reshape(dy, split)}),
                      merged);
  std::vector<int64_t> pads(2 * (2 + sd), 0);
  for (int d = 0; d < sd; ++d) {
    int64_t span = win.dilations[d] * (ws[2 + d] - 1);
    pads[2 + d] = span - win.pads.begin[d];
    pads[(2 + sd) + 2 + d] = xs[2 + d] + win.pads.begin[d] - merged[2 + d];  // conv output: xs
  }
  z = b.op1(OpKind::Pad, Attrs().set("pads", pads), {z});
  // w [O, C/g, *k] → [C, O/g, *k] per group, kernels flipped.
  const int64_t opg = ws[0] / groups, cpg = ws[1];
  Shape grouped = {groups, opg, cpg}, swapped = {groups * cpg, opg};
  std::vector<int64_t> perm = {0, 2, 1};
  for (int d = 0; d < sd; ++d) {
    grouped.push_back(ws[2 + d]);
    swapped.push_back(ws[2 + d]);
    perm.push_back(3 + d);
  }
  Value wt = b.reshape(b.transpose(b.reshape(w, grouped), perm), swapped);
  wt = b.op1(OpKind::Reverse, Attrs().set("axes", iota_axes(2, 2 + sd)), {wt});
  Attrs conv = Attrs().set("dilations", win.dilations).set("groups", groups);
  return {b.op1(OpKind::Conv, conv, {z, wt, Value{}})};
}

// Conv{2,3}dBackwardWeight (dy, x): dw[o, c, k] = Σ_{n, p} dy[n, o, p] · x[n, c, p·stride −
// pad + k·dilation] is a convolution of x with the images as channels ([C/g, g·N, *sp]) by dy
// as its kernels ([O, N, *out]) in g groups, stride and dilation swapped; its output covers
// at least the kernel and is cut to it.
std::vector<Value> decompose_conv_backward_weight(Graph& g, const Node& node,
                                                  std::span<const Value> in) {
  GraphBuilder b(g);
  Value dy = in[0], x = in[1];
  const Shape ys = b.type(dy).shape, xs = b.type(x).shape;
  const Shape ws = node.attrs.ints("weight_shape");
  const int sd = static_cast<int>(xs.size()) - 2;
  const int64_t groups = node.attrs.i("groups"), n = xs[0];
  const int64_t cpg = xs[1] / groups, opg = ys[1] / groups;
  const WindowAttrs win = conv_window_attrs(node.attrs, sd);
  // x [N, C, *sp] → [cpg, g·N, *sp]; dy [N, O, *out] → [O, N, *out].
  Shape x5 = {n, groups, cpg}, x3 = {cpg, groups * n}, y5 = {n, groups, opg}, y3 = {ys[1], n};
  std::vector<int64_t> perm = {2, 1, 0}, yperm = {1, 2, 0};
  for (int d = 0; d < sd; ++d) {
    x5.push_back(xs[2 + d]);
    x3.push_back(xs[2 + d]);
    y5.push_back(ys[2 + d]);
    y3.push_back(ys[2 + d]);
    perm.push_back(3 + d);
    yperm.push_back(3 + d);
  }
  Value xc = b.reshape(b.transpose(b.reshape(x, x5), perm), x3);
  Value yc = b.reshape(b.transpose(b.reshape(dy, y5), yperm), y3);
  Attrs conv = Attrs()
                   .set("strides", win.dilations)
                   .set("dilations", win.strides)
                   .set("pads", win.pads.begin_end())
                   .set("groups", groups);
  Value dw = b.op1(OpKind::Conv, conv, {xc, yc, Value{}});  // [cpg, O, *k']
  for (int d = 0; d < sd; ++d)
    if (b.type(dw).shape[2 + d] != ws[2 + d]) dw = b.narrow(dw, 2 + d, 0, ws[2 + d]);
  std::vector<int64_t> to_weight = {1, 0};
  for (int d = 0; d < sd; ++d) to_weight.push_back(2 + d);
  return {b.transpose(dw, to_weight)};
}

}  // namespace

void register_vjp_conv_pool(RuleTable& table) {
  table[OpKind::Conv].vjp = conv_vjp;
  table[OpKind::ConvTranspose2d].vjp = conv_transpose2d_vjp;
  table[OpKind::Pool].vjp = pool_vjp;
  // The Backward kinds the rules emit, decomposed for backends without their kernels.
  for (OpKind k : {OpKind::Conv2dBackwardInput, OpKind::Conv3dBackwardInput})
    table[k].decompose = decompose_conv_backward_input;
  for (OpKind k : {OpKind::Conv2dBackwardWeight, OpKind::Conv3dBackwardWeight})
    table[k].decompose = decompose_conv_backward_weight;
  for (OpKind k : {OpKind::MaxPool2dBackward, OpKind::MaxPool3dBackward})
    table[k].decompose = decompose_max_pool_backward;
}

}  // namespace tessel
