"""Reductions, scans, sorting and softmax of the tessel namespace against numpy on every
device (axis=None / int / tuple, keepdims, numpy's ddof, argmax's flattening, integer
accumulation dtypes), the Tensor methods that forward to them, and their gradients against
central finite differences."""
import numpy as np
import pytest

import tessel
from helpers import T, close, check_grads


X = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
AXES = [None, 0, -1, (0, 2), (1,)]


def _logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


REDUCTIONS = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
              "var": np.var, "std": np.std, "logsumexp": _logsumexp}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(device, name, axis, keepdims):
    got = getattr(tessel, name)(T(X), axis=axis, keepdims=keepdims)
    want = REDUCTIONS[name](X.astype(np.float64), axis=axis, keepdims=keepdims)
    assert got.dtype == tessel.float32
    close(got, want, rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("ddof", [0, 1, 2])
def test_var_std_ddof(device, name, ddof):
    got = getattr(tessel, name)(T(X), axis=1, ddof=ddof)
    close(got, getattr(np, name)(X.astype(np.float64), axis=1, ddof=ddof), rtol=2e-5)


def test_methods_forward_to_the_functions(device):
    t = T(X)
    close(t.sum(axis=1), X.sum(axis=1), rtol=1e-5, atol=1e-5)
    close(t.mean((0, 1), keepdims=True), X.mean((0, 1), keepdims=True), atol=1e-6)
    close(t.max(), X.max())
    close(t.std(ddof=1), X.std(ddof=1), rtol=1e-5)
    np.testing.assert_array_equal(t.argmax().numpy(), X.argmax())
    np.testing.assert_array_equal(t.argmin(axis=2).numpy(), X.argmin(axis=2))
    close(t.cumsum(axis=1), X.cumsum(axis=1), atol=1e-5)


def test_integer_and_bool_accumulation_dtypes(device):
    ints = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    got = tessel.sum(T(ints), axis=0)
    assert got.dtype == tessel.int64  # PyTorch: integer sums accumulate in int64
    np.testing.assert_array_equal(got.numpy(), ints.sum(axis=0))
    np.testing.assert_array_equal(tessel.prod(T(ints + 7), axis=1).numpy(),
                                  np.prod(ints.astype(np.int64) + 7, axis=1))
    bools = ints > 0
    assert tessel.sum(T(bools)).item() == bools.sum()
    m = tessel.mean(T(ints), axis=1)
    assert m.dtype == tessel.float32
    close(m, ints.mean(axis=1))
    close(tessel.var(T(ints)), ints.var(), rtol=1e-6)
    np.testing.assert_array_equal(tessel.max(T(ints), axis=1).numpy(), ints.max(axis=1))
    np.testing.assert_array_equal(tessel.cumsum(T(ints)).numpy(), np.cumsum(ints))
    assert tessel.sum(T(ints), dtype=tessel.float64).dtype == tessel.float64


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)], ids=str)
def test_all_any(device, axis):
    a = np.array([[0, 1, 2], [3, 4, 5]], np.float32)
    b = np.array([[False, False, True], [False, False, False]])
    for fn in ("all", "any"):
        for x in (a, b):
            got = getattr(tessel, fn)(T(x), axis=axis)
            assert got.dtype == tessel.bool_
            np.testing.assert_array_equal(got.numpy(), getattr(np, fn)(x, axis=axis))
    assert bool(tessel.all(T(a) >= 0)) and not bool(tessel.any(T(a) < 0))


@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_argmin_first_occurrence(device, axis, keepdims):
    x = np.array([[1, 5, 5, 0], [7, 2, 7, -1], [0, 0, 0, 0]], np.float32)
    for fn in ("argmax", "argmin"):
        got = getattr(tessel, fn)(T(x), axis=axis, keepdims=keepdims)
        assert got.dtype == tessel.int64
        np.testing.assert_array_equal(got.numpy(),
                                      getattr(np, fn)(x, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
def test_cumsum_cumprod(device, axis):
    x = X[:2, :3, :4] * 0.5 + 1
    close(tessel.cumsum(T(x), axis=axis), np.cumsum(x, axis=axis), rtol=1e-5, atol=1e-5)
    close(tessel.cumprod(T(x), axis=axis), np.cumprod(x, axis=axis), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axis", [-1, 0, 1, None], ids=str)
def test_sort_argsort_stable(device, axis):
    x = np.array([[3, 1, 2, 1], [np.nan, 0, -5, 0], [2, 2, 2, 1]], np.float32)
    close(tessel.sort(T(x), axis=axis), np.sort(x, axis=axis, kind="stable"))
    np.testing.assert_array_equal(tessel.argsort(T(x), axis=axis).numpy(),
                                  np.argsort(x, axis=axis, kind="stable"))
    close(T(x).sort(), np.sort(x, kind="stable"))
    desc = tessel.sort(T(x[2]), descending=True)
    close(desc, np.sort(x[2])[::-1])


def test_topk(device):
    x = np.array([[1, 9, 3, 9, 0], [4, 4, 2, 8, 6]], np.float32)
    v, i = tessel.topk(T(x), 3)
    close(v, [[9, 9, 3], [8, 6, 4]])
    np.testing.assert_array_equal(i.numpy(), [[1, 3, 2], [3, 4, 0]])  # ties: lower index first
    v, i = tessel.topk(T(x), 2, axis=0, largest=False)
    close(v, np.sort(x, axis=0)[:2])
    assert i.dtype == tessel.int64


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_log_softmax(device, axis):
    ls = X - _logsumexp(X.astype(np.float64), axis=axis, keepdims=True)
    close(tessel.softmax(T(X), axis=axis), np.exp(ls), rtol=1e-5, atol=1e-6)
    close(tessel.log_softmax(T(X), axis=axis), ls, rtol=1e-5, atol=1e-5)
    close(T(X).softmax(), np.exp(X - _logsumexp(X.astype(np.float64), -1, True)), atol=1e-6)


def test_bad_axes_raise_the_library_error(device):
    with pytest.raises(ValueError, match=r"\[Reduce\]"):
        tessel.sum(T(X), axis=3).eval()
    with pytest.raises(TypeError):
        tessel.sum(T(X), axis=1.5)


# ---------------------------------------------------------------------------------------------
# Gradients


XG = np.random.default_rng(5).standard_normal((3, 4))


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "var", "std",
                                  "logsumexp"])
@pytest.mark.parametrize("axis", [None, 1], ids=str)
def test_reduction_gradients(device, name, axis):
    kw = {"ddof": 1} if name in ("var", "std") else {}
    check_grads(lambda x: getattr(tessel, name)(x, axis=axis, **kw),
                lambda x: REDUCTIONS[name](x, axis=axis, **kw), [XG], rtol=1e-5, atol=1e-6)


def test_scan_sort_softmax_gradients(device):
    x = XG * 0.5 + 1
    check_grads(lambda t: tessel.cumsum(t, axis=1), lambda t: np.cumsum(t, axis=1), [x])
    check_grads(lambda t: tessel.cumprod(t, axis=0), lambda t: np.cumprod(t, axis=0), [x],
                rtol=1e-5, atol=1e-6)
    check_grads(lambda t: tessel.sort(t, axis=1), lambda t: np.sort(t, axis=1), [x])
    check_grads(lambda t: tessel.topk(t, 2)[0], lambda t: -np.sort(-t, axis=-1)[:, :2], [x])
    check_grads(lambda t: tessel.softmax(t, axis=0),
                lambda t: np.exp(t - _logsumexp(t, 0, True)), [x], atol=1e-6)
    check_grads(lambda t: tessel.log_softmax(t), lambda t: t - _logsumexp(t, -1, True), [x],
                atol=1e-6)
