"""Goldens for the loss kinds: Loss (every LossKind x Reduction), SoftmaxCrossEntropy (probability
targets) and SoftmaxCrossEntropyWithLogits (class ids, ignore_index, label_smoothing).

Run with /usr/bin/python3 (Debian's python3-torch 1.13); writes tests/goldens/losses.json.
"""
import torch
import torch.nn.functional as F

import golden_io

torch.manual_seed(20240611)
D = torch.float64
REDUCTIONS = ["None", "Mean", "Sum"]


def red(name):
    return {"None": "none", "Mean": "mean", "Sum": "sum"}[name]


def loss_inputs(kind, shape):
    if kind in ("Mse", "Mae", "Huber"):
        return torch.randn(shape, dtype=D) * 2, torch.randn(shape, dtype=D) * 2
    if kind == "BinaryCrossEntropy":
        p = torch.sigmoid(torch.randn(shape, dtype=D) * 2)
        t = torch.rand(shape, dtype=D)
        flat_p, flat_t = p.view(-1), t.view(-1)
        # Saturated probabilities exercise torch's log clamp at -100; hard 0/1 targets too.
        flat_p[0], flat_t[0] = 0.0, 1.0
        flat_p[1], flat_t[1] = 1.0, 0.0
        flat_p[2], flat_t[2] = 0.0, 0.25
        flat_p[3], flat_t[3] = 1.0, 1.0
        return p, t
    if kind == "BinaryCrossEntropyWithLogits":
        x = torch.randn(shape, dtype=D) * 3
        x.view(-1)[0] = 40.0  # large logits must stay finite (stable form)
        x.view(-1)[1] = -40.0
        return x, torch.rand(shape, dtype=D)
    if kind == "KlDiv":
        x = torch.log_softmax(torch.randn(shape, dtype=D), dim=-1)
        t = torch.softmax(torch.randn(shape, dtype=D) * 2, dim=-1)
        t.view(-1)[0] = 0.0  # target 0 contributes 0
        t.view(-1)[3] = 0.0
        return x, t
    raise ValueError(kind)


def loss_fn(kind, x, t, reduction, delta, log_target):
    r = red(reduction)
    if kind == "Mse":
        return F.mse_loss(x, t, reduction=r)
    if kind == "Mae":
        return F.l1_loss(x, t, reduction=r)
    if kind == "Huber":
        return F.huber_loss(x, t, reduction=r, delta=delta)
    if kind == "BinaryCrossEntropy":
        return F.binary_cross_entropy(x, t, reduction=r)
    if kind == "BinaryCrossEntropyWithLogits":
        return F.binary_cross_entropy_with_logits(x, t, reduction=r)
    if kind == "KlDiv":
        return F.kl_div(x, t, reduction=r, log_target=log_target)
    raise ValueError(kind)


cases = []
for kind in ["Mse", "Mae", "Huber", "BinaryCrossEntropy", "BinaryCrossEntropyWithLogits", "KlDiv"]:
    for shape in ([3, 5], [2, 3, 7]):
        x, t = loss_inputs(kind, shape)
        variants = [(1.0, False)]
        if kind == "Huber":
            variants = [(1.0, False), (0.5, False), (2.5, False)]
        if kind == "KlDiv":
            variants = [(1.0, False), (1.0, True)]
        for delta, log_target in variants:
            tt = torch.log(t.clamp_min(1e-3)) if log_target else t
            for reduction in REDUCTIONS:
                cases.append({"op": "Loss", "kind": kind, "reduction": reduction, "delta": delta,
                              "log_target": log_target, "input": x, "target": tt,
                              "expected": loss_fn(kind, x, tt, reduction, delta, log_target)})

# SoftmaxCrossEntropy: probability targets along `axis` (torch's class dim is 1: move it there).
for shape, axis in (([4, 5], 1), ([3, 7], -1), ([2, 3, 4, 5], 1), ([2, 5, 3], -1), ([2, 3, 5], 0),
                    ([5], 0)):
    logits = torch.randn(shape, dtype=D) * 2
    target = torch.softmax(torch.randn(shape, dtype=D) * 2, dim=axis)
    if len(shape) == 1:
        moved_l, moved_t = logits, target
    else:
        moved_l, moved_t = logits.movedim(axis, 1), target.movedim(axis, 1)
    for reduction in REDUCTIONS:
        cases.append({"op": "SoftmaxCrossEntropy", "reduction": reduction, "axis": axis,
                      "logits": logits, "target": target,
                      "expected": F.cross_entropy(moved_l, moved_t, reduction=red(reduction))})

# SoftmaxCrossEntropyWithLogits: class ids.
def ce_case(logits_shape, ignore_index, label_smoothing, ignored=()):
    logits = torch.randn(logits_shape, dtype=D) * 2
    c = logits_shape[1] if len(logits_shape) > 1 else logits_shape[0]
    label_shape = [logits_shape[0]] + logits_shape[2:] if len(logits_shape) > 1 else []
    labels = torch.randint(0, c, label_shape, dtype=torch.int64)
    for pos in ignored:
        labels.view(-1)[pos] = ignore_index
    for reduction in REDUCTIONS:
        cases.append({"op": "SoftmaxCrossEntropyWithLogits", "reduction": reduction,
                      "ignore_index": ignore_index, "label_smoothing": label_smoothing,
                      "logits": logits, "labels": labels,
                      "expected": F.cross_entropy(logits, labels, reduction=red(reduction),
                                                  ignore_index=ignore_index,
                                                  label_smoothing=label_smoothing)})


ce_case([4, 5], -100, 0.0)
ce_case([6, 7], -100, 0.0, ignored=(1, 4))
ce_case([5, 3], 2, 0.0)           # a valid class id used as ignore_index
ce_case([4, 5], -100, 0.1)
ce_case([6, 7], -100, 0.25, ignored=(0, 5))
ce_case([2, 3, 4, 5], -100, 0.0)  # spatial [N,C,d1,d2]
ce_case([2, 3, 4, 5], -1, 0.2, ignored=(3, 7, 20))
ce_case([3, 5, 7], -100, 0.0)
ce_case([7], -100, 0.0)           # unbatched [C] with labels []
ce_case([7], -100, 0.3)
ce_case([3, 4], -100, 0.1, ignored=(0, 1, 2))  # every target ignored: Mean is 0/0 = NaN

golden_io.write("losses", cases)
