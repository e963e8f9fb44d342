"""Training throughput of the Python API against PyTorch, in one process.

The same model (MLP 64-128-10, ReLU, f32), optimizer (Adam, lr 1e-3), batch size (32), epoch
count and training split of sklearn's digits, written once with `tessel` (nn, optim,
value_and_grad on the cpu device) and once with PyTorch 1.13 (CPU, the same thread count),
alternating --reps times. Timed: the training loop only (batches are sliced from numpy arrays
on the host by both). Reports seconds, samples/s and held-out accuracy of each and the median
ratio. Run with Debian's interpreter after building (PYTHONPATH names the built package):

    PYTHONPATH=build/python /usr/bin/python3 bench/python_train_vs_torch.py [--reps 5]
"""
import argparse
import os
import statistics
import time

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import tessel
from tessel import nn, optim


def batches(n, epoch, seed):
    order = np.random.default_rng(seed * 1000003 + epoch).permutation(n)
    return [order[lo:lo + 32] for lo in range(0, n, 32)]


def run_tessel(x_train, y_train, x_test, y_test, epochs, seed):
    model = nn.Sequential(nn.Linear(64, 128, seed=seed), nn.ReLU(),
                          nn.Linear(128, 10, seed=seed + 1))
    step = tessel.value_and_grad(lambda p, x, y: nn.cross_entropy(model.apply(p, x), y))
    opt = optim.Adam(model.parameters(), lr=1e-3)
    start = time.perf_counter()
    for epoch in range(epochs):
        for idx in batches(len(x_train), epoch, seed):
            _, grads = step(opt.params, x_train[idx], y_train[idx])
            opt.step(grads)
    seconds = time.perf_counter() - start
    model.update(opt.params)
    acc = float((model(tessel.Tensor(x_test)).numpy().argmax(1) == y_test).mean())
    return seconds, acc


def run_torch(x_train, y_train, x_test, y_test, epochs, seed):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    start = time.perf_counter()
    for epoch in range(epochs):
        for idx in batches(len(x_train), epoch, seed):
            opt.zero_grad()
            loss = loss_fn(model(torch.from_numpy(x_train[idx])), torch.from_numpy(y_train[idx]))
            loss.backward()
            opt.step()
    seconds = time.perf_counter() - start
    with torch.no_grad():
        acc = float((model(torch.from_numpy(x_test)).argmax(1).numpy() == y_test).mean())
    return seconds, acc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=20)
    args = ap.parse_args()
    threads = len(os.sched_getaffinity(0))
    torch.set_num_threads(threads)
    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.2, stratify=y,
                                                        random_state=0)
    split = (x_train, y_train, x_test, y_test)
    rows = []
    for rep in range(args.reps):
        ts, ta = run_tessel(*split, args.epochs, rep)
        ps, pa = run_torch(*split, args.epochs, rep)
        rows.append((ts, ps))
        print("rep %d: tessel %.3f s (acc %.4f), torch %.3f s (acc %.4f), torch/tessel %.2fx"
              % (rep, ts, ta, ps, pa, ps / ts), flush=True)
    samples = len(split[0]) * args.epochs
    t_med = statistics.median(r[0] for r in rows)
    p_med = statistics.median(r[1] for r in rows)
    print("threads=%d epochs=%d batch=32 train_rows=%d" % (threads, args.epochs, len(split[0])))
    print("tessel (python): median %.3f s, %.0f samples/s" % (t_med, samples / t_med))
    print("torch %s: median %.3f s, %.0f samples/s" % (torch.__version__, p_med, samples / p_med))
    print("median ratio torch_seconds / tessel_seconds = %.2f"
          % statistics.median(r[1] / r[0] for r in rows))


if __name__ == "__main__":
    main()
