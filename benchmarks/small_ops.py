"""Small-tensor ops as a per-row Python loop makes them, chainrule against PyTorch and, where
it means something, NumPy by hand, in microseconds per op.

Each op runs ``--ops`` times a step, on a (64, 16) batch, its rows taken in turn: forward
(its inputs require grad, so the graph is recorded, as in training) and, where the op has
one, forward and a backward call on its result (``y.backward(ones)``, one engine pass per
op); then the element writes and reads, the 0-d log and the one-draw multinomial of makemore's
counting and sampling loops, on tensors that record nothing. Last, the learner's per-row loop:
each row of the batch, plus a 0-d parameter, summed and added to a loss, then one backward
over the loop; reported per row.

    python benchmarks/small_ops.py [--ops 2000] [--steps 15] [--quick] [--steady-allocator]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
from common import interleaved, parse_args, process_note, with_pytorch

import chainrule as cr

ROWS, COLS = 64, 16
Step = Callable[[], object]


def _batch() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((ROWS, COLS)).astype(np.float32)


def _cases(lib: Any) -> dict[str, tuple[Callable[[int], Any], Any]]:
    """Each op, for ``lib`` (chainrule or torch, whose APIs agree): the op on row ``i`` and
    the gradient its result's backward is given (None: the op has no backward)."""
    rng = np.random.default_rng(1)
    x = lib.tensor(_batch(), requires_grad=True)
    data = lib.tensor(_batch())
    w = lib.tensor(rng.standard_normal(COLS).astype(np.float32), requires_grad=True)
    a = lib.tensor(np.float32(0.5), requires_grad=True)
    b = lib.tensor(np.float32(-1.5), requires_grad=True)
    flat = lib.tensor(rng.standard_normal(COLS).astype(np.float32), requires_grad=True)
    row = lib.tensor(rng.standard_normal((1, COLS)).astype(np.float32), requires_grad=True)
    p = lib.tensor(np.full((1, 1), 2.0, np.float32), requires_grad=True)
    q = lib.tensor(np.full((1, 1), 3.0, np.float32), requires_grad=True)
    ones_row, ones_2d = lib.ones(COLS), lib.ones(1, COLS)
    counts = lib.zeros((27, 27), dtype=lib.int32)
    total, logp = lib.tensor(np.float32(0.0)), lib.tensor(np.float32(-1.5))
    prob = lib.tensor(np.float32(0.25))
    plain = lib.tensor(_batch())
    weights = lib.tensor(np.abs(_batch()[:, :COLS]))  # a row of weights for each draw
    g = lib.Generator().manual_seed(2147483647)

    def count(i: int) -> None:  # makemore's bigram counts
        counts[i % 27, (i * 7) % 27] += 1

    def accumulate(i: int) -> None:  # makemore's log_likelihood += logprob
        nonlocal total
        total += logp

    def put(i: int) -> None:
        plain[i] = ones_row

    return {
        "x[i]": (lambda i: x[i], ones_row),
        "x[i:i+1]": (lambda i: x[i : i + 1], ones_2d),
        "a + b (0-d)": (lambda i: a + b, lib.tensor(np.float32(1.0))),
        ".item() (0-d)": (lambda i: a.item(), None),
        ".view(-1) of (1, 16)": (lambda i: row.view(-1), ones_row),
        ".view(1, 16) of (16,)": (lambda i: flat.view(1, COLS), ones_2d),
        "1x1 matmul": (lambda i: p @ q, lib.ones(1, 1)),
        "x[i] * w, w (16,)": (lambda i: data[i] * w, ones_row),
        "N[i, j] += 1, no grad": (count, None),
        "a += b (0-d), no grad": (accumulate, None),
        "x[i] = row, no grad": (put, None),
        "x[i, j].item(), no grad": (lambda i: plain[i, i % COLS].item(), None),
        "x[i, j], no grad": (lambda i: plain[i, i % COLS], None),
        "x[i], no grad": (lambda i: plain[i], None),
        "log (0-d), no grad": (lambda i: lib.log(prob), None),
        "multinomial of (16,), 1 draw": (
            lambda i: lib.multinomial(weights[i], 1, replacement=True, generator=g),
            None,
        ),
    }


def _numpy_cases() -> dict[str, tuple[Callable[[int], Any], Callable[[int], Any] | None]]:
    """The same ops in NumPy, and each one's forward and backward written by hand (the
    gradient accumulated into its inputs' buffers, as autograd does)."""
    rng = np.random.default_rng(1)
    x, data = _batch(), _batch()
    w = rng.standard_normal(COLS).astype(np.float32)
    a, b = np.array(0.5, np.float32), np.array(-1.5, np.float32)
    flat = rng.standard_normal(COLS).astype(np.float32)
    row = rng.standard_normal((1, COLS)).astype(np.float32)
    p, q = np.full((1, 1), 2.0, np.float32), np.full((1, 1), 3.0, np.float32)
    gx, gw, ga, gb = np.zeros_like(x), np.zeros_like(w), np.zeros_like(a), np.zeros_like(b)
    gflat, grow, gp, gq = (
        np.zeros_like(flat),
        np.zeros_like(row),
        np.zeros_like(p),
        np.zeros_like(q),
    )
    g_row, g_2d, g_0d, g_11 = np.ones(COLS, np.float32), np.ones((1, COLS), np.float32), \
        np.float32(1.0), np.ones((1, 1), np.float32)  # fmt: skip

    def index_bwd(i: int) -> None:
        _ = x[i]
        gx[i] += g_row

    def slice_bwd(i: int) -> None:
        _ = x[i : i + 1]
        gx[i : i + 1] += g_2d

    def add_bwd(i: int) -> None:
        _ = a + b
        np.add(ga, g_0d, out=ga)
        np.add(gb, g_0d, out=gb)

    def flatten_bwd(i: int) -> None:
        _ = row.reshape(-1)
        np.add(grow, g_row.reshape(1, COLS), out=grow)

    def unflatten_bwd(i: int) -> None:
        _ = flat.reshape(1, COLS)
        np.add(gflat, g_2d.reshape(-1), out=gflat)

    def matmul_bwd(i: int) -> None:
        _ = p @ q
        np.add(gp, g_11 @ q.T, out=gp)
        np.add(gq, p.T @ g_11, out=gq)

    def mul_bwd(i: int) -> None:
        r = data[i]
        _ = r * w
        np.add(gw, g_row * r, out=gw)

    counts = np.zeros((27, 27), np.int32)
    total, logp = np.zeros((), np.float32), np.array(-1.5, np.float32)
    prob = np.array(0.25, np.float32)
    plain = _batch()
    weights, draws = np.abs(_batch()), np.random.default_rng(2)

    def count(i: int) -> None:
        counts[i % 27, (i * 7) % 27] += 1

    def accumulate(i: int) -> None:
        np.add(total, logp, out=total)

    def put(i: int) -> None:
        plain[i] = g_row

    return {
        "x[i]": (lambda i: x[i], index_bwd),
        "x[i:i+1]": (lambda i: x[i : i + 1], slice_bwd),
        "a + b (0-d)": (lambda i: a + b, add_bwd),
        ".item() (0-d)": (lambda i: a.item(), None),
        ".view(-1) of (1, 16)": (lambda i: row.reshape(-1), flatten_bwd),
        ".view(1, 16) of (16,)": (lambda i: flat.reshape(1, COLS), unflatten_bwd),
        "1x1 matmul": (lambda i: p @ q, matmul_bwd),
        "x[i] * w, w (16,)": (lambda i: data[i] * w, mul_bwd),
        "N[i, j] += 1, no grad": (count, None),
        "a += b (0-d), no grad": (accumulate, None),
        "x[i] = row, no grad": (put, None),
        "x[i, j].item(), no grad": (lambda i: plain[i, i % COLS].item(), None),
        "x[i, j], no grad": (lambda i: plain[i, i % COLS, ...], None),  # a 0-d view
        "x[i], no grad": (lambda i: plain[i], None),
        "log (0-d), no grad": (lambda i: np.log(prob), None),
        "multinomial of (16,), 1 draw": (  # the largest weight / Exp(1), as PyTorch draws
            lambda i: np.argmax(weights[i] / draws.exponential(size=COLS)),
            None,
        ),
    }


def op_step(lib: Any, name: str, n: int, backward: bool) -> Step:
    """``n`` calls of op ``name`` on rows 0, 1, ... in turn, each with its backward or not."""
    op, grad = _cases(lib)[name]
    rows = [k % ROWS for k in range(n)]
    if not backward:

        def step() -> None:
            for i in rows:
                op(i)

        return step

    def step_bwd() -> None:
        for i in rows:
            op(i).backward(grad)

    return step_bwd


def numpy_op_step(name: str, n: int, backward: bool) -> Step:
    forward, by_hand = _numpy_cases()[name]
    op = by_hand if backward else forward
    assert op is not None
    rows = [k % ROWS for k in range(n)]

    def step() -> None:
        for i in rows:
            op(i)

    return step


def loop_step(lib: Any, loops: int, backward: bool) -> Step:
    """The learner's per-row loop, ``loops`` times: each row of the batch plus a 0-d
    parameter, summed into the loss; then (with ``backward``) one backward pass."""
    x = lib.tensor(_batch())
    c = lib.tensor(np.float32(0.5), requires_grad=True)

    def step() -> None:
        for _ in range(loops):
            loss = None
            for i in range(ROWS):
                s = (x[i] + c).sum()
                loss = s if loss is None else loss + s
            if backward:
                loss.backward()

    return step


def numpy_loop_step(loops: int, backward: bool) -> Step:
    """The loop in NumPy; its backward by hand: d loss / d c is one per element of the batch."""
    x, c, gc = _batch(), np.array(0.5, np.float32), np.zeros((), np.float32)

    def step() -> None:
        for _ in range(loops):
            loss = np.float32(0.0)
            for i in range(ROWS):
                loss = loss + (x[i] + c).sum()
            if backward:
                np.add(gc, np.float32(ROWS * COLS), out=gc)

    return step


def _row(label: str, medians: dict[str, float], per: int) -> str:
    us = {k: v / per * 1e6 for k, v in medians.items()}
    cells = "".join(f"{us[k]:11.3f}" if k in us else f"{'-':>11}"
                    for k in ("chainrule", "pytorch", "numpy (by hand)"))  # fmt: skip
    ratio = f"{us['chainrule'] / us['pytorch']:9.2f}x" if "pytorch" in us else ""
    return f"  {label:<34}{cells}   {ratio}"


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ops", type=int, default=2000, help="calls of each op a step")
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="a tiny run that only checks it works")
    args = parse_args(ap, argv, __file__)
    n, steps, warmup = (2 * ROWS, 2, 1) if args.quick else (args.ops, args.steps, 2)
    loops = max(1, n // ROWS)
    results: dict[str, dict[str, float]] = {}
    lines = []
    for name, (_, grad) in _cases(cr).items():
        for backward in (False, True) if grad is not None else (False,):
            makers: dict[str, Any] = {
                "chainrule": lambda nm=name, bw=backward: op_step(cr, nm, n, bw),
                "numpy (by hand)": lambda nm=name, bw=backward: numpy_op_step(nm, n, bw),
            }
            with_pytorch(makers, lambda torch, nm=name, bw=backward: op_step(torch, nm, n, bw))
            label = f"{name}, {'fwd + bwd' if backward else 'fwd'}"
            results[label] = medians = interleaved(makers, steps, warmup)
            lines.append(_row(label, medians, n))
    for backward in (False, True):
        makers = {
            "chainrule": lambda bw=backward: loop_step(cr, loops, bw),
            "numpy (by hand)": lambda bw=backward: numpy_loop_step(loops, bw),
        }
        with_pytorch(makers, lambda torch, bw=backward: loop_step(torch, loops, bw))
        label = f"row loop, per row, {'fwd + bwd' if backward else 'fwd'}"
        results[label] = medians = interleaved(makers, steps, warmup)
        lines.append(_row(label, medians, loops * ROWS))
    print(
        f"Small-tensor ops of a per-row loop, (64, 16) batch, {n} calls a step, us per op  "
        f"(each framework in a process of its own, {process_note()})"
    )
    print(f"  {'op':<34}{'chainrule':>11}{'pytorch':>11}{'numpy':>11}   chainrule / pytorch")
    print("\n".join(lines))
    return results


if __name__ == "__main__":
    main()
