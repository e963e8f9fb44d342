#include "autodiff/gradient_check.h"

#include <gtest/gtest.h>

#include "op_test_util.h"
#include "passes/passes.h"

namespace tessel::testing {
namespace {

double loss_at(Executable& exe, const std::vector<HostTensor>& args) {
  return exe.run(args)[0].get_f64(0);
}

}  // namespace

Problem make_problem(const std::vector<HostTensor>& args, const Body& body, uint64_t seed) {
  Problem p;
  GraphBuilder b(p.g);
  std::vector<Value> in;
  for (const HostTensor& a : args) in.push_back(p.g.input(a.dtype, a.shape));
  Value y = body(b, in);
  const TensorType& t = p.g.type(y);
  Value w = p.g.constant(random_tensor(t.dtype, t.shape, seed, -1, 1));
  p.g.outputs = {b.sum(b.mul(y, w), {})};
  p.args = args;
  return p;
}

void expect_gradients(const std::vector<HostTensor>& args, const Body& body,
                      const std::string& what, std::vector<int> wrt, double tol, double step) {
  SCOPED_TRACE(what);
  Problem p = make_problem(args, body, 77);
  if (wrt.empty())
    for (int i = 0; i < static_cast<int>(args.size()); ++i)
      if (is_float(args[i].dtype)) wrt.push_back(i);
  const Backend& ref = backend("reference");
  const Graph gg = grad_graph(p.g, wrt);
  std::vector<HostTensor> grads = compile_for(gg, ref)->run(p.args);
  // The same gradient graph legalizes and runs on cpu (f64) and agrees with the reference.
  std::vector<HostTensor> on_cpu = compile_for(gg, backend("cpu"))->run(p.args);
  for (size_t k = 0; k < wrt.size(); ++k)
    expect_close(on_cpu[1 + k], grads[1 + k], 1e-9, 1e-12,
                 what + ", cpu vs reference, d/d input " + std::to_string(wrt[k]));
  auto fwd = compile_for(p.g, ref);
  for (size_t k = 0; k < wrt.size(); ++k) {
    const int i = wrt[k];
    HostTensor x = p.args[i].contiguous();
    std::vector<HostTensor> probe = p.args;
    probe[i] = x;
    HostTensor numeric = HostTensor::empty(DType::F64, x.shape);
    for (int64_t j = 0; j < x.numel(); ++j) {
      const double x0 = x.get_f64(j);
      x.set_f64(j, x0 + step);
      const double up = loss_at(*fwd, probe);
      x.set_f64(j, x0 - step);
      const double down = loss_at(*fwd, probe);
      x.set_f64(j, x0);
      numeric.set_f64(j, (up - down) / (2 * step));
    }
    ASSERT_EQ(grads[1 + k].shape, x.shape) << "input " << i;
    expect_close(grads[1 + k], numeric, tol, tol, what + ", d/d input " + std::to_string(i));
  }
}

HostTensor rnd(const Shape& s, uint64_t seed, double lo, double hi) {
  return random_tensor(DType::F64, s, seed, lo, hi);
}

}  // namespace tessel::testing
