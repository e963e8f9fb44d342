// Learning-rate schedules against torch.optim.lr_scheduler, gradient clipping against
// torch.nn.utils, L-BFGS against torch.optim.LBFGS (goldens of gen_optimizers.py), and the
// Hebbian / Oja update against an f64 implementation written here.
#include <gtest/gtest.h>

#include <cmath>

#include "train/train_test_util.h"

namespace tessel::testing {
namespace {

constexpr const char* kDevices[] = {"reference", "cpu"};

void expect_schedule(const LrSchedule& s, const std::string& name) {
  std::vector<double> want = optimizer_case("schedule_" + name)["lrs"].get<std::vector<double>>();
  for (size_t t = 0; t < want.size(); ++t)
    EXPECT_NEAR(s(static_cast<int64_t>(t)), want[t], 1e-12 + 1e-9 * want[t]) << name << " t=" << t;
}

TEST(LrSchedule, ClosedFormsMatchPyTorch) {
  expect_schedule(step_lr(0.1, 7, 0.5), "step");
  expect_schedule(multi_step_lr(0.1, {5, 12, 20}, 0.3), "multi_step");
  expect_schedule(exponential_lr(0.1, 0.9), "exponential");
  expect_schedule(cosine_annealing_lr(0.1, 10, 0.01), "cosine");  // t up to 29: past t_max
  expect_schedule(linear_lr(0.1, 0.1, 1.0, 5), "linear");
  expect_schedule(sequential_lr({linear_lr(0.1, 0.1, 1.0, 5), cosine_annealing_lr(0.1, 20)}, {5}),
                  "warmup_cosine");
  EXPECT_DOUBLE_EQ(constant_lr(0.3)(17), 0.3);
}

TEST(LrSchedule, BadArgumentsAreErrors) {
  expect_error(
      ErrorKind::Value, [] { step_lr(0.1, 0); }, "step_size 0", "step_size");
  expect_error(
      ErrorKind::Value, [] { step_lr(-0.1, 3); }, "negative base", "base_lr");
  expect_error(
      ErrorKind::Value,
      [] {
        multi_step_lr(0.1, {5, 3});
      },
      "milestones", "milestones");
  expect_error(
      ErrorKind::Value, [] { cosine_annealing_lr(0.1, 0); }, "t_max", "t_max");
  expect_error(
      ErrorKind::Value, [] { linear_lr(0.1, 0.0); }, "start_factor", "start_factor");
  expect_error(
      ErrorKind::Value, [] { sequential_lr({constant_lr(0.1)}, {3}); }, "counts", "milestone");
  expect_error(
      ErrorKind::Value, [] { exponential_lr(0.1, 0.9)(-1); }, "negative t", "t is -1");
}

TEST(ClipGrad, NormAndValueMatchPyTorch) {
  for (const char* device : kDevices) {
    for (const auto& c : golden_cases_of("optimizers")) {
      if (c["name"] != "clip_norm" && c["name"] != "clip_value") continue;
      std::vector<Tensor> grads;
      for (const auto& g : c["grads"]) grads.push_back(Tensor(tensor_from_json(g), device));
      std::vector<Tensor> clipped;
      std::string what = std::string(device) + " " + c["name"].get<std::string>();
      if (c["name"] == "clip_norm") {
        double p = c["norm_type"] == "inf" ? INFINITY : c["norm_type"].get<double>();
        what += " p=" + std::to_string(p);
        ClippedGrads r = clip_grad_norm(grads, c["max_norm"].get<double>(), p);
        expect_close(r.total_norm.data(), tensor_from_json(c["total_norm"]), 1e-5, 1e-6, what);
        clipped = r.grads;
      } else {
        clipped = clip_grad_value(grads, c["clip_value"].get<double>());
      }
      ASSERT_EQ(clipped.size(), grads.size());
      for (size_t i = 0; i < clipped.size(); ++i)
        expect_close(clipped[i].data(), tensor_from_json(c["clipped"][i]), 1e-5, 1e-6, what);
    }
  }
  // Below max_norm nothing changes; clipping traces inside compile() as graph ops.
  Tensor g = Tensor::from_vector(std::vector<double>{0.3, -0.4}, {2}, DType::F32, "cpu");
  Function f = compile([](const std::vector<Tensor>& a) {
    ClippedGrads r = clip_grad_norm(a, 10.0);
    return std::vector<Tensor>{r.grads[0], r.total_norm};
  });
  std::vector<Tensor> out = f({g});
  EXPECT_NEAR(out[1].item(), 0.5, 1e-6);
  expect_close(out[0].data(), {0.3, -0.4}, 1e-6, 1e-7, "unclipped");
}

TEST(ClipGrad, BadInputIsAnError) {
  Tensor g = Tensor::from_vector(std::vector<double>{1, 2}, {2}, DType::F32, "reference");
  expect_error(
      ErrorKind::Value, [] { clip_grad_norm({}, 1.0); }, "no grads", "no gradients");
  expect_error(
      ErrorKind::Value, [&] { clip_grad_norm({g}, -1.0); }, "max_norm", "max_norm");
  expect_error(
      ErrorKind::Value, [&] { clip_grad_norm({g}, 1.0, 0.0); }, "p", "norm_type");
  expect_error(
      ErrorKind::Value, [&] { clip_grad_value({g}, -1.0); }, "clip", "clip_value");
  Tensor ids = Tensor::from_vector(std::vector<int64_t>{1, 2}, {2}, DType::I64, "reference");
  expect_error(
      ErrorKind::DType,
      [&] {
        clip_grad_norm({g, ids}, 1.0);
      },
      "int grad", "gradient 1");
}

TEST(Lbfgs, TwentyStepsMatchPyTorch) {
  const nlohmann::json& c = optimizer_case("lbfgs");
  std::vector<double> want = c["losses"].get<std::vector<double>>();
  for (const char* device : kDevices) {
    std::vector<Tensor> params;
    for (const HostTensor& t : mlp_data().init) params.push_back(on_device(t, device));
    LbfgsOptions o;
    o.lr = c["options"]["lr"].get<double>();
    o.max_iter = c["options"]["max_iter"].get<int>();
    o.history_size = c["options"]["history_size"].get<int>();
    LBFGS opt(o, params);
    Function vg = mlp_value_and_grad();
    Tensor x = on_device(mlp_data().x, device), y = on_device(mlp_data().y, device);
    auto closure = [&](const std::vector<Tensor>& ps) {
      std::vector<Tensor> args = ps;
      args.push_back(x);
      args.push_back(y);
      std::vector<Tensor> out = vg(args);
      return LBFGS::Evaluation{out[0], {out.begin() + 1, out.end()}};
    };
    for (size_t s = 0; s < want.size(); ++s) {
      double loss = opt.step(closure);
      EXPECT_NEAR(loss, want[s], 1e-6 + 1e-4 * want[s]) << device << " step " << s;
    }
    EXPECT_EQ(opt.iterations(), c["n_iter"].get<int64_t>()) << device;
    EXPECT_EQ(opt.evaluations(), c["func_evals"].get<int64_t>()) << device;
    for (size_t i = 0; i < params.size(); ++i)
      expect_close(opt.params()[i].data(), tensor_from_json(c["params"][i]), 1e-4, 1e-6,
                   std::string(device) + " param " + std::to_string(i));
  }
}

TEST(Lbfgs, BadInputIsAnError) {
  std::vector<Tensor> ps = {
      Tensor::from_vector(std::vector<double>{1, 2}, {2}, DType::F32, "reference")};
  LbfgsOptions o;
  o.line_search_fn = "wolfe";
  expect_error(
      ErrorKind::Unsupported, [&] { LBFGS opt(o, ps); }, "line search", "wolfe");
  o = LbfgsOptions{};
  o.lr = -1;
  expect_error(
      ErrorKind::Value, [&] { LBFGS opt(o, ps); }, "lr", "lr");
  LBFGS opt(LbfgsOptions{}, ps);
  expect_error(
      ErrorKind::Value,
      [&] {
        opt.step([](const std::vector<Tensor>& p) { return LBFGS::Evaluation{sum(p[0]), {}}; });
      },
      "grad count", "gradients");
}

// Oja's rule and the plain Hebbian rule for 20 steps of a linear neuron layer y = x·W on fixed
// inputs, against f64 written out here.
TEST(Hebbian, OjaAndPlainMatchAnF64Implementation) {
  const int b = 16, in = 8, out = 4;
  HostTensor x = random_values(DType::F32, {b, in}, 7, -1, 1);
  HostTensor w0 = random_values(DType::F32, {in, out}, 8, -0.5, 0.5);
  std::vector<double> xv = x.to_f64();
  for (bool oja : {true, false}) {
    const double lr = oja ? 0.05 : 0.01, wd = 0.1;
    std::vector<double> w = w0.to_f64();
    for (int step = 0; step < 20; ++step) {
      std::vector<double> y(b * out, 0), dw(in * out, 0), ysq(out, 0);
      for (int r = 0; r < b; ++r)
        for (int j = 0; j < out; ++j) {
          for (int i = 0; i < in; ++i) y[r * out + j] += xv[r * in + i] * w[i * out + j];
          ysq[j] += y[r * out + j] * y[r * out + j];
        }
      for (int i = 0; i < in; ++i)
        for (int j = 0; j < out; ++j) {
          double h = 0;
          for (int r = 0; r < b; ++r) h += xv[r * in + i] * y[r * out + j];
          if (oja) h -= w[i * out + j] * ysq[j];
          dw[i * out + j] = lr * h / b - lr * wd * w[i * out + j];
        }
      for (int e = 0; e < in * out; ++e) w[e] += dw[e];
    }
    for (const char* device : kDevices) {
      Tensor tw(w0, device), tx(x, device);
      for (int step = 0; step < 20; ++step) {
        tw = hebbian_update(tw, tx, matmul(tx, tw), lr, oja ? HebbianRule::Oja : HebbianRule::Plain,
                            wd);
        tw.eval();
      }
      expect_close(tw.data(), w, 1e-4, 1e-6, std::string(device) + (oja ? " oja" : " plain"));
    }
  }
  Tensor w = Tensor::from_vector(std::vector<double>(6, 0.1), {3, 2}, DType::F32, "reference");
  Tensor pre = Tensor::from_vector(std::vector<double>(12, 0.1), {4, 3}, DType::F32, "reference");
  expect_error(
      ErrorKind::Shape, [&] { hebbian_update(w, pre, pre, 0.1); }, "post shape", "post");
  expect_error(
      ErrorKind::Value, [&] { hebbian_update(w, pre, matmul(pre, w), -0.1); }, "lr", "lr");
}

}  // namespace
}  // namespace tessel::testing

namespace tessel::testing {
namespace {

// bf16 compute from f32 master weights with dynamic loss scaling trains the MLP about as well as
// f32 does; an overflowing scale is detected, the step skipped and the scale backed off.
TEST(MixedPrecision, Bf16ComputeWithF32MasterWeightsAndLossScaling) {
  for (const char* device : kDevices) {
    Function vg = value_and_grad(
        [](const std::vector<Tensor>& a) {
          auto lo = [](const Tensor& t) { return cast(t, DType::BF16); };
          Tensor h = tanh(linear(lo(a[4]), lo(a[0]), lo(a[1])));
          Tensor d = linear(h, lo(a[2]), lo(a[3])) - lo(a[5]);
          return std::vector<Tensor>{cast(mean(d * d), DType::F32) * a[6]};  // scaled loss
        },
        {0, 1, 2, 3});
    std::vector<Tensor> params;
    for (const HostTensor& t : mlp_data().init) params.push_back(on_device(t, device));
    Optimizer opt(OptimizerOptions::adam(0.01), params);
    LossScaler scaler(1024.0, 2.0, 0.5, 5);
    Tensor x = on_device(mlp_data().x, device), y = on_device(mlp_data().y, device);
    double last = 0;
    for (int s = 0; s < 20; ++s) {
      std::vector<Tensor> args = opt.params();
      args.insert(args.end(), {x, y, Tensor::scalar(scaler.scale(), DType::F32, device)});
      std::vector<Tensor> out = vg(args);
      last = out[0].item() / scaler.scale();
      std::vector<Tensor> grads = scaler.unscale({out.begin() + 1, out.end()});
      ASSERT_EQ(grads.size(), 4u);
      EXPECT_EQ(grads[0].dtype(), DType::F32);
      opt.step(grads);
    }
    EXPECT_EQ(opt.params()[0].dtype(), DType::F32);
    EXPECT_EQ(scaler.skipped_steps(), 0);
    EXPECT_DOUBLE_EQ(scaler.scale(), 1024.0 * 16);  // grew after steps 5, 10, 15, 20
    // The f32 run ends at torch's Adam golden; bf16 compute lands within a few percent of it.
    double f32_last = optimizer_case("adam")["losses"].back().get<double>();
    EXPECT_NEAR(last, f32_last, 0.05 * f32_last) << device;

    Tensor inf = Tensor::from_vector(std::vector<double>{1, INFINITY}, {2}, DType::BF16, device);
    EXPECT_TRUE(scaler.unscale({inf}).empty());
    EXPECT_EQ(scaler.skipped_steps(), 1);
    EXPECT_DOUBLE_EQ(scaler.scale(), 1024.0 * 8);
  }
  expect_error(
      ErrorKind::Value, [] { LossScaler s(0.0); }, "init_scale", "init_scale");
}

}  // namespace
}  // namespace tessel::testing
