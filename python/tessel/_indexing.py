"""numpy indexing for tessel.Tensor (`x[key]`) and JAX-style functional updates
(`tessel.at(x)[key].set(v)`), recorded as differentiable ops of the table.

Basic indexing (ints, slices with any step, None, Ellipsis) records one Slice and Reshapes.
Advanced indexing (integer lists / arrays / tensors, broadcast together; boolean masks) records
a GatherNd over the indexed axes moved to the front, then a Transpose that puts the broadcast
index dimensions where numpy puts them: in place of the advanced indices when those are
adjacent in the key (ints count as advanced indices here, as in numpy), first otherwise.

A boolean mask selects a number of elements that depends on its values, so a mask (numpy array
or Tensor) is evaluated eagerly and turned into integer indices (numpy's nonzero); the result is
still differentiable with respect to x.
"""
import numbers

import numpy as _np

from . import _numpy as api
from . import _tessel, ops
from ._tensor import Tensor, as_tensor

__all__ = ["at"]

_INT_MIN_END = -(2 ** 62)  # an end below every axis: a negative-step slice runs through index 0


def _is_int(k):
    return isinstance(k, (numbers.Integral, _np.integer)) and not isinstance(k, (bool, _np.bool_))


def _is_bool_index(k):
    if isinstance(k, (bool, _np.bool_)):
        return True
    if isinstance(k, Tensor):
        return k.dtype == _tessel.bool_
    return isinstance(k, (_np.ndarray, list, tuple)) and _np.asarray(k).dtype == _np.bool_


def _is_advanced(k):
    return isinstance(k, (Tensor, _np.ndarray, list, tuple))


def _entries(key):
    """The key as a list of (kind, value[, mask shape]) with kind 'slice', 'int', 'array',
    'new' (None), 'ellipsis' or 'bool' (a bool scalar); a boolean mask becomes its nonzero
    integer arrays, one 'array' per masked axis, each carrying the mask's shape."""
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if _is_bool_index(k):
            mask = k.numpy() if isinstance(k, Tensor) else _np.asarray(k, dtype=_np.bool_)
            if mask.ndim == 0:
                out.append(("bool", bool(mask)))
            else:
                out += [("array", a, mask.shape) for a in _np.nonzero(mask)]
        elif k is None:
            out.append(("new", None))
        elif k is Ellipsis:
            out.append(("ellipsis", None))
        elif isinstance(k, slice):
            out.append(("slice", k))
        elif _is_int(k):
            out.append(("int", int(k)))
        elif _is_advanced(k):
            out.append(("array", k))
        elif hasattr(k, "__index__"):
            out.append(("int", k.__index__()))
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None, and integer "
                             f"or boolean arrays are valid indices, got {type(k).__name__}")
    return out


def _expand_key(key, ndim):
    """(new_axes, entries): the positions at which length-1 axes are inserted into x, and one
    entry (kind, value, axis[, mask shape]) per axis of that expanded x, kind 'slice', 'int'
    or 'array'. None becomes ':' over an inserted axis (the same result, and numpy's rule that
    it separates advanced indices holds for a slice too), a bool scalar an index array [0] or
    [] over an inserted axis, Ellipsis as many ':' as needed."""
    items = _entries(key)
    if sum(1 for it in items if it[0] == "ellipsis") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for it in items if it[0] in ("slice", "int", "array"))
    if used > ndim:
        raise IndexError(f"too many indices for tensor: tensor is {ndim}-dimensional, but "
                         f"{used} were indexed")
    if not any(it[0] == "ellipsis" for it in items):
        items.append(("ellipsis", None))
    new_axes, entries = [], []
    for it in items:
        kind = it[0]
        if kind == "ellipsis":
            entries += [("slice", slice(None))] * (ndim - used)
        elif kind == "new":
            new_axes.append(len(entries))
            entries.append(("slice", slice(None)))
        elif kind == "bool":
            new_axes.append(len(entries))
            entries.append(("array", _np.arange(int(it[1]), dtype=_np.int64)))
        else:
            entries.append(it)
    return new_axes, [(e[0], e[1], axis) + tuple(e[2:]) for axis, e in enumerate(entries)]


def _check_mask_shape(entries, shape):
    i = 0
    while i < len(entries):
        e = entries[i]
        if e[0] == "array" and len(e) == 4:  # the first axis of a mask
            mshape = tuple(e[3])
            have = tuple(shape[e[2]:e[2] + len(mshape)])
            if have != mshape:
                raise IndexError(f"boolean index of shape {mshape} does not match the indexed "
                                 f"axes {have} (tensor shape {tuple(shape)})")
            i += len(mshape)
        else:
            i += 1


def _slice_bounds(s, n):
    """ONNX Slice start / end / step for the Python slice s on an axis of length n."""
    start, stop, step = s.indices(n)
    if step < 0 and stop < 0:
        stop = _INT_MIN_END
    return start, stop, step


def _int_index(i, n, axis):
    i = int(i)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    return i % n


def _apply_slices(x, entries):
    """One Slice for every non-trivial slice and every int (kept as a length-1 axis)."""
    starts, ends, axes, steps = [], [], [], []
    for e in entries:
        if e[0] == "slice":
            s, ax = e[1], e[2]
            if s == slice(None):
                continue
            start, stop, step = _slice_bounds(s, x.shape[ax])
        elif e[0] == "int":
            ax = e[2]
            start = _int_index(e[1], x.shape[ax], ax)
            stop, step = start + 1, 1
        else:
            continue
        starts.append(start)
        ends.append(stop)
        axes.append(ax)
        steps.append(step)
    if not axes:
        return x
    return ops.slice(x, starts=starts, ends=ends, axes=axes, steps=steps)


def _index_array(k, n, axis, device):
    """An advanced index as an int64 tensor with negative indices wrapped. Host indices are
    bounds-checked here; a Tensor's are wrapped in the graph (its values are not known)."""
    if isinstance(k, Tensor):
        if not k.dtype.is_integer:
            raise IndexError(f"arrays used as indices must be of integer (or boolean) type, "
                             f"got {k.dtype}")
        k = k.astype(_tessel.int64)
        return api.where(api.less(k, 0), api.add(k, n), k)
    arr = _np.asarray(k)
    if arr.size == 0:
        arr = arr.astype(_np.int64)
    if arr.dtype.kind not in "iu":
        raise IndexError(f"arrays used as indices must be of integer (or boolean) type, got "
                         f"{arr.dtype}")
    arr = arr.astype(_np.int64)
    bad = (arr < -n) | (arr >= n)
    if bad.any():
        raise IndexError(f"index {int(arr[bad][0])} is out of bounds for axis {axis} with size "
                         f"{n}")
    return Tensor(_np.where(arr < 0, arr + n, arr), device=device)


def getitem(x, key):
    """x[key] with numpy semantics: ints (negative count from the end), slices with any step,
    None / numpy.newaxis, Ellipsis, integer lists / arrays / tensors (broadcast together) and
    boolean masks (numpy arrays or tensors; evaluated eagerly, since the result's shape depends
    on their values). Records Slice / Reshape for basic indexing and GatherNd / Transpose /
    Reshape for advanced indexing; differentiable with respect to x."""
    new_axes, entries = _expand_key(key, x.ndim)
    if new_axes:
        shape = list(x.shape)
        for i in new_axes:
            shape.insert(i, 1)
        x = api.reshape(x, shape)
    _check_mask_shape(entries, x.shape)
    advanced = any(e[0] == "array" for e in entries)
    if advanced:  # numpy: an int next to index arrays is a 0-d index array
        entries = [("array", e[1], e[2]) if e[0] == "int" else e for e in entries]
    y = _apply_slices(x, entries)

    if not advanced:
        return api.reshape(y, [y.shape[e[2]] for e in entries if e[0] == "slice"])

    adv = [e for e in entries if e[0] == "array"]
    adv_axes = [e[2] for e in adv]
    index_tensors = [_index_array(e[1], y.shape[e[2]], e[2], y.device) for e in adv]
    bshape = list(_np.broadcast_shapes(*[tuple(t.shape) for t in index_tensors]))
    rest_axes = [i for i in range(y.ndim) if i not in adv_axes]
    moved = api.transpose(y, adv_axes + rest_axes)
    stacked = api.stack([api.broadcast_to(t, bshape) for t in index_tensors], axis=-1)
    gathered = ops.gather_nd(moved, stacked)  # bshape + rest dims

    # numpy's placement: the broadcast dims replace adjacent advanced indices, else go first
    positions = [i for i, e in enumerate(entries) if e[0] == "array"]
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    nb = len(bshape)
    order = [] if adjacent else list(range(nb))
    rest_i = 0
    for i, e in enumerate(entries):
        if e[0] == "slice":
            order.append(nb + rest_i)
            rest_i += 1
        elif adjacent and i == positions[0]:
            order += list(range(nb))
    return api.transpose(gathered, order)


class _Update:
    """tessel.at(x)[key]: the functional updates of the elements x[key] selects."""

    def __init__(self, x, key):
        self._x, self._key = x, key

    def _scatter(self, values, reduction):
        x = self._x
        # The flat positions x[key] selects, by the same indexing path as getitem.
        flat_index = _np.arange(x.size, dtype=_np.int64).reshape(x.shape)
        positions = getitem(Tensor(flat_index, device=x.device), self._key)
        values = api.broadcast_to(api.astype(as_tensor(values, x),
                                                   x.dtype), positions.shape)
        flat = ops.scatter_nd(api.ravel(x), api.expand_dims(positions, -1), values,
                                 reduction=reduction)
        return api.reshape(flat, x.shape)

    def get(self):
        """x[key] (as getitem)."""
        return getitem(self._x, self._key)

    def set(self, values):
        """x with x[key] replaced by values, broadcast (ScatterNd, reduction None); with
        repeated indices one of the values wins."""
        return self._scatter(values, "None")

    def add(self, values):
        """x with values added at x[key]; repeated indices accumulate (ScatterNd Add)."""
        return self._scatter(values, "Add")

    def subtract(self, values):
        """x with values subtracted at x[key]; repeated indices accumulate (ScatterNd Add of
        -values)."""
        return self._scatter(api.negative(as_tensor(values, self._x)), "Add")

    def multiply(self, values):
        """x with x[key] multiplied by values; repeated indices accumulate (ScatterNd Mul)."""
        return self._scatter(values, "Mul")

    def min(self, values):
        """x with x[key] replaced by min(x[key], values) (ScatterNd Min; not differentiable)."""
        return self._scatter(values, "Min")

    def max(self, values):
        """x with x[key] replaced by max(x[key], values) (ScatterNd Max; not differentiable)."""
        return self._scatter(values, "Max")


class _At:
    def __init__(self, x):
        self._x = x

    def __getitem__(self, key):
        return _Update(self._x, key)


def at(x):
    """Functional updates, JAX style: `tessel.at(x)[key].set(v)` is a new tensor equal to x
    except at x[key] (any numpy index, see getitem), where it is v (broadcast to x[key]'s
    shape, cast to x's dtype); also .add, .subtract, .multiply, .min, .max and .get. Records
    ScatterNd on the flattened x; differentiable in x and v for set / add / multiply."""
    if not isinstance(x, Tensor):
        raise TypeError(f"tessel.at needs a tessel.Tensor, got {type(x).__name__}")
    return _At(x)
