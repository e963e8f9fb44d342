#!/usr/bin/python3
# Turns the cpu benchmark's records (JSON lines from bench/cpu_bench.cpp, bench/cpu/peers.py and
# bench/cpu/run.sh) into bench/results/cpu.md: the machine's limits, every workload with each
# implementation's median time, rates against the limits, ratios against the best peer, and the
# issue's targets, each met or missed by how much. Run by bench/cpu/run.sh.
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import parse_workloads  # noqa: E402  (one parser of the workload list)

GEMM_PEAK_TARGET = 0.85   # of the measured FMA peak (all threads)
BANDWIDTH_TARGET = 0.80   # of the measured copy bandwidth


# Yardsticks timed alternately with Tessel in the same spells of the shared machine: impl ->
# (its column, the paragraph that explains it). Memory-bound rows: a streaming copy of the same
# bytes; f32 GEMM rows: the FMA peak loop for the same flops.
SAME_SPELL = {
    "copy": ("copy ms",
             "The target compares medians taken in the same spells of the shared machine: Tessel "
             "against a copy of the same bytes (half read, half written) timed alternately with "
             "it on the same threads (`copy ms`). The copy is a streaming one (the widest loads and "
             "non-temporal stores; 512-bit ones read 4 KiB ahead): on the AVX-512 host it moved ~1.6× what "
             "glibc's memcpy does, so it, not memcpy, is the limit. The 512 MiB copy above is the best of "
             "14 passes, not a median; each rate is also given against it."),
    "fma-peak": ("peak ms",
                 "The peak target compares medians taken in the same spells of the shared machine, "
                 "as the memory-bound targets do: Tessel's GEMM against the FMA loop above doing "
                 "the same flops on the same threads, timed alternately with it (`peak ms`). Each "
                 "rate is also given against the run's best peak in the table above, which judges "
                 "the target where the same spells' ratio exceeds 100% (the peak loop then met a "
                 "slower spell than the GEMM)."),
}


def work_of(kind, f):
    """(flops or bytes moved, unit) of one run."""
    if kind == "gemm":
        return 2.0 * f["M"] * f["K"] * f["N"], "flop"
    if kind == "conv":
        ho = (f["H"] + 2 * f["PAD"] - f["KH"]) // f["STRIDE"] + 1
        wo = (f["W"] + 2 * f["PAD"] - f["KW"]) // f["STRIDE"] + 1
        return 2.0 * f["N"] * f["O"] * ho * wo * (f["C"] // f["GROUPS"]) * f["KH"] * f["KW"], "flop"
    if kind in ("softmax", "layernorm"):
        return 2.0 * 4 * f["ROWS"] * f["COLS"], "byte"  # read x, write y
    if kind == "eltwise":
        return 4.0 * 4 * f["N"], "byte"  # read x, a, c, write y
    if kind == "attention":
        return 4.0 * f["B"] * f["H"] * f["S"] * f["S"] * f["D"], "flop"
    raise AssertionError(kind)


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"


def local_changes():
    """Uncommitted changes to tracked files other than the results this run is writing."""
    return sh("git status --porcelain -uno -- . ':(exclude)bench/results'")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", required=True)
    ap.add_argument("--workloads", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--openblas-env", default="")
    ap.add_argument("--openblas-tuned", default="SkylakeX",
                    help="the OPENBLAS_CORETYPE Tessel alternated with (run.sh picks it by CPU)")
    ap.add_argument("--analysis", help="markdown appended as the report's reading of the numbers")
    args = ap.parse_args()

    times, notes, machine = {}, {}, {}
    with open(args.records) as f:
        for line in f:
            r = json.loads(line)
            if "machine" in r:
                machine[r["machine"]] = r
            else:
                # Each round of cpu_bench's workload list (the Python peers and the models have one).
                times.setdefault(r["workload"], {}).setdefault(r["impl"], {})[r.get("round", 0)] = r["ms"]
                if r.get("note"):
                    notes[(r["workload"], r["impl"])] = r["note"]
    peak = machine["fma_peak"]
    bw = machine["copy_bandwidth"]
    threads = peak["threads"]
    # The n-thread peak yardstick: the larger of the n-thread measurement and n times the
    # one-thread one. On the shared host the n-thread run can fall in a spell where another
    # tenant holds a core (a run at 347eec6 measured 190 GFLOP/s on 2 threads against 112 on
    # one, and its GEMMs then ran at up to 204); n cores free are the hardware's limit.
    peak_n, bw_n = max(peak["gflops_n"], threads * peak["gflops_1"]), bw["gbs_n"]
    out = []
    p = out.append
    p("# cpu benchmark: Tessel against OpenBLAS, numpy, PyTorch and ONNX Runtime\n")
    p(f"- Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; commit "
      f"`{sh('git rev-parse --short HEAD')}`{' (with local changes)' if local_changes() else ''}.")
    model = sh("lscpu | sed -n 's/^Model name: *//p'")
    mem = sh("free -g | awk '/Mem:/ {print $2}'")
    isa = machine.get("tessel_isa", {}).get("isa", "?")
    # The model name alone ("AMD EPYC") does not tell the hosts apart: family and model do (25 / 1:
    # Zen 3, AVX2; 26: Zen 5, AVX-512).
    fam = sh("grep -m1 '^cpu family' /proc/cpuinfo | sed 's/.*: *//'")
    num = sh("grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | sed 's/.*: *//'")
    p(f"- Machine: {model} (cpu family {fam}, model {num}), {sh('nproc')} cpus, {mem} GiB; "
      f"Tessel cpu kernels: {isa}.")
    rounds = max(len(by_round) for impls in times.values() for by_round in impls.values())
    p(f"- Command: `{args.command}` (writes this file). {threads} threads for every "
      "implementation; each time is a median over repetitions, Tessel and OpenBLAS alternating "
      f"in one process, which runs the whole workload list {rounds} time{'s' if rounds > 1 else ''} "
      "(rounds minutes apart, in different spells of the shared machine: each time shown is the "
      "median of its rounds', each ratio against a yardstick or peer timed alongside it the "
      "median of its rounds' ratios); "
      "the Python peers run after them in the same script; Tessel and ONNX "
      "Runtime alternate on the models in 5 rounds of 8 runs (a fresh process each round), "
      "each timed as the median of its rounds' medians.")
    tuned = args.openblas_tuned
    ob_tuned = "openblas-" + tuned.lower()
    core = {k: machine.get(k, {}).get("openblas_core", "?") for k in (ob_tuned, "openblas-unset")}
    p(f"- The environment's OpenBLAS settings: `{args.openblas_env}`. OpenBLAS ran its "
      f"`{core[ob_tuned]}` kernels with OPENBLAS_CORETYPE={tuned} and its "
      f"`{core['openblas-unset']}` kernels with it unset. `{ob_tuned}` alternates with "
      "Tessel in one process, so both see the same spells of the shared host: it is the peer the "
      "GEMM target is judged against. `openblas-unset` and the Python peers run afterwards, in "
      "other spells. numpy and torch call the same OpenBLAS: their GEMM rows are given both ways.")
    p("")
    p("## The machine's limits (measured in this run)\n")
    p("| limit | 1 thread | %d threads |" % threads)
    p("|---|---|---|")
    chains = "16 independent 512-bit" if "avx512" in isa else "12 independent 256-bit"
    p(f"| f32 FMA peak ({chains} FMA chains; {threads} threads: the larger of "
      f"their run, {peak['gflops_n']:.0f}, and {threads}× one thread's) | "
      f"{peak['gflops_1']:.0f} GFLOP/s | {peak_n:.0f} GFLOP/s |")
    p(f"| copy bandwidth (512 MiB, read + write bytes: the best pass of memcpy and of a "
      f"streaming copy) | {bw['gbs_1']:.1f} GB/s | "
      f"{bw_n:.1f} GB/s |")
    p("")
    if threads > 1 and peak["gflops_n"] < 0.9 * threads * peak["gflops_1"]:
        p(f"This run's {threads}-thread FMA run measured {peak['gflops_n']:.0f} GFLOP/s, below "
          f"{threads}× one thread's: another tenant held a core while it ran. The percentages of "
          f"peak below are taken against {peak_n:.0f} GFLOP/s.\n")

    workloads = parse_workloads(args.workloads)
    targets = []  # (target, workload, its rounds' values, goal, unit)

    def ms(wid, impl):
        by_round = times.get(wid, {}).get(impl)
        return statistics.median(by_round.values()) if by_round else None

    def per_round(wid, impl, ratio):
        """ratio(impl's ms, tessel's ms) in each round that timed both."""
        a, t = times.get(wid, {}).get(impl, {}), times.get(wid, {}).get("tessel", {})
        return [ratio(a[r], t[r]) for r in sorted(a) if r in t]

    def fmt(v):
        return "—" if v is None else f"{v:.2f}"

    def best(wid, impls):
        got = [(ms(wid, i), i) for i in impls if ms(wid, i) is not None]
        return min(got) if got else (None, None)

    sections = [
        ("f32 GEMM", lambda k, f: k == "gemm" and f["dtype"] == "f32",
         [ob_tuned, "openblas-unset", "openblas-env", "numpy", f"numpy-{tuned.lower()}",
          "torch", f"torch-{tuned.lower()}"]),
        ("bf16 GEMM (Tessel: bf16 in, bf16 out, f32 accumulation; with AVX512_BF16 both multiply "
         "through vdpbf16ps, two products a lane per instruction, up to twice the f32 FMA peak)",
         lambda k, f: k == "gemm" and f["dtype"] == "bf16", ["torch"]),
        ("Convolution (Tessel: NCHW, the weights and bias graph constants as in a model it imports, "
         "so what it derives from them, such as Winograd's transformed weights, is made on the "
         "first run only; torch: F.conv2d, torch-nhwc's weights converted to channels-last once, "
         "before the timing)", lambda k, f: k == "conv", ["torch-nchw", "torch-nhwc"]),
        ("Softmax, layer norm, elementwise chain (tensors ≫ cache)",
         lambda k, f: k in ("softmax", "layernorm", "eltwise"), ["torch"]),
        ("Attention", lambda k, f: k == "attention", ["torch"]),
    ]
    for title, pick, peers in sections:
        rows = [(k, w, f) for k, w, f in workloads if pick(k, f)]
        present = [i for i in peers if any(ms(w, i) is not None for _, w, _ in rows)]
        if not rows:
            continue
        p(f"## {title}\n")
        # Yardsticks timed alternately with Tessel on these rows, each with its column.
        extra = [e for e in SAME_SPELL if any(ms(w, e) is not None for _, w, _ in rows)]
        for e in extra:
            p(SAME_SPELL[e][1] + "\n")
        head = ["workload", "tessel ms", "tessel rate"] + [SAME_SPELL[e][0] for e in extra] + \
            [f"{i} ms" for i in present]
        p("| " + " | ".join(head + ["best peer / tessel"]) + " |")
        p("|" + "---|" * (len(head) + 1))
        for kind, wid, f in rows:
            work, unit = work_of(kind, f)
            t = ms(wid, "tessel")
            fp = ms(wid, "fma-peak")
            # Above 100% of the same spells' peak, the peak loop met a slower spell than the GEMM:
            # that comparison is void, and the run's best peak judges the round instead.
            peak_rounds = per_round(wid, "fma-peak",
                                    lambda a, b: a / b if a <= b else work / b / 1e6 / peak_n)
            copy_rounds = per_round(wid, "copy", lambda a, b: a / b)
            if unit == "flop" and fp:
                same = statistics.median(per_round(wid, "fma-peak", lambda a, b: a / b))
                rate = (f"{work / t / 1e6:.0f} GFLOP/s ({same:.0%} of the same spells' peak, "
                        f"{work / t / 1e6 / peak_n:.0%} of the run's best)") if t else "—"
            elif unit == "flop":
                rate = (f"{work / t / 1e6:.0f} GFLOP/s ({work / t / 1e6 / peak_n:.0%} of the f32 FMA "
                        "peak)") if t else "—"
            else:
                gbs = work / t / 1e6 if t else None
                of_copy = statistics.median(copy_rounds) if copy_rounds else None
                rate = ("—" if not t else
                        f"{gbs:.1f} GB/s ({of_copy:.0%} of copy, {gbs / bw_n:.0%} of the 512 MiB copy)"
                        if of_copy else f"{gbs:.1f} GB/s ({gbs / bw_n:.0%} of copy)")
            b, bi = best(wid, present)
            ratio = f"{b / t:.2f}× ({bi})" if t and b else "—"
            cells = [wid, fmt(t), rate] + [fmt(ms(wid, e)) for e in extra] + \
                [fmt(ms(wid, i)) for i in present] + [ratio]
            p("| " + " | ".join(cells) + " |")
            if t and kind == "gemm" and f["dtype"] == "f32" and f["M"] >= 128:
                ob_rounds = per_round(wid, ob_tuned, lambda a, b: a / b)
                if ob_rounds:
                    targets.append(("f32 GEMM ≥ 1.0× OpenBLAS (best setting)", wid, ob_rounds, 1.0,
                                    "×"))
                targets.append(("f32 GEMM ≥ 85% of FMA peak", wid,
                                 peak_rounds or [work / t / 1e6 / peak_n], GEMM_PEAK_TARGET, "%"))
            if t and unit == "byte":
                targets.append((f"{kind} ≥ 80% of copy bandwidth", wid,
                                copy_rounds or [work / t / 1e6 / bw_n], BANDWIDTH_TARGET, "%"))
        by_note = {}
        for (wid, impl), note in sorted(notes.items()):
            if any(wid == w for _, w, _ in rows):
                by_note.setdefault((impl, note), []).append(wid)
        if by_note:
            p("")
        for (impl, note), wids in by_note.items():
            p(f"- {impl} ({', '.join(wids)}): {note}")
        p("")

    p("## Models (ONNX: `tessel run` against ONNX Runtime 1.30's cpu provider)\n")
    p("| model | tessel ms | onnxruntime ms | torch ms | onnxruntime / tessel | torch / tessel |")
    p("|---|---|---|---|---|---|")
    for wid, label in [("encoder_layer", "transformer encoder layer (d 512, 8 heads, ff 2048, [8,128,512])"),
                       ("paddleocr_det", "PaddleOCR v4 det [1,3,640,640]"),
                       ("paddleocr_rec", "PaddleOCR v4 rec [1,3,48,320]")]:
        t, o, tt = ms(wid, "tessel"), ms(wid, "onnxruntime"), ms(wid, "torch")
        p(f"| {label} | {fmt(t)} | {fmt(o)} | {fmt(tt)} | {fmt(o / t if t and o else None)}× | "
          f"{fmt(tt / t if t and tt else None)}× |")
        if t and o:
            targets.append((f"{wid} ≥ 1.0× ONNX Runtime", wid, [o / t], 1.0, "×"))
        if t and tt:
            targets.append((f"{wid} ≥ 1.0× PyTorch", wid, [tt / t], 1.0, "×"))
    model_notes = [(wid, impl, note) for (wid, impl), note in sorted(notes.items())
                   if wid in ("encoder_layer", "paddleocr_det", "paddleocr_rec")]
    if model_notes:
        p("")
    for wid, impl, note in model_notes:
        p(f"- {wid}, {impl}: {note}")
    p("\nOutputs: the encoder's ONNX export is checked against torch's output in the run "
      "(bench/cpu/export_encoder.py --check); PaddleOCR det / rec against ONNX Runtime's goldens "
      "by the test suite (ctest -R onnx_paddleocr).\n")

    p("## Targets\n")
    p("Measured: the median of the rounds' ratios (each round's in the last column).\n")
    p("| target | workload | measured | goal | met | rounds |")
    p("|---|---|---|---|---|---|")
    targets = [(name, wid, statistics.median(vs), vs, goal, unit)
               for name, wid, vs, goal, unit in targets]
    for name, wid, v, vs, goal, unit in targets:
        show = (lambda x: f"{x:.0%}") if unit == "%" else (lambda x: f"{x:.2f}×")
        p(f"| {name} | {wid} | {show(v)} | {show(goal)} | "
          f"{'yes' if v >= goal else f'no ({v / goal:.0%} of goal)'} | "
          f"{' '.join(map(show, vs)) if len(vs) > 1 else '—'} |")
    met = sum(v >= g for _, _, v, _, g, _ in targets)
    p(f"\n{met} of {len(targets)} targets met in this run.")
    if args.analysis:
        with open(args.analysis) as f:
            p("\n" + f.read().strip())
    print("\n".join(out))


if __name__ == "__main__":
    main()
