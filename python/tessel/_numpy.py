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
from . import ops  # noqa: F401 (the generated tessel.ops, registered by __init__ first)
from . import _creation, _elementwise, _linalg, _reductions, _shape
from . import random  # tessel.random: RngUniform / RngNormal
from ._creation import *  # noqa: F401,F403
from ._elementwise import *  # noqa: F401,F403
from ._linalg import *  # noqa: F401,F403
from ._reductions import *  # noqa: F401,F403
from ._shape import *  # noqa: F401,F403

_UNARY = _elementwise._UNARY  # the functions generated from ActivationKind

__all__ = [*_elementwise.__all__, *_linalg.__all__, *_reductions.__all__, *_shape.__all__,
           *_creation.__all__, "random"]
