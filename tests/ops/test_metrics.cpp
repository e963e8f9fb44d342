// The Metric kind (accuracy, perplexity, F1 binary / macro / micro) against scikit-learn 1.2 and
// PyTorch 1.13 (tests/goldens/gen_metrics.py), on float logits and on class ids, on the
// reference and cpu backends; and its bad-input errors.
#include <gtest/gtest.h>

#include "op_test_util.h"

namespace tessel::testing {
namespace {

TEST(Metric, MatchesScikitLearnOnEveryBackend) {
  int checked = 0;
  for (const nlohmann::json& c : golden_cases_of("metrics")) {
    const Attrs attrs = attrs_from_json(OpKind::Metric, c["attrs"]);
    HostTensor pred = tensor_from_json(c["pred"]), labels = tensor_from_json(c["labels"]);
    const double want = c["expected"].get<double>();
    for (const char* backend : {"reference", "cpu"})
      for (DType dt : {DType::F64, DType::F32}) {
        HostTensor p = is_float(pred.dtype) ? cast_to(pred, dt) : pred;
        HostTensor y = run_op1(OpKind::Metric, attrs, {p, labels}, backend);
        ASSERT_EQ(y.dtype, DType::F32);
        ASSERT_EQ(y.numel(), 1);
        EXPECT_NEAR(y.get_f64(0), want, 2e-6 * std::max(1.0, std::abs(want)))
            << c["name"].get<std::string>() << " on " << backend << " " << dtype_name(dt);
        ++checked;
      }
  }
  EXPECT_GT(checked, 100);
}

TEST(Metric, BadInputIsAClearError) {
  const Attrs acc = Attrs().set("kind", MetricKind::Accuracy);
  HostTensor logits = f32({4, 3}, std::vector<double>(12, 0.5));
  HostTensor labels = HostTensor::from_vector<int64_t>(DType::I64, {4}, {0, 1, 2, 0});
  expect_error(
      ErrorKind::Shape,
      [&] {
        run_op1(OpKind::Metric, acc, {logits, HostTensor::empty(DType::I64, {3})});
      },
      "rows differ", "rows");
  expect_error(
      ErrorKind::DType,
      [&] {
        run_op1(OpKind::Metric, acc, {logits, f32({4}, {0, 1, 2, 0})});
      },
      "float labels", "labels");
  expect_error(
      ErrorKind::DType,
      [&] {
        run_op1(OpKind::Metric, Attrs().set("kind", MetricKind::Perplexity), {labels, labels});
      },
      "perplexity of ids", "Perplexity");
  expect_error(
      ErrorKind::Value,
      [&] {
        run_op1(OpKind::Metric,
                Attrs().set("kind", MetricKind::F1).set("average", F1Average::Macro),
                {labels, labels});
      },
      "macro F1 of ids without num_classes", "num_classes");
}

}  // namespace
}  // namespace tessel::testing
