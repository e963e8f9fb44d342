// DotGeneral's dimension numbers with negative dims resolved, and each operand's free dims
// (neither batch nor contracted, ascending): what the kernels and the VJP rule read. The shape
// rule (ops/linear_algebra.cpp) has already checked them.
#pragma once

#include <vector>

#include "ir/attrs.h"

namespace tessel {

struct DotGeneralDims {
  std::vector<int> lhs_batch, rhs_batch, lhs_contract, rhs_contract, lhs_free, rhs_free;
};

inline DotGeneralDims dot_general_dims(const Attrs& attrs, int lhs_rank, int rhs_rank) {
  auto resolve = [](const std::vector<int64_t>& dims, int rank) {
    std::vector<int> v;
    for (int64_t d : dims) v.push_back(static_cast<int>(d < 0 ? d + rank : d));
    return v;
  };
  auto free = [](const std::vector<int>& batch, const std::vector<int>& contract, int rank) {
    std::vector<bool> used(rank, false);
    for (int d : batch) used[d] = true;
    for (int d : contract) used[d] = true;
    std::vector<int> v;
    for (int d = 0; d < rank; ++d)
      if (!used[d]) v.push_back(d);
    return v;
  };
  DotGeneralDims g;
  g.lhs_batch = resolve(attrs.ints("lhs_batch"), lhs_rank);
  g.rhs_batch = resolve(attrs.ints("rhs_batch"), rhs_rank);
  g.lhs_contract = resolve(attrs.ints("lhs_contract"), lhs_rank);
  g.rhs_contract = resolve(attrs.ints("rhs_contract"), rhs_rank);
  g.lhs_free = free(g.lhs_batch, g.lhs_contract, lhs_rank);
  g.rhs_free = free(g.rhs_batch, g.rhs_contract, rhs_rank);
  return g;
}

}  // namespace tessel
