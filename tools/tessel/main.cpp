// The `tessel` command line.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "passes/passes.h"
#include "runtime/backend.h"
#include "runtime/coverage.h"

namespace {

using namespace tessel;

int usage() {
  std::cerr << "usage: tessel [demo]                  run a small built-in graph on every backend\n"
               "       tessel ops [--json]            the op table\n"
               "       tessel coverage [--markdown|--json]\n"
               "                                      the coverage matrix (markdown by default)\n"
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

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty() || args[0] == "demo") return cmd_demo();
    if (args[0] == "version") {
      std::cout << "tessel " << TESSEL_VERSION << '\n';
      return 0;
    }
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
