// `tessel train digits`: trains a small MLP or CNN on the handwritten digits Debian's
// python3-sklearn ships (read in C++ with zlib), on the chosen device, with a stratified 80/20
// split after a seeded shuffle; prints a progress bar, the held-out accuracy, writes a
// safetensors checkpoint (parameters, optimizer state, metadata), reloads it and checks the
// reloaded model predicts identically. The last line is machine-readable. Same seed and thread
// count give a bit-identical run (each epoch's batch order derives from (seed, epoch) alone, so
// `--resume` continues the same loss curve).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "runtime/thread_pool.h"
#include "tessel/datasets.h"
#include "tessel/optim.h"
#include "tessel/safetensors.h"
#include "tessel/tessel.h"

namespace tessel {
namespace {

struct TrainOptions {
  std::string device = "cpu";
  std::string model = "mlp";
  std::string optimizer = "adam";
  double lr = 0;  // 0: the optimizer's default for this job
  int64_t epochs = 20, batch = 32;
  uint64_t seed = 0;
  std::string checkpoint = "digits-checkpoint.safetensors";
  std::string resume;  // a checkpoint to continue from
  std::string data = default_digits_path();
};

constexpr int64_t kClasses = 10;

// ---- Model -------------------------------------------------------------------------------------

struct Param {
  std::string name;
  Shape shape;
  int64_t fan_in;
};

std::vector<Param> model_params(const std::string& model) {
  if (model == "mlp")
    return {{"fc1.weight", {64, 128}, 64},
            {"fc1.bias", {128}, 64},
            {"fc2.weight", {128, kClasses}, 128},
            {"fc2.bias", {kClasses}, 128}};
  if (model == "cnn")
    return {{"conv.weight", {16, 1, 3, 3}, 9},
            {"conv.bias", {16}, 9},
            {"fc.weight", {16 * 4 * 4, kClasses}, 256},
            {"fc.bias", {kClasses}, 256}};
  throw_error(ErrorKind::Value, "[train] unknown --model '", model, "'; expected mlp or cnn");
}

// PyTorch's default Linear / Conv initialization: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), drawn from
// the seed with 53-bit uniforms so every platform gets the same values.
std::vector<Tensor> init_params(const std::vector<Param>& spec, uint64_t seed,
                                const std::string& device) {
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  std::vector<Tensor> out;
  for (const Param& p : spec) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(p.fan_in));
    std::vector<float> v(static_cast<size_t>(shape_numel(p.shape)));
    for (float& x : v)
      x = static_cast<float>((static_cast<double>(rng() >> 11) * 0x1p-53 * 2 - 1) * bound);
    out.push_back(Tensor::from_vector(v, p.shape, DType::F32, device));
  }
  return out;
}

// Logits [B, 10] of images x [B, 64].
Tensor forward(const std::string& model, const std::vector<Tensor>& p, const Tensor& x) {
  if (model == "mlp") return linear(linear(x, p[0], p[1], "Relu"), p[2], p[3]);
  const int64_t b = x.shape()[0];
  Tensor img = reshape(x, {b, 1, 8, 8});
  Tensor h = max_pool(relu(conv(img, p[0], p[1], {1, 1}, {1, 1, 1, 1})), {2, 2}, {2, 2});
  return linear(reshape(h, {b, 16 * 4 * 4}), p[2], p[3]);
}

Tensor accuracy(const Tensor& logits, const Tensor& labels) {
  return op("Metric", {logits, labels}, {{"kind", "Accuracy"}})[0];
}

// ---- Progress ----------------------------------------------------------------------------------

class Progress {
 public:
  Progress(int64_t epochs, int64_t steps) : epochs_(epochs), steps_(steps), tty_(isatty(1)) {}
  void update(int64_t epoch, int64_t step, double loss, double acc, double samples_per_s) {
    if (!tty_ && step != steps_) return;  // a log file gets one line per epoch
    constexpr int kWidth = 24;
    int filled = static_cast<int>(kWidth * step / steps_);
    std::printf("%sepoch %3lld/%lld [%.*s%*s] loss %.4f  acc %.4f  %7.0f samples/s%s",
                tty_ ? "\r" : "", static_cast<long long>(epoch), static_cast<long long>(epochs_),
                filled, "########################", kWidth - filled, "", loss, acc, samples_per_s,
                step == steps_ || !tty_ ? "\n" : "");
    std::fflush(stdout);
  }

 private:
  int64_t epochs_, steps_;
  bool tty_;
};

// ---- Optimizer ---------------------------------------------------------------------------------

// `name`'s PyTorch defaults; SGD and LARS, which have no default learning rate, get 0.1 with
// momentum 0.9. lr 0 keeps the default.
OptimizerOptions optimizer_options(const std::string& name, double lr) {
  OptimizerOptions o;
  if (name == "sgd")
    o = OptimizerOptions::sgd(0.1, 0.9);
  else if (name == "adam")
    o = OptimizerOptions::adam();
  else if (name == "adamw")
    o = OptimizerOptions::adamw();
  else if (name == "adamax")
    o = OptimizerOptions::adamax();
  else if (name == "adagrad")
    o = OptimizerOptions::adagrad();
  else if (name == "adadelta")
    o = OptimizerOptions::adadelta();
  else if (name == "rmsprop")
    o = OptimizerOptions::rmsprop(1e-3);
  else if (name == "lion")
    o = OptimizerOptions::lion();
  else if (name == "lamb")
    o = OptimizerOptions::lamb(1e-2);
  else if (name == "lars")
    o = OptimizerOptions::lars(0.1);
  else
    throw_error(ErrorKind::Value, "[train] unknown --optimizer '", name,
                "'; expected sgd, adam, adamw, adamax, adagrad, adadelta, rmsprop, lion, lamb "
                "or lars");
  if (lr != 0) o.lr = lr;
  return o;
}

// ---- Checkpoints -------------------------------------------------------------------------------

void save_checkpoint(const std::string& path, const std::vector<Param>& spec,
                     const std::vector<Tensor>& params, const Optimizer& opt, const TrainOptions& o,
                     int64_t epoch) {
  std::vector<std::pair<std::string, HostTensor>> tensors;
  for (size_t i = 0; i < spec.size(); ++i) tensors.emplace_back(spec[i].name, params[i].data());
  for (auto& [name, t] : opt.state_dict()) tensors.emplace_back("optimizer." + name, t.data());
  write_safetensors(path, tensors,
                    {{"model", o.model},
                     {"optimizer", o.optimizer},
                     {"epoch", std::to_string(epoch)},
                     {"seed", std::to_string(o.seed)},
                     {"batch", std::to_string(o.batch)},
                     {"written_by", "tessel train digits"}});
}

// ---- Training ----------------------------------------------------------------------------------

double train_digits(const TrainOptions& o) {
  if (o.epochs < 1 || o.batch < 1)
    throw_error(ErrorKind::Value, "[train] --epochs and --batch must be >= 1");
  Dataset all = load_digits(o.data);
  Split split = stratified_split(all.y, 0.2, o.seed);
  Dataset train = take_rows(all, split.train), test = take_rows(all, split.test);
  std::printf(
      "digits: %lld images (%lld train, %lld test), model %s, optimizer %s, device %s, "
      "%d threads, seed %llu\n",
      static_cast<long long>(all.size()), static_cast<long long>(train.size()),
      static_cast<long long>(test.size()), o.model.c_str(), o.optimizer.c_str(), o.device.c_str(),
      num_threads(), static_cast<unsigned long long>(o.seed));

  const std::vector<Param> spec = model_params(o.model);
  std::vector<Tensor> params = init_params(spec, o.seed, o.device);
  std::vector<std::string> names;
  for (const Param& p : spec) names.push_back(p.name);
  Optimizer opt(optimizer_options(o.optimizer, o.lr), params, names);
  int64_t first_epoch = 1;
  if (!o.resume.empty()) {
    SafetensorsFile ck = read_safetensors(o.resume);
    if (ck.metadata["model"] != o.model)
      throw_error(ErrorKind::Value, "[train] checkpoint '", o.resume, "' holds model '",
                  ck.metadata["model"], "', not '", o.model, "'");
    for (size_t i = 0; i < spec.size(); ++i) params[i] = Tensor(ck.at(spec[i].name), o.device);
    opt.set_params(params);
    std::vector<std::pair<std::string, Tensor>> state;
    for (const auto& [name, t] : ck.tensors)
      if (name.rfind("optimizer.", 0) == 0)
        state.emplace_back(name.substr(10), Tensor(t, o.device));
    opt.load_state_dict(state);
    first_epoch = std::stoll(ck.metadata["epoch"]) + 1;
    std::printf("resumed from '%s' after epoch %lld\n", o.resume.c_str(),
                static_cast<long long>(first_epoch - 1));
  }

  const size_t np = spec.size();
  std::vector<int> argnums(np);
  for (size_t i = 0; i < np; ++i) argnums[i] = static_cast<int>(i);
  // (params..., x, y) -> (loss, accuracy, d loss / d params...)
  Function step_fn = value_and_grad(
      [&](const std::vector<Tensor>& a) {
        std::vector<Tensor> p(a.begin(), a.begin() + static_cast<long>(np));
        Tensor logits = forward(o.model, p, a[np]);
        Tensor loss = op("SoftmaxCrossEntropyWithLogits", {logits, a[np + 1]})[0];
        return std::vector<Tensor>{loss, accuracy(logits, a[np + 1])};
      },
      argnums);

  const int64_t n = train.size();
  const int64_t steps = (n + o.batch - 1) / o.batch;
  Progress progress(o.epochs, steps);
  double train_seconds = 0;
  for (int64_t epoch = first_epoch; epoch <= o.epochs; ++epoch) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
    std::mt19937_64 rng(o.seed * 1000003 + static_cast<uint64_t>(epoch));
    shuffle(order, rng);
    double loss_sum = 0, correct = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t lo = s * o.batch, hi = std::min(n, lo + o.batch);
      Dataset b = take_rows(train, std::span(order).subspan(lo, hi - lo));
      std::vector<Tensor> args = params;
      args.emplace_back(b.x, o.device);
      args.emplace_back(b.y, o.device);
      std::vector<Tensor> out = step_fn(args);
      std::vector<Tensor> grads(out.begin() + 2, out.end());
      opt.step(grads);
      params = opt.params();
      loss_sum += out[0].item() * static_cast<double>(hi - lo);
      correct += out[1].item() * static_cast<double>(hi - lo);
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      progress.update(epoch, s + 1, loss_sum / static_cast<double>(hi),
                      correct / static_cast<double>(hi),
                      static_cast<double>(hi) / std::max(secs, 1e-9));
    }
    train_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // Held-out accuracy, then the checkpoint round trip: the reloaded parameters must predict the
  // same logits, bit for bit.
  Function predict = compile([&](const std::vector<Tensor>& a) {
    std::vector<Tensor> p(a.begin(), a.begin() + static_cast<long>(np));
    Tensor logits = forward(o.model, p, a[np]);
    return std::vector<Tensor>{logits, accuracy(logits, a[np + 1])};
  });
  auto run_test = [&](const std::vector<Tensor>& p) {
    std::vector<Tensor> args = p;
    args.emplace_back(test.x, o.device);
    args.emplace_back(test.y, o.device);
    return predict(args);
  };
  std::vector<Tensor> result = run_test(params);
  save_checkpoint(o.checkpoint, spec, params, opt, o, o.epochs);
  SafetensorsFile ck = read_safetensors(o.checkpoint);
  std::vector<Tensor> reloaded;
  for (const Param& p : spec) reloaded.emplace_back(ck.at(p.name), o.device);
  std::vector<Tensor> again = run_test(reloaded);
  HostTensor a = result[0].data().contiguous(), b = again[0].data().contiguous();
  if (std::memcmp(a.data(), b.data(), static_cast<size_t>(a.numel()) * sizeof(float)) != 0)
    throw_error(ErrorKind::Internal, "[train] the model reloaded from '", o.checkpoint,
                "' predicts differently from the trained one");
  std::printf(
      "checkpoint: wrote '%s' (%zu tensors), reloaded: predictions identical on all %lld "
      "test images\n",
      o.checkpoint.c_str(), ck.tensors.size(), static_cast<long long>(test.size()));

  // A fingerprint of the trained parameters: equal across runs with one seed and thread count.
  uint64_t h = 1469598103934665603ull;
  for (const Tensor& p : params) {
    HostTensor c = p.data().contiguous();
    const uint8_t* bytes = c.data();
    for (int64_t i = 0; i < c.numel() * dtype_size(c.dtype); ++i)
      h = (h ^ bytes[i]) * 1099511628211ull;
  }
  const double samples = static_cast<double>(train.size() * (o.epochs - first_epoch + 1));
  std::printf("trained %.0f samples in %.4f s (%.0f samples/s)\n", samples, train_seconds,
              samples / std::max(train_seconds, 1e-9));
  std::printf("params_fnv1a=%016llx\n", static_cast<unsigned long long>(h));
  std::printf("test_accuracy=%.4f n_test=%lld seed=%llu device=%s train_seconds=%.1f\n",
              result[1].item(), static_cast<long long>(test.size()),
              static_cast<unsigned long long>(o.seed), o.device.c_str(), train_seconds);
  return result[1].item();
}

}  // namespace

int cmd_train(const std::vector<std::string>& args) {
  if (args.size() < 2 || args[1] != "digits")
    throw_error(ErrorKind::Value, "[train] usage: tessel train digits [options]; see tessel help");
  TrainOptions o;
  for (size_t i = 2; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (i + 1 >= args.size()) throw_error(ErrorKind::Value, "[train] ", a, " needs a value");
    const std::string& v = args[++i];
    auto number = [&](bool integer) {
      char* end = nullptr;
      double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !std::isfinite(x) || x < 0 ||
          (integer && x != std::floor(x)))
        throw_error(ErrorKind::Value, "[train] ", a, " needs a non-negative ",
                    integer ? "integer" : "number", ", got '", v, "'");
      return x;
    };
    if (a == "--device")
      o.device = v;
    else if (a == "--model")
      o.model = v;
    else if (a == "--optimizer")
      o.optimizer = v;
    else if (a == "--lr")
      o.lr = number(false);
    else if (a == "--epochs")
      o.epochs = static_cast<int64_t>(number(true));
    else if (a == "--batch")
      o.batch = static_cast<int64_t>(number(true));
    else if (a == "--seed")
      o.seed = static_cast<uint64_t>(number(true));
    else if (a == "--checkpoint")
      o.checkpoint = v;
    else if (a == "--resume")
      o.resume = v;
    else if (a == "--data")
      o.data = v;
    else
      throw_error(ErrorKind::Value, "[train] unknown option ", a);
  }
  train_digits(o);
  return 0;
}

}  // namespace tessel
