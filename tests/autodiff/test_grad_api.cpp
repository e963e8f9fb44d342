// The public gradient API: value_and_grad / grad over lazy tensors, on the reference and cpu
// devices, against gradients written out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"
#include "tessel/tessel.h"

namespace tessel::testing {
namespace {

// loss = Σ tanh(x·w): d/dw = xᵀ (1 - y²), d/dx = (1 - y²) wᵀ with y = tanh(x·w).
std::vector<Tensor> tanh_layer(const std::vector<Tensor>& a) {
  return {sum(tanh(matmul(a[0], a[1]))), matmul(a[0], a[1])};
}

TEST(GradApi, ValueAndGradMatchesTheHandDerivation) {
  for (const char* device : {"reference", "cpu"}) {
    SCOPED_TRACE(device);
    std::vector<double> xv = {0.1, -0.4, 0.7, 0.2, 0.5, -0.3},
                        wv = {0.3, -0.2, 0.6, 0.1, -0.5, 0.4};
    Tensor x = Tensor::from_vector(xv, {2, 3}, DType::F64, device);
    Tensor w = Tensor::from_vector(wv, {3, 2}, DType::F64, device);
    Function f = value_and_grad(tanh_layer, {0, 1});
    std::vector<Tensor> out = f({x, w});
    ASSERT_EQ(out.size(), 4u);  // loss, x·w, d/dx, d/dw
    std::vector<double> z = out[1].to_f64(), dx(6, 0), dw(6, 0);
    double loss = 0;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        double y = std::tanh(z[i * 2 + j]), d = 1 - y * y;
        loss += y;
        for (int k = 0; k < 3; ++k) {
          dx[i * 3 + k] += d * wv[k * 2 + j];
          dw[k * 2 + j] += xv[i * 3 + k] * d;
        }
      }
    EXPECT_NEAR(out[0].item(), loss, 1e-12);
    expect_close(out[2].data(), dx, 1e-12, 1e-12, "d/dx");
    expect_close(out[3].data(), dw, 1e-12, 1e-12, "d/dw");
    // grad(): the gradients only; the trace is cached per signature.
    Function g = grad(tanh_layer, {1});
    std::vector<Tensor> only = g({x, w});
    ASSERT_EQ(only.size(), 1u);
    expect_close(only[0].data(), dw, 1e-12, 1e-12, "grad d/dw");
    g({x, w});
    EXPECT_EQ(g.trace_count(), 1);
  }
}

TEST(GradApi, TheLossMustBeOneFloatElement) {
  Tensor x = Tensor::from_vector(std::vector<double>{1, 2}, {2}, DType::F64, "reference");
  Function f = grad([](const std::vector<Tensor>& a) { return std::vector<Tensor>{exp(a[0])}; });
  expect_error(ErrorKind::Value, [&] { f({x}); });
  Function h =
      grad([](const std::vector<Tensor>& a) { return std::vector<Tensor>{sum(a[0])}; }, {1});
  expect_error(ErrorKind::Value, [&] { h({x}); });
}

// vjp(fn, primals, cotangents) with two outputs: y0 = a·b (elementwise), y1 = Σ a²;
// d/da = c0·b + c1·2a, d/db = c0·a.
TEST(GradApi, VjpOfSeveralOutputs) {
  for (const char* device : {"reference", "cpu"}) {
    Tensor a = Tensor::from_vector(std::vector<double>{1, -2, 3}, {3}, DType::F64, device);
    Tensor b = Tensor::from_vector(std::vector<double>{0.5, 4, -1}, {3}, DType::F64, device);
    Tensor c0 = Tensor::from_vector(std::vector<double>{1, 2, 3}, {3}, DType::F64, device);
    Tensor c1 = Tensor::scalar(10, DType::F64, device);
    auto fn = [](const std::vector<Tensor>& p) {
      return std::vector<Tensor>{p[0] * p[1], sum(p[0] * p[0])};
    };
    VjpResult r = vjp(fn, {a, b}, {c0, c1});
    ASSERT_EQ(r.outputs.size(), 2u);
    ASSERT_EQ(r.vjps.size(), 2u);
    EXPECT_EQ(r.outputs[0].to_f64(), (std::vector<double>{0.5, -8, -3}));
    EXPECT_EQ(r.outputs[1].item(), 14);
    EXPECT_EQ(r.vjps[0].to_f64(), (std::vector<double>{0.5 + 20, 8 - 40, -3 + 60})) << device;
    EXPECT_EQ(r.vjps[1].to_f64(), (std::vector<double>{1, -4, 9})) << device;
    expect_error(
        ErrorKind::Value,
        [&] {
          vjp(fn, {a, b}, {c0});
        },
        "one cotangent missing", "cotangent");
    expect_error(
        ErrorKind::Shape,
        [&] {
          vjp(fn, {a, b}, {c1, c1});
        },
        "cotangent shape", "cotangent 0");
  }
}

// Gradient accumulation: gradients of a summed loss over micro-batches, added up, equal the
// gradient over the whole batch (one compiled graph serves every micro-batch).
TEST(GradApi, AccumulatedMicroBatchGradientsEqualTheFullBatchGradient) {
  for (const char* device : {"reference", "cpu"}) {
    std::vector<double> xs(8 * 3), ws = {0.5, -1, 2, 0.25, 1.5, -0.75};
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(static_cast<double>(i));
    Tensor w = Tensor::from_vector(ws, {3, 2}, DType::F64, device);
    Function g = grad(
        [](const std::vector<Tensor>& a) {
          return std::vector<Tensor>{sum(tanh(matmul(a[1], a[0])))};
        },
        {0});
    auto rows = [&](int64_t lo, int64_t n) {
      return Tensor::from_vector(
          std::vector<double>(xs.begin() + lo * 3, xs.begin() + (lo + n) * 3), {n, 3}, DType::F64,
          device);
    };
    Tensor full = g({w, rows(0, 8)})[0];
    Tensor acc = g({w, rows(0, 4)})[0];
    acc = acc + g({w, rows(4, 4)})[0];
    expect_close(acc.data(), full.data(), 1e-12, 1e-12, device);
    EXPECT_EQ(g.trace_count(), 2) << "one trace per micro-batch shape and one for the full batch";
  }
}

}  // namespace
}  // namespace tessel::testing
