"""A run folder's files: a set of them replaced as one, and every name read back from a file
in the folder (a manifest, metrics.json) checked to stay inside it before any file is touched.
Writing one file atomically and the tensors' own format are chainrule.serialization's.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
from collections.abc import Iterable, Iterator
from typing import Any

from ..serialization import write_atomically

INCOMING = ".incoming"  # the folder a new set of files is written into, beside the old
MANIFEST = ".manifest.json"  # written last into it: the set is whole, and what it replaces


def file_in(folder: str | os.PathLike, name: Any, source: str) -> str:
    """``folder``/``name`` for a name read back from a file (``source`` says which, and the
    entry): refused with a ValueError unless it is a plain file name (a string, no path
    separator, not '.' or '..', so neither absolute nor climbing out) whose path, followed
    through any symbolic link, stays inside ``folder``. A folder someone sent may name any
    path in its files; none of it may reach outside."""
    folder = os.fspath(folder)
    why = _not_plain(name)
    if why is None:
        path = os.path.join(folder, name)
        real, home = os.path.realpath(path), os.path.realpath(folder)
        if os.path.dirname(real) != home:  # a link leading out (or into a subfolder)
            why = f"a link to {real!r}, outside the folder"
    if why is not None:
        raise ValueError(
            f"{source} names a file outside the folder {folder!r}; got {name!r} ({why}); "
            "nothing was read, moved or removed"
        )
    return path


def _not_plain(name: Any) -> str | None:
    """Why ``name`` is not a plain file name, or None when it is."""
    if not isinstance(name, str):
        return f"a {type(name).__name__}, not a file name"
    if name in ("", ".", ".."):
        return "not a file name"
    if "\0" in name or "/" in name or (os.altsep and os.altsep in name) or os.sep in name:
        return "a path, not a plain file name"
    return None


@contextlib.contextmanager
def replace_together(folder: str | os.PathLike, names: Iterable[str] = ()) -> Iterator[str]:
    """Replace a set of files in ``folder`` as one (a run's model, metrics and plots: never
    new metrics beside an old model). Yields a fresh folder, ``folder``/.incoming, to write
    the new files into; on leaving it without an error, a manifest naming them, and those
    of ``names`` (the files earlier sets held) that this set lacks, is written there last,
    then the files are moved into ``folder`` and the lacking ones removed. A process killed
    before the manifest exists leaves the old set; killed after, the next
    :func:`finish_replacing` (at the next replace_together, and in every command that reads
    a run) completes the move. An error inside removes the new files."""
    finish_replacing(folder)
    incoming = os.path.join(folder, INCOMING)
    os.makedirs(incoming)
    try:
        yield incoming
        written = sorted(n for n in os.listdir(incoming) if not n.startswith("."))
        plan = {"files": written, "remove": sorted(set(names) - set(written))}
        write_atomically(os.path.join(incoming, MANIFEST), lambda tmp: _write_json(tmp, plan))
    except BaseException:
        shutil.rmtree(incoming, ignore_errors=True)
        raise
    finish_replacing(folder)


def finish_replacing(folder: str | os.PathLike) -> None:
    """Complete or undo a :func:`replace_together` that a killed process left half done:
    with its manifest, the new set is moved in (again: what was moved already is skipped);
    without, the new files are removed and the old set stands. The manifest is checked
    whole first (see :func:`_planned`): a ValueError naming it and the entry, and nothing
    touched, when it names anything but files of the folder."""
    incoming = os.path.join(folder, INCOMING)
    if not os.path.lexists(incoming):
        return
    files, remove = _planned(folder)
    for name in files:
        with contextlib.suppress(FileNotFoundError):
            os.replace(os.path.join(incoming, name), os.path.join(folder, name))
    for name in remove:
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(folder, name))
    shutil.rmtree(incoming)


def _planned(folder: str | os.PathLike) -> tuple[list[str], list[str]]:
    """(the files to move in, the files to remove) of the unfinished replacement in
    ``folder``, every entry checked before any is acted on: .incoming a folder of its own
    (not a link), the manifest a JSON object with lists of strings under "files" and
    "remove", each a plain name (:func:`file_in`) of a file that is not a folder, the files
    to move in plain files of .incoming."""
    incoming = os.path.join(folder, INCOMING)
    if os.path.islink(incoming) or not os.path.isdir(incoming):
        got = f"a link to {os.path.realpath(incoming)!r}" if os.path.islink(incoming) else "a file"
        raise ValueError(
            f"finish_replacing: {incoming!r} is not a folder of the run's own; got {got}; "
            "nothing was moved or removed (remove it to go on)"
        )
    manifest = os.path.join(incoming, MANIFEST)
    try:
        with open(manifest, encoding="utf-8") as f:
            plan = json.load(f)
    except FileNotFoundError:  # killed before the set was whole: the old set stands
        return [], []
    except (OSError, ValueError) as e:
        raise ValueError(
            f"finish_replacing: {manifest!r} cannot be read; got {e}; nothing was moved or removed"
        ) from None
    if (
        not isinstance(plan, dict)
        or sorted(plan) != ["files", "remove"]
        or not all(isinstance(plan[k], list) for k in plan)
    ):
        raise ValueError(
            f"finish_replacing: {manifest!r} is not a manifest (a JSON object of two lists, "
            f'"files" and "remove"); got {str(plan)[:120]}; nothing was moved or removed'
        )
    for key in ("files", "remove"):
        source = f"finish_replacing: {manifest!r}, under {key!r},"
        for name in plan[key]:
            target = file_in(folder, name, source)  # where it goes, or what goes
            problem = None
            if key == "files":
                moved = file_in(incoming, name, source)
                if os.path.lexists(moved) and not stat.S_ISREG(os.lstat(moved).st_mode):
                    problem = "which in .incoming is not a plain file"
            if os.path.isdir(target) and not os.path.islink(target):
                problem = "which in the folder is a folder"
            if problem is not None:
                raise ValueError(
                    f"{source} names {name!r}, {problem}; nothing was moved or removed"
                )
    return plan["files"], plan["remove"]


def _write_json(path: str, value: Any) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f)
