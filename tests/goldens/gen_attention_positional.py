"""Goldens for the AttentionPositional category, written independently of Tessel's kernels in
torch float64:
  Attention   explicit matmul -> softmax -> matmul, kv heads repeated for GQA/MQA, the mask of
              every MaskKind built in torch (rows with no visible key are zeros);
  Rope        NeoX as Hugging Face's rotate_half, GPT-J as the interleaved rotate_every_two;
  AxialRope2d as EVA-02's VisionRotaryEmbedding (row freqs ‖ column freqs, interleaved pairs);
  ALiBi       slopes by the ALiBi paper's get_slopes (max_bias = 8).
Run: /usr/bin/python3 tests/goldens/gen_attention_positional.py
"""
import math

import torch

import golden_io

torch.manual_seed(7)
D = torch.float64


def rnd(*shape, lo=-1.0, hi=1.0):
    return torch.rand(*shape, dtype=D) * (hi - lo) + lo


cases = []

# ---------------------------------------------------------------------------------------------
# Attention


def attention(name, q, k, v, mask_kind="None", mask=None, scale=0.0, window=0):
    b, hq, sq, d = q.shape
    hkv, sk = k.shape[1], k.shape[2]
    group = hq // hkv
    kr = k.repeat_interleave(group, dim=1)
    vr = v.repeat_interleave(group, dim=1)
    s = scale if scale != 0 else 1.0 / math.sqrt(d)
    scores = torch.matmul(q, kr.transpose(-1, -2)) * s
    i = torch.arange(sq).view(sq, 1)
    j = torch.arange(sk).view(1, sk)
    keep = torch.ones(b, hq, sq, sk, dtype=torch.bool)
    if mask_kind == "Causal":
        keep = keep & (j <= i + (sk - sq))
    elif mask_kind == "SlidingWindow":
        keep = keep & (j <= i + (sk - sq)) & (j >= i + (sk - sq) - window)
    elif mask_kind in ("Custom", "Bias"):
        m = mask if mask.dim() != 2 else mask.view(mask.shape[0], 1, 1, mask.shape[1])
        if mask_kind == "Custom":
            keep = keep & (m != 0)
        else:
            scores = scores + m
    scores = scores.masked_fill(~keep, float("-inf"))
    any_visible = (scores != float("-inf")).any(dim=-1, keepdim=True)
    probs = torch.softmax(scores, dim=-1)
    probs = torch.where(any_visible, probs, torch.zeros((), dtype=D))
    y = torch.matmul(probs, vr)
    cases.append({"op": "Attention", "name": name, "mask_kind": mask_kind, "scale": scale,
                  "window": window, "q": q, "k": k, "v": v, "mask": mask, "y": y})


def qkv(b, hq, hkv, sq, sk, d, dv):
    return rnd(b, hq, sq, d, lo=-2, hi=2), rnd(b, hkv, sk, d, lo=-2, hi=2), rnd(b, hkv, sk, dv)


attention("none", *qkv(2, 2, 2, 5, 7, 3, 4))
attention("none_scale", *qkv(2, 2, 2, 4, 3, 5, 2), scale=0.7)
attention("gqa_none", *qkv(2, 4, 2, 5, 7, 3, 3))
attention("mqa_causal", *qkv(1, 3, 1, 5, 7, 3, 4), mask_kind="Causal")
attention("causal_sq_lt_sk", *qkv(2, 2, 2, 5, 7, 3, 4), mask_kind="Causal")
attention("causal_sq_gt_sk", *qkv(2, 2, 1, 7, 5, 3, 2), mask_kind="Causal")  # rows 0, 1 see nothing
attention("causal_square", *qkv(2, 1, 1, 6, 6, 4, 4), mask_kind="Causal")
attention("window2", *qkv(2, 2, 2, 5, 7, 3, 4), mask_kind="SlidingWindow", window=2)
attention("window0_gqa", *qkv(2, 4, 2, 5, 7, 3, 4), mask_kind="SlidingWindow", window=0)
custom = torch.rand(2, 1, 5, 7) > 0.4
custom[1, 0, 2, :] = False  # a fully masked row -> zeros
attention("custom_bool", *qkv(2, 2, 2, 5, 7, 3, 4), mask_kind="Custom", mask=custom)
padding = torch.ones(2, 7, dtype=torch.bool)
padding[0, 5:] = False
padding[1, 3:] = False
attention("custom_padding_b_sk", *qkv(2, 2, 2, 5, 7, 3, 4), mask_kind="Custom", mask=padding)
numeric = torch.tensor([[1.0, 0.0, 2.5, -1.0, 0.0, 3.0, 1.0]], dtype=D).expand(1, 5, 7).contiguous()
attention("custom_numeric_1_sq_sk", *qkv(2, 4, 2, 5, 7, 3, 4), mask_kind="Custom", mask=numeric)
attention("bias_full", *qkv(2, 2, 2, 5, 7, 3, 4), mask_kind="Bias", mask=rnd(2, 2, 5, 7, lo=-3, hi=3))
attention("bias_b_sk", *qkv(2, 2, 1, 5, 7, 3, 4), mask_kind="Bias", mask=rnd(2, 7, lo=-3, hi=3))
bias_inf = rnd(1, 1, 5, 7, lo=-3, hi=3)
bias_inf[0, 0, 1, 2:5] = float("-inf")
bias_inf[0, 0, 3, :] = float("-inf")  # a row of -inf bias -> zeros
attention("bias_neg_inf", *qkv(2, 2, 2, 5, 7, 3, 4), mask_kind="Bias", mask=bias_inf)

# ---------------------------------------------------------------------------------------------
# Rope


def inv_freq(rotary_dim, base):
    return 1.0 / (base ** (torch.arange(0, rotary_dim, 2, dtype=D) / rotary_dim))


def rotate_half(x):  # Hugging Face (GPT-NeoX / Llama)
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotate_every_two(x):  # GPT-J
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def rope(name, x, style="NeoX", positions=None, base=10000.0, rotary_dim=0):
    s, d = x.shape[-2], x.shape[-1]
    rd = rotary_dim if rotary_dim else d
    pos = positions.to(D) if positions is not None else torch.arange(s, dtype=D)
    freqs = torch.outer(pos, inv_freq(rd, base))  # [S, rd/2]
    xr, xp = x[..., :rd], x[..., rd:]
    if style == "NeoX":
        emb = torch.cat((freqs, freqs), dim=-1)
        xr = xr * emb.cos() + rotate_half(xr) * emb.sin()
    else:
        emb = freqs.repeat_interleave(2, dim=-1)
        xr = xr * emb.cos() + rotate_every_two(xr) * emb.sin()
    y = torch.cat((xr, xp), dim=-1)
    cases.append({"op": "Rope", "name": name, "style": style, "base": base,
                  "rotary_dim": rotary_dim, "x": x, "positions": positions, "y": y})


rope("neox", rnd(2, 3, 5, 8))
rope("gptj", rnd(2, 3, 5, 8), style="GptJ")
rope("neox_partial", rnd(2, 5, 10), rotary_dim=4)
rope("gptj_partial", rnd(2, 5, 10), style="GptJ", rotary_dim=6)
rope("neox_positions", rnd(2, 5, 6), positions=torch.tensor([3, 0, 7, 2, 11]), base=500.0)
rope("gptj_positions", rnd(1, 2, 5, 6), style="GptJ", positions=torch.tensor([3, 0, 7, 2, 11]))
rope("neox_float_positions", rnd(3, 4), positions=torch.tensor([0.5, 1.25, -2.0], dtype=D))
rope("gptj_rank2", rnd(7, 2), style="GptJ", base=100.0)

# ---------------------------------------------------------------------------------------------
# AxialRope2d (EVA-02 VisionRotaryEmbedding, integer grid positions)


def axial_rope(name, x, grid_h, grid_w, base=10000.0):
    d = x.shape[-1]
    dim = d // 2
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=D)[: dim // 2] / dim))
    fh = torch.outer(torch.arange(grid_h, dtype=D), freqs).repeat_interleave(2, dim=-1)
    fw = torch.outer(torch.arange(grid_w, dtype=D), freqs).repeat_interleave(2, dim=-1)
    grid = torch.cat((fh[:, None, :].expand(grid_h, grid_w, dim),
                      fw[None, :, :].expand(grid_h, grid_w, dim)), dim=-1).reshape(grid_h * grid_w, d)
    y = x * grid.cos() + rotate_every_two(x) * grid.sin()
    cases.append({"op": "AxialRope2d", "name": name, "grid_h": grid_h, "grid_w": grid_w,
                  "base": base, "x": x, "y": y})


axial_rope("2x3_d8", rnd(2, 2, 6, 8), 2, 3)
axial_rope("4x3_d4", rnd(3, 12, 4), 4, 3, base=100.0)
axial_rope("3x5_d12", rnd(1, 15, 12), 3, 5)

# ---------------------------------------------------------------------------------------------
# ALiBi (the paper's reference slopes, github.com/ofirpress/attention_with_linear_biases)


def get_slopes(n):
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + get_slopes(2 * closest)[0::2][: n - closest]


def alibi(name, scores):
    _, h, sq, sk = scores.shape
    slopes = torch.tensor(get_slopes(h), dtype=D).view(h, 1, 1)
    i = torch.arange(sq, dtype=D).view(sq, 1)
    j = torch.arange(sk, dtype=D).view(1, sk)
    y = scores + slopes * (j - i - (sk - sq))
    cases.append({"op": "ALiBi", "name": name, "max_bias": 8.0, "scores": scores, "y": y})


alibi("h8", rnd(2, 8, 3, 5))
alibi("h6", rnd(1, 6, 4, 4))
alibi("h6_sq_gt_sk", rnd(2, 6, 5, 3))
alibi("h1", rnd(1, 1, 2, 3))

golden_io.write("attention_positional", cases)
