// tessel/optim.h for Python: OptimizerOptions, Optimizer, LBFGS (closure from Python), the
// learning-rate schedules (as callables), gradient clipping, LossScaler and the Hebbian update.
// tessel/optim.py builds the PyTorch-style classes over pytrees on top of these.
#include "tessel/optim.h"

#include <pybind11/functional.h>

#include "bindings.h"

namespace tessel::python {
namespace {

using StateList = std::vector<std::pair<std::string, Tensor>>;

StateList state_from_py(const py::handle& state) {
  StateList out;
  if (py::isinstance<py::dict>(state)) {
    for (auto [k, v] : state.cast<py::dict>())
      out.emplace_back(py::str(k).cast<std::string>(), tensor_from_py(v, py::none(), py::none()));
    return out;
  }
  return state.cast<StateList>();
}

LBFGS::Closure closure_from_py(py::function fn) {
  return [fn = std::move(fn)](const std::vector<Tensor>& params) {
    py::gil_scoped_acquire gil;
    py::object r = fn(params);
    if (!py::isinstance<py::tuple>(r) || py::len(r) != 2)
      throw py::type_error("the L-BFGS closure must return (loss, grads), got " +
                           py::repr(r).cast<std::string>());
    py::tuple pair = r.cast<py::tuple>();
    LBFGS::Evaluation e;
    e.loss = tensor_from_py(pair[0], py::none(), py::none());
    try {
      e.grads = pair[1].cast<std::vector<Tensor>>();
    } catch (const py::cast_error&) {
      throw py::type_error("the L-BFGS closure's grads must be a list of tessel.Tensor");
    }
    return e;
  };
}

HebbianRule hebbian_rule(const std::string& name) {
  if (name == "oja" || name == "Oja") return HebbianRule::Oja;
  if (name == "plain" || name == "Plain") return HebbianRule::Plain;
  throw_error(ErrorKind::Value, "[hebbian_update] rule '", name, "'; expected 'oja' or 'plain'");
}

void bind_options(py::module_& m) {
  py::class_<OptimizerOptions>(m, "OptimizerOptions",
                               "Hyperparameters of a per-tensor update rule (tessel/optim.h).")
      .def(py::init<>())
      .def_readwrite("kind", &OptimizerOptions::kind)
      .def_readwrite("lr", &OptimizerOptions::lr)
      .def_readwrite("beta1", &OptimizerOptions::beta1)
      .def_readwrite("beta2", &OptimizerOptions::beta2)
      .def_readwrite("eps", &OptimizerOptions::eps)
      .def_readwrite("weight_decay", &OptimizerOptions::weight_decay)
      .def_readwrite("momentum", &OptimizerOptions::momentum)
      .def_readwrite("dampening", &OptimizerOptions::dampening)
      .def_readwrite("nesterov", &OptimizerOptions::nesterov)
      .def_readwrite("centered", &OptimizerOptions::centered)
      .def_readwrite("amsgrad", &OptimizerOptions::amsgrad)
      .def_readwrite("maximize", &OptimizerOptions::maximize)
      .def_readwrite("lr_decay", &OptimizerOptions::lr_decay)
      .def_readwrite("initial_accumulator_value", &OptimizerOptions::initial_accumulator_value)
      .def_readwrite("trust_coefficient", &OptimizerOptions::trust_coefficient);

  py::class_<LbfgsOptions>(m, "LbfgsOptions")
      .def(py::init<>())
      .def_readwrite("lr", &LbfgsOptions::lr)
      .def_readwrite("max_iter", &LbfgsOptions::max_iter)
      .def_readwrite("max_eval", &LbfgsOptions::max_eval)
      .def_readwrite("tolerance_grad", &LbfgsOptions::tolerance_grad)
      .def_readwrite("tolerance_change", &LbfgsOptions::tolerance_change)
      .def_readwrite("history_size", &LbfgsOptions::history_size)
      .def_readwrite("line_search_fn", &LbfgsOptions::line_search_fn);
}

void bind_optimizers(py::module_& m) {
  py::class_<Optimizer>(m, "Optimizer",
                        "A first-order optimizer over a list of parameters: one compiled update "
                        "graph, traced once; step() replaces the parameters.")
      .def(py::init<OptimizerOptions, std::vector<Tensor>, std::vector<std::string>>(), "options"_a,
           "params"_a, "names"_a = std::vector<std::string>{})
      .def("step", &Optimizer::step, "grads"_a)
      .def_property_readonly("params", &Optimizer::params)
      .def("set_params", &Optimizer::set_params, "params"_a)
      .def_property_readonly("names", &Optimizer::names)
      .def_property("lr", &Optimizer::lr, &Optimizer::set_lr)
      .def_property_readonly("step_count", &Optimizer::step_count)
      .def_property_readonly("options", &Optimizer::options)
      .def_property_readonly("state_names", &Optimizer::state_names)
      .def(
          "state",
          [](const Optimizer& o, size_t i) {
            if (i >= o.params().size())
              throw py::index_error("parameter index " + std::to_string(i) + " out of range");
            return o.state(i);
          },
          "param"_a)
      .def("state_dict", &Optimizer::state_dict)
      .def(
          "load_state_dict",
          [](Optimizer& o, const py::object& state) { o.load_state_dict(state_from_py(state)); },
          "state"_a)
      .def_property_readonly("trace_count", &Optimizer::trace_count);

  py::class_<LBFGS>(m, "LBFGS",
                    "L-BFGS (torch.optim.LBFGS); step(closure) runs max_iter iterations.")
      .def(py::init<LbfgsOptions, std::vector<Tensor>>(), "options"_a, "params"_a)
      .def(
          "step",
          [](LBFGS& o, py::function closure) {
            return o.step(closure_from_py(std::move(closure)));
          },
          "closure"_a,
          "closure(params: list[Tensor]) -> (loss, grads); returns the first evaluation's loss.")
      .def_property_readonly("params", &LBFGS::params)
      .def_property_readonly("iterations", &LBFGS::iterations)
      .def_property_readonly("evaluations", &LBFGS::evaluations);
}

void bind_schedules(py::module_& m) {
  m.def("constant_lr", &constant_lr, "lr"_a);
  m.def("step_lr", &step_lr, "base_lr"_a, "step_size"_a, "gamma"_a = 0.1);
  m.def("multi_step_lr", &multi_step_lr, "base_lr"_a, "milestones"_a, "gamma"_a = 0.1);
  m.def("exponential_lr", &exponential_lr, "base_lr"_a, "gamma"_a);
  m.def("cosine_annealing_lr", &cosine_annealing_lr, "base_lr"_a, "t_max"_a, "eta_min"_a = 0.0);
  m.def("linear_lr", &linear_lr, "base_lr"_a, "start_factor"_a = 1.0 / 3, "end_factor"_a = 1.0,
        "total_iters"_a = 5);
  m.def("sequential_lr", &sequential_lr, "schedules"_a, "milestones"_a);
}

void bind_clipping_and_scaling(py::module_& m) {
  m.def(
      "clip_grad_norm",
      [](const std::vector<Tensor>& grads, double max_norm, double norm_type) {
        ClippedGrads c = clip_grad_norm(grads, max_norm, norm_type);
        return py::make_tuple(c.grads, c.total_norm);
      },
      "grads"_a, "max_norm"_a, "norm_type"_a = 2.0);
  m.def("clip_grad_value", &clip_grad_value, "grads"_a, "clip_value"_a);

  py::class_<LossScaler>(m, "LossScaler")
      .def(py::init<double, double, double, int64_t>(), "init_scale"_a = 65536.0,
           "growth_factor"_a = 2.0, "backoff_factor"_a = 0.5, "growth_interval"_a = 2000)
      .def_property_readonly("scale", &LossScaler::scale)
      .def_property_readonly("skipped_steps", &LossScaler::skipped_steps)
      .def(
          "unscale",
          [](LossScaler& s, const std::vector<Tensor>& grads, const py::object& master) {
            return s.unscale(grads, dtype_from_py(master));
          },
          "grads"_a, "master"_a = "f32",
          "The gradients / scale() cast to `master`, or [] when any is inf / NaN (skip the "
          "step). Updates the scale.");

  m.def(
      "hebbian_update",
      [](const Tensor& w, const Tensor& pre, const Tensor& post, double lr, const std::string& rule,
         double weight_decay) {
        return hebbian_update(w, pre, post, lr, hebbian_rule(rule), weight_decay);
      },
      "w"_a, "pre"_a, "post"_a, "lr"_a, "rule"_a = "oja", "weight_decay"_a = 0.0);
}

}  // namespace

void bind_optim(py::module_& m) {
  py::module_ sub = m.def_submodule("optim", "tessel/optim.h: optimizers, schedules, clipping.");
  bind_options(sub);
  bind_optimizers(sub);
  bind_schedules(sub);
  bind_clipping_and_scaling(sub);
}

}  // namespace tessel::python
