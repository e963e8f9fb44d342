// Learning-rate schedules in PyTorch's closed forms (torch.optim.lr_scheduler).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "tessel/optim.h"

namespace tessel {
namespace {

void check_base(double lr, const char* where) {
  if (!std::isfinite(lr) || lr < 0)
    throw_error(ErrorKind::Value, where, "base_lr is ", lr, "; expected a finite value >= 0");
}

void check_t(int64_t t, const char* where) {
  if (t < 0) throw_error(ErrorKind::Value, where, "t is ", t, "; expected t >= 0");
}

}  // namespace

LrSchedule constant_lr(double lr) {
  check_base(lr, "[constant_lr] ");
  return [lr](int64_t t) {
    check_t(t, "[constant_lr] ");
    return lr;
  };
}

LrSchedule step_lr(double base_lr, int64_t step_size, double gamma) {
  check_base(base_lr, "[step_lr] ");
  if (step_size < 1)
    throw_error(ErrorKind::Value, "[step_lr] step_size is ", step_size, "; expected >= 1");
  return [=](int64_t t) {
    check_t(t, "[step_lr] ");
    return base_lr * std::pow(gamma, static_cast<double>(t / step_size));
  };
}

LrSchedule multi_step_lr(double base_lr, std::vector<int64_t> milestones, double gamma) {
  check_base(base_lr, "[multi_step_lr] ");
  if (!std::is_sorted(milestones.begin(), milestones.end()))
    throw_error(ErrorKind::Value, "[multi_step_lr] milestones must be increasing");
  return [=](int64_t t) {
    check_t(t, "[multi_step_lr] ");
    auto passed = std::upper_bound(milestones.begin(), milestones.end(), t) - milestones.begin();
    return base_lr * std::pow(gamma, static_cast<double>(passed));
  };
}

LrSchedule exponential_lr(double base_lr, double gamma) {
  check_base(base_lr, "[exponential_lr] ");
  return [=](int64_t t) {
    check_t(t, "[exponential_lr] ");
    return base_lr * std::pow(gamma, static_cast<double>(t));
  };
}

LrSchedule cosine_annealing_lr(double base_lr, int64_t t_max, double eta_min) {
  check_base(base_lr, "[cosine_annealing_lr] ");
  if (t_max < 1)
    throw_error(ErrorKind::Value, "[cosine_annealing_lr] t_max is ", t_max, "; expected >= 1");
  return [=](int64_t t) {
    check_t(t, "[cosine_annealing_lr] ");
    double c = std::cos(std::numbers::pi * static_cast<double>(t) / static_cast<double>(t_max));
    return eta_min + (base_lr - eta_min) * (1 + c) / 2;
  };
}

LrSchedule linear_lr(double base_lr, double start_factor, double end_factor, int64_t total_iters) {
  check_base(base_lr, "[linear_lr] ");
  if (!(start_factor > 0 && start_factor <= 1) || !(end_factor >= 0 && end_factor <= 1))
    throw_error(ErrorKind::Value, "[linear_lr] start_factor ", start_factor, " and end_factor ",
                end_factor, " must lie in (0, 1] and [0, 1]");
  if (total_iters < 1)
    throw_error(ErrorKind::Value, "[linear_lr] total_iters is ", total_iters, "; expected >= 1");
  return [=](int64_t t) {
    check_t(t, "[linear_lr] ");
    double f = static_cast<double>(std::min(t, total_iters)) / static_cast<double>(total_iters);
    return base_lr * (start_factor + (end_factor - start_factor) * f);
  };
}

LrSchedule sequential_lr(std::vector<LrSchedule> schedules, std::vector<int64_t> milestones) {
  if (schedules.empty() || milestones.size() + 1 != schedules.size())
    throw_error(ErrorKind::Value, "[sequential_lr] got ", schedules.size(), " schedules and ",
                milestones.size(), " milestones; expected one milestone fewer than schedules");
  for (size_t i = 0; i < milestones.size(); ++i)
    if (milestones[i] < 1 || (i > 0 && milestones[i] <= milestones[i - 1]))
      throw_error(ErrorKind::Value, "[sequential_lr] milestones must be increasing and >= 1");
  for (const LrSchedule& s : schedules)
    if (!s) throw_error(ErrorKind::Value, "[sequential_lr] empty schedule");
  return [=](int64_t t) {
    check_t(t, "[sequential_lr] ");
    size_t i = static_cast<size_t>(std::upper_bound(milestones.begin(), milestones.end(), t) -
                                   milestones.begin());
    return schedules[i](i == 0 ? t : t - milestones[i - 1]);
  };
}

}  // namespace tessel
