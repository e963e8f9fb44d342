"""The numpy-style top-level API: `tessel.add`, `tessel.sum(x, axis=None)`, `tessel.pad(x,
pad_width, mode)`, ... with numpy's names and argument conventions, built on the generated
`tessel.ops.*` functions (exact op-table schemas) and the promoting binaries of `_tessel`.

Type promotion is PyTorch's: two tensors promote with tessel.promote_types, a Python scalar
takes the tensor's dtype (tessel._tensor.as_tensor(value, like)), integer inputs of
floating-point functions (sqrt, exp, mean, divide, ...) compute in float32. Every function
records ops lazily; the docstring's first line names the op kind it records. Errors about
shapes, axes and dtypes are the C++ library's (tessel.ShapeError is a ValueError, ...); the
Python layer checks only what the C++ cannot see (argument types, numpy-only options).

The unary functions of the ActivationKind enum (exp, tanh, mish, arcsin, ...) are generated
from tessel.enums(), so a new variant in src/ir/ops.def becomes a function here by itself.
"""
import builtins
import numbers

import numpy as _np

from . import _ops, _tessel
from . import ops  # the generated tessel.ops, built by __init__ before this module is imported
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


# ---------------------------------------------------------------------------------------------
# Elementwise binaries


def add(x1, x2):
    """x1 + x2 (Binary Add), with broadcasting and PyTorch type promotion."""
    return _tessel.add(*_pair(x1, x2))


def subtract(x1, x2):
    """x1 - x2 (Binary Sub)."""
    return _tessel.sub(*_pair(x1, x2))


def multiply(x1, x2):
    """x1 * x2 (Binary Mul)."""
    return _tessel.mul(*_pair(x1, x2))


def divide(x1, x2):
    """x1 / x2, true division (Binary Div); integer operands divide in float32."""
    a, b = _promote(*_pair(x1, x2))
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        a, b = _to_float(a), _to_float(b)
    return _tessel.div(a, b)


true_divide = divide


def floor_divide(x1, x2):
    """x1 // x2 rounded toward -inf (Binary Div, then Activation Floor for floats; integers use
    Binary FloorMod so that (x1 - x1 % x2) / x2 is exact)."""
    a, b = _promote(*_pair(x1, x2))
    if a.dtype.is_floating_point:
        return floor(_tessel.div(a, b))  # noqa: F821 (generated from ActivationKind)
    return _tessel.div(_tessel.sub(a, remainder(a, b)), b)


def remainder(x1, x2):
    """x1 % x2 with the sign of x2, Python's / numpy's mod (Binary FloorMod)."""
    a, b = _promote(*_pair(x1, x2))
    return ops.binary(a, b, op="FloorMod")


mod = remainder


def fmod(x1, x2):
    """C fmod: the remainder with the sign of x1 (Binary Mod)."""
    a, b = _promote(*_pair(x1, x2))
    return ops.binary(a, b, op="Mod")


def power(x1, x2):
    """x1 ** x2 (Binary Pow)."""
    return _tessel.pow(*_pair(x1, x2))


pow = power  # noqa: A001 (numpy's alias)


def maximum(x1, x2):
    """Elementwise maximum, NaN propagating (Binary Max)."""
    return _tessel.maximum(*_pair(x1, x2))


def minimum(x1, x2):
    """Elementwise minimum, NaN propagating (Binary Min)."""
    return _tessel.minimum(*_pair(x1, x2))


def arctan2(x1, x2):
    """atan2(x1, x2) (Binary Atan2); integer operands in float32."""
    a, b = _promote(*_pair(x1, x2))
    return _tessel.atan2(_to_float(a), _to_float(b))


atan2 = arctan2


def equal(x1, x2):
    """x1 == x2 → bool (Compare Eq)."""
    return _tessel.equal(*_pair(x1, x2))


def not_equal(x1, x2):
    """x1 != x2 → bool (Compare Ne)."""
    return _tessel.not_equal(*_pair(x1, x2))


def less(x1, x2):
    """x1 < x2 → bool (Compare Lt)."""
    return _tessel.less(*_pair(x1, x2))


def less_equal(x1, x2):
    """x1 <= x2 → bool (Compare Le)."""
    return _tessel.less_equal(*_pair(x1, x2))


def greater(x1, x2):
    """x1 > x2 → bool (Compare Gt)."""
    return _tessel.greater(*_pair(x1, x2))


def greater_equal(x1, x2):
    """x1 >= x2 → bool (Compare Ge)."""
    return _tessel.greater_equal(*_pair(x1, x2))


def _bitwise(op, a, b):
    a, b = _promote(*_pair(a, b))
    if a.dtype.is_floating_point or a.dtype.is_complex:
        raise TypeError(f"bitwise {op} needs integer or bool operands, got {a.dtype}")
    return ops.binary(a, b, op=op)


def bitwise_and(x1, x2):
    """x1 & x2 (Binary BitAnd; logical and on bool)."""
    return _bitwise("BitAnd", x1, x2)


def bitwise_or(x1, x2):
    """x1 | x2 (Binary BitOr; logical or on bool)."""
    return _bitwise("BitOr", x1, x2)


def bitwise_xor(x1, x2):
    """x1 ^ x2 (Binary BitXor; logical xor on bool)."""
    return _bitwise("BitXor", x1, x2)


def left_shift(x1, x2):
    """x1 << x2 (Binary Shl)."""
    return _bitwise("Shl", x1, x2)


def right_shift(x1, x2):
    """x1 >> x2, arithmetic on signed integers (Binary Shr)."""
    return _bitwise("Shr", x1, x2)


def _as_bool(x):
    x = _t(x)
    return x if x.dtype == _tessel.bool_ else not_equal(x, 0)


def logical_and(x1, x2):
    """x1 and x2 on truth values → bool (Compare Ne to 0, Binary BitAnd)."""
    return ops.binary(_as_bool(x1), _as_bool(x2), op="BitAnd")


def logical_or(x1, x2):
    """x1 or x2 on truth values → bool (Binary BitOr)."""
    return ops.binary(_as_bool(x1), _as_bool(x2), op="BitOr")


def logical_xor(x1, x2):
    """x1 xor x2 on truth values → bool (Binary BitXor)."""
    return ops.binary(_as_bool(x1), _as_bool(x2), op="BitXor")


def logical_not(x):
    """not x on truth values → bool (Activation Not)."""
    return _activation(_as_bool(x), "Not")


def invert(x):
    """~x: bitwise not of integers, logical not of bool (Activation Not)."""
    x = _t(x)
    if x.dtype.is_floating_point or x.dtype.is_complex:
        raise TypeError(f"invert needs an integer or bool tensor, got {x.dtype}")
    return _activation(x, "Not")


bitwise_not = invert


def where(condition, x=None, y=None):
    """condition ? x : y elementwise, broadcasting all three (Where); a non-bool condition is
    compared with 0. where(condition) alone is nonzero(condition)."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise TypeError("where: give both x and y, or neither")
    a, b = _pair(x, y)
    return _tessel.where(_as_bool(condition), a, b)


def nonzero(x):
    """The indices of the nonzero elements, a tuple of int64 tensors (Constant), one per axis.
    The result's shape depends on x's values, so x is evaluated now."""
    x = _t(x)
    return tuple(Tensor(i.astype(_np.int64), device=x.device) for i in _np.nonzero(x.numpy()))


def clip(a, a_min=None, a_max=None):
    """a clamped to [a_min, a_max] (Clamp for scalar bounds; Binary Max / Min for tensor
    bounds). None leaves that side open."""
    a = _t(a)
    if a_min is None and a_max is None:
        raise ValueError("clip: give a_min or a_max (or both)")
    if isinstance(a_min, Tensor) or isinstance(a_max, Tensor) or _np.ndim(a_min) or _np.ndim(
            a_max):
        if a_min is not None:
            a = maximum(a, a_min)
        if a_max is not None:
            a = minimum(a, a_max)
        return a
    lo = -_np.inf if a_min is None else float(a_min)
    hi = _np.inf if a_max is None else float(a_max)
    return ops.clamp(a, min=lo, max=hi)


def isnan(x):
    """x != x → bool (Compare Ne)."""
    x = _t(x)
    return not_equal(x, x)


def isinf(x):
    """|x| == inf → bool (Activation Abs, Compare Eq)."""
    x = _t(x)
    if not x.dtype.is_floating_point:
        return zeros_like(x, dtype=_tessel.bool_)
    return equal(abs(x), _np.inf)


def isfinite(x):
    """Neither NaN nor ±inf → bool (Binary Sub, Compare Eq: x - x is 0 only when finite)."""
    x = _t(x)
    if not x.dtype.is_floating_point:
        return ones_like(x, dtype=_tessel.bool_)
    return equal(subtract(x, x), 0)


# ---------------------------------------------------------------------------------------------
# Unary functions: the ActivationKind enum


def _activation(x, kind, alpha=None):
    return ops.activation(x, kind=kind, alpha=_np.nan if alpha is None else float(alpha))


# Variants whose numpy name is not the snake_case of the variant, and those given a hand-written
# function below (they take arguments); None: no top-level function (Identity is a no-op).
_NUMPY_NAMES = {"Neg": "negative", "Asin": "arcsin", "Acos": "arccos", "Atan": "arctan",
                "Asinh": "arcsinh", "Acosh": "arccosh", "Atanh": "arctanh", "Not": None,
                "Gelu": None, "GeluApprox": None, "LeakyRelu": None, "Elu": None,
                "Round": None, "Identity": None}
# Variants that keep an integer / bool input's dtype; the rest compute in float32 for them.
_INTEGER_VARIANTS = {"Neg", "Abs", "Sign", "Relu", "Square", "Floor", "Ceil", "Round"}


def _make_unary(kind, doc, name):
    keeps_integers = kind in _INTEGER_VARIANTS

    def fn(x):
        x = _t(x)
        if kind in ("Floor", "Ceil") and not x.dtype.is_floating_point:
            return x  # integers are already whole
        return _activation(x if keeps_integers else _to_float(x), kind)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{doc[0].upper()}{doc[1:]}, elementwise (Activation {kind})."
    return fn


_UNARY = []
for _v in _tessel.enums()["ActivationKind"]["values"]:
    _name = _NUMPY_NAMES.get(_v["name"], _ops.snake_case(_v["name"]))
    if _name is not None:
        globals()[_name] = _make_unary(_v["name"], _v["doc"], _name)
        _UNARY.append(_name)
del _v, _name

absolute = abs  # noqa: F821 (generated above)
asin, acos, atan = arcsin, arccos, arctan  # noqa: F821
asinh, acosh, atanh = arcsinh, arccosh, arctanh  # noqa: F821
_ALIASES = ["absolute", "asin", "acos", "atan", "asinh", "acosh", "atanh"]


def positive(x):
    """+x (nothing recorded: x itself)."""
    return _t(x)


def round(x, decimals=0):  # noqa: A001 (numpy's name)
    """Round half to even (Activation Round); decimals scales by 10**decimals around it.
    The gradient is straight-through (identity)."""
    x = _t(x)
    if not x.dtype.is_floating_point:  # integers: whole already, or rounded to tens, ...
        if decimals >= 0:
            return x
        scale = 10.0 ** -decimals
        return astype(multiply(_activation(divide(x, scale), "Round"), scale), x.dtype)
    if decimals == 0:
        return _activation(x, "Round")
    scale = 10.0 ** decimals
    return divide(_activation(multiply(x, scale), "Round"), scale)


around = round


def gelu(x, approximate=False):
    """GELU: exact erf form (Activation Gelu), or the tanh approximation (GeluApprox)."""
    return _activation(_to_float(_t(x)), "GeluApprox" if approximate else "Gelu")


def leaky_relu(x, negative_slope=0.01):
    """x if x > 0 else negative_slope·x (Activation LeakyRelu)."""
    return _activation(_to_float(_t(x)), "LeakyRelu", negative_slope)


def elu(x, alpha=1.0):
    """x if x > 0 else alpha·(e^x - 1) (Activation Elu)."""
    return _activation(_to_float(_t(x)), "Elu", alpha)


def stop_gradient(x):
    """x, with its gradient blocked (StopGradient)."""
    return ops.stop_gradient(_t(x))


def astype(x, dtype):
    """x converted to dtype (Cast; no op when the dtype is already x's)."""
    x = _t(x)
    dtype = _tessel.dtype(dtype)
    return x if x.dtype == dtype else ops.cast(x, to=dtype)


cast = astype


# ---------------------------------------------------------------------------------------------
# Linear algebra


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


# ---------------------------------------------------------------------------------------------
# Reductions


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


# ---------------------------------------------------------------------------------------------
# Shape and data movement


def reshape(a, *shape):
    """a with a new shape of the same size; one -1 is inferred (Reshape). reshape(a, (2, 3))
    and reshape(a, 2, 3) are the same."""
    a = _t(a)
    new = _shape_args(shape)
    if list(a.shape) == new:
        return a
    return ops.reshape(a, shape=new)


def ravel(a):
    """a as 1-D (Reshape)."""
    return reshape(a, [-1])


def flatten(a):
    """a as 1-D, numpy's ndarray.flatten (Reshape)."""
    return ravel(a)


def transpose(a, *axes):
    """a with its axes permuted; no axes: reversed (Transpose). transpose(a, (1, 0)) and
    transpose(a, 1, 0) are the same."""
    a = _t(a)
    if not axes or (len(axes) == 1 and axes[0] is None):
        perm = list(range(a.ndim))[::-1]
    else:
        perm = _shape_args(axes)
    if perm == list(range(a.ndim)):
        return a
    return ops.transpose(a, perm=perm)


permute_dims = transpose


def swapaxes(a, axis1, axis2):
    """a with two axes exchanged (Transpose)."""
    a = _t(a)
    perm = list(range(a.ndim))
    i, j = _norm_axis(axis1, a.ndim, "swapaxes"), _norm_axis(axis2, a.ndim, "swapaxes")
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a, source, destination):
    """a with the axes `source` moved to positions `destination`, the others in order
    (Transpose)."""
    a = _t(a)
    src = [_norm_axis(s, a.ndim, "moveaxis") for s in _axes(source)]
    dst = [_norm_axis(d, a.ndim, "moveaxis") for d in _axes(destination)]
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination need the same number of axes")
    order = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def squeeze(a, axis=None):
    """a without the given length-1 axes (None: all of them) (Reshape)."""
    a = _t(a)
    if axis is None:
        drop = [i for i, n in enumerate(a.shape) if n == 1]
    else:
        drop = [_norm_axis(i, a.ndim, "squeeze") for i in _axes(axis)]
        for i in drop:
            if a.shape[i] != 1:
                raise _tessel.ShapeError(
                    f"[squeeze] axis {i} has length {a.shape[i]}, not 1 (shape {a.shape})")
    return reshape(a, [n for i, n in enumerate(a.shape) if i not in drop])


def expand_dims(a, axis):
    """a with new length-1 axes at the positions `axis` of the result (Reshape)."""
    a = _t(a)
    axes = _axes(axis)
    ndim = a.ndim + len(axes)
    new = sorted(_norm_axis(i, ndim, "expand_dims") for i in axes)
    if len(set(new)) != len(new):
        raise ValueError(f"expand_dims: repeated axis in {axis}")
    shape = list(a.shape)
    for i in new:
        shape.insert(i, 1)
    return reshape(a, shape)


def atleast_1d(a):
    """a with at least one axis (Reshape)."""
    a = _t(a)
    return a if a.ndim >= 1 else reshape(a, [1])


def broadcast_to(a, shape):
    """a broadcast to `shape` by numpy's rules (Expand)."""
    a = _t(a)
    shape = _shape(shape)
    if list(a.shape) == shape:
        return a
    return ops.expand(a, shape=shape)


def broadcast_shapes(*shapes):
    """The broadcast shape of the given shapes (numpy's rules; nothing recorded)."""
    return _np.broadcast_shapes(*[tuple(s) for s in shapes])


def broadcast_arrays(*arrays):
    """The arrays broadcast to their common shape (Expand)."""
    ts = [_t(x) for x in arrays]
    shape = broadcast_shapes(*[t.shape for t in ts])
    return [broadcast_to(t, shape) for t in ts]


def concatenate(arrays, axis=0):
    """The arrays joined along an existing axis; axis=None flattens them first (Concat).
    Operands promote."""
    ts = _promote(*[_t(x) for x in arrays])
    if axis is None:
        ts, axis = [ravel(t) for t in ts], 0
    if len(ts) == 1:
        return ts[0]
    return ops.concat(ts, axis=int(axis))


concat = concatenate


def stack(arrays, axis=0):
    """The arrays (one shape) joined along a new axis (Reshape, Concat)."""
    ts = [_t(x) for x in arrays]
    if not ts:
        raise ValueError("stack: need at least one array")
    return concatenate([expand_dims(t, axis) for t in ts], axis=axis)


def split(a, indices_or_sections, axis=0):
    """a split along axis: into N equal parts (an int, which must divide the length), or at
    the given indices (Split). Returns a list."""
    a = _t(a)
    ax = _norm_axis(axis, a.ndim, "split")
    n = a.shape[ax]
    if isinstance(indices_or_sections, (numbers.Integral, _np.integer)):
        parts = int(indices_or_sections)
        if parts <= 0 or n % parts:
            raise ValueError(f"split: array split does not result in an equal division "
                             f"({n} into {parts})")
        sizes = [n // parts] * parts
    else:
        bounds = [builtins.min(builtins.max(int(i) + (n if i < 0 else 0), 0), n)
                  for i in indices_or_sections]
        edges = [0] + bounds + [n]
        sizes = [builtins.max(e - s, 0) for s, e in zip(edges[:-1], edges[1:])]
    if len(sizes) == 1:
        return [a]
    return list(ops.split(a, axis=ax, sizes=sizes))


def array_split(a, sections, axis=0):
    """a split into `sections` parts whose lengths differ by at most one (Split)."""
    a = _t(a)
    n = a.shape[_norm_axis(axis, a.ndim, "array_split")]
    q, r = divmod(n, int(sections))
    sizes = [q + 1] * r + [q] * (int(sections) - r)
    return split(a, list(_np.cumsum(sizes)[:-1]), axis)


def tile(a, reps):
    """a repeated `reps` times per axis (Tile); a short reps pads with 1s in front, a long one
    adds leading axes to a."""
    a = _t(a)
    reps = _shape(reps)
    if len(reps) > a.ndim:
        a = reshape(a, [1] * (len(reps) - a.ndim) + list(a.shape))
    reps = [1] * (a.ndim - len(reps)) + reps
    return ops.tile(a, repeats=reps)


def repeat(a, repeats, axis=None):
    """Each element repeated along axis; axis=None: of the flattened array. An int repeats
    every element alike (Reshape, Expand); a sequence of counts gathers (Gather)."""
    a = _t(a)
    if axis is None:
        a, axis = ravel(a), 0
    ax = _norm_axis(axis, a.ndim, "repeat")
    if isinstance(repeats, Tensor):
        repeats = repeats.numpy()
    if _np.ndim(repeats) == 0:
        r = int(repeats)
        if r < 0:
            raise ValueError("repeat: negative repeat count")
        shape = list(a.shape)
        y = expand_dims(a, ax + 1)
        y = broadcast_to(y, shape[:ax + 1] + [r] + shape[ax + 1:])
        return reshape(y, shape[:ax] + [shape[ax] * r] + shape[ax + 1:])
    counts = _np.asarray(repeats, dtype=_np.int64)
    if counts.shape != (a.shape[ax],):
        raise ValueError(f"repeat: {counts.size} counts for an axis of length {a.shape[ax]}")
    idx = _np.repeat(_np.arange(a.shape[ax], dtype=_np.int64), counts)
    return take(a, idx, axis=ax)


def flip(a, axis=None):
    """a reversed along axis (None: every axis) (Reverse)."""
    a = _t(a)
    axes = _axes(axis) if axis is not None else list(range(a.ndim))
    return ops.reverse(a, axes=axes)


def fliplr(a):
    """flip(a, 1) (Reverse)."""
    return flip(a, 1)


def flipud(a):
    """flip(a, 0) (Reverse)."""
    return flip(a, 0)


def roll(a, shift, axis=None):
    """Elements shifted cyclically along axis; axis=None: of the flattened array (Slice,
    Concat)."""
    a = _t(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    shifts, axes = _axes(shift), _axes(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    for s, ax in zip(shifts, axes):
        ax = _norm_axis(ax, a.ndim, "roll")
        n = a.shape[ax]
        if n == 0 or s % n == 0:
            continue
        s %= n
        tail = ops.narrow(a, axis=ax, start=n - s, length=s)
        head = ops.narrow(a, axis=ax, start=0, length=n - s)
        a = concatenate([tail, head], axis=ax)
    return a


_PAD_MODES = {"constant": "Constant", "reflect": "Reflect", "edge": "Replicate",
              "wrap": "Circular"}


def pad(array, pad_width, mode="constant", constant_values=0):
    """array padded per axis (Pad). pad_width: an int, (before, after), or one (before, after)
    per axis; mode: 'constant' (with constant_values, one scalar), 'reflect', 'edge', 'wrap'."""
    x = _t(array)
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode {mode!r} is not one of {sorted(_PAD_MODES)}")
    if _np.ndim(constant_values) != 0:
        raise ValueError("pad: constant_values must be one scalar here")
    widths = _np.broadcast_to(_np.asarray(pad_width, dtype=_np.int64), (x.ndim, 2))
    pads = [int(w) for w in widths[:, 0]] + [int(w) for w in widths[:, 1]]
    if (widths < 0).any():
        raise ValueError("pad: pad_width must be non-negative")
    return ops.pad(x, pads=pads, mode=_PAD_MODES[mode], value=float(constant_values))


def _index_tensor(indices, device):
    """Integer indices as a tensor (host data as int64 on `device`)."""
    if isinstance(indices, Tensor):
        if not (indices.dtype.is_integer):
            raise TypeError(f"indices must be integers, got {indices.dtype}")
        return indices
    arr = _np.asarray(indices)
    if arr.dtype.kind not in "iu" and arr.size:
        raise TypeError(f"indices must be integers, got {arr.dtype}")
    return Tensor(arr.astype(_np.int64), device=device)


def take(a, indices, axis=None):
    """Elements of a at `indices` along axis (negative indices wrap); axis=None: of the
    flattened array (Gather). The result's shape is a's with that axis replaced by
    indices'."""
    a = _t(a)
    if axis is None:
        a, axis = ravel(a), 0
    return ops.gather(a, _index_tensor(indices, a.device), axis=int(axis))


def take_along_axis(arr, indices, axis):
    """arr[..., indices, ...] pairing indices with arr's positions on the other axes, which
    broadcast (GatherElements); axis=None uses the flattened array."""
    arr = _t(arr)
    idx = _index_tensor(indices, arr.device)
    if axis is None:
        arr, axis = ravel(arr), 0
    ax = _norm_axis(axis, arr.ndim, "take_along_axis")
    if idx.ndim != arr.ndim:
        raise ValueError(f"take_along_axis: indices have {idx.ndim} axes, arr has {arr.ndim}")
    shape = list(broadcast_shapes(
        [1 if i == ax else n for i, n in enumerate(arr.shape)],
        [1 if i == ax else n for i, n in enumerate(idx.shape)]))
    idx = broadcast_to(idx, shape[:ax] + [idx.shape[ax]] + shape[ax + 1:])
    arr = broadcast_to(arr, shape[:ax] + [arr.shape[ax]] + shape[ax + 1:])
    return ops.gather_elements(arr, idx, axis=ax)


def tril(m, k=0):
    """The lower triangle of the last two axes (on and below diagonal k), zeros above
    (Trilu upper=False)."""
    return ops.trilu(_t(m), upper=False, k=int(k))


def triu(m, k=0):
    """The upper triangle of the last two axes (on and above diagonal k), zeros below
    (Trilu upper=True)."""
    return ops.trilu(_t(m), upper=True, k=int(k))


def one_hot(indices, depth, axis=-1, dtype=_tessel.float32):
    """One-hot encoding of integer indices with `depth` classes along a new axis; negative
    indices wrap, out-of-range ones give all-zero rows (OneHot)."""
    idx = _index_tensor(indices, None)
    return ops.one_hot(idx, depth=int(depth), axis=int(axis), dtype=_tessel.dtype(dtype))


# ---------------------------------------------------------------------------------------------
# Creation


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


from . import random  # noqa: E402  (tessel.random: RngUniform / RngNormal)

__all__ = [
    # elementwise binaries
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod",
    "fmod", "power", "pow", "maximum", "minimum", "arctan2", "atan2", "equal", "not_equal",
    "less", "less_equal", "greater", "greater_equal", "bitwise_and", "bitwise_or",
    "bitwise_xor", "left_shift", "right_shift", "logical_and", "logical_or", "logical_xor",
    "logical_not", "invert", "bitwise_not", "where", "nonzero", "clip", "isnan", "isinf",
    "isfinite",
    # unary
    *_UNARY, *_ALIASES, "positive", "round", "around", "gelu", "leaky_relu", "elu",
    "stop_gradient", "astype", "cast",
    # linear algebra
    "matmul", "tensordot", "dot", "vdot", "inner", "outer", "einsum",
    # reductions
    "sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "logsumexp", "all",
    "any", "argmax", "argmin", "cumsum", "cumprod", "sort", "argsort", "topk", "softmax",
    "log_softmax",
    # shape
    "reshape", "ravel", "flatten", "transpose", "permute_dims", "swapaxes", "moveaxis",
    "squeeze", "expand_dims", "atleast_1d", "broadcast_to", "broadcast_shapes",
    "broadcast_arrays", "concatenate", "concat", "stack", "split", "array_split", "tile",
    "repeat", "flip", "fliplr", "flipud", "roll", "pad", "take", "take_along_axis", "tril",
    "triu", "one_hot",
    # creation
    "full", "zeros", "ones", "full_like", "zeros_like", "ones_like", "eye", "identity",
    "arange", "linspace", "random",
]
