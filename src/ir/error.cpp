#include <tessel/error.h>

namespace tessel {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Shape:
      return "Shape";
    case ErrorKind::DType:
      return "DType";
    case ErrorKind::Unsupported:
      return "Unsupported";
    case ErrorKind::Format:
      return "Format";
    case ErrorKind::Io:
      return "Io";
    case ErrorKind::Device:
      return "Device";
    case ErrorKind::OutOfMemory:
      return "OutOfMemory";
    case ErrorKind::Internal:
      return "Internal";
    case ErrorKind::Value:
      return "Value";
  }
  return "?";  // only reachable with a value outside the enum
}

}  // namespace tessel
