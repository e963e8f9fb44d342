"""Shape and data movement: reshape, transpose, squeeze, concatenate, split, tile, pad, take,
tril, one_hot, ... with numpy's conventions."""
import builtins
import numbers

import numpy as _np

from . import _tessel, ops
from ._np_util import _axes, _norm_axis, _promote, _shape, _shape_args, _t
from ._tensor import Tensor


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


__all__ = ["reshape", "ravel", "flatten", "transpose", "permute_dims", "swapaxes", "moveaxis", "squeeze", "expand_dims", "atleast_1d", "broadcast_to", "broadcast_shapes", "broadcast_arrays", "concatenate", "concat", "stack", "split", "array_split", "tile", "repeat", "flip", "fliplr", "flipud", "roll", "pad", "take", "take_along_axis", "tril", "triu", "one_hot"]
