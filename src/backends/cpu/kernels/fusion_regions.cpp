// ElementwiseRegion on cpu: the fused body runs as one loop over the output. The output is cut
// into blocks of kBlock elements; for each block every body value is computed in f32 into a
// small buffer (all of a block's temporaries stay in L1), so memory traffic is one read of each
// input and one write of the output, however long the chain. Body nodes may have smaller shapes
// than the output (elementwise ops commute with broadcasting), so each is evaluated on the block
// of its value broadcast to the output shape. f16 / bf16 values are rounded after each step as
// the unfused graph rounds them, so fusing never changes a result beyond f32 contraction.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cpu/activation.h"
#include "backends/cpu/convert.h"
#include "backends/cpu/families.h"
#include "backends/cpu/region_body.h"
#include "ops/scalar_math.h"
#include "runtime/kernel_util.h"
#include "runtime/thread_pool.h"
// clang-format off
#include "backends/cpu/simd_math.h"
// clang-format on

TESSEL_ISA_BEGIN
namespace {

constexpr int64_t kBlock = 512;
constexpr int kMaxRank = 16;

bool computes_in_f32(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::Bool;
}

// A body value's source when it is not computed: a region input or a body constant, read
// through a view broadcast to the output shape.
struct Leaf {
  HostTensor view;
  int slot;
  bool direct = false;   // contiguous f32: steps read it in place, no copy into the block
  bool uniform = false;  // one element: its block is filled once per task
  bool input = false;    // a region input (not a body constant)
};

struct Step;
// A step's loop over `len` elements of its arguments into y (run_step's signature).
using StepFn = void (*)(const Step&, const float* const* arg, float* y, int64_t len, bool stream);

// A computed body node with its attributes read once per kernel call (not once per block).
struct Step {
  OpKind kind;
  int op = 0;          // the ActivationKind / BinaryOp / CmpOp
  float a = 0, b = 0;  // Activation: alpha; Clamp: min, max
  DType out;
  std::vector<int> args;  // buffer slots of the inputs
  int slot;
  bool fma = false;  // Binary Add of a Mul merged into it: args[0]·args[1] + args[2]
  int then = -1;     // an ActivationKind applied in registers before the store (-1: none)
  // `then` through common_case_first where it has one (a region ≫ cache: set per kernel call).
  bool common_first = false;
  StepFn fn = nullptr;  // its loop, chosen once the plan's steps are final (resolve)
};

struct Plan {
  std::vector<int> slot;  // body node id -> buffer slot (-1: none)
  std::vector<Leaf> leaves;
  std::vector<Step> steps;  // computed nodes, in order
  int slots = 0;
};

// Row-major and gap-free (strides of size-1 dimensions do not matter).
bool dense(const HostTensor& t) {
  int64_t expect = 1;
  for (int d = t.rank() - 1; d >= 0; --d) {
    if (t.shape[d] == 1) continue;
    if (t.strides[d] != expect) return false;
    expect *= t.shape[d];
  }
  return true;
}

// Reads elements [start, start + len) (row-major over the view's shape) as f32.
void read_block(const HostTensor& v, int64_t start, int64_t len, float* dst) {
  int r = v.rank();
  if (r == 0) {
    to_f32(v.data(), v.dtype, 0, dst, 1);
    for (int64_t i = 1; i < len; ++i) dst[i] = dst[0];
    return;
  }
  int64_t idx[kMaxRank];
  int64_t rem = start;
  for (int d = r - 1; d >= 0; --d) {
    idx[d] = rem % v.shape[d];
    rem /= v.shape[d];
  }
  int64_t done = 0;
  while (done < len) {
    int64_t off = v.offset;
    for (int d = 0; d < r; ++d) off += idx[d] * v.strides[d];
    int64_t run = std::min(len - done, v.shape[r - 1] - idx[r - 1]);
    to_f32(v.storage->bytes.get() + off * dtype_size(v.dtype), v.dtype, v.strides[r - 1],
           dst + done, run);
    done += run;
    idx[r - 1] += run;
    for (int d = r - 1; d > 0 && idx[d] == v.shape[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

// For merging steps: how often each slot is read (the result counts once), which step writes
// it, and which steps a merge has made redundant.
struct StepUses {
  std::vector<int> uses, producer;
  std::vector<bool> gone;
  StepUses(const Plan& p, int result_slot)
      : uses(static_cast<size_t>(p.slots), 0),
        producer(static_cast<size_t>(p.slots), -1),
        gone(p.steps.size(), false) {
    for (size_t i = 0; i < p.steps.size(); ++i) {
      producer[p.steps[i].slot] = static_cast<int>(i);
      for (int a : p.steps[i].args) ++uses[a];
    }
    if (result_slot >= 0) ++uses[result_slot];
  }
  // The f32 step of `kind` and `op` writing `slot`, read only there and not merged yet; else
  // null.
  const Step* single_use(const Plan& p, int slot, OpKind kind, int op) const {
    const int i = producer[slot];
    if (i < 0 || gone[i] || uses[slot] != 1) return nullptr;
    const Step& s = p.steps[i];
    return s.kind == kind && s.op == op && s.out == DType::F32 ? &s : nullptr;
  }
  void drop(const Step* s, const Plan& p) { gone[s - p.steps.data()] = true; }
  void erase_gone(Plan& p) const {
    std::vector<Step> kept;
    for (size_t i = 0; i < p.steps.size(); ++i)
      if (!gone[i]) kept.push_back(std::move(p.steps[i]));
    p.steps = std::move(kept);
  }
};

// Whether `slot` is a one-element leaf (a scalar constant) equal to v (never for an empty
// output, whose views have no element to read).
bool is_scalar(const Plan& p, int slot, float v) {
  for (const Leaf& l : p.leaves)
    if (l.slot == slot) {
      if (!l.uniform || l.view.numel() == 0) return false;
      float x;
      read_block(l.view, 0, 1, &x);
      return x == v;
    }
  return false;
}

// x·clamp(x + 3, 0, 6) / 6 spelled out in f32 steps (ONNX exports write HardSwish so: Add, Max,
// Min or Clip, Mul, Div; PaddleOCR's LCNet after every convolution) becomes one HardSwish step,
// which computes it in the same order with the same roundings: four passes over the block fewer.
void merge_hard_swishes(Plan& p, int result_slot) {
  StepUses u(p, result_slot);
  const auto bin = [](BinaryOp op) { return static_cast<int>(op); };
  // The operand of a commutative step `s` other than the scalar v (-1 if neither is v).
  const auto other_than = [&](const Step* s, float v) {
    if (s == nullptr) return -1;
    return is_scalar(p, s->args[1], v) ? s->args[0] : is_scalar(p, s->args[0], v) ? s->args[1] : -1;
  };
  for (Step& div : p.steps) {
    if (div.kind != OpKind::Binary || div.op != bin(BinaryOp::Div) || div.out != DType::F32 ||
        !is_scalar(p, div.args[1], 6))
      continue;
    const Step* mul = u.single_use(p, div.args[0], OpKind::Binary, bin(BinaryOp::Mul));
    if (mul == nullptr) continue;
    for (int side = 0; side < 2; ++side) {
      const int x = mul->args[side], c = mul->args[1 - side];
      // c = clamp(t, 0, 6): a Clamp step, or Min(Max(t, 0), 6).
      const Step* clamp = u.single_use(p, c, OpKind::Clamp, 0);
      const Step *mn = nullptr, *mx = nullptr;
      int t = -1;
      if (clamp != nullptr && clamp->a == 0 && clamp->b == 6) {
        t = clamp->args[0];
      } else {
        mn = u.single_use(p, c, OpKind::Binary, bin(BinaryOp::Min));
        const int m = other_than(mn, 6);
        if (m >= 0) mx = u.single_use(p, m, OpKind::Binary, bin(BinaryOp::Max));
        t = other_than(mx, 0);
      }
      if (t < 0) continue;
      const Step* add = u.single_use(p, t, OpKind::Binary, bin(BinaryOp::Add));
      if (other_than(add, 3) != x) continue;
      for (const Step* s : {add, mx, mn, clamp, mul})
        if (s != nullptr) u.drop(s, p);
      div.kind = OpKind::Activation;
      div.op = static_cast<int>(ActivationKind::HardSwish);
      div.args = {x};
      break;
    }
  }
  u.erase_gone(p);
}

// An f32 Add one of whose operands is an f32 Mul read nowhere else becomes one step,
// a·b + c through an FMA: one pass over the block fewer (affine maps are Mul then Add), and one
// rounding fewer, as the contracted unfused graph.
void merge_multiply_adds(Plan& p, int result_slot) {
  StepUses u(p, result_slot);
  for (Step& add : p.steps) {
    if (add.kind != OpKind::Binary || add.op != static_cast<int>(BinaryOp::Add) ||
        add.out != DType::F32)
      continue;
    for (int side = 0; side < 2; ++side) {
      const Step* mul =
          u.single_use(p, add.args[side], OpKind::Binary, static_cast<int>(BinaryOp::Mul));
      if (mul == nullptr) continue;
      add.args = {mul->args[0], mul->args[1], add.args[1 - side]};
      add.fma = true;
      u.drop(mul, p);
      break;
    }
  }
  u.erase_gone(p);
}

// GELU and tanh as a Binary step applies them, with their common case and the rest (`near` and
// `far`: vgelu_near and vgelu_far, vtanh_near and vtanh_far) for common_case_first.
struct GeluThen {
  Vf operator()(Vf v) const { return vgelu(v); }
  Vf near(Vf v, bool& covers) const { return vgelu_near(v, covers); }
  Vf far(Vf v, Vf near) const { return vgelu_far(v, near); }
};
struct TanhThen {
  Vf operator()(Vf v) const { return vtanh(v); }
  Vf near(Vf v, bool& covers) const { return vtanh_near(v, covers); }
  Vf far(Vf v, Vf near) const { return vtanh_far(v, near); }
};

// The activations a Binary step applies in registers before its store (merge_activations):
// f(kind) is called with a callable Vf -> Vf, or not at all for other kinds.
template <class F>
bool with_then(ActivationKind k, F f) {
  switch (k) {
    case ActivationKind::Gelu:
      return f(GeluThen{}), true;
    case ActivationKind::Tanh:
      return f(TanhThen{}), true;
    case ActivationKind::Sigmoid:
      return f([](Vf v) { return vsigmoid(v); }), true;
    case ActivationKind::Silu:
      return f([](Vf v) { return v * vsigmoid(v); }), true;
    case ActivationKind::Relu:
      return f([](Vf v) { return v < 0.0f ? Vf{} : v; }), true;
    default:
      return false;
  }
}

// An f32 activation that with_then knows, whose argument is an f32 Add, Sub, Mul or multiply-add
// read nowhere else, runs inside that step, on the step's vector before it is stored: one pass
// over the block fewer, with the same roundings (the intermediate is f32 either way). Affine maps
// followed by an activation are the common region body (bias + GELU, scale + tanh).
void merge_activations(Plan& p, int result_slot) {
  StepUses u(p, result_slot);
  for (Step& act : p.steps) {
    if (act.kind != OpKind::Activation || act.out != DType::F32 ||
        !with_then(static_cast<ActivationKind>(act.op), [](auto) {}))
      continue;
    for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul}) {
      const Step* found = u.single_use(p, act.args[0], OpKind::Binary, static_cast<int>(op));
      if (found == nullptr || found->then >= 0) continue;
      Step& s = p.steps[static_cast<size_t>(found - p.steps.data())];
      s.then = act.op;
      s.slot = act.slot;  // the activation's readers read the merged step
      u.drop(&act, p);
      break;
    }
  }
  u.erase_gone(p);
}

void resolve(Step& s);

Plan plan_body(const Node& node, const Graph& body, std::span<const HostTensor> in,
               const Shape& out_shape) {
  Plan p;
  p.slot.assign(body.size(), -1);
  size_t next_input = 0;
  for (const Node& n : body.nodes()) {
    for (const TensorType& t : n.outputs)
      if (!computes_in_f32(t.dtype))
        throw_error(ErrorKind::Unsupported, node.where(), ": body node ", n.where(), " is ",
                    t.str(), "; the cpu region kernel computes f32, f16, bf16 and bool values");
    if (n.kind == OpKind::Input || n.kind == OpKind::Constant) {
      HostTensor t = n.kind == OpKind::Input ? in[next_input++] : *n.literal;
      if (static_cast<int>(out_shape.size()) > kMaxRank)
        throw_error(ErrorKind::Unsupported, node.where(), ": rank ", out_shape.size(),
                    " exceeds the region kernel's ", kMaxRank);
      p.slot[n.id] = p.slots++;
      HostTensor view = broadcast_to(t, out_shape);
      const bool direct = view.dtype == DType::F32 && dense(view);
      const bool uniform = t.numel() == 1;
      p.leaves.push_back({std::move(view), p.slot[n.id], direct, uniform, n.kind == OpKind::Input});
      continue;
    }
    switch (n.kind) {
      case OpKind::Activation:
      case OpKind::Binary:
      case OpKind::Compare:
      case OpKind::Where:
      case OpKind::Cast:
      case OpKind::Clamp:
      case OpKind::StopGradient:
        break;
      default:
        throw_error(ErrorKind::Unsupported, node.where(), ": body node ", n.where(),
                    " is not elementwise; the cpu region kernel runs Activation, Binary, "
                    "Compare, Where, Cast, Clamp and StopGradient");
    }
    p.slot[n.id] = p.slots++;
    Step st{n.kind, 0, 0, 0, n.outputs[0].dtype, {}, p.slot[n.id]};
    if (n.kind == OpKind::Activation) {
      st.op = static_cast<int>(n.attrs.e<ActivationKind>("kind"));
      st.a = static_cast<float>(n.attrs.f("alpha"));
    } else if (n.kind == OpKind::Binary) {
      st.op = static_cast<int>(n.attrs.e<BinaryOp>("op"));
    } else if (n.kind == OpKind::Compare) {
      st.op = static_cast<int>(n.attrs.e<CmpOp>("op"));
    } else if (n.kind == OpKind::Clamp) {
      st.a = static_cast<float>(n.attrs.f("min"));
      st.b = static_cast<float>(n.attrs.f("max"));
    }
    for (Value v : n.inputs) st.args.push_back(p.slot[v.node]);
    p.steps.push_back(std::move(st));
  }
  merge_hard_swishes(p, p.slot[body.outputs.at(0).node]);
  merge_multiply_adds(p, p.slot[body.outputs.at(0).node]);
  merge_activations(p, p.slot[body.outputs.at(0).node]);
  for (Step& st : p.steps) resolve(st);
  return p;
}

void binary_block(BinaryOp op, const float* a, const float* b, float* y, int64_t n) {
  int64_t i = 0;
  auto vec = [&](auto f) {
    for (; i + kLanesF <= n; i += kLanesF) store(y + i, f(load<Vf>(a + i), load<Vf>(b + i)));
  };
  switch (op) {
    case BinaryOp::Add:
      vec([&](Vf x, Vf z) { return x + z; });
      break;
    case BinaryOp::Sub:
      vec([&](Vf x, Vf z) { return x - z; });
      break;
    case BinaryOp::Mul:
      vec([&](Vf x, Vf z) { return x * z; });
      break;
    case BinaryOp::Div:
      vec([&](Vf x, Vf z) { return x / z; });
      break;
    case BinaryOp::Max:
      vec([&](Vf x, Vf z) { return max_nan(x, z); });
      break;
    case BinaryOp::Min:
      vec([&](Vf x, Vf z) { return min_nan(x, z); });
      break;
    case BinaryOp::Pow:  // as the Binary kernel computes it (a square without libm)
      vec([&](Vf x, Vf z) { return vpow(x, z); });
      break;
    case BinaryOp::Mod:
    case BinaryOp::FloorMod:
    case BinaryOp::Atan2:
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor:
    case BinaryOp::Shl:
    case BinaryOp::Shr:
      break;  // the scalar definition below (bitwise ops never reach here: float-only body)
  }
  for (; i < n; ++i) y[i] = static_cast<float>(binary_f64(op, a[i], b[i]));
}

// y[i] = f(a[i], b[i], c[i]) over whole vectors, then the scalar tail; f takes and returns Vf
// (the scalar tail goes through lanes of a one-element vector, so both share one definition).
// An absent b or c (null) reads a in its place, for f to ignore: the loop tests nothing but its
// bound (see binary_then).
// `stream` (y vector-aligned, n whole vectors): y is written past the cache (store_stream).
template <class F>
void map3(const float* a, const float* b, const float* c, float* y, int64_t n, F f,
          bool stream = false) {
  if (b == nullptr) b = a;
  if (c == nullptr) c = a;
  int64_t i = 0;
  auto at = [&](int64_t j) { return f(load<Vf>(a + j), load<Vf>(b + j), load<Vf>(c + j)); };
  if (stream) {
    for (; i < n; i += kLanesF) store_stream(y + i, at(i));
    return;
  }
  for (; i + kLanesF <= n; i += kLanesF) store(y + i, at(i));
  for (; i < n; ++i) y[i] = f(splat<Vf>(a[i]), splat<Vf>(b[i]), splat<Vf>(c[i]))[0];
}

// y[i] = act(pre(a[i], b[i], c[i])) as map3 (not streamed; y none of a, b and c), in two passes
// over runs of up to 64 vectors: every vector through act's common case (act.near), noting the
// ones it does not cover in a bit mask, then the rest of act (act.far) on those, their arguments
// read again. No data-dependent branch in the first pass: only the second's trip count depends on
// the data.
template <class Pre, class Act>
void common_case_first(const float* a, const float* b, const float* c, float* y, int64_t n, Pre pre,
                       Act act) {
  if (b == nullptr) b = a;
  if (c == nullptr) c = a;
  const auto at = [&](int64_t j) { return pre(load<Vf>(a + j), load<Vf>(b + j), load<Vf>(c + j)); };
  int64_t i = 0;
  while (i + kLanesF <= n) {
    const int64_t i0 = i;
    uint64_t rare = 0;  // bit k: the vector at i0 + k·kLanesF
    for (int k = 0; k < 64 && i + kLanesF <= n; ++k, i += kLanesF) {
      bool covers;
      store(y + i, act.near(at(i), covers));
      rare |= static_cast<uint64_t>(!covers) << k;
    }
    for (; rare != 0; rare &= rare - 1) {
      const int64_t j = i0 + std::countr_zero(rare) * kLanesF;
      store(y + j, act.far(at(j), load<Vf>(y + j)));
    }
  }
  for (; i < n; ++i) y[i] = act(pre(splat<Vf>(a[i]), splat<Vf>(b[i]), splat<Vf>(c[i])))[0];
}

void compare_block(CmpOp op, const float* a, const float* b, float* y, int64_t n) {
  const Vf one = splat<Vf>(1.f), zero{};
  dispatch_cmp(op, [&](auto pred) {
    map3(a, b, nullptr, y, n, [&](Vf x, Vf z, Vf) { return pred(x, z) ? one : zero; });
  });
}

// A Binary step (Add, Sub, Mul or a multiply-add: F) with the activation Act applied before the
// store, one small function per form and activation (resolve picks it once per kernel call).
// Flattened: GCC kept vtanh out of line, and the call per vector spilled every live vector. These
// loops were the branches of one flattened function over every form and activation, testing in
// the loop which operands exist (map3's): tanh(gelu(x·a + 0.5)·c) over 16M elements, one
// thread, took 1.2–1.5× the time of the same two loops written out by hand, now 1.0–1.2× (runs
// of 25 alternations); two threads, 8 rounds: 0.70 → 0.79 of the copy's rate, faster in every
// round (either change alone: no gain).
//
// In a region ≫ cache (Step::common_first), GELU and tanh (an Act with `near`) written to the
// block buffer go through common_case_first: a branch per vector on their rare lanes (GELU's past
// 1.3: about one vector in six with the chain benchmark's inputs, at random) mispredicted, and a
// flushed pipeline there also drops the loads in flight. tanh(gelu(x·a + 0.5)·c) over 16M
// elements, two threads, 10 rounds: 0.59 → 0.72 of the same spells' copy (9 rounds of 10
// faster); a one-off probe of the same two loops (not in the tree): 0.71–0.75 → 0.88–0.95, and
// 0.85–1.04 with no rare path at all (wrong past 1.3). In cache the branch is cheaper than the
// second pass (that chain over 256K elements on one thread: 0.56 → 0.50 of the copy), so smaller
// regions keep it, as does a streamed result (the fix-up would write lines already sent past the
// cache).
enum class Form { Fma, Add, Sub, Mul };
template <class Act>
concept HasCommonCase = requires(const Act act, Vf v, bool& covers) {
  act.near(v, covers);
  act.far(v, v);
};
template <Form F, class Act>
[[gnu::flatten]] void binary_then(const Step& s, const float* const* arg, float* y, int64_t len,
                                  bool stream) {
  const Act act;
  const auto pre = [](Vf u, Vf v, Vf w) {
    if constexpr (F == Form::Fma) return u * v + w;
    if constexpr (F == Form::Add) return u + v;
    if constexpr (F == Form::Sub) return u - v;
    return u * v;
  };
  const float* c = F == Form::Fma ? arg[2] : nullptr;
  if constexpr (HasCommonCase<Act>)
    if (s.common_first && !stream && y != arg[0] && y != arg[1] && y != c)
      return common_case_first(arg[0], arg[1], c, y, len, pre, act);
  map3(
      arg[0], arg[1], c, y, len, [&](Vf u, Vf v, Vf w) { return act(pre(u, v, w)); }, stream);
}

// Whether run_step can stream the step's result past the cache itself (see run_step's
// `stream`): the Binary steps with an activation or as a multiply-add, which pass it to map3.
bool streams(const Step& n) {
  return n.kind == OpKind::Binary && (n.then >= 0 || n.fma) && n.out == DType::F32;
}

// Every step but a Binary one with an activation (binary_then's; resolve picks between them).
// `stream` (only where streams(n)): y, vector-aligned, of whole vectors, written past the cache.
void run_step(const Step& n, const float* const* arg, float* y, int64_t len, bool stream) {
  switch (n.kind) {
    case OpKind::Activation:
      activation_f32(static_cast<ActivationKind>(n.op), n.a, arg[0], y, len);
      break;
    case OpKind::Binary:
      if (n.fma)
        map3(
            arg[0], arg[1], arg[2], y, len, [](Vf a, Vf b, Vf c) { return a * b + c; }, stream);
      else
        binary_block(static_cast<BinaryOp>(n.op), arg[0], arg[1], y, len);
      break;
    case OpKind::Compare:
      compare_block(static_cast<CmpOp>(n.op), arg[0], arg[1], y, len);
      break;
    case OpKind::Where:
      map3(arg[0], arg[1], arg[2], y, len, [](Vf c, Vf a, Vf b) { return c != 0.f ? a : b; });
      break;
    case OpKind::Cast: {
      DType to = n.out;
      if (to == DType::Bool) {
        const Vf one = splat<Vf>(1.f), zero{};
        map3(arg[0], nullptr, nullptr, y, len, [&](Vf x, Vf, Vf) { return x != 0.f ? one : zero; });
      } else {  // round through the target dtype
        uint16_t tmp[kBlock];
        if (to == DType::F32) {
          std::memmove(y, arg[0], static_cast<size_t>(len) * sizeof(float));
        } else {
          from_f32(arg[0], tmp, to, 1, len);
          to_f32(tmp, to, 1, y, len);
        }
      }
      break;
    }
    case OpKind::Clamp: {
      const Vf lo = splat<Vf>(n.a), hi = splat<Vf>(n.b);
      map3(arg[0], nullptr, nullptr, y, len, [&](Vf x, Vf, Vf) {
        Vf c = x < lo ? lo : x;
        c = c > hi ? hi : c;  // lo > hi gives hi, as torch
        return x != x ? x : c;
      });
      break;
    }
    default:  // StopGradient (plan_body admits nothing else)
      std::memmove(y, arg[0], static_cast<size_t>(len) * sizeof(float));
  }
}

// A Binary step with an activation runs its own loop (binary_then); every other step runs
// through run_step.
void resolve(Step& s) {
  s.fn = run_step;
  if (s.kind != OpKind::Binary || s.then < 0) return;
  with_then(static_cast<ActivationKind>(s.then), [&](auto act) {
    using Act = decltype(act);
    s.fn = s.fma                                     ? binary_then<Form::Fma, Act>
           : s.op == static_cast<int>(BinaryOp::Add) ? binary_then<Form::Add, Act>
           : s.op == static_cast<int>(BinaryOp::Sub) ? binary_then<Form::Sub, Act>
                                                     : binary_then<Form::Mul, Act>;
  });
}

// Whether a step's f32 results are rounded to its dtype (round_to), as the unfused graph stores
// them.
bool rounds(DType t) { return t == DType::F16 || t == DType::BF16; }
void round_to(DType t, float* v, int64_t len) {
  uint16_t tmp[kBlock];
  from_f32(v, tmp, t, 1, len);
  to_f32(tmp, t, 1, v, len);
}

// Where a task's blocks find each step's operands and result. A slot is a block buffer, the same
// for every block, or a direct leaf's memory, which moves with the block's start. Bound once per
// task, a block's dispatch is one add a pointer, all of them computed before the first step runs.
// Before, each block went through a function that looked every operand up in a table of slots
// between the steps (and a call to test for rounding after each): tanh(gelu(x·a + 0.5)·c) took
// 1.11–1.28× the time of the same two step functions called by hand on fixed pointers (a one-off
// in-process probe, 256K elements in cache, one thread), now 1.05–1.07×. Through cpu_bench, 10
// alternating rounds: 16M elements on two threads 0.71 → 0.83 of the copy (8 rounds of 10
// faster); 256K on one thread 0.61 → 0.68. Which part of the old dispatch cost what, the probe
// did not settle (larger blocks recovered little of it: 1024 even, 2048 ~7%).
struct Binding {
  std::vector<const float*> at;   // slot -> its block at start 0 (a leaf's memory or a buffer)
  std::vector<int64_t> moves;     // slot -> 1 where it moves with the block's start, else 0
  std::vector<const float*> arg;  // 3 a step: its operands at start 0 (absent ones: the first)
  std::vector<int64_t> arg_moves;
  std::vector<float*> out;        // a step's block buffer
  std::vector<const float*> cur;  // 3 a step: this block's operands
};

// Binds `plan` for blocks of `buf` (its block buffers); `at` and `moves` give the slots that are
// not a step's buffer: leaves (and whatever a caller points a slot at).
void bind(const Plan& plan, float* buf, Binding& b) {
  b.arg.clear();
  b.arg_moves.clear();
  b.out.clear();
  for (const Step& s : plan.steps) {
    b.at[s.slot] = buf + s.slot * kBlock;
    b.moves[s.slot] = 0;
  }
  for (const Step& s : plan.steps) {
    for (size_t i = 0; i < 3; ++i) {
      const int slot = s.args[i < s.args.size() ? i : 0];
      b.arg.push_back(b.at[slot]);
      b.arg_moves.push_back(b.moves[slot]);
    }
    b.out.push_back(buf + s.slot * kBlock);
  }
  b.cur.resize(b.arg.size());
}

// Leaves' slots in `b`: direct leaves read in place (moving with the block), the others from their
// blocks of `buf` (uniform ones filled here, once, unless `uniform` holds their blocks already;
// the rest per block by read_leaves). Direct leaves are left to the hardware prefetcher:
// requesting each one's block two ahead in software, a burst of 32 lines a leaf, made
// tanh(gelu(x·a + 0.5)·c) over 16M elements 1.2× slower on one and two threads (the bursts stall
// the loads behind them), and y = x·a + c no faster.
void bind_leaves(const Plan& plan, float* buf, int64_t n, Binding& b,
                 const float* uniform = nullptr) {
  b.at.assign(static_cast<size_t>(plan.slots), nullptr);
  b.moves.assign(static_cast<size_t>(plan.slots), 0);
  for (const Leaf& l : plan.leaves) {
    if (l.direct) {
      b.at[l.slot] = reinterpret_cast<const float*>(l.view.data());
      b.moves[l.slot] = 1;
      continue;
    }
    b.at[l.slot] = (l.uniform && uniform != nullptr ? uniform : buf) + l.slot * kBlock;
    if (l.uniform && uniform == nullptr)
      read_block(l.view, 0, std::min(kBlock, n), buf + l.slot * kBlock);
  }
}

// The blocks of leaves neither direct nor uniform: elements [start, start + len) read into buf.
void read_leaves(const Plan& plan, int64_t start, int64_t len, float* buf) {
  for (const Leaf& l : plan.leaves)
    if (!l.direct && !l.uniform) read_block(l.view, start, len, buf + l.slot * kBlock);
}

// Each step on elements [start, start + len) as bound in `b`: into its block buffer, or into
// `last_out` for the last step when given. Returns where `slot`'s values are.
// `stream_last`: the last step streams its result to last_out (run_step's `stream`).
// Inlined into the loops over blocks, as is the test for rounding (the probe above: run_steps as
// a function of its own, calling round_to after each step, 1.12–1.16×; inlined 1.07–1.10×; with
// the test inlined too 1.05–1.07×).
[[gnu::always_inline]] inline const float* run_steps(const Plan& plan, Binding& b, int64_t start,
                                                     int64_t len, float* last_out, int slot,
                                                     bool stream_last = false) {
  const size_t n = plan.steps.size();
  for (size_t j = 0; j < b.cur.size(); ++j) b.cur[j] = b.arg[j] + b.arg_moves[j] * start;
  // A step reads index i before writing it, so a last step writing over an input is fine.
  for (size_t k = 0; k < n; ++k) {
    const Step& s = plan.steps[k];
    const bool last = k + 1 == n && last_out != nullptr;
    float* out = last ? last_out : b.out[k];
    s.fn(s, b.cur.data() + 3 * k, out, len, last && stream_last);
    if (rounds(s.out)) round_to(s.out, out, len);
  }
  if (last_out != nullptr && n > 0 && plan.steps.back().slot == slot) return last_out;
  return b.at[slot] + b.moves[slot] * start;
}

void kernel_elementwise_region(const Node& node, std::span<const HostTensor> in,
                               std::span<HostTensor> out) {
  const Graph& body = *node.attrs.graph("body");
  HostTensor& y = out[0];
  Plan plan = plan_body(node, body, in, y.shape);
  Value result = body.outputs[0];
  int64_t n = y.numel();
  int64_t blocks = (n + kBlock - 1) / kBlock;
  int64_t cost = static_cast<int64_t>(plan.steps.size()) + static_cast<int64_t>(plan.leaves.size());
  const bool direct_out = y.dtype == DType::F32 && !plan.steps.empty() &&
                          plan.steps.back().slot == plan.slot[result.node];
  // An f32 output ≫ cache is streamed to y past the cache: by the last step itself where it can,
  // else from the last step's block buffer.
  const bool stream = direct_out && n * static_cast<int64_t>(sizeof(float)) >= kStreamBytes;
  if (n * static_cast<int64_t>(sizeof(float)) >= kStreamBytes)
    for (Step& s : plan.steps) s.common_first = true;
  parallel_for(
      blocks, std::max<int64_t>(1, 64 / std::max<int64_t>(cost, 1)), [&](int64_t b0, int64_t b1) {
        // One vector of slack: a streamed block reads its last vector past `len`.
        AlignedVector<float> buf(static_cast<size_t>(plan.slots) * kBlock + kLanesF);
        Binding bound;
        bind_leaves(plan, buf.data(), n, bound);
        bind(plan, buf.data(), bound);
        for (int64_t b = b0; b < b1; ++b) {
          int64_t start = b * kBlock, len = std::min(kBlock, n - start);
          // The last step of an f32 region writes the output in place.
          float* yb = direct_out ? reinterpret_cast<float*>(y.data()) + start : nullptr;
          // Streamed by the last step itself where it can: tanh(gelu(x·a + 0.5)·c) over 16M
          // elements, two threads, took ×0.84 the time of streaming the block buffer afterwards
          // (7 alternating rounds).
          const bool step_streams = stream && streams(plan.steps.back()) && len % kLanesF == 0 &&
                                    reinterpret_cast<uintptr_t>(yb) % kVectorBytes == 0;
          read_leaves(plan, start, len, buf.data());
          const float* r =
              run_steps(plan, bound, start, len, !stream || step_streams ? yb : nullptr,
                        plan.slot[result.node], step_streams);
          if (stream && !step_streams)
            store_row_stream<Vf>(yb, len, [r](int64_t i) { return load<Vf>(r + i); });
          else if (!direct_out)
            from_f32(r, y.data() + start * dtype_size(y.dtype), y.dtype, 1, len);
        }
        if (stream) stream_fence();
      });
}

}  // namespace

struct RegionBody {
  Plan plan;
  HostTensor y;
  int result;                  // the slot of the body's result
  int y_slot = -1;             // the slot of y, the body's parameter
  bool position_free = false;  // every leaf but y is one element: no step reads by position
  std::vector<float> uniform;  // a block of each uniform leaf's value, filled once
};

std::shared_ptr<const RegionBody> region_body(const Node& node, const Graph& body,
                                              const HostTensor& y) {
  auto rb = std::make_shared<RegionBody>();
  const HostTensor in[1] = {y};
  rb->plan = plan_body(node, body, in, y.shape);
  rb->y = y;
  rb->result = rb->plan.slot[body.outputs.at(0).node];
  rb->uniform.resize(static_cast<size_t>(rb->plan.slots) * kBlock);
  const int64_t n = std::min(kBlock, y.numel());
  rb->position_free = true;
  for (const Leaf& l : rb->plan.leaves) {
    if (l.input) rb->y_slot = l.slot;
    rb->position_free = rb->position_free && (l.input || l.uniform);
    if (l.uniform && !l.direct) read_block(l.view, 0, n, rb->uniform.data() + l.slot * kBlock);
  }
  rb->position_free = rb->position_free && rb->y_slot >= 0;
  return rb;
}

namespace {

// The thread's block buffers for a body (one more block past its slots for a caller's use), and
// its leaves bound (uniform ones to the body's blocks of them); `bind` is left to the caller.
struct BodyScratch {
  AlignedVector<float>& buf;
  Binding& bound;
};
BodyScratch body_scratch(const RegionBody& rb) {
  thread_local AlignedVector<float> buf;
  thread_local Binding bound;
  buf.resize(static_cast<size_t>(rb.plan.slots + 1) * kBlock + kLanesF);
  bind_leaves(rb.plan, buf.data(), rb.y.numel(), bound, rb.uniform.data());
  return {buf, bound};
}

}  // namespace

void run_region_body(const RegionBody& rb, int64_t start, int64_t len) {
  const Plan& plan = rb.plan;
  float* y = reinterpret_cast<float*>(rb.y.data());
  auto [buf, bound] = body_scratch(rb);
  bind(plan, buf.data(), bound);
  // The result's step, when last, writes y in place (no later step reads y).
  const bool in_place = !plan.steps.empty() && plan.steps.back().slot == rb.result;
  for (int64_t s0 = start; s0 < start + len; s0 += kBlock) {
    const int64_t m = std::min(kBlock, start + len - s0);
    read_leaves(plan, s0, m, buf.data());
    const float* res = run_steps(plan, bound, s0, m, in_place ? y + s0 : nullptr, rb.result);
    if (res != y + s0) std::memmove(y + s0, res, static_cast<size_t>(m) * sizeof(float));
  }
}

void run_region_body_tile(const RegionBody& rb, int64_t start, int64_t ld, int64_t rows,
                          int64_t cols) {
  if (cols == ld) return run_region_body(rb, start, rows * cols);
  if (!rb.position_free) {
    for (int64_t r = 0; r < rows; ++r) run_region_body(rb, start + r * ld, cols);
    return;
  }
  // Short rows cost a pass of every step each (and a scalar tail): gather blocks of kBlock
  // elements from the rows, run the steps on the block, scatter the result back.
  float* y = reinterpret_cast<float*>(rb.y.data()) + start;
  auto [buf, bound] = body_scratch(rb);
  float* block = buf.data() + static_cast<size_t>(rb.plan.slots) * kBlock;
  bound.at[rb.y_slot] = block;  // y's elements gathered into `block`
  bound.moves[rb.y_slot] = 0;
  bind(rb.plan, buf.data(), bound);
  const bool in_place = !rb.plan.steps.empty() && rb.plan.steps.back().slot == rb.result;
  int64_t r = 0, c = 0;
  while (r < rows) {
    const int64_t r0 = r, c0 = c;
    int64_t m = 0;
    for (; m < kBlock && r < rows;) {
      const int64_t take = std::min(cols - c, kBlock - m);
      std::memcpy(block + m, y + r * ld + c, static_cast<size_t>(take) * sizeof(float));
      m += take;
      c += take;
      if (c == cols) c = 0, ++r;
    }
    const float* res = run_steps(rb.plan, bound, 0, m, in_place ? block : nullptr, rb.result);
    for (int64_t done = 0, rr = r0, cc = c0; done < m;) {
      const int64_t take = std::min(cols - cc, m - done);
      std::memcpy(y + rr * ld + cc, res + done, static_cast<size_t>(take) * sizeof(float));
      done += take;
      cc += take;
      if (cc == cols) cc = 0, ++rr;
    }
  }
}

void register_fusion_regions(KernelRegistry& r) {
  r.native(OpKind::ElementwiseRegion, kernel_elementwise_region,
           {DType::F32, DType::F16, DType::BF16});
}
TESSEL_ISA_END
