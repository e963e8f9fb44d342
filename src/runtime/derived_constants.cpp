#include "runtime/derived_constants.h"

namespace tessel {

namespace {
thread_local DerivedScope* t_scope = nullptr;
}  // namespace

std::shared_ptr<const void> DerivedSlot::get_or_make(
    uint64_t tag, const std::function<std::shared_ptr<const void>()>& make) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [t, data] : items_)
    if (t == tag) return data;
  std::shared_ptr<const void> data = make();
  items_.emplace_back(tag, data);
  return data;
}

size_t DerivedSlot::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return items_.size();
}

DerivedScope::DerivedScope(const std::vector<bool>& constant, DerivedSlot& slot)
    : constant_(&constant), slot_(&slot), outer_(t_scope) {
  t_scope = this;
}

DerivedScope::~DerivedScope() { t_scope = outer_; }

bool constant_input(int input) {
  const DerivedScope* s = t_scope;
  return s != nullptr && input >= 0 && static_cast<size_t>(input) < s->constant_->size() &&
         (*s->constant_)[static_cast<size_t>(input)];
}

std::shared_ptr<const void> derived_from_constant(
    int input, uint64_t tag, const std::function<std::shared_ptr<const void>()>& make) {
  if (!constant_input(input)) return nullptr;
  return t_scope->slot_->get_or_make(tag, make);
}

}  // namespace tessel
