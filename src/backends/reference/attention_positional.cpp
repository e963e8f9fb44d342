// Reference kernels of the AttentionPositional category: scaled dot-product attention (every
// MaskKind, GQA/MQA), rotary embeddings (NeoX / GPT-J, 2-D axial) and ALiBi biases. Inputs are
// read into row-major f64 vectors; every output element is written once, rounded to its dtype.
#include <cmath>
#include <limits>

#include "backends/reference/kernels.h"
#include "ops/positional_params.h"

namespace tessel::reference {
namespace {

// ---------------------------------------------------------------------------------------------
// Attention

// The mask input as [B, Hq, Sq, Sk] values; a rank-2 mask is [B, Sk] (key padding), seen as
// [B, 1, 1, Sk].
std::vector<double> mask_values(const HostTensor& mask, const Shape& scores) {
  HostTensor m = mask;
  if (m.rank() == 2) {
    m.shape = {mask.shape[0], 1, 1, mask.shape[1]};
    m.strides = {mask.strides[0], 0, 0, mask.strides[1]};
  }
  return broadcast_to(m, scores).to_f64();
}

// softmax(scale · q kᵀ + bias, masked) · v per (b, h, i), in f64 with the row max subtracted.
// A query row that sees no key (all masked, or every score -inf) outputs zeros — the
// flash-attention convention — instead of the NaN that 0/0 would give.
void attention(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor &q = in[0], &k = in[1], &v = in[2];
  const int64_t batch = q.shape[0], hq = q.shape[1], sq = q.shape[2], d = q.shape[3];
  const int64_t hkv = k.shape[1], sk = k.shape[2], dv = v.shape[3];
  const int64_t group = hkv == 0 ? 1 : hq / hkv;  // query head h reads kv head h / group
  const auto kind = node.attrs.e<MaskKind>("mask_kind");
  const int64_t window = node.attrs.i("window");
  double scale = node.attrs.f("scale");
  if (scale == 0) scale = d > 0 ? 1.0 / std::sqrt(static_cast<double>(d)) : 1.0;

  const std::vector<double> qv = q.to_f64(), kv = k.to_f64(), vv = v.to_f64();
  const Shape scores_shape = {batch, hq, sq, sk};
  std::vector<double> mask;
  if (in.size() > 3 && present(in[3])) mask = mask_values(in[3], scores_shape);

  const int64_t offset = sk - sq;  // bottom-right alignment of causal masks
  std::vector<double> score(static_cast<size_t>(sk));
  std::vector<bool> visible(static_cast<size_t>(sk));
  std::vector<double> acc(static_cast<size_t>(dv));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t kh = h / group;
      for (int64_t i = 0; i < sq; ++i) {
        const int64_t row = ((b * hq + h) * sq + i) * sk;  // into [B, Hq, Sq, Sk]
        double max_score = -std::numeric_limits<double>::infinity();
        bool any = false;
        for (int64_t j = 0; j < sk; ++j) {
          bool keep = true;
          switch (kind) {
            case MaskKind::None:
              break;
            case MaskKind::Causal:
              keep = j <= i + offset;
              break;
            case MaskKind::SlidingWindow:
              keep = j <= i + offset && j >= i + offset - window;
              break;
            case MaskKind::Custom:
              keep = mask[row + j] != 0;
              break;
            case MaskKind::Bias:
              break;
          }
          visible[j] = keep;
          if (!keep) continue;
          double dot = 0;
          for (int64_t c = 0; c < d; ++c)
            dot += qv[((b * hq + h) * sq + i) * d + c] * kv[((b * hkv + kh) * sk + j) * d + c];
          score[j] = scale * dot + (kind == MaskKind::Bias ? mask[row + j] : 0.0);
          // A -inf bias masks its key too. NaN scores count as seen, so they propagate.
          if (score[j] == -std::numeric_limits<double>::infinity()) visible[j] = false;
          if (visible[j]) any = true;
          if (score[j] > max_score) max_score = score[j];
        }
        std::fill(acc.begin(), acc.end(), 0.0);
        if (any) {
          double total = 0;
          for (int64_t j = 0; j < sk; ++j) {
            if (!visible[j]) continue;
            double w = std::exp(score[j] - max_score);
            total += w;
            for (int64_t c = 0; c < dv; ++c) acc[c] += w * vv[((b * hkv + kh) * sk + j) * dv + c];
          }
          for (double& a : acc) a /= total;
        }
        for (int64_t c = 0; c < dv; ++c) out[0].set_f64(((b * hq + h) * sq + i) * dv + c, acc[c]);
      }
    }
}

// ---------------------------------------------------------------------------------------------
// Rotary embeddings

// Rotates the channel pair (a, b) of row `base` by angle theta: (a cos − b sin, a sin + b cos).
void rotate_pair(std::vector<double>& x, int64_t a, int64_t b, double theta) {
  double xa = x[a], xb = x[b], c = std::cos(theta), s = std::sin(theta);
  x[a] = xa * c - xb * s;
  x[b] = xa * s + xb * c;
}

// Rope on x [..., S, D]: θ_i = pos · base^(−2i / rotary_dim) for i < rotary_dim / 2, rotating
// pairs (i, i + rotary_dim/2) (NeoX) or (2i, 2i + 1) (GPT-J); channels >= rotary_dim pass through.
void rope(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const int64_t seq = x.shape[x.rank() - 2], dim = x.shape[x.rank() - 1];
  const int64_t rotary = rope_rotary_dim(node, dim);
  const int64_t half = rotary / 2;
  const double base = node.attrs.f("base");
  const auto style = node.attrs.e<RopeStyle>("style");
  const bool has_positions = in.size() > 1 && present(in[1]);
  std::vector<double> v = x.to_f64();
  const int64_t rows = seq * dim == 0 ? 0 : x.numel() / dim;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t s = r % seq;
    const double pos = has_positions ? in[1].get_f64(s) : static_cast<double>(s);
    for (int64_t i = 0; i < half; ++i) {
      const double theta = pos * rope_frequency(base, i, rotary);
      switch (style) {
        case RopeStyle::NeoX:
          rotate_pair(v, r * dim + i, r * dim + i + half, theta);
          break;
        case RopeStyle::GptJ:
          rotate_pair(v, r * dim + 2 * i, r * dim + 2 * i + 1, theta);
          break;
      }
    }
  }
  for (int64_t i = 0; i < out[0].numel(); ++i) out[0].set_f64(i, v[i]);
}

// AxialRope2d on x [..., N, D], N = grid_h · grid_w, token n at row r = n / grid_w and column
// c = n % grid_w: channels [0, D/2) rotate by r, channels [D/2, D) by c, each half with GPT-J
// (interleaved) pairs and frequencies base^(−2i / (D/2)), i < D/4. This is the EVA-02 / "axial"
// 2-D RoPE convention (VisionRotaryEmbedding: freqs_h ‖ freqs_w, rotate_half interleaved).
void axial_rope2d(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& x = in[0];
  const int64_t n_tokens = x.shape[x.rank() - 2], dim = x.shape[x.rank() - 1];
  const int64_t grid_w = node.attrs.i("grid_w");
  const double base = node.attrs.f("base");
  const int64_t half = dim / 2;
  std::vector<double> v = x.to_f64();
  const int64_t rows = n_tokens * dim == 0 ? 0 : x.numel() / dim;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r % n_tokens;
    const double row_pos = static_cast<double>(n / grid_w);
    const double col_pos = static_cast<double>(n % grid_w);
    for (int64_t i = 0; i < dim / 4; ++i) {
      const double freq = rope_frequency(base, i, half);
      rotate_pair(v, r * dim + 2 * i, r * dim + 2 * i + 1, row_pos * freq);
      rotate_pair(v, r * dim + half + 2 * i, r * dim + half + 2 * i + 1, col_pos * freq);
    }
  }
  for (int64_t i = 0; i < out[0].numel(); ++i) out[0].set_f64(i, v[i]);
}

// ---------------------------------------------------------------------------------------------
// ALiBi

// scores [B, H, Sq, Sk] + slope_h · (j − i − (Sk − Sq)): the key's distance from the query,
// with queries aligned to the last keys (as the causal mask), so it is <= 0 where causal.
void alibi(const Node& node, std::span<const HostTensor> in, std::span<HostTensor> out) {
  const HostTensor& s = in[0];
  const int64_t heads = s.shape[1], sq = s.shape[2], sk = s.shape[3];
  const double max_bias = node.attrs.f("max_bias");
  for_each_index(s.shape, [&](const std::vector<int64_t>& idx) {
    const double slope = alibi_slope(idx[1], heads, max_bias);
    const double dist = static_cast<double>(idx[3] - idx[2] - (sk - sq));
    const int64_t linear = ((idx[0] * heads + idx[1]) * sq + idx[2]) * sk + idx[3];
    out[0].set_f64(linear, at_f64(s, idx) + slope * dist);
  });
}

}  // namespace

void register_AttentionPositional(Registry& r) {
  r.native(OpKind::Attention, attention, kFloats);
  r.native(OpKind::Rope, rope, kFloats);
  r.native(OpKind::AxialRope2d, axial_rope2d, kFloats);
  r.native(OpKind::ALiBi, alibi, kFloats);
}

}  // namespace tessel::reference
