// Data a kernel derives from its node's constant inputs alone: weights transformed or packed for
// its micro-kernels (ONNX Runtime's pre-packing, made here on first use). The executor opens a
// DerivedScope around each kernel call, naming which of the node's inputs are graph constants
// and the node's slot; what a kernel derives from such an input is made on the executable's
// first run and kept in the slot for the executable's lifetime. Inputs that are not constants
// (arguments, parameters, other nodes' outputs) may change from run to run: nothing derived
// from them is kept.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace tessel {

// One node's derived data, each item under the tag its kernel chose.
class DerivedSlot {
 public:
  std::shared_ptr<const void> get_or_make(uint64_t tag,
                                          const std::function<std::shared_ptr<const void>()>& make);
  size_t size() const;

 private:
  mutable std::mutex mutex_;  // an executable may run on several threads at once
  std::vector<std::pair<uint64_t, std::shared_ptr<const void>>> items_;
};

// While alive, the calling thread's kernel call is the node whose inputs `constant` flags (by
// input index) and whose derived data is `slot`. Scopes nest (a kernel running a sub-graph).
class DerivedScope {
 public:
  DerivedScope(const std::vector<bool>& constant, DerivedSlot& slot);
  ~DerivedScope();
  DerivedScope(const DerivedScope&) = delete;
  DerivedScope& operator=(const DerivedScope&) = delete;

 private:
  const std::vector<bool>* constant_;
  DerivedSlot* slot_;
  DerivedScope* outer_;
  friend bool constant_input(int input);
  friend std::shared_ptr<const void> derived_from_constant(
      int input, uint64_t tag, const std::function<std::shared_ptr<const void>()>& make);
};

// In a kernel (on the thread that called it): whether input `input` is a graph constant (false
// outside a scope).
bool constant_input(int input);

// In a kernel (on the thread that called it): the data under `tag` derived from input `input`,
// made by `make` the first time, when that input is a graph constant; null otherwise (outside a
// scope, or the input not constant), and then the kernel derives what it needs for this call.
// `make` must depend on the constant inputs and the node alone.
std::shared_ptr<const void> derived_from_constant(
    int input, uint64_t tag, const std::function<std::shared_ptr<const void>()>& make);

// Typed: `make` returns a std::shared_ptr<const T>.
template <class T, class Make>
std::shared_ptr<const T> derived_from_constant(int input, uint64_t tag, Make&& make) {
  return std::static_pointer_cast<const T>(
      derived_from_constant(input, tag, [&]() -> std::shared_ptr<const void> { return make(); }));
}

}  // namespace tessel
