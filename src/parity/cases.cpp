// Case generator plumbing: test-data helpers and the dispatch from a kind's category to the file
// that generates its cases.
#include "parity/cases.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tessel::parity {

uint64_t CaseRng::next() {
  s_ += 0x9e3779b97f4a7c15ull;
  uint64_t z = s_;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double CaseRng::uniform(double lo, double hi) {
  return lo + (hi - lo) * (static_cast<double>(next() >> 11) / 9007199254740992.0);
}

int64_t CaseRng::below(int64_t n) {
  return n <= 0 ? 0 : static_cast<int64_t>(next() % static_cast<uint64_t>(n));
}

HostTensor uniform(const Shape& shape, CaseRng& rng, double lo, double hi) {
  HostTensor t = HostTensor::empty(DType::F64, shape);
  auto* p = reinterpret_cast<double*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = rng.uniform(lo, hi);
  return t;
}

HostTensor grid(const Shape& shape, CaseRng& rng, double lo, double hi) {
  HostTensor t = uniform(shape, rng, lo, hi);
  auto* p = reinterpret_cast<double*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = std::round(p[i] * 2) / 2;
  return t;
}

HostTensor indices(const Shape& shape, CaseRng& rng, int64_t lo, int64_t hi) {
  HostTensor t = HostTensor::empty(DType::I64, shape);
  auto* p = reinterpret_cast<int64_t*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = lo + rng.below(hi - lo);
  return t;
}

HostTensor bools(const Shape& shape, CaseRng& rng, double p_true) {
  HostTensor t = HostTensor::empty(DType::Bool, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = rng.uniform(0, 1) < p_true;
  return t;
}

HostTensor distinct_indices(int64_t rows, int64_t n, int64_t count, CaseRng& rng) {
  HostTensor t = HostTensor::empty(DType::I64, {rows, count});
  auto* p = reinterpret_cast<int64_t*>(t.data());
  std::vector<int64_t> perm(n);
  for (int64_t r = 0; r < rows; ++r) {
    std::iota(perm.begin(), perm.end(), 0);
    for (int64_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
    for (int64_t c = 0; c < count; ++c) p[r * count + c] = perm[c];
  }
  return t;
}

Case make_case(std::string name, Attrs attrs, std::vector<HostTensor> inputs,
               std::vector<bool> castable) {
  return Case{
      std::move(name), std::move(attrs), std::move(inputs), std::move(castable), "", true, {}};
}

Shape elem_shape(const Draw& d) {
  if (d.scalar) return {};
  if (d.vector) return {d.n};
  return {d.b, d.m, d.n};
}

std::pair<double, double> activation_domain(int activation_kind) {
  switch (static_cast<ActivationKind>(activation_kind)) {
    case ActivationKind::Log:
    case ActivationKind::Sqrt:
    case ActivationKind::Rsqrt:
    case ActivationKind::Reciprocal:
      return {0.25, 3};
    case ActivationKind::Acosh:
      return {1.1, 3};
    case ActivationKind::Asin:
    case ActivationKind::Acos:
    case ActivationKind::Atanh:
      return {-0.9, 0.9};
    case ActivationKind::Log1p:
      return {-0.5, 2};
    case ActivationKind::Tan:  // away from the poles at ±π/2
      return {-1.2, 1.2};
    default:
      return {-2, 2};
  }
}

std::vector<Case> cases_for(OpKind kind, int variant, const Draw& d, CaseRng& rng) {
  switch (op_info(kind).category) {
    case Category::Elementwise:
    case Category::FusionRegions:
      return cases_elementwise(kind, variant, d, rng);
    case Category::ShapeMovement:
      return cases_shape(kind, variant, d, rng);
    case Category::ReductionIndexing:
    case Category::Random:
      return cases_reduction(kind, variant, d, rng);
    case Category::LinearAlgebra:
    case Category::FusedComposites:
      return cases_linalg(kind, variant, d, rng);
    case Category::Normalization:
    case Category::AttentionPositional:
    case Category::ConvPool:
    case Category::Backward:
    case Category::LossesMetrics:
      return cases_nn(kind, variant, d, rng);
    case Category::Training:
      return cases_training(kind, variant, d, rng);
    // No ready kinds yet in these categories: no generators.
    case Category::Sources:
    case Category::QuantInference:
    case Category::QuantQat:
    case Category::Sequence:
    case Category::ControlFlow:
    case Category::Complex:
    case Category::Signal:
    case Category::Splatting:
    case Category::UserExtensible:
    case Category::Hawkes:
    case Category::Vsa:
    case Category::ActiveInference:
    case Category::PredictiveCoding:
    case Category::MarkovBlanket:
    case Category::Causal:
    case Category::Physics:
      return {};
  }
  return {};
}

}  // namespace tessel::parity
