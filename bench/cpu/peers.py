#!/usr/bin/python3
# Peer side of the cpu benchmark: times numpy and PyTorch on every workload of
# bench/cpu/workloads.txt (the same list bench/cpu_bench.cpp runs for Tessel), plus one
# extra workload, "encoder_layer" (torch.nn.TransformerEncoderLayer, d_model 512, 8 heads,
# ffn 2048, input [8,128,512]). Prints one JSON object per (workload, implementation) line:
#   {"workload": ID, "impl": IMPL, "ms": MEDIAN_MS, "threads": T[, "note": ...]}
# and nothing else on stdout (progress goes to stderr).
#
# Needs Debian's python (numpy 1.24, torch 1.13 CPU); the first python3 on PATH has no numpy:
#   OPENBLAS_NUM_THREADS=T OMP_NUM_THREADS=T \
#     /usr/bin/python3 bench/cpu/peers.py --threads T --runs R [--filter SUBSTR] bench/cpu/workloads.txt
# torch's thread count comes from --threads; numpy's BLAS (OpenBLAS) reads
# OPENBLAS_NUM_THREADS / OMP_NUM_THREADS when it loads, so the caller should set both to T
# (this script sets them to T before importing numpy where they are unset).
#
# Timing: inputs uniform in [-1, 1) from torch.manual_seed(0); one warm-up call, then at least
# --runs timed calls, continuing until 0.2 s have been spent (at most max(200, --runs) calls),
# under torch.inference_mode(); the reported time is the median.
import argparse
import json
import math
import os
import statistics
import sys
import time

FIELDS = {  # kind -> names of the fields after the ID
    "gemm": ["dtype", "M", "K", "N"],
    "conv": ["N", "C", "H", "W", "O", "KH", "KW", "STRIDE", "PAD", "GROUPS"],
    "softmax": ["ROWS", "COLS"],
    "layernorm": ["ROWS", "COLS"],
    "eltwise": ["N"],
    "attention": ["B", "H", "S", "D"],
}
MIN_SECONDS = 0.2
MAX_CALLS = 200


def parse_workloads(path):
    """[(kind, id, {field: value})] from the workload file; exits on a malformed line."""
    out = []
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            words = raw.split("#", 1)[0].split()
            if not words:
                continue
            where = f"{path}:{lineno}: "
            kind = words[0]
            if kind not in FIELDS:
                sys.exit(where + f"unknown workload kind {kind!r} (expected one of {', '.join(FIELDS)})")
            if len(words) < 2:
                sys.exit(where + f"{kind} line has no ID")
            names, values = FIELDS[kind], words[2:]
            if len(values) != len(names):
                sys.exit(where + f"{kind} {words[1]} needs {len(names)} fields "
                         f"({' '.join(names)}), got {len(values)}")
            fields = {}
            for name, value in zip(names, values):
                if name == "dtype":
                    if value not in ("f32", "bf16"):
                        sys.exit(where + f"gemm dtype must be f32 or bf16, got {value!r}")
                    fields[name] = value
                    continue
                try:
                    fields[name] = int(value)
                except ValueError:
                    fields[name] = -1
                if fields[name] <= 0 and not (name == "PAD" and fields[name] == 0):
                    sys.exit(where + f"{name} must be a positive integer, got {value!r}")
            if kind == "conv" and (fields["C"] % fields["GROUPS"] or fields["O"] % fields["GROUPS"]):
                sys.exit(where + "conv C and O must be multiples of GROUPS")
            out.append((kind, words[1], fields))
    return out


def median_ms(fn, runs):
    """Median wall time of fn() in ms: 1 warm-up, then >= runs calls and >= MIN_SECONDS."""
    fn()
    times = []
    total = 0.0
    while len(times) < max(runs, MAX_CALLS) and (len(times) < runs or total < MIN_SECONDS):
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        times.append(dt)
        total += dt
    return statistics.median(times) * 1e3


def uniform(*shape, dtype=None):
    import torch
    x = torch.rand(*shape) * 2 - 1
    return x if dtype is None else x.to(dtype)


def peers(kind, f):
    """[(impl, fn, note)] for one workload; inputs are made here, once."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    if kind == "gemm":
        m, k, n = f["M"], f["K"], f["N"]
        if f["dtype"] == "bf16":
            a, b = uniform(m, k, dtype=torch.bfloat16), uniform(k, n, dtype=torch.bfloat16)
            c = torch.empty(m, n, dtype=torch.bfloat16)
            return [("torch", lambda: torch.matmul(a, b, out=c), "bf16 output")]
        a, b, c = uniform(m, k), uniform(k, n), torch.empty(m, n)
        an, bn, cn = a.numpy(), b.numpy(), np.empty((m, n), dtype=np.float32)
        return [("numpy", lambda: np.matmul(an, bn, out=cn), None),
                ("torch", lambda: torch.matmul(a, b, out=c), None)]
    if kind == "conv":
        x = uniform(f["N"], f["C"], f["H"], f["W"])
        w = uniform(f["O"], f["C"] // f["GROUPS"], f["KH"], f["KW"])
        bias = uniform(f["O"])
        conv_args = dict(stride=f["STRIDE"], padding=f["PAD"], groups=f["GROUPS"])
        xl = x.contiguous(memory_format=torch.channels_last)
        wl = w.contiguous(memory_format=torch.channels_last)
        return [("torch-nchw", lambda: F.conv2d(x, w, bias, **conv_args), None),
                ("torch-nhwc", lambda: F.conv2d(xl, wl, bias, **conv_args), None)]
    if kind == "softmax":
        x = uniform(f["ROWS"], f["COLS"])
        return [("torch", lambda: torch.softmax(x, dim=-1), None)]
    if kind == "layernorm":
        cols = f["COLS"]
        x, gamma, beta = uniform(f["ROWS"], cols), uniform(cols), uniform(cols)
        return [("torch", lambda: F.layer_norm(x, (cols,), gamma, beta, 1e-5), None)]
    if kind == "eltwise":
        x, a, c = uniform(f["N"]), uniform(f["N"]), uniform(f["N"])
        return [("torch", lambda: torch.tanh(F.gelu(x * a + 0.5) * c), "separate torch ops")]
    if kind == "attention":
        q, k, v = (uniform(f["B"], f["H"], f["S"], f["D"]) for _ in range(3))
        scale = 1 / math.sqrt(f["D"])
        if hasattr(F, "scaled_dot_product_attention"):
            return [("torch", lambda: F.scaled_dot_product_attention(q, k, v),
                     "F.scaled_dot_product_attention")]
        return [("torch", lambda: torch.softmax(q @ k.transpose(-2, -1) * scale, dim=-1) @ v,
                 "explicit matmul/softmax/matmul (no scaled_dot_product_attention in torch "
                 + torch.__version__ + ")")]
    raise AssertionError(kind)


def encoder_layer_peer():
    import torch
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048,
                                             dropout=0.0, batch_first=True).eval()
    x = uniform(8, 128, 512)
    return [("torch", lambda: layer(x), "eval, inference_mode (torch's fused fast path)")]


def main():
    ap = argparse.ArgumentParser(description="Times numpy / PyTorch on the cpu benchmark's workloads.")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--filter", default="", help="only workloads whose ID contains this")
    ap.add_argument("workloads")
    args = ap.parse_args()
    if args.threads < 1 or args.runs < 1:
        sys.exit("peers.py: --threads and --runs must be positive")
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ.setdefault(var, str(args.threads))
    workloads = parse_workloads(args.workloads)

    import torch
    torch.set_num_threads(args.threads)
    jobs = [(wid, lambda kind=kind, f=f: peers(kind, f)) for kind, wid, f in workloads]
    jobs.append(("encoder_layer", encoder_layer_peer))
    for wid, make in jobs:
        if args.filter not in wid:
            continue
        for impl, fn, note in make():
            print(f"peers.py: {wid} {impl} ...", file=sys.stderr, flush=True)
            with torch.inference_mode():
                ms = median_ms(fn, args.runs)
            rec = {"workload": wid, "impl": impl, "ms": round(ms, 4), "threads": args.threads}
            if note:
                rec["note"] = note
            print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
