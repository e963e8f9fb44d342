// `tessel profile`: runs a built-in transformer MLP block through the standard pipeline on a
// backend and reports per-op time and memory (src/runtime/profile.h).
#include "runtime/profile.h"

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "runtime/rng.h"

namespace tessel {

namespace {

HostTensor random_input(DType dt, const Shape& shape, uint64_t seed, double scale) {
  HostTensor t = HostTensor::empty(dt, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, scale * (2 * rng::uniform(seed, i) - 1));
  return t;
}

}  // namespace

// y = softmax(x + W2·gelu(W1·layer_norm(x) + b1) + b2), x [batch, seq, dim].
int cmd_profile(const std::vector<std::string>& args) {
  std::string backend_name = "cpu";
  int runs = 10;
  bool json = false;
  int64_t batch = 8, seq = 128, dim = 512, hidden = 2048;
  for (size_t i = 1; i < args.size(); ++i) {
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size())
        throw_error(ErrorKind::Value, "[profile] ", args[i], " needs a value");
      return args[++i];
    };
    if (args[i] == "--backend") {
      backend_name = value();
    } else if (args[i] == "--runs") {
      runs = std::stoi(value());
    } else if (args[i] == "--json") {
      json = true;
    } else if (args[i] == "--small") {
      batch = 2, seq = 16, dim = 64, hidden = 256;
    } else {
      throw_error(ErrorKind::Value, "[profile] unknown argument ", args[i],
                  "; usage: tessel profile [--backend B] [--runs N] [--small] [--json]");
    }
  }
  Graph g;
  GraphBuilder b(g);
  Value x = g.input(DType::F32, {batch, seq, dim}, "x");
  Value w1 = g.param(DType::F32, {dim, hidden}, "w1");
  Value b1 = g.param(DType::F32, {hidden}, "b1");
  Value w2 = g.param(DType::F32, {hidden, dim}, "w2");
  Value b2 = g.param(DType::F32, {dim}, "b2");
  Value h = b.layer_norm(x, Value{}, Value{}, -1, 1e-5);
  Value u = b.activation(ActivationKind::Gelu, b.add(b.matmul(h, w1), b1));
  Value y = b.add(x, b.add(b.matmul(u, w2), b2));
  g.outputs = {b.softmax(y, -1)};
  std::vector<HostTensor> inputs = {
      random_input(DType::F32, {batch, seq, dim}, 1, 1.0),
      random_input(DType::F32, {dim, hidden}, 2, 1.0 / std::sqrt(double(dim))),
      random_input(DType::F32, {hidden}, 3, 0.1),
      random_input(DType::F32, {hidden, dim}, 4, 1.0 / std::sqrt(double(hidden))),
      random_input(DType::F32, {dim}, 5, 0.1)};
  ProfileReport r = profile(g, backend(backend_name), inputs, runs);
  std::cout << (json ? profile_json(r) : profile_text(r));
  return 0;
}

}  // namespace tessel
