"""Creation: full, zeros, ones, *_like, eye, arange, linspace (each with device=)."""
import builtins
import numbers

import numpy as _np

from . import _tessel, ops
from ._elementwise import add, astype, equal, multiply, where
from ._np_util import _shape, _t
from ._tensor import Tensor


def _on(t, device):
    return t if device is None or t.device == device else t.to(device)


def _default_dtype(value):
    """PyTorch's dtype for a fill value: bool, int64, float32 or complex64."""
    if isinstance(value, (bool, _np.bool_)):
        return _tessel.bool_
    if isinstance(value, (numbers.Integral, _np.integer)):
        return _tessel.int64
    if isinstance(value, numbers.Real):
        return _tessel.float32
    return _tessel.complex64


def _host(shape, value, dtype, device):
    dtype = _tessel.dtype(dtype)
    if dtype.numpy is None:  # bfloat16, float8: fill in float32, cast in Tessel
        return astype(_host(shape, value, _tessel.float32, device), dtype)
    return Tensor(_np.full(_shape(shape), value, dtype=dtype.numpy), device=device)


def full(shape, fill_value, dtype=None, device=None):
    """A tensor of `shape` filled with fill_value (a Constant); the dtype defaults to PyTorch's
    for the value: int64, float32, bool."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _host(shape, fill_value, dtype or _default_dtype(fill_value), device)


def zeros(shape, dtype=_tessel.float32, device=None):
    """A tensor of zeros (a Constant)."""
    return _host(shape, 0, dtype, device)


def ones(shape, dtype=_tessel.float32, device=None):
    """A tensor of ones (a Constant)."""
    return _host(shape, 1, dtype, device)


def full_like(a, fill_value, dtype=None, device=None):
    """A Constant with a's shape, dtype and device (unless given), filled with fill_value."""
    a = _t(a)
    return _host(a.shape, fill_value, dtype or a.dtype, device or a.device)


def zeros_like(a, dtype=None, device=None):
    """zeros with a's shape, dtype and device (unless given) (a Constant)."""
    return full_like(a, 0, dtype, device)


def ones_like(a, dtype=None, device=None):
    """ones with a's shape, dtype and device (unless given) (a Constant)."""
    return full_like(a, 1, dtype, device)


def eye(N, M=None, k=0, dtype=_tessel.float32, device=None):  # noqa: N803 (numpy's names)
    """The N×M identity with ones on diagonal k (a Constant)."""
    dtype = _tessel.dtype(dtype)
    host = _np.eye(int(N), None if M is None else int(M), int(k))
    if dtype.numpy is None:
        return astype(Tensor(host.astype(_np.float32), device=device), dtype)
    return Tensor(host.astype(dtype.numpy), device=device)


def identity(n, dtype=_tessel.float32, device=None):
    """The n×n identity (a Constant)."""
    return eye(n, dtype=dtype, device=device)


def arange(start, stop=None, step=1, dtype=None, device=None):
    """start, start+step, ... < stop (Range); arange(n) is 0..n-1. The dtype defaults to int64
    when every argument is an integer, float32 otherwise."""
    if stop is None:
        start, stop = 0, start
    for v in (start, stop, step):
        if not isinstance(v, (numbers.Real, _np.number)):
            raise TypeError(f"arange: arguments must be real numbers, got {type(v).__name__}")
    if step == 0:
        raise ValueError("arange: step must not be zero")
    if dtype is None:
        integral = builtins.all(isinstance(v, (numbers.Integral, _np.integer))
                                for v in (start, stop, step))
        dtype = _tessel.int64 if integral else _tessel.float32
    out = ops.range(start=float(start), limit=float(stop), delta=float(step),
                    dtype=_tessel.dtype(dtype))
    return _on(out, device)


def linspace(start, stop, num=50, endpoint=True, dtype=_tessel.float32, device=None):
    """num evenly spaced values from start to stop (included unless endpoint=False) (Range,
    Binary Mul / Add)."""
    num = int(num)
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    i = arange(num, dtype=_tessel.float64 if _tessel.dtype(dtype) == _tessel.float64
               else _tessel.float32)
    out = add(multiply(i, float(step)), float(start))
    if endpoint and num > 1:  # exactly stop at the end, as numpy
        out = where(equal(arange(num), num - 1), float(stop), out)
    return _on(astype(out, dtype), device)


__all__ = ["full", "zeros", "ones", "full_like", "zeros_like", "ones_like", "eye", "identity", "arange", "linspace"]
