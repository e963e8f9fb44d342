// Case generators of the parity harness: per kind, valid inputs and attributes for one draw of
// sizes from a shape family. Float-valued inputs are f64 and marked castable (converted to the
// cell's dtype by the harness); index, mask and label inputs keep their dtype and stay in range.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/graph.h"
#include "tessel/host_tensor.h"

namespace tessel::parity {

// One draw of sizes. Generators shape their inputs from it (capping where the op is costly):
// b = batch (0 in the "empty" family), m = rows, n = the fast axis, k = an inner/contracted dim.
struct Draw {
  std::string family;  // scalar, vector, batch, odd, simd, empty, large
  int64_t b = 1, m = 1, n = 1, k = 1;
  bool scalar = false;  // use rank 0 where the kind allows
  bool vector = false;  // use rank 1 where the kind allows
};

// Deterministic test data (not the op RNG).
class CaseRng {
 public:
  explicit CaseRng(uint64_t seed) : s_(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  uint64_t next();
  double uniform(double lo, double hi);
  int64_t below(int64_t n);  // [0, n)

 private:
  uint64_t s_;
};

struct Case {
  std::string name;
  Attrs attrs;
  std::vector<HostTensor> inputs;  // f64 where castable; absent optional = HostTensor{}
  std::vector<bool> castable;
  std::string dtype_attr;  // sources: the attribute that carries the output dtype
  bool stride0_ok = true;  // castable inputs may be replaced by stride-0 views along axis 0
  // Attributes that depend on the cell's input types (region bodies), set once they are known.
  std::function<void(Attrs&, const std::vector<TensorType>&)> finalize;
};

// The cases for (kind, variant) at one draw; empty when the harness has no generator for it.
std::vector<Case> cases_for(OpKind kind, int variant, const Draw& d, CaseRng& rng);

// Per-category generators (cases_<family>.cpp); each returns {} for kinds it does not know.
std::vector<Case> cases_elementwise(OpKind kind, int v, const Draw& d, CaseRng& rng);
std::vector<Case> cases_shape(OpKind kind, int v, const Draw& d, CaseRng& rng);
std::vector<Case> cases_reduction(OpKind kind, int v, const Draw& d, CaseRng& rng);
std::vector<Case> cases_linalg(OpKind kind, int v, const Draw& d, CaseRng& rng);
std::vector<Case> cases_nn(OpKind kind, int v, const Draw& d, CaseRng& rng);
std::vector<Case> cases_training(OpKind kind, int v, const Draw& d, CaseRng& rng);

// Helpers for generators.
HostTensor uniform(const Shape& shape, CaseRng& rng, double lo = -2, double hi = 2);
// Values on a coarse grid (multiples of 1/2 in [lo, hi]): ties and equalities on purpose.
HostTensor grid(const Shape& shape, CaseRng& rng, double lo = -2, double hi = 2);
HostTensor indices(const Shape& shape, CaseRng& rng, int64_t lo, int64_t hi);  // i64 [lo, hi)
HostTensor bools(const Shape& shape, CaseRng& rng, double p_true = 0.6);
// A permutation of [0, n) per row of a [rows, n] i64 tensor's last axis (distinct indices).
HostTensor distinct_indices(int64_t rows, int64_t n, int64_t count, CaseRng& rng);
inline HostTensor absent() { return HostTensor{}; }
Case make_case(std::string name, Attrs attrs, std::vector<HostTensor> inputs,
               std::vector<bool> castable);
// The elementwise shape of a draw: [] (scalar), [n] (vector) or [b, m, n].
Shape elem_shape(const Draw& d);
// The (lo, hi) domain where an activation is well-conditioned.
std::pair<double, double> activation_domain(int activation_kind);

}  // namespace tessel::parity
