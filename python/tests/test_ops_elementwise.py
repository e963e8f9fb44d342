"""The numpy-style elementwise functions of the tessel namespace against numpy, on every
device: binaries with broadcasting and PyTorch type promotion, Python scalars, integer
division and remainders, bitwise and logical ops, where / clip, every unary function the
ActivationKind enum generates, and their gradients against central finite differences."""
import math

import numpy as np
import pytest

import tessel
from tessel import _numpy
from helpers import T, close, check_grads

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 1, 4)).astype(np.float32)
B = rng.standard_normal((2, 4)).astype(np.float32) + 0.1

BINARIES = [
    ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
    ("divide", np.divide), ("true_divide", np.true_divide), ("maximum", np.maximum),
    ("minimum", np.minimum), ("arctan2", np.arctan2), ("remainder", np.remainder),
    ("mod", np.mod), ("fmod", np.fmod), ("floor_divide", np.floor_divide),
    ("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
    ("less_equal", np.less_equal), ("greater", np.greater), ("greater_equal", np.greater_equal),
]


@pytest.mark.parametrize("name,ref", BINARIES, ids=[b[0] for b in BINARIES])
def test_float_binaries_broadcast_like_numpy(device, name, ref):
    got = getattr(tessel, name)(T(A), T(B))
    assert got.device == device
    want = ref(A, B)
    assert got.dtype == want.dtype
    close(got, want, rtol=2e-5, atol=2e-5)


def test_power_and_nan_propagation(device):
    base = np.abs(A) + 0.5
    close(tessel.power(T(base), T(B)), np.power(base, B), rtol=1e-5)
    a = np.array([1.0, np.nan, 3.0], np.float32)
    b = np.array([np.nan, 2.0, 1.0], np.float32)
    close(tessel.maximum(T(a), T(b)), np.maximum(a, b))
    close(tessel.minimum(T(a), T(b)), np.minimum(a, b))


INT_A = np.array([[-7, -6, -1, 0, 1, 5, 7, 9]], np.int32)
INT_B = np.array([[2], [-3], [4]], np.int32)


@pytest.mark.parametrize("name,ref", [("add", np.add), ("subtract", np.subtract),
                                      ("multiply", np.multiply), ("floor_divide", np.floor_divide),
                                      ("remainder", np.remainder), ("fmod", np.fmod),
                                      ("maximum", np.maximum), ("less", np.less)])
def test_integer_binaries_exact(device, name, ref):
    got = getattr(tessel, name)(T(INT_A), T(INT_B))
    want = ref(INT_A, INT_B)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want)


def test_integer_true_division_gives_float32(device):
    got = tessel.divide(T(INT_A), T(INT_B))
    assert got.dtype == tessel.float32
    close(got, (INT_A / INT_B).astype(np.float32))


def test_operators_match_numpy_functions(device):
    x, y = T(INT_A), T(INT_B)
    np.testing.assert_array_equal((x // y).numpy(), INT_A // INT_B)
    np.testing.assert_array_equal((x % y).numpy(), INT_A % INT_B)
    np.testing.assert_array_equal((-x).numpy(), -INT_A)
    np.testing.assert_array_equal(abs(x).numpy(), np.abs(INT_A))
    np.testing.assert_array_equal((x & 6).numpy(), INT_A & 6)
    np.testing.assert_array_equal((x | y).numpy(), INT_A | INT_B)
    np.testing.assert_array_equal((x ^ y).numpy(), INT_A ^ INT_B)
    np.testing.assert_array_equal((~x).numpy(), ~INT_A)
    np.testing.assert_array_equal((x << 2).numpy(), INT_A << 2)
    np.testing.assert_array_equal((x >> 1).numpy(), INT_A >> 1)  # arithmetic on signed
    f = T(A)
    close(f // 0.5, A // 0.5)
    close(f % 0.7, np.mod(A, np.float32(0.7)), atol=1e-5)


@pytest.mark.parametrize("a_dtype,b_dtype,want", [
    (np.int32, np.float64, np.float64), (np.uint8, np.int8, np.int16),
    (np.int16, np.int64, np.int64), (np.bool_, np.int32, np.int32),
    (np.float16, np.float32, np.float32)])
def test_tensor_promotion_is_pytorchs(device, a_dtype, b_dtype, want):
    a, b = np.array([1, 0], a_dtype), np.array([3, 4], b_dtype)
    got = tessel.add(T(a), T(b))
    assert got.dtype == np.dtype(want)
    np.testing.assert_array_equal(got.numpy(), a.astype(want) + b.astype(want))


@pytest.mark.parametrize("dtype,scalar,want", [
    (np.int32, 2, np.int32), (np.int32, 2.5, np.float32), (np.float16, 3.0, np.float16),
    (np.bool_, 1, np.int64), (np.uint8, 3, np.uint8), (np.float64, 2, np.float64)])
def test_python_scalars_take_the_tensors_dtype(device, dtype, scalar, want):
    x = T([1, 0, 1], dtype)
    for got in (tessel.multiply(x, scalar), tessel.multiply(scalar, x), x * scalar):
        assert got.dtype == np.dtype(want), got.dtype
        np.testing.assert_allclose(got.numpy(), np.array([1, 0, 1]) * scalar)


def test_bitwise_and_logical_on_bool_and_ints(device):
    p = np.array([True, True, False, False])
    q = np.array([True, False, True, False])
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or",
                 "logical_xor"):
        got = getattr(tessel, name)(T(p), T(q))
        assert got.dtype == tessel.bool_
        np.testing.assert_array_equal(got.numpy(), getattr(np, name)(p, q))
    np.testing.assert_array_equal(tessel.logical_not(T(p)).numpy(), ~p)
    np.testing.assert_array_equal(tessel.invert(T(p)).numpy(), ~p)
    ints = np.array([0, 3, -2, 0], np.int64)
    np.testing.assert_array_equal(tessel.logical_and(T(ints), T(q)).numpy(),
                                  np.logical_and(ints, q))
    np.testing.assert_array_equal(tessel.logical_not(T([0.0, 2.5])).numpy(), [True, False])
    np.testing.assert_array_equal(tessel.bitwise_not(T(ints)).numpy(), ~ints)
    with pytest.raises(TypeError):
        tessel.bitwise_and(T([1.0]), T([2.0]))
    with pytest.raises(TypeError):
        tessel.invert(T([1.0]))


def test_where_clip_and_predicates(device):
    cond = A > 0
    close(tessel.where(T(cond), T(A), T(B)), np.where(cond, A, B))
    close(tessel.where(T(A) > 0, T(A), 0.0), np.where(cond, A, 0.0).astype(np.float32))
    got = tessel.where(T(A.astype(np.int32)), 1, 2)  # a non-bool condition: != 0
    np.testing.assert_array_equal(got.numpy(), np.where(A.astype(np.int32), 1, 2))
    close(tessel.clip(T(A), -0.5, 0.5), np.clip(A, -0.5, 0.5))
    close(tessel.clip(T(A), None, 0.25), np.clip(A, None, 0.25))
    close(T(A).clip(-0.1), np.clip(A, -0.1, None))
    close(tessel.clip(T(A), T(B) - 1, T(B)), np.clip(A, B - 1, B))
    np.testing.assert_array_equal(tessel.clip(T(INT_A), -2, 3).numpy(), np.clip(INT_A, -2, 3))
    with pytest.raises(ValueError):
        tessel.clip(T(A))
    special = np.array([1.0, np.nan, np.inf, -np.inf, 0.0], np.float32)
    for name in ("isnan", "isinf", "isfinite"):
        np.testing.assert_array_equal(getattr(tessel, name)(T(special)).numpy(),
                                      getattr(np, name)(special))
    rows, cols = tessel.nonzero(T(cond[:, 0, :]))
    want = np.nonzero(cond[:, 0, :])
    np.testing.assert_array_equal(rows.numpy(), want[0])
    np.testing.assert_array_equal(cols.numpy(), want[1])


def _erf(x):
    return np.vectorize(math.erf)(x)


def _softplus(x):
    return np.log1p(np.exp(x))


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772, 1.0507009873554805

# Reference and a valid input domain per generated unary function (and the hand-written ones).
UNARY = {
    "silu": (lambda x: x * _sigmoid(x), None), "relu": (lambda x: np.maximum(x, 0), None),
    "sigmoid": (_sigmoid, None), "tanh": (np.tanh, None), "exp": (np.exp, None),
    "log": (np.log, "pos"), "sqrt": (np.sqrt, "pos"), "rsqrt": (lambda x: 1 / np.sqrt(x), "pos"),
    "negative": (np.negative, None), "abs": (np.abs, None), "sin": (np.sin, None),
    "cos": (np.cos, None), "tan": (np.tan, None), "arctan": (np.arctan, None),
    "selu": (lambda x: _SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * np.expm1(x)), None),
    "softplus": (_softplus, None), "softsign": (lambda x: x / (1 + np.abs(x)), None),
    "hard_sigmoid": (lambda x: np.clip(x / 6 + 0.5, 0, 1), None),
    "hard_swish": (lambda x: x * np.clip(x / 6 + 0.5, 0, 1), None),
    "mish": (lambda x: x * np.tanh(_softplus(x)), None), "erf": (_erf, None),
    "expm1": (np.expm1, None), "log1p": (np.log1p, "pos"), "reciprocal": (np.reciprocal, "pos"),
    "square": (np.square, None), "arcsin": (np.arcsin, "unit"), "arccos": (np.arccos, "unit"),
    "sinh": (np.sinh, None), "cosh": (np.cosh, None), "arcsinh": (np.arcsinh, None),
    "arccosh": (np.arccosh, "above1"), "arctanh": (np.arctanh, "unit"),
    "sign": (np.sign, None), "floor": (np.floor, None), "ceil": (np.ceil, None),
    "round": (np.round, None), "gelu": (lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))), None),
    "leaky_relu": (lambda x: np.where(x > 0, x, 0.01 * x), None),
    "elu": (lambda x: np.where(x > 0, x, np.expm1(x)), None),
}
NOT_DIFFERENTIABLE = {"sign", "floor", "ceil"}
STRAIGHT_THROUGH = {"round"}  # gradient 1


def _domain(kind, shape=(2, 5)):
    x = np.random.default_rng(1).uniform(-2, 2, shape)
    if kind == "pos":
        return np.abs(x) + 0.2
    if kind == "unit":
        return x * 0.45
    if kind == "above1":
        return np.abs(x) + 1.2
    return x + 0.013  # away from kinks at 0 and from round's ties


def test_every_generated_unary_has_a_reference_here():
    missing = set(_numpy._UNARY) - set(UNARY)
    assert not missing, f"add numpy references for {sorted(missing)}"


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_matches_numpy(device, name, dtype):
    ref, dom = UNARY[name]
    x = _domain(dom).astype(dtype)
    got = getattr(tessel, name)(T(x))
    assert got.dtype == np.dtype(dtype)
    tol = 2e-6 if dtype == np.float32 else 1e-12
    close(got, ref(x.astype(np.float64)), rtol=tol * 5, atol=tol)


def test_unary_docstrings_name_the_activation_variant():
    assert "Activation Mish" in tessel.mish.__doc__
    assert "Activation Neg" in tessel.negative.__doc__
    assert tessel.absolute is tessel.abs and tessel.arcsin is tessel.asin


def test_unary_dtype_rules(device):
    ints = np.array([-3, 0, 4], np.int32)
    for name in ("negative", "abs", "sign", "square", "relu", "floor", "ceil", "round"):
        got = getattr(tessel, name)(T(ints))
        assert got.dtype == tessel.int32, name
        np.testing.assert_array_equal(got.numpy(), UNARY[name][0](ints).astype(np.int32))
    for name in ("sqrt", "exp", "sigmoid", "sin"):
        got = getattr(tessel, name)(T(np.abs(ints)))
        assert got.dtype == tessel.float32, name
        close(got, UNARY[name][0](np.abs(ints).astype(np.float64)), rtol=1e-6)


def test_parameterized_activations(device):
    x = _domain(None).astype(np.float32)
    close(tessel.leaky_relu(T(x), negative_slope=0.2), np.where(x > 0, x, 0.2 * x))
    close(tessel.elu(T(x), alpha=0.5), np.where(x > 0, x, 0.5 * np.expm1(x)), rtol=1e-5)
    approx = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    close(tessel.gelu(T(x), approximate=True), approx, rtol=1e-5, atol=1e-6)
    r = np.array([0.5, 1.5, 2.5, -0.5, 1.2345, -2.675], np.float32)
    close(tessel.round(T(r)), np.round(r))
    close(tessel.round(T(r), 2), np.round(r, 2), rtol=1e-6)
    np.testing.assert_array_equal(tessel.round(T([1234, -1251]), -2).numpy(),
                                  np.round(np.array([1234, -1251]), -2))


# ---------------------------------------------------------------------------------------------
# Gradients: tessel.grad of sum(f(x) * w) against central finite differences in float64.


@pytest.mark.parametrize("name", sorted(set(UNARY) - NOT_DIFFERENTIABLE - STRAIGHT_THROUGH))
def test_unary_gradients(device, name):
    ref, dom = UNARY[name]
    check_grads(getattr(tessel, name), ref, [_domain(dom)], rtol=1e-5, atol=1e-7)


def test_round_gradient_is_straight_through(device):
    x = _domain(None)
    (g,) = tessel.grad(lambda t: tessel.sum(tessel.round(t)), argnums=(0,))(T(x))
    close(g, np.ones_like(x))


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "power", "maximum",
                                  "minimum", "arctan2", "fmod", "remainder"])
def test_binary_gradients_with_broadcasting(device, name):
    a = np.random.default_rng(3).uniform(0.5, 2.0, (3, 1, 4))
    b = np.random.default_rng(4).uniform(0.3, 1.7, (2, 4))
    ref = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
           "divide": np.divide, "power": np.power, "maximum": np.maximum,
           "minimum": np.minimum, "arctan2": np.arctan2, "fmod": np.fmod,
           "remainder": np.remainder}[name]
    check_grads(getattr(tessel, name), ref, [a, b], rtol=1e-5, atol=1e-6)


def test_where_and_clip_gradients(device):
    a = _domain(None)
    b = _domain(None) * 2
    cond = a > b
    check_grads(lambda x, y: tessel.where(T(cond), x, y), lambda x, y: np.where(cond, x, y),
                [a, b])
    check_grads(lambda x: tessel.clip(x, -0.7, 0.9), lambda x: np.clip(x, -0.7, 0.9), [a])


def test_stop_gradient_blocks_and_astype_passes(device):
    x = _domain(None)
    (g,) = tessel.grad(lambda t: tessel.sum(t * tessel.stop_gradient(t)), argnums=(0,))(T(x))
    close(g, x)  # d/dx x·c with c held constant
    check_grads(lambda t: tessel.astype(t, tessel.float32).astype(tessel.float64) * 3,
                lambda t: t * 3, [x], rtol=1e-5, atol=1e-5)
