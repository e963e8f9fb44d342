"""Argument helpers shared by the numpy-style modules (_elementwise, _reductions, ...): operands
as tensors with PyTorch's scalar rule, promotion, numpy's axis and shape arguments."""
import numbers

import numpy as _np

from . import _tessel
from ._tensor import Tensor, as_tensor


def _t(x, like=None):
    return as_tensor(x, like)


def _pair(a, b):
    """Both operands as tensors; a Python scalar takes the other operand's dtype and device."""
    if isinstance(a, Tensor):
        return a, as_tensor(b, a)
    if isinstance(b, Tensor):
        return as_tensor(a, b), b
    return as_tensor(a), as_tensor(b)


def _promote(*xs):
    """Tensors cast to their common (PyTorch-promoted) dtype."""
    dt = xs[0].dtype
    for x in xs[1:]:
        dt = _tessel.promote_types(dt, x.dtype)
    return [x if x.dtype == dt else x.astype(dt) for x in xs]


def _to_float(x):
    """Integer and bool tensors as float32 (PyTorch's default), floating tensors unchanged."""
    return x if (x.dtype.is_floating_point or x.dtype.is_complex) else x.astype(_tessel.float32)


def _axes(axis):
    """numpy's axis argument (None, an int or a sequence) as a list ([] = every axis)."""
    if axis is None:
        return []
    if isinstance(axis, (numbers.Integral, _np.integer)):
        return [int(axis)]
    if isinstance(axis, (list, tuple)):
        return [int(a) for a in axis]
    raise TypeError(f"axis must be None, an int or a tuple of ints, got {type(axis).__name__}")


def _norm_axis(axis, ndim, what):
    if not isinstance(axis, (numbers.Integral, _np.integer)):
        raise TypeError(f"{what}: axis must be an int, got {type(axis).__name__}")
    if not -ndim <= axis < ndim:
        raise _tessel.ShapeError(f"[{what}] axis {axis} is out of range for rank {ndim}")
    return int(axis) % ndim


def _shape(shape):
    if isinstance(shape, (numbers.Integral, _np.integer)):
        return [int(shape)]
    return [int(s) for s in shape]


def _shape_args(args):
    """`f(x, 2, 3)` or `f(x, (2, 3))`: numpy's method calling styles for a shape argument."""
    if len(args) == 1 and not isinstance(args[0], (numbers.Integral, _np.integer)):
        return _shape(args[0])
    return _shape(args)
