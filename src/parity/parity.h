// The parity harness: proves every (kind, variant, dtype) cell a backend claims against the
// `reference` backend on seeded generated cases (shape families, non-contiguous and stride-0
// views, empty tensors), in checked mode (poisoned outputs, guard regions). A claimed cell with
// no passing case fails; a cell that cannot be tested is reported as skipped with its reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/backend.h"

namespace tessel::parity {

struct Options {
  std::string backend = "reference";
  std::vector<OpKind> kinds;  // empty = every kind the backend claims
  std::vector<DType> dtypes;  // empty = every claimed dtype
  bool exhaustive = false;    // more shape draws per cell (by hand, not CI)
  uint64_t seed = 0;
  int cases = 0;                  // shape draws per cell; 0 = the default (7, exhaustive 28)
  int max_failures_per_cell = 3;  // failing cases recorded per cell (all are counted)
};

enum class CellStatus : uint8_t { Pass, Fail, Skipped };
const char* cell_status_name(CellStatus s);

// Why a case failed.
enum class FailureKind : uint8_t {
  Error,        // the backend threw (compile or run)
  OutOfBounds,  // a guard region around an output changed
  Shape,        // output count, dtype or shape differs from the reference
  Unwritten,    // output element still holds the poison bytes where the reference does not
  NanMismatch,  // NaN where the reference is not NaN (or the reverse)
  AllZero,      // the whole output is zero where the reference is not
  Mismatch,     // outside the dtype's tolerance (max-abs/rel or normalized error)
  NoCases,      // no generated case was valid for the cell (the reference rejected them all)
};
const char* failure_kind_name(FailureKind k);

struct CaseFailure {
  FailureKind kind;
  std::string case_name;  // generator case, shape family, layout
  std::string shapes;     // input types, e.g. "f16[2,3,5], i64[4]"
  int output = 0;         // which output
  int64_t index = -1;     // row-major index of the worst element (-1: none)
  double got = 0, want = 0;
  double max_abs = 0, nmse = 0;
  std::string message;
};

struct CellResult {
  OpKind kind;
  int variant = 0;
  DType dtype;
  How how;
  CellStatus status = CellStatus::Skipped;
  int cases_run = 0, cases_passed = 0;
  int cases_invalid = 0;  // generated cases the reference rejected (not counted as run)
  double worst_nmse = 0, worst_max_abs = 0;
  std::string skip_reason;
  std::vector<CaseFailure> failures;  // the first few
  std::string name() const;           // "Binary/Add f32"
};

struct Report {
  std::string backend;
  uint64_t seed = 0;
  bool exhaustive = false;
  std::vector<CellResult> cells;
  int passed = 0, failed = 0, skipped = 0;
  double seconds = 0;
  bool ok() const { return failed == 0; }
};

// Runs the harness against a registered backend (options.backend).
Report run(const Options& options);
// Against a backend object that need not be registered (the harness's own tests).
Report run(const Backend& backend, const Options& options);

std::string report_text(const Report& r, bool verbose = false);
std::string report_json(const Report& r);

}  // namespace tessel::parity
