"""Builds the tessel Python package: CMake (Ninja) builds the `_tessel` extension and generates
the type stubs (targets _tessel, tessel_python_sources, tessel_python_stubs; tests off) in a
build directory, then the package is python/tessel/*.py plus the built module, __init__.pyi,
ops.pyi and py.typed.

Usage (no package index here; numpy and wheel come from the system):
  python3 -m venv --system-site-packages v && v/bin/pip install --no-build-isolation .

Environment:
  TESSEL_BUILD_DIR   the CMake build directory (default build-pip). An existing, configured one
                     (e.g. the ctest build) is reused as it is: only ninja runs, its cache and
                     options are left alone. ccache (CCACHE_BASEDIR = this directory) hits the
                     objects of other builds only for a build directory one level below this
                     one, as the default is.
  TESSEL_BUILD_JOBS  ninja's -j (default: ninja's own choice).
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
TARGETS = ["_tessel", "tessel_python_sources", "tessel_python_stubs"]
GENERATED = ["__init__.pyi", "ops.pyi", "py.typed"]


def build_dir():
    path = pathlib.Path(os.environ.get("TESSEL_BUILD_DIR") or ROOT / "build-pip")
    return path if path.is_absolute() else ROOT / path


def version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(tessel VERSION ([0-9.]+)", text).group(1)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Runs CMake + Ninja instead of compiling sources itself."""

    def build_extension(self, ext):
        build = build_dir()
        env = dict(os.environ)
        # ccache hits across checkouts (as scripts/build.sh does).
        env.setdefault("CCACHE_BASEDIR", str(ROOT))
        env.setdefault("CCACHE_NOHASHDIR", "1")
        if not (build / "CMakeCache.txt").exists():
            self._run(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
                       "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                       "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG",
                       "-DBUILD_TESTING=OFF", "-DTESSEL_PYTHON=ON",
                       # The interpreter itself, not the venv's link to it, so the build dir
                       # outlives the venv; the module's ABI is this interpreter's.
                       f"-DPython3_EXECUTABLE={os.path.realpath(sys.executable)}"], env)
        jobs = os.environ.get("TESSEL_BUILD_JOBS")
        self._run(["ninja", "-C", str(build)] + ([f"-j{jobs}"] if jobs else []) + TARGETS,
                  env)
        built = build / "python" / "tessel"
        module = next(built.glob("_tessel*.so"), None)
        if module is None:
            raise RuntimeError(f"the build left no _tessel module in {built}")
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(module, dest)
        for name in GENERATED:
            if not (built / name).exists():
                raise RuntimeError(f"the build left no {name} in {built}")
            shutil.copyfile(built / name, dest.parent / name)

    @staticmethod
    def _run(cmd, env):
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, env=env)


build_dir().mkdir(parents=True, exist_ok=True)  # setuptools wants egg_base to exist
setup(
    version=version(),
    packages=["tessel"],
    package_dir={"tessel": "python/tessel"},
    ext_modules=[CMakeExtension("tessel._tessel")],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
    # setuptools' own scratch (build/lib..., the egg-info) goes under the build dir too, not
    # into the source tree.
    options={"build": {"build_base": str(build_dir() / "setuptools")},
             "egg_info": {"egg_base": str(build_dir())}},
)
