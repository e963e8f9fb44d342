"""Function transforms with JAX's conventions: grad, value_and_grad, compile and vjp.

Arguments are pytrees (nested dicts / lists / tuples, see _tree.py). Their leaves are traced
when they are tensors (a numpy array is converted to one; a Python float in a differentiated
argument too) and static otherwise: a static leaf (a Python number, a string, ...) is part of
the cache key, so each distinct value traces the function once. One C++ Function is kept per
(argument structure, static values), and it compiles once per signature of the traced leaves
(shapes, dtypes, device), so a second call with the same shapes does not trace again.

Inside a traced function (another transform's), a transform is applied inline instead, as lazy
ops on the traced tensors (the C++ Function does this): grad(grad(f)) gives the second
derivative, and an inner grad may close over the outer function's tensors (an inner vjp may
not: pass them as primals).

Tensors the function captures (closures, globals, a module passed as a static argument) are read
when it is traced and become constants of the compiled graph, as in jax.jit: pass what changes
between calls (parameters) as arguments. Functions capturing different values do not share an
executable (the executable cache keys on the constants' bytes).
"""
import functools
import numbers

import numpy as _np

from . import _tessel
from ._tree import flatten, unflatten

Tensor = _tessel.Tensor


def _argnums(name, argnums, nargs):
    """argnums as a tuple of non-negative positions (validated against nargs)."""
    many = isinstance(argnums, (tuple, list))
    nums = tuple(argnums) if many else (argnums,)
    out = []
    for a in nums:
        if not isinstance(a, numbers.Integral) or isinstance(a, bool):
            raise TypeError(f"{name}: argnums must be an int or a tuple of ints, got {argnums!r}")
        if not -nargs <= a < nargs:
            raise ValueError(f"{name}: argnums {a} out of range for {nargs} positional "
                             "argument(s)")
        out.append(int(a) % nargs)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: argnums {argnums!r} repeats an argument")
    return tuple(out), many


class _Args:
    """The positional and keyword arguments of one call, split into traced tensors and static
    leaves. `key` identifies the structure and the static values; `diff[k]` lists the
    positions (in `tensors`) of the leaves of the k-th differentiated argument."""

    def __init__(self, name, args, kwargs, diff_argnums=()):
        self.defs, self.specs, self.tensors = [], [], []
        self.diff = {}
        static = []
        for i, part in enumerate(list(args) + [kwargs]):
            leaves, treedef = flatten(part)
            self.defs.append(treedef)
            differentiated = i in diff_argnums
            positions = []
            for leaf in leaves:
                t = _leaf_tensor(name, leaf, differentiated, i)
                if t is None:
                    try:
                        hash(leaf)
                    except TypeError:
                        raise TypeError(f"{name}: argument leaf of type {type(leaf).__name__} is "
                                        "neither a tensor nor a hashable static value") from None
                    static.append((len(self.specs), type(leaf), leaf))
                    self.specs.append(("static", leaf))
                else:
                    positions.append(len(self.tensors))
                    self.specs.append(("tensor", len(self.tensors)))
                    self.tensors.append(t)
            self.diff[i] = positions
        self.diff = [self.diff[i] for i in diff_argnums]
        self.key = (tuple(self.defs), tuple(static))

    def rebuild(self, tensors):
        """(args, kwargs) with the traced leaves replaced by `tensors`."""
        leaves = [tensors[v] if kind == "tensor" else v for kind, v in self.specs]
        parts, at = [], 0
        for treedef in self.defs:
            n = _count_leaves(treedef)
            parts.append(unflatten(treedef, leaves[at:at + n]))
            at += n
        return tuple(parts[:-1]), parts[-1]


def _count_leaves(treedef):
    if treedef[0] == "leaf":
        return 1
    if treedef[0] == "none":
        return 0
    return sum(_count_leaves(c) for c in treedef[2])


def _leaf_tensor(name, leaf, differentiated, position):
    """The tensor a leaf is traced as, or None for a static leaf."""
    if isinstance(leaf, Tensor):
        t = leaf
    elif isinstance(leaf, _np.ndarray):
        t = Tensor(leaf)
    elif differentiated and isinstance(leaf, (float, _np.floating)):
        t = Tensor(leaf)
    elif differentiated:
        raise TypeError(f"{name}: differentiated argument {position} has a leaf of type "
                        f"{type(leaf).__name__}; differentiate with respect to floating-point "
                        "tensors only")
    else:
        return None
    if differentiated and not t.dtype.is_floating_point:
        raise TypeError(f"{name}: differentiated argument {position} has a {t.dtype} tensor; "
                        "gradients need floating-point tensors")
    return t


def _signature(tensors):
    return tuple((t.shape, str(t.dtype), t.device) for t in tensors)


class _OutSpec:
    """The structure of a traced function's result: a treedef, and per leaf a tensor position
    or a static value (recorded at trace time)."""

    def __init__(self, tree):
        leaves, self.treedef = flatten(tree)
        self.specs, self.tensors = [], []
        for leaf in leaves:
            if isinstance(leaf, _np.ndarray):
                leaf = Tensor(leaf)
            if isinstance(leaf, Tensor):
                self.specs.append(("tensor", len(self.tensors)))
                self.tensors.append(leaf)
            else:
                self.specs.append(("static", leaf))

    def rebuild(self, tensors):
        return unflatten(self.treedef, [tensors[v] if kind == "tensor" else v
                                        for kind, v in self.specs])


class _Transformed:
    """A transformed function. It keeps one C++ Function per argument structure and static
    values; `trace_count` and `cache_size` sum over them."""

    def __init__(self, fn, name, argnums=None, has_aux=False, with_value=True):
        functools.update_wrapper(self, fn, updated=())
        self._fn, self._name = fn, name
        self._argnums, self._has_aux, self._with_value = argnums, has_aux, with_value
        self._entries = {}

    def __get__(self, obj, objtype=None):  # as a method decorator: bind self
        return self if obj is None else functools.partial(self, obj)

    @property
    def trace_count(self):
        return sum(e["fn"].trace_count for e in self._entries.values())

    @property
    def cache_size(self):
        return sum(e["fn"].cache_size for e in self._entries.values())

    def _output_spec(self, out):
        if self._argnums is None:
            return _OutSpec(out)
        if self._has_aux:
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise TypeError(f"{self._name}: with has_aux=True the function must return a "
                                f"pair (loss, aux), got {type(out).__name__}")
            loss, aux = out
        else:
            loss, aux = out, None
        if not isinstance(loss, Tensor):
            hint = " (a pair (loss, aux) needs has_aux=True)" if isinstance(
                out, (tuple, list)) else ""
            raise TypeError(f"{self._name}: the function must return a one-element "
                            f"floating-point tensor (the loss){hint}, got "
                            f"{type(loss).__name__}")
        return _OutSpec((loss, aux))

    def _entry(self, split, flat_argnums):
        entry = self._entries.get(split.key)
        if entry is not None:
            return entry
        entry = {"out": {}}
        fn = self._fn

        def trampoline(tensors):
            args, kwargs = split.rebuild(tensors)
            out = fn(*args, **kwargs)
            spec = self._output_spec(out)
            entry["out"][_signature(tensors)] = spec
            return spec.tensors

        if self._argnums is None:
            entry["fn"] = _tessel.compile(trampoline)
        else:
            entry["fn"] = _tessel.value_and_grad(trampoline, flat_argnums)
        self._entries[split.key] = entry
        return entry

    def __call__(self, *args, **kwargs):
        if self._argnums is None:
            diff, many = (), False
        else:
            diff, many = _argnums(self._name, self._argnums, len(args))
        split = _Args(self._name, args, kwargs, diff)
        flat_argnums = [p for positions in split.diff for p in positions]
        entry = self._entry(split, flat_argnums)
        results = entry["fn"](split.tensors)
        spec = entry["out"][_signature(split.tensors)]
        n_values = len(results) - len(flat_argnums)
        value = spec.rebuild(results[:n_values])
        if self._argnums is None:
            return value
        grads, at = [], n_values
        for k, positions in zip(diff, split.diff):
            grads.append(unflatten(split.defs[k], results[at:at + len(positions)]))
            at += len(positions)
        grads = tuple(grads) if many else grads[0]
        loss, aux = value
        if not self._with_value:
            return (grads, aux) if self._has_aux else grads
        return ((loss, aux) if self._has_aux else loss), grads


def grad(fn, argnums=0, has_aux=False):
    """The gradient of `fn` (whose result is a one-element floating-point tensor, the loss)
    with respect to the positional argument(s) `argnums`: a function returning the gradients
    with the structure of args[argnums] (a tuple of them when argnums is a tuple). With
    has_aux, fn returns (loss, aux) and the function returns (grads, aux)."""
    return _Transformed(fn, "grad", argnums, has_aux, with_value=False)


def value_and_grad(fn, argnums=0, has_aux=False):
    """As grad, returning (value, grads): value is fn's result (the pair (loss, aux) with
    has_aux)."""
    return _Transformed(fn, "value_and_grad", argnums, has_aux, with_value=True)


def compile(fn):  # noqa: A001 (tessel.compile, as jax.jit)
    """`fn` traced and compiled once per argument structure, static values and signature of
    its tensors (shapes, dtypes, device), and reused afterwards. Results are evaluated tensors
    with fn's result structure; its non-tensor results are those of the trace."""
    return _Transformed(fn, "compile")


def vjp(fn, primals, cotangents):
    """(outputs, vjps): fn(*primals) and, for each primal, the vector-Jacobian product
    Σ_j cotangents_jᵀ·∂output_j/∂primal. `primals` is a tuple of arguments (pytrees of
    floating-point tensors); `cotangents` has the structure of fn's result, one tensor of each
    output's shape and dtype. vjps is a tuple with the structure of primals."""
    if not isinstance(primals, (tuple, list)):
        raise TypeError(f"vjp: primals must be a tuple of arguments, got {type(primals).__name__}")
    split = _Args("vjp", primals, {}, tuple(range(len(primals))))
    ct_leaves, ct_def = flatten(cotangents)
    cts = []
    for leaf in ct_leaves:
        if isinstance(leaf, (_np.ndarray, float, _np.floating)):
            leaf = Tensor(leaf)
        if not isinstance(leaf, Tensor):
            raise TypeError(f"vjp: cotangents must be tensors, got a {type(leaf).__name__}")
        cts.append(leaf)
    found = {}

    def trampoline(tensors):
        args, kwargs = split.rebuild(tensors)
        out = fn(*args, **kwargs)
        spec = _OutSpec(out)
        if len(spec.tensors) != len(spec.specs):
            raise TypeError("vjp: the function's outputs must all be tensors")
        if spec.treedef != ct_def:
            raise ValueError(f"vjp: cotangents have the structure {ct_def}, the function's "
                             f"output {spec.treedef}")
        for j, (o, c) in enumerate(zip(spec.tensors, cts)):
            if o.shape != c.shape or o.dtype != c.dtype:
                raise ValueError(f"vjp: cotangent {j} is {c.dtype}{list(c.shape)}, output {j} "
                                 f"is {o.dtype}{list(o.shape)}")
        found["spec"] = spec
        return spec.tensors

    outputs, vjps = _tessel.vjp(trampoline, split.tensors, cts)
    grads, at = [], 0
    for k, positions in enumerate(split.diff):
        grads.append(unflatten(split.defs[k], vjps[at:at + len(positions)]))
        at += len(positions)
    return found["spec"].rebuild(outputs), tuple(grads)


__all__ = ["grad", "value_and_grad", "compile", "vjp"]
