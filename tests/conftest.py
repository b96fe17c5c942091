"""What every test process shares: NumPy's BLAS, OpenMP and PyTorch on one thread each.

The suite runs as `pytest -n 2` on two cores, so a second BLAS thread in each worker only
competes with the other worker (and spins while it waits): pinned, the same tests took about
half the CPU time on a busy machine. The workers and the subprocesses the tests start inherit
these variables; one set beforehand is kept.
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
