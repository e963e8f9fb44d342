// Parity cases for reductions, scans, sorting and selection, and random number generation.
// Products stay near 1 (no overflow over long axes); order statistics use values on a coarse grid
// so ties are exercised (their order is defined: stable, lower index first).
#include "parity/cases.h"

namespace tessel::parity {

std::vector<Case> cases_reduction(OpKind kind, int v, const Draw& d, CaseRng& rng) {
  const int64_t b = d.b, m = d.m, n = d.n;
  const Shape x3 = {b, m, n};
  auto var = [&](const char* attr) { return Attrs().set(attr, int64_t{v}); };
  auto unary = [&](std::string name, Attrs a, HostTensor x) {
    return make_case(std::move(name), std::move(a), {std::move(x)}, {true});
  };
  auto source = [&](std::string name, Attrs a) {
    Case c = make_case(std::move(name), std::move(a), {}, {});
    c.dtype_attr = "dtype";
    return c;
  };
  switch (kind) {
    case OpKind::Reduce: {
      auto op = static_cast<ReduceOp>(v);
      bool product = op == ReduceOp::Prod;
      double lo = product ? 0.8 : -2, hi = product ? 1.25 : 2;
      Attrs a = var("op");
      if (op == ReduceOp::Var || op == ReduceOp::Std) a.set("correction", int64_t{1});
      return {unary("axis1", Attrs(a).set("axes", Shape{1}), uniform(x3, rng, lo, hi)),
              unary("last_keep", Attrs(a).set("axes", Shape{-1}).set("keepdims", true),
                    uniform(x3, rng, lo, hi)),
              unary("all", a, uniform(elem_shape(d), rng, lo, hi))};
    }
    case OpKind::Softmax:
      return {unary("axis1", Attrs().set("axis", int64_t{1}), uniform(x3, rng, -4, 4)),
              unary("log_last", Attrs().set("log", true), uniform(x3, rng, -4, 4))};
    case OpKind::Cumsum:
      return {
          unary("excl", Attrs().set("axis", int64_t{2}).set("exclusive", true), uniform(x3, rng)),
          unary("rev_axis1", Attrs().set("axis", int64_t{1}).set("reverse", true),
                uniform(x3, rng))};
    case OpKind::CumProd:
      return {unary("rev", Attrs().set("axis", int64_t{2}).set("reverse", true),
                    uniform(x3, rng, 0.8, 1.25)),
              unary("axis1", Attrs().set("axis", int64_t{1}), uniform(x3, rng, 0.8, 1.25))};
    case OpKind::CumMax:
      return {
          unary("last", Attrs().set("axis", int64_t{2}), grid(x3, rng)),
          unary("rev_axis0", Attrs().set("axis", int64_t{0}).set("reverse", true), grid(x3, rng))};
    case OpKind::ArgMax:
    case OpKind::ArgMin:
      return {
          unary("axis1", Attrs().set("axis", int64_t{1}), grid(x3, rng)),
          unary("last_sel", Attrs().set("select_last", true).set("keepdims", true), grid(x3, rng))};
    case OpKind::TopK: {
      int64_t k = std::min<int64_t>(3, n);
      return {unary("largest", Attrs().set("k", k), uniform({b * m, n}, rng)),
              unary("smallest_axis1",
                    Attrs()
                        .set("k", std::min<int64_t>(2, m))
                        .set("axis", int64_t{1})
                        .set("largest", false),
                    grid(x3, rng))};
    }
    case OpKind::Sort:
    case OpKind::ArgSort:
      return {unary("asc", Attrs(), grid(x3, rng)),
              unary("desc_axis1", Attrs().set("axis", int64_t{1}).set("descending", true),
                    uniform(x3, rng))};
    case OpKind::Sample:
      return {unary("top_k", Attrs().set("seed", int64_t{3}).set("top_k", int64_t{4}),
                    uniform({b * m, n}, rng, -3, 3)),
              unary("greedy", Attrs().set("temperature", 0.0), uniform({b * m, n}, rng, -3, 3))};
    case OpKind::RngNormal:
      return {source("fill", Attrs().set("shape", x3).set("seed", int64_t{5}).set("std", 2.0))};
    case OpKind::RngUniform:
      return {source("fill", Attrs().set("shape", x3).set("seed", int64_t{7}).set("low", -1.0))};
    case OpKind::Dropout:
      return {unary("p03", Attrs().set("p", 0.3).set("seed", int64_t{1}), uniform(x3, rng))};
    default:
      return {};
  }
}

}  // namespace tessel::parity
