"""tessel.grad / value_and_grad / compile / vjp: gradients against analytic values and
finite differences (numpy), pytrees, has_aux, argnums, caching, grad of grad, errors."""
import numpy as np
import pytest

import tessel
from tessel import ops


def total(x):
    return ops.reduce(x, op="Sum")


def T(a):
    return tessel.Tensor(np.asarray(a, dtype=np.float32))


def close(t, want, tol=1e-4):
    np.testing.assert_allclose(np.asarray(t.numpy(), np.float64), want, rtol=tol, atol=tol)


def finite_difference(f, x, eps=1e-3):
    """Central differences of the numpy function f at x (float64)."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def test_grad_matches_analytic_and_finite_differences():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4)).astype(np.float32)
    w = rng.normal(size=(4, 2)).astype(np.float32)

    def loss(x, w):
        return total(tessel.ops.activation(tessel.matmul(x, w), kind="Tanh") ** 2)

    gx, gw = tessel.grad(loss, argnums=(0, 1))(T(x), T(w))
    f64 = lambda x_, w_: np.sum(np.tanh(x_ @ w_) ** 2)  # noqa: E731
    close(gx, finite_difference(lambda v: f64(v, w.astype(np.float64)), x.astype(np.float64)),
          1e-3)
    close(gw, finite_difference(lambda v: f64(x.astype(np.float64), v), w.astype(np.float64)),
          1e-3)
    # analytic: d/dz tanh(z)^2 = 2 tanh(z)(1 - tanh(z)^2)
    z = x @ w
    dz = 2 * np.tanh(z) * (1 - np.tanh(z) ** 2)
    close(gx, dz @ w.T)
    close(gw, x.T @ dz)


def test_pytree_arguments_and_structure_of_grads():
    params = {"w": T([1.0, 2.0, 3.0]), "layers": [T(0.5), (T([2.0]), None)]}
    x = T([1.0, 2.0, 3.0])

    def loss(p, x):
        b, (c, _) = p["layers"]
        return total(p["w"] * x * x + b + c * c)

    g = tessel.grad(loss)(params, x)
    assert set(g) == {"w", "layers"}
    assert isinstance(g["layers"], list) and isinstance(g["layers"][1], tuple)
    assert g["layers"][1][1] is None
    close(g["w"], [1, 4, 9])
    close(g["layers"][0], 3.0)  # b broadcast over 3 elements
    close(g["layers"][1][0], [12.0])  # c broadcast too: 3 * 2c


def test_value_and_grad_argnums_tuple_and_negative():
    x, y = T([1.0, 2.0]), T([3.0, 4.0])
    f = lambda a, b: total(a * a * b)  # noqa: E731
    value, (ga, gb) = tessel.value_and_grad(f, argnums=(0, 1))(x, y)
    close(value, 1 * 3 + 4 * 4)
    close(ga, [6, 16])
    close(gb, [1, 4])
    close(tessel.grad(f, argnums=-1)(x, y), [1, 4])


def test_has_aux():
    def f(x):
        y = x * 3.0
        return total(y * y), {"y": y, "note": "static"}

    (loss, aux), g = tessel.value_and_grad(f, has_aux=True)(T([1.0, 2.0]))
    close(loss, 45)
    close(aux["y"], [3, 6])
    assert aux["note"] == "static"
    close(g, [18, 36])
    g2, aux2 = tessel.grad(f, has_aux=True)(T([1.0, 2.0]))
    close(g2, [18, 36])
    close(aux2["y"], [3, 6])


def test_python_float_and_numpy_arguments():
    g = tessel.grad(lambda x: total(x * x * x))(2.0)
    close(g, 12.0)
    g = tessel.grad(lambda x: total(x * x))(np.array([1.0, 3.0], np.float32))
    close(g, [2, 6])


def test_static_arguments_are_part_of_the_cache_key():
    f = tessel.grad(lambda x, n, mode: total(x * n) if mode == "lin" else total(x * x))
    x = T([1.0, 2.0])
    close(f(x, 3, "lin"), [3, 3])
    close(f(x, 5, "lin"), [5, 5])
    close(f(x, 5, "sq"), [2, 4])
    assert f.trace_count == 3


def test_caching_does_not_retrace():
    calls = []

    def f(x):
        calls.append(1)
        return total(x * x)

    g = tessel.grad(f)
    g(T([1.0, 2.0]))
    g(T([5.0, 6.0]))
    assert g.trace_count == 1 and len(calls) == 1
    g(T([1.0, 2.0, 3.0]))  # a new shape traces once more
    assert g.trace_count == 2 and g.cache_size == 2


def test_compile_pytrees_and_cache():
    calls = []

    def f(p, x):
        calls.append(1)
        return {"y": tessel.matmul(x, p["w"]) + p["b"], "pair": (x * 2.0, 7)}

    c = tessel.compile(f)
    p = {"w": T(np.eye(2)), "b": T([1.0, -1.0])}
    out = c(p, T([[1.0, 2.0]]))
    close(out["y"], [[2.0, 1.0]])
    close(out["pair"][0], [[2.0, 4.0]])
    assert out["pair"][1] == 7
    c(p, T([[3.0, 4.0]]))
    assert c.trace_count == 1 and len(calls) == 1


def test_grad_of_grad():
    f = lambda x: total(x * x * x)  # noqa: E731  f'' = 6x
    close(tessel.grad(tessel.grad(f))(T(2.0)), 12.0)
    h = tessel.grad(lambda x: total(tessel.grad(lambda y: total(tessel.ops.activation(
        y, kind="Sin")))(x)))  # d/dx cos(x) summed = -sin(x)
    close(h(T([0.5, 1.0])), -np.sin([0.5, 1.0]))


def test_vjp():
    x = T([1.0, 2.0, 3.0])
    outs, (vx,) = tessel.vjp(lambda a: {"sq": a * a, "lin": a * 2.0}, (x,),
                             {"sq": T([1.0, 1.0, 1.0]), "lin": T([0.0, 1.0, 0.0])})
    close(outs["sq"], [1, 4, 9])
    close(vx, [2, 4 + 2, 6])


def test_vjp_errors():
    x = T([1.0, 2.0])
    with pytest.raises(ValueError, match="structure"):
        tessel.vjp(lambda a: (a, a), (x,), [x, x])
    with pytest.raises(ValueError, match="cotangent 0"):
        tessel.vjp(lambda a: a, (x,), T([1.0, 2.0, 3.0]))


def test_non_scalar_loss_is_a_clear_value_error():
    with pytest.raises(ValueError, match="output 0 is f32\\[3\\]; expected one floating-point"):
        tessel.grad(lambda x: x * 2.0)(T([1.0, 2.0, 3.0]))
    with pytest.raises(tessel.Error):
        tessel.grad(lambda x: x * 2.0)(T([1.0, 2.0, 3.0]))


def test_bad_returns_and_arguments_are_type_errors():
    x = T([1.0, 2.0])
    with pytest.raises(TypeError, match="has_aux=True"):
        tessel.grad(lambda a: (total(a), a))(x)
    with pytest.raises(TypeError, match="one-element floating-point tensor"):
        tessel.grad(lambda a: 3.0)(x)
    with pytest.raises(TypeError, match="pair"):
        tessel.grad(lambda a: total(a), has_aux=True)(x)
    with pytest.raises(TypeError, match="floating-point"):
        tessel.grad(lambda a: total(a))(tessel.Tensor([1, 2]))
    with pytest.raises(TypeError, match="floating-point"):
        tessel.grad(lambda a: total(x))(3)
    with pytest.raises(ValueError, match="out of range"):
        tessel.grad(lambda a: total(a), argnums=2)(x)
    with pytest.raises(TypeError, match="hashable"):
        tessel.grad(lambda a, s: total(a))(x, {1, 2})


def test_user_exceptions_propagate_unchanged():
    class Mine(Exception):
        pass

    err = Mine("from the user")

    def f(x):
        raise err

    for transform in (tessel.grad, tessel.value_and_grad, tessel.compile):
        with pytest.raises(Mine) as info:
            transform(f)(T([1.0]))
        assert info.value is err
    with pytest.raises(Mine):
        tessel.vjp(f, (T([1.0]),), T([1.0]))


def test_value_of_a_traced_tensor_is_a_clear_error():
    def f(x):
        x.numpy()
        return total(x)

    with pytest.raises(tessel.InvalidValueError, match="depends on an argument of a function being traced"):
        tessel.grad(f)(T([1.0]))


def test_inner_grad_closing_over_an_outer_traced_tensor():
    def outer(a):  # Σ d/db Σ(b·b·a) at b = a  =  Σ 2a²
        return total(tessel.grad(lambda b: total(b * b * a))(a))

    close(tessel.grad(outer)(T([1.0, 2.0])), [4.0, 8.0])
    close(tessel.value_and_grad(outer)(T([1.0, 2.0]))[0], 10.0)


def test_inner_vjp_closing_over_an_outer_traced_tensor_is_unsupported():
    def outer(a):
        return total(tessel.vjp(lambda b: b * a, (a,), T([1.0, 1.0]))[1][0])

    with pytest.raises(tessel.UnsupportedError, match="pass it as a primal"):
        tessel.grad(outer)(T([1.0, 2.0]))
    inner = lambda a: total(tessel.vjp(lambda b: b * b, (a,), T([1.0, 1.0]))[1][0])  # noqa
    close(tessel.grad(inner)(T([1.0, 2.0])), [2.0, 2.0])


def test_low_level_function():
    fn = tessel._tessel.compile(lambda ts: [ts[0] * 2.0])
    (y,) = fn([T([1.0, 2.0])])
    close(y, [2, 4])
    assert fn.trace_count == 1 and fn.cache_size == 1
    with pytest.raises(TypeError, match="list of tessel.Tensor"):
        tessel._tessel.compile(lambda ts: 3)([T([1.0])])


def test_functions_capturing_different_constants_do_not_share_executables():
    # The executable cache keys graphs by text without constant values; the bindings add a
    # digest of the constants so these two traces stay apart.
    x = T([1.0, 2.0])
    for w in (3.0, 5.0):
        wt = T([w, w])
        close(tessel.compile(lambda a: a * wt)(x), [w, 2 * w])
        close(tessel.grad(lambda a: total(a * wt))(x), [w, w])
        close(tessel.vjp(lambda a: a * wt, (x,), T([1.0, 1.0]))[1][0], [w, w])
        close(tessel.compile(lambda: wt * 2.0)(), [2 * w, 2 * w])  # no inputs at all


def test_hessian_vector_product_matches_finite_differences_of_the_gradient():
    rng = np.random.default_rng(3)
    w = T(rng.normal(size=(4, 4)))
    v = rng.normal(size=4).astype(np.float32)

    def f(x):  # Σ tanh(W·x)² · Σ x
        h = tessel.ops.activation(tessel.matmul(w, x), kind="Tanh")
        return total(h * h) * total(x)

    g = tessel.grad(f)
    hvp = tessel.grad(lambda x: total(g(x) * T(v)))
    x = rng.normal(size=4).astype(np.float64)
    eps = 1e-2
    fd = (g(T(x + eps * v)).numpy().astype(np.float64) -
          g(T(x - eps * v)).numpy().astype(np.float64)) / (2 * eps)
    close(hvp(T(x)), fd, 2e-2)


def test_transform_as_a_method_decorator():
    class Model:
        scale = 3.0

        @tessel.compile
        def forward(self, x):
            return x * self.scale

    close(Model().forward(T([1.0, 2.0])), [3.0, 6.0])
