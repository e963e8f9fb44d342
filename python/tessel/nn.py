"""Neural-network modules whose parameters are nested dicts of tensors, and the losses.

A Module holds its tensors as attributes; `parameters()` returns them (and its submodules')
as a nested dict, `update(params)` puts such a dict back, and `apply(params, *args)` calls the
module with other parameters — the functional form tessel.grad differentiates:

    model = nn.Sequential(nn.Linear(4, 16, seed=0), nn.ReLU(), nn.Linear(16, 3, seed=1))
    loss_fn = lambda p, x, y: nn.losses.cross_entropy(model.apply(p, x), y)
    loss, grads = tessel.value_and_grad(loss_fn)(model.parameters(), x, y)

Layouts and initializations are PyTorch's (Linear's weight is [out, in], U(±1/sqrt(in))), drawn
from numpy Generators: `seed=` on a module, or the package generator that nn.seed(n) resets.
There is no Dropout module: the Dropout kind's seed is an attribute, so under tessel.grad or
compile one mask would be traced once and reused on every step.
"""
import math
import sys
import types

import numpy as _np

from . import _tessel
from . import ops as _ops  # tessel.ops, set up by the package before nn is imported
from ._tensor import as_tensor

Tensor = _tessel.Tensor
_rng = _np.random.default_rng(0)


def seed(n):
    """Resets the generator that initializes modules created without `seed=`."""
    global _rng
    _rng = _np.random.default_rng(n)


def _generator(seed_):
    return _rng if seed_ is None else _np.random.default_rng(seed_)


def _uniform(gen, shape, bound, dtype):
    return Tensor(gen.uniform(-bound, bound, size=shape).astype(_np.float32), dtype=dtype)


def _pair(v, n, name):
    v = tuple(v) if isinstance(v, (tuple, list)) else (v,) * n
    if len(v) != n or not all(isinstance(i, int) for i in v):
        raise ValueError(f"{name} must be an int or {n} ints, got {v!r}")
    return list(v)


class Module:
    """Base class: tensor attributes are parameters, Module attributes are submodules."""

    def __init__(self):
        object.__setattr__(self, "_params", {})
        object.__setattr__(self, "_children", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_params" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__}: call Module.__init__() before "
                                 "assigning attributes")
        self._params.pop(name, None)
        self._children.pop(name, None)
        self.__dict__.pop(name, None)
        if isinstance(value, Tensor) and not name.startswith("_"):
            self._params[name] = value
        elif isinstance(value, Module):
            self._children[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):  # only called when normal lookup fails
        d = self.__dict__
        if name in d.get("_params", {}):
            return d["_params"][name]
        if name in d.get("_children", {}):
            return d["_children"][name]
        raise AttributeError(f"{type(self).__name__} has no attribute '{name}'")

    def parameters(self):
        """{name: Tensor, submodule name: {...}}: this module's parameters, nested."""
        out = dict(self._params)
        for name, child in self._children.items():
            out[name] = child.parameters()
        return out

    def update(self, params):
        """Sets parameters from a nested dict like parameters()' (a subset is fine); returns
        self. Shapes must match."""
        if not isinstance(params, dict):
            raise TypeError(f"{type(self).__name__}.update: expected a dict, got "
                            f"{type(params).__name__}")
        for name, value in params.items():
            if name in self._params:
                if not isinstance(value, Tensor):
                    value = Tensor(value)
                old = self._params[name]
                if tuple(value.shape) != tuple(old.shape):
                    raise ValueError(f"{type(self).__name__}.update: '{name}' has shape "
                                     f"{tuple(value.shape)}, the parameter {tuple(old.shape)}")
                self._params[name] = value
            elif name in self._children:
                self._children[name].update(value)
            else:
                raise KeyError(f"{type(self).__name__}.update: no parameter or submodule "
                               f"'{name}' (it has {sorted(self._params) + sorted(self._children)})")
        return self

    def apply(self, params, *args, **kwargs):
        """self(*args, **kwargs) computed with `params` instead of the module's own (which are
        restored afterwards): the functional call to differentiate."""
        saved = self.parameters()
        self.update(params)
        try:
            return self(*args, **kwargs)
        finally:
            self.update(saved)

    def children(self):
        return dict(self._children)

    def modules(self):
        """This module and every submodule, depth first."""
        yield self
        for child in self._children.values():
            yield from child.modules()

    def train(self, mode=True):
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"  ({n}): " + repr(c).replace("\n", "\n  ") for n, c in self._children.items()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        return head + ("\n" + "\n".join(lines) + "\n)" if lines else ")")


class Linear(Module):
    """y = x·Wᵀ + b with W [out_features, in_features]; W and b ~ U(±1/sqrt(in_features))."""

    def __init__(self, in_features, out_features, bias=True, *, seed=None, dtype="float32"):
        super().__init__()
        gen, bound = _generator(seed), 1 / math.sqrt(in_features)
        self.in_features, self.out_features = in_features, out_features
        self.weight = _uniform(gen, (out_features, in_features), bound, dtype)
        self.bias = _uniform(gen, (out_features,), bound, dtype) if bias else None

    def forward(self, x):
        y = _ops.mat_mul(x, self.weight, transpose_b=True)
        return y if self.bias is None else y + self.bias

    def extra_repr(self):
        return f"{self.in_features}, {self.out_features}, bias={self.bias is not None}"


class _ConvNd(Module):
    _n = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, *, seed=None, dtype="float32"):
        super().__init__()
        n, name = self._n, type(self).__name__
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels {in_channels} and out_channels "
                             f"{out_channels} must be divisible by groups {groups}")
        self.kernel_size = _pair(kernel_size, n, f"{name}: kernel_size")
        self.stride = _pair(stride, n, f"{name}: stride")
        self.padding = _pair(padding, n, f"{name}: padding")
        self.dilation = _pair(dilation, n, f"{name}: dilation")
        self.groups = groups
        fan_in = in_channels // groups * math.prod(self.kernel_size)
        gen, bound = _generator(seed), 1 / math.sqrt(fan_in)
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = _uniform(gen, shape, bound, dtype)
        self.bias = _uniform(gen, (out_channels,), bound, dtype) if bias else None

    def forward(self, x):
        return _ops.conv(x, self.weight, self.bias, strides=self.stride, pads=self.padding,
                         dilations=self.dilation, groups=self.groups)


class Conv1d(_ConvNd):
    """torch.nn.Conv1d on [N, C, L]; weight [out, in/groups, k]."""
    _n = 1


class Conv2d(_ConvNd):
    """torch.nn.Conv2d on [N, C, H, W]; weight [out, in/groups, kh, kw]."""
    _n = 2


class LayerNorm(Module):
    """Normalizes over the trailing `normalized_shape` dims; weight ones, bias zeros."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, *, dtype="float32"):
        super().__init__()
        self.normalized_shape = _pair(normalized_shape, len(normalized_shape) if isinstance(
            normalized_shape, (tuple, list)) else 1, "LayerNorm: normalized_shape")
        self.eps = eps
        if elementwise_affine:
            self.weight = Tensor(_np.ones(self.normalized_shape, _np.float32), dtype=dtype)
            self.bias = Tensor(_np.zeros(self.normalized_shape, _np.float32), dtype=dtype)
        else:
            self.weight = self.bias = None

    def forward(self, x):
        return _ops.layer_norm(x, self.weight, self.bias, axis=-len(self.normalized_shape),
                               eps=self.eps)


class RMSNorm(Module):
    """x / sqrt(mean(x²) + eps) · weight over the trailing dims (weight ones)."""

    def __init__(self, normalized_shape, eps=1e-6, elementwise_affine=True, *, dtype="float32"):
        super().__init__()
        self.normalized_shape = _pair(normalized_shape, len(normalized_shape) if isinstance(
            normalized_shape, (tuple, list)) else 1, "RMSNorm: normalized_shape")
        self.eps = eps
        self.weight = Tensor(_np.ones(self.normalized_shape, _np.float32),
                             dtype=dtype) if elementwise_affine else None

    def forward(self, x):
        return _ops.rms_norm(x, self.weight, axis=-len(self.normalized_shape), eps=self.eps)


class Embedding(Module):
    """Rows of weight [num_embeddings, embedding_dim] ~ N(0, 1), looked up by integer ids."""

    def __init__(self, num_embeddings, embedding_dim, *, seed=None, dtype="float32"):
        super().__init__()
        w = _generator(seed).standard_normal((num_embeddings, embedding_dim))
        self.weight = Tensor(w.astype(_np.float32), dtype=dtype)

    def forward(self, ids):
        return _ops.embedding(self.weight, ids)


class MultiHeadAttention(Module):
    """torch.nn.MultiheadAttention with batch_first=True: inputs [B, S, E]; parameters
    in_proj_weight [3E, E] (Xavier-uniform), in_proj_bias [3E] (zeros) and out_proj (a Linear,
    bias zeros). forward returns the attention output only (no weights). attn_mask: a bool mask
    (True = masked out, as PyTorch) or an additive float mask, broadcastable to [B, H, Sq, Sk];
    is_causal: the causal mask."""

    def __init__(self, embed_dim, num_heads, bias=True, *, seed=None, dtype="float32"):
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"MultiHeadAttention: embed_dim {embed_dim} is not divisible by "
                             f"num_heads {num_heads}")
        gen = _generator(seed)
        self.embed_dim, self.num_heads = embed_dim, num_heads
        bound = math.sqrt(6 / (embed_dim + 3 * embed_dim))  # xavier_uniform_ on [3E, E]
        self.in_proj_weight = _uniform(gen, (3 * embed_dim, embed_dim), bound, dtype)
        self.out_proj = Linear(embed_dim, embed_dim, bias, seed=int(gen.integers(2**31)),
                               dtype=dtype)
        if bias:
            self.in_proj_bias = Tensor(_np.zeros(3 * embed_dim, _np.float32), dtype=dtype)
            self.out_proj.bias = Tensor(_np.zeros(embed_dim, _np.float32), dtype=dtype)
        else:
            self.in_proj_bias = None

    def _project(self, x, i):
        e = self.embed_dim
        w = _ops.narrow(self.in_proj_weight, axis=0, start=i * e, length=e)
        y = _ops.mat_mul(x, w, transpose_b=True)
        if self.in_proj_bias is not None:
            y = y + _ops.narrow(self.in_proj_bias, axis=0, start=i * e, length=e)
        b, s = x.shape[0], x.shape[1]
        h = self.num_heads
        y = _ops.reshape(y, shape=[b, s, h, e // h])
        return _ops.transpose(y, perm=[0, 2, 1, 3])  # [B, H, S, D]

    def _mask_4d(self, mask, b, sq, sk):
        """PyTorch's [Sq, Sk] or [B·H, Sq, Sk] mask as [1, 1, Sq, Sk] / [B, H, Sq, Sk] (the
        Attention kind reads a 2-D mask as [B, Sk])."""
        mask = mask if isinstance(mask, Tensor) else Tensor(mask)
        h = self.num_heads
        if tuple(mask.shape) == (sq, sk):
            return _ops.reshape(mask, shape=[1, 1, sq, sk])
        if tuple(mask.shape) == (b * h, sq, sk):
            return _ops.reshape(mask, shape=[b, h, sq, sk])
        raise ValueError(f"MultiHeadAttention: attn_mask must be [{sq}, {sk}] or "
                         f"[{b * h}, {sq}, {sk}], got {tuple(mask.shape)}")

    def forward(self, query, key=None, value=None, *, attn_mask=None, is_causal=False):
        key = query if key is None else key
        value = key if value is None else value
        for name, t in (("query", query), ("key", key), ("value", value)):
            if t.ndim != 3 or t.shape[2] != self.embed_dim:
                raise ValueError(f"MultiHeadAttention: {name} must be [B, S, {self.embed_dim}]"
                                 f", got {tuple(t.shape)}")
        q, k, v = self._project(query, 0), self._project(key, 1), self._project(value, 2)
        scale = 1 / math.sqrt(self.embed_dim // self.num_heads)
        if attn_mask is not None and is_causal:
            raise ValueError("MultiHeadAttention: give attn_mask or is_causal, not both")
        if attn_mask is not None:
            attn_mask = self._mask_4d(attn_mask, query.shape[0], q.shape[2], k.shape[2])
        if attn_mask is None:
            y = _ops.attention(q, k, v, mask_kind="Causal" if is_causal else "None", scale=scale)
        elif attn_mask.dtype == _tessel.bool_:
            keep = _ops.activation(attn_mask, kind="Not")
            y = _ops.attention(q, k, v, keep, mask_kind="Custom", scale=scale)
        else:
            y = _ops.attention(q, k, v, attn_mask, mask_kind="Bias", scale=scale)
        b, sq = query.shape[0], query.shape[1]
        y = _ops.reshape(_ops.transpose(y, perm=[0, 2, 1, 3]), shape=[b, sq, self.embed_dim])
        return self.out_proj(y)


class Sequential(Module):
    """Calls its modules in order; they are its children "0", "1", ..."""

    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            if not isinstance(m, Module):
                raise TypeError(f"Sequential: argument {i} is a {type(m).__name__}, not a Module")
            setattr(self, str(i), m)

    def __len__(self):
        return len(self._children)

    def __getitem__(self, i):
        return list(self._children.values())[i]

    def forward(self, x):
        for m in self._children.values():
            x = m(x)
        return x


class _Activation(Module):
    _kind = "Identity"

    def forward(self, x):
        return _ops.activation(x, kind=self._kind)


class ReLU(_Activation):
    _kind = "Relu"


class SiLU(_Activation):
    _kind = "Silu"


class Tanh(_Activation):
    _kind = "Tanh"


class Sigmoid(_Activation):
    _kind = "Sigmoid"


class GELU(_Activation):
    """approximate="none" (erf) or "tanh", as torch.nn.GELU."""

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self._kind = "Gelu" if approximate == "none" else "GeluApprox"


# Losses (PyTorch's torch.nn.functional names, keywords and defaults).
_REDUCTIONS = {"mean": "Mean", "sum": "Sum", "none": "None"}


def _reduction(name, reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    return _REDUCTIONS[reduction]


def cross_entropy(logits, target, reduction="mean", ignore_index=-100, label_smoothing=0.0):
    """Cross-entropy of logits [N, C, ...] against class ids [N, ...] (integers) or class
    probabilities of logits' shape (floats), as torch.nn.functional.cross_entropy."""
    logits, target = as_tensor(logits), as_tensor(target)
    r = _reduction("cross_entropy", reduction)
    if target.dtype.is_floating_point:
        if label_smoothing or ignore_index != -100:
            raise ValueError("cross_entropy: label_smoothing / ignore_index need class ids")
        return _ops.softmax_cross_entropy(logits, target, reduction=r, axis=1)
    return _ops.softmax_cross_entropy_with_logits(logits, target, reduction=r,
                                                  ignore_index=ignore_index,
                                                  label_smoothing=label_smoothing)


def nll_loss(log_probs, target, reduction="mean", ignore_index=-100):
    """-log_probs[n, target[n], ...], averaged over the targets that are not ignore_index."""
    log_probs, target = as_tensor(log_probs), as_tensor(target)
    r = _reduction("nll_loss", reduction)
    if log_probs.ndim < 2 or tuple(target.shape) != tuple(log_probs.shape[:1]) + tuple(
            log_probs.shape[2:]):
        raise ValueError(f"nll_loss: log_probs {tuple(log_probs.shape)} need target of shape "
                         f"[N, ...] without the class dim, got {tuple(target.shape)}")
    keep = _tessel.not_equal(target, Tensor(ignore_index, dtype=target.dtype))
    safe = _tessel.where(keep, target, Tensor(0, dtype=target.dtype))
    index = _ops.reshape(safe, shape=[target.shape[0], 1, *target.shape[1:]])
    picked = _ops.reshape(_ops.gather_elements(log_probs, index, axis=1),
                          shape=list(target.shape))
    weight = _ops.cast(keep, to=log_probs.dtype)
    losses = -(picked * weight)
    if r == "None":
        return losses
    total = _ops.reduce(losses, op="Sum")
    return total if r == "Sum" else total / _ops.reduce(weight, op="Sum")


def _loss(kind, name):
    def fn(input, target, reduction="mean"):  # noqa: A002 (PyTorch's name)
        return _ops.loss(as_tensor(input), as_tensor(target), kind=kind,
                         reduction=_reduction(name, reduction))
    fn.__name__ = fn.__qualname__ = name
    return fn


mse_loss = _loss("Mse", "mse_loss")
mse_loss.__doc__ = "Mean squared error (torch.nn.functional.mse_loss)."
l1_loss = _loss("Mae", "l1_loss")
l1_loss.__doc__ = "Mean absolute error (torch.nn.functional.l1_loss)."
binary_cross_entropy = _loss("BinaryCrossEntropy", "binary_cross_entropy")
binary_cross_entropy.__doc__ = "BCE of probabilities (torch.nn.functional.binary_cross_entropy)."
binary_cross_entropy_with_logits = _loss("BinaryCrossEntropyWithLogits",
                                         "binary_cross_entropy_with_logits")
binary_cross_entropy_with_logits.__doc__ = "BCE of logits, stable."


def huber_loss(input, target, reduction="mean", delta=1.0):  # noqa: A002
    """Huber loss (torch.nn.functional.huber_loss)."""
    return _ops.loss(as_tensor(input), as_tensor(target), kind="Huber",
                     reduction=_reduction("huber_loss", reduction), delta=delta)


def kl_div(input, target, reduction="mean", log_target=False):  # noqa: A002
    """KL(target ‖ input) with input log-probabilities (torch.nn.functional.kl_div)."""
    return _ops.loss(as_tensor(input), as_tensor(target), kind="KlDiv",
                     reduction=_reduction("kl_div", reduction), log_target=log_target)


losses = types.ModuleType("tessel.nn.losses", "Loss functions (also at tessel.nn.*).")
for _f in (cross_entropy, nll_loss, mse_loss, l1_loss, huber_loss, binary_cross_entropy,
           binary_cross_entropy_with_logits, kl_div):
    setattr(losses, _f.__name__, _f)
setattr(losses, "__all__", [n for n in dir(losses) if not n.startswith("_")])
sys.modules["tessel.nn.losses"] = losses
del _f

__all__ = ["seed", "Module", "Linear", "Conv1d", "Conv2d", "LayerNorm", "RMSNorm", "Embedding",
           "MultiHeadAttention", "Sequential", "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid",
           "losses"] + losses.__all__
