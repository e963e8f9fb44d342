// libFuzzer target for the ONNX importer: parses the input as a ModelProto (with every
// load-time check), and when it loads, runs it on the reference backend with small inputs of
// the declared types. Any tessel::Error is an acceptable outcome; a crash, a sanitizer report,
// a hang or an out-of-memory is a bug. A model may legitimately ask for a huge tensor, so host
// allocations are capped at 1 GiB (below libFuzzer's -malloc_limit_mb): over it, Tessel throws
// OutOfMemory, which is the behaviour under test. Built and run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include "tessel/onnx.h"

namespace {

// Dimensions that are dynamic or absurd become small, so a run stays cheap.
tessel::Shape small_shape(const tessel::onnx::ValueInfo& info) {
  tessel::Shape s;
  for (int64_t d : info.dims) s.push_back(d < 0 || d > 8 ? 2 : d);
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  static const bool limited = (set_host_allocation_limit(size_t{1} << 30), true);
  (void)limited;
  try {
    onnx::Model m = onnx::Model::parse(std::span<const uint8_t>(data, size));
    std::vector<onnx::Value> inputs;
    for (const auto& info : m.inputs()) {
      if (!info.dtype || info.type.rfind("tensor(", 0) != 0) return 0;
      const Shape shape = small_shape(info);
      if (shape_numel(shape) > 4096) return 0;
      HostTensor t = HostTensor::empty(*info.dtype, shape);
      for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, static_cast<double>(i % 5) - 1);
      inputs.emplace_back(Tensor(t, "reference"));
    }
    m.run(inputs, onnx::RunOptions{"reference"});
  } catch (const Error&) {
  }
  return 0;
}
