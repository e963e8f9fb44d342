"""One Python function per ready op kind, generated from the op table (src/ir/ops.def).

`tessel.ops.<snake_name>` records the kind with its exact schema: inputs are positional (an
optional input defaults to None, a variadic one is a list), attributes are keyword arguments
with the table's defaults, and the docstring is the table's description, signature, variants
and seed operation IDs. The stub generator (`_stubgen.py`) writes the same signatures into
the `.pyi` files. The numpy-style functions of the top-level `tessel` namespace are built on
these (see `_numpy.py`).
"""
import inspect
import re
import types

from . import _tessel
from ._tensor import as_tensor

# Kinds users do not call: graph leaves, and kinds whose required attribute is a graph body.
_NOT_FUNCTIONS = {"Input", "Param", "Constant"}


# Names whose capitals are not word starts.
_SNAKE_EXCEPTIONS = {"ALiBi": "alibi", "FusedSwiGLU": "fused_swiglu"}


def snake_case(name):
    """'SoftmaxCrossEntropy' -> 'softmax_cross_entropy', 'MatMul' -> 'mat_mul',
    'Conv2dBackwardInput' -> 'conv2d_backward_input', 'Im2Col' -> 'im2col'."""
    if name in _SNAKE_EXCEPTIONS:
        return _SNAKE_EXCEPTIONS[name]
    s = re.sub(r"([a-z])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    return s.lower()


def parse_default(attr):
    """The Python value of an attribute's default text (None: required)."""
    text, kind = attr["default"], attr["type"]
    if text is None:
        return None
    if kind == "int":
        return int(text)
    if kind == "float":
        return float(text)  # handles nan, inf, -inf, 1e-5
    if kind == "bool":
        return text == "true"
    if kind == "ints":
        return [int(v) for v in text.split(",") if v.strip()]
    if kind == "floats":
        return [float(v) for v in text.split(",") if v.strip()]
    if kind == "dtype":
        return _tessel.dtype(text)
    return text  # string, enum (a variant name)


_REQUIRED = inspect.Parameter.empty


def _parameters(entry):
    params = []
    ports = entry["inputs"]
    for i, port in enumerate(ports):
        # An optional input defaults to None when every input after it is optional too (before
        # a required one it must be passed, as None when absent).
        trailing = all(p["optional"] for p in ports[i:])
        default = None if trailing else _REQUIRED
        params.append(inspect.Parameter(port["name"].rstrip("*?"),
                                        inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default))
    for attr in entry["attrs"]:
        default = parse_default(attr)
        params.append(inspect.Parameter(attr["name"], inspect.Parameter.KEYWORD_ONLY,
                                        default=_REQUIRED if default is None else default))
    return params


def _docstring(entry):
    lines = [entry["description"] + ".", "",
             f"Op kind {entry['name']} ({entry['category_title']}): {entry['signature']}"]
    if entry["attrs"]:
        lines += ["", "Attributes:"]
        for a in entry["attrs"]:
            kind = a["enum"] or a["type"]
            default = "required" if a["default"] is None else f"default {a['default'] or '[]'}"
            lines.append(f"    {a['name']} ({kind}, {default})")
    if entry["variants"]:
        lines += ["", f"Variants ({entry['variant_attr']}):"]
        for v in entry["variants"]:
            nd = "" if v["differentiable"] else " (not differentiable)"
            lines.append(f"    {v['name']}: {v['doc']}{nd}")
    if entry["differentiable"] == "no":
        lines += ["", "Not differentiable."]
    if entry["aliases"]:
        ids = ", ".join(a["id"] + (f" ({a['variant']})" if a["variant"] else "")
                        for a in entry["aliases"])
        lines += ["", f"Seed operation IDs: {ids}."]
    return "\n".join(lines)


def _make(entry):
    kind = entry["name"]
    n_inputs = len(entry["inputs"])
    single = len(entry["outputs"]) == 1 and not entry["outputs"][0]["variadic"]
    signature = inspect.Signature(_parameters(entry))
    attr_names = [a["name"] for a in entry["attrs"]]

    def fn(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"tessel.ops.{snake_case(kind)}: {e}") from None
        bound.apply_defaults()
        values = list(bound.arguments.values())
        inputs = []
        for port, value in zip(entry["inputs"], values[:n_inputs]):
            if port["variadic"]:
                inputs.extend(as_tensor(v) for v in value)
            else:
                inputs.append(None if value is None else as_tensor(value))
        attrs = dict(zip(attr_names, values[n_inputs:]))
        outs = _tessel.op(kind, inputs, attrs)
        return outs[0] if single else tuple(outs)

    fn.__name__ = fn.__qualname__ = snake_case(kind)
    fn.__module__ = "tessel.ops"
    fn.__signature__ = signature
    fn.__doc__ = _docstring(entry)
    fn.op_kind = kind
    return fn


def ready_entries():
    """The op table's ready kinds that are callable functions, in table order."""
    return [e for e in _tessel.op_table()
            if e["status"] == "ready" and e["name"] not in _NOT_FUNCTIONS
            and not any(a["type"] == "graph" and a["default"] is None for a in e["attrs"])]


def build_module():
    """The `tessel.ops` module: one generated function per ready kind."""
    module = types.ModuleType("tessel.ops", "Every ready op kind of the op table, generated from "
                              "it (src/ir/ops.def); see tessel.op_table().")
    names = []
    for entry in ready_entries():
        fn = _make(entry)
        setattr(module, fn.__name__, fn)
        names.append(fn.__name__)
    module.__all__ = names
    return module


def op(kind, *inputs, **attrs):
    """Records any op of the table by kind name ("Attention") or seed operation ID
    ("attention.sliding_window", which also sets the variant); returns its outputs (one Tensor,
    or a tuple for several). An absent optional input is None."""
    outs = _tessel.op(kind, [None if x is None else as_tensor(x) for x in inputs], attrs)
    return outs[0] if len(outs) == 1 else tuple(outs)


__all__ = ["snake_case", "parse_default", "ready_entries", "build_module", "op"]
