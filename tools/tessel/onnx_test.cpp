// `tessel onnx-test`: the ONNX backend-test runner (src/frontends/onnx/conformance.h) over
// suite directories, with a markdown report and a floor on the pass count.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "cli_args.h"
#include "frontends/onnx/conformance.h"
#include "tessel/error.h"

namespace tessel {

namespace {

// A committed report's results: (suite, device) -> pass count, (suite, device, case) -> status.
struct Baseline {
  std::map<std::pair<std::string, std::string>, int64_t> passed;
  std::map<std::string, std::string> status;  // "suite/device/case" -> status name
};

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  std::getline(ss, cell, '|');  // before the first bar
  while (std::getline(ss, cell, '|')) {
    size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
  }
  return out;
}

Baseline read_baseline(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw_error(ErrorKind::Io, "[onnx-test] cannot read baseline ", path);
  Baseline b;
  std::string line, suite;
  std::vector<std::string> devices;
  bool in_totals = false;
  while (std::getline(f, line)) {
    if (line.rfind("## Totals", 0) == 0) {
      in_totals = true;
      continue;
    }
    if (line.rfind("## ", 0) == 0) {
      in_totals = false;
      suite = line.substr(3, line.find(' ', 3) - 3);
      continue;
    }
    if (line.empty() || line[0] != '|' || line.rfind("|---", 0) == 0) continue;
    std::vector<std::string> c = cells(line);
    if (in_totals) {
      if (c.size() >= 3 && c[0] != "suite")
        b.passed[{c[0], c[1]}] =
            parse_count("onnx-test", "a baseline total", c[2].substr(0, c[2].find(' ')));
    } else if (!suite.empty()) {
      if (c.size() >= 2 && c[0] == "case") {
        devices.assign(c.begin() + 1, c.end() - 2);
        continue;
      }
      for (size_t d = 0; d < devices.size() && d + 1 < c.size(); ++d)
        b.status[suite + "/" + devices[d] + "/" + c[0]] = c[d + 1];
    }
  }
  return b;
}

}  // namespace

// tessel onnx-test [--device D[,D]] [--filter S] [--markdown FILE] [--baseline FILE]
//                  [--verbose] SUITE_DIR...
// --baseline: fail when a suite passes fewer cases on a device than the committed report says,
// listing the cases that passed there and do not now.
int cmd_onnx_test(const std::vector<std::string>& args) {
  std::vector<std::string> devices = {"cpu"}, suites;
  std::string filter, markdown, baseline, command = "tessel onnx-test";
  bool verbose = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw_error(ErrorKind::Value, "[onnx-test] ", a, " needs a value");
      return args[++i];
    };
    if (a == "--device")
      devices = split_list(value());
    else if (a == "--filter")
      filter = value();
    else if (a == "--markdown")
      markdown = value();
    else if (a == "--baseline")
      baseline = value();
    else if (a == "--verbose")
      verbose = true;
    else if (!a.empty() && a[0] == '-')
      throw_error(ErrorKind::Value, "[onnx-test] unknown option ", a);
    else
      suites.push_back(a);
    if (a == "--markdown" || a == "--baseline") continue;
    command += " " + a;
    if (a == "--device" || a == "--filter") command += " " + args[i];
  }
  if (suites.empty())
    throw_error(ErrorKind::Value, "[onnx-test] name at least one suite directory");
  std::vector<onnx::SuiteReport> reports;
  for (const std::string& suite : suites) {
    onnx::SuiteReport rep;
    rep.title = std::filesystem::path(suite).filename().string();
    rep.path = suite;
    rep.devices = devices;
    for (const std::string& d : devices) {
      onnx::ConformanceOptions o;
      o.device = d;
      o.filter = filter;
      rep.results.push_back(onnx::run_suite(suite, o));
      int64_t pass = 0;
      for (const auto& r : rep.results.back()) {
        pass += r.status == onnx::CaseStatus::Pass;
        if (verbose ||
            (r.status != onnx::CaseStatus::Pass && suites.size() == 1 && !filter.empty()))
          std::cout << r.name << " [" << d << "]: " << onnx::case_status_name(r.status)
                    << (r.reason.empty() ? "" : " — " + r.reason) << '\n';
      }
      std::cout << rep.title << " on " << d << ": " << pass << " of " << rep.results.back().size()
                << " passed\n";
    }
    reports.push_back(std::move(rep));
  }
  if (!markdown.empty()) {
    std::ofstream f(markdown);
    f << onnx::conformance_markdown(reports, command);
    if (!f) throw_error(ErrorKind::Io, "[onnx-test] cannot write ", markdown);
  }
  if (baseline.empty()) return 0;
  const Baseline b = read_baseline(baseline);
  int failures = 0;
  for (const onnx::SuiteReport& rep : reports)
    for (size_t d = 0; d < rep.devices.size(); ++d) {
      int64_t pass = 0;
      for (const onnx::CaseResult& r : rep.results[d]) {
        pass += r.status == onnx::CaseStatus::Pass;
        auto it = b.status.find(rep.title + "/" + rep.devices[d] + "/" + r.name);
        if (it != b.status.end() && it->second == "pass" && r.status != onnx::CaseStatus::Pass)
          std::cout << "regressed: " << rep.title << "/" << r.name << " on " << rep.devices[d]
                    << ": " << onnx::case_status_name(r.status) << " — " << r.reason << '\n';
      }
      auto it = b.passed.find({rep.title, rep.devices[d]});
      if (it == b.passed.end()) continue;
      if (pass < it->second) {
        std::cerr << "onnx-test: " << rep.title << " on " << rep.devices[d] << ": " << pass
                  << " passed, fewer than the " << it->second << " of " << baseline << '\n';
        ++failures;
      } else if (pass > it->second) {
        std::cout << rep.title << " on " << rep.devices[d] << ": " << pass << " passed, more than"
                  << " the " << it->second << " of " << baseline << " (regenerate it)\n";
      }
    }
  return failures ? 1 : 0;
  return 0;
}

}  // namespace tessel
