// Bad ONNX models and inputs (tests/onnx/bad, made by tests/onnx/generate_cases.py):
// out-of-range indices, inconsistent shapes, invalid attributes, undefined names. Each must be
// rejected with a tessel::Error whose message names its context ("[onnx Reshape node ...]"),
// at load or at run on `cpu`: never a crash, a wrong result or another exception type.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "tessel/error.h"
#include "tessel/onnx.h"

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kBad = fs::path(TESSEL_SOURCE_DIR) / "tests" / "onnx" / "bad";

// test_data_set_0/input_0.pb, input_1.pb, ... in order.
std::vector<onnx::Value> read_inputs(const fs::path& dir) {
  std::vector<onnx::Value> inputs;
  for (int i = 0;; ++i) {
    const fs::path p = dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    inputs.push_back(onnx::read_value_pb(p.string(), "tensor", "cpu"));
  }
  return inputs;
}

TEST(OnnxBadInputs, EveryBadCaseIsACleanError) {
  ASSERT_TRUE(fs::is_directory(kBad)) << kBad.string();
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kBad))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  ASSERT_FALSE(dirs.empty()) << "no cases under " << kBad.string();
  for (const fs::path& dir : dirs) {
    const std::string name = dir.filename().string();
    SCOPED_TRACE(name);
    std::vector<onnx::Value> inputs;
    ASSERT_NO_THROW(inputs = read_inputs(dir));
    try {
      onnx::Model m = onnx::Model::load((dir / "model.onnx").string());
      std::vector<onnx::Value> out = m.run(inputs, onnx::RunOptions{"cpu", true});
      ADD_FAILURE() << "no error: the model ran and returned " << out.size() << " outputs";
    } catch (const Error& e) {
      const std::string msg = e.what();
      std::cout << name << ": " << error_kind_name(e.kind()) << ": " << msg.substr(0, 100) << '\n';
      EXPECT_FALSE(msg.empty());
      EXPECT_NE(msg.find('['), std::string::npos) << "the message names no context: " << msg;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a tessel::Error: " << e.what();
    }
  }
}

}  // namespace
}  // namespace tessel::testing
