// The handwritten digits reader (zlib, no Python), seeded shuffling and the stratified split.
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>

#include "tessel/datasets.h"

namespace tessel {

namespace {

constexpr int kPixels = 64;
constexpr int kClasses = 10;

// The whole decompressed file.
std::string read_gzip(const std::string& path) {
  if (!std::filesystem::exists(path))
    throw_error(ErrorKind::Io, "[digits] '", path,
                "' does not exist: install Debian's python3-sklearn, which ships the handwritten "
                "digits (apt-get install python3-sklearn)");
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw_error(ErrorKind::Io, "[digits] cannot open '", path, "'");
  std::string text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  int err = 0;
  const char* msg = gzerror(f, &err);
  std::string why = err < 0 && msg ? msg : "";
  gzclose(f);
  if (n < 0 || err < 0)
    throw_error(ErrorKind::Format, "[digits] '", path, "' is not a readable gzip file: ", why);
  return text;
}

}  // namespace

std::string default_digits_path() {
  return "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";
}

Dataset load_digits(const std::string& path) {
  std::string text = read_gzip(path);
  std::vector<float> pixels;
  std::vector<int64_t> labels;
  size_t pos = 0;
  int line = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    ++line;
    std::string row = text.substr(pos, end - pos);
    pos = end + 1;
    if (row.empty() || row == "\r") continue;
    std::vector<double> values;
    const char* p = row.c_str();
    while (*p) {
      char* next = nullptr;
      double v = std::strtod(p, &next);
      if (next == p || !std::isfinite(v))
        throw_error(ErrorKind::Format, "[digits] '", path, "' line ", line,
                    ": expected comma-separated numbers, got '", row, "'");
      values.push_back(v);
      p = next;
      if (*p == ',')
        ++p;
      else if (*p == '\r')
        ++p;
      else if (*p)
        throw_error(ErrorKind::Format, "[digits] '", path, "' line ", line,
                    ": unexpected character '", *p, "'");
    }
    if (values.size() != kPixels + 1)
      throw_error(ErrorKind::Format, "[digits] '", path, "' line ", line, ": ", values.size(),
                  " values; expected ", kPixels, " pixels and a label");
    for (int i = 0; i < kPixels; ++i) {
      if (values[i] < 0 || values[i] > 16)
        throw_error(ErrorKind::Format, "[digits] '", path, "' line ", line, ": pixel ", i, " is ",
                    values[i], "; expected 0..16");
      pixels.push_back(static_cast<float>(values[i] / 16.0));
    }
    double label = values[kPixels];
    if (label != std::floor(label) || label < 0 || label >= kClasses)
      throw_error(ErrorKind::Format, "[digits] '", path, "' line ", line, ": label ", label,
                  " is not a class id 0..9");
    labels.push_back(static_cast<int64_t>(label));
  }
  if (labels.empty()) throw_error(ErrorKind::Format, "[digits] '", path, "' holds no rows");
  const auto n = static_cast<int64_t>(labels.size());
  return {HostTensor::from_vector(DType::F32, {n, kPixels}, pixels),
          HostTensor::from_vector(DType::I64, {n}, labels)};
}

uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  TESSEL_ASSERT(n > 0);
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;  // draws >= limit would bias low values
  uint64_t r;
  do r = rng();
  while (r >= limit);
  return r % n;
}

void shuffle(std::vector<int64_t>& v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[uniform_below(rng, i)]);
}

Split stratified_split(const HostTensor& labels, double test_fraction, uint64_t seed) {
  if (!(test_fraction > 0 && test_fraction < 1))
    throw_error(ErrorKind::Value, "[stratified_split] test_fraction is ", test_fraction,
                "; expected 0 < test_fraction < 1");
  if (labels.rank() != 1 || !is_integer(labels.dtype))
    throw_error(ErrorKind::Value, "[stratified_split] labels must be integer class ids [N]");
  const int64_t n = labels.numel();
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  shuffle(order, rng);
  // Rows of each class, in shuffled order.
  std::vector<std::vector<int64_t>> by_class;
  for (int64_t i : order) {
    int64_t c = labels.get_i64(i);
    if (c < 0) throw_error(ErrorKind::Value, "[stratified_split] label ", c, " is negative");
    if (c >= static_cast<int64_t>(by_class.size())) by_class.resize(static_cast<size_t>(c + 1));
    by_class[static_cast<size_t>(c)].push_back(i);
  }
  const auto n_test = static_cast<int64_t>(std::ceil(test_fraction * static_cast<double>(n)));
  std::vector<int64_t> take(by_class.size());
  std::vector<std::pair<double, size_t>> remainders;
  int64_t given = 0;
  for (size_t c = 0; c < by_class.size(); ++c) {
    double exact = static_cast<double>(by_class[c].size()) * static_cast<double>(n_test) /
                   static_cast<double>(n);
    take[c] = static_cast<int64_t>(std::floor(exact));
    given += take[c];
    remainders.push_back({exact - std::floor(exact), c});
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; given < n_test && i < remainders.size(); ++i, ++given)
    take[remainders[i].second]++;
  Split s;
  for (size_t c = 0; c < by_class.size(); ++c)
    for (size_t i = 0; i < by_class[c].size(); ++i)
      (static_cast<int64_t>(i) < take[c] ? s.test : s.train).push_back(by_class[c][i]);
  shuffle(s.train, rng);
  shuffle(s.test, rng);
  return s;
}

Dataset take_rows(const Dataset& d, std::span<const int64_t> rows) {
  const int64_t n = d.size(), features = d.x.shape[1];
  const auto m = static_cast<int64_t>(rows.size());
  Dataset out{HostTensor::empty(d.x.dtype, {m, features}), HostTensor::empty(d.y.dtype, {m})};
  HostTensor x = d.x.contiguous(), y = d.y.contiguous();
  const size_t row_bytes = static_cast<size_t>(features) * dtype_size(x.dtype);
  const size_t label_bytes = dtype_size(y.dtype);
  for (int64_t i = 0; i < m; ++i) {
    int64_t r = rows[static_cast<size_t>(i)];
    if (r < 0 || r >= n)
      throw_error(ErrorKind::Value, "[take_rows] row ", r, " is outside [0, ", n, ")");
    std::memcpy(out.x.data() + i * row_bytes, x.data() + r * row_bytes, row_bytes);
    std::memcpy(out.y.data() + i * label_bytes, y.data() + r * label_bytes, label_bytes);
  }
  return out;
}

}  // namespace tessel
