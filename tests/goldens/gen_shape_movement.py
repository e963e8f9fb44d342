"""Goldens for the ShapeMovement kinds: run with /usr/bin/python3 (Debian's python3-torch 1.13).

Each case is {"kind", "attrs", "inputs", "outputs"} with attrs spelled as in ops.def (enum
variants by name, dtypes by short name); tests/ops/test_shape_movement.cpp runs every case on the
reference backend. Expected values come from PyTorch / numpy (and, for ONNX ScatterND / GatherND,
from plain Python loops written after the ONNX reference implementation), never from Tessel.
"""
import warnings

import numpy as np
import torch
import torch.nn.functional as F

import golden_io

warnings.filterwarnings("ignore")
torch.manual_seed(0)
cases = []


def case(kind, attrs, inputs, outputs):
    cases.append({"kind": kind, "attrs": attrs, "inputs": inputs, "outputs": outputs})


def rnd(*shape):
    return torch.randn(*shape, dtype=torch.float64).round(decimals=3)


def torch_pad(mode, x, begins, ends):
    # torch's pad tuple lists (begin, end) from the last axis backwards.
    pad = []
    for b, e in zip(reversed(begins), reversed(ends)):
        pad += [b, e]
    k = sum(1 for b, e in zip(begins, ends) if b or e)
    pad = pad[: 2 * max(k, 1)]
    if mode == "Constant":
        return F.pad(x, pad, mode="constant", value=0.5)
    return F.pad(x, pad, mode={"Reflect": "reflect", "Replicate": "replicate",
                               "Circular": "circular"}[mode])


# Pad: torch pads the trailing 1 (3-D input) or 2 (4-D input) axes in the non-constant modes.
for mode in ["Constant", "Reflect", "Replicate", "Circular"]:
    x = rnd(2, 3, 5, 6)
    begins, ends = [0, 0, 1, 3], [0, 0, 4, 2]
    attrs = {"pads": begins + ends, "mode": mode}
    if mode == "Constant":
        attrs["value"] = 0.5
    case("Pad", attrs, [x], [torch_pad(mode, x, begins, ends)])
    x = rnd(2, 3, 7)
    begins, ends = [0, 0, 6], [0, 0, 5]
    if mode == "Circular":
        begins, ends = [0, 0, 7], [0, 0, 3]
    attrs = {"pads": begins + ends, "mode": mode}
    if mode == "Constant":
        attrs["value"] = 0.5
    case("Pad", attrs, [x], [torch_pad(mode, x, begins, ends)])
# Negative pads crop (constant mode; torch accepts them there too).
x = rnd(3, 4, 5)
case("Pad", {"pads": [1, -1, 2, -1, 2, -2], "mode": "Constant", "value": -3.0}, [x],
     [F.pad(x, [2, -2, -1, 2, 1, -1], value=-3.0)])

# Slice (numpy slicing; the same as ONNX except when a negative step starts before -dim,
# which the C++ tests check by hand).
x = rnd(4, 5, 6)
big = 2**63 - 1
for starts, ends, axes, steps in [
        ([1, 0], [3, 5], [0, 1], [1, 2]),
        ([-1], [-100], [2], [-1]),
        ([4, -2, 5], [-big - 1, 0, 1], [0, 1, 2], [-2, -1, -3]),
        ([0, 1], [big, big], [-1, 0], [4, 2]),
        ([3], [1], [1], [1]),
        ([10, -7], [big, 2], [1, 2], [1, 1])]:
    sl = [slice(None)] * 3
    for s, e, a, st in zip(starts, ends, axes, steps):
        e = None if e == big else (-10**6 if e == -big - 1 else e)
        sl[a] = slice(s, e, st)
    y = torch.from_numpy(np.ascontiguousarray(x.numpy()[tuple(sl)]))
    case("Slice", {"starts": starts, "ends": ends, "axes": axes, "steps": steps}, [x], [y])
case("Slice", {"starts": [1, -3], "ends": [3, 6]}, [x], [x[1:3, -3:6]])

# Scatter / gather family.
data = rnd(3, 5)
idx = torch.tensor([[4, 0, 2], [1, 3, 3], [0, 0, 4]])
upd = rnd(3, 3)
case("GatherElements", {"axis": 1}, [data, idx], [torch.gather(data, 1, idx)])
idx0 = torch.tensor([[2, 0, 1, 1], [0, 2, 2, 1]])
case("GatherElements", {"axis": 0}, [data, idx0], [torch.gather(data, 0, idx0)])
uniq = torch.tensor([[4, 0, 2], [1, 3, 0], [0, 2, 4]])
case("ScatterElements", {"axis": 1, "reduction": "None"}, [data, uniq, upd],
     [data.scatter(1, uniq, upd)])
for red, tname in [("Add", "sum"), ("Mul", "prod"), ("Max", "amax"), ("Min", "amin")]:
    case("ScatterElements", {"axis": 1, "reduction": red}, [data, idx, upd],
         [data.scatter_reduce(1, idx, upd, tname)])
    d3 = rnd(2, 4, 3)
    i3 = torch.tensor([[[3, 0, 0], [3, 3, 1]], [[0, 1, 2], [0, 0, 0]]])
    u3 = rnd(2, 2, 3)
    case("ScatterElements", {"axis": 1, "reduction": red}, [d3, i3, u3],
         [d3.scatter_reduce(1, i3, u3, tname)])
x = rnd(3, 4, 2)
ia = torch.tensor([3, 0, 3, 1, 2])
ua = rnd(3, 5, 2)
case("ScatterAdd", {"axis": -2}, [x, ia, ua], [x.index_add(1, ia, ua)])
x, ia, ua = rnd(5, 3), torch.tensor([4, 4, -1 + 5]), rnd(3, 3)
case("ScatterAdd", {}, [x, ia, ua], [x.index_add(0, ia, ua)])


def scatter_nd(data, indices, updates, red):
    # After onnx/backend/test/case/node/scatternd.py.
    out = data.clone()
    k = indices.shape[-1]
    for i in np.ndindex(*indices.shape[:-1]):
        where = tuple(int(v) for v in indices[i])
        u = updates[i]
        if red == "None":
            out[where] = u
        elif red == "Add":
            out[where] = out[where] + u
        elif red == "Mul":
            out[where] = out[where] * u
        elif red == "Max":
            out[where] = torch.maximum(out[where], u)
        else:
            out[where] = torch.minimum(out[where], u)
    return out


def gather_nd(data, indices, b):
    # After onnx/backend/test/case/node/gathernd.py (gather_nd_impl).
    batch = int(np.prod(indices.shape[:b])) if b else 1
    d = data.reshape((batch,) + tuple(data.shape[b:]))
    ind = indices.reshape((batch, -1, indices.shape[-1]))
    rows = []
    for n in range(batch):
        for row in ind[n]:
            rows.append(d[n][tuple(int(v) for v in row)])
    out_shape = tuple(indices.shape[:-1]) + tuple(data.shape[b + indices.shape[-1]:])
    return torch.stack(rows).reshape(out_shape)


data = rnd(4, 3, 2)
ind = torch.tensor([[[0, 1], [3, 2]], [[3, 2], [1, 0]], [[0, 1], [2, 2]]])
upd = rnd(3, 2, 2)
for red in ["Add", "Mul", "Max", "Min"]:
    case("ScatterNd", {"reduction": red}, [data, ind, upd], [scatter_nd(data, ind, upd, red)])
ind1 = torch.tensor([[2], [0]])
upd1 = rnd(2, 3, 2)
case("ScatterNd", {"reduction": "None"}, [data, ind1, upd1], [scatter_nd(data, ind1, upd1, "None")])
ind3 = torch.tensor([[1, 2, 0], [3, 0, 1], [0, 0, 0]])
upd3 = rnd(3)
case("ScatterNd", {}, [data, ind3, upd3], [scatter_nd(data, ind3, upd3, "None")])

data = rnd(2, 3, 4, 5)
for b, ind in [(0, torch.tensor([[1, 2], [0, 0], [1, 1]])),
               (0, torch.tensor([[[1, 2, 3, 4]], [[0, 0, 0, 1]]])),
               (1, torch.tensor([[[2], [0]], [[1], [1]]])),
               (2, torch.stack([torch.randint(0, 4, (2, 3, 2)),
                                torch.randint(0, 5, (2, 3, 2))], -1))]:
    case("GatherNd", {"batch_dims": b}, [data, ind], [gather_nd(data, ind, b)])

x = rnd(3, 4, 5)
for axis, ind in [(0, torch.tensor([2, 0, 2])), (1, torch.tensor([[3, 0], [1, 1], [2, 3]])),
                  (2, torch.tensor(4))]:
    y = torch.from_numpy(np.take(x.numpy(), ind.numpy(), axis=axis))
    case("Gather", {"axis": axis}, [x, ind], [y])
w = rnd(7, 4)
ids = torch.tensor([[6, 0, 3], [3, 3, 1]])
case("Embedding", {}, [w, ids], [F.embedding(ids, w)])

# Resampling.
for size in [(7, 3, 6), (2, 8, 5), (3, 5, 4)]:
    x = rnd(2, 3, 3, 5, 4)
    case("Interpolate3d", {"size": list(size)}, [x], [F.interpolate(x, size=size, mode="nearest")])
x = rnd(2, 3, 3, 5)
case("ResizeNearest2x", {}, [x], [F.interpolate(x, scale_factor=2, mode="nearest")])

# Layout.
x = rnd(2, 3, 4)
case("Tile", {"repeats": [2, 1, 3]}, [x], [x.repeat(2, 1, 3)])
case("Tile", {"repeats": [1, 0, 2]}, [x], [x.repeat(1, 0, 2)])
x = rnd(2, 4, 5)
for upper in [True, False]:
    for k in [0, 2, -1, -5]:
        y = torch.triu(x, k) if upper else torch.tril(x, k)
        case("Trilu", {"upper": upper, "k": k}, [x], [y])
x = rnd(2, 3, 4)
case("Transpose", {"perm": [2, 0, 1]}, [x], [x.permute(2, 0, 1)])
case("Reverse", {"axes": [0, -1]}, [x], [torch.flip(x, [0, 2])])
# Bidirectional: x [2, 1, 4] with shape [3, 1, 3, 4] gives [3, 2, 3, 4].
case("Expand", {"shape": [3, 1, 3, 4]}, [x[:, :1, :]], [x[:, :1, :].expand(3, 2, 3, 4)])
a, b = rnd(2, 1, 4), rnd(2, 3, 4)
case("Concat", {"axis": 1}, [a, b, a], [torch.cat([a, b, a], 1)])
case("Split", {"axis": -1, "sizes": [1, 0, 3]}, [b], list(torch.split(b, [1, 0, 3], -1)))
case("Reshape", {"shape": [4, -1, 1]}, [b], [b.reshape(4, -1, 1)])
case("Narrow", {"axis": 2, "start": -3, "length": 2}, [b], [b.narrow(2, 1, 2)])

# OneHot (torch's one_hot puts the new axis last; moved for the other axes).
ind = torch.tensor([[1, -1, 4], [0, 3, -4]])
oh = F.one_hot(ind % 4, 4).double() * 3.0 - 1.0 * (1 - F.one_hot(ind % 4, 4).double())
oh[0, 2, :] = -1.0  # 4 is out of [-depth, depth): an all-off row (ONNX)
case("OneHot", {"depth": 4, "axis": -1, "dtype": "f64", "on_value": 3.0, "off_value": -1.0},
     [ind], [oh])
case("OneHot", {"depth": 4, "axis": 0, "dtype": "f64", "on_value": 3.0, "off_value": -1.0},
     [ind], [oh.permute(2, 0, 1)])

# Clamp and Range.
x = torch.tensor([[-2.5, float("nan"), 0.3], [7.0, float("inf"), -float("inf")]],
                 dtype=torch.float64)
case("Clamp", {"min": -1.0, "max": 2.0}, [x], [torch.clamp(x, -1.0, 2.0)])
case("Clamp", {"min": 1.0, "max": -1.0}, [x], [torch.clamp(x, 1.0, -1.0)])
case("Clamp", {"min": 0.0}, [x], [torch.clamp(x, min=0.0)])
for start, limit, delta in [(0.5, 3.2, 0.7), (5.0, -2.0, -1.5), (1.0, 1.0, 1.0), (3.0, 9.0, -1.0)]:
    case("Range", {"start": start, "limit": limit, "delta": delta, "dtype": "f64"}, [],
         [torch.arange(start, limit, delta, dtype=torch.float64) if (limit - start) * delta > 0
          else torch.zeros(0, dtype=torch.float64)])
case("Range", {"start": -3.0, "limit": 10.0, "delta": 4.0, "dtype": "i64"}, [],
     [torch.arange(-3, 10, 4)])

golden_io.write("shape_movement", cases)
