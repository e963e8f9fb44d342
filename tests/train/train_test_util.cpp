#include "train/train_test_util.h"

#include <cmath>

namespace tessel::testing {

const MlpData& mlp_data() {
  static const MlpData data = [] {
    const nlohmann::json& c = optimizer_case("data");
    MlpData d;
    d.x = tensor_from_json(c["x"]);
    d.y = tensor_from_json(c["y"]);
    for (const auto& t : c["init"]) d.init.push_back(tensor_from_json(t));
    return d;
  }();
  return data;
}

const nlohmann::json& optimizer_case(const std::string& name) {
  for (const auto& c : golden_cases_of("optimizers"))
    if (c["name"] == name) return c;
  throw std::runtime_error("no golden case " + name + " in optimizers.json");
}

Tensor on_device(const HostTensor& t, const std::string& device, DType dtype) {
  return Tensor(cast_to(t, dtype), device);
}

Function mlp_value_and_grad() {
  return value_and_grad(
      [](const std::vector<Tensor>& a) {
        Tensor h = tanh(linear(a[4], a[0], a[1]));
        Tensor d = linear(h, a[2], a[3]) - a[5];
        return std::vector<Tensor>{mean(d * d)};
      },
      {0, 1, 2, 3});
}

double mlp_loss_and_grads_f64(const std::vector<std::vector<double>>& p,
                              std::vector<std::vector<double>>& grads) {
  const MlpData& data = mlp_data();
  std::vector<double> x = data.x.to_f64(), y = data.y.to_f64();
  const int n = 32, in = 8, hid = 16, out = 4;
  const auto &w1 = p[0], &b1 = p[1], &w2 = p[2], &b2 = p[3];
  grads = {std::vector<double>(in * hid), std::vector<double>(hid), std::vector<double>(hid * out),
           std::vector<double>(out)};
  double loss = 0;
  for (int r = 0; r < n; ++r) {
    std::vector<double> h(hid), dh(hid, 0);
    for (int j = 0; j < hid; ++j) {
      double z = b1[j];
      for (int i = 0; i < in; ++i) z += x[r * in + i] * w1[i * hid + j];
      h[j] = std::tanh(z);
    }
    for (int k = 0; k < out; ++k) {
      double o = b2[k];
      for (int j = 0; j < hid; ++j) o += h[j] * w2[j * out + k];
      double diff = o - y[r * out + k];
      loss += diff * diff / (n * out);
      double dout = 2 * diff / (n * out);
      grads[3][k] += dout;
      for (int j = 0; j < hid; ++j) {
        grads[2][j * out + k] += h[j] * dout;
        dh[j] += w2[j * out + k] * dout;
      }
    }
    for (int j = 0; j < hid; ++j) {
      double dz = dh[j] * (1 - h[j] * h[j]);
      grads[1][j] += dz;
      for (int i = 0; i < in; ++i) grads[0][i * hid + j] += x[r * in + i] * dz;
    }
  }
  return loss;
}

}  // namespace tessel::testing
