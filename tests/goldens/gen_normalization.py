"""Goldens for the Normalization category (LayerNorm, LayerNorm2d, GroupNorm, BatchNormInference,
RmsNorm), computed by torch.nn.functional in float64 (RmsNorm, absent from torch 1.13, as the
explicit x · rsqrt(mean(x²) + eps) · gamma). Run: /usr/bin/python3 tests/goldens/gen_normalization.py
"""
import torch
import torch.nn.functional as F

import golden_io

torch.manual_seed(20240611)
D = torch.float64


def rnd(*shape, lo=-2.0, hi=2.0):
    return torch.rand(*shape, dtype=D) * (hi - lo) + lo


cases = []


def layer_norm(x, axis, eps, gamma=None, beta=None):
    axis = axis % x.dim()
    tail = x.shape[axis:]
    g = gamma.expand(tail) if gamma is not None else None
    b = beta.expand(tail) if beta is not None else None
    y = F.layer_norm(x, tail, g, b, eps)
    cases.append({"op": "LayerNorm", "axis": axis if axis != x.dim() - 1 else -1, "eps": eps,
                  "x": x, "gamma": gamma, "beta": beta, "y": y})


def layer_norm2d(x, eps, gamma=None, beta=None):
    y = F.layer_norm(x.permute(0, 2, 3, 1), (x.shape[1],), gamma, beta, eps).permute(0, 3, 1, 2)
    cases.append({"op": "LayerNorm2d", "eps": eps, "x": x, "gamma": gamma, "beta": beta, "y": y})


def group_norm(x, groups, eps, gamma=None, beta=None):
    y = F.group_norm(x, groups, gamma, beta, eps)
    cases.append({"op": "GroupNorm", "groups": groups, "eps": eps, "x": x, "gamma": gamma,
                  "beta": beta, "y": y})


def batch_norm(x, mean, var, eps, gamma=None, beta=None):
    y = F.batch_norm(x, mean, var, gamma, beta, training=False, eps=eps)
    cases.append({"op": "BatchNormInference", "eps": eps, "x": x, "mean": mean, "var": var,
                  "gamma": gamma, "beta": beta, "y": y})


def rms_norm(x, axis, eps, gamma=None):
    axis = axis % x.dim()
    dims = list(range(axis, x.dim()))
    y = x * torch.rsqrt(x.pow(2).mean(dim=dims, keepdim=True) + eps)
    if gamma is not None:
        y = y * gamma
    cases.append({"op": "RmsNorm", "axis": axis if axis != x.dim() - 1 else -1, "eps": eps,
                  "x": x, "gamma": gamma, "y": y})


# LayerNorm: last axis, two trailing axes, no affine, a broadcast gamma, a large-offset input.
layer_norm(rnd(2, 3, 5), -1, 1e-5, rnd(5), rnd(5))
layer_norm(rnd(2, 3, 5), 1, 1e-3, rnd(3, 5), rnd(3, 5))
layer_norm(rnd(3, 7), -1, 1e-5)
layer_norm(rnd(2, 4, 3), 1, 1e-5, rnd(1, 3), rnd(4, 1))
layer_norm(rnd(2, 6) + 1000.0, -1, 1e-5, rnd(6), None)
layer_norm(rnd(2, 3, 4), 0, 1e-5, rnd(2, 3, 4), rnd(2, 3, 4))
# LayerNorm2d: NCHW with odd sizes.
layer_norm2d(rnd(2, 3, 4, 5), 1e-6, rnd(3), rnd(3))
layer_norm2d(rnd(1, 5, 3, 2), 1e-2)
# GroupNorm: rank 4, rank 3, rank 2, groups = 1 and groups = C.
group_norm(rnd(2, 6, 3, 5), 3, 1e-5, rnd(6), rnd(6))
group_norm(rnd(3, 4, 7), 2, 1e-5)
group_norm(rnd(2, 4), 4, 1e-3, rnd(4), rnd(4))
group_norm(rnd(2, 3, 5), 1, 1e-5, rnd(3), None)
# BatchNormInference: rank 3, 2 and 4; with and without affine.
batch_norm(rnd(2, 3, 4), rnd(3), rnd(3, lo=0.2, hi=2.0), 1e-5, rnd(3), rnd(3))
batch_norm(rnd(5, 3), rnd(3), rnd(3, lo=0.2, hi=2.0), 1e-3)
batch_norm(rnd(2, 3, 2, 3), rnd(3), rnd(3, lo=0.2, hi=2.0), 1e-5, rnd(3), None)
# RmsNorm: last axis, two trailing axes, no gamma.
rms_norm(rnd(2, 3, 5), -1, 1e-6, rnd(5))
rms_norm(rnd(2, 3, 5), 1, 1e-5, rnd(3, 5))
rms_norm(rnd(4, 7), -1, 1e-6)

golden_io.write("normalization", cases)
