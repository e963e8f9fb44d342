"""tessel.optim: the 20-step PyTorch goldens of the C++ tests (tests/goldens/optimizers.json,
written by tests/goldens/gen_optimizers.py) reproduced through the Python API, plus schedules,
clipping, loss scaling, checkpoints and errors."""
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

import tessel
from tessel import ops, optim

RTOL, ATOL = 1e-4, 1e-6  # the C++ tests' tolerance (tests/train/test_optimizers.cpp)
SOURCE = Path(os.environ.get("TESSEL_SOURCE_DIR", Path(__file__).resolve().parents[2]))


def _decode(t):
    data = [float(v) if isinstance(v, str) else v for v in t["data"]]
    return np.array(data, dtype=np.float32).reshape(t["shape"])


@pytest.fixture(scope="module")
def goldens():
    with open(SOURCE / "tests" / "goldens" / "optimizers.json") as f:
        return {c["name"]: c for c in json.load(f)["cases"]}


NAMES = ["w1", "b1", "w2", "b2"]


def init_params(goldens):
    return {n: tessel.Tensor(_decode(t)) for n, t in zip(NAMES, goldens["data"]["init"])}


def mlp_loss(p, x, y):
    h = ops.activation(ops.mat_mul(x, p["w1"]) + p["b1"], kind="Tanh")
    return ops.loss(ops.mat_mul(h, p["w2"]) + p["b2"], y, kind="Mse")


def train(goldens, opt, schedule=None, steps=20):
    x = tessel.Tensor(_decode(goldens["data"]["x"]))
    y = tessel.Tensor(_decode(goldens["data"]["y"]))
    vg = tessel.value_and_grad(mlp_loss)
    losses = []
    for s in range(steps):
        loss, grads = vg(opt.params, x, y)
        losses.append(loss.item())
        if schedule:
            opt.lr = schedule(s)
        opt.step(grads)
    assert vg.trace_count == 1
    return losses


def check(case, losses, params):
    np.testing.assert_allclose(losses, case["losses"], rtol=RTOL, atol=ATOL)
    for n, want in zip(NAMES, case["params"]):
        np.testing.assert_allclose(params[n].numpy(), _decode(want), rtol=RTOL, atol=ATOL,
                                   err_msg=n)


CASES = {
    "sgd": lambda p: optim.SGD(p, lr=0.1),
    "sgd_nesterov_wd": lambda p: optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True,
                                           weight_decay=0.01),
    "sgd_dampening": lambda p: optim.SGD(p, lr=0.05, momentum=0.8, dampening=0.3),
    "adam": lambda p: optim.Adam(p, lr=0.01),
    "adam_amsgrad_wd": lambda p: optim.Adam(p, lr=0.01, betas=(0.8, 0.99), weight_decay=0.05,
                                            amsgrad=True),
    "adamw": lambda p: optim.AdamW(p, lr=0.01, weight_decay=0.1),
    "adamax": lambda p: optim.Adamax(p, lr=0.02, weight_decay=0.01),
    "adagrad": lambda p: optim.Adagrad(p, lr=0.05, lr_decay=0.01, initial_accumulator_value=0.1),
    "adadelta": lambda p: optim.Adadelta(p, lr=1.0, rho=0.9, weight_decay=0.01),
    "rmsprop": lambda p: optim.RMSprop(p, lr=0.005),
    "rmsprop_centered_momentum": lambda p: optim.RMSprop(p, lr=0.002, alpha=0.9, momentum=0.5,
                                                         centered=True, weight_decay=0.01),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_twenty_steps_match_pytorch(goldens, name):
    opt = CASES[name](init_params(goldens))
    losses = train(goldens, opt)
    check(goldens[name], losses, opt.params)
    assert opt.step_count == 20 and opt.trace_count == 1


def test_cosine_schedule_every_step(goldens):
    case = goldens["sgd_momentum_cosine"]
    schedule = optim.cosine_annealing_lr(0.1, T_max=20, eta_min=0.001)
    np.testing.assert_allclose([schedule(t) for t in range(20)], case["lrs"], rtol=1e-12)
    opt = optim.SGD(init_params(goldens), lr=0.1, momentum=0.9)
    check(case, train(goldens, opt, schedule), opt.params)
    assert opt.trace_count == 1 and opt.lr == pytest.approx(schedule(19))


def test_lbfgs_matches_pytorch(goldens):
    case = goldens["lbfgs"]
    x = tessel.Tensor(_decode(goldens["data"]["x"]))
    y = tessel.Tensor(_decode(goldens["data"]["y"]))
    vg = tessel.value_and_grad(mlp_loss)
    opt = optim.LBFGS(init_params(goldens), lr=0.5, max_iter=2, history_size=10)
    losses = [opt.step(lambda p: vg(p, x, y)) for _ in range(20)]
    check(case, losses, opt.params)
    assert opt.iterations == case["n_iter"] and opt.evaluations == case["func_evals"]


def test_schedules_against_hand_math(goldens):
    for t in range(30):
        assert optim.step_lr(0.1, 7, 0.5)(t) == pytest.approx(0.1 * 0.5 ** (t // 7))
        assert optim.exponential_lr(0.1, 0.9)(t) == pytest.approx(0.1 * 0.9 ** t)
        assert optim.cosine_annealing_lr(0.1, 10, 0.01)(t) == pytest.approx(
            0.01 + 0.09 * (1 + math.cos(math.pi * t / 10)) / 2)
        assert optim.linear_lr(0.1, 0.1, 1.0, 5)(t) == pytest.approx(
            0.1 * (0.1 + 0.9 * min(t, 5) / 5))
        n = sum(t >= m for m in (5, 12, 20))
        assert optim.multi_step_lr(0.1, [5, 12, 20], 0.3)(t) == pytest.approx(0.1 * 0.3 ** n)
    warm = optim.sequential_lr([optim.linear_lr(0.1, 0.1, 1.0, 5),
                                optim.cosine_annealing_lr(0.1, 20)], [5])
    np.testing.assert_allclose([warm(t) for t in range(30)],
                               goldens["schedule_warmup_cosine"]["lrs"], rtol=1e-9)
    with pytest.raises(ValueError, match="step_size"):
        optim.step_lr(0.1, 0)


def test_clip_grad_norm_and_value(goldens):
    rng = np.random.default_rng(1)
    g = {"a": rng.normal(size=(3, 4)).astype(np.float32), "b": [rng.normal(size=5).astype(
        np.float32)]}
    total = math.sqrt(sum(float(np.sum(v.astype(np.float64) ** 2))
                          for v in (g["a"], g["b"][0])))
    clipped, norm = optim.clip_grad_norm({"a": tessel.Tensor(g["a"]),
                                          "b": [tessel.Tensor(g["b"][0])]}, max_norm=1.5)
    assert norm.item() == pytest.approx(total, rel=1e-5)
    scale = min(1.0, 1.5 / (total + 1e-6))
    np.testing.assert_allclose(clipped["a"].numpy(), g["a"] * scale, rtol=1e-5)
    np.testing.assert_allclose(clipped["b"][0].numpy(), g["b"][0] * scale, rtol=1e-5)
    _, inf_norm = optim.clip_grad_norm([tessel.Tensor(g["a"])], 1.0, norm_type="inf")
    assert inf_norm.item() == pytest.approx(np.abs(g["a"]).max())
    by_value = optim.clip_grad_value({"a": tessel.Tensor(g["a"])}, 0.7)
    np.testing.assert_allclose(by_value["a"].numpy(), np.clip(g["a"], -0.7, 0.7))
    for case in (c for c in goldens.values() if c["name"] == "clip_norm"):
        norm_type = math.inf if case["norm_type"] == "inf" else case["norm_type"]
        out, total_norm = optim.clip_grad_norm([tessel.Tensor(_decode(v)) for v in case["grads"]],
                                               case["max_norm"], norm_type)
        assert total_norm.item() == pytest.approx(_decode(case["total_norm"]), rel=1e-5)
        for o, want in zip(out, case["clipped"]):
            np.testing.assert_allclose(o.numpy(), _decode(want), rtol=1e-5, atol=1e-6)


def test_state_dict_round_trip(goldens):
    a = optim.Adam(init_params(goldens), lr=0.01)
    train(goldens, a, steps=3)
    sd = a.state_dict()
    assert "w1.exp_avg" in sd and "b2.exp_avg_sq" in sd and int(sd["step"].item()) == 3
    assert a.state_names == ["exp_avg", "exp_avg_sq"]
    assert set(a.state()["exp_avg"]) == set(NAMES)
    b = optim.Adam(init_params(goldens), lr=0.01)
    b.load_state_dict(sd)
    b.params = a.params
    la, lb = train(goldens, a, steps=3), train(goldens, b, steps=3)
    np.testing.assert_allclose(la, lb, rtol=1e-6)
    with pytest.raises(ValueError):
        b.load_state_dict({"nope": tessel.Tensor(1.0)})


def test_mismatched_grads_are_clear_errors(goldens):
    opt = optim.SGD(init_params(goldens), lr=0.1)
    good = {n: tessel.Tensor(np.zeros(t.shape, np.float32)) for n, t in opt.params.items()}
    with pytest.raises(ValueError, match="structure"):
        opt.step({k: v for k, v in good.items() if k != "b1"})
    with pytest.raises(ValueError, match="structure"):
        opt.step([good[n] for n in NAMES])
    with pytest.raises(ValueError):
        opt.step(dict(good, w1=tessel.Tensor(np.zeros((2, 2), np.float32))))
    with pytest.raises(TypeError, match="'w1'"):
        opt.step(dict(good, w1="oops"))
    with pytest.raises(ValueError, match="betas"):
        optim.Adam(init_params(goldens), betas=0.9)
    with pytest.raises(ValueError):
        optim.Adam(init_params(goldens), lr=-1.0)
    with pytest.raises(TypeError):
        optim.SGD({"w": tessel.Tensor([1, 2])}, lr=0.1)


def test_lbfgs_bad_closure():
    opt = optim.LBFGS({"w": tessel.Tensor([1.0, 2.0])})
    with pytest.raises(TypeError, match="loss, grads"):
        opt.step(lambda p: 3.0)
    with pytest.raises(ValueError, match="structure"):
        opt.step(lambda p: (tessel.Tensor(1.0), [p["w"]]))


def test_paper_optimizers_run_and_reduce_the_loss(goldens):
    for make in (lambda p: optim.Lion(p, lr=1e-3, weight_decay=0.1),
                 lambda p: optim.Lamb(p, lr=0.01, weight_decay=0.01),
                 lambda p: optim.Lars(p, lr=0.5, weight_decay=1e-3)):
        opt = make(init_params(goldens))
        losses = train(goldens, opt)
        assert losses[-1] < losses[0]


def test_loss_scaler():
    s = optim.LossScaler(init_scale=8.0, growth_interval=2)
    g = s.unscale({"a": tessel.Tensor([8.0, 16.0])})
    np.testing.assert_allclose(g["a"].numpy(), [1.0, 2.0])
    assert s.unscale({"a": tessel.Tensor([math.inf, 1.0])}) is None
    assert s.skipped_steps == 1 and s.scale == 4.0


def test_hebbian_update_plain():
    rng = np.random.default_rng(2)
    w = rng.normal(size=(3, 2)).astype(np.float32)
    pre = rng.normal(size=(4, 3)).astype(np.float32)
    post = rng.normal(size=(4, 2)).astype(np.float32)
    out = optim.hebbian_update(tessel.Tensor(w), tessel.Tensor(pre), tessel.Tensor(post), 0.1,
                               rule="plain", weight_decay=0.01)
    want = w + 0.1 * pre.T @ post / 4 - 0.1 * 0.01 * w
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="rule"):
        optim.hebbian_update(tessel.Tensor(w), tessel.Tensor(pre), tessel.Tensor(post), 0.1,
                             rule="nope")
