"""Writing a user's output file (a page, a report, an export) whole or not at all: the new
bytes go to a file beside the old one, which is then renamed over it (serialization's
write_atomically), so a full disk or a crash midway leaves the old file as it was."""

from __future__ import annotations

import os

from .serialization import write_atomically


def write_output(path: str | os.PathLike, data: str | bytes, op: str) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically; ``op`` names the caller in the
    error for a folder that does not exist (which would otherwise name the temporary file)."""
    folder = os.path.dirname(os.fspath(path)) or "."
    if not os.path.isdir(folder):
        raise FileNotFoundError(
            f"{op}: the folder {folder!r} does not exist; got path {os.fspath(path)!r}"
        )
    raw = data.encode("utf-8") if isinstance(data, str) else data
    write_atomically(path, lambda tmp: _write_new(tmp, raw))


def _write_new(path: str, raw: bytes) -> None:
    with open(path, "xb") as f:  # "x": never into a file someone else made
        f.write(raw)
