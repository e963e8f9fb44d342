"""Reductions, scans, sorting and softmax with numpy's axis / keepdims / ddof conventions."""
from . import _tessel, ops
from ._elementwise import _as_bool, astype
from ._np_util import _axes, _t, _to_float
from ._shape import ravel, reshape


def _reduce(op, x, axis, keepdims, correction=0):
    return ops.reduce(x, op=op, axes=_axes(axis), keepdims=bool(keepdims),
                      correction=int(correction))


def _int_accumulator(x):
    """PyTorch's sum / prod dtype: bool and integers accumulate in int64."""
    return x.astype(_tessel.int64) if (x.dtype == _tessel.bool_ or x.dtype.is_integer) else x


def sum(a, axis=None, dtype=None, keepdims=False):  # noqa: A001
    """Sum over axis (None: all) (Reduce Sum); integers and bool sum in int64."""
    a = _t(a)
    a = astype(a, dtype) if dtype is not None else _int_accumulator(a)
    return _reduce("Sum", a, axis, keepdims)


def prod(a, axis=None, dtype=None, keepdims=False):
    """Product over axis (Reduce Prod); integers and bool multiply in int64."""
    a = _t(a)
    a = astype(a, dtype) if dtype is not None else _int_accumulator(a)
    return _reduce("Prod", a, axis, keepdims)


def mean(a, axis=None, dtype=None, keepdims=False):
    """Arithmetic mean over axis (Reduce Mean); integers average in float32."""
    a = _t(a)
    a = astype(a, dtype) if dtype is not None else _to_float(a)
    return _reduce("Mean", a, axis, keepdims)


def var(a, axis=None, dtype=None, ddof=0, keepdims=False):
    """Variance with divisor N - ddof (Reduce Var, correction=ddof)."""
    a = _t(a)
    a = astype(a, dtype) if dtype is not None else _to_float(a)
    return _reduce("Var", a, axis, keepdims, ddof)


def std(a, axis=None, dtype=None, ddof=0, keepdims=False):
    """Standard deviation with divisor N - ddof (Reduce Std, correction=ddof)."""
    a = _t(a)
    a = astype(a, dtype) if dtype is not None else _to_float(a)
    return _reduce("Std", a, axis, keepdims, ddof)


def max(a, axis=None, keepdims=False):  # noqa: A001
    """Maximum over axis (Reduce Max; the gradient goes to the first maximum)."""
    return _reduce("Max", _t(a), axis, keepdims)


def min(a, axis=None, keepdims=False):  # noqa: A001
    """Minimum over axis (Reduce Min; the gradient goes to the first minimum)."""
    return _reduce("Min", _t(a), axis, keepdims)


amax, amin = max, min


def logsumexp(a, axis=None, keepdims=False):
    """log Σ e^a over axis, computed stably (Reduce LogSumExp)."""
    return _reduce("LogSumExp", _to_float(_t(a)), axis, keepdims)


def all(a, axis=None, keepdims=False):  # noqa: A001
    """Whether every element is nonzero → bool (Compare, Reduce Min)."""
    return _reduce("Min", _as_bool(a), axis, keepdims)


def any(a, axis=None, keepdims=False):  # noqa: A001
    """Whether any element is nonzero → bool (Compare, Reduce Max)."""
    return _reduce("Max", _as_bool(a), axis, keepdims)


def _arg(kind, a, axis, keepdims):
    a = _t(a)
    if axis is None:
        out = getattr(ops, kind)(ravel(a), axis=0)
        return reshape(out, [1] * a.ndim) if keepdims else out
    return getattr(ops, kind)(a, axis=int(axis), keepdims=bool(keepdims))


def argmax(a, axis=None, keepdims=False):
    """Index of the first maximum along axis, int64; axis=None: in the flattened array
    (ArgMax)."""
    return _arg("arg_max", a, axis, keepdims)


def argmin(a, axis=None, keepdims=False):
    """Index of the first minimum along axis, int64; axis=None: in the flattened array
    (ArgMin)."""
    return _arg("arg_min", a, axis, keepdims)


def _cumulative(fn, a, axis, dtype):
    a = _t(a)
    a = astype(a, dtype) if dtype is not None else _int_accumulator(a)
    if axis is None:
        a, axis = ravel(a), 0
    return fn(a, axis=int(axis))


def cumsum(a, axis=None, dtype=None):
    """Cumulative sum along axis; axis=None: of the flattened array (Cumsum)."""
    return _cumulative(ops.cumsum, a, axis, dtype)


def cumprod(a, axis=None, dtype=None):
    """Cumulative product along axis; axis=None: of the flattened array (CumProd)."""
    return _cumulative(ops.cum_prod, a, axis, dtype)


def sort(a, axis=-1, descending=False):
    """Stable sort along axis, NaN last; axis=None sorts the flattened array (Sort)."""
    a = _t(a)
    if axis is None:
        a, axis = ravel(a), 0
    return ops.sort(a, axis=int(axis), descending=bool(descending))


def argsort(a, axis=-1, descending=False):
    """Indices (int64) of a stable sort along axis; axis=None: of the flattened array
    (ArgSort)."""
    a = _t(a)
    if axis is None:
        a, axis = ravel(a), 0
    return ops.arg_sort(a, axis=int(axis), descending=bool(descending))


def topk(a, k, axis=-1, largest=True, sorted=True):  # noqa: A002
    """(values, int64 indices) of the k largest (or smallest) along axis; ties: lower index
    first (TopK)."""
    return ops.top_k(_t(a), k=int(k), axis=int(axis), largest=bool(largest),
                     sorted=bool(sorted))


def softmax(x, axis=-1):
    """e^x / Σ e^x along axis (Softmax)."""
    return ops.softmax(_to_float(_t(x)), axis=int(axis))


def log_softmax(x, axis=-1):
    """x - logsumexp(x) along axis (Softmax, log=True)."""
    return ops.softmax(_to_float(_t(x)), axis=int(axis), log=True)


__all__ = ["sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "logsumexp", "all", "any", "argmax", "argmin", "cumsum", "cumprod", "sort", "argsort", "topk", "softmax", "log_softmax"]
