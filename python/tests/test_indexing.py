"""x[key] against numpy for every kind of index (basic, advanced, mixed, boolean masks) on
every device, IndexError for bad keys, tessel.at(x)[key] functional updates against numpy's
in-place assignment, and gradients of indexing and updates."""
import numpy as np
import pytest

import tessel
from helpers import T, check_grads

X = np.arange(120, dtype=np.float32).reshape(4, 5, 6)
MASK = (X % 7 == 0)

KEYS = [
    # basic
    1, -1, (0, 2, 3), (-4, -5, -6), slice(None), slice(1, 3), slice(None, None, -1),
    (slice(None, None, 2), slice(4, 0, -2), slice(-2, None)), (slice(10, 20),),
    (slice(None, None, -3), 1), (Ellipsis, 2), (1, Ellipsis), (None, 1), (Ellipsis, None),
    (slice(None), None, 2, None), (None, Ellipsis, None), (slice(3, 1),), (Ellipsis,), (),
    (slice(-100, 100, 3), slice(None, -100, -1)), np.int64(2), (1, np.int32(-2)),
    # advanced
    [0, 2], ([3, -1, 0],), np.array([[1, 0], [3, 3]]), (slice(None), [4, 0]),
    (Ellipsis, [5, 0, 1]), ([0, 1], [2, 3]), ([0, 1], slice(1, 3), [2, 3]),
    ([[0], [3]], [1, 2, 4]), (1, slice(None), [0, 2]), ([1, 2], 3), (slice(None), 1, [0, 5]),
    (None, [1, 2], None, 0), ([1, 2], None, [0, 1]), (slice(1, None, -1), [0, 0, 4], slice(2)),
    (Ellipsis, [1], [2]), (np.array(1), slice(None)), ([],), (slice(None), np.array([], int)),
    # boolean
    MASK, MASK[:, :, 0], (slice(None), MASK[0, :, 0]), (MASK[:, 0, 0], slice(1, 3), [0, 1]),
    np.array([True, False, True, True]), (Ellipsis, np.arange(6) % 2 == 0), True, False,
    (0, True), (None, False, 1),
]


def key_id(k):
    return repr(k).replace("\n", "")[:40]


@pytest.mark.parametrize("key", KEYS, ids=key_id)
def test_getitem_matches_numpy(device, key):
    want = X[key]
    got = T(X)[key]
    assert isinstance(got, tessel.Tensor) and got.device == device
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got.numpy(), want)


def test_tensor_indices_and_masks(device):
    t = T(X)
    np.testing.assert_array_equal(t[T(np.array([2, -1]))].numpy(), X[[2, -1]])
    np.testing.assert_array_equal(t[1, T(np.array([[0, 4]]))].numpy(), X[1, [[0, 4]]])
    np.testing.assert_array_equal(t[t > 100].numpy(), X[X > 100])  # evaluated eagerly
    np.testing.assert_array_equal(t[:, T(MASK[0])].numpy(), X[:, MASK[0]])
    i = tessel.argmax(t, axis=2)  # a lazy index tensor
    rows = tessel.arange(4)
    np.testing.assert_array_equal(t[rows[:, None], tessel.arange(5), i].numpy(),
                                  X[np.arange(4)[:, None], np.arange(5), X.argmax(2)])
    np.testing.assert_array_equal(t[T(np.int64(3))].numpy(), X[3])  # 0-d int tensor


def test_iteration_and_len(device):
    rows = list(T(X[:2]))
    assert len(rows) == 2
    np.testing.assert_array_equal(rows[1].numpy(), X[1])


@pytest.mark.parametrize("key,error", [
    (4, IndexError), (-5, IndexError), ((0, 0, 0, 0), IndexError), ([0, 4], IndexError),
    ((Ellipsis, Ellipsis), IndexError), (1.5, IndexError), ("a", IndexError),
    (np.array([0.5]), IndexError), (np.ones((3,), bool), IndexError),
    (([0, 1], [0, 1, 2]), ValueError)], ids=key_id)
def test_bad_keys_raise(device, key, error):
    with pytest.raises(error):
        T(X)[key].eval()


def test_setitem_is_refused():
    t = T(X)
    with pytest.raises(TypeError, match="tessel.at"):
        t[0] = 1


UPDATE_KEYS = [(1, 2), (slice(None), 0), (Ellipsis, slice(None, None, -2)), ([0, 2],),
               ([1, 1, 3], slice(None), [0, 0, 5]), (MASK,), (None, 0, [1, 2]),
               (slice(1, 3), [4, 0])]


@pytest.mark.parametrize("key", UPDATE_KEYS, ids=key_id)
def test_at_set_add_multiply_like_numpy(device, key):
    t = T(X)
    shape = X[key].shape
    v = np.random.default_rng(0).integers(-5, 5, shape).astype(np.float32)
    want = X.copy()
    want[key] = v
    got = tessel.at(t)[key].set(T(v))
    assert got.shape == X.shape and got.dtype == tessel.float32
    positions = np.arange(X.size).reshape(X.shape)[key]
    if np.unique(positions).size == positions.size:  # with repeats, which value wins is open
        np.testing.assert_array_equal(got.numpy(), want)
    want = X.copy()
    np.add.at(want, key, v)
    np.testing.assert_array_equal(tessel.at(t)[key].add(T(v)).numpy(), want)
    want = X.copy()
    np.subtract.at(want, key, v)
    np.testing.assert_array_equal(tessel.at(t)[key].subtract(T(v)).numpy(), want)
    want = X.copy()
    np.multiply.at(want, key, v)
    np.testing.assert_array_equal(tessel.at(t)[key].multiply(T(v)).numpy(), want)
    want = X.copy()
    np.minimum.at(want, key, v * 30)
    np.testing.assert_array_equal(tessel.at(t)[key].min(T(v * 30)).numpy(), want)
    want = X.copy()
    np.maximum.at(want, key, v * 30)
    np.testing.assert_array_equal(tessel.at(t)[key].max(T(v * 30)).numpy(), want)
    np.testing.assert_array_equal(tessel.at(t)[key].get().numpy(), X[key])


def test_at_broadcasts_scalars_and_casts(device):
    ints = T(np.arange(6, dtype=np.int32).reshape(2, 3))
    got = tessel.at(ints)[:, 1].set(9)
    assert got.dtype == tessel.int32
    np.testing.assert_array_equal(got.numpy(), [[0, 9, 2], [3, 9, 5]])
    got = tessel.at(ints)[1].add(T(np.array([1, 2, 3])))
    np.testing.assert_array_equal(got.numpy(), [[0, 1, 2], [4, 6, 8]])
    np.testing.assert_array_equal(ints.numpy(), np.arange(6).reshape(2, 3))  # unchanged
    with pytest.raises(TypeError):
        tessel.at(np.zeros(3))
    other = "reference" if device == "cpu" else "cpu"  # not the default device
    x = tessel.Tensor(np.zeros(3, np.float32), device=other)
    got = tessel.at(x)[1].set(2.0)
    assert got.device == other
    np.testing.assert_array_equal(got.numpy(), [0, 2, 0])


# ---------------------------------------------------------------------------------------------
# Gradients


XG = np.random.default_rng(7).standard_normal((3, 4, 5))
GRAD_KEYS = [(1, slice(None, None, -2)), (Ellipsis, [0, 0, 3]), ([2, 0, 2], slice(1, 3), [4, 4, 0]),
             (None, 1, [1, 2], None), (XG > 0.5,), (slice(None), XG[0, :, 0] > 0)]


@pytest.mark.parametrize("key", GRAD_KEYS, ids=key_id)
def test_getitem_gradients(device, key):
    check_grads(lambda t: t[key], lambda x: x[key], [XG])


def test_at_gradients(device):
    v = np.random.default_rng(8).standard_normal((4, 5))
    check_grads(lambda t, u: tessel.at(t)[1].set(u), lambda x, u: _set(x, 1, u), [XG, v])
    check_grads(lambda t, u: tessel.at(t)[:, [0, 0, 2]].add(u[:3]),
                lambda x, u: _add(x, (slice(None), [0, 0, 2]), u[:3]), [XG, v])
    check_grads(lambda t, u: tessel.at(t)[2, 1:].multiply(u[1:]),
                lambda x, u: _mul(x, (2, slice(1, None)), u[1:]), [XG, v])


def _set(x, key, u):
    y = x.copy()
    y[key] = u
    return y


def _add(x, key, u):
    y = x.copy()
    np.add.at(y, key, u)
    return y


def _mul(x, key, u):
    y = x.copy()
    np.multiply.at(y, key, u)
    return y
