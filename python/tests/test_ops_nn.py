"""The neural-network kinds (normalization, attention and positional encodings, convolution
and pooling, losses, fused composites, gated activations) through tessel.ops on every device:
forward in float32 against the committed PyTorch goldens (test_ops_generated runs them in
float64), and gradients by tessel.grad against the goldens' gradients
(grad_norm_attention_losses.json, conv_pool_grad.json) or, where no golden has them, against
central finite differences of the float64 forward."""
import numpy as np
import pytest

import tessel
from helpers import T, close, numeric_grad, fn_of, from_json, golden_cases, golden_call

NN_FAMILIES = ["normalization", "attention_positional", "conv_pool", "losses",
               "fused_composites"]


def _f32(x):
    if x is None or not isinstance(x, np.ndarray) or x.dtype != np.float64:
        return x
    return x.astype(np.float32)


def _call(kind, inputs, attrs):
    args = [None if x is None else T(x) for x in inputs]
    while args and args[-1] is None:
        args.pop()
    out = fn_of(kind)(*args, **attrs)
    return list(out) if isinstance(out, tuple) else [out]


@pytest.mark.parametrize("family", NN_FAMILIES)
def test_float32_forward_against_goldens(device, family):
    for case in golden_cases(family):
        kind, inputs, attrs, outputs = golden_call(case, family)
        got = _call(kind, [_f32(x) for x in inputs], attrs)
        for g, w in zip(got, outputs):
            assert g.dtype == tessel.float32, (kind, attrs)
            finite = np.abs(w[np.isfinite(w)])
            scale = max(1.0, float(finite.max())) if finite.size else 1.0
            try:
                close(g, w, rtol=2e-4, atol=2e-5 * scale)
            except AssertionError as e:
                raise AssertionError(f"{case.get('name', '')} {kind} {attrs}: {e}") from None


def _grads_of(kind, inputs, attrs, cotangent, wrt):
    """tessel.grad of sum(kind(*inputs) · cotangent) with respect to inputs[wrt]."""
    ct = T(cotangent)

    def loss(*xs):
        full = list(inputs)
        for i, x in zip(wrt, xs):
            full[i] = x
        args = [x if isinstance(x, tessel.Tensor) or x is None else T(x) for x in full]
        while args and args[-1] is None:
            args.pop()
        out = fn_of(kind)(*args, **attrs)
        out = out[0] if isinstance(out, tuple) else out
        return tessel.sum(out * ct)

    return tessel.grad(loss, argnums=tuple(range(len(wrt))))(*[T(inputs[i]) for i in wrt])


def test_gradients_against_norm_attention_loss_goldens(device):
    cases = golden_cases("grad_norm_attention_losses")
    assert len(cases) >= 40
    for c in cases:
        inputs = [from_json(t) for t in c["inputs"]]
        grads = _grads_of(c["op"], inputs, c["attrs"], from_json(c["cotangent"]), c["wrt"])
        for i, g, want in zip(c["wrt"], grads, c["grads"]):
            try:
                close(g, from_json(want), rtol=1e-6, atol=1e-9)
            except AssertionError as e:
                raise AssertionError(f"{c['op']} {c['attrs']} d/d input {i}: {e}") from None


def test_gradients_against_conv_pool_goldens(device):
    cases = golden_cases("conv_pool_grad")
    assert len(cases) >= 30
    for c in cases:
        names = [n for n in ("x", "w", "b") if n in c]
        inputs = [from_json(c[n]) for n in names]
        attrs = dict(c["attrs"])
        if c["kind"] == "Pool":
            attrs["kind"] = c["pool"]
        grads = _grads_of(c["kind"], inputs, attrs, from_json(c["dy"]), list(range(len(names))))
        for n, g in zip(names, grads):
            try:
                close(g, from_json(c["d" + n]), rtol=1e-6, atol=1e-9)
            except AssertionError as e:
                raise AssertionError(f"{c['name']} d{n}: {e}") from None


# Forward kinds whose gradients no golden holds: tessel.grad against finite differences.
rng = np.random.default_rng(0)
FD_CASES = [
    ("Rope", [rng.standard_normal((1, 2, 3, 8))], {"style": "GptJ"}),
    ("Rope", [rng.standard_normal((1, 2, 3, 8))], {"rotary_dim": 4}),
    ("AxialRope2d", [rng.standard_normal((1, 1, 6, 8))], {"grid_h": 2, "grid_w": 3}),
    ("ALiBi", [rng.standard_normal((1, 4, 2, 3))], {}),
    ("LayerNorm2d", [rng.standard_normal((2, 3, 2, 2)), rng.standard_normal(3),
                     rng.standard_normal(3)], {}),
    ("GatedActivation", [rng.standard_normal((2, 6))], {"kind": "Silu"}),
    ("GatedActivation", [rng.standard_normal((4, 3))], {"kind": "Gelu", "axis": 0}),
    ("FusedSwiGLU", [rng.standard_normal((2, 3)), rng.standard_normal((3, 4)),
                     rng.standard_normal((3, 4)), rng.standard_normal((4, 2))], {}),
    ("FusedMatMulBiasAct", [rng.standard_normal((2, 3)), rng.standard_normal((4, 3)),
                            rng.standard_normal(4)], {"act": "Tanh", "transpose_b": True}),
    ("AdaLayerNorm", [rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4)),
                      rng.standard_normal((2, 4))], {}),
    ("GatedResidual", [rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4)),
                       rng.standard_normal((2, 4))], {}),
    ("LoraMatMul", [rng.standard_normal((2, 3)), rng.standard_normal((3, 4)),
                    rng.standard_normal((3, 2)), rng.standard_normal((2, 4))], {"scale": 0.5}),
    ("Embedding", [rng.standard_normal((5, 3)), np.array([[4, 0], [4, 2]])], {}),
]


@pytest.mark.parametrize("kind,inputs,attrs", FD_CASES,
                         ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(FD_CASES)])
def test_gradients_against_finite_differences(device, kind, inputs, attrs):
    wrt = [i for i, x in enumerate(inputs) if x.dtype == np.float64]

    def forward(*xs):
        return _call(kind, list(xs), attrs)[0].numpy()

    out = forward(*inputs)
    ct = np.random.default_rng(1).standard_normal(out.shape)
    grads = _grads_of(kind, inputs, attrs, ct, wrt)
    for i, g in zip(wrt, grads):
        want = numeric_grad(lambda *a: float(np.sum(forward(*a) * ct)), inputs, i)
        close(g, want, rtol=1e-5, atol=1e-7)


def test_nn_activations_in_the_namespace_match_the_kinds(device):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    for name, kind in [("relu", "Relu"), ("gelu", "Gelu"), ("silu", "Silu"), ("mish", "Mish"),
                       ("selu", "Selu"), ("softplus", "Softplus"), ("hard_swish", "HardSwish"),
                       ("hard_sigmoid", "HardSigmoid"), ("softsign", "Softsign")]:
        close(getattr(tessel, name)(T(x)), tessel.ops.activation(T(x), kind=kind).numpy())
    close(tessel.leaky_relu(T(x), 0.2),
          tessel.ops.activation(T(x), kind="LeakyRelu", alpha=0.2).numpy())
