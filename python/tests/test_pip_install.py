"""`pip install` of the repository into a fresh venv (with the system's numpy, no index, no
build isolation), then `import tessel` from another directory with no PYTHONPATH.

ctest passes its own build directory in TESSEL_BUILD_DIR, which setup.py reuses as it is (only
ninja runs there, and it is up to date). Run by hand without it, the test builds in a fresh
<source>/build-pip-test-<pid>, removed afterwards: the path a user's first `pip install` takes.
With a warm ccache that whole test (configure, build, venv, install, import) takes about 12 s
on 2 cores; it sits next to the source's other build directories on purpose, since ccache
(CCACHE_BASEDIR=<source>, as scripts/build.sh sets) only hits for a build directory at the same
depth below the source. With a cold ccache it compiles the whole library (many minutes).
"""
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

SOURCE = pathlib.Path(os.environ.get("TESSEL_SOURCE_DIR") or
                      pathlib.Path(__file__).resolve().parents[2])

FRESH_BUILD_DIR = SOURCE / f"build-pip-test-{os.getpid()}"


def build_dir():
    reuse = os.environ.get("TESSEL_BUILD_DIR")
    return pathlib.Path(reuse) if reuse else FRESH_BUILD_DIR


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PIP_REQUIRE_VIRTUALENV")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INDEX="1", **extra)
    return env


def run(cmd, **kwargs):
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, (f"{' '.join(map(str, cmd))} failed ({result.returncode}):\n"
                                    f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


@pytest.mark.skipif(not (SOURCE / "setup.py").exists(), reason="no setup.py in the source dir")
def test_pip_install_and_import(tmp_path):
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    python = venv / "bin" / "python"
    build = build_dir()
    if build == FRESH_BUILD_DIR:
        shutil.rmtree(build, ignore_errors=True)
    env = clean_env(TESSEL_BUILD_DIR=str(build),
                    TESSEL_BUILD_JOBS=os.environ.get("TESSEL_BUILD_JOBS", "1"))
    env.setdefault("CCACHE_BASEDIR", str(SOURCE))
    env.setdefault("CCACHE_NOHASHDIR", "1")
    try:
        run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index", "-q",
             str(SOURCE)], env=env, timeout=1800)
    finally:
        if build == FRESH_BUILD_DIR:
            shutil.rmtree(build, ignore_errors=True)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    check = textwrap.dedent("""
        import pathlib, sys
        import numpy as np
        import tessel
        pkg = pathlib.Path(tessel.__file__).parent
        assert pkg.is_relative_to(pathlib.Path(sys.prefix)), (pkg, sys.prefix)
        for name in ["__init__.pyi", "ops.pyi", "py.typed"]:
            assert (pkg / name).is_file(), name
        t = tessel.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
        assert isinstance(t * 2, tessel.Tensor) and t.shape == (2, 3)
        np.testing.assert_allclose((t * 2 + 1).numpy(), np.arange(6).reshape(2, 3) * 2 + 1)
        assert tessel.ops.mat_mul(t, t, transpose_b=True).shape == (2, 2)
        assert np.from_dlpack(t).ctypes.data == t._data_ptr()
        print("ok", tessel.__version__, pkg)
    """)
    result = run([python, "-c", check], cwd=elsewhere, env=clean_env())
    assert result.stdout.startswith("ok ")
    # The package is the installed one, not the source tree or the build directory.
    assert str(venv) in result.stdout
