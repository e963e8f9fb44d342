"""Goldens for tessel::Optimizer, LBFGS, the learning-rate schedules and gradient clipping.

Run with /usr/bin/python3 (Debian's python3-torch 1.13); writes tests/goldens/optimizers.json.

Training cases: 20 steps of a 2-layer MLP in float32, y = tanh(x·W1 + b1)·W2 + b2 (weights
stored [in, out] as Tessel's linear takes them), MSE loss against fixed targets. The initial
weights and the data are generated here and stored, so the C++ test starts from the same values;
each case stores its options, the loss before every step and the parameters after 20 steps.
"""
import math

import torch

import golden_io

torch.manual_seed(20240612)
F32 = torch.float32
STEPS = 20

X = torch.randn(32, 8, dtype=F32)
Y = torch.randn(32, 4, dtype=F32)
INIT = [torch.randn(8, 16, dtype=F32) * 0.4, torch.randn(16, dtype=F32) * 0.1,
        torch.randn(16, 4, dtype=F32) * 0.4, torch.randn(4, dtype=F32) * 0.1]


def loss_of(params):
    w1, b1, w2, b2 = params
    return torch.mean((torch.tanh(X @ w1 + b1) @ w2 + b2 - Y) ** 2)


def fresh():
    return [p.clone().requires_grad_(True) for p in INIT]


cases = [{"name": "data", "x": X, "y": Y, "init": INIT}]


def train(name, make, options, schedule=None):
    params = fresh()
    opt = make(params)
    sched = schedule(opt) if schedule else None
    losses, lrs = [], []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = loss_of(params)
        loss.backward()
        losses.append(loss.item())
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        if sched:
            sched.step()
    case = {"name": name, "options": options, "losses": losses, "params": params}
    if sched:
        case["lrs"] = lrs
    cases.append(case)


O = torch.optim
train("sgd", lambda p: O.SGD(p, lr=0.1), {"kind": "Sgd", "lr": 0.1})
train("sgd_nesterov_wd", lambda p: O.SGD(p, lr=0.05, momentum=0.9, nesterov=True,
                                         weight_decay=0.01),
      {"kind": "Sgd", "lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01})
train("sgd_dampening", lambda p: O.SGD(p, lr=0.05, momentum=0.8, dampening=0.3),
      {"kind": "Sgd", "lr": 0.05, "momentum": 0.8, "dampening": 0.3})
train("adam", lambda p: O.Adam(p, lr=0.01), {"kind": "Adam", "lr": 0.01})
train("adam_amsgrad_wd", lambda p: O.Adam(p, lr=0.01, betas=(0.8, 0.99), weight_decay=0.05,
                                          amsgrad=True),
      {"kind": "Adam", "lr": 0.01, "beta1": 0.8, "beta2": 0.99, "weight_decay": 0.05,
       "amsgrad": True})
train("adamw", lambda p: O.AdamW(p, lr=0.01, weight_decay=0.1),
      {"kind": "AdamW", "lr": 0.01, "weight_decay": 0.1})
train("adamax", lambda p: O.Adamax(p, lr=0.02, weight_decay=0.01),
      {"kind": "Adamax", "lr": 0.02, "weight_decay": 0.01})
train("adagrad", lambda p: O.Adagrad(p, lr=0.05, lr_decay=0.01, initial_accumulator_value=0.1),
      {"kind": "Adagrad", "lr": 0.05, "lr_decay": 0.01, "initial_accumulator_value": 0.1,
       "eps": 1e-10})
train("adadelta", lambda p: O.Adadelta(p, lr=1.0, rho=0.9, weight_decay=0.01),
      {"kind": "Adadelta", "lr": 1.0, "beta2": 0.9, "eps": 1e-6, "weight_decay": 0.01})
train("rmsprop", lambda p: O.RMSprop(p, lr=0.005), {"kind": "RmsProp", "lr": 0.005,
                                                    "beta2": 0.99})
train("rmsprop_centered_momentum",
      lambda p: O.RMSprop(p, lr=0.002, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.01),
      {"kind": "RmsProp", "lr": 0.002, "beta2": 0.9, "momentum": 0.5, "centered": True,
       "weight_decay": 0.01})
train("sgd_momentum_cosine", lambda p: O.SGD(p, lr=0.1, momentum=0.9),
      {"kind": "Sgd", "lr": 0.1, "momentum": 0.9},
      schedule=lambda o: O.lr_scheduler.CosineAnnealingLR(o, T_max=STEPS, eta_min=0.001))


def train_lbfgs(name, lr, max_iter, history_size):
    params = fresh()
    opt = O.LBFGS(params, lr=lr, max_iter=max_iter, history_size=history_size)
    losses = []

    def closure():
        opt.zero_grad()
        loss = loss_of(params)
        loss.backward()
        return loss

    for _ in range(STEPS):
        losses.append(opt.step(closure).item())
    state = opt.state[params[0]]
    cases.append({"name": name, "options": {"lr": lr, "max_iter": max_iter,
                                            "history_size": history_size},
                  "losses": losses, "params": params, "n_iter": state["n_iter"],
                  "func_evals": state["func_evals"]})


# Two iterations a step: with more, float32 rounding alone (torch f32 vs f64) moves the
# parameters by ~1e-3 as the loss nears zero, so no f32 implementation could match to 1e-4.
train_lbfgs("lbfgs", 0.5, 2, 10)


# Schedules: the lr of epochs 0..29 with base lr 0.1, stepping once per epoch.
def schedule_case(name, make, args):
    p = torch.zeros(1, requires_grad=True)
    opt = O.SGD([p], lr=0.1)
    sched = make(opt)
    lrs = []
    for _ in range(30):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    cases.append({"name": "schedule_" + name, "args": args, "lrs": lrs})


S = O.lr_scheduler
schedule_case("step", lambda o: S.StepLR(o, step_size=7, gamma=0.5), {"step_size": 7, "gamma": 0.5})
schedule_case("multi_step", lambda o: S.MultiStepLR(o, milestones=[5, 12, 20], gamma=0.3),
              {"milestones": [5, 12, 20], "gamma": 0.3})
schedule_case("exponential", lambda o: S.ExponentialLR(o, gamma=0.9), {"gamma": 0.9})
schedule_case("cosine", lambda o: S.CosineAnnealingLR(o, T_max=10, eta_min=0.01),
              {"t_max": 10, "eta_min": 0.01})
schedule_case("linear", lambda o: S.LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=5),
              {"start_factor": 0.1, "end_factor": 1.0, "total_iters": 5})
schedule_case("warmup_cosine",
              lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=5),
                                           S.CosineAnnealingLR(o, T_max=20)], milestones=[5]),
              {"start_factor": 0.1, "warmup": 5, "t_max": 20})

# Clipping: three gradients, clipped by their total norm (2, inf, 3) and by value.
grads = [torch.randn(3, 4, dtype=F32) * 2, torch.randn(5, dtype=F32), torch.randn(2, 2, dtype=F32)]
for norm_type in (2.0, math.inf, 3.0):
    gs = [g.clone().requires_grad_(True) for g in grads]
    for g, v in zip(gs, grads):
        g.grad = v.clone()
    total = torch.nn.utils.clip_grad_norm_(gs, max_norm=1.5, norm_type=norm_type)
    cases.append({"name": "clip_norm", "norm_type": "inf" if math.isinf(norm_type) else norm_type,
                  "max_norm": 1.5, "grads": grads, "total_norm": total,
                  "clipped": [g.grad for g in gs]})
gs = [g.clone().requires_grad_(True) for g in grads]
for g, v in zip(gs, grads):
    g.grad = v.clone()
torch.nn.utils.clip_grad_value_(gs, clip_value=0.7)
cases.append({"name": "clip_value", "clip_value": 0.7, "grads": grads,
              "clipped": [g.grad for g in gs]})

golden_io.write("optimizers", cases)
