"""Goldens for the ConvPool category (Conv, ConvTranspose2d, Im2Col, Pool), PyTorch float64.

Run: /usr/bin/python3 tests/goldens/gen_conv_pool.py  (writes tests/goldens/conv_pool.json)

A case: {"name", "kind" (op kind), "pool" (PoolKind, Pool only), "attrs" (Tessel attribute
values), "x", "w"?, "b"?, "y"}. ONNX-style asymmetric pads [begins..., ends...] have no torch
argument; they are reproduced by padding the input with F.pad (zeros for conv / avg, -inf for
max) or, for conv_transpose2d, by cropping the unpadded result.
"""
import torch
import torch.nn.functional as F

import golden_io
from conv_pool_torch import AAVG, AMAX, AVGP, CONV, MAXP, fpad

torch.manual_seed(20240611)
D = torch.float64


def rnd(*shape):
    return torch.randn(*shape, dtype=D)


cases = []


def conv(name, xs, ws, bias, strides=None, pads=None, dilations=None, groups=1):
    x, w = rnd(*xs), rnd(*ws)
    b = rnd(ws[0]) if bias else None
    sd = len(xs) - 2
    s = strides or [1] * sd
    d = dilations or [1] * sd
    p = pads or [0] * sd
    if len(p) == 2 * sd:  # ONNX begins/ends
        y = CONV[sd](F.pad(x, fpad(p[:sd], p[sd:])), w, b, s, 0, d, groups)
    else:
        y = CONV[sd](x, w, b, s, p, d, groups)
    attrs = {"groups": groups}
    if strides:
        attrs["strides"] = strides
    if pads:
        attrs["pads"] = pads
    if dilations:
        attrs["dilations"] = dilations
    case = {"name": name, "kind": "Conv", "attrs": attrs, "x": x, "w": w, "y": y}
    if bias:
        case["b"] = b
    cases.append(case)


conv("conv1d_groups_stride_pad_dil", [2, 4, 11], [6, 2, 3], True, [2], [1], [2], groups=2)
conv("conv1d_depthwise_onnx_pads", [3, 3, 9], [3, 1, 4], False, pads=[2, 1], groups=3)
conv("conv2d_stride_pad_dil", [2, 3, 7, 6], [4, 3, 3, 2], True, [2, 1], [1, 0], [1, 2])
conv("conv2d_depthwise_multiplier2", [2, 4, 5, 7], [8, 1, 3, 3], True, pads=[1, 1], groups=4)
conv("conv2d_onnx_pads_stride2", [2, 3, 6, 5], [2, 3, 2, 3], True, [2, 2], [0, 2, 1, 1])
conv("conv3d_groups_dil", [2, 2, 5, 5, 6], [4, 1, 2, 3, 2], True, [1, 2, 1], [1, 0, 1],
     [2, 1, 1], groups=2)
conv("conv3d_onnx_pads", [1, 3, 4, 3, 5], [2, 3, 2, 2, 3], False, [2, 1, 2],
     [1, 0, 0, 0, 1, 2])


def conv_t(name, xs, ws, bias, strides, pads, dilations, output_padding, groups):
    x, w = rnd(*xs), rnd(*ws)
    o = ws[1] * groups
    b = rnd(o) if bias else None
    if len(pads) == 4:
        full = F.conv_transpose2d(x, w, b, strides, 0, output_padding, groups, dilations)
        H, W = full.shape[2], full.shape[3]
        y = full[:, :, pads[0]:H - pads[2], pads[1]:W - pads[3]]
    else:
        y = F.conv_transpose2d(x, w, b, strides, pads, output_padding, groups, dilations)
    attrs = {"strides": strides, "pads": pads, "dilations": dilations,
             "output_padding": output_padding, "groups": groups}
    case = {"name": name, "kind": "ConvTranspose2d", "attrs": attrs, "x": x, "w": w, "y": y}
    if bias:
        case["b"] = b
    cases.append(case)


conv_t("convt_groups_outpad", [2, 4, 3, 5], [4, 3, 3, 2], True, [2, 3], [1, 0], [1, 1],
       [1, 2], 2)
conv_t("convt_dilation_outpad", [1, 3, 4, 4], [3, 2, 3, 3], False, [1, 1], [0, 1], [2, 2],
       [1, 0], 1)
conv_t("convt_onnx_pads", [2, 2, 3, 4], [2, 3, 2, 3], True, [2, 2], [1, 0, 0, 2], [1, 2],
       [1, 0], 1)


def im2col(name, xs, kernel, strides, pads, dilations):
    x = rnd(*xs)
    y = F.unfold(x, kernel, dilations or 1, pads or 0, strides or 1)
    attrs = {"kernel": kernel}
    if strides:
        attrs["strides"] = strides
    if pads:
        attrs["pads"] = pads
    if dilations:
        attrs["dilations"] = dilations
    cases.append({"name": name, "kind": "Im2Col", "attrs": attrs, "x": x, "y": y})


im2col("unfold_stride_pad_dil", [2, 3, 5, 6], [2, 3], [2, 1], [1, 0], [1, 2])
im2col("unfold_defaults", [1, 2, 4, 4], [3, 3], None, None, None)


def pool_case(name, kind, x, y, **attrs):
    cases.append({"name": name, "kind": "Pool", "pool": kind, "attrs": attrs, "x": x, "y": y})


def max_pool(name, xs, k, s, p, dil=None, ceil=False, nan_at=None):
    x = rnd(*xs)
    if nan_at is not None:
        x.view(-1)[nan_at] = float("nan")
    sd = len(xs) - 2
    d = dil or [1] * sd
    if len(p) == 2 * sd:
        xp = F.pad(x, fpad(p[:sd], p[sd:]), value=float("-inf"))
        y = MAXP[sd](xp, k, s, 0, d, ceil_mode=ceil)
    else:
        y = MAXP[sd](x, k, s, p, d, ceil_mode=ceil)
    attrs = {"kernel": k, "strides": s, "pads": p, "ceil_mode": ceil}
    if dil:
        attrs["dilations"] = dil
    pool_case(name, "Max", x, y, **attrs)


max_pool("max1d_ceil", [2, 3, 9], [3], [2], [1], ceil=True)
max_pool("max2d_dil_nan", [2, 2, 7, 8], [3, 2], [2, 2], [1, 1], dil=[2, 1], nan_at=13)
max_pool("max2d_ceil", [1, 3, 6, 7], [3, 3], [2, 2], [0, 0], ceil=True)
max_pool("max3d_ceil", [2, 2, 5, 6, 4], [2, 3, 2], [2, 2, 1], [1, 1, 0], ceil=True)
max_pool("max2d_onnx_pads", [2, 2, 5, 6], [3, 2], [1, 2], [0, 1, 1, 0])


def avg_pool(name, xs, k, s, p, ceil, cip):
    x = rnd(*xs)
    sd = len(xs) - 2
    if len(p) == 2 * sd:
        pad = fpad(p[:sd], p[sd:])
        num = AVGP[sd](F.pad(x, pad), k, s, 0, ceil, True)
        if cip:
            y = num
        else:  # average of the in-bounds elements only
            y = num / AVGP[sd](F.pad(torch.ones_like(x), pad), k, s, 0, ceil, True)
    else:
        y = AVGP[sd](x, k, s, p, ceil, cip)
    pool_case(name, "Avg", x, y, kernel=k, strides=s, pads=p, ceil_mode=ceil,
              count_include_pad=cip)


avg_pool("avg1d_ceil_incl", [2, 3, 8], [3], [3], [1], True, True)
avg_pool("avg1d_ceil_excl", [2, 3, 8], [3], [3], [1], True, False)
avg_pool("avg1d_ceil_incl_clipped", [1, 2, 7], [3], [2], [1], True, True)
avg_pool("avg2d_ceil_excl", [2, 2, 7, 6], [3, 2], [2, 2], [1, 1], True, False)
avg_pool("avg2d_ceil_incl", [2, 2, 7, 6], [3, 2], [2, 2], [1, 1], True, True)
avg_pool("avg3d_incl", [1, 2, 5, 5, 4], [3, 2, 2], [2, 2, 2], [1, 1, 0], False, True)
avg_pool("avg3d_ceil_excl", [1, 2, 5, 5, 4], [3, 2, 2], [2, 2, 2], [1, 1, 0], True, False)
avg_pool("avg2d_onnx_pads_incl", [2, 2, 5, 6], [2, 3], [2, 1], [1, 0, 0, 1], False, True)
avg_pool("avg2d_onnx_pads_excl", [2, 2, 5, 6], [2, 3], [2, 1], [1, 0, 0, 1], False, False)


def lp_pool(name, xs, p, k, s, ceil, positive=False):
    x = rnd(*xs)
    if positive:
        x = x.abs() + 0.1
    if len(xs) == 3:  # lp_pool1d multiplies by kernel_size, so it must be an int
        y = F.lp_pool1d(x, p, k[0], s[0], ceil)
    else:
        y = F.lp_pool2d(x, p, tuple(k), tuple(s), ceil)
    pool_case(name, "Lp", x, y, kernel=k, strides=s, ceil_mode=ceil, p=p)


lp_pool("lp1d_p2_ceil_clipped", [2, 3, 8], 2, [3], [2], True)
lp_pool("lp1d_p1_mixed_sign", [2, 2, 9], 1, [2], [2], False)
lp_pool("lp2d_p3_positive", [2, 2, 7, 6], 3, [2, 3], [2, 2], False, positive=True)
lp_pool("lp2d_p2_ceil", [1, 3, 7, 5], 2, [3, 2], [2, 2], True)


def adaptive(name, kind, xs, out, nan_at=None):
    x = rnd(*xs)
    if nan_at is not None:
        x.view(-1)[nan_at] = float("nan")
    sd = len(xs) - 2
    y = (AMAX if kind == "AdaptiveMax" else AAVG)[sd](x, out)
    pool_case(name, kind, x, y, output_size=out)


adaptive("adaptive_avg1d_7to3", "AdaptiveAvg", [2, 3, 7], [3])
adaptive("adaptive_avg2d_7x5to3x2", "AdaptiveAvg", [2, 2, 7, 5], [3, 2])
adaptive("adaptive_max2d_7x6to3x4_nan", "AdaptiveMax", [2, 2, 7, 6], [3, 4], nan_at=9)
adaptive("adaptive_avg3d", "AdaptiveAvg", [1, 2, 5, 4, 7], [2, 3, 3])
adaptive("adaptive_max3d", "AdaptiveMax", [2, 1, 5, 4, 7], [2, 3, 3])
adaptive("adaptive_max1d_upsample_5to8", "AdaptiveMax", [2, 2, 5], [8])

golden_io.write("conv_pool", cases)
