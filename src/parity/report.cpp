// The parity report: a human summary (failures and skips spelled out, passes counted) and JSON.
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "parity/parity.h"

namespace tessel::parity {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string describe(const CaseFailure& f) {
  std::ostringstream os;
  os << failure_kind_name(f.kind);
  if (!f.case_name.empty()) os << " in case " << f.case_name;
  if (!f.shapes.empty()) os << " (" << f.shapes << ")";
  if (f.kind == FailureKind::Mismatch || f.kind == FailureKind::Unwritten ||
      f.kind == FailureKind::NanMismatch || f.kind == FailureKind::AllZero) {
    os << ": output " << f.output;
    if (f.index >= 0) os << " element " << f.index << " got " << f.got << " want " << f.want;
    os << ", max-abs " << num(f.max_abs) << ", nmse " << num(f.nmse);
  }
  if (!f.message.empty()) os << ": " << f.message;
  return os.str();
}

}  // namespace

std::string report_text(const Report& r, bool verbose) {
  std::ostringstream os;
  std::map<std::string, int> how_counts;
  for (const CellResult& c : r.cells) {
    if (c.status == CellStatus::Pass && !verbose) continue;
    os << cell_status_name(c.status) << "  " << c.name() << " [" << how_name(c.how) << "]";
    if (c.status == CellStatus::Skipped) {
      os << ": " << c.skip_reason << '\n';
      continue;
    }
    os << "  " << c.cases_passed << "/" << c.cases_run << " cases passed";
    if (c.cases_invalid) os << " (" << c.cases_invalid << " rejected by the reference)";
    os << ", worst max-abs " << num(c.worst_max_abs) << ", nmse " << num(c.worst_nmse) << '\n';
    for (const CaseFailure& f : c.failures) os << "      " << describe(f) << '\n';
  }
  for (const CellResult& c : r.cells)
    ++how_counts[std::string(how_name(c.how)) + " " + cell_status_name(c.status)];
  os << "parity: backend " << r.backend << " vs reference, seed " << r.seed
     << (r.exhaustive ? ", exhaustive" : "") << ": " << r.cells.size() << " cells: " << r.passed
     << " passed, " << r.failed << " failed, " << r.skipped << " skipped (";
  bool first = true;
  for (auto& [k, n] : how_counts) {
    os << (first ? "" : ", ") << k << " " << n;
    first = false;
  }
  os << ") in " << num(r.seconds) << " s\n";
  return os.str();
}

std::string report_json(const Report& r) {
  nlohmann::json j;
  j["backend"] = r.backend;
  j["reference"] = "reference";
  j["seed"] = r.seed;
  j["exhaustive"] = r.exhaustive;
  j["passed"] = r.passed;
  j["failed"] = r.failed;
  j["skipped"] = r.skipped;
  j["seconds"] = r.seconds;
  nlohmann::json cells = nlohmann::json::array();
  for (const CellResult& c : r.cells) {
    const OpInfo& op = op_info(c.kind);
    nlohmann::json cj = {
        {"kind", op.name},
        {"variant", op.variant_name(c.variant)},
        {"dtype", dtype_name(c.dtype)},
        {"how", how_name(c.how)},
        {"status", c.status == CellStatus::Fail ? "fail" : cell_status_name(c.status)},
        {"cases_run", c.cases_run},
        {"cases_passed", c.cases_passed},
        {"cases_rejected", c.cases_invalid},
        {"worst_max_abs", c.worst_max_abs},
        {"worst_nmse", c.worst_nmse}};
    if (c.status == CellStatus::Skipped) cj["reason"] = c.skip_reason;
    nlohmann::json fs = nlohmann::json::array();
    for (const CaseFailure& f : c.failures)
      fs.push_back({{"kind", failure_kind_name(f.kind)},
                    {"case", f.case_name},
                    {"inputs", f.shapes},
                    {"output", f.output},
                    {"index", f.index},
                    {"got", f.got},
                    {"want", f.want},
                    {"max_abs", f.max_abs},
                    {"nmse", f.nmse},
                    {"message", f.message}});
    if (!fs.empty()) cj["failures"] = fs;
    cells.push_back(std::move(cj));
  }
  j["cells"] = std::move(cells);
  // NaN/inf are not JSON: dump() writes them as null.
  return j.dump(1) + "\n";
}

}  // namespace tessel::parity
