"""Goldens for the FusedComposites kinds, computed with PyTorch modules and functions (never with
Tessel's own decompositions): SwiGLU MLP, linear + bias + activation, residual + LayerNorm /
RMSNorm, DiT adaLN and gated residual, the self-attention block (explicit matmul-softmax-matmul,
GQA, causal and sliding-window masks) and nn.TransformerEncoderLayer (post- and pre-norm).

Run with /usr/bin/python3 (Debian's python3-torch 1.13); writes tests/goldens/fused_composites.json.
A case is {"kind", "name", "attrs", "inputs": [tensor or null], "outputs": [tensors]}; null marks
an absent optional input; attrs use the ops.def attribute names.
"""
import math

import torch
import torch.nn.functional as F

import golden_io

torch.manual_seed(20240613)
D = torch.float64


def q(t):
    """Inputs are multiples of 1/256: exact in every float dtype the tests cast them to (bf16 and
    f16 included, for moderate magnitudes) and short in the JSON."""
    return torch.round(t * 256) / 256


def rnd(*shape, scale=1.0):
    return q(torch.randn(*shape, dtype=D) * scale)


def uniform(*shape, lo=-1.0, hi=1.0):
    return q(torch.rand(*shape, dtype=D) * (hi - lo) + lo)


cases = []


def case(kind, name, attrs, inputs, outputs):
    cases.append({"kind": kind, "name": name, "attrs": attrs, "inputs": inputs,
                  "outputs": outputs})


# FusedSwiGLU: (silu(x Wg) * (x Wu)) Wd.
for name, sx in [("batched", [2, 3, 5]), ("vector", [5])]:
    x, wg, wu, wd = rnd(*sx), rnd(5, 7), rnd(5, 7), rnd(7, 4)
    case("FusedSwiGLU", name, {}, [x, wg, wu, wd], [(F.silu(x @ wg) * (x @ wu)) @ wd])

# FusedMatMulBiasAct: act(x W + b); transpose_b takes W as torch.nn.Linear's [N, K].
ACTS = {
    "Identity": lambda t: t,
    "Relu": F.relu,
    "Gelu": F.gelu,
    "GeluApprox": lambda t: F.gelu(t, approximate="tanh"),
    "Silu": F.silu,
    "Sigmoid": torch.sigmoid,
    "Tanh": torch.tanh,
}
for name, act, sx, tb, bias in [
    ("identity_no_bias", "Identity", [2, 3, 5], False, False),
    ("relu_bias", "Relu", [2, 3, 5], False, True),
    ("gelu_linear_layout", "Gelu", [4, 5], True, True),
    ("gelu_approx", "GeluApprox", [3, 5], False, True),
    ("silu_vector", "Silu", [5], False, True),
    ("sigmoid_transposed_no_bias", "Sigmoid", [2, 2, 5], True, False),
    ("tanh", "Tanh", [3, 5], False, True),
]:
    x = rnd(*sx)
    w = rnd(4, 5) if tb else rnd(5, 4)
    b = rnd(4) if bias else None
    y = F.linear(x, w, b) if tb else x @ w + (b if bias else 0)
    case("FusedMatMulBiasAct", name, {"act": act, "transpose_b": tb}, [x, w, b], [ACTS[act](y)])

# FusedResidualLN / FusedResidualRmsNorm: sum = x + residual; y = norm(sum) over the last axis.
def rms_norm(t, gamma, eps):
    y = t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + eps)
    return y * gamma if gamma is not None else y


for name, sx, sr, affine, eps in [("affine", [2, 3, 6], [2, 3, 6], True, 1e-5),
                                  ("no_affine_broadcast_residual", [2, 3, 6], [6], False, 1e-3)]:
    x, r = rnd(*sx), rnd(*sr)
    g, b = (rnd(6), rnd(6)) if affine else (None, None)
    s = x + r
    case("FusedResidualLN", name, {"eps": eps}, [x, r, g, b],
         [F.layer_norm(s, (6,), g, b, eps), s])
    case("FusedResidualRmsNorm", name, {"eps": eps}, [x, r, g],
         [rms_norm(s, g, eps), s])

# AdaLayerNorm: LayerNorm(x) (no affine) * (1 + scale[:, None]) + shift[:, None].
for name, sx, eps in [("batched", [2, 5, 6], 1e-6), ("single_batch_eps", [1, 3, 4], 1e-2)]:
    x, scale, shift = rnd(*sx), rnd(sx[0], sx[2]), rnd(sx[0], sx[2])
    y = F.layer_norm(x, (sx[2],), eps=eps) * (1 + scale[:, None, :]) + shift[:, None, :]
    case("AdaLayerNorm", name, {"eps": eps}, [x, scale, shift], [y])

# GatedResidual: x + gate[:, None] * y; gates that already broadcast are taken as they are.
x, y = rnd(2, 5, 6), rnd(2, 5, 6)
for name, gate, g3 in [("gate_bd", rnd(2, 6), None), ("gate_b1d", rnd(2, 1, 6), "same"),
                       ("gate_d", rnd(6), "same")]:
    gb = gate[:, None, :] if g3 is None else gate
    case("GatedResidual", name, {}, [x, y, gate], [x + gb * y])


# The self-attention block, written out: project, split heads, softmax(q kᵀ / sqrt(Dh) + mask) v
# with kv head h // (H / Hkv) for query head h, merge, project.
def attention_block(x, wq, wk, wv, wo, bq, bk, bv, bo, heads, kv_heads, mask, window):
    bsz, s, _ = x.shape
    dh = wq.shape[1] // heads

    def proj(w, b, h):
        t = x @ w + (b if b is not None else 0)
        return t.reshape(bsz, s, h, dh).transpose(1, 2)

    q, k, v = proj(wq, bq, heads), proj(wk, bk, kv_heads), proj(wv, bv, kv_heads)
    k = k.repeat_interleave(heads // kv_heads, dim=1)
    v = v.repeat_interleave(heads // kv_heads, dim=1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(dh)
    i = torch.arange(s)[:, None]
    j = torch.arange(s)[None, :]
    if mask == "Causal":
        scores = scores.masked_fill(j > i, float("-inf"))
    elif mask == "SlidingWindow":
        scores = scores.masked_fill((j > i) | (j < i - window), float("-inf"))
    att = torch.softmax(scores, dim=-1) @ v
    merged = att.transpose(1, 2).reshape(bsz, s, heads * dh)
    return merged @ wo + (bo if bo is not None else 0)


for name, heads, kv_heads, mask, window, biases, dout in [
    ("mha_biases", 2, 0, "None", 0, True, 8),
    ("gqa_causal", 4, 2, "Causal", 0, False, 8),
    ("mqa_sliding_window", 4, 1, "SlidingWindow", 2, True, 6),
]:
    b_, s_, d_, width = 2, 5, 8, 8
    dh = width // heads
    kvh = heads if kv_heads == 0 else kv_heads
    x = rnd(b_, s_, d_)
    wq, wk, wv = rnd(d_, width, scale=0.4), rnd(d_, kvh * dh, scale=0.4), rnd(d_, kvh * dh, scale=0.4)
    wo = rnd(width, dout, scale=0.4)
    bq, bk, bv, bo = (rnd(width), rnd(kvh * dh), rnd(kvh * dh), rnd(dout)) if biases else (None,) * 4
    y = attention_block(x, wq, wk, wv, wo, bq, bk, bv, bo, heads, kvh, mask, window)
    case("FusedAttentionBlock", name,
         {"heads": heads, "kv_heads": kv_heads, "mask_kind": mask, "window": window},
         [x, wq, wk, wv, wo, bq, bk, bv, bo], [y])


# FusedTransformerLayer: nn.TransformerEncoderLayer, weights mapped to the x·W layout.
def transformer_case(name, act, norm_first, causal, eps, affine=True):
    d_model, nhead, ff, bsz, s = 8, 2, 16, 2, 5
    layer = torch.nn.TransformerEncoderLayer(d_model, nhead, ff, dropout=0.0, activation=act,
                                             layer_norm_eps=eps, batch_first=True,
                                             norm_first=norm_first).to(D)
    layer.train()  # keeps PyTorch off its fused inference fast path; dropout is 0
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(q(torch.randn_like(p) * 0.4))
        if not affine:  # absent biases and LayerNorm affines mean identity: make torch's so
            for m in (layer.norm1, layer.norm2):
                m.weight.fill_(1.0)
                m.bias.zero_()
            for t in (layer.self_attn.in_proj_bias, layer.self_attn.out_proj.bias,
                      layer.linear1.bias, layer.linear2.bias):
                t.zero_()
        x = rnd(bsz, s, d_model)
        mask = torch.triu(torch.full((s, s), float("-inf"), dtype=D), diagonal=1) if causal else None
        y = layer(x, src_mask=mask)
    w, b = layer.self_attn.in_proj_weight, layer.self_attn.in_proj_bias
    wq, wk, wv = (w[i * d_model:(i + 1) * d_model].t() for i in range(3))
    bq, bk, bv = (b[i * d_model:(i + 1) * d_model] for i in range(3))
    inputs = [x, wq, wk, wv, layer.self_attn.out_proj.weight.t(), bq, bk, bv,
              layer.self_attn.out_proj.bias, layer.norm1.weight, layer.norm1.bias,
              layer.linear1.weight.t(), layer.linear1.bias, layer.linear2.weight.t(),
              layer.linear2.bias, layer.norm2.weight, layer.norm2.bias]
    if not affine:
        for i in (5, 6, 7, 8, 9, 10, 12, 14, 15, 16):
            inputs[i] = None
    case("FusedTransformerLayer", name,
         {"heads": nhead, "act": "Gelu" if act == "gelu" else "Relu", "norm_first": norm_first,
          "causal": causal, "eps": eps}, inputs, [y])


transformer_case("post_norm_gelu", "gelu", False, False, 1e-5)
transformer_case("pre_norm_relu_causal", "relu", True, True, 1e-5)
transformer_case("post_norm_relu_causal_eps", "relu", False, True, 1e-3)
transformer_case("pre_norm_gelu_no_affine", "gelu", True, False, 1e-5, affine=False)


# Every activation variant (all but Not) through FusedMatMulBiasAct and FusedTransformerLayer,
# with the pre-activation kept inside the function's domain: x·W is small, b centres it.
EVERY_ACT = {
    "Gelu": F.gelu, "GeluApprox": lambda t: F.gelu(t, approximate="tanh"), "Silu": F.silu,
    "Relu": F.relu, "Sigmoid": torch.sigmoid, "Tanh": torch.tanh, "Exp": torch.exp,
    "Log": torch.log, "Sqrt": torch.sqrt, "Rsqrt": torch.rsqrt, "Neg": torch.neg,
    "Abs": torch.abs, "Sin": torch.sin, "Cos": torch.cos, "Tan": torch.tan, "Atan": torch.atan,
    "Round": torch.round, "Identity": lambda t: t, "LeakyRelu": F.leaky_relu, "Elu": F.elu,
    "Selu": F.selu, "Softplus": F.softplus, "Softsign": F.softsign,
    "HardSigmoid": F.hardsigmoid, "HardSwish": F.hardswish, "Mish": F.mish, "Erf": torch.erf,
    "Expm1": torch.expm1, "Log1p": torch.log1p, "Reciprocal": torch.reciprocal,
    "Square": torch.square, "Asin": torch.asin, "Acos": torch.acos, "Sinh": torch.sinh,
    "Cosh": torch.cosh, "Asinh": torch.asinh, "Acosh": torch.acosh, "Atanh": torch.atanh,
    "Sign": torch.sign, "Floor": torch.floor, "Ceil": torch.ceil,
}
DOMAIN = {  # centre, half-width of the pre-activation
    "Log": (1.2, 0.8), "Sqrt": (1.2, 0.8), "Rsqrt": (1.2, 0.8), "Reciprocal": (1.2, 0.8),
    "Log1p": (0.3, 0.6), "Asin": (0.0, 0.8), "Acos": (0.0, 0.8), "Atanh": (0.0, 0.8),
    "Acosh": (2.0, 0.8), "Tan": (0.0, 1.2),
}


def small_weights(rows, cols, half_width, input_bound):
    """[rows, cols] weights w with |v·w| < half_width for |v| <= input_bound elementwise."""
    limit = half_width / (rows * input_bound)
    return uniform(rows, cols, lo=-limit, hi=limit)


for i, (act, fn) in enumerate(EVERY_ACT.items()):
    centre, hw = DOMAIN.get(act, (0.0, 2.0))
    x = uniform(3, 5)  # |x| <= 1
    w = small_weights(5, 4, hw, 1.0)
    b = q(centre + uniform(4) * 0.1 * hw)
    case("FusedMatMulBiasAct", "every_act_" + act, {"act": act, "transpose_b": False}, [x, w, b],
         [fn(x @ w + b)])

    # A tiny post-/pre-norm layer; the feed-forward input is a LayerNorm output without affine
    # (|h| <= sqrt(D - 1) < 2 for D = 4), so small w1 and a centred b1 keep it in the domain.
    d_model, ff, s = 4, 4, 3
    norm_first = i % 2 == 1
    layer = torch.nn.TransformerEncoderLayer(d_model, 2, ff, dropout=0.0, activation=fn,
                                             batch_first=True, norm_first=norm_first).to(D)
    layer.train()
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(q(torch.randn_like(p) * 0.4))
        x = uniform(1, s, d_model)
        for m in (layer.norm1, layer.norm2):
            m.weight.fill_(1.0)
            m.bias.zero_()
        layer.linear1.weight.copy_(small_weights(d_model, ff, hw, 2.0).t())
        layer.linear1.bias.copy_(q(centre + uniform(ff) * 0.1 * hw))
        causal = i % 3 == 0
        mask = torch.triu(torch.full((s, s), float("-inf"), dtype=D), diagonal=1) if causal else None
        y = layer(x, src_mask=mask)
    w_, b_ = layer.self_attn.in_proj_weight, layer.self_attn.in_proj_bias
    inputs = [x] + [w_[j * d_model:(j + 1) * d_model].t() for j in range(3)] + \
        [layer.self_attn.out_proj.weight.t()] + [b_[j * d_model:(j + 1) * d_model] for j in range(3)] + \
        [layer.self_attn.out_proj.bias, None, None, layer.linear1.weight.t(), layer.linear1.bias,
         layer.linear2.weight.t(), layer.linear2.bias, None, None]
    case("FusedTransformerLayer", "every_act_" + act,
         {"heads": 2, "act": act, "norm_first": norm_first, "causal": causal, "eps": 1e-5},
         inputs, [y])

golden_io.write("fused_composites", cases)
