// tessel::Error — the one exception type user input can raise.
// Every message starts with "[context]" naming the op or file, then says what was wrong and
// what would have been valid. Internal invariants use TESSEL_ASSERT (kind Internal).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace tessel {

enum class ErrorKind {
  Shape,
  DType,
  Unsupported,
  Format,
  Io,
  Device,
  OutOfMemory,
  Internal,
  Value
};

const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

namespace detail {
template <class... Args>
std::string concat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}
}  // namespace detail

// throw_error(ErrorKind::Shape, "[MatMul] inner dims differ: ", k1, " vs ", k2)
template <class... Args>
[[noreturn]] void throw_error(ErrorKind kind, Args&&... args) {
  throw Error(kind, detail::concat(std::forward<Args>(args)...));
}

}  // namespace tessel

#define TESSEL_ASSERT(cond, ...)                                                                \
  do {                                                                                          \
    if (!(cond))                                                                                \
      ::tessel::throw_error(::tessel::ErrorKind::Internal, "internal error at ", __FILE__, ":", \
                            __LINE__, ": ", #cond " " __VA_OPT__(, ) __VA_ARGS__);              \
  } while (0)
