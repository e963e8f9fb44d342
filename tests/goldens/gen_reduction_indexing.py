"""Goldens for the ReductionIndexing category (Reduce, Softmax, Cumsum, CumProd, CumMax, ArgMax,
ArgMin, TopK, Sort, ArgSort), computed by PyTorch in float64.

Where Tessel's contract is stricter than PyTorch's the golden is built from a PyTorch primitive that
pins it down: TopK ties go to the lower index first, so TopK goldens are the first k of a stable
torch.sort (checked against torch.topk's values); select_last comes from argmax of the flipped
input; exclusive / reverse scans from flips and shifts. Sample is checked in C++ (hand-computed and
statistically), since it depends on Tessel's own RNG.

Run: /usr/bin/python3 tests/goldens/gen_reduction_indexing.py
"""
import torch

import golden_io

torch.manual_seed(20240612)
D = torch.float64
NAN = float("nan")
INF = float("inf")


def rnd(*shape, lo=-2.0, hi=2.0):
    return torch.rand(*shape, dtype=D) * (hi - lo) + lo


cases = []


def dims_of(x, axes):
    return list(range(x.dim())) if not axes else [a % max(x.dim(), 1) for a in axes]


def reduce_case(op, x, axes, keepdims=False, correction=0):
    dims = dims_of(x, axes)
    if op == "Sum":
        y = x.sum(dim=dims, keepdim=keepdims)
    elif op == "Mean":
        y = x.mean(dim=dims, keepdim=keepdims)
    elif op == "Max":
        y = x.amax(dim=dims, keepdim=keepdims)
    elif op == "Min":
        y = x.amin(dim=dims, keepdim=keepdims)
    elif op == "Prod":
        y = x
        for d in sorted(dims, reverse=True):
            y = y.prod(dim=d, keepdim=True)
        if not keepdims:
            y = y.reshape([s for i, s in enumerate(x.shape) if i not in dims])
    elif op == "LogSumExp":
        y = torch.logsumexp(x, dim=dims, keepdim=keepdims)
    elif op == "L1":
        y = torch.linalg.vector_norm(x, 1, dim=dims, keepdim=keepdims)
    elif op == "L2":
        y = torch.linalg.vector_norm(x, 2, dim=dims, keepdim=keepdims)
    elif op == "SumSquare":
        y = (x * x).sum(dim=dims, keepdim=keepdims)
    elif op == "Var":
        y = torch.var(x, dim=dims, correction=correction, keepdim=keepdims)
    elif op == "Std":
        y = torch.std(x, dim=dims, correction=correction, keepdim=keepdims)
    else:
        raise ValueError(op)
    cases.append({"kind": "Reduce", "op": op, "axes": axes, "keepdims": keepdims,
                  "correction": correction, "x": x, "y": y})


x234 = rnd(2, 3, 4)
x_nan = rnd(3, 5)
x_nan[0, 2] = NAN
x_nan[2, 0] = NAN
x_nan[2, 4] = INF
x_big = rnd(2, 3, 5) * 400  # logsumexp must subtract the max
x_big[1, 2, :] = -INF
x_big[0, 0, 1] = INF

for op in ["Sum", "Mean", "Max", "Min", "Prod", "LogSumExp", "L1", "L2", "SumSquare"]:
    reduce_case(op, x234, [])
    reduce_case(op, x234, [1], keepdims=True)
    reduce_case(op, x234, [-1, 0])
    reduce_case(op, rnd(3, 1, 5), [0, 2], keepdims=True)
for op in ["Sum", "Max", "Min", "LogSumExp", "Mean"]:
    reduce_case(op, x_nan, [-1])
reduce_case("LogSumExp", x_big, [-1])
reduce_case("LogSumExp", x_big, [0, 2], keepdims=True)
reduce_case("Prod", rnd(2, 5, lo=0.5, hi=1.5), [1])
for corr in [0, 1, 2]:
    reduce_case("Var", x234, [0, 2], correction=corr)
    reduce_case("Std", x234, [1], keepdims=True, correction=corr)
    reduce_case("Var", x234, [], correction=corr)
reduce_case("Std", rnd(5, 7), [-1], correction=1)
reduce_case("Var", rnd(4, 2), [1], correction=2)  # N == correction: 0/0 or x/0
reduce_case("Var", torch.tensor([[1.0, 2.0], [3.0, 3.0]], dtype=D), [1], correction=3)
# Empty reductions: identities, NaN for the averages, -inf for logsumexp.
empty = torch.zeros(2, 0, 3, dtype=D)
for op in ["Sum", "Prod", "Mean", "L1", "L2", "SumSquare", "LogSumExp"]:
    reduce_case(op, empty, [1])
for op in ["Var", "Std"]:
    reduce_case(op, empty, [1], correction=1)
reduce_case("Sum", torch.tensor(2.5, dtype=D), [])
reduce_case("Max", torch.tensor(-1.5, dtype=D), [0], keepdims=True)


def softmax_case(x, axis, log):
    y = torch.log_softmax(x, dim=axis) if log else torch.softmax(x, dim=axis)
    cases.append({"kind": "Softmax", "axis": axis, "log": log, "x": x, "y": y})


masked = rnd(3, 6) * 3
masked[1, 0] = -INF
masked[1, 4] = -INF
masked[2, :] = 500 + rnd(6)  # large values: must subtract the max
for log in [False, True]:
    softmax_case(rnd(3, 5) * 4, -1, log)
    softmax_case(rnd(2, 3, 4) * 4, 1, log)
    softmax_case(rnd(4, 3), 0, log)
    softmax_case(masked, 1, log)
softmax_case(torch.tensor(0.7, dtype=D), -1, False)
softmax_case(torch.tensor(0.7, dtype=D), 0, True)


def flip_scan(x, axis, reverse, f):
    if reverse:
        return f(x.flip(axis)).flip(axis)
    return f(x)


def cumsum_case(x, axis, exclusive, reverse):
    def f(v):
        c = torch.cumsum(v, dim=axis)
        return c - v if not exclusive else torch.cat(
            [torch.zeros_like(v.narrow(axis, 0, 1)), c.narrow(axis, 0, v.shape[axis] - 1)], axis)

    def inclusive(v):
        return torch.cumsum(v, dim=axis)

    y = flip_scan(x, axis, reverse, f if exclusive else inclusive)
    cases.append({"kind": "Cumsum", "axis": axis, "exclusive": exclusive, "reverse": reverse,
                  "x": x, "y": y})


def cumprod_case(x, axis, reverse):
    y = flip_scan(x, axis, reverse, lambda v: torch.cumprod(v, dim=axis))
    cases.append({"kind": "CumProd", "axis": axis, "reverse": reverse, "x": x, "y": y})


def cummax_case(x, axis, reverse):
    y = flip_scan(x, axis, reverse, lambda v: torch.cummax(v, dim=axis).values)
    cases.append({"kind": "CumMax", "axis": axis, "reverse": reverse, "x": x, "y": y})


scan_x = rnd(3, 5)
scan_nan = rnd(2, 6)
scan_nan[0, 2] = NAN
scan_nan[1, 5] = NAN
for exclusive in [False, True]:
    for reverse in [False, True]:
        cumsum_case(scan_x, 1, exclusive, reverse)
        cumsum_case(rnd(4, 3, 2), -3, exclusive, reverse)
for reverse in [False, True]:
    cumprod_case(rnd(3, 5, lo=0.5, hi=1.5), -1, reverse)
    cumprod_case(rnd(4, 3), 0, reverse)
    cummax_case(scan_x, 1, reverse)
    cummax_case(rnd(5, 2, 3), 0, reverse)
    cummax_case(scan_nan, 1, reverse)


def arg_case(kind, x, axis, keepdims, select_last):
    f = torch.argmax if kind == "ArgMax" else torch.argmin
    if select_last:
        n = x.shape[axis]
        y = n - 1 - f(x.flip(axis), dim=axis, keepdim=keepdims)
    else:
        y = f(x, dim=axis, keepdim=keepdims)
    cases.append({"kind": kind, "axis": axis, "keepdims": keepdims, "select_last": select_last,
                  "x": x, "y": y})


ties = torch.randint(0, 3, (4, 7)).to(D)  # many ties
arg_nan = rnd(3, 6)
arg_nan[0, 1] = NAN
arg_nan[0, 4] = NAN
arg_nan[2, 5] = NAN
for kind in ["ArgMax", "ArgMin"]:
    for select_last in [False, True]:
        arg_case(kind, ties, -1, False, select_last)
        arg_case(kind, ties, 0, True, select_last)
        arg_case(kind, arg_nan, 1, False, select_last)
        arg_case(kind, rnd(2, 5, 3), 1, True, select_last)


def stable_sort(x, axis, descending):
    return torch.sort(x, dim=axis, descending=descending, stable=True)


def topk_case(x, k, axis, largest):
    values, indices = stable_sort(x, axis, largest)
    values = values.narrow(axis, 0, k)
    indices = indices.narrow(axis, 0, k)
    tv, _ = torch.topk(x, k, dim=axis, largest=largest)
    assert torch.equal(tv.isnan(), values.isnan())
    assert torch.equal(tv.nan_to_num(7.5), values.nan_to_num(7.5))
    cases.append({"kind": "TopK", "k": k, "axis": axis, "largest": largest, "x": x,
                  "values": values, "indices": indices})


sort_nan = torch.tensor([[1.0, NAN, 3.0, 1.0, NAN, 0.0, -INF, 3.0],
                         [2.0, 2.0, -1.0, INF, 0.0, -0.0, 5.0, 2.0]], dtype=D)
for largest in [True, False]:
    topk_case(rnd(3, 7), 3, -1, largest)
    topk_case(ties, 4, 1, largest)
    topk_case(rnd(5, 2, 3), 2, 0, largest)
    topk_case(sort_nan, 3, 1, largest)
    topk_case(ties, 0, 1, largest)
    topk_case(ties, 7, 1, largest)


def sort_case(x, axis, descending):
    values, indices = stable_sort(x, axis, descending)
    cases.append({"kind": "Sort", "axis": axis, "descending": descending, "x": x, "y": values})
    cases.append({"kind": "ArgSort", "axis": axis, "descending": descending, "x": x,
                  "y": indices})


for descending in [False, True]:
    sort_case(sort_nan, -1, descending)
    sort_case(ties, 1, descending)
    sort_case(ties, 0, descending)
    sort_case(rnd(3, 4, 5), 1, descending)

golden_io.write("reduction_indexing", cases)
