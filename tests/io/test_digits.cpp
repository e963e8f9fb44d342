// The digits reader (zlib, no Python), seeded shuffling and the stratified split. The data file
// comes with Debian's python3-sklearn, which scripts/setup.sh installs.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <map>
#include <set>

#include "op_test_util.h"
#include "tessel/datasets.h"

namespace tessel::testing {
namespace {

const Dataset& digits() {
  static const Dataset d = load_digits();
  return d;
}

TEST(Digits, ReadsAllImagesWithPixelsScaledAndLabels) {
  const Dataset& d = digits();
  ASSERT_EQ(d.x.shape, (Shape{1797, 64}));
  ASSERT_EQ(d.y.shape, (Shape{1797}));
  EXPECT_EQ(d.x.dtype, DType::F32);
  EXPECT_EQ(d.y.dtype, DType::I64);
  std::map<int64_t, int> counts;
  for (int64_t i = 0; i < 1797; ++i) counts[d.y.get_i64(i)]++;
  // scikit-learn's documented class sizes.
  EXPECT_EQ(counts, (std::map<int64_t, int>{{0, 178},
                                            {1, 182},
                                            {2, 177},
                                            {3, 183},
                                            {4, 181},
                                            {5, 182},
                                            {6, 181},
                                            {7, 179},
                                            {8, 174},
                                            {9, 180}}));
  // The first image (a 0): its first row is 0,0,5,13,9,1,0,0 (load_digits()[0]).
  EXPECT_EQ(d.y.get_i64(0), 0);
  const double row0[8] = {0, 0, 5, 13, 9, 1, 0, 0};
  for (int j = 0; j < 8; ++j) EXPECT_EQ(d.x.get_f64(j), row0[j] / 16) << j;
  double lo = 1, hi = 0;
  for (double v : d.x.to_f64()) lo = std::min(lo, v), hi = std::max(hi, v);
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 1);
}

TEST(Digits, StratifiedSplitIsEightyTwentyPerClassAndSeeded) {
  const Dataset& d = digits();
  Split s = stratified_split(d.y, 0.2, 0);
  EXPECT_EQ(s.test.size(), 360u);
  EXPECT_EQ(s.train.size(), 1437u);
  std::set<int64_t> all(s.train.begin(), s.train.end());
  all.insert(s.test.begin(), s.test.end());
  EXPECT_EQ(all.size(), 1797u) << "every row in exactly one part";
  std::map<int64_t, int> per_class;
  for (int64_t i : s.test) per_class[d.y.get_i64(i)]++;
  for (auto [c, n] : per_class) EXPECT_NEAR(n, 36, 1) << "class " << c;
  EXPECT_EQ(stratified_split(d.y, 0.2, 0).test, s.test) << "same seed, same split";
  EXPECT_NE(stratified_split(d.y, 0.2, 1).test, s.test) << "another seed, another split";
}

TEST(Digits, TakeRowsCopiesTheRowsInOrder) {
  const Dataset& d = digits();
  std::vector<int64_t> rows = {5, 0, 1796};
  Dataset t = take_rows(d, rows);
  ASSERT_EQ(t.x.shape, (Shape{3, 64}));
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(t.y.get_i64(r), d.y.get_i64(rows[r]));
    for (int j = 0; j < 64; ++j) EXPECT_EQ(t.x.get_f64(r * 64 + j), d.x.get_f64(rows[r] * 64 + j));
  }
  expect_error(
      ErrorKind::Value, [&] { take_rows(d, std::vector<int64_t>{1797}); }, "row 1797", "outside");
}

TEST(Digits, UniformBelowAndShuffleAreDeterministicPermutations) {
  std::mt19937_64 a(7), b(7);
  std::vector<int64_t> v(100), w(100);
  for (int i = 0; i < 100; ++i) v[i] = w[i] = i;
  shuffle(v, a);
  shuffle(w, b);
  EXPECT_EQ(v, w);
  std::set<int64_t> s(v.begin(), v.end());
  EXPECT_EQ(s.size(), 100u);
  std::mt19937_64 r(1);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(uniform_below(r, 3), 3u);
}

void write_gz(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

TEST(Digits, MissingOrMalformedFilesAreClearErrors) {
  expect_error(
      ErrorKind::Io, [] { load_digits("/nonexistent/digits.csv.gz"); }, "missing file",
      "python3-sklearn");
  const std::string dir = std::string(TESSEL_BINARY_DIR) + "/";
  std::string row(64 * 2, ',');
  for (int i = 0; i < 64; ++i) row[2 * i] = '1';  // "1,1,...,1," then the label
  write_gz(dir + "digits_short.csv.gz", "1,2,3\n");
  expect_error(
      ErrorKind::Format, [&] { load_digits(dir + "digits_short.csv.gz"); }, "short row", "line 1");
  write_gz(dir + "digits_label.csv.gz", row + "12\n");
  expect_error(
      ErrorKind::Format, [&] { load_digits(dir + "digits_label.csv.gz"); }, "label 12", "label");
  write_gz(dir + "digits_text.csv.gz", row + "x\n");
  expect_error(
      ErrorKind::Format, [&] { load_digits(dir + "digits_text.csv.gz"); }, "text", "numbers");
  write_gz(dir + "digits_ok.csv.gz", row + "3\n" + row + "4\n");
  Dataset ok = load_digits(dir + "digits_ok.csv.gz");
  EXPECT_EQ(ok.y.get_i64(1), 4);
  for (const char* f : {"digits_short", "digits_label", "digits_text", "digits_ok"})
    std::filesystem::remove(dir + f + ".csv.gz");
}

}  // namespace
}  // namespace tessel::testing
