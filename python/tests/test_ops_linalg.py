"""Linear algebra of the tessel namespace against numpy on every device: matmul (every rank
combination numpy allows, broadcasting, promotion, the @ operator), dot / tensordot / inner /
outer / vdot, einsum (the committed golden equations of tests/goldens/linear_algebra.json,
explicit and implicit), the generated tessel.ops MatMul / DotGeneral / LoraMatMul /
GroupedMatMul kinds against those goldens, and gradients."""
import numpy as np
import pytest

import tessel
from helpers import T, close, check_grads, from_json, golden_cases

rng = np.random.default_rng(0)


@pytest.mark.parametrize("sa,sb", [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)),
                                   ((3, 4), (4, 5)), ((2, 3, 4), (4, 5)),
                                   ((2, 1, 3, 4), (5, 4, 2)), ((4,), (2, 4, 3)),
                                   ((2, 3, 4), (4,))], ids=str)
def test_matmul_shapes_like_numpy(device, sa, sb):
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    want = np.matmul(a, b)
    close(tessel.matmul(T(a), T(b)), want, rtol=1e-5, atol=1e-5)
    close(T(a) @ T(b), want, rtol=1e-5, atol=1e-5)
    close(a @ T(b), want, rtol=1e-5, atol=1e-5)  # numpy defers to Tensor.__rmatmul__


def test_matmul_promotes_and_rejects_bad_shapes(device):
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.arange(3, dtype=np.float64)
    got = tessel.matmul(T(a), T(b))
    assert got.dtype == tessel.float64
    close(got, a @ b)
    ints = tessel.matmul(T(a), T(a.T.copy()))
    assert ints.dtype == tessel.int32
    np.testing.assert_array_equal(ints.numpy(), a @ a.T)
    with pytest.raises(ValueError, match=r"\[MatMul\]"):
        tessel.matmul(T(a), T(a)).eval()


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)),
                                   ((2, 2, 3), (4, 3, 5)), ((3,), (2, 3, 4)), ((), (2, 3))],
                         ids=str)
def test_dot_like_numpy(device, sa, sb):
    a = rng.standard_normal(sa)
    b = rng.standard_normal(sb)
    close(tessel.dot(T(a), T(b)), np.dot(a, b), rtol=1e-12)


def test_tensordot_inner_outer_vdot(device):
    a = rng.standard_normal((2, 3, 4))
    b = rng.standard_normal((3, 4, 5))
    close(tessel.tensordot(T(a), T(b)), np.tensordot(a, b), rtol=1e-12)
    bt = b.transpose(1, 0, 2).copy()
    close(tessel.tensordot(T(a), T(bt), axes=1), np.tensordot(a, bt, axes=1), rtol=1e-12)
    close(tessel.tensordot(T(a), T(b), axes=([1, 2], [0, 1])),
          np.tensordot(a, b, axes=([1, 2], [0, 1])), rtol=1e-12)
    close(tessel.tensordot(T(a), T(b), axes=([1], [0])), np.tensordot(a, b, axes=([1], [0])),
          rtol=1e-12)
    c = rng.standard_normal((5, 4))
    close(tessel.inner(T(a), T(c)), np.inner(a, c), rtol=1e-12)
    close(tessel.outer(T(a[0, 0]), T(c[0])), np.outer(a[0, 0], c[0]), rtol=1e-12)
    close(tessel.vdot(T(a), T(a)), np.vdot(a, a), rtol=1e-12)


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]), ("ij->", [(3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("ji", [(3, 4)])])
def test_einsum_like_numpy(device, eq, shapes):
    ops = [rng.standard_normal(s) for s in shapes]
    close(tessel.einsum(eq, *[T(o) for o in ops]), np.einsum(eq, *ops), rtol=1e-12)


def test_einsum_goldens(device):
    cases = [c for c in golden_cases("linear_algebra") if c["kind"] == "Einsum"]
    assert len(cases) >= 15
    for c in cases:
        ins = [from_json(t) for t in c["inputs"]]
        got = tessel.einsum(c["attrs"]["equation"], *[T(i) for i in ins])
        close(got, from_json(c["output"]), rtol=1e-10, atol=1e-12)
    with pytest.raises(TypeError):
        tessel.einsum(T(np.ones(2)), "i->")


@pytest.mark.parametrize("kind", ["MatMul", "DotGeneral", "LoraMatMul", "GroupedMatMul"])
def test_generated_linear_algebra_kinds_against_goldens(device, kind):
    cases = [c for c in golden_cases("linear_algebra") if c["kind"] == kind]
    assert cases, kind
    fn = getattr(tessel.ops, {"MatMul": "mat_mul", "DotGeneral": "dot_general",
                              "LoraMatMul": "lora_mat_mul",
                              "GroupedMatMul": "grouped_mat_mul"}[kind])
    for c in cases:
        got = fn(*[T(from_json(t)) for t in c["inputs"]], **c["attrs"])
        close(got, from_json(c["output"]), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# Gradients


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 2)), ((2, 3, 4), (4,)), ((4,), (2, 4, 3)),
                                   ((2, 1, 3, 4), (5, 4, 2))], ids=str)
def test_matmul_gradients(device, sa, sb):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    check_grads(tessel.matmul, np.matmul, [a, b], rtol=1e-6, atol=1e-8)


def test_dot_einsum_gradients(device):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    check_grads(tessel.dot, np.dot, [a, b], rtol=1e-6, atol=1e-8)
    check_grads(lambda x, y: tessel.einsum("ij,jk->ki", x, y),
                lambda x, y: np.einsum("ij,jk->ki", x, y), [a, b], rtol=1e-6, atol=1e-8)
    sq = rng.standard_normal((3, 3))
    check_grads(lambda x: tessel.einsum("ii->i", x), lambda x: np.einsum("ii->i", x), [sq])
    c = rng.standard_normal((3, 2, 5))
    check_grads(lambda x, y: tessel.tensordot(x, y, axes=([0], [1])),
                lambda x, y: np.tensordot(x, y, axes=([0], [1])), [a, c], rtol=1e-6,
                atol=1e-8)
