"""The generated type stubs: they parse and compile, ops.pyi has every ready op kind of the
table with exactly tessel.ops' parameters (names, kinds, defaults), __init__.pyi names every
public name of tessel, and py.typed is there. Checks both the stubs the build wrote next to the
package and a fresh generation into a temporary directory (test_stubs_mypy.py type-checks user
code against them)."""
import ast
import inspect
import pathlib

import pytest

import tessel
from tessel import _ops, _stubgen


@pytest.fixture(scope="module", params=["built", "fresh"])
def stub_dir(request, tmp_path_factory):
    if request.param == "built":
        return pathlib.Path(tessel.__file__).parent
    directory = tmp_path_factory.mktemp("stubs")
    _stubgen.write_stubs(directory)
    return directory


def parse(path):
    text = path.read_text()
    compile(text, str(path), "exec")
    return ast.parse(text)


def top_level_names(tree):
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return names


def test_files_exist(stub_dir):
    for name in ["__init__.pyi", "ops.pyi", "py.typed"]:
        assert (stub_dir / name).is_file(), name


def test_every_public_name_in_init_stub(stub_dir):
    names = top_level_names(parse(stub_dir / "__init__.pyi"))
    public = getattr(tessel, "__all__", None) or [n for n in dir(tessel) if not n.startswith("_")]
    missing = sorted(set(public) - names)
    assert not missing, f"not in __init__.pyi: {missing}"


def stub_functions(tree):
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def stub_params(fn):
    """[(name, kind, default source or None)] of a stub function."""
    a = fn.args
    out = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for arg, d in zip(positional, defaults):
        out.append((arg.arg, "positional", None if d is None else ast.unparse(d)))
    if a.vararg:
        out.append((a.vararg.arg, "var_positional", None))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, "keyword_only", None if d is None else ast.unparse(d)))
    if a.kwarg:
        out.append((a.kwarg.arg, "var_keyword", None))
    return out


def expected_params(fn):
    kinds = {inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
             inspect.Parameter.POSITIONAL_ONLY: "positional",
             inspect.Parameter.KEYWORD_ONLY: "keyword_only",
             inspect.Parameter.VAR_POSITIONAL: "var_positional",
             inspect.Parameter.VAR_KEYWORD: "var_keyword"}
    out = []
    for p in inspect.signature(fn).parameters.values():
        default = None if p.default is p.empty else _stubgen.default_text(p.default)
        out.append((p.name, kinds[p.kind], default))
    return out


def test_ops_stub_matches_generated_functions(stub_dir):
    tree = parse(stub_dir / "ops.pyi")
    funcs = stub_functions(tree)
    entries = _ops.ready_entries()
    assert entries, "the op table has no ready kinds"
    for entry in entries:
        name = _ops.snake_case(entry["name"])
        assert name in funcs, f"{entry['name']} ({name}) missing from ops.pyi"
        assert stub_params(funcs[name]) == expected_params(getattr(tessel.ops, name)), name
        assert ast.get_docstring(funcs[name]), name
    assert set(funcs) == set(tessel.ops.__all__)


def test_ops_stub_annotations(stub_dir):
    funcs = stub_functions(parse(stub_dir / "ops.pyi"))
    mm = funcs["mat_mul"]
    assert ast.unparse(mm.returns) == "Tensor"
    anns = {a.arg: ast.unparse(a.annotation) for a in mm.args.args + mm.args.kwonlyargs}
    assert anns == {"a": "TensorLike", "b": "TensorLike", "transpose_a": "_bool",
                    "transpose_b": "_bool"}
    red = funcs["reduce"]
    kw = {a.arg: ast.unparse(a.annotation) for a in red.args.kwonlyargs}
    assert kw["op"].startswith("Literal[") and "'Sum'" in kw["op"]
    assert kw["axes"] == "Sequence[_int]"


def test_init_stub_classes_and_signatures(stub_dir):
    tree = parse(stub_dir / "__init__.pyi")
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    tensor = {n.name: n for n in classes["Tensor"].body if isinstance(n, ast.FunctionDef)}
    for method in ["numpy", "item", "astype", "to", "eval", "__dlpack__", "__dlpack_device__",
                   "__add__", "__matmul__", "__getitem__", "shape", "dtype", "device", "ndim"]:
        assert method in tensor, method
    assert ast.unparse(tensor["shape"].returns) == "Tuple[_int, ...]"
    assert ast.unparse(tensor["astype"].returns) == "Tensor"
    assert [b.id for b in classes["ShapeError"].bases] == ["Error", "ValueError"]
    funcs = stub_functions(tree)
    dl = stub_params(funcs["from_dlpack"])
    assert dl == [("x", "positional", None), ("device", "positional", "None")]
    assert "float32" in top_level_names(tree)
    submodules = {a.name for node in tree.body if isinstance(node, ast.ImportFrom)
                  and node.level == 1 for a in node.names}
    assert {"ops", "nn", "optim"} <= submodules


def test_every_public_function_signature(stub_dir):
    """Each Python function of the package has its real parameters in the stub."""
    funcs = stub_functions(parse(stub_dir / "__init__.pyi"))
    for name in dir(tessel):
        fn = getattr(tessel, name)
        if name.startswith("_") or not inspect.isfunction(fn):
            continue
        got = [(n, k, d) for n, k, d in stub_params(funcs[name])]
        want = [(n, k, d) for n, k, d in expected_params(fn)]
        assert got == want, name
        assert all(a.annotation is not None
                   for a in funcs[name].args.args + funcs[name].args.kwonlyargs), name


def test_stubgen_cli(tmp_path):
    assert _stubgen.main(["_stubgen", str(tmp_path)]) == 0
    assert (tmp_path / "ops.pyi").read_text().startswith("# Generated")
    assert _stubgen.main(["_stubgen"]) == 2

