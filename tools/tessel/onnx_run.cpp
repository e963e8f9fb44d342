// `tessel run MODEL.onnx`: runs an ONNX model on a device with inputs from .npy / .pb files or
// random ones (seeded); reports the outputs, the median latency of --repeat runs, the largest
// difference from the reference backend (--compare-reference), and per-op timings as a Chrome
// trace (--profile, opens in Perfetto).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <random>

#include "api/lazy.h"
#include "cli_args.h"
#include "runtime/profile.h"
#include "runtime/thread_pool.h"
#include "tessel/npy.h"
#include "tessel/onnx.h"

namespace tessel {

namespace {

constexpr const char* kUsage =
    "usage: tessel run MODEL.onnx [INPUT_FILE...] [--input NAME=FILE] [--dim NAME=SIZE]\n"
    "                  [--seed N] [--device D] [--threads N] [--repeat N]\n"
    "                  [--compare-reference] [--profile TRACE.json] [--save-outputs DIR]\n"
    "  Inputs: .npy or .pb (TensorProto) files, by position or by name; inputs without a file\n"
    "  are random (uniform in [-1, 1), integers in [0, 10)) with --seed (default 0), their\n"
    "  dynamic dimensions from --dim (default 1).\n";

struct RunArgs {
  std::string model;
  std::vector<std::string> positional;
  std::map<std::string, std::string> named;
  std::map<std::string, int64_t> dims;
  uint64_t seed = 0;
  std::string device = "cpu";
  int threads = 0, repeat = 1;
  bool compare_reference = false;
  std::string profile, save_outputs;
};

std::pair<std::string, std::string> split_eq(const std::string& flag, const std::string& v) {
  size_t eq = v.find('=');
  if (eq == std::string::npos || eq == 0)
    throw_error(ErrorKind::Value, "[run] ", flag, " takes NAME=VALUE, got '", v, "'");
  return {v.substr(0, eq), v.substr(eq + 1)};
}

RunArgs parse_args(const std::vector<std::string>& args) {
  RunArgs r;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw_error(ErrorKind::Value, "[run] ", a, " needs a value");
      return args[++i];
    };
    if (a == "--input")
      r.named.insert(split_eq(a, value()));
    else if (a == "--dim") {
      auto [k, v] = split_eq(a, value());
      r.dims[k] = parse_count("run", a, v);
    } else if (a == "--seed")
      r.seed = static_cast<uint64_t>(parse_count("run", a, value()));
    else if (a == "--device")
      r.device = value();
    else if (a == "--threads")
      r.threads = static_cast<int>(parse_count("run", a, value()));
    else if (a == "--repeat")
      r.repeat = static_cast<int>(std::max<int64_t>(1, parse_count("run", a, value())));
    else if (a == "--compare-reference")
      r.compare_reference = true;
    else if (a == "--profile")
      r.profile = value();
    else if (a == "--save-outputs")
      r.save_outputs = value();
    else if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      std::exit(0);
    } else if (!a.empty() && a[0] == '-') {
      throw_error(ErrorKind::Value, "[run] unknown option ", a, "\n", kUsage);
    } else if (r.model.empty())
      r.model = a;
    else
      r.positional.push_back(a);
  }
  if (r.model.empty()) throw_error(ErrorKind::Value, "[run] name a model\n", kUsage);
  return r;
}

HostTensor read_input_file(const std::string& path) {
  if (path.size() >= 4 && path.substr(path.size() - 4) == ".npy") return read_npy(path);
  onnx::Value v = onnx::read_value_pb(path, "tensor", "reference");
  if (!v.is_tensor()) throw_error(ErrorKind::Unsupported, "[run] ", path, " holds a string tensor");
  return v.tensor.data();
}

HostTensor random_input(const onnx::ValueInfo& info, const RunArgs& r, std::mt19937_64& rng) {
  if (!info.dtype)
    throw_error(ErrorKind::Unsupported, "[run] input '", info.name, "' is ", info.type,
                "; give it a file with --input");
  Shape shape;
  for (size_t d = 0; d < info.dims.size(); ++d) {
    if (info.dims[d] >= 0) {
      shape.push_back(info.dims[d]);
      continue;
    }
    auto it = r.dims.find(info.dim_names[d]);
    shape.push_back(it != r.dims.end() ? it->second : 1);
  }
  HostTensor t = HostTensor::empty(*info.dtype, shape);
  std::uniform_real_distribution<double> uni(-1, 1);
  std::uniform_int_distribution<int64_t> ints(0, 9);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (is_float(*info.dtype))
      t.set_f64(i, uni(rng));
    else if (*info.dtype == DType::Bool)
      t.set_i64(i, ints(rng) & 1);
    else
      t.set_i64(i, ints(rng));
  }
  return t;
}

std::vector<onnx::Value> on_device(const std::vector<HostTensor>& host, const std::string& device) {
  std::vector<onnx::Value> v;
  for (const HostTensor& h : host) v.emplace_back(Tensor(h, device));
  return v;
}

// A Chrome trace (the JSON array form Perfetto and chrome://tracing open): one complete event
// per op of the compiled graph, laid end to end at their mean durations.
void write_trace(const std::string& path, const ProfileReport& rep, const std::string& model) {
  std::ofstream f(path);
  f << "{\"traceEvents\": [\n";
  f << "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": {\"name\": \"tessel "
    << rep.backend << ": " << model << "\"}}";
  double t = 0;
  for (const OpProfile& op : rep.ops) {
    std::string what;
    for (char c : op.what) {
      if (c == '"' || c == '\\') what += '\\';
      what += c;
    }
    const double us = op.seconds * 1e6;
    f << ",\n{\"name\": \"" << op_name(op.kind)
      << "\", \"cat\": \"op\", \"ph\": \"X\", \"pid\": 1, "
      << "\"tid\": 1, \"ts\": " << t << ", \"dur\": " << us << ", \"args\": {\"node\": " << op.node
      << ", \"op\": \"" << what << "\"}}";
    t += us;
  }
  f << "\n], \"displayTimeUnit\": \"ms\"}\n";
  if (!f) throw_error(ErrorKind::Io, "[run] cannot write ", path);
}

void print_value(const std::string& name, const onnx::Value& v) {
  std::cout << "  " << name << ": " << v.describe();
  if (v.is_tensor() && is_float(v.tensor.dtype())) {
    std::vector<double> x = v.tensor.to_f64();
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    for (double e : x) lo = std::min(lo, e), hi = std::max(hi, e), sum += e;
    if (!x.empty())
      std::printf("  min %.6g  max %.6g  mean %.6g", lo, hi, sum / static_cast<double>(x.size()));
  }
  std::cout << '\n';
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  const RunArgs r = parse_args(args);
  if (r.threads > 0) set_num_threads(r.threads);
  onnx::Model model = onnx::Model::load(r.model);
  std::printf("%s: ir_version %lld, opset %d, %d nodes\n", r.model.c_str(),
              static_cast<long long>(model.ir_version()), model.opset(), model.num_nodes());

  std::vector<HostTensor> inputs;
  std::mt19937_64 rng(r.seed);
  for (size_t i = 0; i < model.inputs().size(); ++i) {
    const onnx::ValueInfo& info = model.inputs()[i];
    auto it = r.named.find(info.name);
    if (it != r.named.end())
      inputs.push_back(read_input_file(it->second));
    else if (i < r.positional.size())
      inputs.push_back(read_input_file(r.positional[i]));
    else
      inputs.push_back(random_input(info, r, rng));
    std::printf("input %s: %s%s\n", info.name.c_str(), dtype_name(inputs.back().dtype),
                shape_str(inputs.back().shape).c_str());
  }
  for (const auto& [name, file] : r.named) {
    bool known = false;
    for (const auto& info : model.inputs()) known |= info.name == name;
    if (!known) throw_error(ErrorKind::Value, "[run] the model has no input '", name, "'");
  }

  std::vector<onnx::Value> outs;
  std::vector<double> seconds;
  // With --repeat, one untimed warm-up run compiles the graph first.
  if (r.repeat > 1) model.run(on_device(inputs, r.device), onnx::RunOptions{r.device});
  for (int k = 0; k < r.repeat; ++k) {
    auto t0 = std::chrono::steady_clock::now();
    outs = model.run(on_device(inputs, r.device), onnx::RunOptions{r.device});
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  std::printf("device %s, %d thread%s: median latency %.3f ms over %d run%s (%s)\n",
              r.device.c_str(), num_threads(), num_threads() == 1 ? "" : "s",
              seconds[seconds.size() / 2] * 1e3, r.repeat, r.repeat == 1 ? "" : "s",
              r.repeat == 1 ? "includes compiling" : "after a warm-up run that compiled");
  std::cout << "outputs:\n";
  for (size_t i = 0; i < outs.size(); ++i) print_value(model.outputs()[i].name, outs[i]);

  if (r.compare_reference) {
    std::vector<onnx::Value> ref =
        model.run(on_device(inputs, "reference"), onnx::RunOptions{"reference"});
    std::cout << "compared with the reference backend:\n";
    for (size_t i = 0; i < outs.size(); ++i) {
      if (!outs[i].is_tensor() || !ref[i].is_tensor()) continue;
      std::vector<double> a = outs[i].tensor.to_f64(), b = ref[i].tensor.to_f64();
      double worst = 0, scale = 0;
      for (size_t k = 0; k < a.size(); ++k) {
        const double d = std::abs(a[k] - b[k]);
        if (!(d <= worst)) worst = d;  // NaN propagates
        scale = std::max(scale, std::abs(b[k]));
      }
      std::printf("  %s: max |%s - reference| = %.3g (max |reference| %.3g)\n",
                  model.outputs()[i].name.c_str(), r.device.c_str(), worst, scale);
    }
  }
  if (!r.save_outputs.empty()) {
    for (size_t i = 0; i < outs.size(); ++i) {
      if (!outs[i].is_tensor()) continue;
      std::string path = r.save_outputs + "/output_" + std::to_string(i) + ".npy";
      write_npy(path, outs[i].tensor.data());
      std::printf("wrote %s\n", path.c_str());
    }
  }
  if (!r.profile.empty()) {
    // Profile the graph the outputs come from: interpret once more without evaluating, lower
    // the lazy outputs to one graph with the model's inputs as its inputs and the weights as
    // constants (as a traced run compiles it), and time each op of its compiled form.
    onnx::RunOptions lazy{r.device, /*evaluate=*/false};
    std::vector<onnx::Value> bound = on_device(inputs, r.device);
    std::vector<onnx::Value> pending = model.run(bound, lazy);
    std::vector<Tensor> placeholders;
    std::vector<HostTensor> args;
    for (const auto& v : bound)
      if (v.is_tensor()) {
        placeholders.push_back(v.tensor);
        args.push_back(v.tensor.data());
      }
    std::vector<Tensor> targets;
    for (const auto& v : pending)
      if (v.is_tensor() && !v.tensor.is_evaluated()) targets.push_back(v.tensor);
    if (targets.empty()) {
      std::cout << "profile: every output was computed while interpreting; nothing to profile\n";
    } else {
      detail::Lowered lowered =
          detail::lower(targets, /*captured_as_constants=*/true, placeholders);
      ProfileReport rep = profile(lowered.graph, backend(r.device), args, std::max(r.repeat, 3));
      write_trace(r.profile, rep, r.model);
      std::printf("profile: %zu ops, %.3f ms per run; trace written to %s\n", rep.ops.size(),
                  rep.seconds_per_run * 1e3, r.profile.c_str());
    }
  }
  return 0;
}

}  // namespace tessel
