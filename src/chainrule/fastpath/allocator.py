"""The C allocator's settings for a training process: glibc malloc's two thresholds, which
`chainrule train` (unless CHAINRULE_FASTPATH=0) and the benchmarks (on request) fix before
they run. Importing chainrule never touches them: a library leaves its process's allocator
to the program that owns it.
"""

from __future__ import annotations

import ctypes

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt's parameters, from malloc.h
MMAP_THRESHOLD = 32 << 20  # glibc's largest: a 4096x2048 float32 array still comes from the heap
TRIM_THRESHOLD = 1 << 30


def steady_allocator() -> bool:
    """Fix glibc malloc's mmap and trim thresholds for the rest of the process; return
    whether they were set (False where the C library is not glibc).

    Left alone, glibc maps every block above the mmap threshold afresh at each allocation,
    and hands free memory above the trim threshold back to the system, to be page-faulted in
    again on the next step. It moves both thresholds as blocks are freed, so a training loop
    whose arrays are a few MiB keeps paying for page faults whenever the sizes it frees
    change. Fixed high, every step reuses the memory the previous one freed. The price: memory
    freed after a peak stays with the process instead of going back to the system.
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    return mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and ok
