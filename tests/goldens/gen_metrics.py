"""Goldens for the Metric kind: accuracy, perplexity and F1 (binary, macro, micro) from
scikit-learn 1.2's metrics and PyTorch 1.13's cross-entropy, on float logits [N,C] and on
integer class ids [N].

Run with /usr/bin/python3 (Debian's python3-torch and python3-sklearn); writes
tests/goldens/metrics.json.
"""
import math

import torch
import torch.nn.functional as F
from sklearn.metrics import accuracy_score, f1_score

import golden_io

torch.manual_seed(20261130)
D = torch.float64

cases = []
for n, c in ((12, 3), (40, 5), (7, 2)):
    logits = torch.randn(n, c, dtype=D) * 2
    labels = torch.randint(0, c, (n,))
    pred = logits.argmax(1)
    # Make some predictions right, and leave one class never predicted where c > 2.
    labels[: n // 2] = pred[: n // 2]
    y, p = labels.tolist(), pred.tolist()
    cases.append({"name": "accuracy %dx%d" % (n, c), "pred": logits, "labels": labels,
                  "attrs": {"kind": "Accuracy"}, "expected": accuracy_score(y, p)})
    cases.append({"name": "accuracy ids %dx%d" % (n, c), "pred": pred, "labels": labels,
                  "attrs": {"kind": "Accuracy"}, "expected": accuracy_score(y, p)})
    cases.append({"name": "perplexity %dx%d" % (n, c), "pred": logits, "labels": labels,
                  "attrs": {"kind": "Perplexity"},
                  "expected": math.exp(F.cross_entropy(logits, labels).item())})
    for average in ("Macro", "Micro", "Binary"):
        kw = {"average": average.lower()}
        if average == "Binary":
            kw["pos_label"] = 1
            if c != 2:
                kw["labels"] = [1]
                kw["average"] = "macro"
        expected = f1_score(y, p, zero_division=0, **kw)
        cases.append({"name": "f1 %s %dx%d" % (average, n, c), "pred": logits, "labels": labels,
                      "attrs": {"kind": "F1", "average": average}, "expected": expected})
        cases.append({"name": "f1 %s ids %dx%d" % (average, n, c), "pred": pred,
                      "labels": labels,
                      "attrs": {"kind": "F1", "average": average, "num_classes": c},
                      "expected": expected})

# A class that is neither predicted nor present counts 0 in the macro average
# (zero_division=0): classes 0..3 declared, only 0 and 1 occur.
y, p = [0, 1, 1, 0, 1], [0, 1, 0, 0, 1]
cases.append({"name": "f1 macro absent classes", "pred": torch.tensor(p),
              "labels": torch.tensor(y), "attrs": {"kind": "F1", "average": "Macro",
                                                   "num_classes": 4},
              "expected": f1_score(y, p, labels=[0, 1, 2, 3], average="macro", zero_division=0)})
golden_io.write("metrics", cases)
