"""Optimizers, learning-rate schedules, gradient clipping and loss scaling (include/tessel/optim.h)
with PyTorch's names, keywords and defaults, over pytrees of parameters.

Optimizers are functional: parameters are immutable tensors, so `opt.step(grads)` returns the
updated parameters (with the structure of the tree given at construction; `opt.params` is the
same) instead of modifying tensors in place. The update runs as one compiled graph, traced
once: changing `opt.lr` between steps (a schedule) does not retrace.

    opt = tessel.optim.Adam(model.parameters(), lr=1e-2)
    loss, grads = tessel.value_and_grad(loss_fn)(opt.params, x, y)
    model.update(opt.step(grads))

Schedules are functions of the epoch (or step) t = 0, 1, ...: `opt.lr = schedule(t)`.
"""
import math

from . import _tessel
from ._tree import flatten, unflatten

_core = _tessel.optim
Tensor = _tessel.Tensor


def _paths(tree, prefix=""):
    """Dotted names of the leaves of `tree`, in flatten's order ("layers.0.weight")."""
    if isinstance(tree, dict):
        return [p for k in sorted(tree) for p in _paths(tree[k], f"{prefix}{k}.")]
    if isinstance(tree, (list, tuple)):
        return [p for i, v in enumerate(tree) for p in _paths(v, f"{prefix}{i}.")]
    if tree is None:
        return []
    return [prefix[:-1] or "0"]


def _tensor_leaves(what, tree, treedef=None):
    """The leaves of `tree` as tensors (numpy arrays converted), checking the structure against
    `treedef` when given."""
    leaves, found = flatten(tree)
    if treedef is not None and found != treedef:
        raise ValueError(f"{what}: the structure {_describe(found)} differs from the "
                         f"parameters' {_describe(treedef)}")
    out = []
    for name, leaf in zip(_paths(tree), leaves):
        if not isinstance(leaf, Tensor):
            try:
                leaf = Tensor(leaf)
            except Exception:
                raise TypeError(f"{what}: leaf '{name}' is a {type(leaf).__name__}, not a "
                                "tensor") from None
        out.append(leaf)
    return out


def _describe(treedef, depth=0):
    tag = treedef[0]
    if tag == "leaf":
        return "*"
    if tag == "none":
        return "None"
    if depth > 3:
        return "..."
    kids = [_describe(c, depth + 1) for c in treedef[2]]
    if tag == "dict":
        return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(treedef[1], kids)) + "}"
    return ("[" + ", ".join(kids) + "]") if tag == "list" else ("(" + ", ".join(kids) + ")")


class Optimizer:
    """A first-order optimizer over a pytree of floating-point tensors (one device)."""

    def __init__(self, params, options):
        leaves = _tensor_leaves(type(self).__name__, params)
        self._treedef = flatten(params)[1]
        self._opt = _core.Optimizer(options, leaves, _paths(params))

    def step(self, grads):
        """One update with `grads` (the structure of the parameters); returns the new params."""
        self._opt.step(_tensor_leaves(f"{type(self).__name__}.step: grads", grads,
                                      self._treedef))
        return self.params

    @property
    def params(self):
        return unflatten(self._treedef, self._opt.params)

    @params.setter
    def params(self, params):
        self._opt.set_params(_tensor_leaves(f"{type(self).__name__}.params", params,
                                            self._treedef))

    @property
    def lr(self):
        return self._opt.lr

    @lr.setter
    def lr(self, value):
        self._opt.lr = float(value)

    @property
    def step_count(self):
        """Updates done so far (PyTorch's state["step"])."""
        return self._opt.step_count

    @property
    def state_names(self):
        """The per-parameter state in PyTorch's names ("exp_avg", "exp_avg_sq", ...)."""
        return list(self._opt.state_names)

    @property
    def trace_count(self):
        return self._opt.trace_count

    def state(self):
        """{state name: tree of tensors with the parameters' structure}."""
        per_param = [self._opt.state(i) for i in range(len(self._opt.params))]
        return {name: unflatten(self._treedef, [s[j] for s in per_param])
                for j, name in enumerate(self._opt.state_names)}

    def state_dict(self):
        """{"<param path>.<state>": Tensor, ..., "step": i64 scalar} (a checkpoint)."""
        return dict(self._opt.state_dict())

    def load_state_dict(self, state):
        """Restores what state_dict() returned (every key, the right shapes)."""
        if not isinstance(state, dict):
            raise TypeError(f"load_state_dict: expected a dict, got {type(state).__name__}")
        self._opt.load_state_dict(state)

    def __repr__(self):
        return f"{type(self).__name__}(lr={self.lr}, step_count={self.step_count})"


def _options(kind, **fields):
    o = _core.OptimizerOptions()
    o.kind = kind
    for k, v in fields.items():
        setattr(o, k, v)
    return o


def _betas(name, betas):
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ValueError(f"{name}: betas must be a pair (beta1, beta2), got {betas!r}")
    return float(betas[0]), float(betas[1])


class SGD(Optimizer):
    def __init__(self, params, lr, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, *, maximize=False):
        super().__init__(params, _options("Sgd", lr=lr, momentum=momentum, dampening=dampening,
                                          weight_decay=weight_decay, nesterov=nesterov,
                                          maximize=maximize))


class Adam(Optimizer):
    _kind = "Adam"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, *, maximize=False):
        b1, b2 = _betas(type(self).__name__, betas)
        super().__init__(params, _options(self._kind, lr=lr, beta1=b1, beta2=b2, eps=eps,
                                          weight_decay=weight_decay, amsgrad=amsgrad,
                                          maximize=maximize))


class AdamW(Adam):
    _kind = "AdamW"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, *,
                 maximize=False):
        b1, b2 = _betas("Adamax", betas)
        super().__init__(params, _options("Adamax", lr=lr, beta1=b1, beta2=b2, eps=eps,
                                          weight_decay=weight_decay, maximize=maximize))


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0.0, weight_decay=0.0,
                 initial_accumulator_value=0.0, eps=1e-10, *, maximize=False):
        super().__init__(params, _options("Adagrad", lr=lr, lr_decay=lr_decay,
                                          weight_decay=weight_decay, eps=eps,
                                          initial_accumulator_value=initial_accumulator_value,
                                          maximize=maximize))


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, *, maximize=False):
        super().__init__(params, _options("Adadelta", lr=lr, beta2=rho, eps=eps,
                                          weight_decay=weight_decay, maximize=maximize))


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
                 centered=False, *, maximize=False):
        super().__init__(params, _options("RmsProp", lr=lr, beta2=alpha, eps=eps,
                                          weight_decay=weight_decay, momentum=momentum,
                                          centered=centered, maximize=maximize))


class Lion(Optimizer):
    """Lion (Chen et al. 2023), with lion-pytorch's keywords."""

    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        b1, b2 = _betas("Lion", betas)
        super().__init__(params, _options("Lion", lr=lr, beta1=b1, beta2=b2,
                                          weight_decay=weight_decay))


class Lamb(Optimizer):
    """LAMB (You et al. 2020), bias-corrected."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0):
        b1, b2 = _betas("Lamb", betas)
        super().__init__(params, _options("Lamb", lr=lr, beta1=b1, beta2=b2, eps=eps,
                                          weight_decay=weight_decay))


class Lars(Optimizer):
    """LARS (You et al. 2017): a layer-wise trust ratio, then SGD momentum."""

    def __init__(self, params, lr, momentum=0.9, weight_decay=0.0, trust_coefficient=1e-3,
                 eps=1e-8, nesterov=False):
        super().__init__(params, _options("Lars", lr=lr, momentum=momentum, eps=eps,
                                          weight_decay=weight_decay, nesterov=nesterov,
                                          trust_coefficient=trust_coefficient))


class LBFGS:
    """L-BFGS (torch.optim.LBFGS, fixed step: line_search_fn=None only). Functional closure:
    `closure(params) -> (loss, grads)` with grads of the parameters' structure — exactly what
    tessel.value_and_grad(loss_fn) returns:

        opt.step(lambda p: vg(p, x, y))
    """

    def __init__(self, params, lr=1.0, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        o = _core.LbfgsOptions()
        o.lr, o.max_iter, o.max_eval = lr, max_iter, 0 if max_eval is None else max_eval
        o.tolerance_grad, o.tolerance_change = tolerance_grad, tolerance_change
        o.history_size, o.line_search_fn = history_size, line_search_fn or ""
        self._treedef = flatten(params)[1]
        self._opt = _core.LBFGS(o, _tensor_leaves("LBFGS", params))

    def step(self, closure):
        """Up to max_iter iterations; returns the loss of the closure's first evaluation."""
        def flat(leaves):
            out = closure(unflatten(self._treedef, leaves))
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise TypeError("LBFGS.step: the closure must return (loss, grads), got "
                                f"{type(out).__name__}")
            return out[0], _tensor_leaves("LBFGS.step: grads", out[1], self._treedef)

        return self._opt.step(flat)

    @property
    def params(self):
        return unflatten(self._treedef, self._opt.params)

    @property
    def iterations(self):
        """Iterations so far (PyTorch's state["n_iter"])."""
        return self._opt.iterations

    @property
    def evaluations(self):
        """Closure calls so far (PyTorch's state["func_evals"])."""
        return self._opt.evaluations


# Schedules: PyTorch's closed forms (torch.optim.lr_scheduler), lr as a function of t.
def constant_lr(lr):
    return _core.constant_lr(lr)


def step_lr(base_lr, step_size, gamma=0.1):
    """base_lr · gamma^⌊t / step_size⌋ (StepLR)."""
    return _core.step_lr(base_lr, step_size, gamma)


def multi_step_lr(base_lr, milestones, gamma=0.1):
    """base_lr · gamma^(milestones passed) (MultiStepLR)."""
    return _core.multi_step_lr(base_lr, list(milestones), gamma)


def exponential_lr(base_lr, gamma):
    """base_lr · gamma^t (ExponentialLR)."""
    return _core.exponential_lr(base_lr, gamma)


def cosine_annealing_lr(base_lr, T_max, eta_min=0.0):  # noqa: N803 (PyTorch's name)
    """eta_min + (base_lr − eta_min)·(1 + cos(π·t / T_max)) / 2 (CosineAnnealingLR)."""
    return _core.cosine_annealing_lr(base_lr, T_max, eta_min)


def linear_lr(base_lr, start_factor=1.0 / 3, end_factor=1.0, total_iters=5):
    """base_lr · (start + (end − start)·min(t, total_iters) / total_iters) (LinearLR)."""
    return _core.linear_lr(base_lr, start_factor, end_factor, total_iters)


def sequential_lr(schedules, milestones):
    """schedules[i] from milestones[i-1] on, its counter restarted there (SequentialLR)."""
    return _core.sequential_lr(list(schedules), list(milestones))


def _norm_type(norm_type):
    if isinstance(norm_type, str) and norm_type.lower() in ("inf", "infinity"):
        return math.inf
    return float(norm_type)


def clip_grad_norm(grads, max_norm, norm_type=2.0):
    """(clipped grads, total_norm): every gradient scaled by min(1, max_norm / (total + 1e-6)),
    total being the norm of all of them together (torch.nn.utils.clip_grad_norm_)."""
    leaves, treedef = _tensor_leaves("clip_grad_norm", grads), flatten(grads)[1]
    clipped, total = _core.clip_grad_norm(leaves, float(max_norm), _norm_type(norm_type))
    return unflatten(treedef, clipped), total


def clip_grad_value(grads, clip_value):
    """Every element clamped to [-clip_value, clip_value]."""
    leaves, treedef = _tensor_leaves("clip_grad_value", grads), flatten(grads)[1]
    return unflatten(treedef, _core.clip_grad_value(leaves, float(clip_value)))


class LossScaler:
    """Dynamic loss scaling (torch.cuda.amp.GradScaler's policy): multiply the loss by `scale`,
    pass the gradients through unscale(); None means they held inf / NaN: skip the step."""

    def __init__(self, init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self._s = _core.LossScaler(init_scale, growth_factor, backoff_factor, growth_interval)

    @property
    def scale(self):
        return self._s.scale

    @property
    def skipped_steps(self):
        return self._s.skipped_steps

    def unscale(self, grads, master="float32"):
        leaves, treedef = _tensor_leaves("LossScaler.unscale", grads), flatten(grads)[1]
        out = self._s.unscale(leaves, master)
        if leaves and not out:
            return None
        return unflatten(treedef, out)


def hebbian_update(w, pre, post, lr, rule="oja", weight_decay=0.0):
    """W + ΔW for W [in, out] from pre [B, in] and post [B, out] ("oja" or "plain" rule)."""
    return _core.hebbian_update(w, pre, post, lr, rule, weight_decay)


__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "Adagrad", "Adadelta", "RMSprop",
           "Lion", "Lamb", "Lars", "LBFGS", "constant_lr", "step_lr", "multi_step_lr",
           "exponential_lr", "cosine_annealing_lr", "linear_lr", "sequential_lr",
           "clip_grad_norm", "clip_grad_value", "LossScaler", "hebbian_update"]
