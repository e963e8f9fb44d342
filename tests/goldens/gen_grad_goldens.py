"""Gradient goldens for the norms, attention and the losses, by PyTorch 1.13 autograd in float64:
layer_norm, rms_norm (written out: absent from torch 1.13), group_norm, batch_norm (eval) w.r.t.
input, weight and bias; scaled dot-product attention written out as softmax(q kᵀ·scale + mask)·v
(causal aligned to the last keys, as Tessel's reference; a bool keep mask, an additive bias, GQA)
w.r.t. q, k, v; mse, l1, huber, smooth_l1, binary_cross_entropy (+with_logits), kl_div and
cross_entropy (ignore_index, label_smoothing, soft labels).

A case is {"op", "attrs", "inputs" (null = absent), "wrt" (input indices), "cotangent" (of the op's
output), "grads" (one per wrt)}. Run: /usr/bin/python3 tests/goldens/gen_grad_goldens.py
"""
import json
import math
import os

import torch
import torch.nn.functional as F

import golden_io

torch.manual_seed(20241130)
D = torch.float64


def rnd(*shape, lo=-2.0, hi=2.0):
    return torch.rand(shape, dtype=D) * (hi - lo) + lo


cases = []


def case(op, attrs, inputs, fn, wrt):
    leaves = [None if t is None else t.clone().requires_grad_(i in wrt)
              for i, t in enumerate(inputs)]
    y = fn(*leaves)
    cot = rnd(*y.shape, lo=-1.0, hi=1.0)
    grads = torch.autograd.grad(y, [leaves[i] for i in wrt], cot)
    cases.append({"op": op, "attrs": attrs, "inputs": inputs, "wrt": wrt, "cotangent": cot,
                  "grads": list(grads)})


# ---- Norms ---------------------------------------------------------------------------------------

def layer_norm(x, axis, eps, gamma, beta):
    tail = x.shape[axis % x.dim():]
    case("LayerNorm", {"axis": axis, "eps": eps}, [x, gamma, beta],
         lambda x, g, b: F.layer_norm(x, tail, g, b, eps), [0, 1, 2])


def rms_norm(x, axis, eps, gamma):
    dims = list(range(axis % x.dim(), x.dim()))
    case("RmsNorm", {"axis": axis, "eps": eps}, [x, gamma],
         lambda x, g: x * torch.rsqrt(x.pow(2).mean(dim=dims, keepdim=True) + eps) * g, [0, 1])


def group_norm(x, groups, eps, gamma, beta):
    wrt = [0] + ([1, 2] if gamma is not None else [])
    case("GroupNorm", {"groups": groups, "eps": eps}, [x, gamma, beta],
         lambda x, g, b: F.group_norm(x, groups, g, b, eps), wrt)


def batch_norm(x, mean, var, eps, gamma, beta):
    case("BatchNormInference", {"eps": eps}, [x, mean, var, gamma, beta],
         lambda x, m, v, g, b: F.batch_norm(x, m, v, g, b, training=False, eps=eps), [0, 3, 4])


layer_norm(rnd(2, 3, 5), -1, 1e-5, rnd(5, lo=0.5), rnd(5))
layer_norm(rnd(2, 3, 4), 1, 1e-3, rnd(3, 4, lo=0.5), rnd(3, 4))
rms_norm(rnd(2, 3, 5), -1, 1e-6, rnd(5, lo=0.5))
rms_norm(rnd(2, 3, 4), 1, 1e-5, rnd(3, 4, lo=0.5))
group_norm(rnd(2, 6, 3, 2), 3, 1e-5, rnd(6, lo=0.5), rnd(6))
group_norm(rnd(3, 4, 5), 2, 1e-5, None, None)
batch_norm(rnd(2, 3, 4), rnd(3), rnd(3, lo=0.2, hi=2.0), 1e-5, rnd(3, lo=0.5), rnd(3))
batch_norm(rnd(2, 3, 2, 3), rnd(3), rnd(3, lo=0.2, hi=2.0), 1e-3, rnd(3, lo=0.5), rnd(3))


# ---- Attention -----------------------------------------------------------------------------------

def attention(q, k, v, mask_kind, mask=None, scale=0.0):
    def fn(q, k, v, m):
        group = q.shape[1] // k.shape[1]
        kk, vv = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        s = q @ kk.transpose(-1, -2) * (scale if scale != 0 else 1 / math.sqrt(q.shape[-1]))
        sq, sk = q.shape[2], k.shape[2]
        if mask_kind == "Causal":  # key j visible to query i when j <= i + (Sk - Sq)
            keep = torch.ones(sq, sk, dtype=torch.bool).tril(sk - sq)
            s = s.masked_fill(~keep, -math.inf)
        elif mask_kind == "Custom":
            s = s.masked_fill(~m, -math.inf)
        elif mask_kind == "Bias":
            s = s + m
        return torch.softmax(s, dim=-1) @ vv
    case("Attention", {"mask_kind": mask_kind, "scale": scale, "window": 0}, [q, k, v, mask],
         fn, [0, 1, 2])


attention(rnd(2, 2, 4, 3), rnd(2, 2, 4, 3), rnd(2, 2, 4, 5), "None")
attention(rnd(2, 2, 4, 3), rnd(2, 2, 4, 3), rnd(2, 2, 4, 2), "Causal")
attention(rnd(1, 4, 3, 4), rnd(1, 2, 5, 4), rnd(1, 2, 5, 3), "Causal", scale=0.4)  # GQA, Sq < Sk
keep = torch.rand(2, 1, 3, 5) < 0.7
keep[..., 0] = True  # every query sees a key
attention(rnd(2, 2, 3, 4), rnd(2, 2, 5, 4), rnd(2, 2, 5, 3), "Custom", keep)
attention(rnd(2, 2, 3, 4), rnd(2, 1, 5, 4), rnd(2, 1, 5, 3), "Bias", rnd(2, 1, 3, 5), scale=0.7)


# ---- Losses --------------------------------------------------------------------------------------

REDUCTIONS = {"None": "none", "Mean": "mean", "Sum": "sum"}


def loss(kind, fn, x, t, wrt, delta=1.0, log_target=False):
    for name, r in REDUCTIONS.items():
        case("Loss", {"kind": kind, "reduction": name, "delta": delta, "log_target": log_target},
             [x, t], lambda x, t: fn(x, t, r), wrt)


s = (3, 4)
loss("Mse", lambda x, t, r: F.mse_loss(x, t, reduction=r), rnd(*s), rnd(*s), [0, 1])
loss("Mae", lambda x, t, r: F.l1_loss(x, t, reduction=r), rnd(*s), rnd(*s), [0, 1])
loss("Huber", lambda x, t, r: F.huber_loss(x, t, reduction=r, delta=0.7), rnd(*s), rnd(*s),
     [0, 1], delta=0.7)
# smooth_l1 with beta 1 is huber with delta 1.
loss("Huber", lambda x, t, r: F.smooth_l1_loss(x, t, reduction=r, beta=1.0), rnd(*s), rnd(*s),
     [0, 1])
loss("BinaryCrossEntropy", lambda x, t, r: F.binary_cross_entropy(x, t, reduction=r),
     rnd(*s, lo=0.05, hi=0.95), rnd(*s, lo=0.0, hi=1.0), [0])
loss("BinaryCrossEntropyWithLogits",
     lambda x, t, r: F.binary_cross_entropy_with_logits(x, t, reduction=r), rnd(*s, lo=-4, hi=4),
     rnd(*s, lo=0.0, hi=1.0), [0, 1])
loss("KlDiv", lambda x, t, r: F.kl_div(x, t, reduction=r), torch.log_softmax(rnd(*s), -1),
     torch.softmax(rnd(*s), -1), [0, 1])
loss("KlDiv", lambda x, t, r: F.kl_div(x, t, reduction=r, log_target=True),
     torch.log_softmax(rnd(*s), -1), torch.log_softmax(rnd(*s), -1), [0, 1], log_target=True)

# cross_entropy from class ids: ignore_index (default and custom), label smoothing, [N,C,d].
for shape, ignore_index, smoothing in (([5, 4], -100, 0.0), ([5, 4], -100, 0.2),
                                       ([2, 4, 3], 1, 0.1)):
    logits = rnd(*shape)
    labels = torch.randint(0, shape[1], [shape[0]] + shape[2:], dtype=torch.int64)
    labels.view(-1)[0] = ignore_index
    for name, r in REDUCTIONS.items():
        case("SoftmaxCrossEntropyWithLogits",
             {"reduction": name, "ignore_index": ignore_index, "label_smoothing": smoothing},
             [logits, labels],
             lambda x, y: F.cross_entropy(x, y, reduction=r, ignore_index=ignore_index,
                                          label_smoothing=smoothing), [0])
# cross_entropy with soft labels (probabilities along the class axis 1).
logits, target = rnd(4, 5), torch.softmax(rnd(4, 5), 1)
for name, r in REDUCTIONS.items():
    case("SoftmaxCrossEntropy", {"reduction": name, "axis": 1}, [logits, target],
         lambda x, t: F.cross_entropy(x, t, reduction=r), [0, 1])

# golden_io.write names the generator after the file (gen_<family>.py); this one is not.
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grad_norm_attention_losses.json")
with open(path, "w") as f:
    json.dump({"generator": "tests/goldens/gen_grad_goldens.py", "torch": torch.__version__,
               "cases": golden_io._encode(cases)}, f, indent=None, separators=(",", ":"))
    f.write("\n")
print("wrote", path)
