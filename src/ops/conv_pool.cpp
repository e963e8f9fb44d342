// Shape rules of the ConvPool category: Conv (1-D/2-D/3-D), Im2Col, ConvTranspose2d, Pool.
// Every kind runs natively on the reference backend; Im2Col also has a decomposition (a
// convolution with a one-hot weight), which is what autodiff differentiates it through.
// Their window attributes are parsed and checked by ops/conv_geometry.h.
#include <string>

#include "ir/builder.h"
#include "ops/conv_geometry.h"
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

constexpr DTypeSet kConvFloats = dtypes::kFloat | dtypes::kFp8;

std::string ints_str(const std::vector<int64_t>& v) { return shape_str(v); }

// Conv weights: w [O, C/groups, *k] (transposed=false) or [C, O/groups, *k] (transposed=true).
// Returns the output channel count O.
int64_t check_conv_operands(const InferCtx& ctx, bool transposed) {
  const TensorType& x = ctx.in(0);
  const TensorType& w = ctx.in(1);
  require_dtype(ctx, 0, kConvFloats, "x");
  same_dtype(ctx, {0, 1, 2});
  if (w.rank() != x.rank())
    ctx.fail(ErrorKind::Shape, "w must have rank ", x.rank(), " like x ([",
             transposed ? "C, O/groups" : "O, C/groups", ", *kernel]), got ", w.str());
  int64_t groups = ctx.attrs().i("groups");
  if (groups < 1) ctx.fail(ErrorKind::Value, "groups must be >= 1, got ", groups);
  int64_t c = x.shape[1];
  if (c % groups != 0)
    ctx.fail(ErrorKind::Shape, "groups ", groups, " does not divide the input channels ", c);
  for (int d = 2; d < w.rank(); ++d)
    if (w.shape[d] < 1) ctx.fail(ErrorKind::Shape, "kernel dims must be >= 1, got w ", w.str());
  int64_t out_channels;
  if (transposed) {
    if (w.shape[0] != c)
      ctx.fail(ErrorKind::Shape, "w's dim 0 must equal the input channels ", c, ", got w ",
               w.str());
    out_channels = w.shape[1] * groups;
  } else {
    if (w.shape[1] * groups != c)
      ctx.fail(ErrorKind::Shape, "w's dim 1 (", w.shape[1], ") × groups (", groups,
               ") must equal the input channels ", c, ", got w ", w.str());
    out_channels = w.shape[0];
    if (out_channels % groups != 0)
      ctx.fail(ErrorKind::Shape, "groups ", groups, " does not divide the output channels ",
               out_channels);
  }
  if (ctx.has(2) && (ctx.in(2).rank() != 1 || ctx.in(2).shape[0] != out_channels))
    ctx.fail(ErrorKind::Shape, "b must be [", out_channels, "] (the output channels), got ",
             ctx.in(2).str());
  return out_channels;
}

std::vector<TensorType> infer_conv(const InferCtx& ctx) {
  require_rank_between(ctx, 0, 3, 5);
  const TensorType& x = ctx.in(0);
  int64_t out_channels = check_conv_operands(ctx, false);
  const Shape& k = ctx.in(1).shape;
  int sd = x.rank() - 2;
  auto strides = checked_window_attr(ctx, "strides", sd, 1, 1);
  auto dilations = checked_window_attr(ctx, "dilations", sd, 1, 1);
  WindowPads pads = checked_window_pads(ctx, sd, true);
  Shape out = {x.shape[0], out_channels};
  for (int d = 0; d < sd; ++d)
    out.push_back(checked_window_out_size(ctx, d, x.shape[2 + d], pads.begin[d], pads.end[d],
                                          k[2 + d], strides[d], dilations[d]));
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_conv_transpose2d(const InferCtx& ctx) {
  require_rank(ctx, 0, 4);
  const TensorType& x = ctx.in(0);
  int64_t out_channels = check_conv_operands(ctx, true);
  const Shape& k = ctx.in(1).shape;
  auto strides = checked_window_attr(ctx, "strides", 2, 1, 1);
  auto dilations = checked_window_attr(ctx, "dilations", 2, 1, 1);
  auto output_padding = checked_window_attr(ctx, "output_padding", 2, 0, 0);
  WindowPads pads = checked_window_pads(ctx, 2, true);
  Shape out = {x.shape[0], out_channels};
  for (int d = 0; d < 2; ++d) {
    if (output_padding[d] >= strides[d] && output_padding[d] >= dilations[d])
      ctx.fail(ErrorKind::Value, "output_padding ", ints_str(output_padding),
               " must be smaller than either the stride or the dilation in each dim (strides ",
               ints_str(strides), ", dilations ", ints_str(dilations), ")");
    int64_t n = transposed_out_size(x.shape[2 + d], pads.begin[d], pads.end[d], k[2 + d],
                                    strides[d], dilations[d], output_padding[d]);
    if (n < 1)
      ctx.fail(ErrorKind::Shape, "spatial dim ", d, ": output size ", n, " is below 1 (input ",
               x.shape[2 + d], ", pads ", pads.begin[d], "+", pads.end[d], ")");
    out.push_back(n);
  }
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_im2col(const InferCtx& ctx) {
  require_rank(ctx, 0, 4);
  require_dtype(ctx, 0, kConvFloats | dtypes::kInt, "x");
  const TensorType& x = ctx.in(0);
  const std::vector<int64_t>& kernel = ctx.attrs().ints("kernel");
  if (kernel.size() != 2 || kernel[0] < 1 || kernel[1] < 1)
    ctx.fail(ErrorKind::Value, "kernel ", ints_str(kernel), " must be 2 ints >= 1 (kh, kw)");
  auto strides = checked_window_attr(ctx, "strides", 2, 1, 1);
  auto dilations = checked_window_attr(ctx, "dilations", 2, 1, 1);
  WindowPads pads = checked_window_pads(ctx, 2, false);
  int64_t blocks = 1;
  for (int d = 0; d < 2; ++d)
    blocks *= checked_window_out_size(ctx, d, x.shape[2 + d], pads.begin[d], pads.end[d], kernel[d],
                                      strides[d], dilations[d]);
  return {{x.dtype, {x.shape[0], x.shape[1] * kernel[0] * kernel[1], blocks}}};
}

// im2col as a convolution with a one-hot weight w [C·kh·kw, C, kh, kw]: output channel
// (c·kh + i)·kw + j reads channel c at kernel tap (i, j); [N, C·kh·kw, oh, ow] reshaped to
// [N, C·kh·kw, L]. Its gradient (col2im) is then the convolution's input gradient.
std::vector<Value> decompose_im2col(Graph& g, const Node& node, std::span<const Value> in) {
  GraphBuilder b(g);
  const TensorType& x = b.type(in[0]);
  const std::vector<int64_t>& kernel = node.attrs.ints("kernel");
  const int64_t channels = x.shape[1], taps = kernel[0] * kernel[1];
  HostTensor w = HostTensor::empty(x.dtype, {channels * taps, channels, kernel[0], kernel[1]});
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t t = 0; t < taps; ++t) w.set_f64(((c * taps + t) * channels + c) * taps + t, 1.0);
  Attrs conv;
  for (const char* name : {"strides", "pads", "dilations"}) conv.set(name, node.attrs.ints(name));
  Value y = b.op1(OpKind::Conv, std::move(conv), {in[0], g.constant(std::move(w))});
  const Shape& ys = b.type(y).shape;
  return {b.reshape(y, {ys[0], ys[1], ys[2] * ys[3]})};
}

std::vector<TensorType> infer_pool(const InferCtx& ctx) {
  require_rank_between(ctx, 0, 3, 5);
  const TensorType& x = ctx.in(0);
  const Attrs& a = ctx.attrs();
  auto kind = a.e<PoolKind>("kind");
  bool max_like = false, adaptive = false;
  switch (kind) {
    case PoolKind::Max:
      max_like = true;
      break;
    case PoolKind::Avg:
      break;
    case PoolKind::AdaptiveMax:
      max_like = adaptive = true;
      break;
    case PoolKind::AdaptiveAvg:
      adaptive = true;
      break;
    case PoolKind::Lp:
      break;
  }
  require_dtype(ctx, 0, max_like ? kConvFloats | dtypes::kInt : kConvFloats, "x");
  int sd = x.rank() - 2;
  Shape out = {x.shape[0], x.shape[1]};

  if (adaptive) {
    for (const char* name : {"kernel", "strides", "pads", "dilations"})
      if (!a.ints(name).empty())
        ctx.fail(ErrorKind::Value, "adaptive pooling takes only output_size; ", name,
                 " must be empty, got ", ints_str(a.ints(name)));
    // Its windows tile the input without padding, so there is no padded window to divide by.
    if (a.b("count_include_pad"))
      ctx.fail(ErrorKind::Value,
               "count_include_pad must be false for adaptive pooling (its windows have no "
               "padding)");
    const std::vector<int64_t>& size = a.ints("output_size");
    if (static_cast<int>(size.size()) != sd)
      ctx.fail(ErrorKind::Value, "output_size ", ints_str(size), " must have ", sd,
               " entries (one per spatial dim)");
    for (int d = 0; d < sd; ++d) {
      if (size[d] < 1)
        ctx.fail(ErrorKind::Value, "output_size ", ints_str(size), " must all be >= 1");
      if (x.shape[2 + d] < 1)
        ctx.fail(ErrorKind::Shape, "adaptive pooling needs non-empty spatial dims, got x ",
                 x.str());
      out.push_back(size[d]);
    }
    return {{x.dtype, out}};
  }

  const std::vector<int64_t>& kernel = a.ints("kernel");
  if (static_cast<int>(kernel.size()) != sd)
    ctx.fail(ErrorKind::Value, "kernel ", ints_str(kernel), " must have ", sd,
             " entries (one per spatial dim)");
  for (int64_t k : kernel)
    if (k < 1) ctx.fail(ErrorKind::Value, "kernel ", ints_str(kernel), " must all be >= 1");
  if (!a.ints("output_size").empty())
    ctx.fail(ErrorKind::Value, "output_size is only for adaptive pooling, got ",
             ints_str(a.ints("output_size")));
  auto strides = checked_window_attr(ctx, "strides", sd, 0, 1);
  for (int d = 0; d < sd; ++d)
    if (strides[d] == 0) strides[d] = kernel[d];
  auto dilations = checked_window_attr(ctx, "dilations", sd, 1, 1);
  WindowPads pads = checked_window_pads(ctx, sd, true);
  if (kind != PoolKind::Max)
    for (int64_t dil : dilations)
      if (dil != 1)
        ctx.fail(ErrorKind::Value, "dilations ", ints_str(a.ints("dilations")),
                 " are only supported by Max pooling");
  for (int d = 0; d < sd; ++d) {
    if (kind == PoolKind::Lp && (pads.begin[d] != 0 || pads.end[d] != 0))
      ctx.fail(ErrorKind::Value, "Lp pooling takes no padding, got pads ",
               ints_str(a.ints("pads")));
    if (pads.begin[d] > kernel[d] / 2 || pads.end[d] > kernel[d] / 2)
      ctx.fail(ErrorKind::Value, "pads ", ints_str(a.ints("pads")),
               " must be at most half of the kernel ", ints_str(kernel));
  }
  if (kind == PoolKind::Lp && a.i("p") < 1)
    ctx.fail(ErrorKind::Value, "p must be >= 1 for Lp pooling, got ", a.i("p"));
  for (int d = 0; d < sd; ++d)
    out.push_back(checked_window_out_size(ctx, d, x.shape[2 + d], pads.begin[d], pads.end[d],
                                          kernel[d], strides[d], dilations[d], a.b("ceil_mode")));
  return {{x.dtype, out}};
}

// ConvRegion: a convolution's output through `body`, whose one parameter is that output and
// which returns a value of its type.
std::vector<TensorType> infer_conv_region(const InferCtx& ctx) {
  TensorType y = infer_conv(ctx)[0];
  const Graph& body = body_attr(ctx, "body");
  check_body_results(ctx, body, "body");
  std::vector<int> params = body.input_nodes();
  if (params.size() != 1 || body.node(params[0]).outputs.at(0) != y || body.outputs.size() != 1 ||
      body.type(body.outputs[0]) != y)
    ctx.fail(ErrorKind::Shape, "body must take and return one ", y.str(),
             " (the convolution's output)");
  return {y};
}

// The convolution, then the body inlined on its output.
std::vector<Value> decompose_conv_region(Graph& g, const Node& node, std::span<const Value> in) {
  const Attrs& a = node.attrs;
  Attrs conv;
  conv.set("strides", a.ints("strides"))
      .set("pads", a.ints("pads"))
      .set("dilations", a.ints("dilations"))
      .set("groups", a.i("groups"));
  std::vector<Value> y = g.add(OpKind::Conv, conv, {in.begin(), in.end()}, node.name);
  return inline_graph(g, *a.graph("body"), y);
}

}  // namespace

void register_rules_ConvPool(RuleTable& table) {
  table[OpKind::Conv].infer = infer_conv;
  table[OpKind::ConvRegion].infer = infer_conv_region;
  table[OpKind::ConvRegion].decompose = decompose_conv_region;
  table[OpKind::Im2Col].infer = infer_im2col;
  table[OpKind::Im2Col].decompose = decompose_im2col;
  table[OpKind::ConvTranspose2d].infer = infer_conv_transpose2d;
  table[OpKind::Pool].infer = infer_pool;
}

}  // namespace tessel
