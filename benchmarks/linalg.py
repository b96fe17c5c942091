"""chainrule.linalg beside torch.linalg: each op's time at n x n (8, 64, 256, 512), float32 and
float64, forward and forward + backward, interleaved in one process so that machine noise
hits both alike; the best of the repeats reported (a shared machine's noise only adds time),
in CPU time (another process's load does not count), with the ratio chainrule / torch;
``--batch 64`` times batches of 64 matrices. Both call LAPACK (NumPy's
and SciPy's OpenBLAS here, PyTorch's MKL); ``--raw`` adds the bare LAPACK routine of each op
through SciPy beside torch's, what no wrapper can beat.

    OMP_NUM_THREADS=1 python benchmarks/linalg.py          # pinned to one thread
    python benchmarks/linalg.py --sizes 64 512 --ops inv det
    python benchmarks/linalg.py --sizes 8 --batch 64   # batches of small matrices
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.linalg as sl
import torch
from common import pin_torch_threads, process_note

import chainrule as cr

SIZES = (8, 64, 256, 512)


def _arrays(op: str, n: int, dtype: str, batch: int = 0) -> list[Any]:
    """The op's arguments: well conditioned, symmetric positive-definite where it needs it;
    ``batch`` matrices where batch is not 0."""
    rng = np.random.default_rng(n)
    shape = (batch, n, n) if batch else (n, n)
    a = rng.standard_normal(shape) / np.sqrt(n)
    if op in ("cholesky", "eigh"):
        a = a @ np.swapaxes(a, -1, -2) + np.eye(n)
    elif op == "matrix_exp":
        a = a / 4
    else:
        a = a + 2 * np.eye(n)
    rhs = [rng.standard_normal((*shape[:-1], 8))] if op in ("solve", "lstsq") else []
    arrays = [a, *rhs]
    if op == "lu_solve":
        arrays.append(rng.standard_normal((*shape[:-1], 8)))
    return [x.astype(np.float32 if dtype == "f32" else np.float64) for x in arrays]


def _inputs(lib: Any, op: str, n: int, dtype: str, grad: bool, batch: int) -> list[Any]:
    return [lib.tensor(x, requires_grad=grad) for x in _arrays(op, n, dtype, batch)]


def _total(out: Any) -> Any:
    """One scalar over every floating output, for backward."""
    parts = out if isinstance(out, tuple) else (out,)
    parts = [p for p in parts if p.is_floating_point() and p.requires_grad]
    return sum(p.sum() for p in parts)


def ops(lib: Any) -> dict[str, Callable[..., Any]]:
    la = lib.linalg
    return {
        "inv": la.inv,
        "solve": la.solve,
        "det": la.det,
        "slogdet": lambda a: la.slogdet(a)[1],
        "logdet": lib.logdet,
        "qr": la.qr,
        "lu_factor": lambda a: la.lu_factor(a)[0],
        "lu_solve": lambda a, b: la.lu_solve(*la.lu_factor(a), b),
        "lu": lambda a: la.lu(a)[1:],
        "cholesky": la.cholesky,
        "eigh": la.eigh,
        "svd": lambda a: la.svd(a, full_matrices=False),
        "lstsq": lambda a, b: la.lstsq(a, b).solution,
        "matrix_exp": la.matrix_exp,
        "pinv": la.pinv,
        "matrix_norm": la.matrix_norm,
        "svdvals": la.svdvals,
        "matrix_norm_2": lambda a: la.matrix_norm(a, 2),
    }


def raw(op: str) -> Callable[[Any], Any] | None:
    """The LAPACK routine behind the op, called through SciPy with no checks or copies."""
    calls: dict[str, Callable[[Any], Any]] = {
        "inv": lambda a: _lapack("getri", a)(*_lapack("getrf", a)(a)[:2]),
        "det": lambda a: _lapack("getrf", a)(a),
        "slogdet": lambda a: _lapack("getrf", a)(a),
        "logdet": lambda a: _lapack("getrf", a)(a),
        "lu_factor": lambda a: _lapack("getrf", a)(a),
        "lu": lambda a: _lapack("getrf", a)(a),
        "cholesky": lambda a: _lapack("potrf", a)(a, lower=1),
        "qr": lambda a: _lapack("geqrf", a)(a),
        "eigh": lambda a: _lapack("syevd", a)(a, lower=1),
        "svd": lambda a: _lapack("gesdd", a)(a, full_matrices=0),
        "svdvals": lambda a: _lapack("gesdd", a)(a, compute_uv=0),
        "matrix_norm_2": lambda a: _lapack("gesdd", a)(a, compute_uv=0),
        "solve": lambda a: _lapack("gesv", a)(a, _rhs(a)),
        "lstsq": lambda a: _lapack("gelsy", a)(a, _rhs(a), _jpvt(a), 1e-7, lwork=_gelsy_work(a)),
    }
    return calls.get(op)


def _lapack(name: str, a: Any) -> Any:
    return sl.get_lapack_funcs(name, (a,))


def _rhs(a: Any) -> Any:
    return np.ones((a.shape[0], 8), dtype=a.dtype, order="F")


def _jpvt(a: Any) -> Any:
    return np.zeros(a.shape[1], dtype=np.int32)


def _gelsy_work(a: Any) -> int:
    return int(sl.get_lapack_funcs("gelsy_lwork", (a,))(*a.shape, 8, 1e-7)[0])


def _timer(fn: Callable[[], Any]) -> Callable[[], float]:
    """CPU seconds per call of fn, over enough calls to last about 2 ms."""
    fn()
    start = time.process_time()
    fn()
    once = time.process_time() - start
    number = max(1, int(2e-3 / max(once, 1e-7)))

    def run() -> float:
        start = time.process_time()
        for _ in range(number):
            fn()
        return (time.process_time() - start) / number

    return run


def case(
    lib: Any, op: str, n: int, dtype: str, backward: bool, batch: int = 0
) -> Callable[[], Any]:
    fn = ops(lib)[op]
    args = _inputs(lib, op, n, dtype, backward, batch)
    if not backward:

        def forward() -> Any:
            with lib.no_grad():
                return fn(*args)

        return forward
    return lambda: _total(fn(*args)).backward()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--ops", nargs="+", default=list(ops(torch)))
    ap.add_argument("--dtypes", nargs="+", default=["f32", "f64"])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--batch", type=int, default=0, help="time batches of this many matrices")
    ap.add_argument("--no-backward", action="store_true")
    ap.add_argument("--raw", action="store_true", help="add SciPy's bare LAPACK routine")
    args = ap.parse_args()
    pin_torch_threads()
    shape = f"batches of {args.batch}, " if args.batch else ""
    print(f"chainrule.linalg / torch.linalg, {shape}best of {args.repeat} (ms); {process_note()}")
    head = f"{'op':12s} {'n':>4s} {'dtype':5s} {'pass':8s} {'torch':>9s} {'chainrule':>10s}"
    print(head + f" {'ratio':>6s}" + (f" {'raw':>8s} {'raw/torch':>9s}" if args.raw else ""))
    passes = ["fwd"] + ([] if args.no_backward else ["fwd+bwd"])
    for op in args.ops:
        for n in args.sizes:
            for dtype in args.dtypes:
                for kind in passes:
                    runs = {
                        lib.__name__: _timer(case(lib, op, n, dtype, kind != "fwd", args.batch))
                        for lib in (torch, cr)
                    }
                    bare = raw(op) if args.raw and kind == "fwd" and not args.batch else None
                    if bare is not None:
                        a = np.asfortranarray(_arrays(op, n, dtype)[0])
                        runs["raw"] = _timer(lambda a=a, bare=bare: bare(a))
                    times: dict[str, list[float]] = {k: [] for k in runs}
                    for _ in range(args.repeat):
                        for k, run in runs.items():
                            times[k].append(run())
                    med = {k: min(v) * 1e3 for k, v in times.items()}
                    t, c = med["torch"], med["chainrule"]
                    line = f"{op:12s} {n:4d} {dtype:5s} {kind:8s} {t:9.3f} {c:10.3f} {c / t:6.2f}"
                    if "raw" in med:
                        line += f" {med['raw']:8.3f} {med['raw'] / t:9.2f}"
                    print(line, flush=True)


if __name__ == "__main__":
    main()
