"""tessel.ops, the functions generated from the op table: one per ready kind with the table's
exact schema (inputs, attributes, defaults, docstring), the C++ errors mapped to Python
exception classes with their messages, and a sweep that calls every generated function on
valid inputs on every device — every committed golden case of tests/goldens/*.json through the
kind's generated function, the backward kinds against the goldens' gradients, and a small
table of hand-checked cases for the kinds no golden covers."""
import glob
import inspect
import math
import os

import numpy as np
import pytest

import tessel
from tessel import _ops
from helpers import (GOLDENS, READY, TABLE, T, close, fn_of, from_json, golden_call,
                     golden_cases, numeric_grad)

def run_golden(kind, inputs, attrs, outputs, rtol=1e-7, atol=1e-9):
    entry = TABLE[kind]
    args = []
    as_t = lambda x: x if isinstance(x, tessel.Tensor) else T(x)  # noqa: E731
    for port, x in zip(entry["inputs"], inputs + [None] * len(entry["inputs"])):
        args.append(None if x is None else as_t(x))
    if entry["inputs"] and entry["inputs"][0]["variadic"]:
        args = [[as_t(x) for x in inputs]]
    while args and args[-1] is None:
        args.pop()
    got = fn_of(kind)(*args, **attrs)
    got = list(got) if isinstance(got, tuple) else [got]
    assert len(got) == len(outputs), kind
    for g, w in zip(got, outputs):
        if isinstance(w, tessel.Tensor):  # bfloat16: compare in float32
            g, w = g.astype(tessel.float32), w.astype(tessel.float32).numpy()
        w = np.asarray(w)
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g.numpy(), w)
        else:
            close(g, w.astype(g.numpy().dtype) if g.dtype != tessel.float64 else w, rtol=rtol,
                  atol=atol)
    return kind


FORWARD_FAMILIES = ["elementwise", "linear_algebra", "normalization", "attention_positional",
                    "shape_movement", "reduction_indexing", "conv_pool", "losses",
                    "fused_composites", "metrics"]


@pytest.mark.parametrize("family", FORWARD_FAMILIES)
def test_every_golden_case_through_the_generated_function(device, family, exercised):
    cases = golden_cases(family)
    assert cases
    for case in cases:
        kind, inputs, attrs, outputs = golden_call(case, family)
        try:
            exercised.add(run_golden(kind, inputs, attrs, outputs, rtol=2e-6, atol=1e-8))
        except AssertionError as e:
            raise AssertionError(f"{family} {case.get('name', '')} {kind} {attrs}: {e}") from None


# ---------------------------------------------------------------------------------------------
# Backward kinds against the goldens' gradients (forward grads of grad_norm_attention_losses
# and conv_pool_grad)


def _backward_cases():
    """(backward kind, inputs, attrs, expected) derived from the forward gradient goldens."""
    out = []
    for c in golden_cases("grad_norm_attention_losses"):
        op, attrs = c["op"], c["attrs"]
        ins = [from_json(t) for t in c["inputs"]]
        dy = from_json(c["cotangent"])
        g = dict(zip(c["wrt"], [from_json(t) for t in c["grads"]]))
        if op in ("LayerNorm", "RmsNorm"):
            out.append((op + "BackwardInput", [dy, ins[0], ins[1]], attrs, g[0]))
            if ins[1] is not None and 1 in g:
                out.append((op + "BackwardGamma", [dy, ins[0]], attrs, g[1]))
            if op == "RmsNorm":
                axis = attrs["axis"] % ins[0].ndim
                out.append(("RmsNormBackwardBeta", [dy], {"axis": attrs["axis"]},
                            dy.sum(axis=tuple(range(axis)))))
        elif op == "GroupNorm":
            out.append(("GroupNormBackwardInput", [dy, ins[0], ins[1]], attrs, g[0]))
            if ins[1] is not None:
                out.append(("GroupNormBackwardGamma", [dy, ins[0]], attrs, g[1]))
                out.append(("GroupNormBackwardBeta", [dy], {}, g[2]))
        elif op == "BatchNormInference":
            x, mean, var, gamma, _ = ins
            out.append(("BatchNormInferenceBackwardInput", [dy, var, gamma], attrs, g[0]))
            out.append(("BatchNormInferenceBackwardGamma", [dy, x, mean, var], attrs, g[3]))
            out.append(("BatchNormInferenceBackwardBeta", [dy], {}, g[4]))
        elif op == "Attention":
            for i, wrt in enumerate(["Query", "Key", "Value"]):
                if i in g:
                    out.append(("AttentionBackward", [dy] + ins, dict(attrs, wrt=wrt), g[i]))
        elif op == "Loss":
            out.append(("LossBackward", [dy] + ins, attrs, g[0]))
        elif op == "SoftmaxCrossEntropyWithLogits":
            out.append(("SoftmaxCrossEntropyBackward", [dy] + ins, attrs, g[0]))
    for c in golden_cases("conv_pool_grad"):
        x, dy, attrs = from_json(c["x"]), from_json(c["dy"]), dict(c["attrs"])
        rank = x.ndim - 2
        if c["kind"] == "Conv" and rank in (2, 3):
            w = from_json(c["w"])
            out.append((f"Conv{rank}dBackwardInput", [dy, w],
                        dict(attrs, input_shape=list(x.shape)), from_json(c["dx"])))
            out.append((f"Conv{rank}dBackwardWeight", [dy, x],
                        dict(attrs, weight_shape=list(w.shape)), from_json(c["dw"])))
        elif c["kind"] == "Pool" and c.get("pool") == "Max" and rank in (2, 3):
            out.append((f"MaxPool{rank}dBackward", [dy, x], attrs, from_json(c["dx"])))
    return out


BACKWARD_CASES = _backward_cases()


def test_backward_kinds_against_golden_gradients(device, exercised):
    kinds = set()
    for kind, inputs, attrs, want in BACKWARD_CASES:
        try:
            kinds.add(run_golden(kind, inputs, attrs, [want], rtol=1e-6, atol=1e-9))
        except AssertionError as e:
            raise AssertionError(f"{kind} {attrs}: {e}") from None
    assert {"LayerNormBackwardInput", "Conv2dBackwardWeight", "AttentionBackward",
            "MaxPool3dBackward", "SoftmaxCrossEntropyBackward", "LossBackward"} <= kinds
    exercised.update(kinds)


# ---------------------------------------------------------------------------------------------
# Hand-checked cases for the kinds no golden covers

rng = np.random.default_rng(0)
XS = rng.standard_normal((2, 3, 4))


def _numeric_derivative(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def test_kinds_without_goldens(device, exercised):
    ops = tessel.ops
    dy = rng.standard_normal(XS.shape)
    # ActivationBackward / ReluBackward: dy · f'(x)
    close(ops.activation_backward(T(dy), T(XS), kind="Tanh"), dy * (1 - np.tanh(XS) ** 2))
    close(ops.activation_backward(T(dy), T(XS), kind="LeakyRelu", alpha=0.3),
          dy * np.where(XS > 0, 1, 0.3))
    softplus = lambda v: np.log1p(np.exp(v))  # noqa: E731
    close(ops.activation_backward(T(dy), T(XS), kind="Softplus"),
          dy * _numeric_derivative(softplus, XS), rtol=1e-6)
    close(ops.relu_backward(T(dy), T(XS)), dy * (XS > 0))
    # CumsumBackward: the reverse cumsum of dy
    close(ops.cumsum_backward(T(dy), axis=1), np.flip(np.cumsum(np.flip(dy, 1), 1), 1))
    # GatherBackward: scatter-add into the input shape
    idx = np.array([2, 0, 2])
    want = np.zeros((3, 4))
    np.add.at(want, idx, dy[0, :, :])
    close(ops.gather_backward(T(dy[0]), T(idx), axis=0, input_shape=[3, 4]), want)
    # GatedResidualBackward of x + gate·y with gate [B, D]
    x, y, gate = XS, rng.standard_normal(XS.shape), rng.standard_normal((2, 4))
    dx, dyy, dgate = ops.gated_residual_backward(T(dy), T(x), T(y), T(gate))
    close(dx, dy)
    close(dyy, dy * gate[:, None, :])
    close(dgate, (dy * y).sum(axis=1))
    # AdaLayerNormBackward against central differences of a numpy adaLN
    scale, shift = rng.standard_normal((2, 4)), rng.standard_normal((2, 4))

    def ada(xv, sv, hv):
        m = xv.mean(-1, keepdims=True)
        v = xv.var(-1, keepdims=True)
        return (xv - m) / np.sqrt(v + 1e-6) * (1 + sv[:, None]) + hv[:, None]

    got = ops.ada_layer_norm_backward(T(dy), T(x), T(scale), T(shift))
    for i, g in enumerate(got):
        want = numeric_grad(lambda *a: float(np.sum(ada(*a) * dy)), [x, scale, shift], i)
        close(g, want, rtol=1e-5, atol=1e-7)
    # RopeBackward undoes Rope (a rotation by -θ)
    q = rng.standard_normal((1, 2, 5, 8))
    for style in ("NeoX", "GptJ"):
        close(ops.rope_backward(ops.rope(T(q), style=style), style=style), q, atol=1e-12)
    # Cast, StopGradient, Freeze, Graft: value-preserving
    got = ops.cast(T(XS), to=tessel.int32)
    assert got.dtype == tessel.int32
    np.testing.assert_array_equal(got.numpy(), XS.astype(np.int32))
    close(ops.stop_gradient(T(XS)), XS)
    close(ops.freeze(T(XS)), XS)
    close(ops.freeze(T(XS), T(XS > 0)), XS)
    close(ops.graft(T(np.zeros_like(XS)), T(XS)), XS)
    with pytest.raises(ValueError):
        ops.graft(T(np.zeros((2, 3))), T(XS)).eval()
    # Dropout: p=0 is the identity; otherwise zeros or x/(1-p), the same for a seed
    close(ops.dropout(T(XS), p=0.0), XS)
    d = ops.dropout(T(np.ones((4000,))), p=0.25, seed=3).numpy()
    assert set(np.unique(d)) <= {0.0, 1 / 0.75} and abs((d == 0).mean() - 0.25) < 0.03
    np.testing.assert_array_equal(d, ops.dropout(T(np.ones((4000,))), p=0.25, seed=3).numpy())
    # Rng kinds: shape, dtype, range
    u = ops.rng_uniform(shape=[3, 500], low=-1.0, high=1.0, seed=1).numpy()
    assert u.shape == (3, 500) and u.dtype == np.float32 and (np.abs(u) <= 1).all()
    n = ops.rng_normal(shape=[2000], mean=5.0, std=0.5, seed=2, dtype=tessel.float64).numpy()
    assert n.dtype == np.float64 and abs(n.mean() - 5) < 0.05 and abs(n.std() - 0.5) < 0.05
    # Sample: temperature 0 is argmax; top_k=1 too
    logits = rng.standard_normal((4, 6))
    for kw in ({"temperature": 0.0}, {"top_k": 1, "seed": 5}):
        np.testing.assert_array_equal(ops.sample(T(logits), **kw).numpy(),
                                      logits.argmax(-1))
    s = ops.sample(T(logits), seed=9).numpy()
    assert s.shape == (4,) and ((0 <= s) & (s < 6)).all()
    # OptimizerStep: plain SGD is param - lr·grad
    p, g = rng.standard_normal(5), rng.standard_normal(5)
    out = ops.optimizer_step(T(p), T(g), [T(np.zeros(5))], kind="Sgd", lr=0.1)
    close(out[0], p - 0.1 * g)
    exercised.update({"ActivationBackward", "ReluBackward", "CumsumBackward", "GatherBackward",
                      "GatedResidualBackward", "AdaLayerNormBackward", "RopeBackward", "Cast",
                      "StopGradient", "Freeze", "Graft", "Dropout", "RngUniform", "RngNormal",
                      "Sample", "OptimizerStep", "Rope"})


# ---------------------------------------------------------------------------------------------
# Every ready kind is exercised by the sweep above (a module-scoped set the sweeps fill).


# Kinds the sweep cannot call from Python, each with the reason.
NOT_EXERCISED = {}


@pytest.fixture(scope="module")
def exercised():
    return set()


def test_zz_every_ready_kind_was_called(exercised):
    if not exercised:
        pytest.fail("the sweep tests did not run (run the whole file)")
    missing = {e["name"] for e in READY} - exercised - set(NOT_EXERCISED)
    assert not missing, f"ready kinds no test here calls: {sorted(missing)}"


# ---------------------------------------------------------------------------------------------
# Schemas


def test_one_function_per_ready_kind():
    names = {e["name"] for e in tessel.op_table() if e["status"] == "ready"}
    assert len(READY) >= 100
    assert {e["name"] for e in READY} == names - {"Input", "Param", "Constant",
                                                   "ElementwiseRegion", "ConvRegion"}
    for e in READY:
        fn = fn_of(e["name"])
        assert fn.op_kind == e["name"]
        assert fn.__module__ == "tessel.ops"
        assert e["description"] in fn.__doc__
        assert e["signature"] in fn.__doc__
    assert set(tessel.ops.__all__) == {_ops.snake_case(e["name"]) for e in READY}
    pending = [e["name"] for e in tessel.op_table() if e["status"] == "pending"]
    assert pending and not any(hasattr(tessel.ops, _ops.snake_case(k)) for k in pending)


def _expected_default(attr):
    """The default an attribute's table text means, parsed here independently of _ops."""
    text = attr["default"]
    if text is None:
        return inspect.Parameter.empty
    t = attr["type"]
    if t in ("ints", "floats"):
        conv = int if t == "ints" else float
        return [conv(v) for v in text.split(",")] if text else []
    if t == "int":
        return int(text)
    if t == "float":
        return float(text)
    if t == "bool":
        return {"true": True, "false": False}[text]
    if t == "dtype":
        return tessel.dtype(text)
    return text


@pytest.mark.parametrize("entry", READY, ids=lambda e: e["name"])
def test_signature_matches_the_table(entry):
    params = list(inspect.signature(fn_of(entry["name"])).parameters.values())
    ports, attrs = entry["inputs"], entry["attrs"]
    assert len(params) == len(ports) + len(attrs)
    for i, (p, port) in enumerate(zip(params, ports)):
        assert p.name == port["name"].rstrip("*?")
        assert p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD
        trailing_optional = all(q["optional"] for q in ports[i:])
        assert p.default is (None if trailing_optional else inspect.Parameter.empty)
    for p, attr in zip(params[len(ports):], attrs):
        assert p.name == attr["name"] and p.kind == inspect.Parameter.KEYWORD_ONLY
        want = _expected_default(attr)
        if isinstance(want, float) and math.isnan(want):
            assert math.isnan(p.default)
        else:
            assert p.default == want, (attr, p.default)


def test_a_few_signatures_spelled_out():
    sig = str(inspect.signature(tessel.ops.pad))
    assert sig == "(x, *, pads, mode='Constant', value=0.0)"
    sig = str(inspect.signature(tessel.ops.attention))
    assert sig == "(q, k, v, mask=None, *, mask_kind='None', scale=0.0, window=0)"
    assert str(inspect.signature(tessel.ops.concat)) == "(xs, *, axis)"
    assert str(inspect.signature(tessel.ops.layer_norm)) == \
        "(x, gamma=None, beta=None, *, axis=-1, eps=1e-05)"
    assert inspect.signature(tessel.ops.one_hot).parameters["dtype"].default == tessel.float32


# ---------------------------------------------------------------------------------------------
# Errors: Python binding errors and the C++ messages, mapped to Python's classes


def test_wrong_attribute_name_type_and_value():
    x = T(np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match=r"tessel\.ops\.narrow: .*'lenght'"):
        tessel.ops.narrow(x, axis=0, start=0, length=1, lenght=1)
    with pytest.raises(TypeError, match="missing a required argument: 'length'"):
        tessel.ops.narrow(x, axis=0, start=0)
    with pytest.raises(ValueError, match=r"\[Narrow\] no attribute 'lenght' \(it has axis, "
                                         r"start, length\)"):
        tessel.op("Narrow", x, axis=0, start=0, lenght=1)
    with pytest.raises(tessel.DTypeError, match=r"\[Narrow\] attribute 'axis' is an int, got a "
                                                r"float"):
        tessel.ops.narrow(x, axis=0.5, start=0, length=1)
    with pytest.raises(TypeError, match=r"\[Pad\] attribute 'pads' \(ints\): cannot use 'ab'"):
        tessel.ops.pad(x, pads="ab")
    with pytest.raises(tessel.InvalidValueError, match=r"\[Pad\] 'Mirror' is not a PadMode"):
        tessel.ops.pad(x, pads=[1, 1, 1, 1], mode="Mirror")
    with pytest.raises(ValueError, match=r"\[Activation\] 99 is not a value of ActivationKind"):
        tessel.ops.activation(x, kind=99)
    with pytest.raises(TypeError, match="dtype"):
        tessel.ops.cast(x, to="float33")
    with pytest.raises(ValueError, match="neither an op kind nor a seed operation ID"):
        tessel.op("NoSuchKind", x)
    # an enum given by index is the same as by name
    close(tessel.ops.activation(x, kind=3), tessel.ops.activation(x, kind="Relu").numpy())


def test_wrong_shapes_and_dtypes_raise_the_cpp_message(device):
    a = T(np.zeros((2, 3)))
    with pytest.raises(tessel.ShapeError, match=r"\[MatMul\]") as info:
        tessel.ops.mat_mul(a, a).eval()
    assert isinstance(info.value, ValueError) and isinstance(info.value, tessel.Error)
    with pytest.raises(ValueError, match=r"\[Binary\]"):
        tessel.ops.binary(a, T(np.zeros((4,))), op="Add").eval()
    with pytest.raises(TypeError, match=r"\[Binary\]"):
        tessel.ops.binary(a, T(np.zeros((2, 3), np.float32)), op="Add").eval()
    with pytest.raises(ValueError, match=r"\[Conv\]"):
        tessel.ops.conv(T(np.zeros((1, 2, 5, 5))), T(np.zeros((3, 4, 3, 3)))).eval()
    with pytest.raises(ValueError, match=r"\[Reduce\]"):
        tessel.ops.reduce(a, op="Sum", axes=[2]).eval()
    with pytest.raises(TypeError, match=r"tessel\.ops\.attention: "):
        tessel.ops.attention(a, a)  # too few inputs


def test_optional_inputs_and_variadic_lists(device):
    x = rng.standard_normal((2, 5))
    m, v = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    close(tessel.ops.layer_norm(T(x)), (x - m) / np.sqrt(v + 1e-5))
    gamma = rng.standard_normal(5)
    close(tessel.ops.layer_norm(T(x), T(gamma)), (x - m) / np.sqrt(v + 1e-5) * gamma)
    close(tessel.ops.layer_norm(T(x), None, T(gamma)), (x - m) / np.sqrt(v + 1e-5) + gamma)
    close(tessel.ops.concat([T(x), T(x)], axis=0), np.concatenate([x, x]))
    parts = tessel.ops.split(T(x), axis=1, sizes=[2, 3])
    assert isinstance(parts, tuple) and [p.shape for p in parts] == [(2, 2), (2, 3)]
    vals, idx = tessel.ops.top_k(T(x), k=2)
    assert vals.shape == idx.shape == (2, 2)
    # plain numpy arrays are accepted as inputs
    close(tessel.ops.activation(x, kind="Abs"), np.abs(x))


def test_golden_files_are_all_read():
    """Every committed golden family is consumed by a test of this package."""
    families = {os.path.basename(p)[:-5] for p in glob.glob(os.path.join(GOLDENS, "*.json"))}
    used = set(FORWARD_FAMILIES) | {"grad_norm_attention_losses", "conv_pool_grad"}
    # safetensors: a file-format golden (tessel.io's); optimizers: tessel.optim's training runs
    assert families - used <= {"safetensors", "optimizers"}, families - used


# ---------------------------------------------------------------------------------------------
# The numpy-style namespace built on these functions


def test_numpy_style_functions_document_the_kind_they_record():
    import re
    kinds = set(TABLE)
    names = [n for n in tessel._numpy.__all__ if n != "random"]
    assert len(names) > 150
    for name in names:
        doc = getattr(tessel, name).__doc__
        assert doc, name
        first = doc.split("\n\n")[0]
        assert (any(re.search(rf"\b{k}\b", first) for k in kinds)
                or "nothing recorded" in first), f"{name}: {first!r}"
    for name in tessel.random.__all__:
        assert re.search(r"\bRng(Uniform|Normal)\b", getattr(tessel.random, name).__doc__)


def test_every_forwarded_method_and_operator_target_exists():
    from tessel import _tensor
    targets = set(_tensor.METHODS) | {"negative", "abs", "invert", "floor_divide", "remainder",
                                      "matmul", "bitwise_and", "bitwise_or", "bitwise_xor",
                                      "left_shift", "right_shift", "swapaxes", "transpose"}
    for name in sorted(targets):
        assert callable(getattr(tessel, name, None)), name
    assert tessel.at is tessel._indexing.at and callable(tessel._indexing.getitem)
