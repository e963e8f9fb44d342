// The lazy C++ API: ops record and check at once, eval runs, compile caches by signature.
#include <gtest/gtest.h>

#include "tessel/tessel.h"

namespace tessel {
namespace {

TEST(Api, LazyOpsRunOnEval) {
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  Tensor b = Tensor::from_vector<float>({1, 0, 0, 1}, {2, 2});
  Tensor c = matmul(a, b) + 1.0;
  EXPECT_FALSE(c.is_evaluated());
  EXPECT_EQ(c.shape(), (Shape{2, 2}));
  EXPECT_EQ(c.to_f64(), (std::vector<double>{2, 3, 4, 5}));
  EXPECT_TRUE(c.is_evaluated());
}

TEST(Api, ShapeErrorsAreThrownWhenTheOpIsRecorded) {
  Tensor a = zeros({2, 3});
  Tensor b = zeros({4, 5});
  try {
    (void)matmul(a, b);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Shape);
    EXPECT_NE(std::string(e.what()).find("[MatMul]"), std::string::npos) << e.what();
  }
}

TEST(Api, BinaryOpsPromoteLikePyTorch) {
  Tensor i = Tensor::from_vector<int32_t>({1, 2}, {2}, DType::I32);
  Tensor f = Tensor::from_vector<float>({0.5, 0.25}, {2}, DType::F32);
  Tensor s = i + f;
  EXPECT_EQ(s.dtype(), DType::F32);
  EXPECT_EQ(s.to_f64(), (std::vector<double>{1.5, 2.25}));
  EXPECT_EQ((i * 2.0).dtype(), DType::I32);
  EXPECT_EQ((i * 2.5).dtype(), DType::F32);
}

TEST(Api, OpByKindNameOrSeedAlias) {
  Tensor x = Tensor::from_vector<float>({-1, 2}, {2});
  EXPECT_EQ(op("activation.relu", {x})[0].to_f64(), (std::vector<double>{0, 2}));
  EXPECT_EQ(op("Activation", {x}, {{"kind", "Abs"}})[0].to_f64(), (std::vector<double>{1, 2}));
  EXPECT_THROW(op("no.such.op", {x}), Error);
}

TEST(Api, CompileTracesOncePerSignature) {
  Function f = compile(
      [](const std::vector<Tensor>& xs) { return std::vector<Tensor>{softmax(xs[0] * 2.0)}; });
  Tensor a = Tensor::from_vector<float>({0, 0}, {2});
  auto r1 = f({a});
  auto r2 = f({Tensor::from_vector<float>({1, 1}, {2})});
  EXPECT_EQ(f.trace_count(), 1);
  EXPECT_NEAR(r1[0].to_f64()[0], 0.5, 1e-7);
  EXPECT_NEAR(r2[0].to_f64()[1], 0.5, 1e-7);
  (void)f({Tensor::from_vector<float>({1, 2, 3}, {3})});
  EXPECT_EQ(f.trace_count(), 2);
  EXPECT_EQ(f.cache_size(), 2);
}

TEST(Api, DevicesAreExplicit) {
  EXPECT_THROW(Tensor::set_default_device("nowhere"), Error);
  Tensor a = zeros({2});
  EXPECT_EQ(a.device(), "reference");
  EXPECT_EQ(a.to("reference").device(), "reference");
}

TEST(Api, MultiOutputOpsEvaluateOnce) {
  Tensor x = Tensor::from_vector<float>({3, 1, 2}, {3});
  auto [values, indices] = topk(x, 2);
  EXPECT_EQ(values.to_f64(), (std::vector<double>{3, 2}));
  EXPECT_TRUE(indices.is_evaluated());
  EXPECT_EQ(indices.to_f64(), (std::vector<double>{0, 2}));
}

}  // namespace
}  // namespace tessel
