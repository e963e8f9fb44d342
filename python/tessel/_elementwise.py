"""Elementwise functions: the promoting binaries, comparisons, bitwise and logical ops,
where / clip / predicates, and the unary functions of the ActivationKind enum (generated from
tessel.enums(), so a new variant in src/ir/ops.def becomes a function by itself)."""
import numpy as _np

from . import _ops, _tessel, ops
from ._np_util import _pair, _promote, _t, _to_float
from ._tensor import Tensor


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
        return not_equal(x, x)  # all False
    return equal(abs(x), _np.inf)


def isfinite(x):
    """Neither NaN nor ±inf → bool (Binary Sub, Compare Eq: x - x is 0 only when finite)."""
    x = _t(x)
    if not x.dtype.is_floating_point:
        return equal(x, x)  # all True
    return equal(subtract(x, x), 0)


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


__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod", "fmod", "power", "pow", "maximum", "minimum", "arctan2", "atan2", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "logical_and", "logical_or", "logical_xor", "logical_not", "invert", "bitwise_not", "where", "nonzero", "clip", "isnan", "isinf", "isfinite", *_UNARY, *_ALIASES, "positive", "round", "around", "gelu", "leaky_relu", "elu", "stop_gradient", "astype", "cast"]
