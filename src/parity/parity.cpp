// The parity harness's run loop: for every claimed cell, seeded draws from the shape families,
// each case run on the reference (plain) and on the backend under test (checked mode) in three
// layouts (contiguous, non-contiguous, stride-0), outputs compared per dtype.
#include "parity/parity.h"

#include <algorithm>
#include <chrono>
#include <sstream>

#include "parity/cases.h"
#include "parity/check.h"
#include "passes/passes.h"

namespace tessel::parity {

const char* cell_status_name(CellStatus s) {
  switch (s) {
    case CellStatus::Pass:
      return "pass";
    case CellStatus::Fail:
      return "FAIL";
    case CellStatus::Skipped:
      return "skipped";
  }
  return "?";
}

const char* failure_kind_name(FailureKind k) {
  switch (k) {
    case FailureKind::Error:
      return "error";
    case FailureKind::OutOfBounds:
      return "out-of-bounds write";
    case FailureKind::Shape:
      return "shape/dtype";
    case FailureKind::Unwritten:
      return "unwritten element";
    case FailureKind::NanMismatch:
      return "NaN where reference is not";
    case FailureKind::AllZero:
      return "all-zero output";
    case FailureKind::Mismatch:
      return "mismatch";
    case FailureKind::NoCases:
      return "no valid case";
  }
  return "?";
}

std::string CellResult::name() const {
  const OpInfo& op = op_info(kind);
  std::string s = op.name;
  if (op.variant_enum != VariantEnum::None) s += "/" + op.variant_name(variant);
  return s + " " + dtype_name(dtype);
}

namespace {

constexpr const char* kFamilies[] = {"scalar", "vector", "batch", "odd", "simd", "empty", "large"};
constexpr int kNumFamilies = 7;

template <class T, size_t N>
T pick(CaseRng& r, const T (&v)[N]) {
  return v[r.below(N)];
}

Draw make_draw(int i, CaseRng& r) {
  Draw d;
  d.family = kFamilies[i % kNumFamilies];
  if (d.family == "scalar") {
    d.scalar = true;
  } else if (d.family == "vector") {
    d.vector = true;
    d.n = pick(r, {7, 13, 17, 31});
  } else if (d.family == "batch") {
    d.b = 2 + r.below(2), d.m = 2 + r.below(3), d.n = 4 + r.below(5), d.k = 3 + r.below(3);
  } else if (d.family == "odd") {
    d.b = pick(r, {1, 3, 5}), d.m = pick(r, {3, 5, 7}), d.n = pick(r, {11, 13, 19, 23, 37}),
    d.k = pick(r, {3, 5, 7, 11});
  } else if (d.family == "simd") {  // straddles 16/32/64 lanes
    d.b = 2, d.m = pick(r, {3, 5}), d.n = pick(r, {15, 16, 17, 31, 33, 63, 65, 127, 129}),
    d.k = pick(r, {15, 17, 31, 33, 63, 65});
  } else if (d.family == "empty") {
    d.b = 0, d.m = 3, d.n = 5, d.k = 4;
  } else {  // large: enough elements for kernels to go multi-threaded
    d.b = 2, d.m = pick(r, {17, 19}), d.n = pick(r, {1031, 1153}), d.k = pick(r, {67, 129});
  }
  return d;
}

std::string types_str(const std::vector<HostTensor>& ts) {
  std::string s;
  for (const HostTensor& t : ts) {
    if (!s.empty()) s += ", ";
    s += t.storage ? std::string(dtype_name(t.dtype)) + shape_str(t.shape) : "-";
  }
  return s;
}

uint64_t mix(uint64_t a, uint64_t b) {
  return (a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2)));
}

struct Runner {
  const Backend& be;
  const Backend& ref;
  const Options& opt;

  void run_case(CellResult& cell, const Case& c, const std::string& where) {
    // Inputs in the cell's dtype.
    std::vector<HostTensor> args;
    std::vector<bool> arg_castable;
    Graph g;
    std::vector<Value> ins;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const HostTensor& t = c.inputs[i];
      if (!t.storage) {
        ins.push_back(Value{});
        continue;
      }
      HostTensor a = c.castable[i] ? to_cell_dtype(t, cell.dtype) : t;
      ins.push_back(g.input(a.dtype, a.shape));
      args.push_back(a);
      arg_castable.push_back(c.castable[i]);
    }
    Attrs attrs = c.attrs;
    if (!c.dtype_attr.empty()) attrs.set(c.dtype_attr, cell.dtype);
    std::unique_ptr<Executable> ref_exe;
    std::vector<HostTensor> want;
    try {
      if (c.finalize) {
        std::vector<TensorType> types;
        for (const HostTensor& a : args) types.push_back(TensorType{a.dtype, a.shape});
        c.finalize(attrs, types);
      }
      g.outputs = g.add(cell.kind, attrs, ins);
      ref_exe = compile_for(g, ref);
      want = ref_exe->run(args);
    } catch (const std::exception& e) {
      // Not a valid case for this cell (the reference and the shape rules are the definition).
      if (cell.cases_invalid++ == 0) cell.skip_reason = where + ": " + e.what();
      return;
    }
    ++cell.cases_run;
    std::string shapes = types_str(args);
    auto record = [&](CaseFailure f, const std::string& layout) {
      f.case_name = where + " " + layout;
      f.shapes = shapes;
      if (static_cast<int>(cell.failures.size()) < opt.max_failures_per_cell)
        cell.failures.push_back(std::move(f));
    };
    std::unique_ptr<Executable> exe;
    try {
      exe = compile_for(g, be, CompileOptions{.checked = true});
    } catch (const std::exception& e) {
      record(CaseFailure{FailureKind::Error, "", "", 0, -1, 0, 0, 0, 0, e.what()}, "compile");
      return;
    }
    // Layouts: as built, non-contiguous views of every input, stride-0 castable inputs.
    std::vector<std::pair<std::string, std::vector<HostTensor>>> layouts = {{"contiguous", args}};
    {
      std::vector<HostTensor> s;
      bool any = false;
      for (const HostTensor& a : args) {
        s.push_back(strided_view(a));
        any |= a.numel() > 0;
      }
      if (any) layouts.push_back({"strided", s});
    }
    if (c.stride0_ok) {
      std::vector<HostTensor> s = args;
      bool any = false;
      for (size_t i = 0; i < s.size(); ++i)
        if (arg_castable[i])
          if (auto v = stride0_view(s[i])) s[i] = *v, any = true;
      if (any) layouts.push_back({"stride0", s});
    }
    Tolerance tol = tolerance(cell.dtype, cell.how);
    bool ok = true;
    for (auto& [layout, largs] : layouts) {
      std::vector<HostTensor> expect = want;
      if (layout == "stride0") {
        try {
          expect = ref_exe->run(largs);
        } catch (const std::exception&) {
          continue;  // e.g. duplicate rows made the case invalid
        }
      }
      std::vector<HostTensor> got;
      try {
        got = exe->run(largs);
      } catch (const std::exception& e) {
        std::string msg = e.what();
        bool oob = msg.find("wrote outside output") != std::string::npos;
        record(CaseFailure{oob ? FailureKind::OutOfBounds : FailureKind::Error, "", "", 0, -1, 0, 0,
                           0, 0, msg},
               layout);
        ok = false;
        continue;
      }
      if (got.size() != expect.size()) {
        record(CaseFailure{FailureKind::Shape, "", "", 0, -1, 0, 0, 0, 0,
                           std::to_string(got.size()) + " outputs, reference has " +
                               std::to_string(expect.size())},
               layout);
        ok = false;
        continue;
      }
      for (size_t o = 0; o < got.size(); ++o) {
        if (got[o].dtype != expect[o].dtype || got[o].shape != expect[o].shape) {
          record(CaseFailure{FailureKind::Shape, "", "", static_cast<int>(o), -1, 0, 0, 0, 0,
                             std::string(dtype_name(got[o].dtype)) + shape_str(got[o].shape) +
                                 ", reference " + dtype_name(expect[o].dtype) +
                                 shape_str(expect[o].shape)},
                 layout);
          ok = false;
          continue;
        }
        Comparison cmp = compare_output(got[o], expect[o], tolerance(expect[o].dtype, cell.how));
        (void)tol;
        cell.worst_max_abs = std::max(cell.worst_max_abs, cmp.max_abs);
        cell.worst_nmse = std::max(cell.worst_nmse, cmp.nmse);
        if (cmp.failure) {
          cmp.failure->output = static_cast<int>(o);
          record(*cmp.failure, layout);
          ok = false;
        }
      }
    }
    if (ok) ++cell.cases_passed;
  }

  void run_cell(CellResult& cell) {
    int draws = opt.cases > 0 ? opt.cases : opt.exhaustive ? 4 * kNumFamilies : kNumFamilies;
    const OpInfo& info = op_info(cell.kind);
    bool any_generator = false;
    bool conversion_failed = false;
    std::string conversion_error;
    int failing_cases = 0;
    for (int i = 0; i < draws; ++i) {
      // The same values for every dtype of a (kind, variant): seeded by those and the draw.
      CaseRng rng(mix(mix(opt.seed, static_cast<uint64_t>(cell.kind) * 1000 + cell.variant), i));
      Draw d = make_draw(i, rng);
      // Large draws cost the slow reference most: f32 only unless exhaustive.
      if (d.family == "large" && !opt.exhaustive && cell.dtype != DType::F32) continue;
      std::vector<Case> cases = cases_for(cell.kind, cell.variant, d, rng);
      any_generator |= !cases.empty();
      for (const Case& c : cases) {
        size_t before = cell.failures.size();
        int passed_before = cell.cases_passed, run_before = cell.cases_run;
        try {
          for (size_t k = 0; k < c.inputs.size(); ++k)
            if (c.castable[k]) (void)to_cell_dtype(c.inputs[k], cell.dtype);
        } catch (const std::exception& e) {
          conversion_failed = true;
          conversion_error = e.what();
          continue;
        }
        run_case(cell, c, c.name + " [" + d.family + "]");
        if (cell.cases_run > run_before && cell.cases_passed == passed_before) ++failing_cases;
        (void)before;
      }
    }
    if (failing_cases > 0) {
      cell.status = CellStatus::Fail;
    } else if (cell.cases_run > 0) {
      cell.status = CellStatus::Pass;
      cell.skip_reason.clear();
    } else if (conversion_failed && cell.cases_invalid == 0) {
      cell.status = CellStatus::Skipped;
      cell.skip_reason =
          std::string("cannot build ") + dtype_name(cell.dtype) + " inputs: " + conversion_error;
    } else if (!any_generator) {
      cell.status = CellStatus::Fail;
      cell.failures.push_back(CaseFailure{FailureKind::NoCases, "", "", 0, -1, 0, 0, 0, 0,
                                          "the harness has no case generator for " + info.name});
    } else {
      cell.status = CellStatus::Fail;
      cell.failures.push_back(
          CaseFailure{FailureKind::NoCases, "", "", 0, -1, 0, 0, 0, 0,
                      "every generated case was rejected; first: " + cell.skip_reason});
    }
    if (cell.status != CellStatus::Skipped) cell.skip_reason.clear();
  }
};

}  // namespace

Report run(const Options& options) { return run(backend(options.backend), options); }

Report run(const Backend& be, const Options& opt) {
  auto start = std::chrono::steady_clock::now();
  const Backend& ref = backend("reference");
  Report report;
  report.backend = be.name();
  report.seed = opt.seed;
  report.exhaustive = opt.exhaustive;
  Runner runner{be, ref, opt};
  for (const OpInfo& op : all_ops()) {
    if (op.category == Category::Sources || !be.claims().claims_kind(op.kind)) continue;
    if (!opt.kinds.empty() &&
        std::find(opt.kinds.begin(), opt.kinds.end(), op.kind) == opt.kinds.end())
      continue;
    for (int v = 0; v < op.num_variants(); ++v) {
      DTypeSet dts = be.claims().dtypes(op.kind, v);
      for (int di = 0; di < kNumDTypes; ++di) {
        DType dt = static_cast<DType>(di);
        if (!dts.contains(dt)) continue;
        if (!opt.dtypes.empty() &&
            std::find(opt.dtypes.begin(), opt.dtypes.end(), dt) == opt.dtypes.end())
          continue;
        CellResult cell;
        cell.kind = op.kind;
        cell.variant = v;
        cell.dtype = dt;
        cell.how = *be.claims().find(op.kind, v, dt);
        if (&be != &ref && !ref.claims().find(op.kind, v, dt)) {
          cell.status = CellStatus::Skipped;
          cell.skip_reason = "no oracle: the reference backend does not claim this cell";
        } else {
          runner.run_cell(cell);
        }
        switch (cell.status) {
          case CellStatus::Pass:
            ++report.passed;
            break;
          case CellStatus::Fail:
            ++report.failed;
            break;
          case CellStatus::Skipped:
            ++report.skipped;
            break;
        }
        report.cells.push_back(std::move(cell));
      }
    }
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace tessel::parity
