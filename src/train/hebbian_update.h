// The Hebbian / Oja update (tessel::hebbian_update), written over the shared op constructors so
// it records Tensors or emits graph nodes alike. W [in, out], pre [B, in], post [B, out]:
//   ΔW = lr·(preᵀ·post − [Oja] W ⊙ Σ_b post_b²) / B − lr·λ·W.
#pragma once

#include "ir/builder.h"

namespace tessel {

template <class B, class V>
V hebbian_step(B& b, V w, V pre, V post, double lr, bool oja, double weight_decay) {
  DType dt = b.type(w).dtype;
  double batch = static_cast<double>(b.type(pre).shape[0]);
  V hebb = b.matmul(pre, post, /*ta=*/true);  // Σ_b pre_b ⊗ post_b, [in, out]
  if (oja) hebb = b.sub(hebb, b.mul(w, b.sum(b.mul(post, post), {0})));
  V next = b.add(w, b.mul(hebb, b.scalar(batch > 0 ? lr / batch : 0.0, dt)));
  if (weight_decay != 0) next = b.sub(next, b.mul(w, b.scalar(lr * weight_decay, dt)));
  return next;
}

}  // namespace tessel
