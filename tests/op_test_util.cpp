#include "op_test_util.h"

#include <sstream>

namespace tessel::testing {

std::vector<HostTensor> run_op(OpKind kind, const Attrs& attrs,
                               const std::vector<HostTensor>& inputs,
                               const std::string& backend_name) {
  Graph g;
  std::vector<Value> ins;
  std::vector<HostTensor> args;
  for (const HostTensor& t : inputs) {
    if (!t.storage) {
      ins.push_back(Value{});
      continue;
    }
    ins.push_back(g.input(t.dtype, t.shape));
    args.push_back(t);
  }
  g.outputs = g.add(kind, attrs, ins);
  const Backend& b = backend(backend_name);
  return compile_for(g, b)->run(args);
}

HostTensor run_op1(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& inputs,
                   const std::string& backend_name) {
  auto outs = run_op(kind, attrs, inputs, backend_name);
  EXPECT_EQ(outs.size(), 1u);
  return outs.at(0);
}

HostTensor random_tensor(DType dtype, const Shape& shape, uint64_t seed, double lo, double hi) {
  HostTensor t = HostTensor::empty(dtype, shape);
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s ^= s >> 33;
    s *= 0xff51afd7ed558ccdull;
    s ^= s >> 33;
    double u = static_cast<double>(s >> 11) / 9007199254740992.0;
    double v = lo + (hi - lo) * u;
    if (is_integer(dtype) || dtype == DType::Bool)
      t.set_i64(i, static_cast<int64_t>(std::floor(v)));
    else
      t.set_f64(i, v);
    s += 0x9e3779b97f4a7c15ull;
  }
  return t;
}

HostTensor non_contiguous(const HostTensor& t) {
  if (t.rank() < 2) {
    // Every other element of a buffer twice as long.
    HostTensor big = HostTensor::empty(t.dtype, {t.numel() * 2});
    HostTensor v = big;
    v.shape = t.shape;
    v.strides = {2};
    if (t.rank() == 0) v.strides = {};
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (is_integer(t.dtype) || t.dtype == DType::Bool)
        v.set_i64(i, t.get_i64(i));
      else
        v.set_f64(i, t.get_f64(i));
    }
    return v;
  }
  int r = t.rank();
  std::vector<int> perm(r);
  for (int i = 0; i < r; ++i) perm[i] = r - 1 - i;
  HostTensor stored = HostTensor::empty(t.dtype, t.permuted(perm).shape);
  HostTensor view = stored.permuted(perm);  // same shape as t, reversed strides
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (is_integer(t.dtype) || t.dtype == DType::Bool)
      view.set_i64(i, t.get_i64(i));
    else
      view.set_c128(i, t.get_c128(i));
  }
  return view;
}

void expect_close(const HostTensor& actual, const std::vector<double>& expected, double rtol,
                  double atol, const std::string& what) {
  ASSERT_EQ(actual.numel(), static_cast<int64_t>(expected.size())) << what;
  int reported = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    double a = actual.get_f64(i), e = expected[i];
    bool ok =
        (std::isnan(a) && std::isnan(e)) || a == e || std::abs(a - e) <= atol + rtol * std::abs(e);
    if (!ok && reported++ < 8)
      ADD_FAILURE() << what << " element " << i << ": got " << a << ", expected " << e;
  }
}

void expect_close(const HostTensor& actual, const HostTensor& expected, double rtol, double atol,
                  const std::string& what) {
  ASSERT_EQ(actual.shape, expected.shape)
      << what << " shape " << shape_str(actual.shape) << " vs " << shape_str(expected.shape);
  expect_close(actual, expected.to_f64(), rtol, atol, what);
}

}  // namespace tessel::testing

#include <fstream>

namespace tessel::testing {

nlohmann::json load_goldens(const std::string& family) {
  std::string path = std::string(TESSEL_SOURCE_DIR) + "/tests/goldens/" + family + ".json";
  std::ifstream f(path);
  if (!f.good()) throw std::runtime_error("missing golden file " + path);
  return nlohmann::json::parse(f);
}

HostTensor tensor_from_json(const nlohmann::json& j) {
  auto dtype = dtype_from_name(j.at("dtype").get<std::string>());
  if (!dtype) throw std::runtime_error("bad dtype in golden: " + j.at("dtype").dump());
  Shape shape = j.at("shape").get<Shape>();
  HostTensor t = HostTensor::empty(*dtype, shape);
  const auto& data = j.at("data");
  if (static_cast<int64_t>(data.size()) != t.numel())
    throw std::runtime_error("golden data size mismatch");
  for (int64_t i = 0; i < t.numel(); ++i) {
    const auto& v = data[i];
    if (v.is_string()) {
      std::string s = v.get<std::string>();
      t.set_f64(i, s == "nan" ? NAN : s == "inf" ? INFINITY : -INFINITY);
    } else if (v.is_boolean()) {
      t.set_i64(i, v.get<bool>());
    } else if (v.is_number_integer() && !is_inexact(*dtype)) {
      t.set_i64(i, v.get<int64_t>());
    } else {
      t.set_f64(i, v.get<double>());
    }
  }
  return t;
}

}  // namespace tessel::testing
