"""Optimizers and lr schedules step for step against torch.optim (float64, seeded)."""

import itertools
import math

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.optim import SGD, Adam, AdamW, RMSprop
from chainrule.optim import lr_scheduler as sched

TORCH = {
    SGD: torch.optim.SGD,
    Adam: torch.optim.Adam,
    AdamW: torch.optim.AdamW,
    RMSprop: torch.optim.RMSprop,
}


def problem(seed=0):
    """Least squares in W (3, 4) and b (3,), plus c (2,) under sum(sin(c)); c gets no
    gradient on every third step."""
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((8, 4)), rng.standard_normal((8, 3))
    init = [rng.standard_normal((3, 4)), rng.standard_normal(3), rng.standard_normal(2)]

    def grads(step, w, b, c):
        r = x @ w.T + b - y  # (8, 3)
        return [2 * r.T @ x / 8, 2 * r.sum(0) / 8, None if step % 3 == 2 else np.cos(c)]

    return init, grads


def run_both(cls, options, steps=10, groups=None, seed=0):
    init, grads = problem(seed)
    ours = [cr.tensor(a, requires_grad=True) for a in init]
    theirs = [torch.tensor(a, requires_grad=True) for a in init]
    if groups is None:
        opt, topt = cls(ours, **options), TORCH[cls](theirs, **options)
    else:
        opt = cls(
            [{"params": [ours[i] for i in g["params"]], **g["options"]} for g in groups], **options
        )
        topt = TORCH[cls](
            [{"params": [theirs[i] for i in g["params"]], **g["options"]} for g in groups],
            **options,
        )
    for step in range(steps):
        for p, g in zip(ours, grads(step, *[p.numpy() for p in ours]), strict=True):
            p.grad = None if g is None else cr.tensor(g)
        for t, g in zip(theirs, grads(step, *[t.detach().numpy() for t in theirs]), strict=True):
            t.grad = None if g is None else torch.tensor(g)
        opt.step()
        topt.step()
    return ours, theirs, opt, topt


def assert_same(ours, theirs, tol=1e-12):
    for p, t in zip(ours, theirs, strict=True):
        assert p.dtype == np.float64
        np.testing.assert_allclose(p.numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def combos(**choices):
    keys = list(choices)
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*choices.values())]


SGD_CASES = [
    c
    for c in combos(
        lr=[0.05],
        momentum=[0.0, 0.9],
        dampening=[0.0, 0.3],
        weight_decay=[0.0, 0.1],
        nesterov=[False, True],
        maximize=[False, True],
    )
    if not c["nesterov"] or (c["momentum"] > 0 and c["dampening"] == 0)
]
ADAM_CASES = combos(
    lr=[0.05],
    betas=[(0.9, 0.999), (0.8, 0.99)],
    eps=[1e-8, 1e-3],
    weight_decay=[0.0, 0.1],
    amsgrad=[False, True],
    maximize=[False, True],
)
DECOUPLED = [dict(c, decoupled_weight_decay=True) for c in ADAM_CASES if c["weight_decay"]]
RMSPROP_CASES = combos(
    lr=[0.01],
    alpha=[0.99, 0.9],
    eps=[1e-8],
    weight_decay=[0.0, 0.1],
    momentum=[0.0, 0.5],
    centered=[False, True],
    maximize=[False, True],
)
CASES = (
    [(SGD, c) for c in SGD_CASES]
    + [(Adam, c) for c in ADAM_CASES]
    + [(AdamW, c) for c in ADAM_CASES]
    + [(Adam, c) for c in DECOUPLED]
    + [(RMSprop, c) for c in RMSPROP_CASES]
)


def test_case_table_is_full():
    assert len(SGD_CASES) == 20 and len(ADAM_CASES) == 32 and len(RMSPROP_CASES) == 32


@pytest.mark.parametrize("cls,options", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_ten_steps_match_torch(cls, options):
    ours, theirs, _, _ = run_both(cls, options)
    assert_same(ours, theirs)


@pytest.mark.parametrize("cls", [SGD, Adam, AdamW, RMSprop])
def test_defaults_match_torch(cls):
    assert_same(*run_both(cls, {})[:2])


@pytest.mark.parametrize(
    "cls,options,group_options",
    [
        (SGD, dict(lr=0.1, momentum=0.5), dict(lr=0.01, nesterov=True, momentum=0.9)),
        (Adam, dict(lr=0.05), dict(lr=0.2, betas=(0.5, 0.9), amsgrad=True)),
        (AdamW, dict(lr=0.05), dict(weight_decay=0.5)),
        (RMSprop, dict(lr=0.01), dict(centered=True, momentum=0.3)),
    ],
)
def test_param_groups_with_own_options(cls, options, group_options):
    groups = [{"params": [0, 2], "options": {}}, {"params": [1], "options": group_options}]
    ours, theirs, opt, topt = run_both(cls, options, groups=groups)
    assert_same(ours, theirs)
    for g, tg in zip(opt.param_groups, topt.param_groups, strict=True):
        for key in g:
            if key != "params":
                assert g[key] == tg[key], key


@pytest.mark.parametrize(
    "cls,options",
    [
        (SGD, dict(lr=0.1, momentum=0.9)),
        (Adam, dict(lr=0.05, amsgrad=True)),
        (AdamW, dict(lr=0.05)),
        (RMSprop, dict(centered=True, momentum=0.5)),
    ],
)
def test_state_dict_resumes_identically(cls, options):
    init, grads = problem()

    def train(params, opt, steps):
        for step in steps:
            for p, g in zip(params, grads(step, *[p.numpy() for p in params]), strict=True):
                p.grad = None if g is None else cr.tensor(g)
            opt.step()

    straight = [cr.tensor(a, requires_grad=True) for a in init]
    train(straight, cls(straight, **options), range(10))

    first = [cr.tensor(a, requires_grad=True) for a in init]
    opt = cls(first, **options)
    train(first, opt, range(4))
    saved, weights = opt.state_dict(), [p.numpy().copy() for p in first]
    train(first, opt, range(4, 6))  # steps after the snapshot must not leak into it
    resumed = [cr.tensor(w, requires_grad=True) for w in weights]
    opt2 = cls(resumed, lr=123.0)  # every option comes back from the state dict
    opt2.load_state_dict(saved)
    train(resumed, opt2, range(4, 10))
    for a, b in zip(resumed, straight, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("cls", [SGD, Adam, RMSprop])
def test_state_dict_layout_is_torchs(cls):
    options = dict(momentum=0.9) if cls is SGD else {}
    ours, theirs, opt, topt = run_both(cls, options, steps=3)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert list(sd) == ["state", "param_groups"]
    assert sorted(sd["state"]) == sorted(tsd["state"]) == [0, 1, 2]
    for i in sd["state"]:
        assert set(sd["state"][i]) == set(tsd["state"][i])
        for key, value in sd["state"][i].items():
            expected = tsd["state"][i][key]
            if key == "step":
                assert value == int(expected.item())
            else:
                np.testing.assert_allclose(value.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1, 2]]
    assert set(sd["param_groups"][0]) <= set(tsd["param_groups"][0])


@pytest.mark.parametrize("cls", [SGD, Adam, AdamW, RMSprop])
def test_state_dict_from_before_an_option_existed_loads(cls):
    """A state dict saved without an option added since (maximize, decoupled_weight_decay)
    keeps the value this optimizer was made with, and steps on identically."""
    ours, theirs, opt, topt = run_both(cls, dict(lr=0.05), steps=2)
    sd = opt.state_dict()
    for group in sd["param_groups"]:
        group.pop("maximize")
        group.pop("decoupled_weight_decay", None)
    again = cls([cr.tensor(p.numpy().copy(), requires_grad=True) for p in ours], lr=0.05)
    again.load_state_dict(sd)
    assert again.param_groups[0]["maximize"] is False
    for p, q in zip(again.param_groups[0]["params"], opt.param_groups[0]["params"], strict=True):
        p.grad = q.grad = cr.ones(p.shape, dtype=p.dtype)
    again.step()
    opt.step()
    for p, q in zip(again.param_groups[0]["params"], opt.param_groups[0]["params"], strict=True):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_state_dict_buffers_keep_dtype_and_are_copies():
    w = cr.zeros(3, requires_grad=True)
    opt = Adam([w], lr=0.1)
    w.grad = cr.ones(3)
    opt.step()
    sd = opt.state_dict()
    before = sd["state"][0]["exp_avg"].numpy().copy()
    opt.step()
    np.testing.assert_array_equal(sd["state"][0]["exp_avg"].numpy(), before)
    sd["state"][0]["exp_avg"] = cr.tensor(np.ones(3))  # float64 in, float32 kept
    opt.load_state_dict(sd)
    assert opt.state[w]["exp_avg"].dtype == np.float32


def test_load_state_dict_errors():
    a, b = cr.zeros(2, requires_grad=True), cr.zeros(3, requires_grad=True)
    opt = Adam([a, b])
    a.grad, b.grad = cr.ones(2), cr.ones(3)
    opt.step()
    sd = opt.state_dict()
    with pytest.raises(ValueError, match="has 1 parameter groups; the optimizer has 2"):
        Adam([{"params": [a]}, {"params": [b]}]).load_state_dict(sd)
    with pytest.raises(ValueError, match="group 0 holds 2 parameters in the state dict; got 1"):
        Adam([a]).load_state_dict(sd)
    with pytest.raises(ValueError, match=r"'exp_avg' of parameter 0 .*\(2,\) and \(3,\)"):
        Adam([b, a]).load_state_dict(sd)


@pytest.mark.parametrize("cls", [SGD, Adam, AdamW, RMSprop])
def test_float32_stays_float32(cls):
    cr.manual_seed(0)
    w = cr.randn(4, 3, requires_grad=True)
    opt = cls([w], lr=0.1, weight_decay=0.1, **({"momentum": 0.9} if cls in (SGD, RMSprop) else {}))
    for _ in range(3):
        w.grad = cr.randn(4, 3)
        opt.step()
    assert w.dtype == np.float32
    assert all(v.dtype == np.float32 for v in opt.state[w].values() if isinstance(v, cr.Tensor))


def test_step_with_autograd_matches_torch():
    cr.manual_seed(1)
    x, y = cr.randn(16, 5, dtype=cr.float64), cr.randn(16, 1, dtype=cr.float64)
    w = cr.randn(5, 1, dtype=cr.float64, requires_grad=True)
    tw = torch.tensor(w.numpy().copy(), requires_grad=True)
    opt, topt = Adam([w], lr=0.1), torch.optim.Adam([tw], lr=0.1)
    tx, ty = torch.tensor(x.numpy()), torch.tensor(y.numpy())
    for _ in range(5):
        opt.zero_grad()
        ((x @ w - y) ** 2).mean().backward()
        opt.step()
        topt.zero_grad()
        ((tx @ tw - ty) ** 2).mean().backward()
        topt.step()
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_step_ignores_grad_mode_and_leaves_grad_alone():
    w = cr.ones(3, requires_grad=True)
    g = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    w.grad = cr.tensor(g)
    with cr.no_grad():
        SGD([w], lr=0.5, weight_decay=0.1, momentum=0.9, nesterov=True).step()
    np.testing.assert_allclose(w.numpy(), 1 - 0.5 * 1.9 * (g + 0.1), atol=1e-6)
    np.testing.assert_array_equal(w.grad.numpy(), g)
    assert w.grad_fn is None


def test_zero_grad_and_closure():
    w = cr.ones(2, requires_grad=True)
    opt = SGD([w], lr=0.1)
    w.grad = cr.ones(2)
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(w.grad.numpy(), [0, 0])
    opt.zero_grad()
    assert w.grad is None

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with cr.no_grad():  # the closure records anyway, as PyTorch's does
        loss = opt.step(closure)
    assert loss.item() == 2.0
    np.testing.assert_allclose(w.numpy(), [0.8, 0.8])


def test_a_gradient_of_another_shape_is_refused_where_it_is_assigned():
    """As PyTorch: ``w.grad = <other shape>`` is an error at the assignment, so no step ever
    meets one."""
    w = cr.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"grad: assigned grad has shape \(1,\)"):
        w.grad = cr.ones(1)
    with pytest.raises(RuntimeError, match="size"):
        torch.zeros(3, requires_grad=True).grad = torch.ones(1)


def test_add_param_group_and_repr():
    a, b = cr.zeros(1, requires_grad=True), cr.zeros(1, requires_grad=True)
    opt = SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b, "lr": 0.5})
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["momentum"] == 0.9
    assert opt.param_groups[1]["params"] == [b]
    assert "Parameter Group 1" in repr(opt) and "lr: 0.5" in repr(opt)
    with pytest.raises(ValueError, match="appears more than once"):
        opt.add_param_group({"params": [a]})


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda p: Adam(p, betas=(1.5, 0.9)), "Adam: invalid beta parameter at index 0; got 1.5"),
        (
            lambda p: AdamW(p, betas=(0.9, -0.1)),
            "AdamW: invalid beta parameter at index 1; got -0.1",
        ),
        (lambda p: Adam(p, eps=-1), "Adam: invalid epsilon value; got -1.0"),
        (lambda p: Adam(p, lr=-0.1), "Adam: invalid learning rate; got -0.1"),
        (lambda p: SGD(p, momentum=-0.5), "SGD: invalid momentum value; got -0.5"),
        (lambda p: SGD(p, weight_decay=-1), "SGD: invalid weight_decay value; got -1.0"),
        (
            lambda p: SGD(p, nesterov=True),
            "SGD: nesterov momentum requires a momentum and zero dampening; got momentum=0.0",
        ),
        (
            lambda p: SGD(p, momentum=0.9, dampening=0.1, nesterov=True),
            "SGD: nesterov momentum requires a momentum and zero dampening; got momentum=0.9 and "
            "dampening=0.1",
        ),
        (lambda p: RMSprop(p, alpha=-0.9), "RMSprop: invalid alpha value; got -0.9"),
        (lambda p: RMSprop(p, momentum=-1), "RMSprop: invalid momentum value; got -1.0"),
        (lambda p: SGD([{"params": p, "lr": -1.0}]), "SGD: invalid learning rate; got -1.0"),
        (lambda p: SGD([]), "SGD: got an empty parameter list"),
        (lambda p: SGD(p + p), "appears more than once"),
        (lambda p: SGD([p[0] * 2]), "SGD: cannot optimize a non-leaf tensor"),
    ],
)
def test_bad_hyperparameters_are_named(make, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make([cr.zeros(2, requires_grad=True)])


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda p: SGD(p[0]), "SGD: params must be an iterable of Tensors or dicts"),
        (lambda p: SGD(set(p)), "SGD: params must be an ordered collection; got a set"),
        (lambda p: SGD([1.0]), "SGD: can only optimize Tensors; got float"),
        (lambda p: SGD([cr.zeros(2, dtype=cr.int64)]), "SGD: can only optimize floating-point"),
        (lambda p: SGD(p, lr="0.1"), "SGD: lr must be a number; got str"),
    ],
)
def test_bad_params_are_type_errors(make, message):
    with pytest.raises(TypeError, match=message):
        make([cr.zeros(2, requires_grad=True)])


# -- lr schedules ---------------------------------------------------------------------------

SCHEDULES = [
    ("StepLR", dict(step_size=4, gamma=0.5)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.01)),
    ("CosineAnnealingLR", dict(T_max=10)),
    ("LambdaLR", dict(lr_lambda=lambda e: 1 / (e + 1))),
    ("LambdaLR", dict(lr_lambda=[lambda e: 0.95**e, lambda e: min(1.0, (e + 1) / 5)])),
]


def two_groups(make):
    a, b = make(np.zeros(1)), make(np.zeros(1))
    return [{"params": [a], "lr": 0.1}, {"params": [b], "lr": 0.03}]


@pytest.mark.parametrize("name,options", SCHEDULES, ids=[s[0] for s in SCHEDULES])
def test_schedule_matches_torch(name, options):
    opt = SGD(two_groups(lambda a: cr.tensor(a, requires_grad=True)))
    topt = torch.optim.SGD(two_groups(lambda a: torch.tensor(a, requires_grad=True)))
    ours, theirs = (
        getattr(sched, name)(opt, **options),
        getattr(torch.optim.lr_scheduler, name)(topt, **options),
    )
    assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), abs=1e-12)
    for _ in range(30):
        opt.step()
        topt.step()
        ours.step()
        theirs.step()
        np.testing.assert_allclose(ours.get_last_lr(), theirs.get_last_lr(), rtol=0, atol=1e-12)
        assert [g["lr"] for g in opt.param_groups] == ours.get_last_lr()
    assert ours.last_epoch == theirs.last_epoch == 30


def test_cosine_closed_form():
    opt = SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    s = sched.CosineAnnealingLR(opt, T_max=6, eta_min=0.1)
    for t in range(1, 20):
        s.step()
        assert s.get_last_lr()[0] == pytest.approx(
            0.1 + 0.9 * (1 + math.cos(math.pi * t / 6)) / 2, abs=1e-12
        )


@pytest.mark.parametrize("name,options", SCHEDULES[:4], ids=[s[0] for s in SCHEDULES[:4]])
def test_schedule_resumes_from_state_dict(name, options):
    def fresh():
        return SGD(two_groups(lambda a: cr.tensor(a, requires_grad=True)))

    opt = fresh()
    s = getattr(sched, name)(opt, **options)
    for _ in range(9):
        s.step()
    saved_opt, saved_s = opt.state_dict(), s.state_dict()
    expected = []
    for _ in range(10):
        s.step()
        expected.append(s.get_last_lr())

    opt2 = fresh()
    opt2.load_state_dict(saved_opt)
    s2 = getattr(sched, name)(opt2, **options, last_epoch=8)  # resuming needs initial_lr
    s2.load_state_dict(saved_s)
    got = []
    for _ in range(10):
        s2.step()
        got.append(s2.get_last_lr())
    assert got == expected


def test_lambda_state_dict_keeps_callable_objects_only():
    class Warmup:
        def __init__(self):
            self.n = 5

        def __call__(self, e):
            return min(1.0, (e + 1) / self.n)

    opt = SGD(two_groups(lambda a: cr.tensor(a, requires_grad=True)))
    s = sched.LambdaLR(opt, [Warmup(), lambda e: 1.0])
    sd = s.state_dict()
    assert sd["lr_lambdas"] == [{"n": 5}, None] and "optimizer" not in sd
    sd["lr_lambdas"][0]["n"] = 2
    s.load_state_dict(sd)
    assert s.lr_lambdas[0].n == 2


def test_scheduler_errors():
    opt = SGD([cr.zeros(1, requires_grad=True)])
    with pytest.raises(KeyError, match="initial_lr"):
        sched.StepLR(opt, step_size=2, last_epoch=3)
    with pytest.raises(ValueError, match="StepLR: step_size must be a positive int; got 0"):
        sched.StepLR(opt, step_size=0)
    with pytest.raises(ValueError, match="expected 1 lr_lambdas, one per param group; got 2"):
        sched.LambdaLR(opt, [lambda e: 1.0, lambda e: 1.0])
    with pytest.raises(TypeError, match="expected an Optimizer; got list"):
        sched.ExponentialLR([], gamma=0.5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(300, 301), (70_000,), (2, 40_000)])
def test_sgd_updates_large_parameters_block_by_block_exactly(dtype, shape):
    """Parameters larger than one cache-sized block are updated block by block (the last
    block partial); the result is bitwise p - lr * g, and the gradient is left alone."""
    rng = np.random.default_rng(0)
    p0, g0 = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    w = cr.tensor(p0.copy(), requires_grad=True)
    w.grad = cr.tensor(g0.copy())
    SGD([w], lr=0.37).step()
    np.testing.assert_array_equal(w.numpy(), p0 - 0.37 * g0)
    np.testing.assert_array_equal(w.grad.numpy(), g0)
    assert w.dtype == dtype
    tw = torch.tensor(p0.copy(), requires_grad=True)
    tw.grad = torch.tensor(g0.copy())
    torch.optim.SGD([tw], lr=0.37).step()
    # PyTorch fuses the multiply-add (one rounding), so it may differ in the last bit
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=0, atol=8 * np.finfo(dtype).eps)


def test_sgd_updates_a_strided_parameter_view():
    """A non-contiguous gradient (a transposed view a user assigned) takes the plain path."""
    p0 = np.arange(80_000.0).reshape(200, 400)
    g = np.ones((400, 200)).T  # a transposed view: not C-contiguous
    w = cr.tensor(p0.copy(), requires_grad=True)
    w.grad = cr.tensor(g)
    SGD([w], lr=0.5).step()
    np.testing.assert_array_equal(w.numpy(), p0 - 0.5)


@pytest.mark.parametrize("owner", ["optimizer", "module"])
def test_zero_grad_without_none_zeroes_in_place_as_torch(owner):
    results = []
    for lib in (cr, torch):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        x = lib.ones(4, 3)
        model(x).sum().backward()
        held = model.weight.grad
        (opt if owner == "optimizer" else model).zero_grad(set_to_none=False)
        same = model.weight.grad is held
        zeros = held.abs().sum().item() == 0
        model(x).sum().backward()  # accumulates into the zeroed gradient
        results.append((same, zeros, model.weight.grad is held, held.sum().item()))
    assert results[0] == pytest.approx(results[1])
    assert results[0][:3] == (True, True, True)


def test_zero_grad_of_a_read_only_gradient_gives_fresh_zeros():
    w = cr.zeros(2, 3, requires_grad=True)
    w.grad = cr.ones(3).expand(2, 3)  # a read-only broadcast view, assigned by hand
    cr.optim.SGD([w], lr=0.1).zero_grad(set_to_none=False)
    assert w.grad.numpy().tolist() == [[0.0] * 3] * 2
