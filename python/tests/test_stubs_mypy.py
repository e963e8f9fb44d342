"""mypy against tessel's generated stubs: the stubs themselves check clean, a small program
type-checks clean against them, and a misspelled enum value of an op attribute is caught.
Skipped where mypy is not installed (Debian: python3-mypy)."""
import pathlib
import textwrap

import pytest

api = pytest.importorskip("mypy.api", reason="mypy is not installed (Debian: python3-mypy)")

import tessel  # noqa: E402


def test_mypy_checks_user_code_against_the_stubs(tmp_path, monkeypatch):
    good = tmp_path / "good.py"
    good.write_text(textwrap.dedent("""
        import numpy as np
        import tessel
        from tessel import ops
        x = tessel.Tensor(np.ones((2, 3), np.float32))
        y: tessel.Tensor = x * 2 + 1
        z: tessel.Tensor = ops.reduce(ops.mat_mul(x, y, transpose_b=True), op="Sum", axes=[1])
        shape: tuple = z.shape
        d: tessel.DType = tessel.float32
        w = tessel.from_dlpack(np.zeros(3), device="reference")
        print(y.numpy(), z.dtype.name, d.itemsize, w, tessel.memory_stats()["in_use"])
    """))
    bad = tmp_path / "bad.py"
    bad.write_text("from tessel import ops\nops.reduce(ops.mat_mul(1, 2), op='Summ')\n")
    args = ["--no-incremental", "--follow-imports=silent", "--ignore-missing-imports",
            "--cache-dir", str(tmp_path / "cache")]
    pkg = pathlib.Path(tessel.__file__).parent
    monkeypatch.setenv("MYPYPATH", str(pkg.parent))
    out, err, status = api.run(args + [str(pkg / "__init__.pyi"), str(pkg / "ops.pyi")])
    assert status == 0, out + err
    out, err, status = api.run(args + [str(good)])
    assert status == 0, out + err
    out, err, status = api.run(args + [str(bad)])
    assert status == 1 and "Summ" in out, out + err
