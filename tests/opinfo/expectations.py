"""What the op database run expects beside agreement: chainrule's deliberate refusals (an op
and the reason its message gives) and the known disagreements, which run as strict expected
failures, so the list can only shrink."""

from __future__ import annotations

# ruff: noqa: E501  (the known disagreements are one line each, as a grep shows them)

# op (op_db's name, every variant of it) -> phrases of chainrule's refusal messages, each
# saying why it refuses what PyTorch computes.
REFUSALS: dict[str, tuple[str, ...]] = {
    # cropping is slicing: pad only grows a tensor
    "nn.functional.pad": ("negative padding is not supported",),
    # einsum takes the explicit form, the one a reader can check by eye
    "einsum": ("only the explicit form", "one letter a dim"),
    # chainrule has no sparse gradients: a dense one is always given
    "nn.functional.embedding": ("sparse gradients are not supported",),
    "nn.functional.embedding_bag": ("sparse gradients are not supported",),
    # a general matrix's eigenvalues are complex, and chainrule has no complex tensors yet
    "linalg.eig": ("complex tensors are not supported yet",),
    "linalg.eigvals": ("complex tensors are not supported yet",),
    # the transforms make or take complex tensors (the shifts are real, and computed)
    "fft": ("complex tensors are not supported yet",),
}

# (op, form, dtype, samples, what is wrong): form and dtype "*" for every one the op has;
# samples by index, "*" for every one of the case. Written first by `python -m
# tests.opinfo.coverage --known`, which prints the list a run disagrees on.
Samples = int | tuple[int, ...] | str
# fmt: off
KNOWN: list[tuple[str, str, str, Samples, str]] = [
]
# fmt: on


def refusal(op: str, message: str) -> str | None:
    """The listed reason when chainrule's `message` is its deliberate refusal of `op` (op_db's
    full name: `nn.functional.pad.circular` is `nn.functional.pad`'s)."""
    for name, phrases in REFUSALS.items():
        if op == name or op.startswith(name + "."):
            for phrase in phrases:
                if phrase in message:
                    return f"refused: {phrase}"
    return None


def matches(entry: tuple[str, str, str, Samples, str], case_id: str) -> bool:
    op, form, dtype = case_id.split("|")
    return entry[0] == op and entry[1] in ("*", form) and entry[2] in ("*", dtype)


# The known disagreements of the checks beyond the forward and first gradients (harness.TWICE,
# harness.DRAWS), in KNOWN's form and run the same way: second derivatives against PyTorch's,
# and random ops' large draws (support, mean and variance) against PyTorch's own.
# fmt: off
KNOWN_SECOND_DERIVATIVES: list[tuple[str, str, str, Samples, str]] = [
]
KNOWN_DRAWS: list[tuple[str, str, str, Samples, str]] = [
]
# fmt: on


def known(case_id: str, check: str = "") -> dict[int | str, str]:
    """The known disagreements of one case (`op|form|dtype`) in one check ("" for the forward
    and first gradients, KNOWN; harness.TWICE or harness.DRAWS for the later lists), by sample
    index or "*"."""
    entries = {"": KNOWN, "second derivative": KNOWN_SECOND_DERIVATIVES}.get(check, KNOWN_DRAWS)
    out: dict[int | str, str] = {}
    for entry in entries:
        if matches(entry, case_id):
            samples = entry[3]
            for s in samples if isinstance(samples, tuple) else (samples,):
                out[s] = entry[4]
    return out
