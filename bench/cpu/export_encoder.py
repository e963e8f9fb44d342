#!/usr/bin/python3
# Exports the cpu benchmark's "encoder_layer" (the same torch.nn.TransformerEncoderLayer that
# bench/cpu/peers.py times: d_model 512, 8 heads, ffn 2048, relu, dropout 0, batch_first,
# torch.manual_seed(0) weights) to ONNX with a static input "x" of shape [8,128,512], and saves
# a reference pair beside it: OUT.onnx.input.npy (the input, float32, uniform in [-1, 1), drawn
# right after the weights from seed 0, as in peers.py) and OUT.onnx.output.npy (torch's output).
#   /usr/bin/python3 bench/cpu/export_encoder.py OUT.onnx [--check build/tessel]
# With --check, also runs `tessel run OUT.onnx --input x=OUT.onnx.input.npy --save-outputs DIR`
# and compares its output with torch's (exit 1 if the max abs difference exceeds 1e-4).
#
# torch 1.13 runs an eval-mode encoder layer through a fused "fast path"
# (aten::_transformer_encoder_layer_fwd, which has no ONNX export) whenever autograd is off;
# it has no switch to turn that path off, so the export runs with grad enabled (the parameters
# require grad), which makes the layer take its plain path of Gemm / MatMul / Softmax /
# LayerNormalization ops.
import argparse
import subprocess
import sys
import tempfile

import numpy as np
import torch

SHAPE = (8, 128, 512)


def build():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048,
                                             dropout=0.0, batch_first=True).eval()
    x = torch.rand(*SHAPE) * 2 - 1
    return layer, x


def check(tessel, onnx_path, ref):
    with tempfile.TemporaryDirectory() as out_dir:
        cmd = [tessel, "run", onnx_path, "--input", f"x={onnx_path}.input.npy",
               "--save-outputs", out_dir, "--repeat", "3"]
        print("+ " + " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True)
        got = np.load(f"{out_dir}/output_0.npy")  # tessel names saved outputs by position
    if got.shape != ref.shape:
        sys.exit(f"tessel output shape {got.shape}, torch {ref.shape}")
    diff = float(np.abs(got.astype(np.float64) - ref).max())
    print(f"max abs diff tessel vs torch: {diff:.3g}")
    if diff > 1e-4:
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description="Export the benchmark's encoder layer to ONNX.")
    ap.add_argument("out", help="the .onnx file to write")
    ap.add_argument("--check", metavar="TESSEL", help="tessel binary to run the model with")
    args = ap.parse_args()

    layer, x = build()
    opset = min(17, torch.onnx._constants.ONNX_MAX_OPSET)
    with torch.enable_grad():  # keeps the layer off its fused fast path (see the header)
        ref = layer(x).detach().numpy()
        torch.onnx.export(layer, (x,), args.out, input_names=["x"], output_names=["y"],
                          opset_version=opset, do_constant_folding=True)
    np.save(args.out + ".input.npy", x.numpy())
    np.save(args.out + ".output.npy", ref)
    print(f"wrote {args.out} (opset {opset}) and its .input.npy / .output.npy", file=sys.stderr)
    if args.check:
        check(args.check, args.out, ref)


if __name__ == "__main__":
    main()
