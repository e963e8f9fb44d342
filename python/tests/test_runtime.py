"""Devices, the op table and the coverage matrix as data, and files (safetensors, digits)."""
import numpy as np
import pytest

import tessel


def test_devices():
    assert tessel.devices()[:2] == ["reference", "cpu"]


def test_op_table_is_the_whole_table():
    table = tessel.op_table()
    names = [e["name"] for e in table]
    assert len(names) == len(set(names)) >= 142
    by_name = {e["name"]: e for e in table}
    att = by_name["Attention"]
    assert [p["name"] for p in att["inputs"]] == ["q", "k", "v", "mask"]
    assert att["inputs"][3]["optional"] and att["variant_attr"] == "mask_kind"
    assert {"name": "scale", "type": "float", "enum": None, "default": "0"} in att["attrs"]
    assert "Causal" in [v["name"] for v in att["variants"]]
    assert by_name["Concat"]["inputs"][0]["variadic"]
    assert any(a["id"] == "math.softmax" for a in by_name["Softmax"]["aliases"])
    assert {e["status"] for e in table} == {"ready", "pending"}
    assert set(tessel.enums()["ReduceOp"]["values"][0]) == {"name", "differentiable", "doc"}


def test_coverage_matrix_as_data():
    cov = tessel.coverage()
    assert cov["backends"] == tessel.devices()
    cells = {(c["kind"], c["variant"], c["dtype"], c["backend"]): c["how"] for c in cov["cells"]}
    assert cells[("MatMul", "", "f32", "cpu")] == "native"
    assert cells[("Activation", "Gelu", "f32", "reference")] == "native"
    # Every ready kind is claimed somewhere; pending kinds are listed with their topic.
    claimed = {c["kind"] for c in cov["cells"]}
    ready = {e["name"] for e in tessel.op_table() if e["status"] == "ready"}
    assert ready <= claimed
    assert all(p["topic"] for p in cov["pending"])


def test_memory_stats():
    stats = tessel.memory_stats()
    assert set(stats) == {"in_use", "peak_in_use", "cached"}
    before = tessel.memory_stats()["in_use"]
    t = (tessel.Tensor(np.ones(1 << 16, np.float32)) * 2).eval()
    assert tessel.memory_stats()["in_use"] >= before + (1 << 18)
    del t
    tessel.memory_release_cache()


def test_safetensors_round_trip(tmp_path):
    path = tmp_path / "w.safetensors"
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    tessel.save_safetensors(path, {"w": w, "b": tessel.Tensor([1, 2], dtype=tessel.int16),
                                   "h": tessel.Tensor([0.5], dtype=tessel.bfloat16)},
                            {"note": "test"})
    tensors, meta = tessel.load_safetensors(path, device="reference")
    assert meta == {"note": "test"}
    np.testing.assert_array_equal(tensors["w"].numpy(), w)
    assert tensors["b"].dtype == tessel.int16 and tensors["h"].dtype == tessel.bfloat16
    assert tensors["w"].device == "reference"


def test_digits():
    try:
        x, y = tessel.load_digits()
    except OSError as e:
        pytest.skip(f"the digits dataset is missing: {e}")
    assert x.shape == (1797, 64) and y.shape == (1797,)
    assert x.dtype == tessel.float32 and y.dtype == tessel.int64
    a = x.numpy()
    assert a.min() == 0.0 and a.max() == 1.0
    assert sorted(set(y.numpy().tolist())) == list(range(10))
