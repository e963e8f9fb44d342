"""Tessel: a tensor compiler and runtime (see README.md).

Tensors are lazy: ops record work, and a value is computed (compiled for the tensor's device,
cached by structure, shapes and dtypes) when it is needed — numpy(), item(), printing — or on
tessel.eval(). Devices are backends by name (tessel.devices()); moving data between them is
explicit (Tensor.to). The Python package's default device is "cpu" (the C++ API's is
"reference", the oracle); tessel.set_default_device changes it.

Namespaces:
  tessel.*       numpy-style functions (matmul, softmax(x, axis=-1), sum(x, axis=None), ...)
  tessel.ops     every ready op kind of the op table, generated from it, exact schema
  tessel.nn      modules whose parameters are nested dicts of tensors
  tessel.optim   the optimizers, schedules and clipping of the C++ library
"""
import json as _json
import sys as _sys

from . import _tessel
from ._tessel import (DType, Error, ShapeError, DTypeError, UnsupportedError, FormatError,
                      IoError, DeviceError, OutOfMemoryError, InternalError, InvalidValueError,
                      Tensor, dtype, dtypes, devices, default_device, set_default_device,
                      promote_types, op_table, enums, memory_stats, memory_reset_peak,
                      memory_release_cache, __version__)

for _dt in dtypes:
    globals()[_dt.name] = _dt
bool_ = _tessel.bool_
del _dt

from . import _tensor  # noqa: E402

_tensor.install()

from . import _ops  # noqa: E402
from ._ops import op  # noqa: E402

ops = _ops.build_module()
_sys.modules[__name__ + ".ops"] = ops

from ._numpy import *  # noqa: E402,F401,F403
from ._indexing import *  # noqa: E402,F401,F403
from ._transforms import *  # noqa: E402,F401,F403
from ._dlpack import *  # noqa: E402,F401,F403
from . import nn, optim, onnx  # noqa: E402,F401


def eval(*tensors):  # noqa: A001 (numpy has no eval; this is tessel's)
    """Evaluates the given tensors (or nested lists / tuples / dicts of them) together, in one
    compiled graph per device; returns its argument unchanged."""
    from ._tree import flatten
    leaves = [t for t in flatten(tensors)[0] if isinstance(t, Tensor)]
    by_device = {}
    for t in leaves:
        by_device.setdefault(t.device, []).append(t)
    for group in by_device.values():
        _tessel.eval(group)
    return tensors[0] if len(tensors) == 1 else tensors


def coverage():
    """The coverage matrix as data: {"backends": [names], "cells": [{"kind", "variant",
    "dtype", "backend", "how"}], "pending": [{"kind", "topic"}]} — every (kind, variant, dtype)
    cell a backend claims, and how ("native", "decomposed", "host")."""
    return _json.loads(_tessel.coverage_json())


def save_safetensors(path, tensors, metadata=None):
    """Writes {name: tensor} (tensors, numpy arrays or nested lists; evaluated here) to a
    safetensors file, atomically (a temporary file, then a rename). `metadata`: {str: str}."""
    pairs = [(str(k), v if isinstance(v, Tensor) else Tensor(v)) for k, v in tensors.items()]
    _tessel.save_safetensors(str(path), pairs, dict(metadata or {}))


def load_safetensors(path, device=None):
    """Reads a safetensors file: ({name: Tensor} in file order, {metadata}). The header is
    validated; a malformed file raises tessel.FormatError naming the file and the problem."""
    return _tessel.load_safetensors(str(path), device)


def load_digits(path=None):
    """The 8x8 handwritten digits (sklearn's, as Debian's python3-sklearn ships them), read in
    C++: (x [1797, 64] float32 in [0, 1], y [1797] int64)."""
    return _tessel.load_digits("" if path is None else str(path))


set_default_device("cpu")
