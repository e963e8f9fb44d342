"""Shared by the op tests: tensors from numpy, comparisons, finite-difference gradient checks,
and the committed PyTorch goldens of tests/goldens/*.json (written by golden_io.py)."""
import json
import os

import numpy as np

import tessel
from tessel import _ops

DEVICES = ["cpu", "reference"]


def T(a, dtype=None):
    return tessel.Tensor(np.asarray(a, dtype=dtype))


def close(got, want, rtol=1e-5, atol=1e-6):
    got = got.numpy() if isinstance(got, tessel.Tensor) else np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def numeric_grad(f, xs, i, eps=1e-6):
    xs = [np.array(x, np.float64 if np.asarray(x).dtype.kind == "f" else None) for x in xs]
    g = np.zeros_like(xs[i])
    it = np.nditer(xs[i], flags=["multi_index"])
    for _ in it:
        idx = it.multi_index
        hi = [x.copy() for x in xs]
        lo = [x.copy() for x in xs]
        hi[i][idx] += eps
        lo[i][idx] -= eps
        g[idx] = (f(*hi) - f(*lo)) / (2 * eps)
    return g


def check_grads(fn, ref, xs, rtol=1e-5, atol=1e-7, wrt=None):
    """Gradients of sum(fn(*xs) * w) by tessel.grad against finite differences of ref."""
    wrt = list(range(len(xs))) if wrt is None else wrt
    w = np.random.default_rng(2).standard_normal(np.shape(ref(*xs)))

    def loss(*ts):
        return tessel.sum(fn(*ts) * tessel.Tensor(w))

    grads = tessel.grad(loss, argnums=tuple(wrt))(*[tessel.Tensor(np.asarray(x)) for x in xs])
    for i, g in zip(wrt, grads):
        want = numeric_grad(lambda *a: float(np.sum(ref(*a) * w)), xs, i)
        close(g, want, rtol=rtol, atol=atol)


GOLDENS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                       "goldens")
TABLE = {e["name"]: e for e in tessel.op_table()}
READY = [e for e in _ops.ready_entries()]
_NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "u8": np.uint8,
       "i16": np.int16, "i32": np.int32, "i64": np.int64, "bool": np.bool_}


def fn_of(kind):
    return getattr(tessel.ops, _ops.snake_case(kind))


def from_json(t):
    """A golden tensor {"dtype", "shape", "data"} (NaN / Inf as strings) as a numpy array."""
    if t is None or not isinstance(t, dict):
        return t
    data = [float(v) if isinstance(v, str) else v for v in t["data"]]
    if t["dtype"] == "bf16":  # numpy has no bfloat16: a Tensor, cast in Tessel
        return tessel.Tensor(np.array(data, np.float32).reshape(t["shape"])).astype("bfloat16")
    return np.array(data, dtype=_NP[t["dtype"]]).reshape(t["shape"])


def golden_cases(family):
    with open(os.path.join(GOLDENS, family + ".json")) as f:
        return json.load(f)["cases"]


def golden_call(case, family):
    """(kind, inputs as numpy or None, attrs, expected outputs) of one golden case, whatever
    layout its generator wrote: 'inputs' / 'attrs' / 'outputs' lists, or one key per input
    port, attribute and output name (the variant under 'kind', 'op', 'bop', 'cop' or
    'pool')."""
    kind = "Metric" if family == "metrics" else next(
        case[k] for k in ("op", "kind") if k in case and case[k] in TABLE)
    entry = TABLE[kind]
    attrs = dict(case.get("attrs", {}))
    if entry["variant_attr"]:
        for key in ("op", "kind", "bop", "cop", "pool"):
            if key in case and case[key] != kind and entry["variant_attr"] not in attrs:
                attrs[entry["variant_attr"]] = case[key]
    for a in entry["attrs"]:
        if a["name"] in case and a["name"] not in attrs and case[a["name"]] != kind:
            attrs[a["name"]] = case[a["name"]]
    attrs = {k: v for k, v in attrs.items() if v is not None}
    if "inputs" in case:
        inputs = [from_json(t) for t in case["inputs"]]
    else:
        inputs = [from_json(case.get(p["name"].rstrip("*?"))) for p in entry["inputs"]]
    if "outputs" in case:
        outputs = [from_json(t) for t in case["outputs"]]
    elif "output" in case:
        outputs = [from_json(case["output"])]
    elif all(o["name"] in case for o in entry["outputs"]):
        outputs = [from_json(case[o["name"]]) for o in entry["outputs"]]
    else:
        outputs = [from_json(case["expected"] if "expected" in case else case["y"])]
    return kind, inputs, attrs, outputs
