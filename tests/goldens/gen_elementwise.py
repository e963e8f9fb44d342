"""Goldens for the Elementwise category (Activation, Binary, Compare, Where, GatedActivation),
computed by PyTorch 1.13 in float64; the low-precision cases compute in float64 from the
f16 / bf16 / f32 inputs and round once (what the reference backend promises), and the integer
cases use PyTorch's own integer kernels (wraparound). GatedActivation is act(first half) * second
half, as ops.def defines it (F.glu gates the other way round: glu(x) = a * sigmoid(b)).
Run: /usr/bin/python3 tests/goldens/gen_elementwise.py
"""
import torch
import torch.nn.functional as F

import golden_io

torch.manual_seed(20240612)
D = torch.float64
INF, NAN = float("inf"), float("nan")

ACTIVATIONS = {
    "Gelu": F.gelu,
    "GeluApprox": lambda x: F.gelu(x, approximate="tanh"),
    "Silu": F.silu,
    "Relu": F.relu,
    "Sigmoid": torch.sigmoid,
    "Tanh": torch.tanh,
    "Exp": torch.exp,
    "Log": torch.log,
    "Sqrt": torch.sqrt,
    "Rsqrt": torch.rsqrt,
    "Neg": torch.neg,
    "Abs": torch.abs,
    "Sin": torch.sin,
    "Cos": torch.cos,
    "Tan": torch.tan,
    "Atan": torch.atan,
    "Round": torch.round,
    "Identity": lambda x: x.clone(),
    "LeakyRelu": F.leaky_relu,
    "Elu": F.elu,
    "Selu": F.selu,
    "Softplus": F.softplus,
    "Softsign": F.softsign,
    "HardSigmoid": F.hardsigmoid,
    "HardSwish": F.hardswish,
    "Mish": F.mish,
    "Erf": torch.erf,
    "Expm1": torch.expm1,
    "Log1p": torch.log1p,
    "Reciprocal": torch.reciprocal,
    "Square": torch.square,
    "Asin": torch.asin,
    "Acos": torch.acos,
    "Sinh": torch.sinh,
    "Cosh": torch.cosh,
    "Asinh": torch.asinh,
    "Acosh": torch.acosh,
    "Atanh": torch.atanh,
    "Sign": torch.sign,
    "Floor": torch.floor,
    "Ceil": torch.ceil,
}
INT_ACTIVATIONS = ["Identity", "Neg", "Abs", "Sign", "Square", "Relu"]

BINARY = {
    "Add": torch.add,
    "Sub": torch.sub,
    "Mul": torch.mul,
    "Div": torch.div,
    "Max": torch.maximum,
    "Min": torch.minimum,
    "Pow": torch.pow,
    "Mod": torch.fmod,
    "FloorMod": torch.remainder,
    "Atan2": torch.atan2,
}
INT_BINARY = {
    "Add": torch.add,
    "Sub": torch.sub,
    "Mul": torch.mul,
    "Div": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "Max": torch.maximum,
    "Min": torch.minimum,
    "Mod": torch.fmod,
    "FloorMod": torch.remainder,
    "Pow": torch.pow,
    "BitAnd": torch.bitwise_and,
    "BitOr": torch.bitwise_or,
    "BitXor": torch.bitwise_xor,
}
COMPARE = {"Eq": torch.eq, "Ne": torch.ne, "Lt": torch.lt, "Le": torch.le, "Gt": torch.gt,
           "Ge": torch.ge}

EDGES = [0.0, -0.0, INF, -INF, NAN, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 3.5, 30.0, 700.0, -700.0,
         1e-300, -3.0, 0.99]
BIN_EDGES = [0.0, -0.0, 1.0, -1.0, 2.5, -3.0, 0.5, INF, -INF, NAN]
LOW = [torch.float16, torch.bfloat16, torch.float32]
# Broadcast pairs: odd sizes, batch > 1, rank-0 and a trailing vector.
SHAPES = [([3, 1, 5], [1, 7, 1]), ([2, 3, 4], [4]), ([], [2, 3]), ([4, 1], [4, 3])]

cases = []


def rnd(shape, lo=-3.0, hi=3.0, dtype=D):
    return (torch.rand(tuple(shape), dtype=D) * (hi - lo) + lo).to(dtype)


def activation(kind, x, alpha=None, fn=None):
    f = fn or ACTIVATIONS[kind]
    y = f(x.double()).to(x.dtype) if x.is_floating_point() else f(x)
    cases.append({"op": "Activation", "kind": kind, "alpha": alpha, "x": x, "y": y})


def binary(op, a, b, fn=None):
    f = fn or (BINARY[op] if a.is_floating_point() else INT_BINARY[op])
    y = f(a.double(), b.double()).to(a.dtype) if a.is_floating_point() else f(a, b)
    cases.append({"op": "Binary", "bop": op, "a": a, "b": b, "y": y})


def grid(values, dtype=D):
    v = torch.tensor(values, dtype=dtype)
    return v.reshape(-1, 1), v.reshape(1, -1)  # every pair, by broadcasting


# ---- Activation ------------------------------------------------------------------------------
for kind in ACTIVATIONS:
    lo, hi = (-0.999, 0.999) if kind in ("Atanh", "Asin", "Acos") else (-3.0, 3.0)
    activation(kind, rnd([2, 3, 5], lo, hi))
    activation(kind, torch.tensor(EDGES, dtype=D))
    for dt in LOW:
        activation(kind, rnd([3, 7], lo, hi, dt))
activation("LeakyRelu", rnd([2, 9]), 0.2, lambda x: F.leaky_relu(x, 0.2))
activation("Elu", rnd([2, 9]), 0.5, lambda x: F.elu(x, 0.5))
activation("LeakyRelu", rnd([5], dtype=torch.float16), -1.5, lambda x: F.leaky_relu(x, -1.5))
# Round: exact halves go to even.
activation("Round", torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, 1e16 + 2, 4.5], dtype=D))

for dt, lo, hi in [(torch.int8, -128, 128), (torch.uint8, 0, 256), (torch.int16, -3000, 3000),
                   (torch.int32, -100000, 100000), (torch.int64, -2**40, 2**40)]:
    info = torch.iinfo(dt)
    for kind in INT_ACTIVATIONS:
        x = torch.cat([torch.randint(lo, hi, (11,), dtype=dt),
                       torch.tensor([info.min, info.max, 0, 1], dtype=dt)])
        activation(kind, x)
    activation("Not", torch.cat([torch.randint(lo, hi, (6,), dtype=dt),
                                 torch.tensor([info.min, info.max, 0], dtype=dt)]),
               fn=torch.bitwise_not)
activation("Not", torch.tensor([True, False, True, True], dtype=torch.bool), fn=torch.logical_not)

# ---- Binary ----------------------------------------------------------------------------------
for i, op in enumerate(BINARY):
    sa, sb = SHAPES[i % len(SHAPES)]
    binary(op, rnd(sa), rnd(sb))
    a, b = grid(BIN_EDGES)
    binary(op, a, b)
    for dt in LOW:
        binary(op, rnd([3, 1, 5], dtype=dt), rnd([1, 4, 1], dtype=dt))
# Pow with integral exponents of negative bases, and large results.
binary("Pow", rnd([2, 5]), torch.tensor([0.0, 1.0, 2.0, 3.0, -2.0], dtype=D))
binary("Pow", torch.tensor([10.0, -10.0, 2.0, 0.0], dtype=D),
       torch.tensor([400.0, 401.0, -1080.0, -1.0], dtype=D))

for j, (dt, lo, hi) in enumerate([(torch.int8, -128, 128), (torch.uint8, 0, 256),
                                  (torch.int16, -30000, 30000), (torch.int32, -2**31, 2**31),
                                  (torch.int64, -2**62, 2**62)]):
    for i, op in enumerate(o for o in INT_BINARY if o != "Pow"):
        sa, sb = SHAPES[(i + j) % len(SHAPES)]
        a = torch.randint(lo, hi, sa, dtype=dt)
        b = torch.randint(lo, hi, sb, dtype=dt)
        if op in ("Div", "Mod", "FloorMod"):
            b[b == 0] = 1
        binary(op, a, b)
    # Small operands, so that quotients and remainders are interesting.
    for op in ("Div", "Mod", "FloorMod"):
        lo_s = 0 if dt == torch.uint8 else -9
        a = torch.randint(lo_s, 10, (3, 1, 5), dtype=dt)
        b = torch.randint(lo_s, 10, (1, 6, 1), dtype=dt)
        b[b == 0] = 3
        binary(op, a, b)
    # Exact powers with wraparound.
    binary("Pow", torch.randint(0 if dt == torch.uint8 else -5, 6, (4, 1), dtype=dt),
           torch.tensor([0, 1, 2, 5, 7, 13], dtype=dt))
    # Shifts by amounts inside the width.
    bits = torch.iinfo(dt).bits
    a = torch.randint(lo, hi, (2, 5), dtype=dt)
    s = torch.randint(0, bits, (5,), dtype=dt)
    binary("Shl", a, s, torch.bitwise_left_shift)
    binary("Shr", a, s, torch.bitwise_right_shift)
for op in ("BitAnd", "BitOr", "BitXor"):
    a, b = grid([False, True], torch.bool)
    binary(op, a, b)

# ---- Compare / Where -------------------------------------------------------------------------
for op, fn in COMPARE.items():
    a, b = grid(BIN_EDGES)
    cases.append({"op": "Compare", "cop": op, "a": a, "b": b, "y": fn(a, b)})
    a = torch.randint(-3, 4, (3, 1, 5), dtype=torch.int32)
    b = torch.randint(-3, 4, (1, 4, 1), dtype=torch.int32)
    cases.append({"op": "Compare", "cop": op, "a": a, "b": b, "y": fn(a, b)})
    a, b = grid([False, True], torch.bool)
    cases.append({"op": "Compare", "cop": op, "a": a, "b": b, "y": fn(a, b)})
    a, b = rnd([2, 3], dtype=torch.float16), rnd([3], dtype=torch.float16)
    b[1] = a[0, 1]
    cases.append({"op": "Compare", "cop": op, "a": a, "b": b, "y": fn(a, b)})

for cs, sa, sb, dt in [([3, 1, 5], [1, 7, 1], [7, 5], D), ([2, 3], [3], [], torch.int32),
                       ([4], [2, 4], [2, 1], torch.float16)]:
    c = torch.rand(tuple(cs)) > 0.5
    a = rnd(sa).to(dt) if dt.is_floating_point else torch.randint(-50, 50, sa, dtype=dt)
    b = rnd(sb).to(dt) if dt.is_floating_point else torch.randint(-50, 50, sb, dtype=dt)
    cases.append({"op": "Where", "cond": c, "a": a, "b": b, "y": torch.where(c, a, b)})

# ---- GatedActivation -------------------------------------------------------------------------
for kind, shape, axis in [("Silu", [2, 3, 8], -1), ("Sigmoid", [4, 6, 3], 1), ("Gelu", [6, 5], 0),
                          ("GeluApprox", [3, 10], -1), ("Relu", [2, 2, 6], 2),
                          ("Tanh", [2, 4, 3], -2), ("Identity", [5, 4], 1),
                          ("LeakyRelu", [3, 6], 1), ("Silu", [2, 1, 3, 2], 3)]:
    x = rnd(shape)
    a, b = x.chunk(2, dim=axis)
    y = ACTIVATIONS[kind](a) * b
    if kind == "Sigmoid":  # the same thing through F.glu with the halves swapped
        assert torch.allclose(y, F.glu(torch.cat([b, a], dim=axis), dim=axis))
    cases.append({"op": "GatedActivation", "kind": kind, "axis": axis, "x": x, "y": y})

# Every gate kind once, inside its domain, on alternating axes.
DOMAIN = {"Atanh": (-0.999, 0.999), "Asin": (-0.999, 0.999), "Acos": (-0.999, 0.999),
          "Acosh": (1.0, 3.0), "Log": (0.1, 3.0), "Sqrt": (0.1, 3.0), "Rsqrt": (0.1, 3.0),
          "Reciprocal": (0.1, 3.0), "Log1p": (-0.9, 3.0)}
for i, kind in enumerate(ACTIVATIONS):
    lo, hi = DOMAIN.get(kind, (-3.0, 3.0))
    axis = [-1, 0, 1][i % 3]
    x = rnd([4, 6] if axis != 0 else [6, 3], lo, hi)
    a, b = x.chunk(2, dim=axis)
    cases.append({"op": "GatedActivation", "kind": kind, "axis": axis, "x": x,
                  "y": ACTIVATIONS[kind](a) * b})

golden_io.write("elementwise", cases)
