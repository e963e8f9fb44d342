#include "ops/cast_elements.h"

#include <bit>
#include <cmath>
#include <complex>

namespace tessel {
namespace {

bool is_exact(DType t) { return is_integer(t) || t == DType::Bool; }

// One correct rounding of an integer (u64's bits read as unsigned) into a float/complex element.
void store_integer_as_float(const HostTensor& y, int64_t i, int64_t bits, bool is_unsigned,
                            bool saturate) {
  bool negative = !is_unsigned && bits < 0;
  uint64_t m = negative ? 0 - static_cast<uint64_t>(bits) : static_cast<uint64_t>(bits);
  double d = (y.dtype == DType::F64 || y.dtype == DType::C128) ? static_cast<double>(m)
                                                               : round_to_odd_f64(m);
  y.set_f64(i, negative ? -d : d, saturate);
}

}  // namespace

double round_to_odd_f64(uint64_t m) {
  int width = std::bit_width(m);
  if (width <= 53) return static_cast<double>(m);
  int shift = width - 53;
  uint64_t q = m >> shift;
  if (m & ((uint64_t{1} << shift) - 1)) q |= 1;
  return std::ldexp(static_cast<double>(q), shift);
}

void cast_elements(const HostTensor& x, const HostTensor& y, bool saturate) {
  const DType from = x.dtype, to = y.dtype;
  for (int64_t i = 0; i < y.numel(); ++i) {
    if (is_complex(from) && is_complex(to)) {
      y.set_c128(i, x.get_c128(i));
    } else if (is_complex(from) && to == DType::Bool) {
      y.set_i64(i, x.get_c128(i) != std::complex<double>(0.0, 0.0));  // as PyTorch
    } else if (is_complex(from)) {
      y.set_f64(i, x.get_c128(i).real(), saturate);  // the imaginary part is dropped
    } else if (is_exact(from) && is_exact(to)) {
      y.set_i64(i, x.get_i64(i));  // two's-complement wrap; bool: nonzero
    } else if (is_exact(from)) {
      store_integer_as_float(y, i, x.get_i64(i), dtype_kind(from) == DTypeKind::Unsigned, saturate);
    } else {
      y.set_f64(i, x.get_f64(i), saturate);  // to integers: truncate toward zero, then wrap
    }
  }
}

}  // namespace tessel
