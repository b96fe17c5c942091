"""Writing a user's output files (a page, a report, an export) whole or not at all: each new
file goes beside the old one and is then renamed over it (serialization's write_atomically),
so a full disk or a crash midway leaves the old file as it was."""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..serialization import write_atomically

Output = tuple[str | os.PathLike, str | bytes]  # a path and what goes in it (text as UTF-8)


def write_output(path: str | os.PathLike, data: str | bytes, op: str) -> None:
    """Write ``data`` to ``path`` atomically; ``op`` names the caller in the error for a
    folder that does not exist (which would otherwise name the temporary file)."""
    write_outputs([(path, data)], op)


def write_outputs(files: Sequence[Output], op: str) -> None:
    """Write files that belong together (an embedding's table and the config naming it):
    every new file is written beside its old one before any is renamed over it, so a disk
    that fills up midway leaves the old set whole."""
    for path, _ in files:
        folder = os.path.dirname(os.fspath(path)) or "."
        if not os.path.isdir(folder):
            raise FileNotFoundError(
                f"{op}: the folder {folder!r} does not exist; got path {os.fspath(path)!r}"
            )

    def write(k: int) -> None:
        if k == len(files):
            return
        path, data = files[k]
        raw = data.encode("utf-8") if isinstance(data, str) else data

        def fill(tmp: str) -> None:
            with open(tmp, "xb") as f:  # "x": never into a file someone else made
                f.write(raw)
            write(k + 1)  # the next file's temporary, while this one's is not yet renamed

        write_atomically(path, fill)

    write(0)
