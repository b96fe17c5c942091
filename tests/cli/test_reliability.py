"""Reliability: anomaly detection, safe checkpoints, scale, memory, threads and determinism."""

from __future__ import annotations

import gc
import json
import re
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import autograd, nn
from chainrule.autograd.primitive import Function
from tests.helpers import gc_off


def exactly(text: str) -> str:
    return "^" + re.escape(text) + "$"


def cyclic_garbage() -> list[str]:
    """The type names of the chainrule objects that only the cyclic collector can free (call
    it with the collector off, so that it has not freed them already)."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        found = [type(o).__name__ for o in gc.garbage if type(o).__module__.startswith("chainrule")]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return found


# -- anomaly detection -----------------------------------------------------------------------


def test_anomaly_forward_log_of_a_negative_number_names_the_op() -> None:
    x = cr.tensor([-1.0, 1.0, 2.0], requires_grad=True)
    with (
        cr.detect_anomaly(),
        np.errstate(invalid="ignore"),
        pytest.raises(
            RuntimeError,
            match=exactly(
                "Log: forward produced NaN or inf from finite inputs (detect_anomaly); got "
                "input shape (3,); the output of shape (3,) holds 1 NaN and 0 inf"
            ),
        ),
    ):
        x.log()


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (
            lambda x: x / 0.0,
            "Div: forward produced NaN or inf from finite inputs (detect_anomaly); "
            "got input shapes (2,) and (); the output of shape (2,) holds 0 NaN and 2 inf",
        ),
        (
            lambda x: (x * 100.0).exp(),
            "Exp: forward produced NaN or inf from finite inputs (detect_anomaly); got input "
            "shape (2,); the output of shape (2,) holds 0 NaN and 1 inf",
        ),
        (
            lambda x: (x - 1.0).sqrt(),
            "Sqrt: forward produced NaN or inf from finite inputs (detect_anomaly); got input "
            "shape (2,); the output of shape (2,) holds 1 NaN and 0 inf",
        ),
        (
            lambda x: x * 0.0 / (x * 0.0),
            "Div: forward produced NaN or inf from finite inputs (detect_anomaly); got input "
            "shapes (2,) and (2,); the output of shape (2,) holds 2 NaN and 0 inf",
        ),
    ],
)
def test_anomaly_forward_names_the_first_op_that_made_it(fn, message) -> None:
    x = cr.tensor([0.5, 1.0], requires_grad=True)
    with cr.detect_anomaly(), np.errstate(all="ignore"):
        with pytest.raises(RuntimeError, match=exactly(message)):
            fn(x)


def test_anomaly_forward_of_non_finite_inputs_is_not_the_ops_fault() -> None:
    x = cr.tensor([np.nan, np.inf, 1.0])
    with cr.detect_anomaly():
        y = x.exp() * 2.0 + 1.0  # NaN and inf came in: every op passes them on silently
    assert np.isnan(y.numpy()[0]) and np.isinf(y.numpy()[1])


def test_anomaly_forward_also_checks_ops_that_record_nothing() -> None:
    with cr.detect_anomaly(), cr.no_grad(), np.errstate(divide="ignore"):
        with pytest.raises(RuntimeError, match="^Log: forward produced NaN or inf"):
            cr.zeros(2).log()


def test_regression_anomaly_in_backward_names_the_node_and_the_op_of_its_formula() -> None:
    """Regression: the message named only the node (Sqrt, twice), not the op of its backward
    formula that made the inf (the Div of g / (2 sqrt(x)) at x = 0)."""
    x = cr.tensor([0.0, 4.0], requires_grad=True)
    y = (x.sqrt() * 3.0).sum()
    with cr.detect_anomaly(), np.errstate(divide="ignore"):
        with pytest.raises(
            RuntimeError,
            match=exactly(
                "Sqrt: backward produced NaN or inf in the gradient of input 0 (shape (2,)) of "
                "forward op Sqrt, made by Div in its backward formula (detect_anomaly); got a "
                "finite incoming gradient of shape (2,)"
            ),
        ):
            y.backward()
    assert x.grad is None  # the walk stopped before reaching the leaf


def test_anomaly_in_backward_of_pow_at_zero() -> None:
    x = cr.tensor([0.0, 1.0], requires_grad=True)
    with cr.detect_anomaly(), np.errstate(divide="ignore"):
        with pytest.raises(
            RuntimeError,
            match=r"^Pow: backward produced NaN or inf in the "
            r"gradient of input 0 .* made by Pow in its",
        ):
            (x**0.5).sum().backward()


class _SafeReciprocalGrad(Function):
    """out = a; its backward makes inf at a == 0 on the way, then clamps it away."""

    def forward(self, a: Any) -> Any:
        return a.copy()

    def backward(self, grad: cr.Tensor, out: cr.Tensor) -> tuple[cr.Tensor]:
        return ((grad / self.inputs[0]).clamp(max=1.0),)


def test_anomaly_in_backward_only_when_the_gradient_itself_goes_bad() -> None:
    """An inf made and removed inside one formula is no anomaly; and what one node's formula
    made is not blamed on the next node."""
    x = cr.tensor([0.0, 4.0], requires_grad=True)
    with cr.detect_anomaly(), np.errstate(divide="ignore"):
        _SafeReciprocalGrad.apply(x * 2.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 0.25])  # 2 min(1 / 2x, 1)
    x.grad = None
    with cr.detect_anomaly(), np.errstate(divide="ignore"):
        with pytest.raises(RuntimeError, match=r"^Pow: .* made by Pow in its backward formula"):
            _SafeReciprocalGrad.apply(x**0.5).sum().backward()


def test_anomaly_in_a_gradient_given_to_backward() -> None:
    y = cr.ones(2, requires_grad=True) * 2.0
    with (
        cr.detect_anomaly(),
        pytest.raises(
            RuntimeError,
            match=exactly(
                "backward: the gradient given holds NaN or inf (detect_anomaly); got shape (2,)"
            ),
        ),
    ):
        y.backward(cr.tensor([1.0, np.nan]))


def test_anomaly_in_a_second_order_gradient() -> None:
    x = cr.tensor([0.0, 1.0], requires_grad=True)
    with cr.detect_anomaly(), np.errstate(all="ignore"):
        (g,) = cr.grad((x**3).sum(), x, create_graph=True)  # 3x^2: finite
        np.testing.assert_array_equal(g.numpy(), [0.0, 3.0])
        (h,) = cr.grad((x**1.5).sum(), x, create_graph=True)  # 1.5 x^0.5: finite
        with pytest.raises(RuntimeError, match=r"^Pow: backward produced NaN or inf"):
            h.sum().backward()  # 0.75 x^-0.5 is inf at 0


def test_anomaly_mode_is_off_by_default_and_costs_only_a_flag_test(monkeypatch) -> None:
    """With anomaly mode off no value is inspected: the finiteness check is never called."""
    calls = []
    for module in (autograd.primitive, autograd.engine):
        monkeypatch.setattr(module, "all_finite", lambda x: calls.append(1) or True)
    x = cr.tensor([0.0, -1.0], requires_grad=True)
    with np.errstate(all="ignore"):
        y = x.log() + x.sqrt()
        y.sum().backward()
    assert not np.isfinite(y.numpy()).any() and not np.isfinite(x.grad.numpy()).any()
    assert calls == []
    with cr.detect_anomaly():
        (x * 2.0).sum().backward()
    assert calls  # on: checked


def test_anomaly_mode_as_a_decorator_restores_the_mode() -> None:
    @cr.detect_anomaly()
    def make_nan() -> cr.Tensor:
        with np.errstate(invalid="ignore"):
            return cr.tensor([-1.0]).sqrt()

    with pytest.raises(RuntimeError, match="^Sqrt: forward produced NaN"):
        make_nan()
    assert not autograd.is_anomaly_enabled()
    with np.errstate(invalid="ignore"):
        assert np.isnan(cr.tensor([-1.0]).sqrt().item())


def _beside_a_thread_inside(
    mode: Any, here: Callable[[], Any], there: Callable[[], Any] = lambda: None
) -> tuple[Any, Any]:
    """here() run in this thread while another thread is inside ``with mode:``, then
    there() run in that thread, still inside: both results."""
    inside, done = threading.Event(), threading.Event()
    seen: dict[str, Any] = {}

    def worker() -> None:
        with mode:
            inside.set()
            done.wait(10)
            seen["there"] = there()

    th = threading.Thread(target=worker)
    th.start()
    inside.wait(10)
    try:
        seen["here"] = here()
    finally:
        done.set()
        th.join()
    return seen["here"], seen["there"]


def test_anomaly_mode_is_per_thread() -> None:
    def log_of_minus_one() -> float:
        with np.errstate(invalid="ignore"):
            return cr.tensor([-1.0]).log().item()  # this thread: off

    value, _ = _beside_a_thread_inside(cr.detect_anomaly(), log_of_minus_one)
    assert np.isnan(value)


# -- checkpoints -----------------------------------------------------------------------------


def test_concurrent_saves_and_loads_never_see_a_partial_file(tmp_path) -> None:
    """Two writers replace one checkpoint over and over while a reader loads it: every load
    is one writer's whole checkpoint (the write is atomic)."""
    path = tmp_path / "ckpt.safetensors"
    states = {k: {"w": cr.full((256, 256), float(k)), "step": k} for k in (1, 2)}
    cr.save(states[1], path)
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        try:
            for _ in range(15):
                cr.save(states[k], path)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    loads = []

    def reader() -> None:
        try:
            while not stop.is_set():
                back = cr.load(path)
                loads.append(back["step"])
                assert (back["w"].numpy() == float(back["step"])).all()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in (1, 2)]
    read = threading.Thread(target=reader)
    read.start()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    stop.set()
    read.join()
    assert not errors and loads and set(loads) <= {1, 2}
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.safetensors"]  # no temporary left


# -- scale and memory ------------------------------------------------------------------------


def test_million_node_graph_backpropagates_and_is_freed_by_reference_counting() -> None:
    """1,000,000 nodes, walked with the graph retained, then dropped: reference counting alone
    frees every node, and the deep chain of deallocations does not overflow the stack."""
    n = 1_000_000
    x = cr.tensor(0.5, dtype=cr.float64, requires_grad=True)
    with gc_off():
        y, refs = x, []
        for i in range(n):
            y = y + 1.0 if i % 2 else y - 3.0  # x + n/2 - 3n/2
            if i % 100_000 == 0:
                refs += [weakref.ref(y), weakref.ref(y.grad_fn)]
        assert y.item() == 0.5 - n
        y.backward(retain_graph=True)  # kept whole, so dropping it below frees every node
        assert x.grad.item() == 1.0
        del y
        assert [r() for r in refs] == [None] * len(refs)
        assert cyclic_garbage() == []


@pytest.mark.parametrize("backward", ["none", "backward", "retain_graph", "create_graph"])
def test_dropped_layer_graph_leaves_nothing_for_the_collector(backward: str) -> None:
    cr.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3))
    x, t = cr.randn(5, 4), cr.tensor([0, 1, 2, 0, 1])
    with gc_off():
        h = model[1](model[0](x))
        loss = F.cross_entropy(model[3](model[2](h)), t)
        refs = [weakref.ref(h), weakref.ref(h.grad_fn), weakref.ref(loss)]
        if backward == "backward":
            loss.backward()
        elif backward == "retain_graph":
            loss.backward(retain_graph=True)
        elif backward == "create_graph":
            grads = cr.grad(loss, list(model.parameters()), create_graph=True)
            sum((g * g).sum() for g in grads).backward()
            del grads
        del h, loss
        assert [r() for r in refs] == [None] * len(refs)
        model.zero_grad()
        assert cyclic_garbage() == []


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS line")  # pragma: no cover


def test_rss_stays_flat_over_a_thousand_training_steps() -> None:
    """A small MLP with nn, optim and DataLoader, trained with the cyclic collector off: a
    graph kept alive per step (about 50 KiB here) would add ~50 MiB over the run."""
    cr.manual_seed(0)
    x = cr.randn(512, 8)
    y = (x.sum(1, keepdim=True) > 0).float()
    loader = cr.data.DataLoader(cr.data.TensorDataset(x, y), batch_size=32, shuffle=True)
    model = nn.Sequential(
        nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1)
    )
    opt = cr.optim.Adam(model.parameters(), lr=1e-3)
    sched = cr.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.9)
    rss, losses, step = {}, [], 0
    with gc_off():
        while step < 1000:
            for xb, yb in loader:
                loss = F.binary_cross_entropy_with_logits(model(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
                step += 1
                losses.append(loss.item())
                if step in (50, 1000):
                    rss[step] = _rss()
                if step == 1000:
                    break
            sched.step()
        assert cyclic_garbage() == []
    assert (rss[1000] - rss[50]) / 2**20 < 20
    assert np.mean(losses[-50:]) < 0.5 * np.mean(losses[:50])  # it did train


# -- threads ---------------------------------------------------------------------------------


def test_grad_mode_is_per_thread_and_new_threads_start_recording() -> None:
    seen: dict[str, bool] = {}

    def records() -> bool:
        return (cr.ones(1, requires_grad=True) * 2).requires_grad

    def fresh() -> None:
        seen["thread started under no_grad"] = cr.is_grad_enabled()

    here, there = _beside_a_thread_inside(cr.no_grad(), records, records)
    seen["this thread"], seen["other thread, inside no_grad"] = here, there
    with cr.no_grad():
        th = threading.Thread(target=fresh)
        th.start()
        th.join()
    assert seen == {
        "this thread": True,
        "other thread, inside no_grad": False,
        "thread started under no_grad": True,
    }


def _make_run(seed: int) -> tuple[nn.Module, Callable[[Callable[[], None]], list[float]]]:
    """A model and a function that trains it for 60 steps, calling ``sync`` after each step
    and evaluating under no_grad every 5th step."""
    rng = np.random.default_rng(seed)
    x = cr.tensor(rng.standard_normal((96, 6)), dtype=cr.float32)
    t = cr.tensor(rng.integers(0, 3, 96))
    cr.manual_seed(seed)  # before any thread starts: init draws from the global generator
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    opt = cr.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loader = cr.data.DataLoader(
        cr.data.TensorDataset(x, t),
        batch_size=16,
        shuffle=True,
        generator=np.random.default_rng(seed),
    )

    def train(sync: Callable[[], None]) -> list[float]:
        history = []
        while len(history) < 60:
            for xb, tb in loader:
                loss = F.cross_entropy(model(xb), tb)
                opt.zero_grad()
                loss.backward()
                opt.step()
                history.append(loss.item())
                if len(history) % 5 == 0:
                    with cr.no_grad():
                        history.append(F.cross_entropy(model(x), t).item())
                sync()
        return history

    return model, train


def test_two_threads_training_two_models_match_training_each_alone() -> None:
    alone = {}
    for seed in (0, 1):
        model, train = _make_run(seed)
        alone[seed] = (train(lambda: None), [p.numpy().copy() for p in model.parameters()])
    runs = {seed: _make_run(seed) for seed in (0, 1)}
    barrier = threading.Barrier(2, timeout=30)  # lockstep: the threads' steps interleave
    together: dict[int, list[float]] = {}

    def worker(seed: int) -> None:
        together[seed] = runs[seed][1](barrier.wait)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in (0, 1)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for seed in (0, 1):
        assert together[seed] == alone[seed][0]
        for p, q in zip(runs[seed][0].parameters(), alone[seed][1], strict=True):
            np.testing.assert_array_equal(p.numpy(), q)
    assert alone[0][0] != alone[1][0]


# -- determinism -----------------------------------------------------------------------------


def _seeded_run(seed: int) -> tuple[list[int], list[np.ndarray]]:
    """Init, shuffle order and dropout masks all from cr.manual_seed; returns the sample order
    the loader gave and the trained parameters."""
    cr.manual_seed(seed)
    x = cr.randn(40, 5)
    ids = cr.arange(40)
    model = nn.Sequential(nn.Linear(5, 12), nn.ReLU(), nn.Dropout(0.3), nn.Linear(12, 1))
    opt = cr.optim.Adam(model.parameters(), lr=1e-2)
    loader = cr.data.DataLoader(cr.data.TensorDataset(x, ids), batch_size=8, shuffle=True)
    order = []
    for _ in range(3):
        for xb, ib in loader:
            order += ib.tolist()
            loss = (model(xb) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return order, [p.numpy().copy() for p in model.parameters()]


def test_same_seed_gives_bitwise_identical_init_order_and_training() -> None:
    order_a, params_a = _seeded_run(7)
    order_b, params_b = _seeded_run(7)
    assert order_a == order_b and sorted(order_a[:40]) == list(range(40))
    for p, q in zip(params_a, params_b, strict=True):
        assert p.tobytes() == q.tobytes()
    order_c, params_c = _seeded_run(8)
    assert order_c != order_a and params_c[0].tobytes() != params_a[0].tobytes()


def test_same_seed_gives_identical_model_init() -> None:
    def init(seed: int) -> list[bytes]:
        cr.manual_seed(seed)
        model = nn.Sequential(
            nn.Conv2d(1, 4, 3), nn.Flatten(), nn.Linear(36, 5), nn.Embedding(7, 3)
        )
        return [p.numpy().tobytes() for p in model.parameters()]

    assert init(3) == init(3)
    assert init(3) != init(4)


@pytest.mark.parametrize("recipe", ["moons", "digits-mlp"])
def test_same_seed_gives_the_same_recipe_run(tmp_path, recipe: str) -> None:
    pytest.importorskip("sklearn")
    from chainrule.tools import cli

    runs = []
    for name in ("a", "b"):
        out = tmp_path / name
        argv = ["train", recipe, "--epochs", "2", "--seed", "0", "--out", str(out), "--quiet"]
        assert cli.main(argv) == 0
        with open(out / "metrics.json") as f:
            metrics = json.load(f)
        runs.append((metrics["history"], metrics["final"], cr.load(out / "model.safetensors")))
    (hist_a, final_a, model_a), (hist_b, final_b, model_b) = runs
    assert len(hist_a) == 2 and hist_a == hist_b and final_a == final_b
    assert list(model_a) == list(model_b)
    for k in model_a:
        assert model_a[k].numpy().tobytes() == model_b[k].numpy().tobytes()
