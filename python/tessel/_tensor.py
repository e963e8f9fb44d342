"""tessel.Tensor's Python half: operators with Python scalars, numpy interop dunders, indexing,
and numpy-style methods (each forwards to the top-level function of the same name, so that
`x.sum(axis=1)` and `tessel.sum(x, axis=1)` are one code path)."""
import numbers

import numpy as _np

from . import _tessel

Tensor = _tessel.Tensor


def scalar_dtype(value, like):
    """The dtype a Python scalar takes next to a tensor of dtype `like` (PyTorch's rule: a
    scalar never widens the tensor's kind within it; a float scalar with an integer or bool
    tensor gives float32, an int scalar with a bool tensor int64)."""
    if isinstance(value, (bool, _np.bool_)):
        return like
    if isinstance(value, numbers.Integral):
        return _tessel.int64 if like == _tessel.bool_ else like
    if isinstance(value, numbers.Real):
        return like if (like.is_floating_point or like.is_complex) else _tessel.float32
    if isinstance(value, numbers.Complex):
        return like if like.is_complex else _tessel.complex64
    raise TypeError(f"unsupported operand type {type(value).__name__} with a tessel.Tensor")


def as_tensor(value, like=None):
    """`value` as a Tensor; a Python scalar takes its dtype and device from the tensor `like`."""
    if isinstance(value, Tensor):
        return value
    if like is not None and isinstance(value, (numbers.Number, _np.generic)) and not isinstance(
            value, _np.ndarray):
        return Tensor(value, dtype=scalar_dtype(value, like.dtype), device=like.device)
    if like is not None:
        return Tensor(value, device=like.device)
    return Tensor(value)


def _binary(fn, swap=False):
    def method(self, other):
        if not isinstance(other, (Tensor, numbers.Number, _np.generic, _np.ndarray, list, tuple)):
            return NotImplemented
        other = as_tensor(other, self)
        return fn(other, self) if swap else fn(self, other)
    return method


def _top(name):
    """A method forwarding to tessel.<name>(self, ...), looked up when called."""
    def method(self, *args, **kwargs):
        import tessel
        return getattr(tessel, name)(self, *args, **kwargs)
    method.__name__ = name
    return method


def _forward(name):
    """A binary function calling tessel.<name>(a, b), looked up when called."""
    def fn(a, b):
        import tessel
        return getattr(tessel, name)(a, b)
    return fn


def _array(self, dtype=None, copy=None):
    a = self.numpy()
    if dtype is not None:
        return a.astype(dtype)
    return a.copy() if copy else a


def _bool(self):
    if self.size != 1:
        raise ValueError(f"the truth value of a tensor with {self.size} elements is ambiguous; "
                         "use tessel.any() or tessel.all()")
    return bool(self.item())


def _index(self):
    if not (self.dtype.is_integer or self.dtype == _tessel.bool_) or self.size != 1:
        raise TypeError("only one-element integer tensors can be used as an index")
    return int(self.item())


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self.shape[0]))


def _getitem(self, key):
    from . import _indexing
    return _indexing.getitem(self, key)


def _setitem(self, key, value):
    raise TypeError("tessel tensors are immutable; use tessel.at(x)[key].set(value) or "
                    "tessel.where for a functional update")


def install():
    T = Tensor
    T.__add__, T.__radd__ = _binary(_tessel.add), _binary(_tessel.add, swap=True)
    T.__sub__, T.__rsub__ = _binary(_tessel.sub), _binary(_tessel.sub, swap=True)
    T.__mul__, T.__rmul__ = _binary(_tessel.mul), _binary(_tessel.mul, swap=True)
    T.__truediv__ = _binary(_forward("divide"))  # true division: integers divide in float
    T.__rtruediv__ = _binary(_forward("divide"), swap=True)
    T.__floordiv__ = _binary(_forward("floor_divide"))
    T.__rfloordiv__ = _binary(_forward("floor_divide"), swap=True)
    T.__mod__ = _binary(_forward("remainder"))
    T.__rmod__ = _binary(_forward("remainder"), swap=True)
    T.__pow__, T.__rpow__ = _binary(_tessel.pow), _binary(_tessel.pow, swap=True)
    T.__matmul__ = _binary(_forward("matmul"))
    T.__rmatmul__ = _binary(_forward("matmul"), swap=True)
    T.__and__ = T.__rand__ = _binary(_forward("bitwise_and"))
    T.__or__ = T.__ror__ = _binary(_forward("bitwise_or"))
    T.__xor__ = T.__rxor__ = _binary(_forward("bitwise_xor"))
    T.__lshift__ = _binary(_forward("left_shift"))
    T.__rshift__ = _binary(_forward("right_shift"))
    T.__lt__ = _binary(_tessel.less)
    T.__le__ = _binary(_tessel.less_equal)
    T.__gt__ = _binary(_tessel.greater)
    T.__ge__ = _binary(_tessel.greater_equal)
    T.__eq__ = _binary(_tessel.equal)
    T.__ne__ = _binary(_tessel.not_equal)
    T.__hash__ = None  # == is elementwise, so tensors are not hashable (as in numpy)
    T.__neg__ = _top("negative")
    T.__pos__ = lambda self: self
    T.__abs__ = _top("abs")
    T.__invert__ = _top("invert")
    T.__array__ = _array
    T.__array_priority__ = 1000  # numpy defers to Tensor's reflected operators
    T.__bool__ = _bool
    T.__float__ = lambda self: float(self.item())
    T.__int__ = lambda self: int(self.item())
    T.__complex__ = lambda self: complex(self.item())
    T.__index__ = _index
    T.__iter__ = _iter
    T.__getitem__ = _getitem
    T.__setitem__ = _setitem
    T.tolist = lambda self: self.numpy().tolist()
    T.T = property(lambda self: _top("transpose")(self))
    T.mT = property(lambda self: _top("swapaxes")(self, -1, -2))
    for name in METHODS:
        setattr(T, name, _top(name))


# Methods that are the top-level function of the same name applied to self.
METHODS = [
    "reshape", "transpose", "swapaxes", "flatten", "squeeze", "expand_dims", "broadcast_to",
    "sum", "mean", "max", "min", "prod", "var", "std", "argmax", "argmin", "all", "any",
    "logsumexp", "cumsum", "cumprod", "sort", "argsort", "clip", "round", "abs", "exp", "log",
    "sqrt", "matmul", "softmax", "log_softmax", "take", "repeat", "tile", "flip",
]
