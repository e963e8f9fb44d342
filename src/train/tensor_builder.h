// The lazy builder with what the training templates also need: scalar constants on a device
// and the type of a value, so a template over a builder records Tensors as it emits Values.
#pragma once

#include <string>
#include <utility>

#include "api/lazy.h"

namespace tessel {

class TensorBuilder : public detail::LazyBuilder {
 public:
  explicit TensorBuilder(std::string device) : device_(std::move(device)) {}
  Tensor scalar(double v, DType dtype) const { return Tensor::scalar(v, dtype, device_); }
  TensorType type(const Tensor& t) const { return TensorType{t.dtype(), t.shape()}; }
  const std::string& device() const { return device_; }

 private:
  std::string device_;
};

}  // namespace tessel
