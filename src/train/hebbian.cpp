#include <cmath>

#include "tessel/optim.h"
#include "train/hebbian_update.h"
#include "train/tensor_builder.h"

namespace tessel {

Tensor hebbian_update(const Tensor& w, const Tensor& pre, const Tensor& post, double lr,
                      HebbianRule rule, double weight_decay) {
  const char* where = "[hebbian_update] ";
  if (!w.defined() || !pre.defined() || !post.defined())
    throw_error(ErrorKind::Value, where, "undefined tensor");
  if (!std::isfinite(lr) || lr < 0)
    throw_error(ErrorKind::Value, where, "lr is ", lr, "; expected a finite value >= 0");
  if (!std::isfinite(weight_decay) || weight_decay < 0)
    throw_error(ErrorKind::Value, where, "weight_decay is ", weight_decay,
                "; expected a finite value >= 0");
  if (w.rank() != 2 || pre.rank() != 2 || post.rank() != 2 || pre.shape()[0] != post.shape()[0] ||
      pre.shape()[1] != w.shape()[0] || post.shape()[1] != w.shape()[1])
    throw_error(ErrorKind::Shape, where, "expected w [in, out], pre [B, in], post [B, out]; got w ",
                shape_str(w.shape()), ", pre ", shape_str(pre.shape()), ", post ",
                shape_str(post.shape()));
  if (!is_float(w.dtype()) || pre.dtype() != w.dtype() || post.dtype() != w.dtype())
    throw_error(ErrorKind::DType, where, "w, pre and post must share one float dtype; got ",
                dtype_name(w.dtype()), ", ", dtype_name(pre.dtype()), ", ",
                dtype_name(post.dtype()));
  TensorBuilder b(w.device());
  return hebbian_step(b, w, pre, post, lr, rule == HebbianRule::Oja, weight_decay);
}

}  // namespace tessel
