"""Gradient goldens for the VJP rules of the ConvPool category, PyTorch float64 autograd.

Run: /usr/bin/python3 tests/goldens/gen_conv_pool_grad.py  (writes tests/goldens/conv_pool_grad.json)

A case: {"name", "kind" (op kind), "pool" (PoolKind, Pool only), "attrs" (Tessel attribute
values), "x", "w"?, "b"?, "dy" (a cotangent of y), "dx", "dw"?, "db"?}: the gradients of
sum(y * dy). ONNX-style asymmetric pads [begins..., ends...] are reproduced as in
gen_conv_pool.py (F.pad before the op, or cropping a transposed convolution's output); autograd
differentiates through them.
"""
import torch
import torch.nn.functional as F

import golden_io
from conv_pool_torch import AAVG, AMAX, AVGP, CONV, MAXP, fpad

torch.manual_seed(20240612)
D = torch.float64


def rnd(*shape):
    return torch.randn(*shape, dtype=D)


cases = []


def add_case(name, kind, attrs, fn, inputs, pool=None):
    """Runs y = fn(*inputs) and records the gradients of sum(y * dy) for a random dy."""
    leaves = {k: v.clone().requires_grad_(True) for k, v in inputs.items()}
    y = fn(**leaves)
    dy = rnd(*y.shape)
    grads = torch.autograd.grad(y, list(leaves.values()), dy)
    case = {"name": name, "kind": kind, "attrs": attrs, "dy": dy}
    if pool:
        case["pool"] = pool
    for (k, v), g in zip(inputs.items(), grads):
        case[k] = v
        case["d" + k] = g
    cases.append(case)


def conv(name, xs, ws, bias, strides=None, pads=None, dilations=None, groups=1):
    sd = len(xs) - 2
    s, d, p = strides or [1] * sd, dilations or [1] * sd, pads or [0] * sd

    def fn(x, w, b=None):
        if len(p) == 2 * sd:
            return CONV[sd](F.pad(x, fpad(p[:sd], p[sd:])), w, b, s, 0, d, groups)
        return CONV[sd](x, w, b, s, p, d, groups)

    attrs = {"groups": groups}
    if strides:
        attrs["strides"] = strides
    if pads:
        attrs["pads"] = pads
    if dilations:
        attrs["dilations"] = dilations
    inputs = {"x": rnd(*xs), "w": rnd(*ws)}
    if bias:
        inputs["b"] = rnd(ws[0])
    add_case(name, "Conv", attrs, fn, inputs)


conv("conv1d_groups_stride_pad_dil", [2, 4, 11], [6, 2, 3], True, [2], [1], [2], groups=2)
conv("conv1d_depthwise_onnx_pads", [3, 3, 9], [3, 1, 4], False, pads=[2, 1], groups=3)
conv("conv2d_stride_pad_dil", [2, 3, 7, 6], [4, 3, 3, 2], True, [2, 1], [1, 0], [1, 2])
conv("conv2d_groups_stride3", [2, 6, 8, 7], [4, 3, 2, 3], True, [3, 2], [1, 2], None, groups=2)
conv("conv2d_depthwise_multiplier2", [2, 4, 5, 7], [8, 1, 3, 3], True, pads=[1, 1], groups=4)
conv("conv2d_onnx_pads_stride2", [2, 3, 6, 5], [2, 3, 2, 3], True, [2, 2], [0, 2, 1, 1])
conv("conv3d_groups_dil_stride", [2, 2, 5, 5, 6], [4, 1, 2, 3, 2], True, [1, 2, 1], [1, 0, 1],
     [2, 1, 1], groups=2)
conv("conv3d_onnx_pads", [1, 3, 4, 3, 5], [2, 3, 2, 2, 3], False, [2, 1, 2],
     [1, 0, 0, 0, 1, 2])


def conv_t(name, xs, ws, bias, strides, pads, dilations, output_padding, groups):
    def fn(x, w, b=None):
        if len(pads) == 4:
            full = F.conv_transpose2d(x, w, b, strides, 0, output_padding, groups, dilations)
            H, W = full.shape[2], full.shape[3]
            return full[:, :, pads[0]:H - pads[2], pads[1]:W - pads[3]]
        return F.conv_transpose2d(x, w, b, strides, pads, output_padding, groups, dilations)

    attrs = {"strides": strides, "pads": pads, "dilations": dilations,
             "output_padding": output_padding, "groups": groups}
    inputs = {"x": rnd(*xs), "w": rnd(*ws)}
    if bias:
        inputs["b"] = rnd(ws[1] * groups)
    add_case(name, "ConvTranspose2d", attrs, fn, inputs)


conv_t("convt_groups_outpad", [2, 4, 3, 5], [4, 3, 3, 2], True, [2, 3], [1, 0], [1, 1],
       [1, 2], 2)
# output_padding >= stride (allowed below the dilation): rows no convolution of x reaches.
conv_t("convt_dilation_outpad_ge_stride", [1, 3, 4, 4], [3, 2, 3, 3], False, [1, 1], [0, 1],
       [2, 3], [1, 2], 1)
conv_t("convt_onnx_pads", [2, 2, 3, 4], [2, 3, 2, 3], True, [2, 2], [1, 0, 0, 2], [1, 2],
       [1, 0], 1)


def max_pool(name, xs, k, s, p, dil=None, ceil=False):
    sd = len(xs) - 2
    d = dil or [1] * sd

    def fn(x):
        if len(p) == 2 * sd:
            xp = F.pad(x, fpad(p[:sd], p[sd:]), value=float("-inf"))
            return MAXP[sd](xp, k, s, 0, d, ceil_mode=ceil)
        return MAXP[sd](x, k, s, p, d, ceil_mode=ceil)

    attrs = {"kernel": k, "strides": s, "pads": p, "ceil_mode": ceil}
    if dil:
        attrs["dilations"] = dil
    add_case(name, "Pool", attrs, fn, {"x": rnd(*xs)}, pool="Max")


max_pool("max1d_ceil_dil", [2, 3, 10], [3], [2], [1], dil=[2], ceil=True)
max_pool("max2d_dil_pad", [2, 2, 7, 8], [3, 2], [2, 2], [1, 1], dil=[2, 1])
max_pool("max2d_ceil_overlap", [1, 3, 6, 7], [3, 3], [2, 2], [0, 0], ceil=True)
max_pool("max3d_ceil", [2, 2, 5, 6, 4], [2, 3, 2], [2, 2, 1], [1, 1, 0], ceil=True)
max_pool("max2d_onnx_pads", [2, 2, 5, 6], [3, 2], [1, 2], [0, 1, 1, 0])


def avg_pool(name, xs, k, s, p, ceil, cip):
    sd = len(xs) - 2

    def fn(x):
        if len(p) == 2 * sd:
            pad = fpad(p[:sd], p[sd:])
            num = AVGP[sd](F.pad(x, pad), k, s, 0, ceil, True)
            if cip:
                return num
            return num / AVGP[sd](F.pad(torch.ones_like(x), pad), k, s, 0, ceil, True)
        return AVGP[sd](x, k, s, p, ceil, cip)

    attrs = {"kernel": k, "strides": s, "pads": p, "ceil_mode": ceil, "count_include_pad": cip}
    add_case(name, "Pool", attrs, fn, {"x": rnd(*xs)}, pool="Avg")


avg_pool("avg1d_ceil_incl_clipped", [2, 2, 7], [3], [2], [1], True, True)
avg_pool("avg1d_ceil_excl", [2, 3, 8], [3], [3], [1], True, False)
avg_pool("avg2d_ceil_excl", [2, 2, 7, 6], [3, 2], [2, 2], [1, 1], True, False)
avg_pool("avg2d_ceil_incl", [2, 2, 7, 6], [3, 2], [2, 2], [1, 1], True, True)
avg_pool("avg2d_overlap_incl", [2, 2, 6, 6], [3, 3], [1, 2], [1, 0], False, True)
avg_pool("avg3d_incl", [1, 2, 5, 5, 4], [3, 2, 2], [2, 2, 2], [1, 1, 0], False, True)
avg_pool("avg3d_ceil_excl", [2, 2, 5, 5, 4], [3, 2, 2], [2, 2, 2], [1, 1, 0], True, False)
avg_pool("avg2d_onnx_pads_excl", [2, 2, 5, 6], [2, 3], [2, 1], [1, 0, 0, 1], False, False)


def lp_pool(name, xs, p, k, s, ceil):
    def fn(x):
        if len(xs) == 3:
            return F.lp_pool1d(x, p, k[0], s[0], ceil)
        return F.lp_pool2d(x, p, tuple(k), tuple(s), ceil)

    # Positive inputs: the p-th root is differentiable there for every p.
    x = rnd(*xs).abs() + 0.2
    add_case(name, "Pool", {"kernel": k, "strides": s, "ceil_mode": ceil, "p": p}, fn, {"x": x},
             pool="Lp")


lp_pool("lp1d_p2_ceil_clipped", [2, 3, 8], 2, [3], [2], True)
lp_pool("lp1d_p1", [2, 2, 9], 1, [2], [2], False)
lp_pool("lp2d_p3", [2, 2, 7, 6], 3, [2, 3], [2, 2], False)


def adaptive(name, kind, xs, out):
    sd = len(xs) - 2
    fn = (AMAX if kind == "AdaptiveMax" else AAVG)[sd]
    add_case(name, "Pool", {"output_size": out}, lambda x: fn(x, out), {"x": rnd(*xs)},
             pool=kind)


adaptive("adaptive_avg1d_7to3", "AdaptiveAvg", [2, 3, 7], [3])
adaptive("adaptive_avg2d_7x5to3x2", "AdaptiveAvg", [2, 2, 7, 5], [3, 2])
adaptive("adaptive_avg3d", "AdaptiveAvg", [1, 2, 5, 4, 7], [2, 3, 3])
adaptive("adaptive_max1d_upsample_5to8", "AdaptiveMax", [2, 2, 5], [8])
adaptive("adaptive_max2d_7x6to3x4", "AdaptiveMax", [2, 2, 7, 6], [3, 4])
adaptive("adaptive_max3d", "AdaptiveMax", [2, 1, 5, 4, 7], [2, 3, 3])

golden_io.write("conv_pool_grad", cases)
