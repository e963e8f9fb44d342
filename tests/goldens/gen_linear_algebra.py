"""Goldens for the ready LinearAlgebra kinds: MatMul (every numpy broadcast case, transposes),
DotGeneral (batch / contract / outer), GroupedMatMul, LoraMatMul and Einsum (explicit, implicit,
diagonal, trace, ellipsis broadcasting, several operands).

Run with /usr/bin/python3 (Debian's python3-torch 1.13); writes tests/goldens/linear_algebra.json.
A case is {"kind", "name", "attrs", "inputs": [tensors], "output": tensor}; attrs use the
ops.def attribute names.
"""
import torch

import golden_io

torch.manual_seed(20240612)
D = torch.float64


def rnd(*shape):
    """Multiples of 1/256: exact in every float dtype the tests cast them to, short in JSON."""
    return torch.round(torch.randn(*shape, dtype=D) * 256) / 256


cases = []


def case(kind, name, attrs, inputs, output):
    cases.append({"kind": kind, "name": name, "attrs": attrs, "inputs": inputs, "output": output})


# MatMul: numpy matmul semantics; transposes swap the last two dims of an operand.
for name, sa, sb, ta, tb in [
    ("1d_1d", [5], [5], False, False),
    ("1d_2d", [3], [3, 4], False, False),
    ("2d_1d", [3, 4], [4], False, False),
    ("2d_2d_odd", [3, 5], [5, 7], False, False),
    ("batched_broadcast", [2, 1, 3, 4], [5, 4, 2], False, False),
    ("both_broadcast", [3, 1, 2, 4], [1, 5, 4, 3], False, False),
    ("1d_batched", [4], [2, 4, 3], False, False),
    ("batched_1d", [2, 3, 4], [4], False, False),
    ("transpose_a", [2, 4, 3], [4, 5], True, False),
    ("transpose_b", [3, 4], [2, 5, 4], False, True),
    ("transpose_both", [4, 3], [5, 4], True, True),
    ("transpose_b_1d_a", [4], [5, 4], False, True),
]:
    a, b = rnd(*sa), rnd(*sb)
    y = torch.matmul(a.transpose(-1, -2) if ta else a, b.transpose(-1, -2) if tb else b)
    case("MatMul", name, {"transpose_a": ta, "transpose_b": tb}, [a, b], y)

# DotGeneral (XLA): batch dims, then lhs free, then rhs free dims.
for name, sa, sb, lb, rb, lc, rc, eq in [
    ("batch_matmul", [2, 3, 4], [2, 4, 5], [0], [0], [2], [1], "bij,bjk->bik"),
    ("outer", [3], [4], [], [], [], [], "i,j->ij"),
    ("outer_matrices", [2, 3], [4], [], [], [], [], "ij,k->ijk"),
    ("two_contract_batch_last", [2, 3, 4, 5], [5, 3, 2, 6], [0], [2], [3, 1], [0, 1],
     "bckd,dcbe->bke"),
    ("batch_order", [2, 3, 4], [4, 3, 2], [1, 0], [1, 2], [2], [0], "ijk,kji->ji"),
    ("full_contraction", [3, 4], [3, 4], [], [], [0, 1], [0, 1], "ij,ij->"),
    ("free_dims_ascending", [4, 2, 3], [3, 5], [], [], [2], [0], "kij,jl->kil"),
]:
    a, b = rnd(*sa), rnd(*sb)
    case("DotGeneral", name,
         {"lhs_batch": lb, "rhs_batch": rb, "lhs_contract": lc, "rhs_contract": rc}, [a, b],
         torch.einsum(eq, a, b))

# GroupedMatMul: y[t] = x[t] @ w[ids[t]].
for name, ids_dtype in [("ids_i64", torch.int64), ("ids_i32", torch.int32)]:
    x, w = rnd(7, 3), rnd(3, 3, 5)
    ids = torch.tensor([2, 0, 2, 1, 0, 2, 1], dtype=ids_dtype)
    y = torch.stack([x[t] @ w[ids[t]] for t in range(7)])
    case("GroupedMatMul", name, {}, [x, w, ids], y)

# LoraMatMul: x W + scale (x A) B.
for name, sx, scale in [("batched_scale_half", [2, 3, 5], 0.5), ("vector_default_scale", [5], 1.0),
                        ("matrix_scale_neg", [3, 5], -2.0)]:
    x, w, a, b = rnd(*sx), rnd(5, 4), rnd(5, 2), rnd(2, 4)
    case("LoraMatMul", name, {"scale": scale}, [x, w, a, b], x @ w + scale * (x @ a) @ b)

# Einsum.
for name, eq, shapes in [
    ("matmul", "ij,jk->ik", [[3, 4], [4, 5]]),
    ("implicit_matmul", "ij,jk", [[3, 4], [4, 2]]),
    ("implicit_transpose", "ba", [[3, 2]]),
    ("implicit_uppercase_first", "Ab,bC", [[2, 3], [3, 4]]),
    ("diagonal", "ii->i", [[4, 4]]),
    ("trace", "ii", [[4, 4]]),
    ("diagonal_3d", "iij->ji", [[3, 3, 2]]),
    ("batched", "bij,bjk->bik", [[2, 3, 4], [2, 4, 5]]),
    ("ellipsis_broadcast", "...ij,...jk->...ik", [[2, 1, 3, 4], [5, 4, 2]]),
    ("ellipsis_implicit", "...ij,...jk", [[2, 3, 4], [4, 3]]),
    ("ellipsis_leading_label", "i...->...i", [[3, 2, 4]]),
    ("outer", "i,j->ij", [[3], [4]]),
    ("sum_all", "ij->", [[3, 4]]),
    ("three_operands", "abc,cd,de->abe", [[2, 3, 4], [4, 5], [5, 3]]),
    ("hadamard", "ij,ij->ij", [[3, 4], [3, 4]]),
    ("label_broadcast", "ij,jk->ik", [[2, 1], [3, 2]]),
    ("permute", "abc->cab", [[2, 3, 4]]),
]:
    xs = [rnd(*s) for s in shapes]
    case("Einsum", name, {"equation": eq}, xs, torch.einsum(eq, *xs))

golden_io.write("linear_algebra", cases)
