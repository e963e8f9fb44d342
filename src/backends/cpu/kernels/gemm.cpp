// GEMM (gemm.h). Plain loops for now.
#include "backends/cpu/gemm.h"

TESSEL_ISA_BEGIN
namespace {
template <class T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_rs, int64_t a_cs, const T* b,
          int64_t b_rs, int64_t b_cs, T beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += a[i * a_rs + p * a_cs] * b[p * b_rs + j * b_cs];
      c[i * ldc + j] = beta == T(0) ? acc : c[i * ldc + j] + acc;
    }
}
}  // namespace

void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs,
              const float* b, int64_t b_rs, int64_t b_cs, float beta, float* c, int64_t ldc) {
  gemm(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, ldc);
}
void gemm_f64(int64_t m, int64_t n, int64_t k, const double* a, int64_t a_rs, int64_t a_cs,
              const double* b, int64_t b_rs, int64_t b_cs, double beta, double* c, int64_t ldc) {
  gemm(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, ldc);
}
TESSEL_ISA_END
