// Parsing of Einsum equations (numpy syntax), shared by Einsum's shape rule and the kernels that
// run it. Defined in src/ops/linear_algebra.cpp.
#pragma once

#include <string>
#include <vector>

#include "tessel/host_tensor.h"

namespace tessel {

// An equation resolved against its operands' shapes. Every axis of every operand and of the
// output is mapped to a label id; `...` dims get their own ids (0 .. ellipsis_rank-1, aligned
// to the right as numpy broadcasts them), letters follow in order of first appearance.
struct EinsumEquation {
  std::vector<int64_t> sizes;              // per label: its (broadcast) extent
  std::vector<std::vector<int>> operands;  // per operand, per axis: its label
  std::vector<int> output;                 // per output axis: its label (all distinct)
  Shape output_shape() const;
};

// numpy semantics: explicit ("ij,jk->ik") or implicit output (the ellipsis dims, then the
// letters appearing exactly once, in ASCII order); a letter repeated within one operand takes
// the diagonal; letters absent from the output are summed; `...` dims of the operands broadcast
// together and, as in numpy, an explicit output must keep them when they are not empty. A label's
// size-1 occurrences broadcast against its other occurrences. Spaces are ignored.
// Throws tessel::Error: Value for a malformed equation or the wrong operand count, Shape for
// ranks and sizes that do not fit; the message starts with `where` and names the equation.
EinsumEquation parse_einsum(const std::string& equation, const std::vector<Shape>& shapes,
                            const std::string& where);

}  // namespace tessel
