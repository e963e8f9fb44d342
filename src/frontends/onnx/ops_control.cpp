// Control flow and non-tensor values: If, Loop, Scan, sequences and optionals.
//
// Control flow is interpreted: the importer runs the chosen branch / each iteration's body as a
// subgraph onto lazy Tensors. Values that decide control flow (If's condition, Loop's trip count
// and condition, sequence positions) are read on the host; everything else stays lazy on the
// run's device. Sequences and optionals are importer-level Values holding tensors.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "frontends/onnx/convert_util.h"

namespace tessel::onnx {
namespace {

// A Loop whose trip count and condition never stop it would interpret its body forever.
constexpr int64_t kMaxLoopIterations = 100'000;

// --- tensor helpers ----------------------------------------------------------------------------

// An empty tensor [0, dims...] for a scan output of a loop that ran no iteration, from the
// body's declared output type (the only place its shape can come from).
Tensor empty_scan_output(const NodeCtx& ctx, const pb::ValueInfoProto& out, int64_t axis) {
  const pb::TypeProto& t = out.type();
  std::optional<DType> dt;
  if (t.has_tensor_type()) dt = dtype_from_onnx(t.tensor_type().elem_type());
  if (!dt || !t.tensor_type().has_shape())
    ctx.fail(ErrorKind::Shape, "ran no iteration, and the body's output '", out.name(),
             "' declares no element type and shape to build the empty scan output from");
  Shape shape;
  for (const auto& d : t.tensor_type().shape().dim()) {
    if (!d.has_dim_value())
      ctx.fail(ErrorKind::Shape, "ran no iteration, and the body's output '", out.name(),
               "' has a dynamic dimension; the empty scan output's shape is unknown");
    shape.push_back(d.dim_value());
  }
  shape.insert(shape.begin() + axis, 0);
  return ctx.constant(HostTensor::empty(*dt, shape));
}

const Tensor& tensor_of(const NodeCtx& ctx, const Value& v, const char* what) {
  if (!v.is_tensor())
    ctx.fail(ErrorKind::DType, what, " is ", v.describe(), "; a tensor is needed");
  return v.tensor;
}

// Every tensor a value holds (its elements, for sequences and optionals).
void collect_tensors(const Value& v, std::vector<Tensor>& out) {
  if (v.is_tensor()) {
    if (v.tensor.defined()) out.push_back(v.tensor);
    return;
  }
  for (const Value& e : v.elements) collect_tensors(e, out);
}

// --- If ----------------------------------------------------------------------------------------

std::vector<Value> if_op(NodeCtx& ctx) {
  const bool cond = ctx.scalar(0) != 0;
  const pb::GraphProto& branch = ctx.attr_graph(cond ? "then_branch" : "else_branch");
  std::vector<Value> outs = ctx.run_subgraph(branch, {});
  if (static_cast<int>(outs.size()) < ctx.num_outputs())
    ctx.fail(ErrorKind::Format, cond ? "then_branch" : "else_branch", " has ", outs.size(),
             " outputs; the node has ", ctx.num_outputs());
  return outs;
}

// --- Loop --------------------------------------------------------------------------------------

std::vector<Value> loop_op(NodeCtx& ctx) {
  const pb::GraphProto& body = ctx.attr_graph("body");
  const int num_carried = std::max(ctx.num_inputs() - 2, 0);
  const int num_scan = body.output_size() - 1 - num_carried;
  if (body.input_size() != 2 + num_carried || num_scan < 0)
    ctx.fail(ErrorKind::Format, "body takes ", body.input_size(), " inputs and gives ",
             body.output_size(), " outputs; with ", num_carried,
             " loop-carried values it must take ", 2 + num_carried, " and give at least ",
             1 + num_carried);

  const bool has_trip = ctx.has(0), has_cond = ctx.has(1);
  int64_t trip = std::numeric_limits<int64_t>::max();
  if (has_trip) {
    const std::vector<int64_t> m = ctx.ints(0);
    if (m.size() != 1) ctx.fail(ErrorKind::Shape, "trip count M must hold one element");
    trip = std::max<int64_t>(m[0], 0);
    if (!has_cond && trip > kMaxLoopIterations)
      ctx.fail(ErrorKind::Value, "trip count ", trip, " with no condition exceeds the limit of ",
               kMaxLoopIterations, " iterations for an interpreted Loop");
  } else if (!has_cond) {
    ctx.fail(ErrorKind::Value, "has neither a trip count nor a condition: it would never stop");
  }
  bool cond = !has_cond || ctx.scalar(1) != 0;

  std::vector<Value> carried;
  for (int i = 0; i < num_carried; ++i) carried.push_back(ctx.value(2 + i));
  std::vector<std::vector<Tensor>> scans(static_cast<size_t>(num_scan));

  int64_t iter = 0;
  for (; iter < trip && cond; ++iter) {
    if (iter == kMaxLoopIterations)
      ctx.fail(ErrorKind::Value, "ran ", kMaxLoopIterations,
               " iterations and its condition is still true; stopping an interpreted Loop that "
               "does not end");
    std::vector<Value> in;
    in.push_back(ctx.scalar_tensor(static_cast<double>(iter), DType::I64));
    in.push_back(ctx.scalar_tensor(cond ? 1 : 0, DType::Bool));
    for (Value& v : carried) in.push_back(std::move(v));
    std::vector<Value> out = ctx.run_subgraph(body, in);
    for (int i = 0; i < num_carried; ++i) carried[i] = std::move(out[1 + i]);
    std::vector<Tensor> pending;  // evaluated per iteration: the lazy graph stays one body deep
    for (int k = 0; k < num_scan; ++k) {
      scans[k].push_back(tensor_of(ctx, out[1 + num_carried + k], "a scan output"));
      pending.push_back(scans[k].back());
    }
    for (const Value& v : carried) collect_tensors(v, pending);
    if (has_cond) {
      const Tensor& c = tensor_of(ctx, out[0], "the body's condition");
      if (c.numel() != 1) ctx.fail(ErrorKind::Shape, "the body's condition must hold one element");
      pending.push_back(c);
      eval(pending);
      cond = c.item() != 0;
    } else {
      eval(pending);
    }
  }

  std::vector<Value> results = std::move(carried);
  for (int k = 0; k < num_scan; ++k) {
    if (scans[k].empty())
      results.emplace_back(empty_scan_output(ctx, body.output(1 + num_carried + k), 0));
    else
      results.emplace_back(stack(ctx, scans[k], 0));
  }
  return results;
}

// --- Scan --------------------------------------------------------------------------------------

struct ScanResult {
  std::vector<Value> states;
  std::vector<std::vector<Tensor>> outputs;  // per scan output, in iteration order
};

// Runs the body over `steps` slices of the scan inputs (each along its axis, forward or
// reversed).
ScanResult run_scan(const NodeCtx& ctx, const pb::GraphProto& body, std::vector<Value> states,
                    const std::vector<Tensor>& xs, const std::vector<int64_t>& axes,
                    const std::vector<int64_t>& reversed, int64_t steps) {
  const int num_states = static_cast<int>(states.size());
  const int num_scan_out = body.output_size() - num_states;
  if (num_scan_out < 0 || body.input_size() != num_states + static_cast<int>(xs.size()))
    ctx.fail(ErrorKind::Format, "body takes ", body.input_size(), " inputs and gives ",
             body.output_size(), " outputs; with ", num_states, " states and ", xs.size(),
             " scan inputs it must take ", num_states + xs.size());
  ScanResult r;
  r.outputs.resize(static_cast<size_t>(num_scan_out));
  for (int64_t t = 0; t < steps; ++t) {
    std::vector<Value> in = states;
    for (size_t j = 0; j < xs.size(); ++j)
      in.push_back(take_slice(xs[j], axes[j], reversed[j] ? steps - 1 - t : t));
    std::vector<Value> out = ctx.run_subgraph(body, in);
    for (int i = 0; i < num_states; ++i) states[i] = out[i];
    for (int k = 0; k < num_scan_out; ++k)
      r.outputs[k].push_back(tensor_of(ctx, out[num_states + k], "a scan output"));
  }
  r.states = std::move(states);
  return r;
}

std::vector<Value> scan8(NodeCtx& ctx) {
  const pb::GraphProto& body = ctx.attr_graph("body");
  const int64_t num_scan_in = ctx.attr_int("num_scan_inputs");
  const int num_states = ctx.num_inputs() - 1 - static_cast<int>(num_scan_in);
  if (num_scan_in < 1 || num_states < 0)
    ctx.fail(ErrorKind::Format, "num_scan_inputs ", num_scan_in, " does not fit ",
             ctx.num_inputs() - 1, " inputs");
  std::vector<int64_t> dirs = ctx.attr_ints("directions", std::vector<int64_t>(num_scan_in, 0));
  if (static_cast<int64_t>(dirs.size()) != num_scan_in)
    ctx.fail(ErrorKind::Format, "directions has ", dirs.size(), " entries, expected ", num_scan_in);
  std::vector<Tensor> states, xs;
  for (int i = 0; i < num_states; ++i) states.push_back(ctx.in(1 + i));
  for (int j = 0; j < num_scan_in; ++j) xs.push_back(ctx.in(1 + num_states + j));
  for (const Tensor& x : xs)
    if (x.rank() < 2 || x.shape()[0] != xs[0].shape()[0] || x.shape()[1] != xs[0].shape()[1])
      ctx.fail(ErrorKind::Shape,
               "scan inputs must be [batch, sequence, ...] with one batch and "
               "sequence length; got ",
               Value(x).describe(), " and ", Value(xs[0]).describe());
  const int64_t batch = xs[0].shape()[0], seq = xs[0].shape()[1];
  for (const Tensor& s : states)
    if (s.rank() < 1 || s.shape()[0] != batch)
      ctx.fail(ErrorKind::Shape, "state ", Value(s).describe(), " must have batch ", batch);
  std::vector<int64_t> lens(static_cast<size_t>(batch), seq);
  if (ctx.has(0)) {
    lens = ctx.ints(0);
    if (static_cast<int64_t>(lens.size()) != batch)
      ctx.fail(ErrorKind::Shape, "sequence_lens has ", lens.size(), " entries for batch ", batch);
    for (int64_t l : lens)
      if (l < 0 || l > seq)
        ctx.fail(ErrorKind::Value, "sequence length ", l, " is outside [0, ", seq, "]");
  }

  std::vector<std::vector<Tensor>> final_states(num_states), outs;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Value> st;
    for (const Tensor& s : states) st.push_back(take_slice(s, 0, b));
    std::vector<Tensor> xb;
    for (const Tensor& x : xs) {
      Tensor s = take_slice(x, 0, b);
      // Reversed scans over a shorter sequence start at its last valid step.
      if (lens[b] != seq) s = narrow(s, 0, 0, lens[b]);
      xb.push_back(s);
    }
    ScanResult r = run_scan(ctx, body, st, xb, std::vector<int64_t>(xs.size(), 0), dirs, lens[b]);
    for (int i = 0; i < num_states; ++i)
      final_states[i].push_back(tensor_of(ctx, r.states[i], "a scan state"));
    if (outs.empty()) outs.resize(r.outputs.size());
    for (size_t k = 0; k < r.outputs.size(); ++k) {
      if (r.outputs[k].empty()) {
        outs[k].push_back(empty_scan_output(ctx, body.output(num_states + k), 0));
        continue;
      }
      Tensor y = stack(ctx, r.outputs[k], 0);
      if (lens[b] != seq) {  // zero-pad the steps past this sequence's end
        std::vector<int64_t> pads(2 * static_cast<size_t>(y.rank()), 0);
        pads[y.rank()] = seq - lens[b];
        y = pad(y, pads);
      }
      outs[k].push_back(y);
    }
  }
  std::vector<Value> results;
  for (auto& fs : final_states) results.emplace_back(stack(ctx, fs, 0));
  for (auto& o : outs) results.emplace_back(stack(ctx, o, 0));
  return results;
}

std::vector<Value> scan_op(NodeCtx& ctx) {
  if (ctx.opset() < 9) return scan8(ctx);
  const pb::GraphProto& body = ctx.attr_graph("body");
  const int64_t m = ctx.attr_int("num_scan_inputs");
  const int num_states = ctx.num_inputs() - static_cast<int>(m);
  if (m < 1 || num_states < 0)
    ctx.fail(ErrorKind::Format, "num_scan_inputs ", m, " does not fit ", ctx.num_inputs(),
             " inputs");
  std::vector<int64_t> in_axes = ctx.attr_ints("scan_input_axes", std::vector<int64_t>(m, 0));
  std::vector<int64_t> in_dirs = ctx.attr_ints("scan_input_directions", std::vector<int64_t>(m, 0));
  if (static_cast<int64_t>(in_axes.size()) != m || static_cast<int64_t>(in_dirs.size()) != m)
    ctx.fail(ErrorKind::Format, "scan_input_axes / scan_input_directions need ", m, " entries");
  std::vector<Value> states;
  for (int i = 0; i < num_states; ++i) states.push_back(ctx.value(i));
  std::vector<Tensor> xs;
  int64_t steps = -1;
  for (int j = 0; j < m; ++j) {
    Tensor x = ctx.in(num_states + j);
    if (x.rank() == 0) ctx.fail(ErrorKind::Shape, "scan input ", j, " is a scalar");
    in_axes[j] = normalize_axis(ctx, in_axes[j], x.rank());
    const int64_t len = x.shape()[in_axes[j]];
    if (steps >= 0 && len != steps)
      ctx.fail(ErrorKind::Shape, "scan inputs have sequence lengths ", steps, " and ", len);
    steps = len;
    xs.push_back(x);
  }
  ScanResult r = run_scan(ctx, body, states, xs, in_axes, in_dirs, steps);

  const int64_t k = static_cast<int64_t>(r.outputs.size());
  std::vector<int64_t> out_axes = ctx.attr_ints("scan_output_axes", std::vector<int64_t>(k, 0));
  std::vector<int64_t> out_dirs =
      ctx.attr_ints("scan_output_directions", std::vector<int64_t>(k, 0));
  if (static_cast<int64_t>(out_axes.size()) != k || static_cast<int64_t>(out_dirs.size()) != k)
    ctx.fail(ErrorKind::Format, "scan_output_axes / scan_output_directions need ", k, " entries");
  std::vector<Value> results = std::move(r.states);
  for (int64_t i = 0; i < k; ++i) {
    std::vector<Tensor>& ys = r.outputs[i];
    if (ys.empty()) {
      results.emplace_back(empty_scan_output(ctx, body.output(num_states + i), 0));
      continue;
    }
    const int64_t axis = normalize_axis(ctx, out_axes[i], ys[0].rank() + 1);
    if (out_dirs[i]) std::reverse(ys.begin(), ys.end());
    results.emplace_back(stack(ctx, ys, axis));
  }
  return results;
}

// --- sequences ---------------------------------------------------------------------------------

const Value& sequence_in(const NodeCtx& ctx, int i) {
  const Value& v = ctx.value(i);
  if (v.kind != Value::Kind::Sequence)
    ctx.fail(ErrorKind::DType, "input ", i, " is ", v.describe(), "; a sequence is needed");
  return v;
}

// The element type a sequence holds (or will hold), if known.
std::optional<DType> elem_type(const Value& seq) {
  if (seq.elem_dtype) return seq.elem_dtype;
  for (const Value& e : seq.elements)
    if (e.is_tensor()) return e.tensor.dtype();
  return std::nullopt;
}

void check_elem_type(const NodeCtx& ctx, const Value& seq, const Value& v) {
  std::optional<DType> want = elem_type(seq);
  if (want && v.is_tensor() && v.tensor.dtype() != *want)
    ctx.fail(ErrorKind::DType, "cannot put a ", v.describe(), " into a sequence of ",
             dtype_name(*want), " tensors");
}

// A position input, in [-n, n - 1] (or [-n, n] when `may_append`), made non-negative.
int64_t position(const NodeCtx& ctx, int i, int64_t n, bool may_append) {
  const std::vector<int64_t> p = ctx.ints(i);
  if (p.size() != 1) ctx.fail(ErrorKind::Shape, "position must hold one element");
  const int64_t hi = may_append ? n : n - 1;
  if (p[0] < -n || p[0] > hi)
    ctx.fail(ErrorKind::Value, "position ", p[0], " is out of range [", -n, ", ", hi,
             "] for a sequence of ", n, " elements");
  return p[0] < 0 ? p[0] + n : p[0];
}

std::vector<Value> sequence_empty(NodeCtx& ctx) {
  const int64_t code = ctx.attr_int("dtype", pb::TensorProto::FLOAT);
  std::optional<DType> dt = dtype_from_onnx(static_cast<int>(code));
  if (!dt)
    ctx.fail(ErrorKind::DType, "dtype ", onnx_type_name(static_cast<int>(code)),
             " is not a supported element type");
  return {Value::sequence({}, dt)};
}

std::vector<Value> sequence_construct(NodeCtx& ctx) {
  std::vector<Value> elems;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Value& v = ctx.value(i);
    if (!elems.empty() && v.is_tensor() && elems[0].is_tensor() &&
        v.tensor.dtype() != elems[0].tensor.dtype())
      ctx.fail(ErrorKind::DType, "inputs have differing element types ",
               dtype_name(elems[0].tensor.dtype()), " and ", dtype_name(v.tensor.dtype()));
    elems.push_back(v);
  }
  std::optional<DType> dt;
  if (!elems.empty() && elems[0].is_tensor()) dt = elems[0].tensor.dtype();
  return {Value::sequence(std::move(elems), dt)};
}

std::vector<Value> sequence_insert(NodeCtx& ctx) {
  const Value& seq = sequence_in(ctx, 0);
  const Value& v = ctx.value(1);
  check_elem_type(ctx, seq, v);
  const int64_t n = static_cast<int64_t>(seq.elements.size());
  const int64_t at = ctx.has(2) ? position(ctx, 2, n, true) : n;
  std::vector<Value> elems = seq.elements;
  elems.insert(elems.begin() + at, v);
  return {Value::sequence(std::move(elems), elem_type(seq))};
}

std::vector<Value> sequence_at(NodeCtx& ctx) {
  const Value& seq = sequence_in(ctx, 0);
  return {seq.elements[position(ctx, 1, static_cast<int64_t>(seq.elements.size()), false)]};
}

std::vector<Value> sequence_erase(NodeCtx& ctx) {
  const Value& seq = sequence_in(ctx, 0);
  const int64_t n = static_cast<int64_t>(seq.elements.size());
  if (n == 0) ctx.fail(ErrorKind::Value, "cannot erase from an empty sequence");
  const int64_t at = ctx.has(1) ? position(ctx, 1, n, false) : n - 1;
  std::vector<Value> elems = seq.elements;
  elems.erase(elems.begin() + at);
  return {Value::sequence(std::move(elems), elem_type(seq))};
}

std::vector<Value> sequence_length(NodeCtx& ctx) {
  const Value& seq = sequence_in(ctx, 0);
  return {ctx.scalar_tensor(static_cast<double>(seq.elements.size()), DType::I64)};
}

std::vector<Value> split_to_sequence(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  if (x.rank() == 0) ctx.fail(ErrorKind::Shape, "cannot split a scalar");
  const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), x.rank());
  const int64_t len = x.shape()[axis];
  std::vector<int64_t> sizes;
  bool squeeze = false;
  if (!ctx.has(1)) {
    sizes.assign(static_cast<size_t>(len), 1);
    squeeze = ctx.attr_int("keepdims", 1) == 0;
  } else {
    const Tensor s = ctx.in(1);
    const std::vector<int64_t> split = ctx.ints(1);
    if (s.rank() == 0) {
      if (split[0] <= 0) ctx.fail(ErrorKind::Value, "split ", split[0], " must be positive");
      for (int64_t at = 0; at < len; at += split[0]) sizes.push_back(std::min(split[0], len - at));
    } else if (s.rank() == 1) {
      int64_t total = 0;
      for (int64_t v : split) {
        if (v < 0) ctx.fail(ErrorKind::Value, "split sizes must be non-negative");
        total += v;
      }
      if (total != len)
        ctx.fail(ErrorKind::Shape, "split sizes sum to ", total, ", not the axis length ", len);
      sizes = split;
    } else {
      ctx.fail(ErrorKind::Shape, "split must be a scalar or a 1-D tensor");
    }
  }
  std::vector<Value> elems;
  int64_t at = 0;
  for (int64_t n : sizes) {
    Tensor part = narrow(x, axis, at, n);
    if (squeeze) {
      Shape shape = x.shape();
      shape.erase(shape.begin() + axis);
      part = reshape(part, shape);
    }
    elems.emplace_back(part);
    at += n;
  }
  return {Value::sequence(std::move(elems), x.dtype())};
}

std::vector<Value> concat_from_sequence(NodeCtx& ctx) {
  const Value& seq = sequence_in(ctx, 0);
  const bool new_axis = ctx.attr_int("new_axis", 0) != 0;
  if (seq.elements.empty())
    ctx.fail(ErrorKind::Value, "cannot concatenate an empty sequence (its shape is unknown)");
  std::vector<Tensor> xs;
  for (const Value& e : seq.elements) xs.push_back(tensor_of(ctx, e, "a sequence element"));
  const int64_t rank = xs[0].rank();
  const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis"), new_axis ? rank + 1 : rank);
  if (new_axis) return {stack(ctx, xs, axis)};
  if (xs.size() == 1) return {xs[0]};
  return {concatenate(xs, axis)};
}

std::vector<Value> sequence_map(NodeCtx& ctx) {
  const pb::GraphProto& body = ctx.attr_graph("body");
  const Value& seq = sequence_in(ctx, 0);
  const size_t n = seq.elements.size();
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const Value& v = ctx.value(i);
    if (v.kind == Value::Kind::Sequence && v.elements.size() != n)
      ctx.fail(ErrorKind::Shape, "input sequence ", i, " has ", v.elements.size(),
               " elements; the first has ", n);
  }
  std::vector<std::vector<Value>> outs(static_cast<size_t>(body.output_size()));
  for (size_t k = 0; k < n; ++k) {
    std::vector<Value> in = {seq.elements[k]};
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      const Value& v = ctx.value(i);
      in.push_back(v.kind == Value::Kind::Sequence ? v.elements[k] : v);
    }
    std::vector<Value> out = ctx.run_subgraph(body, in);
    for (size_t j = 0; j < outs.size(); ++j) outs[j].push_back(std::move(out[j]));
  }
  std::vector<Value> results;
  for (size_t j = 0; j < outs.size(); ++j) {
    std::optional<DType> dt;
    const pb::TypeProto& t = body.output(static_cast<int>(j)).type();
    if (t.has_tensor_type()) dt = dtype_from_onnx(t.tensor_type().elem_type());
    if (!outs[j].empty() && outs[j][0].is_tensor()) dt = outs[j][0].tensor.dtype();
    results.push_back(Value::sequence(std::move(outs[j]), dt));
  }
  return results;
}

// --- optionals ---------------------------------------------------------------------------------

std::vector<Value> optional_op(NodeCtx& ctx) {
  if (ctx.has(0)) {
    const Value& v = ctx.value(0);
    std::optional<DType> dt;
    if (v.is_tensor()) dt = v.tensor.dtype();
    return {Value::optional(v, dt)};
  }
  if (!ctx.has_attr("type"))
    ctx.fail(ErrorKind::Format, "an empty Optional needs its 'type' attribute");
  const pb::AttributeProto* a = ctx.attr("type");
  std::optional<DType> dt;
  const pb::TypeProto& t = a->tp();
  if (t.has_tensor_type()) dt = dtype_from_onnx(t.tensor_type().elem_type());
  if (t.has_sequence_type() && t.sequence_type().elem_type().has_tensor_type())
    dt = dtype_from_onnx(t.sequence_type().elem_type().tensor_type().elem_type());
  return {Value::optional(std::nullopt, dt)};
}

std::vector<Value> optional_has_element(NodeCtx& ctx) {
  bool has = false;
  if (ctx.has(0)) {
    const Value& v = ctx.value(0);
    has = v.kind != Value::Kind::Optional || !v.elements.empty();
  }
  return {ctx.scalar_tensor(has ? 1 : 0, DType::Bool)};
}

std::vector<Value> optional_get_element(NodeCtx& ctx) {
  const Value& v = ctx.value(0);
  if (v.kind != Value::Kind::Optional) return {v};  // opset 18: a plain tensor / sequence
  if (v.elements.empty()) ctx.fail(ErrorKind::Value, "the optional input is empty");
  return {v.elements[0]};
}

constexpr Converter kConverters[] = {
    {"", "If", if_op},
    {"", "Loop", loop_op},
    {"", "Scan", scan_op},
    {"", "SequenceEmpty", sequence_empty},
    {"", "SequenceConstruct", sequence_construct},
    {"", "SequenceInsert", sequence_insert},
    {"", "SequenceAt", sequence_at},
    {"", "SequenceErase", sequence_erase},
    {"", "SequenceLength", sequence_length},
    {"", "SplitToSequence", split_to_sequence},
    {"", "ConcatFromSequence", concat_from_sequence},
    {"", "SequenceMap", sequence_map},
    {"", "Optional", optional_op},
    {"", "OptionalHasElement", optional_has_element},
    {"", "OptionalGetElement", optional_get_element},
};

}  // namespace

std::span<const Converter> control_converters() { return kConverters; }

}  // namespace tessel::onnx
