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

// Two compiled functions whose graphs differ only in a captured constant's value must not share
// an executable (the executable cache keys on the constants' bytes, not just their types).
TEST(Api, CapturedConstantsAreNotConfusedAcrossFunctions) {
  auto scaled_by = [](float k) {
    Tensor c = Tensor::from_vector<float>({k, k}, {2});
    return compile([c](const std::vector<Tensor>& xs) { return std::vector<Tensor>{xs[0] * c}; });
  };
  Tensor x = Tensor::from_vector<float>({1, 2}, {2});
  EXPECT_EQ(scaled_by(3)({x})[0].to_f64(), (std::vector<double>{3, 6}));
  EXPECT_EQ(scaled_by(5)({x})[0].to_f64(), (std::vector<double>{5, 10}));
  // Longer constants that differ in one element: one inside the digest's 32-byte blocks, one in
  // the words past them (37 floats: 4 blocks and a tail of 5 floats).
  auto plus_ones_but = [](int at, float v) {
    std::vector<float> k(37, 1.0f);
    k[static_cast<size_t>(at)] = v;
    Tensor c = Tensor::from_vector<float>(k, {37});
    return compile([c](const std::vector<Tensor>& xs) { return std::vector<Tensor>{xs[0] + c}; });
  };
  Tensor z = Tensor::from_vector<float>(std::vector<float>(37, 0.0f), {37});
  for (int at : {13, 35}) {
    EXPECT_EQ(plus_ones_but(at, 2)({z})[0].to_f64()[static_cast<size_t>(at)], 2) << at;
    EXPECT_EQ(plus_ones_but(at, 3)({z})[0].to_f64()[static_cast<size_t>(at)], 3) << at;
  }
}

// A tensor computed from a traced argument has no value while tracing: evaluating it inside the
// traced function is an error saying so, not a confusing one about the placeholder node.
TEST(Api, EvaluatingATracedTensorIsAClearError) {
  Function f = compile([](const std::vector<Tensor>& xs) {
    (void)(xs[0] * 2.0).to_f64();
    return xs;
  });
  try {
    (void)f({Tensor::from_vector<float>({1}, {1})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
    EXPECT_NE(std::string(e.what()).find("argument of a function being traced"), std::string::npos)
        << e.what();
  }
}

// A Function called inside another's trace is applied inline, so transforms compose: the
// second derivative of x³ (6x) through grad of grad, and an inner grad closing over a tensor of
// the outer trace (d/dx of x·d(y·x)/dy = d/dx x² = 2x).
TEST(Api, TransformsComposeInsideATrace) {
  Function d1 = grad(
      [](const std::vector<Tensor>& a) { return std::vector<Tensor>{sum(a[0] * a[0] * a[0])}; });
  Function d2 =
      grad([d1](const std::vector<Tensor>& a) { return std::vector<Tensor>{sum(d1(a)[0])}; });
  Tensor x = Tensor::from_vector<float>({2, -1}, {2}, DType::F32, "cpu");
  EXPECT_EQ(d2({x})[0].to_f64(), (std::vector<double>{12, -6}));
  EXPECT_EQ(d1.trace_count(), 0);  // applied inline only
  Function outer = grad([](const std::vector<Tensor>& a) {
    Tensor xx = a[0];
    Function inner =
        grad([xx](const std::vector<Tensor>& b) { return std::vector<Tensor>{sum(b[0] * xx)}; });
    Tensor y = Tensor::from_vector<float>({1, 1}, {2}, DType::F32, "cpu");
    return std::vector<Tensor>{sum(xx * inner({y})[0])};
  });
  EXPECT_EQ(outer({x})[0].to_f64(), (std::vector<double>{4, -2}));
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

namespace tessel::testing {
namespace {

// A node may leave out trailing optional inputs (Conv without a bias): every backend's kernel
// sees them as absent instead of reading past the inputs it was given.
TEST(Api, TrailingOptionalInputsMayBeLeftOut) {
  for (const char* device : {"reference", "cpu"}) {
    Tensor x = Tensor::from_vector(std::vector<float>(25, 1.0f), {1, 1, 5, 5}, DType::F32, device);
    Tensor w = Tensor::from_vector(std::vector<float>(9, 1.0f), {1, 1, 3, 3}, DType::F32, device);
    Tensor y = op("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})[0];
    std::vector<double> v = y.to_f64();
    ASSERT_EQ(v.size(), 25u) << device;
    EXPECT_EQ(v[0], 4) << device;   // a corner sees 2×2 ones
    EXPECT_EQ(v[12], 9) << device;  // the centre sees 3×3
  }
}

}  // namespace
}  // namespace tessel::testing
