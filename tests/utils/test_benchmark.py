"""torch.utils.benchmark's Timer, Measurement and Compare: the same statistics and the same
printed layout as PyTorch's for the same block times, and timings that measure what runs."""

import random
import re

import pytest
import torch.utils.benchmark as tb

import chainrule as cr
from chainrule.utils import benchmark as cb


def _pair(raw, number=100, **names):
    spec = dict(stmt="x.mul(x).sum()", setup="pass", **names)
    ours = cb.Measurement(number, list(raw), cb.TaskSpec(**spec))
    theirs = tb.Measurement(number, list(raw), tb.TaskSpec(**spec))
    return ours, theirs


def _body(m):
    return repr(m).split("\n", 1)[1]  # past the object's address


RAWS = {
    "one": [3.1e-4],
    "steady": [1.20e-3, 1.21e-3, 1.19e-3, 1.22e-3, 1.20e-3, 1.18e-3],
    "noisy": [1.0e-3, 1.6e-3, 0.9e-3, 2.5e-3, 1.1e-3],
    "slightly noisy": [1.0e-3, 1.05e-3, 1.12e-3, 0.98e-3, 1.2e-3, 1.0e-3],
    "seconds": [2.5, 2.6, 2.4],
    "nanoseconds": [4.2e-6, 4.3e-6, 4.1e-6, 4.25e-6],
}


@pytest.mark.parametrize("raw", list(RAWS.values()), ids=list(RAWS))
@pytest.mark.parametrize(
    "names",
    [{}, {"label": "mul", "sub_label": "small", "description": "float32"}, {"sub_label": "s"}],
)
def test_a_measurement_reads_and_prints_as_torchs(raw, names):
    ours, theirs = _pair(raw, **names)
    for stat in ("times", "median", "mean", "iqr", "significant_figures", "has_warnings"):
        assert getattr(ours, stat) == pytest.approx(getattr(theirs, stat), rel=1e-12), stat
    assert ours.title == theirs.title and ours.as_row_name == theirs.as_row_name
    assert _body(ours) == _body(theirs)
    assert re.match(r"<chainrule\.utils\.benchmark\.Measurement object at 0x", repr(ours))


def test_a_multiline_statement_and_setup_print_as_torchs():
    spec = dict(stmt="y = x * 2\ny.sum()", setup="import math\nx = 3", sub_label="two lines")
    ours = cb.Measurement(10, [1e-3, 1.1e-3, 0.9e-3, 1e-3], cb.TaskSpec(**spec))
    theirs = tb.Measurement(10, [1e-3, 1.1e-3, 0.9e-3, 1e-3], tb.TaskSpec(**spec))
    assert _body(ours) == _body(theirs)


def _measurements(lib, seed=0):
    """Replicates of a grid of tasks: labels, sub_labels, descriptions, thread counts, envs."""
    rng = random.Random(seed)
    out = []
    for label in ("add", "matmul"):
        for threads in (1, 4):
            for sub in ("small", "a longer row name"):
                for desc in ("float32", "float64", "int"):
                    if (label, sub, desc) == ("matmul", "small", "int"):
                        continue  # a hole in the table
                    base = rng.uniform(1e-6, 5e-3)
                    spec = lib.TaskSpec("f(x)", "pass", label=label, sub_label=sub,
                                        description=desc, num_threads=threads)  # fmt: skip
                    for _ in range(2):  # two replicates of each, merged by Compare
                        raw = [base * rng.uniform(0.8, 1.6) * 10 for _ in range(5)]
                        out.append(lib.Measurement(10, raw, spec))
    return out


@pytest.mark.parametrize(
    "options", [[], ["trim"], ["warn"], ["color"], ["rowwise"], ["trim", "warn"]]
)
def test_compare_prints_the_tables_torch_prints(options):
    tables = []
    for lib, module in ((cb, cb), (tb, tb)):
        compare = module.Compare(_measurements(lib))
        if "trim" in options:
            compare.trim_significant_figures()
        if "warn" in options:
            compare.highlight_warnings()
        if "color" in options or "rowwise" in options:
            compare.colorize(rowwise="rowwise" in options)
        tables.append(str(compare))
    assert tables[0] == tables[1]
    assert "[" in tables[0] and "Times are in" in tables[0]


def test_compare_with_environments_prints_as_torchs():
    tables = []
    for lib in (cb, tb):
        results = []
        for env, scale in (("numpy 2", 1.0), ("old", 3.0)):
            for sub in ("a", "b"):
                spec = lib.TaskSpec(
                    "f()", "pass", label="L", sub_label=sub, description="d", env=env
                )
                results.append(lib.Measurement(1, [scale * 1e-3, scale * 1.1e-3], spec))
        tables.append(str(lib.Compare(results)))
    assert tables[0] == tables[1]


def test_compare_refuses_what_is_not_a_measurement():
    with pytest.raises(ValueError, match="Compare: expected Measurements"):
        cb.Compare([3])


def test_a_timer_times_its_statement_with_torch_in_its_globals():
    x = cr.randn(64)
    timer = cb.Timer(stmt="torch.mul(x, x).sum()", globals={"x": x}, label="mul")
    once = timer.timeit(200)
    assert once.number_per_run == 200 and len(once.raw_times) == 1 and once.median > 0
    blocked = timer.blocked_autorange(min_run_time=0.05)
    assert sum(blocked.raw_times) >= 0.05 and blocked.number_per_run >= 1
    seen = []
    adaptive = timer.adaptive_autorange(
        min_run_time=0.01, max_run_time=0.5, callback=lambda n, t: seen.append(n)
    )
    assert len(adaptive.raw_times) >= 4 or sum(adaptive.raw_times) > 0.5
    assert seen and set(seen) == {adaptive.number_per_run}
    # with a clock the statement itself advances, the Timer reports exactly its cost
    clock = [0.0]
    counted = cb.Timer(stmt="clock[0] += 2.5e-6", globals={"clock": clock}, timer=lambda: clock[0])
    assert counted.timeit(400).median == pytest.approx(2.5e-6, rel=1e-9)
    assert counted.blocked_autorange(min_run_time=0.01).median == pytest.approx(2.5e-6, rel=1e-9)


def test_timer_refusals_name_what_is_wrong():
    with pytest.raises(ValueError, match="Timer: stmt must be a string"):
        cb.Timer(stmt=lambda: None)
    with pytest.raises(ValueError, match="global_setup is for C\\+\\+"):
        cb.Timer(global_setup="#include <x>")
    with pytest.raises(ValueError, match="only Python statements"):
        cb.Timer(language="c++")


def test_the_benchmark_recipe_runs_on_chainrule():
    """PyTorch's benchmark recipe, its torch the suite's alias of chainrule."""
    from tests.pytorch_programs.programs.aliasing import torch_is_chainrule

    with torch_is_chainrule():
        import torch as lib
        import torch.utils.benchmark as benchmark

        def batched_dot_mul_sum(a, b):
            return a.mul(b).sum(-1)

        def batched_dot_bmm(a, b):
            a, b = a.reshape(-1, 1, a.shape[-1]), b.reshape(-1, b.shape[-1], 1)
            return lib.bmm(a, b).flatten(-3)

        x = lib.randn(100, 64)
        assert lib.allclose(batched_dot_mul_sum(x, x), batched_dot_bmm(x, x), atol=1e-5)
        results = []
        for fn in ("batched_dot_mul_sum", "batched_dot_bmm"):
            named = {"x": x, fn: locals()[fn]}
            t = benchmark.Timer(f"{fn}(x, x)", globals=named, label="Batched dot", sub_label=fn,
                                description="100x64")  # fmt: skip
            results.append(t.blocked_autorange(min_run_time=0.02))
        text = str(benchmark.Compare(results))
    assert "Batched dot" in text and "batched_dot_bmm" in text and "100x64" in text
