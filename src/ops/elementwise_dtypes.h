// The dtypes each Elementwise variant computes on: the shape rules accept exactly these and the
// reference backend claims exactly these, so the two cannot drift apart. Defined in
// src/ops/elementwise.cpp.
#pragma once

#include "ir/op.h"
#include "tessel/dtype.h"

namespace tessel {

// An empty set: the variant is not defined on any dtype.
DTypeSet activation_dtypes(ActivationKind kind);
DTypeSet gated_activation_dtypes(ActivationKind kind);  // the float ones of activation_dtypes
DTypeSet binary_dtypes(BinaryOp op);
DTypeSet compare_dtypes(CmpOp op);  // ordering comparisons are undefined on complex numbers

}  // namespace tessel
