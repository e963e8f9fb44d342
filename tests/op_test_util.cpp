#include "op_test_util.h"

#include <sstream>

namespace tessel::testing {

std::vector<HostTensor> run_op(OpKind kind, const Attrs& attrs,
                               const std::vector<HostTensor>& inputs,
                               const std::string& backend_name, const CompileOptions& options) {
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
  return compile_for(g, backend(backend_name), options)->run(args);
}

HostTensor run_op1(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& inputs,
                   const std::string& backend_name, const CompileOptions& options) {
  auto outs = run_op(kind, attrs, inputs, backend_name, options);
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

HostTensor random_values(DType dtype, const Shape& shape, uint64_t seed, double lo, double hi) {
  if (is_integer(dtype)) {
    if (dtype == DType::U8) lo = 0, hi = 250;
    if (dtype != DType::U8) lo = -120, hi = 120;
    return cast_to(random_tensor(DType::I64, shape, seed, lo, hi), dtype);
  }
  return cast_to(random_tensor(DType::F64, shape, seed, lo, hi), dtype);
}

HostTensor non_contiguous(const HostTensor& t) {
  if (!t.storage) return t;
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

std::vector<HostTensor> non_contiguous_all(const std::vector<HostTensor>& ts) {
  std::vector<HostTensor> r;
  for (const HostTensor& t : ts) r.push_back(non_contiguous(t));
  return r;
}

HostTensor broadcast_view(const HostTensor& t, const Shape& shape) {
  HostTensor v = t;
  v.shape = shape;
  v.strides.assign(shape.size(), 0);
  size_t lead = shape.size() - t.shape.size();
  for (size_t i = 0; i < t.shape.size(); ++i)
    v.strides[lead + i] = t.shape[i] == 1 ? 0 : t.strides[i];
  return v;
}

HostTensor cast_to(const HostTensor& t, DType dtype) {
  if (!t.storage) return t;
  HostTensor out = HostTensor::empty(dtype, t.shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (is_integer(dtype))
      out.set_i64(i, t.get_i64(i));
    else
      out.set_f64(i, t.get_f64(i));
  }
  return out;
}

std::vector<TensorType> infer_types(OpKind kind, const Attrs& attrs,
                                    const std::vector<std::optional<TensorType>>& inputs) {
  Graph g;
  std::vector<Value> values;
  for (const auto& t : inputs) values.push_back(t ? g.input(t->dtype, t->shape) : Value{});
  std::vector<TensorType> types;
  for (Value v : g.add(kind, attrs, values)) types.push_back(g.type(v));
  return types;
}

TensorType infer_type(OpKind kind, const Attrs& attrs,
                      const std::vector<std::optional<TensorType>>& inputs) {
  return infer_types(kind, attrs, inputs).at(0);
}

void expect_golden_layouts(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& inputs,
                           const HostTensor& expected, double tol, const std::string& what) {
  expect_close(run_op1(kind, attrs, inputs), expected, tol, tol, what + " (contiguous)");
  const std::vector<HostTensor> strided = non_contiguous_all(inputs);
  if (!strided.empty() && strided[0].numel() > 1) {
    EXPECT_FALSE(strided[0].is_contiguous()) << what;
  }
  expect_close(run_op1(kind, attrs, strided), expected, tol, tol, what + " (non-contiguous)");
}

void expect_golden_in(DType dtype, OpKind kind, const Attrs& attrs,
                      const std::vector<HostTensor>& inputs, const HostTensor& expected,
                      double rtol, double atol, const std::string& what) {
  std::vector<HostTensor> cast;
  for (const HostTensor& t : inputs) cast.push_back(is_float(t.dtype) ? cast_to(t, dtype) : t);
  HostTensor y = run_op1(kind, attrs, cast);
  EXPECT_EQ(y.dtype, dtype) << what;
  expect_close(y, expected, rtol, atol, what + " " + dtype_name(dtype));
}

std::string error_of(const std::function<void()>& fn, ErrorKind kind) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error raised";
  return "";
}

void expect_error(ErrorKind kind, const std::function<void()>& fn, const std::string& what,
                  const std::string& needle) {
  const std::string context = what.empty() ? "" : what + ": ";
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << context << e.what();
    if (!needle.empty()) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << context << "message lacks '" << needle << "': " << e.what();
    }
    return;
  }
  ADD_FAILURE() << context << "no " << error_kind_name(kind) << " error thrown";
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

void expect_parity(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& inputs,
                   const std::string& what, const std::string& backend_name) {
  const DType dt = inputs[0].dtype;
  const Tolerance tol = kOneRounding.of(dt);
  std::vector<HostTensor> ref = run_op(kind, attrs, inputs, "reference");
  std::vector<HostTensor> got = run_op(kind, attrs, inputs, backend_name, {.checked = true});
  ASSERT_EQ(ref.size(), got.size()) << what;
  for (size_t i = 0; i < ref.size(); ++i) {
    EXPECT_EQ(got[i].dtype, dt) << what;
    expect_close(got[i], ref[i], tol.rtol, tol.atol,
                 std::string(op_name(kind)) + " " + what + " " + dtype_name(dt) + " output " +
                     std::to_string(i));
  }
}

void expect_parity_layouts(OpKind kind, const Attrs& attrs, const std::vector<HostTensor>& inputs,
                           const std::string& what, const std::string& backend_name) {
  expect_parity(kind, attrs, inputs, what, backend_name);
  expect_parity(kind, attrs, non_contiguous_all(inputs), what + " non-contiguous", backend_name);
}

}  // namespace tessel::testing

#include <fstream>
#include <map>

namespace tessel::testing {

const nlohmann::json& golden_cases_of(const std::string& family) {
  static std::map<std::string, nlohmann::json> loaded;  // never erased: references stay valid
  auto it = loaded.find(family);
  if (it == loaded.end()) {
    std::string path = std::string(TESSEL_SOURCE_DIR) + "/tests/goldens/" + family + ".json";
    std::ifstream f(path);
    if (!f.good()) throw std::runtime_error("missing golden file " + path);
    it = loaded.emplace(family, nlohmann::json::parse(f)).first;
  }
  return it->second.at("cases");
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

HostTensor optional_tensor(const nlohmann::json& c, const char* key) {
  return c.contains(key) && !c[key].is_null() ? tensor_from_json(c[key]) : HostTensor{};
}

int variant_id(VariantEnum e, const std::string& name) {
  auto v = enum_value_from_name(e, name);
  if (!v) throw std::runtime_error("unknown variant " + name);
  return *v;
}

Attrs attrs_from_json(OpKind kind, const nlohmann::json& attrs) {
  const OpInfo& info = op_info(kind);
  Attrs out;
  for (const auto& [name, v] : attrs.items()) {
    const AttrSpec* spec = info.find_attr(name);
    if (!spec) throw std::runtime_error("golden attr " + name + " not in the schema");
    switch (spec->type) {
      case AttrType::Bool:
        out.set(name, v.get<bool>());
        break;
      case AttrType::Int:
        out.set(name, v.get<int64_t>());
        break;
      case AttrType::Float:
        out.set(name, v.get<double>());
        break;
      case AttrType::Ints:
        out.set(name, v.get<std::vector<int64_t>>());
        break;
      case AttrType::Floats:
        out.set(name, v.get<std::vector<double>>());
        break;
      case AttrType::String:
        out.set(name, v.get<std::string>());
        break;
      case AttrType::DType: {
        auto t = dtype_from_name(v.get<std::string>());
        if (!t) throw std::runtime_error("bad dtype in golden: " + v.dump());
        out.set(name, *t);
        break;
      }
      case AttrType::Enum: {
        auto e = enum_value_from_name(spec->enum_type, v.get<std::string>());
        if (!e) throw std::runtime_error("bad enum value in golden: " + v.dump());
        out.set(name, static_cast<int64_t>(*e));
        break;
      }
      case AttrType::Graph:
        throw std::runtime_error("unexpected attr type in golden: " + name);
    }
  }
  return out;
}

}  // namespace tessel::testing
