"""tessel.nn: each module's forward against a numpy computation of PyTorch's formula, seeded
initialization, the Module API (parameters / update / apply), gradients reaching every
parameter, and the losses."""
import math

import numpy as np
import pytest

import tessel
from tessel import nn, ops

RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.normal(size=shape).astype(np.float32)


def T(a):
    return tessel.Tensor(np.asarray(a))


def close(t, want, tol=1e-5):
    np.testing.assert_allclose(t.numpy(), want, rtol=tol, atol=tol)


def params_np(m):
    return tessel._tree.tree_map(lambda t: t.numpy().astype(np.float64), m.parameters())


def test_linear_forward_init_and_seed():
    m = nn.Linear(5, 3, seed=0)
    assert m.weight.shape == (3, 5) and m.bias.shape == (3,)
    assert np.abs(m.weight.numpy()).max() <= 1 / math.sqrt(5)
    np.testing.assert_array_equal(nn.Linear(5, 3, seed=0).weight.numpy(), m.weight.numpy())
    x = rand(2, 4, 5)
    p = params_np(m)
    close(m(T(x)), x @ p["weight"].T + p["bias"])
    assert "bias" not in nn.Linear(5, 3, bias=False).parameters()
    nn.seed(3)
    a = nn.Linear(2, 2).weight.numpy()
    nn.seed(3)
    np.testing.assert_array_equal(nn.Linear(2, 2).weight.numpy(), a)


def conv_ref(x, w, b, stride, pad, groups=1):
    """Direct N-d cross-correlation (PyTorch's conv) in numpy, 1-D or 2-D."""
    nd = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(pad, pad)] * nd)
    k = w.shape[2:]
    out_sp = [(x.shape[2 + d] - k[d]) // stride + 1 for d in range(nd)]
    n, cout = x.shape[0], w.shape[0]
    cin_g, cout_g = w.shape[1], cout // groups
    y = np.zeros((n, cout, *out_sp))
    for o in range(cout):
        g = o // cout_g
        xs = x[:, g * cin_g:(g + 1) * cin_g]
        for idx in np.ndindex(*out_sp):
            sl = tuple(slice(i * stride, i * stride + k[d]) for d, i in enumerate(idx))
            y[(slice(None), o) + idx] = np.sum(xs[(slice(None), slice(None)) + sl] * w[o],
                                               axis=tuple(range(1, 2 + nd)))
        y[:, o] += b[o]
    return y


def test_conv2d_and_conv1d():
    m = nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2, seed=1)
    assert m.weight.shape == (6, 2, 3, 3)
    x = rand(2, 4, 7, 7)
    p = params_np(m)
    close(m(T(x)), conv_ref(x, p["weight"], p["bias"], 2, 1, groups=2), 1e-4)
    m1 = nn.Conv1d(3, 2, 5, padding=2, seed=2)
    x1 = rand(2, 3, 9)
    p1 = params_np(m1)
    close(m1(T(x1)), conv_ref(x1, p1["weight"], p1["bias"], 1, 2), 1e-4)
    with pytest.raises(ValueError, match="groups"):
        nn.Conv2d(3, 4, 3, groups=2)


def test_layer_norm_and_rms_norm():
    x = rand(3, 4, 6)
    ln = nn.LayerNorm(6)
    ln.update({"weight": rand(6), "bias": rand(6)})
    p = params_np(ln)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    close(ln(T(x)), (x - mu) / np.sqrt(var + 1e-5) * p["weight"] + p["bias"], 1e-4)
    ln2 = nn.LayerNorm((4, 6), elementwise_affine=False)
    mu, var = x.mean((1, 2), keepdims=True), x.var((1, 2), keepdims=True)
    close(ln2(T(x)), (x - mu) / np.sqrt(var + 1e-5), 1e-4)
    rms = nn.RMSNorm(6)
    rms.update({"weight": rand(6)})
    w = rms.weight.numpy()
    close(rms(T(x)), x / np.sqrt((x ** 2).mean(-1, keepdims=True) + 1e-6) * w, 1e-4)


def test_embedding():
    m = nn.Embedding(10, 4, seed=0)
    ids = np.array([[1, 9], [0, 1]])
    close(m(T(ids)), m.weight.numpy()[ids])


def softmax(z, axis=-1):
    z = z - z.max(axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis, keepdims=True)


def mha_ref(p, q_in, kv_in, heads, mask=None):
    """torch.nn.MultiheadAttention(batch_first=True)'s forward in numpy (float64)."""
    e = q_in.shape[-1]
    w, b = p["in_proj_weight"], p["in_proj_bias"]
    q = q_in @ w[:e].T + b[:e]
    k = kv_in @ w[e:2 * e].T + b[e:2 * e]
    v = kv_in @ w[2 * e:].T + b[2 * e:]

    def heads_of(t):
        return t.reshape(t.shape[0], t.shape[1], heads, e // heads).transpose(0, 2, 1, 3)

    q, k, v = heads_of(q), heads_of(k), heads_of(v)
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(e // heads)
    if mask is not None:
        s = np.where(mask, -np.inf, s) if mask.dtype == bool else s + mask
    y = (softmax(s) @ v).transpose(0, 2, 1, 3).reshape(q_in.shape[0], q_in.shape[1], e)
    return y @ p["out_proj"]["weight"].T + p["out_proj"]["bias"]


def test_multi_head_attention():
    m = nn.MultiHeadAttention(8, 2, seed=0)
    p = m.parameters()
    assert set(p) == {"in_proj_weight", "in_proj_bias", "out_proj"}
    assert p["in_proj_weight"].shape == (24, 8)
    assert np.abs(p["in_proj_weight"].numpy()).max() <= math.sqrt(6 / 32)
    assert not p["in_proj_bias"].numpy().any() and not p["out_proj"]["bias"].numpy().any()
    m.update({"in_proj_bias": rand(24), "out_proj": {"bias": rand(8)}})
    p = params_np(m)
    x, kv = rand(2, 5, 8), rand(2, 7, 8)
    close(m(T(x)), mha_ref(p, x, x, 2), 1e-4)
    close(m(T(x), T(kv)), mha_ref(p, x, kv, 2), 1e-4)
    causal = np.triu(np.ones((5, 5), bool), 1)
    close(m(T(x), is_causal=True), mha_ref(p, x, x, 2, causal), 1e-4)
    masked = RNG.random((5, 7)) > 0.6
    masked[:, 0] = False
    close(m(T(x), T(kv), attn_mask=T(masked)), mha_ref(p, x, kv, 2, masked), 1e-4)
    bias = rand(4, 5, 7)
    close(m(T(x), T(kv), attn_mask=T(bias)),
          mha_ref(p, x, kv, 2, bias.reshape(2, 2, 5, 7)), 1e-4)
    with pytest.raises(ValueError, match="attn_mask"):
        m(T(x), attn_mask=T(np.zeros((3, 3), bool)))
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiHeadAttention(6, 4)


def test_sequential_and_activations():
    x = rand(3, 4)
    erf = np.vectorize(math.erf)
    refs = {
        nn.ReLU(): np.maximum(x, 0), nn.Tanh(): np.tanh(x), nn.Sigmoid(): 1 / (1 + np.exp(-x)),
        nn.SiLU(): x / (1 + np.exp(-x)), nn.GELU(): 0.5 * x * (1 + erf(x / math.sqrt(2))),
        nn.GELU("tanh"): 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
    }
    for m, want in refs.items():
        close(m(T(x)), want, 1e-5)
    model = nn.Sequential(nn.Linear(4, 6, seed=0), nn.ReLU(), nn.Linear(6, 2, seed=1))
    assert len(model) == 3 and isinstance(model[1], nn.ReLU)
    p = params_np(model)
    h = np.maximum(x @ p["0"]["weight"].T + p["0"]["bias"], 0)
    close(model(T(x)), h @ p["2"]["weight"].T + p["2"]["bias"], 1e-5)
    with pytest.raises(TypeError, match="not a Module"):
        nn.Sequential(nn.ReLU(), 3)


def test_module_parameters_update_apply():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(3, 3, seed=0)
            self.norm = nn.LayerNorm(3)
            self.scale = tessel.Tensor(np.float32(2.0))

        def forward(self, x):
            return self.norm(self.proj(x)) * self.scale

    b = Block()
    p = b.parameters()
    assert set(p) == {"proj", "norm", "scale"} and set(p["proj"]) == {"weight", "bias"}
    assert set(b.children()) == {"proj", "norm"} and len(list(b.modules())) == 3
    x = T(rand(2, 3))
    zero = tessel._tree.tree_map(lambda t: tessel.Tensor(np.zeros(t.shape, np.float32)), p)
    close(b.apply(zero, x), np.zeros((2, 3)))
    np.testing.assert_array_equal(b.proj.weight.numpy(), p["proj"]["weight"].numpy())  # restored
    b.update({"scale": tessel.Tensor(np.float32(3.0))})
    assert b.scale.item() == 3.0
    with pytest.raises(KeyError, match="no parameter or submodule 'nope'"):
        b.update({"nope": x})
    with pytest.raises(ValueError, match="shape"):
        b.update({"proj": {"weight": tessel.Tensor(np.zeros((2, 2), np.float32))}})
    with pytest.raises(AttributeError):
        b.missing  # noqa: B018
    assert "Linear(3, 3, bias=True)" in repr(b)


@pytest.mark.parametrize("make, x", [
    (lambda: nn.Linear(4, 3, seed=0), rand(2, 4)),
    (lambda: nn.Conv2d(2, 3, 3, padding=1, seed=0), rand(1, 2, 5, 5)),
    (lambda: nn.Conv1d(2, 3, 3, seed=0), rand(1, 2, 6)),
    (lambda: nn.LayerNorm(4), rand(2, 4)),
    (lambda: nn.RMSNorm(4), rand(2, 4)),
    (lambda: nn.MultiHeadAttention(4, 2, seed=0), rand(2, 3, 4)),
    (lambda: nn.Sequential(nn.Linear(4, 4, seed=0), nn.GELU(), nn.LayerNorm(4)), rand(2, 4)),
])
def test_gradients_reach_every_parameter(make, x):
    m = make()
    target = rand(*m(T(x)).shape)

    def loss(p):
        return nn.mse_loss(m.apply(p, T(x)), T(target))

    grads = tessel.grad(loss)(m.parameters())
    leaves, treedef = tessel._tree.flatten(grads)
    assert treedef == tessel._tree.flatten(m.parameters())[1]
    for g in leaves:
        assert np.isfinite(g.numpy()).all() and np.abs(g.numpy()).max() > 0
    # one directional finite difference per model
    p = m.parameters()
    d = tessel._tree.tree_map(lambda t: rand(*t.shape), p)
    eps = 1e-2
    plus = tessel._tree.tree_map(lambda t, v: T(t.numpy() + eps * v), p, d)
    minus = tessel._tree.tree_map(lambda t, v: T(t.numpy() - eps * v), p, d)
    fd = (loss(plus).item() - loss(minus).item()) / (2 * eps)
    analytic = sum(float(np.sum(g.numpy() * v)) for g, v in zip(
        leaves, tessel._tree.flatten(d)[0]))
    assert analytic == pytest.approx(fd, rel=2e-2, abs=1e-3)


def test_embedding_gradient():
    m = nn.Embedding(5, 3, seed=0)
    ids = T(np.array([1, 1, 4]))
    g = tessel.grad(lambda p: ops.reduce(m.apply(p, ids), op="Sum"))(m.parameters())
    np.testing.assert_allclose(g["weight"].numpy()[:, 0], [0, 2, 0, 0, 1])


def log_softmax(z):
    return z - z.max(1, keepdims=True) - np.log(np.exp(z - z.max(1, keepdims=True)).sum(
        1, keepdims=True))


def test_losses():
    logits, labels = rand(4, 5), np.array([1, 0, 3, -100])
    lp = log_softmax(logits.astype(np.float64))
    picked = -lp[np.arange(3), labels[:3]]
    assert nn.cross_entropy(T(logits), T(labels)).item() == pytest.approx(picked.mean(), rel=1e-5)
    assert nn.cross_entropy(T(logits), T(labels), reduction="sum").item() == pytest.approx(
        picked.sum(), rel=1e-5)
    close(nn.cross_entropy(T(logits[:3]), T(labels[:3]), reduction="none"), picked)
    smooth = 0.9 * picked + 0.1 * (-lp[:3].mean(1))
    assert nn.cross_entropy(T(logits), T(labels), label_smoothing=0.1).item() == pytest.approx(
        smooth.mean(), rel=1e-5)
    probs = softmax(rand(4, 5))
    assert nn.cross_entropy(T(logits), T(probs)).item() == pytest.approx(
        -(probs * lp).sum(1).mean(), rel=1e-5)
    assert nn.nll_loss(T(lp.astype(np.float32)), T(labels)).item() == pytest.approx(
        picked.mean(), rel=1e-5)
    close(nn.nll_loss(T(lp.astype(np.float32)), T(labels), reduction="none"),
          np.append(picked, 0.0))
    a, b = rand(3, 4), rand(3, 4)
    assert nn.mse_loss(T(a), T(b)).item() == pytest.approx(((a - b) ** 2).mean(), rel=1e-5)
    assert nn.l1_loss(T(a), T(b), reduction="sum").item() == pytest.approx(
        np.abs(a - b).sum(), rel=1e-5)
    r = np.abs(a - b)
    huber = np.where(r < 0.5, 0.5 * r ** 2, 0.5 * (r - 0.25))
    assert nn.huber_loss(T(a), T(b), delta=0.5).item() == pytest.approx(huber.mean(), rel=1e-5)
    p, t = 1 / (1 + np.exp(-a)), (b > 0).astype(np.float32)
    bce = -(t * np.log(p) + (1 - t) * np.log(1 - p))
    assert nn.binary_cross_entropy(T(p), T(t)).item() == pytest.approx(bce.mean(), rel=1e-4)
    assert nn.binary_cross_entropy_with_logits(T(a), T(t)).item() == pytest.approx(
        bce.mean(), rel=1e-4)
    q = softmax(rand(3, 4)).astype(np.float32)
    assert nn.kl_div(T(lp[:3, :4].astype(np.float32)), T(q)).item() == pytest.approx(
        (q * (np.log(q) - lp[:3, :4])).mean(), rel=1e-4)
    assert nn.losses.mse_loss is nn.mse_loss
    with pytest.raises(ValueError, match="reduction"):
        nn.mse_loss(T(a), T(b), reduction="avg")
    with pytest.raises(ValueError, match="nll_loss"):
        nn.nll_loss(T(lp), T(np.array([0, 1])))
