// The ONNX ops no other family holds: random ops (RandomUniform(Like), RandomNormal(Like),
// Bernoulli, Multinomial), Det, and the string ops StringNormalizer and TfIdfVectorizer.
//
// Det is decomposed into Gaussian elimination (Tessel's Det kind is still pending). String
// tensors live in the importer, so string ops run on the host.
#include <algorithm>
#include <cctype>
#include <limits>
#include <string>

#include "frontends/onnx/convert_util.h"

namespace tessel::onnx {
namespace {

// --- random ------------------------------------------------------------------------------------

Tensor rng(const NodeCtx& ctx, const char* kind, const Shape& shape, DType dt, double a, double b) {
  if (!is_float(dt))
    ctx.fail(ErrorKind::DType, "draws float tensors; dtype ", dtype_name(dt), " is not one");
  for (int64_t d : shape)
    if (d < 0) ctx.fail(ErrorKind::Shape, "shape ", shape_str(shape), " has a negative dim");
  const bool uniform = std::string_view(kind) == "RngUniform";
  return op1(kind, {},
             {{"shape", shape},
              {"dtype", dt},
              {uniform ? "low" : "mean", a},
              {uniform ? "high" : "std", b},
              {"seed", random_seed(ctx)}},
             ctx.device());
}

DType rng_dtype(const NodeCtx& ctx, DType dflt) {
  return ctx.has_attr("dtype") ? onnx_dtype(ctx, ctx.attr_int("dtype")) : dflt;
}

std::vector<Value> random_uniform(NodeCtx& ctx) {
  const std::vector<int64_t> shape = ctx.attr_ints("shape");
  return {rng(ctx, "RngUniform", shape, rng_dtype(ctx, DType::F32), ctx.attr_float("low", 0),
              ctx.attr_float("high", 1))};
}
std::vector<Value> random_uniform_like(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  return {rng(ctx, "RngUniform", x.shape(), rng_dtype(ctx, x.dtype()), ctx.attr_float("low", 0),
              ctx.attr_float("high", 1))};
}
std::vector<Value> random_normal(NodeCtx& ctx) {
  const std::vector<int64_t> shape = ctx.attr_ints("shape");
  return {rng(ctx, "RngNormal", shape, rng_dtype(ctx, DType::F32), ctx.attr_float("mean", 0),
              ctx.attr_float("scale", 1))};
}
std::vector<Value> random_normal_like(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  return {rng(ctx, "RngNormal", x.shape(), rng_dtype(ctx, x.dtype()), ctx.attr_float("mean", 0),
              ctx.attr_float("scale", 1))};
}

std::vector<Value> bernoulli(NodeCtx& ctx) {
  Tensor p = ctx.in(0);
  require_float(ctx, p, "input");
  Tensor u = rng(ctx, "RngUniform", p.shape(), DType::F64, 0, 1);
  return {cast(compare("Lt", u, cast(p, DType::F64)), rng_dtype(ctx, p.dtype()))};
}

std::vector<Value> multinomial(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  require_float(ctx, x, "input");
  if (x.rank() != 2)
    ctx.fail(ErrorKind::Shape, "input must be [batch, classes], not ", Value(x).describe());
  const int64_t n = ctx.attr_int("sample_size", 1);
  if (n < 1) ctx.fail(ErrorKind::Value, "sample_size ", n, " must be positive");
  const DType to = onnx_dtype(ctx, ctx.attr_int("dtype", pb::TensorProto::INT32));
  if (to != DType::I32 && to != DType::I64)
    ctx.fail(ErrorKind::DType, "dtype must be int32 or int64, not ", dtype_name(to));
  // One Sample row per draw: rows are drawn independently (row index and seed).
  Tensor rows =
      expand_to(reshape(x, {x.shape()[0], 1, x.shape()[1]}), {x.shape()[0], n, x.shape()[1]});
  Tensor ids = op1("Sample", {rows}, {{"temperature", 1.0}, {"seed", random_seed(ctx)}});
  return {cast(ids, to)};
}

// --- Det ---------------------------------------------------------------------------------------

// Gaussian elimination with partial pivoting, unrolled over the n columns (in f64); the pivot
// search, row swaps and sign are device ops.
std::vector<Value> det(NodeCtx& ctx) {
  Tensor a = ctx.in(0);
  require_float(ctx, a, "input");
  const int64_t rank = a.rank();
  if (rank < 2 || a.shape()[rank - 1] != a.shape()[rank - 2])
    ctx.fail(ErrorKind::Shape, "input ", Value(a).describe(), " must be [..., M, M]");
  const int64_t n = a.shape()[rank - 1];
  Shape batch_shape(a.shape().begin(), a.shape().end() - 2);
  const int64_t batch = shape_numel(batch_shape);
  Tensor m = reshape(cast(a, DType::F64), {batch, n, n});
  Tensor result = ctx.constant(HostTensor::from_vector(
      DType::F64, {batch, 1}, std::vector<double>(static_cast<size_t>(batch), 1.0)));
  std::vector<int64_t> iota(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) iota[i] = i;
  Tensor rows = reshape(ctx.vector_tensor(iota, DType::I64), {1, n});
  Tensor zero = ctx.scalar_tensor(0, DType::F64), one = ctx.scalar_tensor(1, DType::F64);
  for (int64_t k = 0; k < n; ++k) {
    if (k + 1 < n) {
      // Pivot: the largest |a[i, k]| for i >= k, swapped into row k.
      Tensor col = act("Abs", narrow(narrow(m, 1, k, n - k), 2, k, 1));  // [B, n-k, 1]
      Tensor p = reshape(op1("ArgMax", {col}, {{"axis", int64_t{1}}}), {batch, 1});
      Tensor kk = ctx.scalar_tensor(static_cast<double>(k), DType::I64);
      p = p + kk;
      Tensor perm = where(compare("Eq", rows, kk), p, where(compare("Eq", rows, p), kk, rows));
      m = op1("GatherElements", {m, expand_to(reshape(perm, {batch, n, 1}), {batch, n, n})},
              {{"axis", int64_t{1}}});
      result = where(compare("Ne", p, kk), -result, result);
    }
    Tensor pivot = reshape(narrow(narrow(m, 1, k, 1), 2, k, 1), {batch, 1});
    result = result * pivot;
    if (k + 1 == n) break;
    // Eliminate below the pivot (a zero pivot means a zero column: det is 0 already).
    Tensor safe = reshape(where(compare("Eq", pivot, zero), one, pivot), {batch, 1, 1});
    Tensor below = narrow(m, 1, k + 1, n - k - 1);
    Tensor factors = narrow(below, 2, k, 1) / safe;
    below = below - factors * narrow(m, 1, k, 1);
    m = concatenate({narrow(m, 1, 0, k + 1), below}, 1);
  }
  return {cast(reshape(result, batch_shape), a.dtype())};
}

// --- strings and n-grams -----------------------------------------------------------------------

std::vector<Value> string_normalizer(NodeCtx& ctx) {
  const Value& x = ctx.value(0);
  if (x.kind != Value::Kind::Strings)
    ctx.fail(ErrorKind::DType, "input is ", x.describe(), "; a string tensor is needed");
  const bool two_dim = x.shape.size() == 2;
  if (!(x.shape.size() == 1 || (two_dim && x.shape[0] == 1)))
    ctx.fail(ErrorKind::Shape, "input must be [C] or [1, C], not ", shape_str(x.shape));
  const std::string action = ctx.attr_string("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    ctx.fail(ErrorKind::Format, "case_change_action '", action, "' is not NONE, LOWER or UPPER");
  const bool sensitive = ctx.attr_int("is_case_sensitive", 0) != 0;
  auto fold = [](std::string s, bool upper) {
    for (char& c : s)
      c = static_cast<char>(upper ? std::toupper(static_cast<unsigned char>(c))
                                  : std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  std::vector<std::string> stop = ctx.attr_strings("stopwords");
  if (!sensitive)
    for (std::string& s : stop) s = fold(s, false);
  std::vector<std::string> out;
  for (const std::string& s : x.strings) {
    const std::string key = sensitive ? s : fold(s, false);
    if (std::find(stop.begin(), stop.end(), key) != stop.end()) continue;
    out.push_back(action == "NONE" ? s : fold(s, action == "UPPER"));
  }
  if (out.empty()) out.push_back("");  // the operator's output is never empty
  const int64_t c = static_cast<int64_t>(out.size());
  return {Value::string_tensor(two_dim ? Shape{1, c} : Shape{c}, std::move(out))};
}

// TfIdfVectorizer: counts of the pool's n-grams (each with skips 0..max_skip_count between its
// items) in each row of X. Integer inputs are counted on the device (a comparison per n-gram
// item, summed); string inputs live on the host and are counted there.
std::vector<Value> tfidf_vectorizer(NodeCtx& ctx) {
  const Value& xv = ctx.value(0);
  const bool strings = xv.kind == Value::Kind::Strings;
  const Shape xshape = strings ? xv.shape : ctx.in(0).shape();
  if (xshape.size() != 1 && xshape.size() != 2)
    ctx.fail(ErrorKind::Shape, "input must be [C] or [N, C], not ", shape_str(xshape));
  const int64_t min_n = ctx.attr_int("min_gram_length"), max_n = ctx.attr_int("max_gram_length");
  const int64_t max_skip = ctx.attr_int("max_skip_count");
  const std::string mode = ctx.attr_string("mode");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    ctx.fail(ErrorKind::Format, "mode '", mode, "' is not TF, IDF or TFIDF");
  if (min_n < 1 || max_n < min_n || max_skip < 0)
    ctx.fail(ErrorKind::Value, "gram lengths [", min_n, ", ", max_n, "] and max_skip_count ",
             max_skip, " are invalid");
  const std::vector<int64_t> counts = ctx.attr_ints("ngram_counts");
  const std::vector<int64_t> indexes = ctx.attr_ints("ngram_indexes");
  const std::vector<int64_t> pool_ints = ctx.attr_ints("pool_int64s");
  const std::vector<std::string> pool_strs = ctx.attr_strings("pool_strings");
  const std::vector<double> weights = ctx.attr_floats("weights");
  const int64_t pool_size = static_cast<int64_t>(strings ? pool_strs.size() : pool_ints.size());
  if (strings != pool_ints.empty() && pool_size > 0)
    ctx.fail(ErrorKind::DType, "a ", strings ? "string" : "integer",
             " input needs a matching pool (pool_strings / pool_int64s)");

  // The pool's n-grams, in order: (n, first pool position).
  struct Gram {
    int64_t n, at;
  };
  std::vector<Gram> grams;
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t n = static_cast<int64_t>(i) + 1;
    const int64_t begin = counts[i], end = i + 1 < counts.size() ? counts[i + 1] : pool_size;
    if (begin < 0 || end > pool_size || begin > end || (end - begin) % n != 0)
      ctx.fail(ErrorKind::Format, "ngram_counts ", shape_str(counts), " do not split a pool of ",
               pool_size);
    for (int64_t at = begin; at < end; at += n) grams.push_back({n, at});
  }
  if (indexes.size() != grams.size())
    ctx.fail(ErrorKind::Format, "ngram_indexes has ", indexes.size(), " entries for ", grams.size(),
             " n-grams");
  int64_t outputs = 0;
  for (int64_t i : indexes) {
    if (i < 0 || i == std::numeric_limits<int64_t>::max())
      ctx.fail(ErrorKind::Format, "ngram_indexes holds the index ", i, ", out of range");
    outputs = std::max(outputs, i + 1);
  }
  if (!weights.empty() && static_cast<int64_t>(weights.size()) < outputs)
    ctx.fail(ErrorKind::Format, "weights has ", weights.size(), " entries for ", outputs,
             " outputs");
  const int64_t rows = xshape.size() == 2 ? xshape[0] : 1, len = xshape.back();
  // Skips to count for an n-gram: unigrams have none.
  auto skips = [&](int64_t n) { return n == 1 ? int64_t{0} : max_skip; };
  auto wanted = [&](int64_t n) { return n >= min_n && n <= max_n; };

  Tensor counted;  // [rows, grams] f32
  if (strings) {
    std::vector<float> c(static_cast<size_t>(rows * grams.size()), 0.0f);
    for (size_t gi = 0; gi < grams.size(); ++gi) {
      const auto [n, at] = grams[gi];
      if (!wanted(n)) continue;
      for (int64_t row = 0; row < rows; ++row)
        for (int64_t s = 0; s <= skips(n) && (n - 1) * (s + 1) < len; ++s)
          for (int64_t i = 0; i + (n - 1) * (s + 1) < len; ++i) {
            bool match = true;
            for (int64_t j = 0; j < n && match; ++j)
              match = xv.strings[row * len + i + j * (s + 1)] == pool_strs[at + j];
            c[row * grams.size() + gi] += match;
          }
    }
    counted = ctx.constant(
        HostTensor::from_vector(DType::F32, {rows, static_cast<int64_t>(grams.size())}, c));
  } else {
    Tensor x = reshape(ctx.in(0), {rows, len});
    if (!is_integer(x.dtype()))
      ctx.fail(ErrorKind::DType, "input must be integer or string, not ", dtype_name(x.dtype()));
    Tensor zero = ctx.constant(HostTensor::empty(DType::F32, {rows}));
    std::vector<Tensor> per_gram;
    for (const Gram& g : grams) {
      Tensor total = zero;
      if (wanted(g.n))
        for (int64_t s = 0; s <= skips(g.n); ++s) {
          const int64_t span = (g.n - 1) * (s + 1), positions = len - span;
          if (positions <= 0) break;  // wider skips fit even less (and max_skip may be huge)
          Tensor match;
          for (int64_t j = 0; j < g.n; ++j) {
            Tensor item = ctx.scalar_tensor(static_cast<double>(pool_ints[g.at + j]), x.dtype());
            Tensor eq = compare("Eq", narrow(x, 1, j * (s + 1), positions), item);
            match = match.defined() ? binary("BitAnd", match, eq) : eq;
          }
          total = total + tessel::sum(cast(match, DType::F32), {1});
        }
      per_gram.push_back(total);
    }
    counted = per_gram.empty() ? ctx.constant(HostTensor::empty(DType::F32, {rows, 0}))
                               : stack(ctx, per_gram, 1);
  }
  // Scatter n-gram counts to their output slots with a 0/1 matrix (built on the device: its
  // width comes from the model), then weigh them.
  Tensor place = op1("OneHot", {ctx.vector_tensor(indexes, DType::I64)},
                     {{"depth", outputs}, {"axis", int64_t{-1}}, {"dtype", DType::F32}});
  Tensor y = matmul(counted, place);
  Tensor wt = ctx.scalar_tensor(1, DType::F32);
  if (!weights.empty())
    wt = ctx.vector_tensor(std::vector<double>(weights.begin(), weights.begin() + outputs),
                           DType::F32);
  if (mode == "IDF")
    y = where(compare("Gt", y, ctx.scalar_tensor(0, DType::F32)), expand_to(wt, y.shape()),
              ctx.scalar_tensor(0, DType::F32));
  else if (mode == "TFIDF")
    y = y * wt;
  if (xshape.size() == 1) y = reshape(y, {outputs});
  return {y};
}

constexpr Converter kConverters[] = {
    {"", "RandomUniform", random_uniform},
    {"", "RandomUniformLike", random_uniform_like},
    {"", "RandomNormal", random_normal},
    {"", "RandomNormalLike", random_normal_like},
    {"", "Bernoulli", bernoulli},
    {"", "Multinomial", multinomial},
    {"", "Det", det},
    {"", "StringNormalizer", string_normalizer},
    {"", "TfIdfVectorizer", tfidf_vectorizer},
};

}  // namespace

std::span<const Converter> misc_converters() { return kConverters; }

}  // namespace tessel::onnx
