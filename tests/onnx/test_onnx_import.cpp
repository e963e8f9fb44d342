// The ONNX importer's model-level behaviour: running a model, dynamic dimensions, functions,
// external data, and clear errors for every kind of bad input (never a crash or a huge
// allocation).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "onnx_test_util.h"
#include "op_test_util.h"
#include "tessel/onnx.h"

namespace tessel::testing {
namespace {

using onnx::Model;
using onnx::Value;

// y = relu(x + w), x: f32[N, 3] (N symbolic), w an initializer.
pb::ModelProto add_relu_model() {
  pb::ModelProto m = model();
  auto* g = m.mutable_graph();
  *g->add_input() = tensor_info("x", pb::TensorProto::FLOAT, {-1, 3}, {"N"});
  *g->add_output() = tensor_info("y", pb::TensorProto::FLOAT, {-1, 3}, {"N"});
  *g->add_initializer() = float_tensor("w", {3}, {1, -2, 0.5});
  *g->add_node() = node("Add", {"x", "w"}, {"s"}, "add");
  *g->add_node() = node("Relu", {"s"}, {"y"}, "relu");
  return m;
}

TEST(OnnxImport, RunsAModelAndBindsDynamicDimensionsPerCall) {
  Model m = Model::parse(bytes_of(add_relu_model()));
  ASSERT_EQ(m.inputs().size(), 1u);  // the initializer is not an input
  EXPECT_EQ(m.inputs()[0].dims, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(m.inputs()[0].dim_names[0], "N");
  for (int64_t n : {1, 4}) {
    std::vector<float> xs;
    for (int64_t i = 0; i < n * 3; ++i) xs.push_back(static_cast<float>(i) - 2);
    Tensor x = Tensor::from_vector(xs, {n, 3}, DType::F32, "cpu");
    std::vector<Value> out = m.run({Value(x)});
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].tensor.shape(), (Shape{n, 3}));
    std::vector<double> y = out[0].tensor.to_f64();
    const float w[3] = {1, -2, 0.5};
    for (int64_t i = 0; i < n * 3; ++i) EXPECT_FLOAT_EQ(y[i], std::max(0.0f, xs[i] + w[i % 3]));
  }
}

// Runs after the first of an input signature replay a traced graph: new input values must be
// bound each time (a trace that captured the first run's input would repeat its answer).
TEST(OnnxImport, RepeatedRunsOfOneSignatureBindEachRunsInputs) {
  Model m = Model::parse(bytes_of(add_relu_model()));
  const float w[3] = {1, -2, 0.5};
  for (int run = 0; run < 4; ++run) {
    std::vector<float> xs;
    for (int i = 0; i < 6; ++i) xs.push_back(static_cast<float>(i * (run + 1)) - 3);
    Tensor x = Tensor::from_vector(xs, {2, 3}, DType::F32, "cpu");
    std::vector<double> y = m.run({Value(x)})[0].tensor.to_f64();
    for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(y[i], std::max(0.0f, xs[i] + w[i % 3])) << run;
  }
}

// A model whose interpretation reads input values on the host (Reshape's target shape, NonZero's
// count) cannot be replayed from a trace: each run must see its own values, though the input
// signature is the same.
TEST(OnnxImport, DataDependentShapesAreRecomputedEveryRun) {
  pb::ModelProto p = model();
  auto* g = p.mutable_graph();
  *g->add_input() = tensor_info("x", pb::TensorProto::FLOAT, {6});
  *g->add_input() = tensor_info("s", pb::TensorProto::INT64, {2});
  *g->add_output() = tensor_info("y", pb::TensorProto::FLOAT, {-1, -1});
  *g->add_output() = tensor_info("nz", pb::TensorProto::INT64, {1, -1});
  *g->add_node() = node("Reshape", {"x", "s"}, {"y"});
  *g->add_node() = node("NonZero", {"x"}, {"nz"});
  Model m = Model::parse(bytes_of(p));
  const std::vector<std::vector<int64_t>> shapes = {{2, 3}, {3, 2}, {1, 6}, {2, 3}};
  for (size_t run = 0; run < shapes.size(); ++run) {
    std::vector<float> xs(6, 0.0f);
    for (size_t i = 0; i <= run; ++i) xs[i] = 1.0f + static_cast<float>(i);
    Tensor x = Tensor::from_vector(xs, {6}, DType::F32, "cpu");
    Tensor s = Tensor::from_vector(shapes[run], {2}, DType::I64, "cpu");
    std::vector<Value> out = m.run(std::vector<Value>{Value(x), Value(s)});
    EXPECT_EQ(out[0].tensor.shape(), (Shape{shapes[run][0], shapes[run][1]})) << run;
    EXPECT_EQ(out[0].tensor.to_f64(), std::vector<double>(xs.begin(), xs.end())) << run;
    ASSERT_EQ(out[1].tensor.shape(), (Shape{1, static_cast<int64_t>(run + 1)})) << run;
    for (size_t i = 0; i <= run; ++i) EXPECT_EQ(out[1].tensor.data().get_i64(i), int64_t(i));
  }
}

// A sequence output is not traced; its runs are interpreted and still see each run's inputs.
TEST(OnnxImport, ModelsWithSequenceOutputsRunRepeatedly) {
  pb::ModelProto p = model();
  auto* g = p.mutable_graph();
  *g->add_input() = tensor_info("x", pb::TensorProto::FLOAT, {2});
  pb::ValueInfoProto seq;
  seq.set_name("q");
  seq.mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(pb::TensorProto::FLOAT);
  *g->add_output() = seq;
  *g->add_node() = node("Neg", {"x"}, {"n"});
  *g->add_node() = node("SequenceConstruct", {"x", "n"}, {"q"});
  Model m = Model::parse(bytes_of(p));
  for (float v : {1.0f, 2.5f, -4.0f}) {
    Tensor x = Tensor::from_vector(std::vector<float>{v, 2 * v}, {2}, DType::F32, "cpu");
    std::vector<Value> out = m.run({Value(x)});
    ASSERT_EQ(out[0].elements.size(), 2u);
    EXPECT_EQ(out[0].elements[1].tensor.to_f64(), (std::vector<double>{-v, -2.0 * v}));
  }
}

TEST(OnnxImport, WrongInputShapeDTypeOrCountIsAClearError) {
  Model m = Model::parse(bytes_of(add_relu_model()));
  auto run = [&](Tensor t) { m.run({Value(t)}); };
  std::string msg = error_of(
      [&] {
        run(Tensor::from_vector(std::vector<float>(8), {2, 4}, DType::F32, "cpu"));
      },
      ErrorKind::Shape);
  EXPECT_NE(msg.find("'x'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[N,3]"), std::string::npos) << msg;
  msg = error_of(
      [&] {
        run(Tensor::from_vector(std::vector<int>(6), {2, 3}, DType::I32, "cpu"));
      },
      ErrorKind::DType);
  EXPECT_NE(msg.find("tensor(float)"), std::string::npos) << msg;
  error_of([&] { m.run(std::vector<Value>{}); }, ErrorKind::Value);
  msg = error_of([&] { m.run(std::map<std::string, Value>{{"z", Value()}}); }, ErrorKind::Value);
  EXPECT_NE(msg.find("'x'"), std::string::npos) << msg;
}

TEST(OnnxImport, SymbolicDimensionsMustAgreeAcrossInputs) {
  pb::ModelProto p = model();
  auto* g = p.mutable_graph();
  *g->add_input() = tensor_info("a", pb::TensorProto::FLOAT, {-1}, {"N"});
  *g->add_input() = tensor_info("b", pb::TensorProto::FLOAT, {-1}, {"N"});
  *g->add_output() = tensor_info("y", pb::TensorProto::FLOAT, {-1}, {"N"});
  *g->add_node() = node("Add", {"a", "b"}, {"y"});
  Model m = Model::parse(bytes_of(p));
  Tensor a = Tensor::from_vector(std::vector<float>{1, 2}, {2}, DType::F32, "cpu");
  Tensor b = Tensor::from_vector(std::vector<float>{1, 2, 3}, {3}, DType::F32, "cpu");
  std::string msg = error_of(
      [&] {
        m.run(std::vector<Value>{Value(a), Value(b)});
      },
      ErrorKind::Shape);
  EXPECT_NE(msg.find("'N'"), std::string::npos) << msg;
}

TEST(OnnxImport, TruncatedOrCorruptedBytesAreAFormatError) {
  std::vector<uint8_t> good = bytes_of(add_relu_model());
  for (size_t cut : {good.size() / 2, good.size() - 3, size_t{5}}) {
    std::vector<uint8_t> bad(good.begin(), good.begin() + static_cast<long>(cut));
    try {
      Model::parse(bad);
      ADD_FAILURE() << "a model cut to " << cut << " bytes parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
    }
  }
  std::vector<uint8_t> garbage(64, 0xff);
  error_of([&] { Model::parse(garbage); }, ErrorKind::Format);
  error_of([&] { Model::load("/nonexistent/model.onnx"); }, ErrorKind::Io);
}

TEST(OnnxImport, CyclicGraphsAndMissingInitializersNameTheNode) {
  pb::ModelProto p = add_relu_model();
  // relu reads its own output through the add: a cycle (and an unsorted graph).
  p.mutable_graph()->mutable_node(0)->set_input(1, "y");
  std::string msg = error_of([&] { Model::parse(bytes_of(p)); }, ErrorKind::Format);
  EXPECT_NE(msg.find("node 'add'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'y'"), std::string::npos) << msg;

  pb::ModelProto q = add_relu_model();
  q.mutable_graph()->clear_initializer();
  msg = error_of([&] { Model::parse(bytes_of(q)); }, ErrorKind::Format);
  EXPECT_NE(msg.find("'w'"), std::string::npos) << msg;
}

TEST(OnnxImport, EveryUnsupportedOpIsListedAtLoadTime) {
  pb::ModelProto p = add_relu_model();
  auto* o = p.add_opset_import();
  o->set_domain("com.example");
  o->set_version(3);
  *p.mutable_graph()->add_node() = node("FrobnicateA", {"y"}, {"z1"}, "fa");
  *p.mutable_graph()->add_node() = node("FrobnicateB", {"z1"}, {"z2"}, "fb", "com.example");
  *p.mutable_graph()->add_node() = node("FrobnicateA", {"z2"}, {"z3"}, "fa2");
  std::string msg = error_of([&] { Model::parse(bytes_of(p)); }, ErrorKind::Unsupported);
  EXPECT_NE(msg.find("2 unsupported ops"), std::string::npos) << msg;
  EXPECT_NE(msg.find("FrobnicateA (domain 'ai.onnx', opset 13): node 'fa'"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("FrobnicateB (domain 'com.example', opset 3): node 'fb'"), std::string::npos)
      << msg;
}

TEST(OnnxImport, AbsurdOrInconsistentTensorSizesAreRejectedBeforeAllocating) {
  pb::ModelProto p = add_relu_model();
  pb::TensorProto* w = p.mutable_graph()->mutable_initializer(0);
  w->clear_dims();
  w->add_dims(int64_t{1} << 40);
  w->add_dims(int64_t{1} << 40);  // 2^80 elements: overflows
  std::string msg = error_of([&] { Model::parse(bytes_of(p)); }, ErrorKind::Format);
  EXPECT_NE(msg.find("'w'"), std::string::npos) << msg;

  w->clear_dims();
  w->add_dims(int64_t{1} << 40);  // 2^40 floats claimed, 3 present
  msg = error_of([&] { Model::parse(bytes_of(p)); }, ErrorKind::Format);
  EXPECT_NE(msg.find("float_data holds 3 values"), std::string::npos) << msg;

  w->clear_dims();
  w->add_dims(3);
  w->clear_float_data();
  w->set_raw_data(std::string(11, '\0'));  // 11 bytes for 3 floats
  msg = error_of([&] { Model::parse(bytes_of(p)); }, ErrorKind::Format);
  EXPECT_NE(msg.find("raw_data has 11 bytes"), std::string::npos) << msg;

  w->set_data_type(99);
  msg = error_of([&] { Model::parse(bytes_of(p)); }, ErrorKind::Format);
  EXPECT_NE(msg.find("unknown data_type 99"), std::string::npos) << msg;
}

TEST(OnnxImport, ReadsExternalDataBesideTheModelAndRefusesPathsOutsideIt) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "tessel_onnx_external";
  fs::create_directories(dir);
  const float w[3] = {1, -2, 0.5};
  {
    std::ofstream f(dir / "weights.bin", std::ios::binary);
    f.write("pad!", 4);
    f.write(reinterpret_cast<const char*>(w), sizeof w);
  }
  pb::ModelProto p = add_relu_model();
  pb::TensorProto* t = p.mutable_graph()->mutable_initializer(0);
  t->clear_float_data();
  t->set_data_location(pb::TensorProto::EXTERNAL);
  auto kv = [&](const char* k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", "weights.bin");
  kv("offset", "4");
  kv("length", "12");
  {
    std::ofstream f(dir / "model.onnx", std::ios::binary);
    f << p.SerializeAsString();
  }
  Model m = Model::load((dir / "model.onnx").string());
  Tensor x = Tensor::from_vector(std::vector<float>{0, 0, 0}, {1, 3}, DType::F32, "cpu");
  EXPECT_EQ(m.run({Value(x)})[0].tensor.to_f64(), (std::vector<double>{1, 0, 0.5}));

  t->mutable_external_data(0)->set_value("../outside.bin");
  std::string msg = error_of([&] { Model::parse(bytes_of(p), dir.string()); }, ErrorKind::Format);
  EXPECT_NE(msg.find("leaves the model's directory"), std::string::npos) << msg;
  t->mutable_external_data(0)->set_value("weights.bin");
  t->mutable_external_data(1)->set_value("8");  // 8 + 12 > 16 bytes
  msg = error_of([&] { Model::parse(bytes_of(p), dir.string()); }, ErrorKind::Format);
  EXPECT_NE(msg.find("lies outside"), std::string::npos) << msg;
  fs::remove_all(dir);
}

TEST(OnnxImport, ModelLocalFunctionsExpandWithAttributeReferences) {
  // A local function Scale(x) = x * alpha, with alpha an attribute reference resolved from the
  // calling node, used twice with different attributes.
  pb::ModelProto p = model();
  auto* o = p.add_opset_import();
  o->set_domain("local");
  o->set_version(1);
  pb::FunctionProto* f = p.add_functions();
  f->set_name("Scale");
  f->set_domain("local");
  f->add_input("x");
  f->add_output("y");
  *f->add_opset_import() = p.opset_import(0);
  pb::NodeProto c = node("Constant", {}, {"a"});
  auto* attr = c.add_attribute();
  attr->set_name("value_float");
  attr->set_type(pb::AttributeProto::FLOAT);
  attr->set_ref_attr_name("alpha");
  *f->add_node() = c;
  *f->add_node() = node("Mul", {"x", "a"}, {"y"});
  auto* g = p.mutable_graph();
  *g->add_input() = tensor_info("x", pb::TensorProto::FLOAT, {2});
  *g->add_output() = tensor_info("z", pb::TensorProto::FLOAT, {2});
  for (auto [in, out, alpha] : {std::tuple{"x", "h", 3.0f}, std::tuple{"h", "z", -0.5f}}) {
    pb::NodeProto call = node("Scale", {in}, {out}, "", "local");
    auto* a = call.add_attribute();
    a->set_name("alpha");
    a->set_type(pb::AttributeProto::FLOAT);
    a->set_f(alpha);
    *g->add_node() = call;
  }
  Model m = Model::parse(bytes_of(p));
  Tensor x = Tensor::from_vector(std::vector<float>{2, -4}, {2}, DType::F32, "cpu");
  EXPECT_EQ(m.run({Value(x)})[0].tensor.to_f64(), (std::vector<double>{-3, 6}));
}

TEST(OnnxImport, SparseInitializersAndConstantsAreMadeDense) {
  // w = sparse [3] with w[1] = -2 (linear indices); c = Constant sparse_value [2, 2] with
  // c[1, 0] = 5 (coordinate indices); y = x + w (broadcast) and z = c.
  pb::ModelProto p = model();
  auto* g = p.mutable_graph();
  *g->add_input() = tensor_info("x", pb::TensorProto::FLOAT, {2, 3});
  *g->add_output() = tensor_info("y", pb::TensorProto::FLOAT, {2, 3});
  *g->add_output() = tensor_info("z", pb::TensorProto::FLOAT, {2, 2});
  pb::SparseTensorProto* w = g->add_sparse_initializer();
  w->add_dims(3);
  *w->mutable_values() = float_tensor("w", {1}, {-2});
  w->mutable_indices()->set_data_type(pb::TensorProto::INT64);
  w->mutable_indices()->add_dims(1);
  w->mutable_indices()->add_int64_data(1);
  *g->add_node() = node("Add", {"x", "w"}, {"y"});
  pb::NodeProto c = node("Constant", {}, {"z"}, "c");
  auto* a = c.add_attribute();
  a->set_name("sparse_value");
  a->set_type(pb::AttributeProto::SPARSE_TENSOR);
  pb::SparseTensorProto* sv = a->mutable_sparse_tensor();
  sv->add_dims(2);
  sv->add_dims(2);
  *sv->mutable_values() = float_tensor("", {1}, {5});
  sv->mutable_indices()->set_data_type(pb::TensorProto::INT64);
  sv->mutable_indices()->add_dims(1);
  sv->mutable_indices()->add_dims(2);
  sv->mutable_indices()->add_int64_data(1);
  sv->mutable_indices()->add_int64_data(0);
  *g->add_node() = c;
  Model m = Model::parse(bytes_of(p));
  Tensor x = Tensor::from_vector(std::vector<float>(6, 1), {2, 3}, DType::F32, "cpu");
  std::vector<Value> out = m.run({Value(x)});
  EXPECT_EQ(out[0].tensor.to_f64(), (std::vector<double>{1, -1, 1, 1, -1, 1}));
  EXPECT_EQ(out[1].tensor.to_f64(), (std::vector<double>{0, 0, 5, 0}));

  // Column 2 of a [2, 2] tensor.
  g->mutable_node(1)
      ->mutable_attribute(0)
      ->mutable_sparse_tensor()
      ->mutable_indices()
      ->set_int64_data(1, 2);
  std::string msg = error_of([&] { Model::parse(bytes_of(p)); }, ErrorKind::Format);
  EXPECT_NE(msg.find("lies outside dims [2,2]"), std::string::npos) << msg;
}

// Malformed shapes that converters index with: each must be a Shape error naming the node, not
// an out-of-bounds read or write of an empty shape (found by the fuzzer, fuzz/corpus/onnx).
TEST(OnnxImport, ConvIntegerWithAScalarWeightIsAShapeError) {
  // W is a scalar and its zero point has 2 elements: the per-channel zero point used to be
  // shaped [2, 1, ...] by writing dim 0 of W's (empty) shape.
  pb::ModelProto p = model();
  auto* g = p.mutable_graph();
  *g->add_input() = tensor_info("x", pb::TensorProto::UINT8, {1, 1, 3, 3});
  *g->add_output() = tensor_info("y", pb::TensorProto::INT32, {});
  auto u8 = [](const std::string& name, const std::vector<int64_t>& dims, std::vector<int> v) {
    return tensor_of(name, pb::TensorProto::UINT8, dims, v, &pb::TensorProto::add_int32_data);
  };
  *g->add_initializer() = u8("w", {}, {1});
  *g->add_initializer() = u8("wzp", {2}, {0, 0});
  *g->add_node() = node("ConvInteger", {"x", "w", "", "wzp"}, {"y"}, "ci");
  Model m = Model::parse(bytes_of(p));
  Tensor x = Tensor::from_vector(std::vector<int>(9, 1), {1, 1, 3, 3}, DType::U8, "cpu");
  std::string msg = error_of([&] { m.run({Value(x)}); }, ErrorKind::Shape);
  EXPECT_NE(msg.find("ConvInteger node 'ci'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("must have x's rank 4"), std::string::npos) << msg;

  // A 1-D W (and a per-channel zero point) is rejected the same way.
  g->mutable_initializer(0)->add_dims(1);
  Model m1 = Model::parse(bytes_of(p));
  msg = error_of([&] { m1.run({Value(x)}); }, ErrorKind::Shape);
  EXPECT_NE(msg.find("must have x's rank 4"), std::string::npos) << msg;
}

TEST(OnnxImport, ReducingNamedAxesOfAScalarIsAShapeError) {
  // axes [0] of a scalar: an axis the input does not have (its size used to be read from the
  // empty shape). Both the attribute (ReduceMax-13) and the input (ReduceSum-13) forms.
  Tensor x = Tensor::scalar(2.0, DType::F32, "cpu");
  for (const std::string op : {"ReduceMax", "ReduceSum"}) {
    SCOPED_TRACE(op);
    pb::ModelProto p = model(13);
    auto* g = p.mutable_graph();
    *g->add_input() = tensor_info("x", pb::TensorProto::FLOAT, {});
    *g->add_output() = tensor_info("y", pb::TensorProto::FLOAT, {});
    pb::NodeProto n = node(op, {"x"}, {"y"}, "r");
    if (op == "ReduceSum") {
      pb::TensorProto axes;
      axes.set_name("axes");
      axes.set_data_type(pb::TensorProto::INT64);
      axes.add_dims(1);
      axes.add_int64_data(0);
      *g->add_initializer() = axes;
      n.add_input("axes");
    } else {
      auto* a = n.add_attribute();
      a->set_name("axes");
      a->set_type(pb::AttributeProto::INTS);
      a->add_ints(0);
    }
    *g->add_node() = n;
    Model m = Model::parse(bytes_of(p));
    std::string msg = error_of([&] { m.run({Value(x)}); }, ErrorKind::Shape);
    EXPECT_NE(msg.find(op + " node 'r'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("axes [0] name axes of a scalar input"), std::string::npos) << msg;
  }
}

TEST(OnnxImport, TfIdfVectorizerWithAHugeMaxSkipCountEnds) {
  // The bigram (1, 2) in [1, 2, 1, 2], with any number of skips: twice with none, once with 2
  // (x[0], x[3]); wider skips fit no more, so a max_skip_count of 10^12 must not loop 10^12
  // times.
  pb::ModelProto p = model(13);
  auto* g = p.mutable_graph();
  *g->add_input() = tensor_info("x", pb::TensorProto::INT64, {4});
  *g->add_output() = tensor_info("y", pb::TensorProto::FLOAT, {1});
  pb::NodeProto n = node("TfIdfVectorizer", {"x"}, {"y"}, "tfidf");
  auto ints = [&](const char* name, std::vector<int64_t> v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(pb::AttributeProto::INTS);
    for (int64_t e : v) a->add_ints(e);
  };
  auto one = [&](const char* name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(pb::AttributeProto::INT);
    a->set_i(v);
  };
  one("min_gram_length", 2);
  one("max_gram_length", 2);
  one("max_skip_count", int64_t{1'000'000'000'000});
  ints("ngram_counts", {0, 0});
  ints("ngram_indexes", {0});
  ints("pool_int64s", {1, 2});
  auto* mode = n.add_attribute();
  mode->set_name("mode");
  mode->set_type(pb::AttributeProto::STRING);
  mode->set_s("TF");
  *g->add_node() = n;
  Model m = Model::parse(bytes_of(p));
  Tensor x = Tensor::from_vector(std::vector<int64_t>{1, 2, 1, 2}, {4}, DType::I64, "cpu");
  std::vector<Value> out = m.run({Value(x)});
  EXPECT_EQ(out[0].tensor.to_f64(), (std::vector<double>{3}));
}

TEST(OnnxImport, ReadsTensorProtoFilesOfEveryStorageForm) {
  namespace fs = std::filesystem;
  fs::path path = fs::temp_directory_path() / "tessel_onnx_tensor.pb";
  pb::TensorProto t;
  t.set_data_type(pb::TensorProto::INT64);
  t.add_dims(2);
  t.add_dims(2);
  for (int64_t v : std::vector<int64_t>{1, -2, 3, int64_t{1} << 40}) t.add_int64_data(v);
  {
    std::ofstream f(path, std::ios::binary);
    f << t.SerializeAsString();
  }
  Value v = onnx::read_value_pb(path.string(), "tensor", "cpu");
  ASSERT_TRUE(v.is_tensor());
  EXPECT_EQ(v.tensor.dtype(), DType::I64);
  EXPECT_EQ(v.tensor.shape(), (Shape{2, 2}));
  EXPECT_EQ(v.tensor.data().get_i64(3), int64_t{1} << 40);
  fs::remove(path);
}

}  // namespace
}  // namespace tessel::testing
