// The Tessel C++ API: lazy tensors, ops, compile, errors, optimizers.
#pragma once

#include "tessel/dtype.h"
#include "tessel/error.h"
#include "tessel/host_tensor.h"
#include "tessel/ops.h"
#include "tessel/optim.h"
#include "tessel/tensor.h"
