"""Linear algebra: matmul, dot, tensordot, inner, outer, vdot, einsum."""
import builtins
import numbers

import numpy as _np

from . import ops
from ._elementwise import multiply
from ._np_util import _axes, _pair, _promote, _t
from ._shape import ravel


def matmul(x1, x2):
    """numpy matmul with broadcasting batch dims (MatMul); operands promote."""
    a, b = _promote(*_pair(x1, x2))
    return ops.mat_mul(a, b)


def tensordot(a, b, axes=2):
    """Sum of products over the given axes, numpy tensordot (DotGeneral: a's free axes, then
    b's). axes: an int N (a's last N with b's first N) or a pair of axis sequences."""
    a, b = _promote(*_pair(a, b))
    if isinstance(axes, (numbers.Integral, _np.integer)):
        n = int(axes)
        lhs, rhs = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        lhs, rhs = (_axes(x) for x in axes)
    return ops.dot_general(a, b, lhs_contract=lhs, rhs_contract=rhs)


def dot(a, b):
    """numpy dot (DotGeneral): contracts a's last axis with b's second-to-last (b's only axis
    when 1-D); a 0-d operand multiplies (Binary Mul)."""
    a, b = _pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    return tensordot(a, b, ([a.ndim - 1], [builtins.max(b.ndim - 2, 0)]))


def vdot(a, b):
    """Dot product of the flattened operands (DotGeneral)."""
    return dot(ravel(a), ravel(b))


def inner(a, b):
    """Sum of products over the last axes of a and b (DotGeneral)."""
    a, b = _pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))


def outer(a, b):
    """Outer product of the flattened operands, [a.size, b.size] (DotGeneral)."""
    return tensordot(ravel(a), ravel(b), 0)


def einsum(subscripts, *operands):
    """Einstein summation, numpy's equation syntax (Einsum); operands promote."""
    if not isinstance(subscripts, str):
        raise TypeError("einsum: the first argument is the equation string, e.g. 'ij,jk->ik'")
    return ops.einsum(_promote(*[_t(o) for o in operands]), equation=subscripts)


__all__ = ["matmul", "tensordot", "dot", "vdot", "inner", "outer", "einsum"]
