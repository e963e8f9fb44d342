// tessel::Optimizer on the reference and cpu devices: 20 steps of the goldens' MLP against
// PyTorch 1.13 (tests/goldens/gen_optimizers.py) for the rules torch has, against an f64
// implementation written here for Lion, LAMB and LARS; the OptimizerStep kind's decomposition
// against the same goldens; one trace over 20 steps with a changing lr; checkpoint round trips.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "train/train_test_util.h"

namespace tessel::testing {
namespace {

constexpr const char* kDevices[] = {"reference", "cpu"};
constexpr double kRtol = 1e-4, kAtol = 1e-6;

OptimizerOptions options_from_json(const nlohmann::json& j) {
  OptimizerOptions o;
  o.kind = j["kind"].get<std::string>();
  auto num = [&](const char* key, double& field) {
    if (j.contains(key)) field = j[key].get<double>();
  };
  auto flag = [&](const char* key, bool& field) {
    if (j.contains(key)) field = j[key].get<bool>();
  };
  num("lr", o.lr);
  num("beta1", o.beta1);
  num("beta2", o.beta2);
  num("eps", o.eps);
  num("weight_decay", o.weight_decay);
  num("momentum", o.momentum);
  num("dampening", o.dampening);
  num("lr_decay", o.lr_decay);
  num("initial_accumulator_value", o.initial_accumulator_value);
  flag("nesterov", o.nesterov);
  flag("centered", o.centered);
  flag("amsgrad", o.amsgrad);
  return o;
}

std::vector<Tensor> initial_params(const std::string& device, DType dtype = DType::F32) {
  std::vector<Tensor> ps;
  for (const HostTensor& t : mlp_data().init) ps.push_back(on_device(t, device, dtype));
  return ps;
}

// The loss and gradients of the MLP at `params`.
std::vector<Tensor> loss_and_grads(const Function& vg, const std::vector<Tensor>& params,
                                   const std::string& device) {
  DType dt = params[0].dtype();
  std::vector<Tensor> args = params;
  args.push_back(on_device(mlp_data().x, device, dt));
  args.push_back(on_device(mlp_data().y, device, dt));
  return vg(args);
}

// 20 steps of `opt` on the MLP (lr from `lr_at` before each step when given); returns the loss
// before each step.
std::vector<double> train(Optimizer& opt, const std::string& device, int steps = 20,
                          const std::function<double(int)>& lr_at = nullptr) {
  Function vg = mlp_value_and_grad();
  std::vector<double> losses;
  for (int s = 0; s < steps; ++s) {
    std::vector<Tensor> out = loss_and_grads(vg, opt.params(), device);
    losses.push_back(out[0].item());
    if (lr_at) opt.set_lr(lr_at(s));
    opt.step({out.begin() + 1, out.end()});
  }
  return losses;
}

void expect_params(const std::vector<Tensor>& got, const nlohmann::json& want, double rtol,
                   double atol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    expect_close(got[i].data(), tensor_from_json(want[i]), rtol, atol,
                 what + " param " + std::to_string(i));
}

void expect_losses(const std::vector<double>& got, const std::vector<double>& want, double rtol,
                   double atol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], atol + rtol * std::abs(want[i])) << what << " loss " << i;
}

class OptimizerGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(OptimizerGolden, TwentyStepsMatchPyTorch) {
  const nlohmann::json& c = optimizer_case(GetParam());
  for (const char* device : kDevices) {
    std::string what = std::string(GetParam()) + " on " + device;
    Optimizer opt(options_from_json(c["options"]), initial_params(device));
    std::vector<double> losses = train(opt, device);
    expect_losses(losses, c["losses"].get<std::vector<double>>(), kRtol, kAtol, what);
    expect_params(opt.params(), c["params"], kRtol, kAtol, what);
    EXPECT_EQ(opt.step_count(), 20);
    EXPECT_EQ(opt.trace_count(), 1) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Torch, OptimizerGolden,
                         ::testing::Values("sgd", "sgd_nesterov_wd", "sgd_dampening", "adam",
                                           "adam_amsgrad_wd", "adamw", "adamax", "adagrad",
                                           "adadelta", "rmsprop", "rmsprop_centered_momentum"));

// A schedule changes lr every step; the update graph is traced once.
TEST(OptimizerSchedule, CosineLrEveryStepTracesOnce) {
  const nlohmann::json& c = optimizer_case("sgd_momentum_cosine");
  std::vector<double> torch_lrs = c["lrs"].get<std::vector<double>>();
  LrSchedule cosine = cosine_annealing_lr(0.1, 20, 0.001);
  for (int t = 0; t < 20; ++t) EXPECT_NEAR(cosine(t), torch_lrs[t], 1e-12) << t;
  for (const char* device : kDevices) {
    Optimizer opt(options_from_json(c["options"]), initial_params(device));
    std::vector<double> losses = train(opt, device, 20, [&](int s) { return cosine(s); });
    expect_losses(losses, c["losses"].get<std::vector<double>>(), kRtol, kAtol, device);
    expect_params(opt.params(), c["params"], kRtol, kAtol, device);
    EXPECT_EQ(opt.trace_count(), 1) << device;
    EXPECT_DOUBLE_EQ(opt.lr(), cosine(19));
  }
}

// The OptimizerStep kind (lr and step as attributes) through the lazy op API, per parameter.
TEST(OptimizerStepKind, DecompositionMatchesPyTorch) {
  for (const char* name :
       {"sgd_nesterov_wd", "adam_amsgrad_wd", "rmsprop_centered_momentum", "adagrad", "sgd"}) {
    const nlohmann::json& c = optimizer_case(name);
    OptimizerOptions o = options_from_json(c["options"]);
    for (const char* device : kDevices) {
      std::string what = std::string(name) + " OptimizerStep on " + device;
      std::vector<Tensor> params = initial_params(device);
      // The state layout the op wants: Optimizer's (one pass-through state where it keeps none).
      Optimizer layout(o, params);
      size_t k = std::max<size_t>(1, layout.state_names().size());
      std::vector<std::vector<Tensor>> states(params.size());
      for (size_t i = 0; i < params.size(); ++i)
        for (size_t j = 0; j < k; ++j)
          states[i].push_back(j < layout.state_names().size() ? layout.state(i)[j] : params[i]);
      Function vg = mlp_value_and_grad();
      for (int s = 1; s <= 20; ++s) {
        std::vector<Tensor> out = loss_and_grads(vg, params, device);
        for (size_t i = 0; i < params.size(); ++i) {
          std::vector<Tensor> ins{params[i], out[i + 1]};
          ins.insert(ins.end(), states[i].begin(), states[i].end());
          std::vector<Tensor> r = op("OptimizerStep", ins,
                                     {{"kind", o.kind},
                                      {"lr", o.lr},
                                      {"step", s},
                                      {"beta1", o.beta1},
                                      {"beta2", o.beta2},
                                      {"eps", o.eps},
                                      {"weight_decay", o.weight_decay},
                                      {"momentum", o.momentum},
                                      {"dampening", o.dampening},
                                      {"nesterov", o.nesterov},
                                      {"centered", o.centered},
                                      {"amsgrad", o.amsgrad},
                                      {"lr_decay", o.lr_decay}});
          eval(r);
          params[i] = r[0];
          states[i].assign(r.begin() + 1, r.end());
        }
      }
      expect_params(params, c["params"], kRtol, kAtol, what);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Lion, LAMB and LARS against an f64 implementation written here from their papers.

using Vec = std::vector<double>;
using Params = std::vector<Vec>;

double norm(const Vec& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

// One step of the rule on every parameter; `state` per parameter, `t` from 1.
void reference_step(const OptimizerOptions& o, int t, Params& p, const Params& g,
                    std::vector<std::vector<Vec>>& state) {
  for (size_t i = 0; i < p.size(); ++i) {
    Vec& w = p[i];
    const Vec& gi = g[i];
    auto& s = state[i];
    size_t n = w.size();
    if (o.kind == "Lion") {
      if (s.empty()) s = {Vec(n, 0)};
      for (size_t e = 0; e < n; ++e) {
        double c = o.beta1 * s[0][e] + (1 - o.beta1) * gi[e];
        double sign = c > 0 ? 1 : c < 0 ? -1 : 0;
        w[e] = w[e] * (1 - o.lr * o.weight_decay) - o.lr * sign;
        s[0][e] = o.beta2 * s[0][e] + (1 - o.beta2) * gi[e];
      }
    } else if (o.kind == "Lamb") {
      if (s.empty()) s = {Vec(n, 0), Vec(n, 0)};
      double bc1 = 1 - std::pow(o.beta1, t), bc2 = 1 - std::pow(o.beta2, t);
      Vec u(n);
      for (size_t e = 0; e < n; ++e) {
        s[0][e] = o.beta1 * s[0][e] + (1 - o.beta1) * gi[e];
        s[1][e] = o.beta2 * s[1][e] + (1 - o.beta2) * gi[e] * gi[e];
        u[e] = (s[0][e] / bc1) / (std::sqrt(s[1][e] / bc2) + o.eps) + o.weight_decay * w[e];
      }
      double wn = norm(w), un = norm(u);
      double trust = wn > 0 && un > 0 ? wn / un : 1;
      for (size_t e = 0; e < n; ++e) w[e] -= o.lr * trust * u[e];
    } else if (o.kind == "Lars") {
      if (s.empty()) s = {Vec(n, 0)};
      double wn = norm(w), gn = norm(gi);
      double trust =
          wn > 0 && gn > 0 ? o.trust_coefficient * wn / (gn + o.weight_decay * wn + o.eps) : 1;
      for (size_t e = 0; e < n; ++e) {
        double d = (gi[e] + o.weight_decay * w[e]) * trust;
        s[0][e] = t == 1 ? d : o.momentum * s[0][e] + d;
        w[e] -= o.lr * s[0][e];
      }
    }
  }
}

struct PaperCase {
  const char* name;
  OptimizerOptions options;
};

class OptimizerPaper : public ::testing::TestWithParam<PaperCase> {};

TEST_P(OptimizerPaper, TwentyStepsMatchAnF64Implementation) {
  const OptimizerOptions& o = GetParam().options;
  Params p;
  for (const HostTensor& t : mlp_data().init) p.push_back(t.to_f64());
  std::vector<std::vector<Vec>> state(p.size());
  std::vector<double> losses;
  for (int t = 1; t <= 20; ++t) {
    Params g;
    losses.push_back(mlp_loss_and_grads_f64(p, g));
    reference_step(o, t, p, g, state);
  }
  // f64 with a tight tolerance checks the formulas; f32 with the golden tolerance the precision.
  struct Run {
    DType dtype;
    double rtol, atol;
  };
  for (Run run : {Run{DType::F64, 1e-9, 1e-12}, Run{DType::F32, kRtol, kAtol}})
    for (const char* device : kDevices) {
      std::string what =
          std::string(GetParam().name) + " " + dtype_name(run.dtype) + " on " + device;
      Optimizer opt(o, initial_params(device, run.dtype));
      std::vector<double> got = train(opt, device);
      expect_losses(got, losses, run.rtol, run.atol, what);
      for (size_t i = 0; i < p.size(); ++i)
        expect_close(opt.params()[i].data(), p[i], run.rtol, run.atol,
                     what + " param " + std::to_string(i));
    }
}

INSTANTIATE_TEST_SUITE_P(
    Papers, OptimizerPaper,
    ::testing::Values(PaperCase{"lion", OptimizerOptions::lion(1e-3, 0.9, 0.99, 0.1)},
                      PaperCase{"lamb", OptimizerOptions::lamb(0.01, 0.9, 0.999, 1e-6, 0.01)},
                      PaperCase{"lars", OptimizerOptions::lars(0.5, 0.9, 1e-3, 0.02)}),
    [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------------
// Checkpoints and bad input.

TEST(OptimizerState, StateDictRoundTripResumesTraining) {
  const nlohmann::json& c = optimizer_case("adam_amsgrad_wd");
  for (const char* device : kDevices) {
    Optimizer first(options_from_json(c["options"]), initial_params(device),
                    {"w1", "b1", "w2", "b2"});
    train(first, device, 10);
    std::vector<std::pair<std::string, Tensor>> saved = first.state_dict();
    ASSERT_EQ(saved.size(), 4u * 3u + 1u);
    EXPECT_EQ(saved[0].first, "w1.exp_avg");
    EXPECT_EQ(saved[2].first, "w1.max_exp_avg_sq");
    EXPECT_EQ(saved.back().first, "step");
    EXPECT_EQ(saved.back().second.item(), 10);

    Optimizer second(options_from_json(c["options"]), first.params(), {"w1", "b1", "w2", "b2"});
    second.load_state_dict(saved);
    EXPECT_EQ(second.step_count(), 10);
    std::vector<double> losses = train(second, device, 10);
    std::vector<double> want = c["losses"].get<std::vector<double>>();
    expect_losses(losses, {want.begin() + 10, want.end()}, kRtol, kAtol, device);
    expect_params(second.params(), c["params"], kRtol, kAtol, device);

    std::vector<std::pair<std::string, Tensor>> bad = saved;
    bad.pop_back();
    expect_error(
        ErrorKind::Value, [&] { second.load_state_dict(bad); }, "missing step", "step");
    bad = saved;
    bad.emplace_back("w9.exp_avg", saved[0].second);
    expect_error(
        ErrorKind::Value, [&] { second.load_state_dict(bad); }, "unknown key", "w9");
    bad = saved;
    bad[0].second = Tensor(HostTensor::empty(DType::F32, {3}), device);
    expect_error(
        ErrorKind::Shape, [&] { second.load_state_dict(bad); }, "shape", "w1.exp_avg");
  }
}

TEST(OptimizerErrors, BadInputNamesWhatIsWrong) {
  std::vector<Tensor> ps = initial_params("reference");
  expect_error(
      ErrorKind::Value, [&] { Optimizer o(OptimizerOptions::sgd(-0.1), ps); }, "negative lr", "lr");
  expect_error(
      ErrorKind::Value, [&] { Optimizer o(OptimizerOptions::adam(1e-3, 1.0), ps); }, "beta1",
      "beta1");
  OptimizerOptions unknown;
  unknown.kind = "Adamm";
  expect_error(
      ErrorKind::Value, [&] { Optimizer o(unknown, ps); }, "unknown kind", "Adamm");
  OptimizerOptions lbfgs;
  lbfgs.kind = "train.optimizer.lbfgs";
  expect_error(
      ErrorKind::Value, [&] { Optimizer o(lbfgs, ps); }, "lbfgs kind", "LBFGS");
  expect_error(
      ErrorKind::Value, [&] { Optimizer o(OptimizerOptions::adam(1e-3, 0.9, 0.999, 1e-8, 0), {}); },
      "no params");
  OptimizerOptions nesterov = OptimizerOptions::sgd(0.1, 0, 0, 0, true);
  expect_error(
      ErrorKind::Value, [&] { Optimizer o(nesterov, ps); }, "nesterov", "nesterov");

  Optimizer opt(OptimizerOptions::adam(), ps, {"w1", "b1", "w2", "b2"});
  expect_error(
      ErrorKind::Value, [&] { opt.set_lr(-1); }, "set_lr", "lr");
  expect_error(
      ErrorKind::Value, [&] { opt.set_lr(NAN); }, "set_lr nan", "lr");
  std::vector<Tensor> three(ps.begin(), ps.begin() + 3);
  expect_error(
      ErrorKind::Value, [&] { opt.step(three); }, "grad count", "got 3 grad");
  std::vector<Tensor> swapped = {ps[0], ps[1], ps[2], ps[1]};
  expect_error(
      ErrorKind::Shape, [&] { opt.step(swapped); }, "grad shape", "'b2'");
  std::vector<Tensor> f64 = ps;
  f64[2] = ps[2].astype(DType::F64);
  expect_error(
      ErrorKind::DType, [&] { opt.step(f64); }, "grad dtype", "'w2'");
  std::vector<Tensor> moved = ps;
  moved[0] = ps[0].to("cpu");
  expect_error(
      ErrorKind::Device, [&] { opt.step(moved); }, "grad device", "'w1'");
  EXPECT_EQ(opt.step_count(), 0);
  std::vector<Tensor> ints = {
      Tensor::from_vector(std::vector<int64_t>{1, 2}, {2}, DType::I64, "reference")};
  expect_error(
      ErrorKind::DType, [&] { Optimizer o(OptimizerOptions::sgd(0.1), ints); }, "int param");
}

}  // namespace
}  // namespace tessel::testing
