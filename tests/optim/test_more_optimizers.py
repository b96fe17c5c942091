"""Adadelta, Adagrad, Adamax, NAdam, RAdam, ASGD and Rprop step for step against torch.optim
(float64 and float32, every option), with state_dict round trips both ways."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.optim import ASGD, Adadelta, Adagrad, Adamax, NAdam, RAdam, Rprop
from tests.optim.test_optim import combos, problem

TORCH = {
    Adadelta: torch.optim.Adadelta,
    Adagrad: torch.optim.Adagrad,
    Adamax: torch.optim.Adamax,
    NAdam: torch.optim.NAdam,
    RAdam: torch.optim.RAdam,
    ASGD: torch.optim.ASGD,
    Rprop: torch.optim.Rprop,
}
COMMON = dict(weight_decay=[0.0, 0.1], maximize=[False, True])
CASES = (
    [(Adadelta, c) for c in combos(lr=[1.0, 0.5], rho=[0.9, 0.5], eps=[1e-6, 1e-2], **COMMON)]
    + [
        (Adagrad, c)
        for c in combos(
            lr=[0.1],
            lr_decay=[0.0, 0.05],
            initial_accumulator_value=[0.0, 0.3],
            eps=[1e-10, 1e-2],
            **COMMON,
        )
    ]
    + [
        (Adamax, c)
        for c in combos(lr=[0.05], betas=[(0.9, 0.999), (0.5, 0.8)], eps=[1e-8, 0.1], **COMMON)
    ]
    + [
        (NAdam, c)
        for c in combos(
            lr=[0.05],
            betas=[(0.9, 0.999), (0.6, 0.9)],
            momentum_decay=[4e-3, 0.3],
            decoupled_weight_decay=[False, True],
            **COMMON,
        )
    ]
    + [
        (RAdam, c)
        for c in combos(
            lr=[0.05],
            betas=[(0.9, 0.999), (0.5, 0.6)],  # the second reaches rho_t > 5 within 10 steps
            eps=[1e-8, 0.1],
            decoupled_weight_decay=[False, True],
            **COMMON,
        )
    ]
    + [
        (ASGD, c)
        for c in combos(lr=[0.05], lambd=[1e-4, 0.5], alpha=[0.75, 0.3], t0=[1e6, 3.0], **COMMON)
    ]
    + [
        (Rprop, c)
        for c in combos(
            lr=[0.01, 0.3], etas=[(0.5, 1.2), (0.3, 1.7)], step_sizes=[(1e-6, 50), (0.02, 0.2)],
            maximize=[False, True],
        )
    ]
)  # fmt: skip


def run_both(cls, options, steps=10, dtype=np.float64, groups=None):
    init, grads = problem()
    ours = [cr.tensor(a.astype(dtype), requires_grad=True) for a in init]
    theirs = [torch.tensor(a.astype(dtype), requires_grad=True) for a in init]
    if groups is None:
        opt, topt = cls(ours, **options), TORCH[cls](theirs, **options)
    else:
        opt = cls([{"params": [ours[i] for i in g], **o} for g, o in groups], **options)
        topt = TORCH[cls]([{"params": [theirs[i] for i in g], **o} for g, o in groups], **options)
    for step in range(steps):
        for p, g in zip(ours, grads(step, *[p.numpy() for p in ours]), strict=True):
            p.grad = None if g is None else cr.tensor(g.astype(dtype))
        for t, g in zip(theirs, grads(step, *[t.detach().numpy() for t in theirs]), strict=True):
            t.grad = None if g is None else torch.tensor(g.astype(dtype))
        opt.step()
        topt.step()
    return ours, theirs, opt, topt


def assert_same(ours, theirs, tol):
    for p, t in zip(ours, theirs, strict=True):
        assert str(p.dtype) == str(t.dtype).replace("torch", "chainrule")
        np.testing.assert_allclose(p.numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def test_case_table_is_full():
    assert {cls for cls, _ in CASES} == set(TORCH)
    assert len(CASES) == 32 + 32 + 16 + 32 + 32 + 32 + 16


@pytest.mark.parametrize("cls,options", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_ten_steps_match_torch(cls, options):
    assert_same(*run_both(cls, options)[:2], tol=1e-12)


@pytest.mark.parametrize("cls", list(TORCH))
def test_defaults_match_torch_in_float64_and_float32(cls):
    assert_same(*run_both(cls, {}, steps=20)[:2], tol=1e-12)
    assert_same(*run_both(cls, {}, steps=20, dtype=np.float32)[:2], tol=1e-5)


@pytest.mark.parametrize("cls", list(TORCH))
def test_defaults_and_signature_are_torchs(cls):
    ours = cls([cr.zeros(2, requires_grad=True)]).defaults
    theirs = TORCH[cls]([torch.zeros(2, requires_grad=True)]).defaults
    assert set(ours) == set(theirs)
    for key, value in theirs.items():
        assert ours[key] == value, key


@pytest.mark.parametrize("cls", list(TORCH))
def test_param_groups_with_own_options(cls):
    own = {"lr": 0.2, "maximize": True}
    assert_same(*run_both(cls, {}, groups=[([0, 2], {}), ([1], own)])[:2], tol=1e-12)


@pytest.mark.parametrize("cls", list(TORCH))
def test_state_dict_is_torchs_and_loads_both_ways(cls):
    ours, theirs, opt, topt = run_both(cls, {"lr": 0.05}, steps=4)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sorted(sd["state"]) == sorted(tsd["state"])
    for i in sd["state"]:
        assert set(sd["state"][i]) == set(tsd["state"][i])
        for key, value in sd["state"][i].items():
            want = tsd["state"][i][key]
            if isinstance(value, cr.Tensor):
                np.testing.assert_allclose(value.numpy(), want.numpy(), rtol=1e-12, atol=1e-15)
            else:  # PyTorch's 0-d tensors: the step and the running scalars
                assert value == want.item(), key
    # torch's state dict into ours, ours into torch: both step on as the straight run does
    init, grads = problem()
    mine = [cr.tensor(t.detach().numpy().copy(), requires_grad=True) for t in theirs]
    again = cls(mine, lr=1.0)
    again.load_state_dict(tsd)
    back = [torch.tensor(p.numpy().copy(), requires_grad=True) for p in ours]
    tagain = TORCH[cls](back, lr=1.0)
    tagain.load_state_dict(
        {
            "state": {
                i: {
                    k: torch.tensor(v.numpy() if isinstance(v, cr.Tensor) else v)
                    for k, v in s.items()
                }
                for i, s in sd["state"].items()
            },
            "param_groups": sd["param_groups"],
        }
    )
    for step in range(4, 8):
        for pair in ((mine, again, cr.tensor), (theirs, topt, torch.tensor)):
            params, optimizer, make = pair
            arrays = [p.detach().numpy() if hasattr(p, "detach") else p.numpy() for p in params]
            for p, g in zip(params, grads(step, *arrays), strict=True):
                p.grad = None if g is None else make(g)
            optimizer.step()
        arrays = [p.detach().numpy() for p in back]
        for p, g in zip(back, grads(step, *arrays), strict=True):
            p.grad = None if g is None else torch.tensor(g)
        tagain.step()
    for a, b, c in zip(mine, theirs, back, strict=True):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)
        # PyTorch's load_state_dict casts NAdam's mu_product to the parameter's dtype, so its own
        # reloaded run drifts from its straight one by float32's rounding of that number
        tol = 1e-9 if cls is NAdam else 1e-12
        np.testing.assert_allclose(c.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def test_adagrad_makes_its_state_with_the_optimizer_as_torch():
    w = cr.zeros(3, requires_grad=True)
    opt = Adagrad([w], initial_accumulator_value=0.5)
    assert opt.state[w]["step"] == 0
    np.testing.assert_array_equal(opt.state[w]["sum"].numpy(), [0.5, 0.5, 0.5])


def test_nadam_keeps_its_momentum_product_in_the_default_dtype():
    ours, theirs, opt, topt = run_both(NAdam, {"momentum_decay": 0.3}, steps=5)
    got = opt.state[ours[0]]["mu_product"]
    assert got == topt.state[theirs[0]]["mu_product"].item()
    assert got == float(np.float32(got))


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: Adadelta(p, rho=1.5), r"Adadelta: invalid rho value; got 1.5"),
        (lambda p: Adadelta(p, eps=-1.0), r"Adadelta: invalid eps value; got -1.0"),
        (lambda p: Adagrad(p, lr_decay=-0.1), r"Adagrad: invalid lr_decay value; got -0.1"),
        (
            lambda p: Adamax(p, betas=(1.0, 0.9)),
            r"Adamax: invalid beta parameter at index 0; got 1.0",
        ),
        (lambda p: NAdam(p, momentum_decay=-1), r"NAdam: invalid momentum_decay value; got -1.0"),
        (lambda p: RAdam(p, betas=(0.9,)), r"RAdam: betas must be a pair of numbers; got \(0.9,\)"),
        (lambda p: ASGD(p, weight_decay=-1), r"ASGD: invalid weight_decay value; got -1.0"),
        (lambda p: Rprop(p, etas=(1.5, 1.2)), r"Rprop: invalid eta values .*got 1.5, 1.2"),
        (lambda p: Rprop(p, step_sizes=(1e-6,)), r"Rprop: step_sizes must be a pair"),
        (lambda p: NAdam(p, differentiable=True), r"NAdam: differentiable=True is not supported"),
    ],
)
def test_bad_hyperparameters_are_named(make, message):
    with pytest.raises(ValueError, match=message):
        make([cr.zeros(2, requires_grad=True)])


def test_a_torch_program_trains_with_each_optimizer():
    """A small regression trained by each, as a PyTorch program writes it."""
    cr.manual_seed(7)
    x = cr.randn(64, 3)
    y = x @ cr.tensor([[1.0], [-2.0], [0.5]]) + 0.3
    for cls in TORCH:
        model = cr.nn.Linear(3, 1)
        opt = cls(
            model.parameters(),
            **({"lr": 0.05} if cls in (Adagrad, Adamax, NAdam, RAdam, ASGD) else {}),
        )
        first = None
        for _ in range(200):
            opt.zero_grad()
            loss = cr.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            first = loss.item() if first is None else first
        assert loss.item() < 0.2 * first, cls.__name__
