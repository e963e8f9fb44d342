// Gradient checks shared by the autodiff tests: a problem is y = f(inputs) reduced to the loss
// Σ y·w for a fixed random w (so every element of y has its own cotangent), and the analytic
// gradients of grad_graph are compared with central finite differences in f64 on the reference.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/builder.h"

namespace tessel::testing {

// Builds y = f(inputs) into a graph.
using Body = std::function<Value(GraphBuilder& b, const std::vector<Value>& in)>;

struct Problem {
  Graph g;  // inputs, then loss as output 0
  std::vector<HostTensor> args;
};

// The problem's graph: one input per arg, `body`, and the loss Σ y·w with w random from `seed`.
Problem make_problem(const std::vector<HostTensor>& args, const Body& body, uint64_t seed);

// Analytic gradients (grad_graph on the reference) against central differences, for the inputs
// in `wrt` (default: every float input); the same gradient graph run on cpu must agree with the
// reference's.
void expect_gradients(const std::vector<HostTensor>& args, const Body& body,
                      const std::string& what, std::vector<int> wrt = {}, double tol = 1e-6,
                      double step = 1e-6);

// f64 test data in [lo, hi).
HostTensor rnd(const Shape& s, uint64_t seed, double lo = -1, double hi = 1);

}  // namespace tessel::testing
