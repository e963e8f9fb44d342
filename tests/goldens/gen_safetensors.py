"""Writes safetensors test files with an implementation independent of Tessel's: PyTorch 1.13
tensors serialized with Python's struct and json, following the published format (8-byte
little-endian header length, JSON header with dtype / shape / data_offsets, optional
__metadata__). Run with /usr/bin/python3 (Debian's python3-torch); writes
tests/data/safetensors/*.safetensors and safetensors.json (the expected values, as golden_io
tensors) beside this script.

- aligned.safetensors: header padded with spaces to a multiple of 8 and tensors ordered by
  descending element size, as the reference implementation writes them.
- unaligned.safetensors: no header padding and a 1-byte tensor first, so the others sit at
  offsets that are not multiples of their element size (readers must copy, not view).
- empty.safetensors: no tensors and no metadata ("{}").
"""
import json
import os
import struct

import torch

import golden_io

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "safetensors")

NAMES = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16",
         torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32", torch.int16: "I16",
         torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL"}


def raw_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().tobytes()


def write(path, tensors, metadata, pad):
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, t in tensors:
        b = raw_bytes(t)
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)
    print("wrote", path)


def main():
    torch.manual_seed(0)
    tensors = [
        ("weight", torch.randn(3, 4, dtype=torch.float64).float()),
        ("bias", torch.randn(4, dtype=torch.float64)),
        ("half", torch.tensor([1.5, -2.25, 65504.0, 0.0], dtype=torch.float16)),
        ("brain", torch.tensor([[1.0, -3.5], [1e20, -0.0078125]], dtype=torch.bfloat16)),
        ("ids", torch.tensor([0, -1, 2**40, -2**62], dtype=torch.int64)),
        ("counts", torch.tensor([[7, -8, 9]], dtype=torch.int32)),
        ("small", torch.tensor([-3, 300], dtype=torch.int16)),
        ("signed", torch.tensor([-128, 127], dtype=torch.int8)),
        ("pixels", torch.tensor([0, 17, 255], dtype=torch.uint8)),
        ("mask", torch.tensor([True, False, True])),
        ("scalar", torch.tensor(2.5, dtype=torch.float32)),
        ("nothing", torch.zeros(0, 3, dtype=torch.float32)),
    ]
    os.makedirs(OUT, exist_ok=True)
    by_size = sorted(tensors, key=lambda nt: (-nt[1].element_size(), nt[0]))
    metadata = {"format": "pt", "written_by": "tests/goldens/gen_safetensors.py"}
    write(os.path.join(OUT, "aligned.safetensors"), by_size, metadata, pad=True)
    odd_first = [("flag", torch.tensor([True]))] + tensors
    write(os.path.join(OUT, "unaligned.safetensors"), odd_first, None, pad=False)
    write(os.path.join(OUT, "empty.safetensors"), [], None, pad=False)
    expected = {name: (t.to(torch.float64) if t.dtype in (torch.float16, torch.bfloat16) else t)
                for name, t in odd_first}
    golden_io.write("safetensors", [{"name": "values", "tensors": expected,
                                     "dtypes": {n: NAMES[t.dtype] for n, t in odd_first},
                                     "metadata": metadata}])


if __name__ == "__main__":
    main()
