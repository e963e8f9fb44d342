// The `tessel` command line.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli_args.h"
#include "ir/builder.h"
#include "parity/parity.h"
#include "passes/passes.h"
#include "runtime/backend.h"
#include "runtime/coverage.h"

namespace tessel {
int cmd_profile(const std::vector<std::string>& args);    // profile.cpp
int cmd_train(const std::vector<std::string>& args);      // train.cpp
int cmd_onnx_test(const std::vector<std::string>& args);  // onnx_test.cpp
int cmd_run(const std::vector<std::string>& args);        // onnx_run.cpp
}  // namespace tessel

namespace {

using namespace tessel;

int usage() {
  std::cerr << "usage: tessel [demo]                  run a small built-in graph on every backend\n"
               "       tessel ops [--json]            the op table\n"
               "       tessel coverage [--markdown|--json]\n"
               "                                      the coverage matrix (markdown by default)\n"
               "       tessel parity [--backend B] [--op KIND[,KIND]] [--dtype DT[,DT]]\n"
               "                     [--seed N] [--cases N] [--exhaustive] [--json] [--verbose]\n"
               "                                      prove backend B's claimed cells against\n"
               "                                      the reference (exit 1 on any failure)\n"
               "       tessel profile [--backend B] [--runs N] [--small] [--json]\n"
               "                                      per-op time and memory of a built-in\n"
               "                                      transformer MLP block (default cpu)\n"
               "       tessel train digits [--device cpu|reference] [--model mlp|cnn]\n"
               "                     [--optimizer adam|sgd|adamw|...] [--lr X] [--epochs N]\n"
               "                     [--batch N] [--seed N] [--checkpoint PATH] [--resume PATH]\n"
               "                                      train on sklearn's handwritten digits and\n"
               "                                      report held-out accuracy (the main job)\n"
               "       tessel run MODEL.onnx [INPUT_FILE...] [--input NAME=FILE] [--dim NAME=N]\n"
               "                     [--seed N] [--device D] [--threads N] [--repeat N]\n"
               "                     [--compare-reference] [--profile TRACE.json]\n"
               "                     [--save-outputs DIR]\n"
               "                                      run an ONNX model (tessel run --help)\n"
               "       tessel onnx-test [--device D[,D]] [--filter S] [--markdown FILE]\n"
               "                     [--baseline FILE] [--verbose] SUITE_DIR...\n"
               "                                      run ONNX backend-test cases and compare\n"
               "                                      with their expected outputs\n"
               "       tessel version\n";
  return 2;
}

int cmd_ops(bool json) {
  if (json) {
    std::cout << ops_json();
    return 0;
  }
  int ready = 0, pending = 0;
  for (const OpInfo& op : all_ops()) {
    std::printf("%-32s %-28s %-8s %s\n", op.name.c_str(), category_name(op.category),
                op.status == OpStatus::Ready ? "ready" : "pending", op.signature.c_str());
    (op.status == OpStatus::Ready ? ready : pending)++;
  }
  std::printf("%zu kinds: %d ready, %d pending\n", all_ops().size(), ready, pending);
  return 0;
}

// A small MLP block: y = softmax(gelu(layer_norm(x) · W + b)), on every backend.
int cmd_demo() {
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F32, {2, 4}, "x");
  Value w = g.param(DType::F32, {4, 3}, "w");
  Value bias = g.param(DType::F32, {3}, "b");
  Value h = b.layer_norm(x, Value{}, Value{}, -1, 1e-5);
  Value z = b.activation(ActivationKind::Gelu, b.add(b.matmul(h, w), bias));
  g.outputs = {b.softmax(z, -1)};

  HostTensor xs = HostTensor::from_vector<float>(DType::F32, {2, 4}, {1, 2, 3, 4, -1, 0, 1, 0.5});
  HostTensor ws = HostTensor::from_vector<float>(
      DType::F32, {4, 3}, {0.1f, -0.2f, 0.3f, 0.4f, 0.5f, -0.6f, 0.7f, 0.8f, 0.9f, -1, 1, 0});
  HostTensor bs = HostTensor::from_vector<float>(DType::F32, {3}, {0.0f, 0.1f, -0.1f});
  std::cout << "graph:\n" << g.to_string() << '\n';
  for (const Backend* be : backends()) {
    std::vector<HostTensor> out = compile_for(g, *be)->run(std::vector<HostTensor>{xs, ws, bs});
    std::cout << "backend " << be->name() << ": y = [";
    for (int64_t i = 0; i < out[0].numel(); ++i)
      std::printf("%s%.6f", i ? ", " : "", out[0].get_f64(i));
    std::cout << "]\n";
  }
  std::string md = coverage_markdown();
  std::cout << '\n'
            << md.substr(md.find("## Summary"), md.find("## Seed 000") - md.find("## Summary"));
  return 0;
}

int cmd_parity(const std::vector<std::string>& args) {
  parity::Options opt;
  bool json = false, verbose = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw_error(ErrorKind::Value, "[parity] ", a, " needs a value");
      return args[++i];
    };
    if (a == "--backend") {
      opt.backend = value();
    } else if (a == "--op") {
      for (const std::string& name : split_list(value())) {
        auto k = op_from_name(name);
        if (!k) throw_error(ErrorKind::Value, "[parity] unknown op kind ", name);
        opt.kinds.push_back(*k);
      }
    } else if (a == "--dtype") {
      for (const std::string& name : split_list(value())) {
        auto d = dtype_from_name(name);
        if (!d) throw_error(ErrorKind::Value, "[parity] unknown dtype ", name);
        opt.dtypes.push_back(*d);
      }
    } else if (a == "--seed") {
      opt.seed = static_cast<uint64_t>(parse_count("parity", a, value()));
    } else if (a == "--cases") {
      opt.cases = static_cast<int>(parse_count("parity", a, value()));
    } else if (a == "--exhaustive") {
      opt.exhaustive = true;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--verbose") {
      verbose = true;
    } else {
      return usage();
    }
  }
  parity::Report report = parity::run(opt);
  std::cout << (json ? parity::report_json(report) : parity::report_text(report, verbose));
  return report.ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty() || args[0] == "demo") return cmd_demo();
    if (args[0] == "version") {
      std::cout << "tessel " << TESSEL_VERSION << '\n';
      return 0;
    }
    if (args[0] == "parity") return cmd_parity(args);
    if (args[0] == "profile") return cmd_profile(args);
    if (args[0] == "train") return cmd_train(args);
    if (args[0] == "onnx-test") return cmd_onnx_test(args);
    if (args[0] == "run") return cmd_run(args);
    if (args[0] == "ops") return cmd_ops(args.size() > 1 && args[1] == "--json");
    if (args[0] == "coverage") {
      if (args.size() > 1 && args[1] == "--json")
        std::cout << coverage_json();
      else if (args.size() == 1 || args[1] == "--markdown")
        std::cout << coverage_markdown();
      else
        return usage();
      return 0;
    }
    return usage();
  } catch (const tessel::Error& e) {
    std::cerr << "tessel: " << error_kind_name(e.kind()) << " error: " << e.what() << '\n';
    return 1;
  }
}
