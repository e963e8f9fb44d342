// The ONNX backend-test runner: loads each case directory (model.onnx + test_data_set_*/
// input_*.pb, output_*.pb), runs it on a device and compares with the expected outputs at the
// ONNX runner's tolerances (rtol 1e-3, atol 1e-7). Cases whose ops draw random numbers are
// checked by shape, dtype and distribution statistics instead of values, and say so.
#pragma once

#include <string>
#include <vector>

namespace tessel::onnx {

enum class CaseStatus { Pass, Mismatch, Unsupported, LoadFailure, RunError, NotApplicable };
const char* case_status_name(CaseStatus s);  // "pass", "mismatch", "unsupported op", ...

struct CaseResult {
  std::string name;  // the case directory's name
  CaseStatus status = CaseStatus::Pass;
  std::string reason;  // why it did not pass; for passes, how it was checked when not by value
  bool statistical = false;  // random outputs: checked by statistics
};

struct ConformanceOptions {
  std::string device = "cpu";
  std::string filter;  // substring of case names to run ("" = all)
  double rtol = 1e-3, atol = 1e-7;
};

CaseResult run_case(const std::string& case_dir, const ConformanceOptions& options);
std::vector<CaseResult> run_suite(const std::string& suite_dir, const ConformanceOptions& options);

// The markdown report: totals ("N of M") per suite, then one row per case with each device's
// result. `suites` pairs a suite's title with its results per device (same cases, same order).
struct SuiteReport {
  std::string title;  // "node"
  std::string path;   // where the cases came from
  std::vector<std::string> devices;
  std::vector<std::vector<CaseResult>> results;  // [device][case]
};
std::string conformance_markdown(const std::vector<SuiteReport>& suites,
                                 const std::string& command);

}  // namespace tessel::onnx
