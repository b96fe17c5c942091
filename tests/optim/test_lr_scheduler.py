"""Learning-rate schedules step for step against torch.optim.lr_scheduler: every group's lr
(and momentum or betas where a schedule cycles them) after each step, three param groups,
and state_dict round trips that continue exactly where the saved schedule would have."""

import copy
import math
import warnings

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.optim import lr_scheduler as sched

LRS = [0.1, 0.03, 0.5]


def groups(make, extra=None):
    out = [{"params": [make(np.zeros(1))], "lr": lr} for lr in LRS]
    for g, e in zip(out, extra or [{}] * len(out), strict=True):
        g.update(e)
    return out


def optimizers(kind="sgd", extra=None, **options):
    """The same optimizer over three param groups in chainrule and in torch."""
    ours_cls = {"sgd": cr.optim.SGD, "adam": cr.optim.Adam}[kind]
    theirs_cls = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}[kind]
    ours = ours_cls(groups(lambda a: cr.tensor(a, requires_grad=True), extra), **options)
    theirs = theirs_cls(groups(lambda a: torch.tensor(a, requires_grad=True), extra), **options)
    return ours, theirs


def make(module, name, opt, options):
    """A schedule by name; a ``make_*`` entry in options builds a list of schedules first."""
    options = dict(options)
    if "schedulers" in options:
        options["schedulers"] = [make(module, n, opt, o) for n, o in options["schedulers"]]
    return getattr(module, name)(opt, **options)


def assert_groups_equal(opt, topt, keys):
    for g, tg in zip(opt.param_groups, topt.param_groups, strict=True):
        for key in keys:
            np.testing.assert_allclose(g[key], tg[key], rtol=1e-13, atol=1e-15, err_msg=key)


def run_both(name, options, steps, kind="sgd", opt_options=None, keys=("lr",), extra=None):
    opt, topt = optimizers(kind, extra, **(opt_options or {}))
    ours = make(sched, name, opt, copy.deepcopy(options))
    theirs = make(torch.optim.lr_scheduler, name, topt, copy.deepcopy(options))
    np.testing.assert_allclose(ours.get_last_lr(), theirs.get_last_lr(), rtol=1e-13)
    assert_groups_equal(opt, topt, keys)
    for _ in range(steps):
        opt.step()
        topt.step()
        ours.step()
        theirs.step()
        np.testing.assert_allclose(ours.get_last_lr(), theirs.get_last_lr(), rtol=1e-13)
        assert_groups_equal(opt, topt, keys)
        assert ours.get_last_lr() == [g["lr"] for g in opt.param_groups]
    return ours, theirs


SCHEDULES = [
    ("LambdaLR", dict(lr_lambda=lambda e: 0.9**e)),
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("StepLR", dict(step_size=1)),
    ("ExponentialLR", dict(gamma=0.8)),
    ("CosineAnnealingLR", dict(T_max=5, eta_min=0.005)),
    ("CosineAnnealingLR", dict(T_max=1)),
    ("LinearLR", dict()),
    ("LinearLR", dict(start_factor=1.0, end_factor=0.05, total_iters=9)),
    ("LinearLR", dict(start_factor=0.25, end_factor=0.75, total_iters=1)),
    (
        "SequentialLR",
        dict(
            schedulers=[
                ("LinearLR", dict(start_factor=0.1, total_iters=4)),
                ("CosineAnnealingLR", dict(T_max=10, eta_min=0.001)),
            ],
            milestones=[4],
        ),
    ),
    (
        "SequentialLR",
        dict(
            schedulers=[
                ("ExponentialLR", dict(gamma=0.9)),
                ("StepLR", dict(step_size=2, gamma=0.3)),
                ("LambdaLR", dict(lr_lambda=lambda e: 1 / (e + 1))),
            ],
            milestones=[3, 9],
        ),
    ),
    (
        "SequentialLR",
        dict(schedulers=[("ExponentialLR", dict(gamma=0.5))], milestones=[]),
    ),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(SCHEDULES)]


@pytest.mark.parametrize("name,options", SCHEDULES, ids=IDS)
def test_schedule_matches_torch(name, options):
    ours, theirs = run_both(name, options, 25)
    assert ours.last_epoch == theirs.last_epoch


@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step()`")
def test_nested_sequential_matches_torch():
    for module, opt in zip((sched, torch.optim.lr_scheduler), optimizers(), strict=True):
        inner = module.SequentialLR(
            opt,
            [module.LinearLR(opt, total_iters=3), module.ExponentialLR(opt, gamma=0.7)],
            milestones=[3],
        )
        outer = module.SequentialLR(
            opt, [inner, module.StepLR(opt, step_size=2, gamma=0.5)], milestones=[7]
        )
        lrs = [outer.get_last_lr()]
        for _ in range(15):
            opt.step()
            outer.step()
            lrs.append(outer.get_last_lr())
        if module is sched:
            ours = lrs
    np.testing.assert_allclose(ours, lrs, rtol=1e-13)


@pytest.mark.parametrize("name,options", SCHEDULES[1:9], ids=IDS[1:9])
def test_step_with_epoch_uses_the_closed_form_as_torch(name, options):
    opt, topt = optimizers()
    ours, theirs = (
        getattr(sched, name)(opt, **options),
        getattr(torch.optim.lr_scheduler, name)(topt, **options),
    )
    for epoch in [3, 4, 10, 2]:
        with pytest.warns(UserWarning, match="epoch parameter"):
            ours.step(epoch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs.step(epoch)
        np.testing.assert_allclose(ours.get_last_lr(), theirs.get_last_lr(), rtol=1e-13)
        assert ours.last_epoch == epoch


ONE_CYCLE = [
    ("sgd", dict(momentum=0.9), dict(max_lr=1.0, total_steps=20)),
    ("sgd", dict(momentum=0.9), dict(max_lr=[1.0, 0.2, 0.05], epochs=3, steps_per_epoch=7)),
    ("sgd", dict(momentum=0.9), dict(max_lr=0.5, total_steps=17, anneal_strategy="linear")),
    ("sgd", dict(momentum=0.9), dict(max_lr=0.5, total_steps=30, three_phase=True)),
    (
        "sgd",
        dict(momentum=0.9),
        dict(
            max_lr=0.5,
            total_steps=16,
            pct_start=0.5,
            base_momentum=[0.8, 0.7, 0.6],
            max_momentum=0.99,
            div_factor=10.0,
            final_div_factor=100.0,
            three_phase=True,
            anneal_strategy="linear",
        ),
    ),
    ("sgd", dict(), dict(max_lr=0.3, total_steps=12, cycle_momentum=False)),
    ("adam", dict(), dict(max_lr=0.01, total_steps=15)),
    ("adam", dict(betas=(0.8, 0.99)), dict(max_lr=0.01, total_steps=10, pct_start=0.0)),
]


@pytest.mark.parametrize("kind,opt_options,options", ONE_CYCLE)
def test_one_cycle_matches_torch(kind, opt_options, options):
    if options.get("cycle_momentum", True):
        keys = ("lr", "betas") if kind == "adam" else ("lr", "momentum")
    else:
        keys = ("lr", "initial_lr", "max_lr", "min_lr")
    steps = options.get("total_steps") or options["epochs"] * options["steps_per_epoch"]
    ours, theirs = run_both("OneCycleLR", options, steps - 1, kind, opt_options, keys)
    # one step more than total_steps is an error, as in torch
    ours.step()
    theirs.step()
    message = f"OneCycleLR: stepped {steps + 1} times; total_steps is {steps}"
    with pytest.raises(ValueError, match=message):
        ours.step()
    with pytest.raises(ValueError, match=f"Tried to step {steps + 1} times"):
        theirs.step()


def test_one_cycle_errors():
    opt, _ = optimizers(momentum=0.9)
    with pytest.raises(ValueError, match="give total_steps, or epochs and steps_per_epoch"):
        sched.OneCycleLR(opt, max_lr=1.0, epochs=3)
    with pytest.raises(ValueError, match="total_steps must be a positive int; got 0"):
        sched.OneCycleLR(opt, max_lr=1.0, total_steps=0)
    with pytest.raises(ValueError, match=r"pct_start must be a float in \[0, 1\]; got 1.5"):
        sched.OneCycleLR(opt, max_lr=1.0, total_steps=5, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy must be 'cos' or 'linear'"):
        sched.OneCycleLR(opt, max_lr=1.0, total_steps=5, anneal_strategy="exp")
    with pytest.raises(ValueError, match="max_lr must have one value per param group; got 2"):
        sched.OneCycleLR(opt, max_lr=[1.0, 2.0], total_steps=5)
    rms = cr.optim.RMSprop([cr.zeros(1, requires_grad=True)])
    with pytest.raises(ValueError, match="cycle_momentum needs an optimizer with momentum"):
        sched.OneCycleLR(_no_momentum(), max_lr=1.0, total_steps=5)
    sched.OneCycleLR(rms, max_lr=1.0, total_steps=5)  # RMSprop has momentum


def _no_momentum():
    """An optimizer whose defaults have neither momentum nor betas."""

    class Plain(cr.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, dict(lr=0.1))

    return Plain([cr.zeros(1, requires_grad=True)])


PLATEAU = [
    dict(),
    dict(patience=2, factor=0.5),
    dict(mode="max", patience=1, factor=0.3, threshold=0.05),
    dict(patience=0, threshold=0.2, threshold_mode="abs", cooldown=2),
    dict(mode="max", patience=1, threshold=0.1, threshold_mode="abs", min_lr=[0.01, 0.0, 0.2]),
    dict(patience=0, factor=0.5, min_lr=0.02, eps=0.01),
]


@pytest.mark.parametrize("options", PLATEAU)
def test_reduce_on_plateau_matches_torch(options):
    opt, topt = optimizers()
    ours = sched.ReduceLROnPlateau(opt, **options)
    theirs = torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **options)
    rng = np.random.default_rng(0)
    # a metric that falls, stalls with noise, jumps, and falls again
    metrics = np.concatenate(
        [np.linspace(1.0, 0.5, 6), 0.5 + 0.02 * rng.standard_normal(25), np.linspace(0.7, 0.1, 8)]
    )
    for i, m in enumerate(metrics):
        value = cr.tensor(m) if i % 2 else float(m)  # a number or a one-element tensor
        ours.step(value)
        theirs.step(float(m))
        assert ours.get_last_lr() == theirs.get_last_lr()
        assert (ours.best, ours.num_bad_epochs, ours.cooldown_counter, ours.last_epoch) == (
            theirs.best,
            theirs.num_bad_epochs,
            theirs.cooldown_counter,
            theirs.last_epoch,
        )
    assert ours.get_last_lr() != LRS  # the metric's stall did reduce the lrs


def test_reduce_on_plateau_errors_and_new_groups():
    opt, _ = optimizers()
    with pytest.raises(ValueError, match="factor must be < 1.0; got 1.0"):
        sched.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode must be 'min' or 'max'; got 'mean'"):
        sched.ReduceLROnPlateau(opt, mode="mean")
    with pytest.raises(ValueError, match="threshold_mode must be 'rel' or 'abs'; got 'x'"):
        sched.ReduceLROnPlateau(opt, threshold_mode="x")
    with pytest.raises(ValueError, match="expected 3 min_lrs, one per param group; got 2"):
        sched.ReduceLROnPlateau(opt, min_lr=[0.0, 0.0])
    # a group added later takes the single min_lr; a list of min_lrs cannot stretch
    s = sched.ReduceLROnPlateau(opt, patience=0)
    opt.add_param_group({"params": [cr.zeros(1, requires_grad=True)], "lr": 1.0})
    s.step(1.0)
    s.step(2.0)
    assert s.get_last_lr() == pytest.approx([0.01, 0.003, 0.05, 0.1])
    opt, _ = optimizers()
    s = sched.ReduceLROnPlateau(opt, patience=0, min_lr=[0.0, 0.0, 0.0])
    opt.add_param_group({"params": [cr.zeros(1, requires_grad=True)], "lr": 1.0})
    s.step(1.0)
    with pytest.raises(RuntimeError, match="has 4 param groups and min_lrs 3 values"):
        s.step(2.0)


def test_sequential_errors():
    opt, _ = optimizers()
    other, _ = optimizers()
    a, b = sched.ExponentialLR(opt, gamma=0.5), sched.StepLR(opt, step_size=2)
    with pytest.raises(ValueError, match="expected at least one scheduler; got none"):
        sched.SequentialLR(opt, [], [])
    with pytest.raises(ValueError, match="expected one milestone fewer than schedulers; got 2"):
        sched.SequentialLR(opt, [a, b], [])
    with pytest.raises(ValueError, match=r"schedulers\[1\] \(ExponentialLR\) on another"):
        sched.SequentialLR(opt, [a, sched.ExponentialLR(other, gamma=0.5)], [2])
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        sched.SequentialLR(opt, [a, sched.ReduceLROnPlateau(opt)], [2])
    with pytest.raises(TypeError, match=r"schedulers\[0\] must be an LRScheduler; got int"):
        sched.SequentialLR(opt, [3], [])
    with pytest.raises(ValueError, match=r"start_factor must be in \(0, 1\]; got 0"):
        sched.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match=r"end_factor must be in \[0, 1\]; got 1.5"):
        sched.LinearLR(opt, end_factor=1.5)


# -- state_dict round trips ----------------------------------------------------------------

ROUND_TRIPS = [
    ("sgd", {}, name, options)
    for name, options in SCHEDULES
    if name != "LambdaLR" and not (name == "SequentialLR" and "LambdaLR" in str(options))
] + [
    ("sgd", dict(momentum=0.9), "OneCycleLR", dict(max_lr=1.0, total_steps=30)),
    ("adam", {}, "OneCycleLR", dict(max_lr=0.1, total_steps=30, three_phase=True)),
]


@pytest.mark.parametrize("kind,opt_options,name,options", ROUND_TRIPS)
def test_state_dict_round_trip(kind, opt_options, name, options):
    """Save after 7 steps; a fresh optimizer and schedule that load both states go on with
    exactly the lrs (and momenta) the saved one goes on with."""
    keys = ("lr", "momentum") if "momentum" in opt_options else ("lr",)

    def fresh():
        opt, _ = optimizers(kind, **opt_options)
        return opt, make(sched, name, opt, copy.deepcopy(options))

    opt, s = fresh()
    for _ in range(7):
        s.step()
    saved_opt, saved = copy.deepcopy(opt.state_dict()), copy.deepcopy(s.state_dict())
    assert "optimizer" not in saved
    expected = []
    for _ in range(12):
        s.step()
        expected.append([[g[k] for k in keys] for g in opt.param_groups] + [s.get_last_lr()])

    opt2, s2 = fresh()
    opt2.load_state_dict(saved_opt)
    s2.load_state_dict(saved)
    got = []
    for _ in range(12):
        s2.step()
        got.append([[g[k] for k in keys] for g in opt2.param_groups] + [s2.get_last_lr()])
    assert got == expected


def test_reduce_on_plateau_state_dict_round_trip():
    metrics = [1.0, 0.9, 0.95, 0.93, 0.96, 0.97, 0.99, 0.98, 0.97, 0.96, 1.0, 0.99]

    def fresh():
        opt, _ = optimizers()
        return opt, sched.ReduceLROnPlateau(opt, patience=1, cooldown=1, factor=0.5)

    opt, s = fresh()
    for m in metrics[:5]:
        s.step(m)
    saved_opt, saved = copy.deepcopy(opt.state_dict()), copy.deepcopy(s.state_dict())
    assert "optimizer" not in saved and saved["num_bad_epochs"] == s.num_bad_epochs
    expected = []
    for m in metrics[5:]:
        s.step(m)
        expected.append(s.get_last_lr())
    opt2, s2 = fresh()
    opt2.load_state_dict(saved_opt)
    s2.load_state_dict(saved)
    got = []
    for m in metrics[5:]:
        s2.step(m)
        got.append(s2.get_last_lr())
    assert got == expected and len(set(map(tuple, got))) > 1


def test_sequential_state_dict_holds_each_schedule():
    opt, _ = optimizers()
    s = sched.SequentialLR(
        opt,
        [sched.LinearLR(opt, total_iters=2), sched.LambdaLR(opt, lambda e: 0.5**e)],
        milestones=[2],
    )
    sd = s.state_dict()
    assert [d["lr_lambdas"] for d in sd["_schedulers"] if "lr_lambdas" in d] == [[None] * 3]
    assert "optimizer" not in sd and sd["_milestones"] == [2]
    assert math.isclose(sd["_schedulers"][0]["start_factor"], 1 / 3)
