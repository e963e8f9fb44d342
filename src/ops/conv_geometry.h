// The window geometry of the convolution and pooling kinds (Conv, ConvTranspose2d, Im2Col, Pool
// and the Backward kinds that differentiate them): per-spatial-dim attributes with their defaults,
// pads, and the output size of a sliding window. The shape rules (ops/conv_pool.cpp,
// ops/backward.cpp) read the checked_* forms, which fail through the InferCtx; the kernels and
// the VJP rules read the plain forms of attributes those rules have already checked.
//
// Attributes: strides / dilations are empty (all 1; a pool's strides default to its kernel) or
// one per spatial dim; pads are empty (zeros), one per spatial dim (symmetric) or ONNX-style
// [begins..., ends...].
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace tessel {

// An ints attribute with its default filled in: empty → n copies of `fill`.
inline std::vector<int64_t> window_attr(const Attrs& a, const char* name, int n, int64_t fill) {
  std::vector<int64_t> v = a.ints(name);
  if (v.empty()) v.assign(n, fill);
  return v;
}

struct WindowPads {
  std::vector<int64_t> begin, end;
  // As one ONNX-style attribute: [begins..., ends...].
  std::vector<int64_t> begin_end() const {
    std::vector<int64_t> v = begin;
    v.insert(v.end(), end.begin(), end.end());
    return v;
  }
};

// The pads attribute over n spatial dims: empty, n (symmetric) or 2n (begins, then ends).
inline WindowPads window_pads(const Attrs& a, int n) {
  const std::vector<int64_t>& v = a.ints("pads");
  WindowPads p{std::vector<int64_t>(n, 0), std::vector<int64_t>(n, 0)};
  if (v.empty()) return p;
  bool symmetric = static_cast<int>(v.size()) == n;
  for (int d = 0; d < n; ++d) {
    p.begin[d] = v[d];
    p.end[d] = symmetric ? v[d] : v[n + d];
  }
  return p;
}

// A window's strides, dilations and pads over its spatial dims, defaults filled in.
struct WindowAttrs {
  std::vector<int64_t> strides, dilations;
  WindowPads pads;
};

// strides default to `default_strides` (a convolution's: all 1; a pool's: its kernel).
inline WindowAttrs window_attrs(const Attrs& a, int n,
                                const std::vector<int64_t>& default_strides) {
  return {a.ints("strides").empty() ? default_strides : a.ints("strides"),
          window_attr(a, "dilations", n, 1), window_pads(a, n)};
}
inline WindowAttrs conv_window_attrs(const Attrs& a, int n) {
  return window_attrs(a, n, std::vector<int64_t>(n, 1));
}
// A kernel pool's window (strides default to "kernel"); an adaptive pool, which has no kernel,
// gets unit strides.
inline WindowAttrs pool_window_attrs(const Attrs& a, int n) {
  const std::vector<int64_t>& kernel = a.ints("kernel");
  return window_attrs(a, n, kernel.empty() ? std::vector<int64_t>(n, 1) : kernel);
}

// Output length of a sliding window along one dim: floor((in + pb + pe − dil·(k − 1) − 1) /
// stride) + 1, or with ceil_mode PyTorch's rule (round up, but the last window must start inside
// the input or the left padding). 0 when the dilated kernel does not fit the padded input.
inline int64_t window_out_size(int64_t in, int64_t pb, int64_t pe, int64_t k, int64_t stride,
                               int64_t dil, bool ceil_mode = false) {
  int64_t span = in + pb + pe - dil * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t n = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (n - 1) * stride >= in + pb) --n;
  return n;
}

// Output length of a transposed convolution along one dim (the input length of the convolution
// it is the adjoint of); below 1 when the pads cut everything.
inline int64_t transposed_out_size(int64_t in, int64_t pb, int64_t pe, int64_t k, int64_t stride,
                                   int64_t dil, int64_t output_padding) {
  return (in - 1) * stride - pb - pe + dil * (k - 1) + output_padding + 1;
}

// ---- Checked forms, for the shape rules
// ----------------------------------------------------------

// An ints attribute that is empty (→ n copies of `fill`) or has one entry per spatial dim, each
// >= `min`.
inline std::vector<int64_t> checked_window_attr(const InferCtx& ctx, const char* name, int n,
                                                int64_t fill, int64_t min) {
  const std::vector<int64_t>& v = ctx.attrs().ints(name);
  if (v.empty()) return std::vector<int64_t>(n, fill);
  if (static_cast<int>(v.size()) != n)
    ctx.fail(ErrorKind::Value, name, " ", shape_str(v), " must be empty or have ", n,
             " entries (one per spatial dim)");
  for (int64_t e : v)
    if (e < min) ctx.fail(ErrorKind::Value, name, " ", shape_str(v), " must all be >= ", min);
  return v;
}

// pads: empty, one per spatial dim (symmetric) or, when `allow_begin_end`, [begins..., ends...];
// every entry >= 0.
inline WindowPads checked_window_pads(const InferCtx& ctx, int n, bool allow_begin_end) {
  const std::vector<int64_t>& v = ctx.attrs().ints("pads");
  bool symmetric = static_cast<int>(v.size()) == n;
  bool begin_end = allow_begin_end && static_cast<int>(v.size()) == 2 * n;
  if (!v.empty() && !symmetric && !begin_end) {
    if (allow_begin_end)
      ctx.fail(ErrorKind::Value, "pads ", shape_str(v), " must be empty, have ", n,
               " entries (symmetric) or ", 2 * n, " (ONNX begins then ends)");
    ctx.fail(ErrorKind::Value, "pads ", shape_str(v), " must be empty or have ", n,
             " entries (symmetric)");
  }
  for (int64_t e : v)
    if (e < 0) ctx.fail(ErrorKind::Value, "pads ", shape_str(v), " must all be >= 0");
  return window_pads(ctx.attrs(), n);
}

// window_out_size, failing (Shape) when the output of spatial dim d would be empty.
inline int64_t checked_window_out_size(const InferCtx& ctx, int d, int64_t in, int64_t pb,
                                       int64_t pe, int64_t k, int64_t stride, int64_t dil,
                                       bool ceil_mode = false) {
  int64_t n = window_out_size(in, pb, pe, k, stride, dil, ceil_mode);
  if (n < 1)
    ctx.fail(ErrorKind::Shape, "spatial dim ", d, ": padded input ", in, " + ", pb, " + ", pe,
             " is smaller than the dilated kernel ", dil * (k - 1) + 1,
             "; the output would be empty");
  return n;
}

}  // namespace tessel
