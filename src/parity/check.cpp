// Input preparation and output comparison for the parity harness.
#include "parity/check.h"

#include <cmath>
#include <complex>
#include <cstring>

namespace tessel::parity {
namespace {

// Copies every element of `src` into `dst` (same dtype and shape, any strides), bytewise.
void copy_elements(const HostTensor& src, const HostTensor& dst) {
  int r = src.rank();
  std::vector<int64_t> idx(r, 0);
  int64_t n = src.numel();
  size_t size = dtype_size(src.dtype);
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst.element_ptr(dst.offset_of(idx.data())),
                src.element_ptr(src.offset_of(idx.data())), size);
    for (int d = r - 1; d >= 0; --d) {
      if (++idx[d] < src.shape[d]) break;
      idx[d] = 0;
    }
  }
}

bool poison_bytes(const HostTensor& t, int64_t i) {
  const uint8_t* p = t.element_ptr(t.offset + i);
  for (int b = 0; b < dtype_size(t.dtype); ++b)
    if (p[b] != 0xFF) return false;
  return true;
}

}  // namespace

HostTensor to_cell_dtype(const HostTensor& t, DType dtype) {
  if (!t.storage) return t;
  HostTensor src = t.contiguous();
  HostTensor out = HostTensor::empty(dtype, src.shape);
  bool int_src = is_integer(src.dtype) || src.dtype == DType::Bool;
  int64_t n = src.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (int_src) {
      int64_t v = src.get_i64(i);
      if (dtype == DType::Bool)
        out.set_i64(i, v != 0);
      else if (is_integer(dtype))
        out.set_i64(i, v);
      else
        out.set_f64(i, static_cast<double>(v));
      continue;
    }
    double v = src.get_f64(i);
    if (dtype == DType::Bool)
      out.set_i64(i, v > 0);
    else if (is_integer(dtype))
      out.set_i64(i, std::llround(v * 3));
    else if (is_complex(dtype))
      out.set_c128(i, {v, 0.5 * src.get_f64((i * 7 + 3) % n)});
    else
      out.set_f64(i, v);
  }
  return out;
}

HostTensor strided_view(const HostTensor& t) {
  if (!t.storage || t.numel() == 0) return t;
  constexpr int64_t kPad = 3;
  HostTensor buf = HostTensor::empty(t.dtype, {t.numel() * 2 + kPad});
  HostTensor v = buf;
  v.offset = kPad;
  v.shape = t.shape;
  int r = t.rank();
  if (r < 2) {
    v.strides.assign(r, 2);  // every other element
  } else {
    // Row-major storage of the reversed shape, viewed back through reversed strides.
    Shape rev(t.shape.rbegin(), t.shape.rend());
    std::vector<int64_t> rs = contiguous_strides(rev);
    v.strides.assign(rs.rbegin(), rs.rend());
  }
  copy_elements(t, v);
  return v;
}

std::optional<HostTensor> stride0_view(const HostTensor& t) {
  if (!t.storage || t.rank() < 2 || t.shape[0] < 2) return std::nullopt;
  HostTensor v = t;
  v.strides[0] = 0;
  return v;
}

Tolerance tolerance(DType dtype, How how) {
  double widen = how == How::Decomposed ? 4 : 1;
  auto low = [&](double rtol, double nmse) {
    return Tolerance{rtol * widen, rtol * widen, nmse * widen * widen};
  };
  switch (dtype) {
    case DType::F64:
      return {1e-9, 1e-10, 1e-18};
    case DType::F32:
    case DType::C64:  // a decomposition chains several f32 roundings (e.g. attention blocks)
      return low(1e-5, 1e-10);
    case DType::F16:  // two ulp: both sides round once, from slightly different values
      return low(2e-3, 1e-6);
    case DType::BF16:
      return low(1.6e-2, 1e-4);
    case DType::F8E4M3FN:
    case DType::F8E4M3FNUZ:
      return low(0.25, 1e-2);
    case DType::F8E5M2:
    case DType::F8E5M2FNUZ:
    case DType::F4E2M1FNx2:
      return low(0.5, 4e-2);
    case DType::F8E8M0FNU:
      return low(1.0, 0.25);
    case DType::C128:
      return {1e-9, 1e-10, 1e-18};
    case DType::Bool:
    case DType::U8:
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
    case DType::U16:
    case DType::U32:
    case DType::U64:
      return {};
  }
  return {};
}

Comparison compare_output(const HostTensor& got, const HostTensor& want, const Tolerance& tol) {
  Comparison c;
  int64_t n = want.numel();
  auto fail = [&](FailureKind kind, int64_t i, double g, double w) {
    if (!c.failure) c.failure = CaseFailure{kind, "", "", 0, i, g, w, 0, 0, ""};
  };
  if (tol.exact()) {
    bool all_zero = true, want_nonzero = false;
    for (int64_t i = 0; i < n; ++i) {
      int64_t g = got.get_i64(i), w = want.get_i64(i);
      all_zero &= g == 0;
      want_nonzero |= w != 0;
      if (g != w) {
        double d = std::abs(static_cast<double>(g) - static_cast<double>(w));
        if (d > c.max_abs) c.max_abs = d;
        fail(poison_bytes(got, i) ? FailureKind::Unwritten : FailureKind::Mismatch, i,
             static_cast<double>(g), static_cast<double>(w));
      }
    }
    if (c.failure && all_zero && want_nonzero) c.failure->kind = FailureKind::AllZero;
    if (c.failure) c.failure->max_abs = c.max_abs;
    return c;
  }
  // Inexact: complex values compare as two reals.
  bool cplx = is_complex(want.dtype);
  auto value = [&](const HostTensor& t, int64_t i, int part) {
    if (!cplx) return t.get_f64(i);
    std::complex<double> z = t.get_c128(i);
    return part ? z.imag() : z.real();
  };
  double scale = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int part = 0; part < (cplx ? 2 : 1); ++part) {
      double w = value(want, i, part);
      if (std::isfinite(w)) scale = std::max(scale, std::abs(w));
    }
  double allowed_abs = tol.atol * (scale > 0 ? scale : 1);
  double err2 = 0, ref2 = 0, worst_ratio = 0;
  bool all_zero = true, want_nonzero = false;
  for (int64_t i = 0; i < n; ++i)
    for (int part = 0; part < (cplx ? 2 : 1); ++part) {
      double g = value(got, i, part), w = value(want, i, part);
      all_zero &= g == 0;
      want_nonzero |= w != 0;
      if (std::isnan(w) || std::isnan(g)) {
        if (std::isnan(w) && std::isnan(g)) continue;
        fail(std::isnan(g) && poison_bytes(got, i) ? FailureKind::Unwritten
                                                   : FailureKind::NanMismatch,
             i, g, w);
        continue;
      }
      if (std::isinf(w) || std::isinf(g)) {
        if (g != w) fail(FailureKind::Mismatch, i, g, w);
        continue;
      }
      double d = std::abs(g - w);
      err2 += d * d;
      ref2 += w * w;
      c.max_abs = std::max(c.max_abs, d);
      double ratio = d / (allowed_abs + tol.rtol * std::abs(w));
      if (ratio > worst_ratio) {
        worst_ratio = ratio;
        if (ratio > 1 && !c.failure)
          c.failure = CaseFailure{FailureKind::Mismatch, "", "", 0, i, g, w, 0, 0, ""};
        else if (ratio > 1 && c.failure->kind == FailureKind::Mismatch) {
          c.failure->index = i;  // keep the worst element
          c.failure->got = g;
          c.failure->want = w;
        }
      }
    }
  c.nmse = ref2 > 0 ? err2 / ref2 : err2;
  if (!c.failure && c.nmse > tol.nmse && ref2 > 0)
    c.failure = CaseFailure{FailureKind::Mismatch,
                            "",
                            "",
                            0,
                            -1,
                            0,
                            0,
                            0,
                            0,
                            "normalized error above the dtype's bound"};
  if (c.failure && all_zero && want_nonzero) c.failure->kind = FailureKind::AllZero;
  if (c.failure) {
    c.failure->max_abs = c.max_abs;
    c.failure->nmse = c.nmse;
  }
  return c;
}

}  // namespace tessel::parity
