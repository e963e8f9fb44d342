"""Shape and data-movement functions and the creation functions of the tessel namespace
against numpy on every device: reshape / transpose / moveaxis / squeeze / expand_dims /
broadcast, concatenate / stack / split, tile / repeat / flip / roll / pad, take /
take_along_axis, tril / triu / one_hot, arange / linspace / zeros / full / eye, tessel.random;
errors for bad axes and shapes; gradients against finite differences."""
import numpy as np
import pytest

import tessel
from helpers import T, close, check_grads

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def same(got, want):
    assert isinstance(got, tessel.Tensor)
    np.testing.assert_array_equal(got.numpy(), want)
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)


def test_reshape_ravel_flatten(device):
    same(tessel.reshape(T(X), (4, -1)), X.reshape(4, -1))
    same(T(X).reshape(6, 4), X.reshape(6, 4))
    same(T(X).reshape([24]), X.reshape(24))
    same(tessel.ravel(T(X)), X.ravel())
    same(T(X).flatten(), X.flatten())
    with pytest.raises(ValueError, match=r"\[Reshape\]"):
        tessel.reshape(T(X), (5, 5))


def test_transpose_swapaxes_moveaxis(device):
    same(tessel.transpose(T(X)), X.transpose())
    same(T(X).transpose(1, 0, 2), X.transpose(1, 0, 2))
    same(tessel.transpose(T(X), (2, 0, 1)), X.transpose(2, 0, 1))
    same(T(X).T, X.T)
    same(T(X).mT, np.swapaxes(X, -1, -2))
    same(tessel.swapaxes(T(X), 0, -1), np.swapaxes(X, 0, -1))
    for src, dst in [(0, -1), (-1, 0), ((0, 1), (2, 0)), ([2], [1])]:
        same(tessel.moveaxis(T(X), src, dst), np.moveaxis(X, src, dst))
    with pytest.raises(ValueError):
        tessel.swapaxes(T(X), 0, 3)
    with pytest.raises(ValueError, match=r"\[Transpose\]"):
        tessel.transpose(T(X), (0, 0, 1))


def test_squeeze_expand_dims_broadcast(device):
    y = X.reshape(2, 1, 3, 1, 4)
    same(tessel.squeeze(T(y)), np.squeeze(y))
    same(T(y).squeeze(axis=3), np.squeeze(y, axis=3))
    same(tessel.squeeze(T(y), (1, -2)), np.squeeze(y, (1, -2)))
    with pytest.raises(ValueError):
        tessel.squeeze(T(X), 0)
    same(tessel.expand_dims(T(X), 0), np.expand_dims(X, 0))
    same(T(X).expand_dims(-1), np.expand_dims(X, -1))
    same(tessel.expand_dims(T(X), (0, 4)), np.expand_dims(X, (0, 4)))
    same(tessel.broadcast_to(T(X[:, :1]), (5, 2, 3, 4)), np.broadcast_to(X[:, :1], (5, 2, 3, 4)))
    with pytest.raises(ValueError, match=r"\[Expand\]"):
        tessel.broadcast_to(T(X), (3, 3, 4))
    a, b = tessel.broadcast_arrays(T(X[:1, :, :1]), T(X[1, 0]))
    same(a, np.broadcast_to(X[:1, :, :1], (1, 3, 4)))
    same(b, np.broadcast_to(X[1, 0], (1, 3, 4)))


def test_concatenate_stack_split(device):
    parts = [X, X * 2, X[:1]]
    same(tessel.concatenate([T(p) for p in parts]), np.concatenate(parts))
    same(tessel.concatenate([T(X), T(X)], axis=-1), np.concatenate([X, X], -1))
    same(tessel.concatenate([T(X), T(X[:, :2])], axis=None), np.concatenate([X, X[:, :2]],
                                                                             axis=None))
    mixed = tessel.concatenate([T(X), T(X.astype(np.int32))], axis=0)
    assert mixed.dtype == tessel.float32
    same(tessel.stack([T(X), T(X + 1)]), np.stack([X, X + 1]))
    same(tessel.stack([T(X), T(X + 1)], axis=-1), np.stack([X, X + 1], axis=-1))
    for spec, axis in [(2, 0), (3, 1), ([1, 3], 2), ([-1], 2), ([0, 5], 2)]:
        got = tessel.split(T(X), spec, axis=axis)
        want = np.split(X, spec, axis=axis)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    for g, w in zip(tessel.array_split(T(X), 3, axis=2), np.array_split(X, 3, axis=2)):
        same(g, w)
    with pytest.raises(ValueError):
        tessel.split(T(X), 3, axis=2)
    with pytest.raises(ValueError, match=r"\[Concat\]"):
        tessel.concatenate([T(X), T(X[:, :2])], axis=0)


def test_tile_repeat_flip_roll(device):
    for reps in [2, (2, 1, 1), (1, 3), (2, 1, 1, 2)]:
        same(tessel.tile(T(X), reps), np.tile(X, reps))
    same(T(X).tile((1, 2, 1)), np.tile(X, (1, 2, 1)))
    for repeats, axis in [(2, None), (3, 1), ([1, 0, 2], 1), (2, -1)]:
        same(tessel.repeat(T(X), repeats, axis=axis), np.repeat(X, repeats, axis=axis))
    same(T(X).repeat(2, axis=0), np.repeat(X, 2, axis=0))
    for axis in [None, 0, (1, 2), -1]:
        same(tessel.flip(T(X), axis), np.flip(X, axis))
    same(T(X).flip(1), np.flip(X, 1))
    same(tessel.fliplr(T(X)), np.fliplr(X))
    for shift, axis in [(1, None), (-2, 2), (5, 1), ((1, 2), (0, 2))]:
        same(tessel.roll(T(X), shift, axis), np.roll(X, shift, axis))


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
@pytest.mark.parametrize("width", [1, (1, 2), ((0, 1), (2, 0), (1, 1))], ids=str)
def test_pad_modes(device, mode, width):
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    kw = {"constant_values": 7} if mode == "constant" else {}
    same(tessel.pad(T(x), width, mode=mode, **kw), np.pad(x, width, mode=mode, **kw))


def test_pad_errors(device):
    with pytest.raises(ValueError, match=r"\[Pad\].*reflect padding 2"):
        tessel.pad(T(X), 2, mode="reflect").eval()  # numpy would reflect twice
    with pytest.raises(ValueError, match="mode"):
        tessel.pad(T(X), 1, mode="symmetric")
    with pytest.raises(ValueError):
        tessel.pad(T(X), -1)


def test_take_and_take_along_axis(device):
    idx = np.array([[2, -1], [0, 0]])
    for axis in [None, 0, 1, 2, -1]:
        n = X.size if axis is None else X.shape[axis]
        same(tessel.take(T(X), idx % n, axis=axis), np.take(X, idx % n, axis=axis))
    same(tessel.take(T(X), idx, axis=2), np.take(X, idx, axis=2))  # negative indices wrap
    same(T(X).take(T(np.array([1, 0])), axis=1), np.take(X, [1, 0], axis=1))
    order = np.argsort(-X, axis=2)
    same(tessel.take_along_axis(T(X), order, axis=2), np.take_along_axis(X, order, axis=2))
    few = np.array([[[0]], [[2]]])  # broadcasts against X's other axes
    same(tessel.take_along_axis(T(X), few, axis=1), np.take_along_axis(X, few, axis=1))
    with pytest.raises(TypeError):
        tessel.take(T(X), np.array([0.5]))


def test_tril_triu_one_hot(device):
    m = X + 1
    for k in [0, 1, -1, 5]:
        same(tessel.tril(T(m), k), np.tril(m, k))
        same(tessel.triu(T(m), k=k), np.triu(m, k))
    labels = np.array([[0, 2], [-1, 5]])
    got = tessel.one_hot(T(labels), 3)
    want = np.zeros((2, 2, 3), np.float32)
    for (i, j), v in np.ndenumerate(labels):
        if -3 <= v < 3:
            want[i, j, v] = 1
    same(got, want)
    same(tessel.one_hot(T(np.array([1, 0])), 2, axis=0, dtype=tessel.int32),
         np.array([[0, 1], [1, 0]], np.int32))


def test_creation(device):
    r = tessel.arange(5)
    assert r.device == device
    same(r, np.arange(5))
    same(tessel.arange(2, 11, 3), np.arange(2, 11, 3))
    same(tessel.arange(1.0, 2.0, 0.25), np.arange(1.0, 2.0, 0.25, dtype=np.float32))
    same(tessel.arange(5, 0, -2, dtype=tessel.int32), np.arange(5, 0, -2, dtype=np.int32))
    for args in [(0, 1, 5), (-2.0, 3.0, 7), (1, 2, 1), (0, 1, 0)]:
        close(tessel.linspace(*args), np.linspace(*args, dtype=np.float32), rtol=1e-6, atol=1e-6)
    close(tessel.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False))
    same(tessel.zeros((2, 3)), np.zeros((2, 3), np.float32))
    same(tessel.ones(4, dtype=tessel.int8), np.ones(4, np.int8))
    same(tessel.full((2,), 7), np.full((2,), 7, np.int64))
    same(tessel.full((2,), 2.5), np.full((2,), 2.5, np.float32))
    same(tessel.full((1,), True), np.full((1,), True))
    like = T(X.astype(np.float64))
    z = tessel.zeros_like(like)
    assert z.device == device
    same(z, np.zeros_like(X, np.float64))
    same(tessel.ones_like(like, dtype=tessel.int32), np.ones(X.shape, np.int32))
    same(tessel.full_like(like, 3), np.full(X.shape, 3, np.float64))
    for args in [(3,), (2, 4), (3, 3, 1), (3, 4, -2)]:
        same(tessel.eye(*args), np.eye(*args, dtype=np.float32))
    assert tessel.zeros((2,), dtype=tessel.bfloat16).dtype == tessel.bfloat16
    other = "reference" if device == "cpu" else "cpu"
    assert tessel.zeros((2,), device=other).device == other
    assert tessel.arange(3, device=other).device == other


def test_random_is_deterministic_per_seed_and_in_range(device):
    u = tessel.random.uniform((1000,), 2.0, 3.0, seed=7).numpy()
    assert u.dtype == np.float32 and u.shape == (1000,)
    assert (u >= 2).all() and (u < 3).all() and abs(u.mean() - 2.5) < 0.05
    np.testing.assert_array_equal(u, tessel.random.uniform((1000,), 2.0, 3.0, seed=7).numpy())
    assert not np.array_equal(u, tessel.random.uniform((1000,), 2.0, 3.0, seed=8).numpy())
    n = tessel.random.normal((200, 50), mean=1.0, std=2.0, seed=3,
                             dtype=tessel.float64).numpy()
    assert n.dtype == np.float64
    assert abs(n.mean() - 1.0) < 0.1 and abs(n.std() - 2.0) < 0.1
    # the same bits on every backend
    other = "reference" if device == "cpu" else "cpu"
    np.testing.assert_array_equal(
        u, tessel.random.uniform((1000,), 2.0, 3.0, seed=7, device=other).numpy())
    with pytest.raises(TypeError):
        tessel.random.uniform((2,))  # the seed is required
    with pytest.raises(TypeError):
        tessel.random.normal((2,), seed=1.5)


# ---------------------------------------------------------------------------------------------
# Gradients


XG = np.random.default_rng(6).standard_normal((2, 3, 4))


@pytest.mark.parametrize("fn,ref", [
    (lambda t: tessel.reshape(t, (4, 6)), lambda x: x.reshape(4, 6)),
    (lambda t: tessel.transpose(t, (2, 0, 1)), lambda x: x.transpose(2, 0, 1)),
    (lambda t: tessel.moveaxis(t, 0, -1), lambda x: np.moveaxis(x, 0, -1)),
    (lambda t: tessel.broadcast_to(t[:, :1], (5, 2, 1, 4)),
     lambda x: np.broadcast_to(x[:, :1], (5, 2, 1, 4))),
    (lambda t: tessel.concatenate([t, t * 2], axis=1), lambda x: np.concatenate([x, x * 2], 1)),
    (lambda t: tessel.stack([t, -t], axis=1), lambda x: np.stack([x, -x], 1)),
    (lambda t: tessel.split(t, [1, 3], axis=2)[1], lambda x: np.split(x, [1, 3], axis=2)[1]),
    (lambda t: tessel.tile(t, (1, 2, 1)), lambda x: np.tile(x, (1, 2, 1))),
    (lambda t: tessel.repeat(t, [2, 0, 1], axis=1), lambda x: np.repeat(x, [2, 0, 1], axis=1)),
    (lambda t: tessel.flip(t, (0, 2)), lambda x: np.flip(x, (0, 2))),
    (lambda t: tessel.roll(t, 1, 2), lambda x: np.roll(x, 1, 2)),
    (lambda t: tessel.pad(t, 1, mode="reflect"), lambda x: np.pad(x, 1, mode="reflect")),
    (lambda t: tessel.pad(t, ((0, 0), (1, 2), (2, 1)), mode="edge"),
     lambda x: np.pad(x, ((0, 0), (1, 2), (2, 1)), mode="edge")),
    (lambda t: tessel.take(t, np.array([2, 0, 2]), axis=1),
     lambda x: np.take(x, [2, 0, 2], axis=1)),
    (lambda t: tessel.take_along_axis(t, np.array([[[3, 0, 0]]] * 2).transpose(0, 2, 1), 2),
     lambda x: np.take_along_axis(x, np.array([[[3, 0, 0]]] * 2).transpose(0, 2, 1), 2)),
    (lambda t: tessel.tril(t, 1), lambda x: np.tril(x, 1)),
    (lambda t: tessel.squeeze(t[:1], 0), lambda x: np.squeeze(x[:1], 0)),
], ids=["reshape", "transpose", "moveaxis", "broadcast_to", "concatenate", "stack", "split",
        "tile", "repeat", "flip", "roll", "pad_reflect", "pad_edge", "take", "take_along_axis",
        "tril", "squeeze"])
def test_shape_gradients(device, fn, ref):
    check_grads(fn, ref, [XG])
