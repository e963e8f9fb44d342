// The coverage matrix: a pure function of the op table and the registered backends' claim
// tables. docs/op-coverage.md is its markdown form; a test keeps the two identical.
#pragma once

#include <string>

namespace tessel {

std::string coverage_markdown();
std::string coverage_json();
std::string ops_json();  // `tessel ops --json`

}  // namespace tessel
