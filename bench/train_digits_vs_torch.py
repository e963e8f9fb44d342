"""Training throughput of the main job against PyTorch on the same machine, in one script.

Runs `tessel train digits` (MLP 64-128-10, ReLU, Adam lr 1e-3, batch 32, 20 epochs, cpu) and
the same model, optimizer, batch size, epoch count and split size in PyTorch 1.13 (CPU, the same
thread count), alternating them --reps times, and reports training seconds (the training loop
only: no data loading, no evaluation), samples/s and held-out accuracy of each, and the median
ratio. Run with /usr/bin/python3 (Debian's python3-torch and python3-sklearn):

    /usr/bin/python3 bench/train_digits_vs_torch.py [--tessel build/tessel] [--reps 5]
"""
import argparse
import os
import re
import statistics
import subprocess
import time

import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split


def run_tessel(binary, threads, epochs):
    env = dict(os.environ, TESSEL_NUM_THREADS=str(threads))
    out = subprocess.run([binary, "train", "digits", "--epochs", str(epochs), "--checkpoint",
                          "/tmp/bench-digits.safetensors"], env=env, check=True,
                         capture_output=True, text=True).stdout
    seconds = float(re.search(r"trained \d+ samples in ([0-9.]+) s", out).group(1))
    return seconds, float(re.search(r"test_accuracy=([0-9.]+)", out).group(1))


def run_torch(x_train, y_train, x_test, y_test, epochs, seed):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    n = x_train.shape[0]
    start = time.perf_counter()
    for epoch in range(epochs):
        g = torch.Generator().manual_seed(seed * 1000003 + epoch)
        order = torch.randperm(n, generator=g)
        for lo in range(0, n, 32):
            idx = order[lo:lo + 32]
            opt.zero_grad()
            loss = loss_fn(model(x_train[idx]), y_train[idx])
            loss.backward()
            opt.step()
    seconds = time.perf_counter() - start
    with torch.no_grad():
        acc = (model(x_test).argmax(1) == y_test).float().mean().item()
    return seconds, acc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", default="build/tessel")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=20)
    args = ap.parse_args()
    threads = len(os.sched_getaffinity(0))
    torch.set_num_threads(threads)
    d = load_digits()
    x = torch.tensor(d.data / 16.0, dtype=torch.float32)
    y = torch.tensor(d.target, dtype=torch.int64)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.2, stratify=y,
                                                        random_state=0)
    n_train = x_train.shape[0]
    rows = []
    for rep in range(args.reps):
        ts, ta = run_tessel(args.tessel, threads, args.epochs)
        ps, pa = run_torch(x_train, y_train, x_test, y_test, args.epochs, rep)
        rows.append((ts, ta, ps, pa))
        print("rep %d: tessel %.3f s (acc %.4f), torch %.3f s (acc %.4f), torch/tessel %.2fx"
              % (rep, ts, ta, ps, pa, ps / ts))
    samples = n_train * args.epochs
    t_med = statistics.median(r[0] for r in rows)
    p_med = statistics.median(r[2] for r in rows)
    print("threads=%d epochs=%d batch=32 train_rows=%d" % (threads, args.epochs, n_train))
    print("tessel: median %.3f s, %.0f samples/s" % (t_med, samples / t_med))
    print("torch %s: median %.3f s, %.0f samples/s" % (torch.__version__, p_med, samples / p_med))
    print("median ratio torch_seconds / tessel_seconds = %.2f"
          % statistics.median(r[2] / r[0] for r in rows))


if __name__ == "__main__":
    main()
