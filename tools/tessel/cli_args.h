// Argument parsing shared by the `tessel` subcommands.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "tessel/error.h"

namespace tessel {

// Splits "a,b" into its non-empty parts.
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// A non-negative integer option value; a Value error "[command] flag needs ..." otherwise.
inline int64_t parse_count(const std::string& command, const std::string& flag,
                           const std::string& v) {
  char* end = nullptr;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < 0)
    throw_error(ErrorKind::Value, "[", command, "] ", flag, " needs a non-negative integer, got '",
                v, "'");
  return n;
}

}  // namespace tessel
