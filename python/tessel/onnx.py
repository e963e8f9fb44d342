"""ONNX models: ``tessel.onnx.load(path).run(inputs, device="cpu")``.

A model is parsed and checked when loaded (an op without a converter fails then, listing every
one). Inputs may be numpy arrays, tessel Tensors or Python scalars/lists (tensors), numpy
arrays of str (string tensors), lists (sequences) and None (an empty optional); they are given
as a list in the order of ``model.inputs`` or as a dict by name. Outputs come back as a list of
Tensors, numpy str arrays, lists and None.
"""

from . import _tessel
from ._tensor import as_tensor


class Model:
    def __init__(self, model):
        self._model = model

    @property
    def inputs(self):
        """The graph inputs: [{"name", "type", "shape"}], dynamic dims as names or None."""
        return self._model.inputs

    @property
    def outputs(self):
        return self._model.outputs

    @property
    def ir_version(self):
        return self._model.ir_version

    def opset(self, domain=""):
        return self._model.opset(domain)

    def _convert(self, value, type_, device):
        if type_.startswith("optional("):
            return None if value is None else self._convert(value, type_[9:-1], device)
        if type_.startswith("seq("):
            return [self._convert(v, type_[4:-1], device) for v in value]
        if type_ == "tensor(string)":
            return value
        t = as_tensor(value)
        return t if t.device == device else t.to(device)

    def run(self, inputs, device="cpu"):
        specs = self._model.inputs
        if isinstance(inputs, dict):
            unknown = set(inputs) - {s["name"] for s in specs}
            if unknown:
                raise _tessel.InvalidValueError(f"[onnx] the model has no input {sorted(unknown)[0]!r}")
            missing = [s["name"] for s in specs if s["name"] not in inputs]
            if missing:
                raise _tessel.InvalidValueError(f"[onnx] input {missing[0]!r} is not given")
            inputs = [inputs[s["name"]] for s in specs]
        if len(inputs) != len(specs):
            raise _tessel.InvalidValueError(
                f"[onnx] the model takes {len(specs)} inputs; {len(inputs)} were given")
        values = [self._convert(v, s["type"], device) for v, s in zip(inputs, specs)]
        return self._model.run(values, device)


def load(path):
    """Reads and checks an .onnx file."""
    return Model(_tessel.OnnxModel.load(str(path)))


def parse(data):
    """Parses and checks a serialized ModelProto (bytes)."""
    return Model(_tessel.OnnxModel.parse(bytes(data)))
