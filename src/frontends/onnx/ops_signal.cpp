// Signal-processing ONNX ops: DFT, STFT, MelWeightMatrix, HannWindow, HammingWindow,
// BlackmanWindow.
//
// Tessel's Fft kind is still pending, so DFTs are MatMuls with twiddle matrices built from the
// shapes; windows and mel matrices depend only on their sizes and are constants.
#include <cmath>
#include <numbers>
#include <utility>

#include "frontends/onnx/convert_util.h"

namespace tessel::onnx {
namespace {

// --- signal: DFT, STFT, MelWeightMatrix --------------------------------------------------------

// The DFT of (re, im) along their last axis (length n; im may be undefined: a real signal), in
// f64, as a MatMul with twiddle matrices built from the length: returns (re, im) of
// `bins` outputs.
std::pair<Tensor, Tensor> dft_last_axis(const NodeCtx& ctx, Tensor re, Tensor im, int64_t n,
                                        int64_t bins, bool inverse) {
  std::vector<double> cosv(static_cast<size_t>(n * bins)), sinv(cosv.size());
  for (int64_t j = 0; j < n; ++j)
    for (int64_t k = 0; k < bins; ++k) {
      // (j·k) mod n keeps the angle exact for long transforms.
      const double a = 2 * std::numbers::pi * static_cast<double>((j * k) % n) / n;
      cosv[j * bins + k] = std::cos(a);
      sinv[j * bins + k] = std::sin(a);
    }
  Tensor cm = ctx.constant(HostTensor::from_vector(DType::F64, {n, bins}, cosv));
  Tensor sm = ctx.constant(HostTensor::from_vector(DType::F64, {n, bins}, sinv));
  Shape lead = re.shape();
  lead.pop_back();
  const int64_t rows = shape_numel(lead);
  auto mm = [&](const Tensor& a, const Tensor& m) { return matmul(reshape(a, {rows, n}), m); };
  // forward: e^{-iθ}; inverse: e^{+iθ} / n.
  Tensor out_re = mm(re, cm), out_im = -mm(re, sm);
  if (inverse) out_im = -out_im;
  if (im.defined()) {
    out_re = inverse ? out_re - mm(im, sm) : out_re + mm(im, sm);
    out_im = out_im + mm(im, cm);
  }
  if (inverse) {
    Tensor scale = ctx.scalar_tensor(1.0 / static_cast<double>(n), DType::F64);
    out_re = out_re * scale, out_im = out_im * scale;
  }
  Shape out = lead;
  out.push_back(bins);
  return {reshape(out_re, out), reshape(out_im, out)};
}

// Splits [..., 1 | 2] into f64 real and (maybe) imaginary parts.
std::pair<Tensor, Tensor> complex_parts(const NodeCtx& ctx, const Tensor& x, const char* what) {
  require_float(ctx, x, what);
  const int64_t c = x.rank() ? x.shape().back() : 0;
  if (c != 1 && c != 2)
    ctx.fail(ErrorKind::Shape, what, " ", Value(x).describe(),
             " must end in a dimension of 1 (real) or 2 (complex)");
  const int64_t last = x.rank() - 1;
  Tensor re = take_slice(cast(x, DType::F64), last, 0);
  Tensor im = c == 2 ? take_slice(cast(x, DType::F64), last, 1) : Tensor();
  return {re, im};
}

std::vector<Value> dft(NodeCtx& ctx) {
  Tensor x = ctx.in(0);
  auto [re, im] = complex_parts(ctx, x, "input");
  const int64_t rank = x.rank();
  int64_t axis =
      ctx.opset() >= 20 ? (ctx.has(2) ? host_int(ctx, 2, "axis") : -2) : ctx.attr_int("axis", 1);
  axis = normalize_axis(ctx, axis, rank);
  if (axis == rank - 1)
    ctx.fail(ErrorKind::Value, "axis ", axis, " is the real / imaginary axis, not a signal axis");
  const bool inverse = ctx.attr_int("inverse", 0) != 0;
  const bool onesided = ctx.attr_int("onesided", 0) != 0;
  int64_t n = x.shape()[axis];
  if (ctx.has(1)) {
    const int64_t len = host_int(ctx, 1, "dft_length");
    if (len < 1) ctx.fail(ErrorKind::Value, "dft_length ", len, " must be positive");
    n = len;
  }
  // Move the signal axis last, then pad or truncate it to n.
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank - 1; ++i)
    if (i != axis) perm.push_back(i);
  perm.push_back(axis);
  auto fit = [&](Tensor t) {
    t = transpose(t, perm);
    const int64_t have = t.shape().back(), last = t.rank() - 1;
    if (have > n) t = narrow(t, last, 0, n);
    if (have < n) {
      std::vector<int64_t> pads(2 * static_cast<size_t>(t.rank()), 0);
      pads[t.rank() + last] = n - have;
      t = pad(t, pads);
    }
    return t;
  };
  re = fit(re);
  if (im.defined()) im = fit(im);
  const int64_t bins = onesided ? n / 2 + 1 : n;
  auto [yr, yi] = dft_last_axis(ctx, re, im, n, bins, inverse);
  std::vector<int64_t> back(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) back[perm[i]] = static_cast<int64_t>(i);
  Tensor y = stack(ctx, {transpose(yr, back), transpose(yi, back)}, rank - 1);
  return {cast(y, x.dtype())};
}

std::vector<Value> stft(NodeCtx& ctx) {
  Tensor signal = ctx.in(0);
  if (signal.rank() != 3)
    ctx.fail(ErrorKind::Shape, "signal ", Value(signal).describe(),
             " must be [batch, length, 1 | 2]");
  auto [re, im] = complex_parts(ctx, signal, "signal");
  const int64_t length = signal.shape()[1];
  const int64_t step = host_int(ctx, 1, "frame_step");
  if (step < 1) ctx.fail(ErrorKind::Value, "frame_step ", step, " must be positive");
  Tensor window = ctx.has(2) ? ctx.in(2) : Tensor();
  int64_t frame = -1;
  if (window.defined()) {
    if (window.rank() != 1) ctx.fail(ErrorKind::Shape, "window must be 1-D");
    frame = window.shape()[0];
  }
  if (ctx.has(3)) {
    const int64_t fl = host_int(ctx, 3, "frame_length");
    if (frame >= 0 && fl != frame)
      ctx.fail(ErrorKind::Shape, "frame_length ", fl, " differs from the window's ", frame);
    frame = fl;
  }
  if (frame < 1 || frame > length)
    ctx.fail(ErrorKind::Value, "frame length ", frame, " must be in [1, ", length,
             "] (give a window or frame_length)");
  const int64_t frames = (length - frame) / step + 1;
  std::vector<int64_t> idx(static_cast<size_t>(frames * frame));
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < frame; ++j) idx[f * frame + j] = f * step + j;
  Tensor index = ctx.constant(HostTensor::from_vector(DType::I64, {frames, frame}, idx));
  auto framed = [&](const Tensor& t) {  // [B, L] -> [B, frames, frame], windowed
    Tensor v = take(t, index, 1);
    if (window.defined()) v = v * reshape(cast(window, DType::F64), {1, 1, frame});
    return v;
  };
  re = framed(re);
  if (im.defined()) im = framed(im);
  const bool onesided = ctx.attr_int("onesided", 1) != 0;
  const int64_t bins = onesided ? frame / 2 + 1 : frame;
  auto [yr, yi] = dft_last_axis(ctx, re, im, frame, bins, false);
  return {cast(stack(ctx, {yr, yi}, 3), signal.dtype())};
}

std::vector<Value> mel_weight_matrix(NodeCtx& ctx) {
  const int64_t mels = host_int(ctx, 0, "num_mel_bins");
  const int64_t dft_length = host_int(ctx, 1, "dft_length");
  const int64_t rate = host_int(ctx, 2, "sample_rate");
  const double lo_hz = ctx.scalar(3), hi_hz = ctx.scalar(4);
  if (mels < 1 || dft_length < 1 || rate < 1)
    ctx.fail(ErrorKind::Value, "num_mel_bins, dft_length and sample_rate must be positive");
  if (!(lo_hz >= 0 && hi_hz > lo_hz))
    ctx.fail(ErrorKind::Value, "edges ", lo_hz, " and ", hi_hz,
             " Hz must satisfy 0 <= lower < upper");
  const int64_t spectrum = dft_length / 2 + 1;
  // The operator's reference: mel points evenly spaced (in f32, as the reference's float
  // inputs) between the edges, mapped back to FFT bins.
  const float lo_mel = 2595.0f * std::log10(1.0f + static_cast<float>(lo_hz) / 700.0f);
  const float hi_mel = 2595.0f * std::log10(1.0f + static_cast<float>(hi_hz) / 700.0f);
  const float step = (hi_mel - lo_mel) / static_cast<float>(mels + 2);
  std::vector<int64_t> bin(static_cast<size_t>(mels + 2));
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double mel = static_cast<double>(i) * step + lo_mel;
    const double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
    bin[i] = to_int64(ctx, std::floor((dft_length + 1) * hz / rate), "mel bin");
  }
  HostTensor out =
      HostTensor::empty(onnx_dtype(ctx, ctx.attr_int("output_datatype", 1)), {spectrum, mels});
  auto set = [&](int64_t j, int64_t i, double v) {
    if (j < 0 || j >= spectrum)
      ctx.fail(ErrorKind::Value, "mel bin ", i, " reaches FFT bin ", j, " outside [0, ", spectrum,
               "); is upper_edge_hertz above sample_rate / 2?");
    out.set_f64(j * mels + i, v);
  };
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t left = bin[i], center = bin[i + 1], right = bin[i + 2];
    if (center == left)
      set(center, i, 1);
    else
      for (int64_t j = left; j <= center; ++j)
        set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
    for (int64_t j = center; j < right; ++j)
      set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
  }
  return {ctx.constant(std::move(out))};
}

// Hann / Hamming / Blackman: a0 - a1·cos(2πn/D) + a2·cos(4πn/D), D = N (periodic) or N - 1.
// The window depends only on its size and attributes, so it is a constant.
std::vector<Value> cosine_window(NodeCtx& ctx, double a0, double a1, double a2) {
  const int64_t n = host_int(ctx, 0, "size");
  if (n < 0) ctx.fail(ErrorKind::Value, "size ", n, " must be non-negative");
  const bool periodic = ctx.attr_int("periodic", 1) != 0;
  const double d = static_cast<double>(periodic ? n : n - 1);
  HostTensor w = HostTensor::empty(onnx_dtype(ctx, ctx.attr_int("output_datatype", 1)), {n});
  for (int64_t i = 0; i < n; ++i) {
    const double a = d > 0 ? 2 * std::numbers::pi * static_cast<double>(i) / d : 0.0;
    w.set_f64(i, a0 - a1 * std::cos(a) + a2 * std::cos(2 * a));
  }
  return {ctx.constant(std::move(w))};
}
std::vector<Value> hann_window(NodeCtx& ctx) { return cosine_window(ctx, 0.5, 0.5, 0); }
std::vector<Value> hamming_window(NodeCtx& ctx) {
  return cosine_window(ctx, 25.0 / 46.0, 21.0 / 46.0, 0);
}
std::vector<Value> blackman_window(NodeCtx& ctx) { return cosine_window(ctx, 0.42, 0.5, 0.08); }

constexpr Converter kConverters[] = {
    {"", "DFT", dft},
    {"", "STFT", stft},
    {"", "MelWeightMatrix", mel_weight_matrix},
    {"", "HannWindow", hann_window},
    {"", "HammingWindow", hamming_window},
    {"", "BlackmanWindow", blackman_window},
};

}  // namespace

std::span<const Converter> signal_converters() { return kConverters; }

}  // namespace tessel::onnx
