// Walks the op table: every ready differentiable (kind, variant) is checked on the cpu backend in
// f32 against cpu's own forward. Inputs come from the parity harness's case generators (a batch
// draw of small sizes); the loss is Σ y·w over every f32 / f64 output y with a fixed random w,
// accumulated in f64 so the finite differences see only the op's own f32 rounding. grad_graph,
// compiled for cpu, gives the analytic gradient g of each float input x (integer, index and mask
// inputs get none); for a few random directions v the directional derivative <g, Δ> (Δ = the
// f32-rounded x+hv − (x−hv)) is compared with L(x+hv) − L(x−hv). A direction that crosses a kink
// (ReLU, max / min, sort order) is retried with a new direction and a smaller step; inputs drawn
// on a coarse grid (ties on purpose) are jittered off it first. Each cell is also run once with
// strided (non-contiguous) input views. A cell that is neither checked nor waived fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "op_test_util.h"
#include "parity/cases.h"
#include "parity/check.h"
#include "passes/passes.h"

namespace tessel::testing {
namespace {

// Parts of the walk that are not expected to agree, each with its reason: a whole (kind, variant)
// cell, or within it one case (the generator's name for it) or one input. Waived parts still run;
// a missing rule's part that then agrees fails the test until its waiver is removed (the list
// shrinks as rules land).
enum class Why { ByDesign, NoRuleYet };
struct Waiver {
  const char* kind;
  const char* variant;    // "" = every variant
  const char* case_name;  // "" = every case
  int input;              // -1 = every input
  Why why;
  const char* reason;
};
constexpr const char* kStraightThrough =
    "straight-through gradient by design (ops.def): 1, where the rounded forward is flat";
const std::vector<Waiver> kWaivers = {
    {"Activation", "Round", "", -1, Why::ByDesign, kStraightThrough},
    {"GatedActivation", "Round", "", -1, Why::ByDesign, kStraightThrough},
    {"Freeze", "", "", -1, Why::ByDesign,
     "gradient masked to zero where frozen, by design (ops.def): not the identity's derivative"},
};

// Kinds whose case generators draw inputs on a coarse grid (parity::grid, ties on purpose): their
// grid-valued inputs get a jitter that breaks the ties (a max / sort / compare of tied values has
// no derivative).
const std::set<OpKind> kGridKinds = {OpKind::CumMax, OpKind::TopK, OpKind::Sort,
                                     OpKind::ElementwiseRegion, OpKind::ReluBackward};
// Order statistics: neighbouring values swap under a step often, so many first tries cross a
// kink; their retries are not capped.
const std::set<OpKind> kOrderKinds = {OpKind::CumMax, OpKind::TopK, OpKind::Sort, OpKind::Pool};

constexpr int kDirections = 2;  // directions that must agree, per float input
// The step, relative to the input's rms. A direction that disagrees is retried (up to kAttempts
// in all) with a new direction over a random half of the elements and half the step, so that a
// kink near the point drops out; a cell where more than half of the directions needed a retry
// fails (a wrong gradient disagrees in most directions, a kink in few).
constexpr double kStep = 1e-3;
constexpr int kAttempts = 8;
// |fd − <g, Δ>| <= kRtol · Σ|g·Δ| + kNoise · f32 epsilon · √Σ(y·w)² (at both points): the
// rounding of y's elements in f32 adds up as a random walk.
constexpr double kRtol = 1e-3;
constexpr double kNoise = 16;
constexpr double kEps32 = 1.1920929e-7;

bool grid_valued(const HostTensor& t) {
  if (t.dtype != DType::F64 || t.numel() < 2) return false;
  std::set<double> seen;
  bool tie = false, negative = false;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.get_f64(i);
    if (v * 2 != std::round(v * 2)) return false;
    tie |= !seen.insert(v).second;
    negative |= v < 0;
  }
  return tie && negative;
}

// Grid values (multiples of 1/2) moved by up to ±0.1: distinct, same order between grid steps.
HostTensor jittered(const HostTensor& t, parity::CaseRng& rng) {
  HostTensor out = HostTensor::empty(DType::F64, t.shape);
  for (int64_t i = 0; i < t.numel(); ++i) out.set_f64(i, t.get_f64(i) + rng.uniform(-0.1, 0.1));
  return out;
}

// One case made ready to differentiate: the forward graph (outputs: its f32 / f64 values), the
// loss weights per output, the arguments (castable inputs in f32) and the float inputs.
struct Problem {
  Graph fwd;
  std::vector<HostTensor> weights;  // f64, one per output of fwd
  std::vector<HostTensor> args;
  std::vector<int> wrt;  // indices into args
};

std::optional<Problem> make_problem(OpKind kind, const parity::Case& c, uint64_t seed,
                                    std::string& invalid) {
  Problem p;
  parity::CaseRng rng(seed);
  std::vector<Value> ins;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const HostTensor& t = c.inputs[i];
    if (!t.storage) {
      ins.push_back(Value{});
      continue;
    }
    HostTensor a = t;
    if (c.castable[i]) {
      if (kGridKinds.count(kind) && grid_valued(t)) a = jittered(t, rng);
      a = parity::to_cell_dtype(a, DType::F32);
      if (is_float(a.dtype)) p.wrt.push_back(static_cast<int>(p.args.size()));
    }
    ins.push_back(p.fwd.input(a.dtype, a.shape));
    p.args.push_back(a);
  }
  Attrs attrs = c.attrs;
  std::vector<Value> ys;
  try {
    if (c.finalize) {
      std::vector<TensorType> types;
      for (const HostTensor& a : p.args) types.push_back(TensorType{a.dtype, a.shape});
      c.finalize(attrs, types);
    }
    ys = p.fwd.add(kind, attrs, ins);
  } catch (const std::exception& e) {
    invalid = e.what();
    return std::nullopt;
  }
  // Lower-precision float outputs (f16, bf16, f8) round more than any usable step: left out.
  for (Value y : ys) {
    const TensorType& t = p.fwd.type(y);
    if (t.dtype != DType::F32 && t.dtype != DType::F64) continue;
    p.fwd.outputs.push_back(y);
    p.weights.push_back(random_tensor(DType::F64, t.shape, seed + 1 + p.weights.size(), -1, 1));
  }
  return p;
}

// The graph of the loss Σ cast_f64(y)·w over the problem's outputs.
Graph loss_graph(const Problem& p) {
  Graph g = p.fwd;
  GraphBuilder b(g);
  Value loss;
  for (size_t o = 0; o < p.fwd.outputs.size(); ++o) {
    Value y = p.fwd.outputs[o];
    if (g.type(y).dtype != DType::F64) y = b.cast(y, DType::F64);
    Value term = b.sum(b.mul(y, g.constant(p.weights[o])), {});
    loss = loss.valid() ? b.add(loss, term) : term;
  }
  g.outputs = {loss};
  return g;
}

struct LossAt {
  double loss = 0, magnitude = 0;  // Σ y·w and √Σ (y·w)²
};

LossAt loss_at(Executable& fwd, const Problem& p, const std::vector<HostTensor>& args) {
  std::vector<HostTensor> ys = fwd.run(args);
  LossAt r;
  for (size_t o = 0; o < ys.size(); ++o)
    for (int64_t i = 0; i < ys[o].numel(); ++i) {
      double t = ys[o].get_f64(i) * p.weights[o].get_f64(i);
      r.loss += t;
      r.magnitude += t * t;
    }
  r.magnitude = std::sqrt(r.magnitude);
  return r;
}

struct Tally {
  int directions = 0;  // directions that agreed, with a non-zero Σ|g·Δ|
  int retried = 0;     // of those, agreed only after a retry (a kink crossed)
  std::vector<std::string> failures;
};

// One cell's results: its unwaived parts in `checked`, each waiver's parts in its own tally.
struct CellCheck {
  std::string kind, variant;
  int cases = 0;  // valid cases with a float input and a f32 / f64 output
  Tally checked;
  std::map<const Waiver*, Tally> waived;
  std::string first_invalid;

  const Waiver* waiver(const std::string& case_name, int input) const {
    for (const Waiver& w : kWaivers)
      if (kind == w.kind && (!*w.variant || variant == w.variant) &&
          (!*w.case_name || case_name == w.case_name) && (w.input < 0 || w.input == input))
        return &w;
    return nullptr;
  }
  // Where the results of (case, input) go; input -1: the whole case.
  Tally& tally(const std::string& case_name, int input) {
    const Waiver* w = waiver(case_name, input);
    return w ? waived[w] : checked;
  }
};

// Directional checks of every float input of `p` at `args` (laid out by `layout`), given the
// analytic gradients `grads` (one per wrt input).
void check_directions(Executable& fwd, const Problem& p, const std::vector<HostTensor>& grads,
                      HostTensor (*layout)(const HostTensor&), parity::CaseRng& rng,
                      const std::string& case_name, const std::string& where, CellCheck& cell) {
  std::vector<HostTensor> args;
  for (const HostTensor& a : p.args) args.push_back(layout(a));
  for (size_t k = 0; k < p.wrt.size(); ++k) {
    const int i = p.wrt[k];
    const HostTensor x = p.args[i].contiguous();
    const HostTensor& g = grads[k];
    Tally& tally = cell.tally(case_name, i);
    double rms = 0;
    for (int64_t j = 0; j < x.numel(); ++j) rms += x.get_f64(j) * x.get_f64(j);
    rms = std::max(std::sqrt(rms / std::max<int64_t>(1, x.numel())), 0.1);
    for (int dir = 0; dir < kDirections; ++dir) {
      std::string first;
      bool agreed = false;
      for (int attempt = 0; attempt < kAttempts; ++attempt) {
        const double h = std::ldexp(kStep, -attempt);
        HostTensor up = HostTensor::empty(x.dtype, x.shape);
        HostTensor down = HostTensor::empty(x.dtype, x.shape);
        for (int64_t j = 0; j < x.numel(); ++j) {
          double v = rng.uniform(-1, 1) * rms * h;
          if (attempt > 0 && rng.below(2) == 0) v = 0;
          up.set_f64(j, x.get_f64(j) + v);
          down.set_f64(j, x.get_f64(j) - v);
        }
        double analytic = 0, scale = 0;
        for (int64_t j = 0; j < x.numel(); ++j) {
          double delta = up.get_f64(j) - down.get_f64(j);  // as rounded to f32
          analytic += g.get_f64(j) * delta;
          scale += std::abs(g.get_f64(j) * delta);
        }
        std::vector<HostTensor> at = args;
        at[i] = layout(up);
        LossAt lu = loss_at(fwd, p, at);
        at[i] = layout(down);
        LossAt ld = loss_at(fwd, p, at);
        double fd = lu.loss - ld.loss;
        double allowed = kRtol * scale + kNoise * kEps32 * (lu.magnitude + ld.magnitude);
        bool finite = std::isfinite(fd) && std::isfinite(analytic);
        if (finite && std::abs(fd - analytic) <= allowed) {
          agreed = true;
          if (scale > 0) ++tally.directions, tally.retried += attempt > 0;
          break;
        }
        if (attempt == 0) {
          char buf[256];
          std::snprintf(buf, sizeof buf,
                        "input %d: finite difference %.6g, analytic %.6g (Σ|g·Δ| %.3g, allowed "
                        "±%.3g), and in %d retries",
                        i, fd, analytic, scale, allowed, kAttempts - 1);
          first = buf;
        }
      }
      if (!agreed) tally.failures.push_back(where + ": " + first);
    }
  }
}

HostTensor as_is(const HostTensor& t) { return t; }

void check_case(OpKind kind, const parity::Case& c, uint64_t seed, bool strided_too,
                CellCheck& cell) {
  std::string invalid;
  std::optional<Problem> p = make_problem(kind, c, seed, invalid);
  if (!p) {
    if (cell.first_invalid.empty()) cell.first_invalid = c.name + ": " + invalid;
    return;
  }
  if (p->wrt.empty() || p->fwd.outputs.empty()) return;  // nothing to differentiate
  ++cell.cases;
  const Backend& cpu = backend("cpu");
  parity::CaseRng rng(seed * 31 + 7);
  try {
    std::unique_ptr<Executable> fwd = compile_for(p->fwd, cpu);
    std::unique_ptr<Executable> grad = compile_for(grad_graph(loss_graph(*p), p->wrt), cpu);
    std::vector<HostTensor> out = grad->run(p->args);
    std::vector<HostTensor> grads(out.begin() + 1, out.end());
    check_directions(*fwd, *p, grads, as_is, rng, c.name, c.name, cell);
    if (!strided_too) return;
    // Non-contiguous inputs: the gradients agree with the contiguous run's, and the directional
    // check holds with every argument a strided view.
    std::vector<HostTensor> strided;
    for (const HostTensor& a : p->args) strided.push_back(parity::strided_view(a));
    std::vector<HostTensor> sout = grad->run(strided);
    std::vector<HostTensor> sgrads(sout.begin() + 1, sout.end());
    for (size_t k = 0; k < grads.size(); ++k) {
      double worst = 0, largest = 0;
      for (int64_t j = 0; j < grads[k].numel(); ++j) {
        worst = std::max(worst, std::abs(grads[k].get_f64(j) - sgrads[k].get_f64(j)));
        largest = std::max(largest, std::abs(grads[k].get_f64(j)));
      }
      if (!(worst <= 1e-4 * std::max(largest, 1.0)))
        cell.tally(c.name, p->wrt[k])
            .failures.push_back(c.name + " strided: the gradient of input " +
                                std::to_string(p->wrt[k]) +
                                " differs from the contiguous run's by " + std::to_string(worst));
    }
    check_directions(*fwd, *p, sgrads, parity::strided_view, rng, c.name, c.name + " strided",
                     cell);
  } catch (const std::exception& e) {
    cell.tally(c.name, -1).failures.push_back(c.name + ": " + e.what());
  }
}

parity::Draw batch_draw(int attempt) {
  parity::Draw d;
  d.family = "batch";
  d.b = 2 + attempt % 2;
  d.m = 3 - attempt % 2;
  d.n = 5 + attempt;
  d.k = 4 - attempt % 2;
  return d;
}

TEST(AutodiffFdCpuF32, EveryReadyDifferentiableCell) {
  std::set<const Waiver*> used;
  int checked = 0, waived = 0, partly_waived = 0, directions = 0, retried = 0;
  for (const OpInfo& op : all_ops()) {
    if (op.status != OpStatus::Ready || op.differentiable == Differentiable::No) continue;
    for (int v = 0; v < op.num_variants(); ++v) {
      if (op.differentiable == Differentiable::PerVariant && !op.variant_differentiable(v))
        continue;
      CellCheck cell;
      cell.kind = op.name;
      cell.variant = op.variant_name(v);
      const std::string name = op.name + (cell.variant.empty() ? "" : "/" + cell.variant);
      // Draws until one gives a case with something to differentiate (a generator may pick
      // attributes at random, e.g. Cast's target dtype).
      for (int attempt = 0; attempt < 8 && cell.cases == 0; ++attempt) {
        const uint64_t seed = static_cast<uint64_t>(op.kind) * 1000 + v + attempt * 7919;
        parity::CaseRng rng(seed);
        std::vector<parity::Case> cases = parity::cases_for(op.kind, v, batch_draw(attempt), rng);
        for (size_t ci = 0; ci < cases.size(); ++ci)
          check_case(op.kind, cases[ci], seed + ci, cell.cases == 0, cell);
      }
      const Waiver* whole = cell.waiver("", -1);
      if (whole != nullptr) cell.waived[whole];  // listed even when no case reached it
      for (auto& [w, t] : cell.waived) {
        used.insert(w);
        std::string part = *w->case_name ? std::string("case ") + w->case_name + ": " : "";
        if (w->input >= 0) part += "input " + std::to_string(w->input) + ": ";
        std::printf("  waived %-28s %s%s\n", name.c_str(), part.c_str(), w->reason);
        if (w->why == Why::NoRuleYet && t.failures.empty() && t.directions > 0)
          ADD_FAILURE() << name << " agrees now where it is waived (" << w->reason
                        << "): remove its waiver";
      }
      directions += cell.checked.directions;
      retried += cell.checked.retried;
      for (const std::string& f : cell.checked.failures) ADD_FAILURE() << name << " " << f;
      const bool too_many_retries =
          !kOrderKinds.count(op.kind) && 2 * cell.checked.retried > cell.checked.directions;
      if (too_many_retries)
        ADD_FAILURE() << name << ": " << cell.checked.retried << " of " << cell.checked.directions
                      << " directions agreed only on a retry";
      if (whole != nullptr) {
        ++waived;
      } else if (cell.checked.failures.empty() && cell.checked.directions == 0) {
        ADD_FAILURE() << name
                      << " is ready and differentiable but nothing was checked (no valid case "
                         "with a float input, a f32 output and a non-zero gradient"
                      << (cell.first_invalid.empty() ? "" : "; first invalid case: ")
                      << cell.first_invalid << "): check it or waive it with a reason";
      } else if (cell.checked.failures.empty() && !too_many_retries) {
        ++checked;
        partly_waived += !cell.waived.empty();
      }
    }
  }
  for (const Waiver& w : kWaivers)
    EXPECT_TRUE(used.count(&w)) << "the waiver of " << w.kind << "/" << w.variant << " "
                                << w.case_name << " names no ready differentiable cell or case";
  std::printf(
      "FD (cpu, f32): %d (kind, variant) cells checked (%d of them in part waived), %d waived; "
      "%d directional derivatives agreed (%d after a retry past a kink)\n",
      checked, partly_waived, waived, directions, retried);
}

}  // namespace
}  // namespace tessel::testing
