"""What spawned ranks run in the multiprocessing tests, in a module of its own so that each
child imports chainrule alone."""

import os

import chainrule as cr


def write_rank(rank, folder, scale):
    """A rank's work: a tensor computed and saved where the parent reads it."""
    cr.save(cr.arange(3.0) * scale + rank, os.path.join(folder, f"{rank}.pt"))


def fail_on_one(rank):
    if rank == 1:
        raise ValueError("rank 1 cannot go on")


def exit_with_code(rank):
    os._exit(3)
