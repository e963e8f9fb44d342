// Parity cases for the elementwise kinds: same-shape, broadcast and scalar operands.
#include "ir/builder.h"
#include "parity/cases.h"

namespace tessel::parity {
namespace {

// Operand shapes for a binary-style kind: same shape, then numpy broadcasts of the right side.
std::vector<std::pair<std::string, Shape>> rhs_shapes(const Draw& d) {
  Shape a = elem_shape(d);
  std::vector<std::pair<std::string, Shape>> out = {{"same", a}};
  if (a.size() == 3) {
    out.push_back({"bcast_col", {d.m, 1}});
    out.push_back({"bcast_row", {d.n}});
  }
  if (!a.empty()) out.push_back({"bcast_scalar", {}});
  return out;
}

// A region whose body (typed like the cell's inputs) is built by `fn` from its parameters.
Case region(std::string name, std::vector<HostTensor> inputs,
            std::function<Value(GraphBuilder&, const std::vector<Value>&)> fn) {
  std::vector<bool> castable(inputs.size(), true);
  Case c = make_case(std::move(name), Attrs(), std::move(inputs), std::move(castable));
  c.finalize = [fn](Attrs& a, const std::vector<TensorType>& types) {
    auto body = std::make_shared<Graph>();
    GraphBuilder b(*body);
    std::vector<Value> ps;
    for (const TensorType& t : types) ps.push_back(body->input(t.dtype, t.shape));
    body->outputs = {fn(b, ps)};
    a.set("body", AttrValue(std::shared_ptr<const Graph>(body)));
  };
  return c;
}

}  // namespace

std::vector<Case> cases_elementwise(OpKind kind, int v, const Draw& d, CaseRng& rng) {
  Shape x = elem_shape(d);
  auto var = [&](const char* attr) { return Attrs().set(attr, int64_t{v}); };
  switch (kind) {
    case OpKind::Activation: {
      auto [lo, hi] = activation_domain(v);
      return {make_case("x", var("kind"), {uniform(x, rng, lo, hi)}, {true})};
    }
    case OpKind::StopGradient:
      return {make_case("x", Attrs(), {uniform(x, rng)}, {true})};
    case OpKind::Cast: {
      // A few target dtypes per draw, rotating through all computable ones.
      static const DType kTo[] = {DType::F32,  DType::F64,      DType::F16,    DType::BF16,
                                  DType::I32,  DType::I64,      DType::U8,     DType::I8,
                                  DType::Bool, DType::F8E4M3FN, DType::F8E5M2, DType::I16,
                                  DType::C64};
      constexpr int kCount = sizeof(kTo) / sizeof(kTo[0]);
      std::vector<Case> out;
      int first = static_cast<int>(rng.below(kCount));
      for (int i = 0; i < 3; ++i) {
        DType to = kTo[(first + i * 5) % kCount];
        out.push_back(make_case(std::string("to_") + dtype_name(to), Attrs().set("to", to),
                                {uniform(x, rng, -3, 3)}, {true}));
      }
      return out;
    }
    case OpKind::Binary: {
      auto op = static_cast<BinaryOp>(v);
      bool positive_b = op == BinaryOp::Div || op == BinaryOp::Mod || op == BinaryOp::FloorMod;
      // Shifts and integer powers need small non-negative right operands.
      bool small = op == BinaryOp::Shl || op == BinaryOp::Shr || op == BinaryOp::Pow;
      double blo = positive_b ? 0.5 : small ? 0 : -2, bhi = small ? 1.4 : 2;
      double alo = op == BinaryOp::Pow ? 0.5 : -2;
      std::vector<Case> out;
      for (auto& [name, bs] : rhs_shapes(d))
        out.push_back(make_case(
            name, var("op"), {uniform(x, rng, alo, 2), uniform(bs, rng, blo, bhi)}, {true, true}));
      return out;
    }
    case OpKind::Compare: {
      std::vector<Case> out;
      for (auto& [name, bs] : rhs_shapes(d))
        out.push_back(make_case(name, var("op"), {grid(x, rng), grid(bs, rng)}, {true, true}));
      return out;
    }
    case OpKind::Where: {
      std::vector<Case> out = {make_case(
          "same", Attrs(), {bools(x, rng), uniform(x, rng), uniform(x, rng)}, {false, true, true})};
      if (x.size() == 3)
        out.push_back(make_case("bcast", Attrs(),
                                {bools({d.m, d.n}, rng), uniform({d.n}, rng), uniform(x, rng)},
                                {false, true, true}));
      return out;
    }
    case OpKind::GatedActivation: {
      auto [lo, hi] = activation_domain(v);
      Shape s = d.scalar ? Shape{2} : d.vector ? Shape{2 * d.n} : Shape{d.b, d.m, 2 * d.n};
      std::vector<Case> out = {make_case("last", var("kind"), {uniform(s, rng, lo, hi)}, {true})};
      if (s.size() == 3)
        out.push_back(make_case("axis1", var("kind").set("axis", int64_t{1}),
                                {uniform({d.b, 2 * d.m, d.n}, rng, lo, hi)}, {true}));
      return out;
    }
    case OpKind::ConvRegion: {
      // A padded, grouped 2-D convolution, then HardSwish written out (its input used twice).
      const int64_t w = std::min<int64_t>(d.n, 64) + 2;
      Case c = make_case(
          "hardswish", Attrs().set("pads", Shape{1, 1}).set("groups", int64_t{2}),
          {uniform({d.b, 4, d.m + 2, w}, rng), uniform({6, 2, 3, 3}, rng), uniform({6}, rng)},
          {true, true, true});
      c.finalize = [](Attrs& a, const std::vector<TensorType>& types) {
        Graph scratch;
        std::vector<Value> ins;
        for (const TensorType& t : types) ins.push_back(scratch.input(t.dtype, t.shape));
        const TensorType y = scratch.type(scratch.add(OpKind::Conv, a, ins)[0]);
        auto body = std::make_shared<Graph>();
        GraphBuilder b(*body);
        Value x = body->input(y.dtype, y.shape);
        Value h = b.mul(x, b.clamp(b.add(x, b.scalar(3, y.dtype)), 0, 6));
        body->outputs = {b.div(h, b.scalar(6, y.dtype))};
        a.set("body", AttrValue(std::shared_ptr<const Graph>(body)));
      };
      return {c};
    }
    case OpKind::ElementwiseRegion: {
      Shape row = x.size() == 3 ? Shape{d.n} : x;
      auto bin = [](GraphBuilder& b, BinaryOp op, Value l, Value r) {
        return b.graph().add(OpKind::Binary, Attrs().set("op", op), {l, r})[0];
      };
      return {
          region("max_add", {uniform(x, rng), uniform(row, rng)},
                 [bin](GraphBuilder& b, const std::vector<Value>& p) {
                   return bin(b, BinaryOp::Add, bin(b, BinaryOp::Max, p[0], p[1]), p[0]);
                 }),
          // Bool selects by its own values; c64 has no order, so multiply-add.
          region("mul_add_or_where", {uniform(x, rng), uniform(x, rng)},
                 [bin](GraphBuilder& b, const std::vector<Value>& p) {
                   Graph& g = b.graph();
                   if (g.type(p[0]).dtype == DType::Bool)
                     return g.add(OpKind::Where, Attrs(), {p[0], p[1], p[0]})[0];
                   return bin(b, BinaryOp::Add, bin(b, BinaryOp::Mul, p[0], p[1]), p[0]);
                 }),
          region("select", {grid(x, rng), grid(x, rng)},
                 [](GraphBuilder& b, const std::vector<Value>& p) {
                   Graph& g = b.graph();
                   Value gt = g.add(OpKind::Compare, Attrs().set("op", CmpOp::Gt), {p[0], p[1]})[0];
                   return g.add(OpKind::Where, Attrs(), {gt, p[1], p[0]})[0];
                 })};
    }
    default:
      return {};
  }
}

}  // namespace tessel::parity
