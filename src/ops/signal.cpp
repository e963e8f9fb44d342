// Shape rules of the Signal category (kernels pending: "fft").
//
//   Fft                c64 [..., n, ...] -> c64, transformed along `axis` (any n >= 1).
//   FftButterflyStage  (uncertain signature) one radix-2 decimation-in-time stage on the last
//                      axis: x c64 [..., n] with n a power of two (input in bit-reversed order),
//                      twiddles c64 [n/2] (W_n^j, j < n/2; stage s uses every n/2^(s+1)-th),
//                      0 <= stage < log2 n -> c64 [..., n].
//   LogMel             power [..., n_freq], mel_filters [n_mels, n_freq] -> [..., n_mels].
//   LogMelBackward     dy [..., n_mels], power, mel_filters -> dpower [..., n_freq].
//   WelchPeaks         (uncertain signature) real x [..., L] -> freqs, powers [..., k]: the k
//                      largest bins of the one-sided Welch PSD (Hann window, 50% overlap,
//                      segments of min(nperseg, L) as scipy does), freqs in cycles per sample.
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

void require_c64(const InferCtx& ctx, int i, const char* what) {
  if (ctx.in(i).dtype != DType::C64)
    ctx.fail(ErrorKind::DType, what, " must be c64 (complex), got ", ctx.in(i).str());
}

std::vector<TensorType> infer_fft(const InferCtx& ctx) {
  require_c64(ctx, 0, "x");
  const TensorType& x = ctx.in(0);
  if (x.rank() < 1) ctx.fail(ErrorKind::Shape, "x must have rank >= 1, got ", x.str());
  int axis = normalize_axis(ctx, ctx.attrs().i("axis"), x.rank());
  if (x.shape[axis] < 1)
    ctx.fail(ErrorKind::Shape, "the transformed axis ", axis, " is empty in ", x.str());
  return {x};
}

std::vector<TensorType> infer_butterfly(const InferCtx& ctx) {
  require_c64(ctx, 0, "x");
  require_c64(ctx, 1, "twiddles");
  const TensorType& x = ctx.in(0);
  if (x.rank() < 1) ctx.fail(ErrorKind::Shape, "x must have rank >= 1, got ", x.str());
  int64_t n = x.shape.back();
  if (n < 2 || (n & (n - 1)) != 0)
    ctx.fail(ErrorKind::Shape, "the last axis n=", n, " must be a power of two >= 2");
  int log2n = 0;
  while ((int64_t{1} << log2n) < n) ++log2n;
  if (ctx.in(1).shape != Shape{n / 2})
    ctx.fail(ErrorKind::Shape, "twiddles ", ctx.in(1).str(), " must be [n/2 = ", n / 2, "]");
  int64_t stage = ctx.attrs().i("stage");
  if (stage < 0 || stage >= log2n)
    ctx.fail(ErrorKind::Value, "stage=", stage, " must be in [0, log2 n = ", log2n, ")");
  return {x};
}

void check_eps(const InferCtx& ctx) {
  double eps = ctx.attrs().f("eps");
  if (!(eps > 0)) ctx.fail(ErrorKind::Value, "eps=", eps, " must be positive");
}

// power (input p) [..., n_freq] and mel_filters (input f) [n_mels, n_freq]; returns n_mels.
int64_t check_mel(const InferCtx& ctx, int p, int f) {
  require_dtype(ctx, p, dtypes::kFloat, "power");
  same_dtype(ctx, {p, f});
  const TensorType& power = ctx.in(p);
  const TensorType& filters = ctx.in(f);
  if (power.rank() < 1) ctx.fail(ErrorKind::Shape, "power must have rank >= 1, got ", power.str());
  if (filters.rank() != 2 || filters.shape[1] != power.shape.back())
    ctx.fail(ErrorKind::Shape, "mel_filters ", filters.str(),
             " must be [n_mels, n_freq = ", power.shape.back(), "]");
  return filters.shape[0];
}

std::vector<TensorType> infer_log_mel(const InferCtx& ctx) {
  check_eps(ctx);
  int64_t mels = check_mel(ctx, 0, 1);
  Shape y = ctx.in(0).shape;
  y.back() = mels;
  return {{ctx.in(0).dtype, y}};
}

std::vector<TensorType> infer_log_mel_backward(const InferCtx& ctx) {
  check_eps(ctx);
  int64_t mels = check_mel(ctx, 1, 2);
  same_dtype(ctx, {0, 1});
  Shape dy = ctx.in(1).shape;
  dy.back() = mels;
  if (ctx.in(0).shape != dy)
    ctx.fail(ErrorKind::Shape, "dy ", ctx.in(0).str(), " must be ", shape_str(dy));
  return {ctx.in(1)};
}

std::vector<TensorType> infer_welch_peaks(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat, "x (a real signal)");
  const TensorType& x = ctx.in(0);
  if (x.rank() < 1 || x.shape.back() < 1)
    ctx.fail(ErrorKind::Shape, "x must be [..., L] with L >= 1, got ", x.str());
  int64_t nperseg = ctx.attrs().i("nperseg"), k = ctx.attrs().i("k");
  if (nperseg < 1) ctx.fail(ErrorKind::Value, "nperseg=", nperseg, " must be positive");
  int64_t bins = std::min(nperseg, x.shape.back()) / 2 + 1;
  if (k < 1 || k > bins)
    ctx.fail(ErrorKind::Value, "k=", k, " must be in [1, ", bins, "] (the one-sided PSD bins)");
  Shape y = x.shape;
  y.back() = k;
  return {{x.dtype, y}, {x.dtype, y}};
}

}  // namespace

void register_rules_Signal(RuleTable& table) {
  table[OpKind::Fft].infer = infer_fft;
  table[OpKind::FftButterflyStage].infer = infer_butterfly;
  table[OpKind::LogMel].infer = infer_log_mel;
  table[OpKind::LogMelBackward].infer = infer_log_mel_backward;
  table[OpKind::WelchPeaks].infer = infer_welch_peaks;
}

}  // namespace tessel
