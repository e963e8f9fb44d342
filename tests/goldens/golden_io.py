"""Shared writer for golden files: run with /usr/bin/python3 (Debian's python3-torch 1.13).

Each generator (gen_<family>.py) seeds torch itself, builds cases with PyTorch in float64 and calls write(family,
cases). A case is a dict of plain JSON values and tensors; tensors are written as
{"dtype", "shape", "data"} with NaN/Inf as strings, so C++ tests need no torch.
"""
import json
import math
import os

import torch

_DTYPES = {
    torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32", torch.float64: "f64",
    torch.int8: "i8", torch.uint8: "u8", torch.int16: "i16", torch.int32: "i32",
    torch.int64: "i64", torch.bool: "bool",
}


def tensor(t):
    t = t.detach().cpu().contiguous()
    flat = t.reshape(-1).tolist()
    data = []
    for v in flat:
        if isinstance(v, float):
            if math.isnan(v):
                v = "nan"
            elif math.isinf(v):
                v = "inf" if v > 0 else "-inf"
        data.append(v)
    return {"dtype": _DTYPES[t.dtype], "shape": list(t.shape), "data": data}


def _encode(v):
    if isinstance(v, torch.Tensor):
        return tensor(v)
    if isinstance(v, dict):
        return {k: _encode(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_encode(x) for x in v]
    return v


def write(family, cases):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), family + ".json")
    with open(path, "w") as f:
        json.dump({"generator": "tests/goldens/gen_%s.py" % family,
                   "torch": torch.__version__, "cases": _encode(cases)}, f, indent=None,
                  separators=(",", ":"))
        f.write("\n")
    print("wrote", path)
