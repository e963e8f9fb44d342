// Tessel's gradients against PyTorch 1.13 autograd (tests/goldens/gen_grad_goldens.py, float64):
// the norms, attention and the losses, each case's gradient graph run on the reference and on cpu.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "op_test_util.h"
#include "passes/passes.h"

namespace tessel::testing {
namespace {

TEST(GradGoldens, NormsAttentionLossesMatchPyTorch) {
  std::map<std::string, int> per_op;
  for (const auto& c : golden_cases_of("grad_norm_attention_losses")) {
    const std::string op = c.at("op");
    const OpKind kind = op_from_name(op).value();
    const Attrs attrs = attrs_from_json(kind, c.at("attrs"));
    const std::string what = op + " " + c.at("attrs").dump();
    SCOPED_TRACE(what);
    // Present inputs become graph inputs, in order; absent ones stay absent.
    Graph g;
    GraphBuilder b(g);
    std::vector<Value> ins;
    std::vector<HostTensor> args;
    std::vector<int> graph_input(c.at("inputs").size(), -1);
    for (size_t i = 0; i < c.at("inputs").size(); ++i) {
      const auto& t = c.at("inputs")[i];
      if (t.is_null()) {
        ins.push_back(Value{});
        continue;
      }
      args.push_back(tensor_from_json(t));
      graph_input[i] = static_cast<int>(args.size()) - 1;
      ins.push_back(g.input(args.back().dtype, args.back().shape));
    }
    Value y = b.op1(kind, attrs, ins);
    g.outputs = {b.sum(b.mul(y, g.constant(tensor_from_json(c.at("cotangent")))), {})};
    std::vector<int> wrt;
    for (int i : c.at("wrt")) wrt.push_back(graph_input.at(i));
    const Graph gg = grad_graph(g, wrt);
    for (const char* be : {"reference", "cpu"}) {
      std::vector<HostTensor> out = compile_for(gg, backend(be))->run(args);
      for (size_t k = 0; k < wrt.size(); ++k)
        expect_close(
            out[1 + k], tensor_from_json(c.at("grads")[k]), 1e-9, 1e-10,
            what + " on " + be + ", d/d input " + std::to_string(c.at("wrt")[k].get<int>()));
    }
    ++per_op[op];
  }
  // Every family the generator writes is here.
  for (const char* op : {"LayerNorm", "RmsNorm", "GroupNorm", "BatchNormInference", "Attention",
                         "Loss", "SoftmaxCrossEntropyWithLogits", "SoftmaxCrossEntropy"})
    EXPECT_GT(per_op[op], 0) << op;
}

}  // namespace
}  // namespace tessel::testing
