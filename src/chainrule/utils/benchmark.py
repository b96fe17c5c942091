"""``torch.utils.benchmark``'s Timer, Measurement and Compare, as PyTorch's tutorials time
code with them: a statement run in blocks, the block times kept as replicates, their median
and interquartile range printed in PyTorch's layout, and tables of many measurements."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import textwrap
import timeit
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["Compare", "Measurement", "TaskSpec", "Timer", "select_unit", "trim_sigfig"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # seconds: no measurement is read finer than this
_IQR_WARN = 0.1  # an IQR past this fraction of the median is worth a warning
_IQR_GROSS_WARN = 0.25


def select_unit(t: float) -> tuple[str, float]:
    """The unit that writes a time of ``t`` seconds with one to three leading digits."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def _english(unit: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[unit]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (3.14159, 2 gives 3.1)."""
    scale = 10 ** (math.ceil(math.log10(abs(x))) - n)
    return float(round(x / scale) * scale)


def _quantile(ordered: list[float], q: float) -> float:
    """The q-quantile of sorted values, interpolated linearly between neighbours."""
    where = q * (len(ordered) - 1)
    low = math.floor(where)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (where - low)


@contextlib.contextmanager
def _threads(n: int) -> Iterator[None]:
    """BLAS limited to ``n`` threads inside, where threadpoolctl is installed to do it."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # the process's own setting stands
        yield
        return
    with threadpool_limits(n):
        yield


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What a Timer runs and the names it is shown by (all but its globals)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        named = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{named}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        if self.setup in ("pass", ""):
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        parts = [self.title, self.description or "", self.setup_str()]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts if p)


@dataclasses.dataclass
class Measurement:
    """The block times of one statement: ``raw_times`` (seconds per block of
    ``number_per_run`` runs), and the statistics of the per-run ``times``."""

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None

    def __getattr__(self, name: str) -> Any:  # the TaskSpec's fields, read through
        if name in {f.name for f in dataclasses.fields(TaskSpec)}:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute {name!r}")

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    def _sorted(self) -> list[float]:
        return sorted(self.times)

    @property
    def median(self) -> float:
        return _quantile(self._sorted(), 0.5)

    @property
    def mean(self) -> float:
        return sum(self.times) / len(self.times)

    @property
    def iqr(self) -> float:
        ordered = self._sorted()
        return _quantile(ordered, 0.75) - _quantile(ordered, 0.25)

    @property
    def significant_figures(self) -> int:
        """How many figures the middle half of the replicates supports (at most 4)."""
        ordered = self._sorted()
        middle = ordered[len(ordered) // 4 : math.ceil(3 * len(ordered) / 4)]
        mean = sum(middle) / len(middle)
        spread = math.sqrt(sum((t - mean) ** 2 for t in middle) / len(middle))
        interval = max(1.645 * spread / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        figures = math.floor(math.log10(self.median / interval))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    def meets_confidence(self, threshold: float = _IQR_WARN) -> bool:
        return self.iqr / self.median < threshold

    @property
    def _warnings(self) -> tuple[str, ...]:
        if self.meets_confidence(_IQR_WARN):
            return ()
        why = (
            "This suggests significant environmental influence."
            if not self.meets_confidence(_IQR_GROSS_WARN)
            else "This could indicate system fluctuation."
        )
        share = self.iqr / self.median * 100
        return (f"  WARNING: Interquartile range is {share:.1f}% of the median measurement.\n"
                f"           {why}",)  # fmt: skip

    @property
    def has_warnings(self) -> bool:
        return bool(self._warnings)

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str:
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.task_spec.sub_label or self.task_spec.stmt or "[Unknown]"

    def __repr__(self) -> str:
        n, ordered = len(self.times), self._sorted()
        unit, scale = select_unit(self.median)
        p25, p75 = _quantile(ordered, 0.25) / scale, _quantile(ordered, 0.75) / scale
        lines = [object.__repr__(self), self.task_spec.summarize()]
        lines.append(f"  {'Median: ' if n > 1 else ''}{self.median / scale:.2f} {unit}")
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({p25:.2f} to {p75:.2f})")
        runs = "per measurement," if n > 1 else ","
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        lines.append(
            f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs {runs} {threads}"
        )
        return "\n".join([*lines, *self._warnings])

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """Replicates of one TaskSpec joined into one Measurement of single runs."""
        grouped: dict[TaskSpec, list[float]] = collections.defaultdict(list)
        for m in measurements:
            grouped[m.task_spec].extend(m.times)
        return [Measurement(1, times, spec) for spec, times in grouped.items()]


class Timer:
    """PyTorch's ``torch.utils.benchmark.Timer``: ``stmt`` timed after ``setup``, with
    ``globals`` (``torch`` among them unless given); ``label``, ``sub_label``,
    ``description`` and ``env`` name it in Measurements and Compare's tables."""

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = timeit.default_timer,
        globals: dict[str, Any] | None = None,  # noqa: A002  (PyTorch's name)
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: str = "python",
    ) -> None:
        if not isinstance(stmt, str):
            raise ValueError(f"Timer: stmt must be a string of code; got {type(stmt).__name__}")
        if language not in ("python", "py"):
            raise ValueError(
                f"Timer: only Python statements can be timed; got language {language!r}"
            )
        if global_setup:
            raise ValueError(
                f"Timer: global_setup is for C++ statements; got {global_setup!r}; move it to setup"
            )
        import chainrule  # what PyTorch's Timer puts in the globals as `torch`

        self._globals = dict(globals or {})
        self._globals.setdefault("torch", chainrule)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(
            stmt, setup, global_setup, label, sub_label, description, env, num_threads
        )

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)  # never 0: units come from the log

    def timeit(self, number: int = 1000000) -> Measurement:
        """One block of ``number`` runs, after a warm-up of a hundredth of it."""
        with _threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return Measurement(number, [self._timeit(number)], self._task_spec)

    def _block_size(self, min_run_time: float) -> int:
        """Runs per block: grown tenfold until the timer's own overhead is negligible."""
        with _threads(self._task_spec.num_threads):
            overheads = sorted(self._timeit(0) for _ in range(5))
            number = 1
            while True:
                taken = self._timeit(number)
                if overheads[2] / taken <= 1e-4 and taken >= min_run_time / 1000:
                    return number
                if taken > min_run_time or number * 10 > 2147483647:
                    return number
                number *= 10

    def _loop(
        self,
        number: int,
        stop: Callable[[list[float]], bool],
        min_run_time: float,
        max_run_time: float | None,
        callback: Callable[[int, float], Any] | None,
    ) -> list[float]:
        total, times, done = 0.0, [], False
        with _threads(self._task_spec.num_threads):
            while total < min_run_time or not done:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                done = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(
        self, callback: Callable[[int, float], Any] | None = None, min_run_time: float = 0.2
    ) -> Measurement:
        """Blocks of a size that hides the timer's overhead, until ``min_run_time`` seconds
        are spent."""
        number = self._block_size(min_run_time)
        times = self._loop(number, lambda times: True, min_run_time, None, callback)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback: Callable[[int, float], Any] | None = None,
    ) -> Measurement:
        """Blocks until the IQR is under ``threshold`` of the median (after 4 blocks and
        ``min_run_time``), or ``max_run_time`` is spent."""
        number = self._block_size(0.05)

        def stop(times: list[float]) -> bool:
            return len(times) > 3 and Measurement(number, times, self._task_spec).meets_confidence(
                threshold
            )

        times = self._loop(number, stop, min_run_time, max_run_time, callback)
        return Measurement(number, times, self._task_spec)


_COLORS = {"best": "\033[92m\033[1m", "good": "\033[34m\033[1m", "bad": "\033[2m\033[91m"}
_COLORS["very bad"], _END = "\033[31m\033[1m", "\033[0m\033[0m"


def _colored(text: str, value: float, best: float) -> str:
    """A cell colored by its time against the best of its row or column, as PyTorch's."""
    if value <= best * 1.01 or value <= best + 100e-9:
        return _COLORS["best"] + text + _END
    if value <= best * 1.1:
        return _COLORS["good"] + text + _END
    if value >= best * 5:
        return _COLORS["very bad"] + text + _END
    if value >= best * 2:
        return _COLORS["bad"] + text + _END
    return text


class _Column:
    """How one column's numbers are written: digits enough for its largest median."""

    def __init__(self, results: list[Measurement | None], scale: float, trim: bool, warn: bool):
        self.scale, self.trim = scale, trim
        self.warn = warn and any(r.has_warnings for r in results if r)
        present = [r for r in results if r is not None]
        lead = [math.ceil(math.log10(r.median / scale)) for r in present]
        decimals = (
            min(max(r.significant_figures - d, 0) for d, r in zip(lead, present, strict=True))
            if trim
            else 1
        )
        width = max(lead) + decimals + (1 if decimals else 0)
        self.template = f"{{:>{width}.{decimals}f}}{{:>{7 if self.warn else 0}}}"

    def cell(self, m: Measurement | None) -> str:
        if m is None:
            return " " * len(self.template.format(1.0, ""))
        value = m.median / self.scale
        if self.trim:
            value = trim_sigfig(value, m.significant_figures)
        spread = f" (! {m.iqr / m.median * 100:.0f}%)" if self.warn and m.has_warnings else ""
        return self.template.format(value, spread)


def _table(results: list[Measurement], colorize: str, trim: bool, warn: bool) -> str:
    """One label's measurements as PyTorch's Compare lays them out: a row per thread count,
    environment and row name, a column per description."""
    unit, scale = select_unit(min(r.median for r in results))

    def row_of(m: Measurement) -> tuple[int, str, str]:
        return m.num_threads, m.env, m.as_row_name

    rows = list(dict.fromkeys(row_of(r) for r in results))
    rows.sort(key=lambda key: key[:2])
    cols = list(dict.fromkeys(r.description for r in results))
    grid: list[list[Measurement | None]] = [[None] * len(cols) for _ in rows]
    for r in results:
        grid[rows.index(row_of(r))][cols.index(r.description)] = r
    envs = {r.env for r in results}
    env_width = max(len(e) for e in envs) if len(envs) > 1 else 0
    columns = [_Column([line[j] for line in grid], scale, trim, warn) for j in range(len(cols))]
    texts: list[list[str]] = [["", *[c or "" for c in cols]]]
    prior: tuple[Any, Any] = (None, None)
    for (threads, env, name), line in zip(rows, grid, strict=True):
        shown = f"({env})" if len(envs) > 1 and (threads, env) != prior else ""
        texts.append(["  " + shown.ljust(env_width + 4) + name, *map(_Column.cell, columns, line)])
        prior = (threads, env)
    widths = [max(len(t[j]) for t in texts) for j in range(len(texts[0]))]
    head = "  |  ".join(t.center(w) for t, w in zip(texts[0], widths, strict=True))
    out, last_threads = [head], None
    for (threads, _, _), text, line in zip(rows, texts[1:], grid, strict=True):
        if threads != last_threads:
            out.append(f"{threads} threads: ".ljust(len(head), "-"))
            last_threads = threads
        cells = [text[0].ljust(widths[0])]
        for j, (cell, m) in enumerate(zip(text[1:], line, strict=True)):
            cell = cell.center(widths[j + 1])
            group = [g[j] for g, key in zip(grid, rows, strict=True) if key[0] == threads]
            pool = line if colorize == "rowwise" else group
            best = [r.median for r in pool if r is not None]
            if colorize != "none" and m is not None and best:
                cell = _colored(cell, m.median, min(best))
            cells.append(cell)
        out.append("  |  ".join(cells))
    label = results[0].label or ""
    note = ""
    if warn and any(r.has_warnings for r in results):
        note = "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
    title = f"[{(' ' + label + ' ').center(len(head) - 2, '-')}]"
    return "\n".join([title, *out, "", f"Times are in {_english(unit)}s ({unit}).", note])


class Compare:
    """PyTorch's ``torch.utils.benchmark.Compare``: measurements as tables, one per label
    (replicates of one task merged), rows by sub_label and thread count, columns by
    description; ``print()`` or ``str()`` renders them."""

    def __init__(self, results: list[Measurement]) -> None:
        self._results: list[Measurement] = []
        self.extend_results(results)
        self._trim, self._colorize, self._warn = False, "none", False

    def extend_results(self, results: Iterable[Measurement]) -> None:
        results = list(results)
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(
                    f"Compare: expected Measurements (what a Timer returns); got {type(r)}"
                )
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        self._trim = True

    def colorize(self, rowwise: bool = False) -> None:
        self._colorize = "rowwise" if rowwise else "columnwise"

    def highlight_warnings(self) -> None:
        self._warn = True

    def __str__(self) -> str:
        by_label: dict[Any, list[Measurement]] = collections.defaultdict(list)
        for m in Measurement.merge(self._results):
            by_label[m.label].append(m)
        tables = [
            _table(group, self._colorize, self._trim, self._warn) for group in by_label.values()
        ]
        return "\n".join(tables)

    def print(self) -> None:
        print(str(self))
