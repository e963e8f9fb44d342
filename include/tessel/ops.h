// Free-function ops on lazy Tensors. Each records one op of the table (see tessel ops) and
// checks shapes and dtypes immediately. Binary ops and comparisons promote dtypes with
// PyTorch's rules (inserting casts); a Python-style scalar operand takes the tensor's dtype
// unless it is a float with an integer tensor (then f32).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessel/tensor.h"

namespace tessel {

// Elementwise
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor atan2(const Tensor& a, const Tensor& b);
Tensor equal(const Tensor& a, const Tensor& b);
Tensor not_equal(const Tensor& a, const Tensor& b);
Tensor less(const Tensor& a, const Tensor& b);
Tensor less_equal(const Tensor& a, const Tensor& b);
Tensor greater(const Tensor& a, const Tensor& b);
Tensor greater_equal(const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor cast(const Tensor& x, DType to);
Tensor clamp(const Tensor& x, double lo, double hi);
Tensor stop_gradient(const Tensor& x);
Tensor activation(const std::string& kind, const Tensor& x);  // ActivationKind name, e.g. "Gelu"
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x, bool approximate = false);
Tensor silu(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor neg(const Tensor& x);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& x);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator*(double a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Tensor& b);

// Linear algebra
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b = Tensor(),
              const std::string& act = "Identity");  // act(x·W + b), W [in, out]

// Reductions
Tensor sum(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor mean(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor max(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor min(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor logsumexp(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor softmax(const Tensor& x, int64_t axis = -1);
Tensor log_softmax(const Tensor& x, int64_t axis = -1);
Tensor argmax(const Tensor& x, int64_t axis = -1, bool keepdims = false);
Tensor cumsum(const Tensor& x, int64_t axis);
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t axis = -1);
Tensor sort(const Tensor& x, int64_t axis = -1, bool descending = false);

// Shape and data movement
Tensor reshape(const Tensor& x, Shape shape);
Tensor transpose(const Tensor& x, std::vector<int64_t> perm);
Tensor broadcast_to(const Tensor& x, Shape shape);
Tensor concatenate(const std::vector<Tensor>& xs, int64_t axis = 0);
std::vector<Tensor> split(const Tensor& x, std::vector<int64_t> sizes, int64_t axis = 0);
Tensor slice(const Tensor& x, std::vector<int64_t> starts, std::vector<int64_t> ends,
             std::vector<int64_t> axes = {}, std::vector<int64_t> steps = {});
Tensor pad(const Tensor& x, std::vector<int64_t> pads, const std::string& mode = "Constant",
           double value = 0);
Tensor take(const Tensor& x, const Tensor& indices, int64_t axis = 0);
Tensor embedding(const Tensor& weight, const Tensor& ids);

// Neural-network ops
Tensor layer_norm(const Tensor& x, const Tensor& gamma = Tensor(), const Tensor& beta = Tensor(),
                  double eps = 1e-5);
Tensor rms_norm(const Tensor& x, const Tensor& gamma = Tensor(), double eps = 1e-6);
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v,
                 const std::string& mask_kind = "None", const Tensor& mask = Tensor(),
                 double scale = 0);
Tensor rope(const Tensor& x, const std::string& style = "NeoX", double base = 10000);
Tensor conv(const Tensor& x, const Tensor& w, const Tensor& b = Tensor(),
            std::vector<int64_t> strides = {}, std::vector<int64_t> pads = {},
            std::vector<int64_t> dilations = {}, int64_t groups = 1);
Tensor max_pool(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> strides = {},
                std::vector<int64_t> pads = {});
Tensor avg_pool(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> strides = {},
                std::vector<int64_t> pads = {});
Tensor dropout(const Tensor& x, double p, int64_t seed);

// Sources
Tensor arange(double start, double limit, double delta = 1, DType dtype = DType::F32);
Tensor full(Shape shape, double value, DType dtype = DType::F32);
Tensor zeros(Shape shape, DType dtype = DType::F32);
Tensor ones(Shape shape, DType dtype = DType::F32);
Tensor random_uniform(Shape shape, int64_t seed, double low = 0, double high = 1,
                      DType dtype = DType::F32);
Tensor random_normal(Shape shape, int64_t seed, double mean = 0, double std = 1,
                     DType dtype = DType::F32);

}  // namespace tessel
