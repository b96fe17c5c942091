"""A run folder's unfinished replacement is finished only when its manifest names nothing
but the folder's own files: any other entry is refused, naming the manifest and the entry,
before a single file is moved or removed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from chainrule.tools.run_files import file_in, finish_replacing, replace_together


def tree(root: Path) -> dict[str, bytes | str]:
    """Every path under root: a file's bytes, a link's target, a folder's mark."""
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            out[key] = "-> " + os.readlink(path)
        elif path.is_dir():
            out[key] = "dir"
        else:
            out[key] = path.read_bytes()
    return out


def world(tmp_path: Path) -> Path:
    """A run folder with a half-done replacement, beside files of the user's own."""
    (tmp_path / "victim.txt").write_text("the user's own")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x").write_text("outside")
    run = tmp_path / "shared" / "run"
    (run / ".incoming").mkdir(parents=True)
    (run / "metrics.json").write_text("old")
    (run / ".incoming" / "metrics.json").write_text("new")
    return run


# (what the manifest holds, or a function making the folder hostile and returning it)
HOSTILE: dict[str, Any] = {
    "a file to remove above the folder": {"files": [], "remove": ["../../victim.txt"]},
    "a file to move from above the folder": {"files": ["../../../victim.txt"], "remove": []},
    "an absolute path": {"files": [], "remove": ["/tmp/victim.txt"]},
    "a path into a subfolder": {"files": [], "remove": ["sub/x"]},
    "a backslash path": {"files": [], "remove": ["..\\victim.txt"]} if os.sep == "\\" else None,
    "the folder itself": {"files": [], "remove": ["."]},
    "its parent": {"files": [], "remove": [".."]},
    "an empty name": {"files": [], "remove": [""]},
    "a NUL byte": {"files": [], "remove": ["metrics.json\u0000"]},
    "a number": {"files": [], "remove": [3]},
    "a list in a list": {"files": [["metrics.json"]], "remove": []},
    "a string for a list": {"files": "metrics.json", "remove": []},
    "a list for the manifest": [["metrics.json"], []],
    "a key missing": {"files": ["metrics.json"]},
    "a key more": {"files": [], "remove": [], "run": ["rm -rf /"]},
    "null": None,
    "not JSON": "{files",
    "a good entry before a bad one": {"files": ["metrics.json"], "remove": ["../../victim.txt"]},
}


def link_out_removed(run: Path) -> Any:
    (run / "model.safetensors").symlink_to(run.parents[1] / "victim.txt")
    return {"files": ["metrics.json"], "remove": ["model.safetensors"]}


def link_out_moved_in(run: Path) -> Any:
    (run / ".incoming" / "curves.png").symlink_to(run.parents[1] / "outside" / "x")
    return {"files": ["metrics.json", "curves.png"], "remove": []}


def link_out_written_over(run: Path) -> Any:
    (run / "metrics.json").unlink()
    (run / "metrics.json").symlink_to(run.parents[1] / "victim.txt")
    return {"files": ["metrics.json"], "remove": []}


def incoming_links_out(run: Path) -> Any:
    (run / ".incoming" / "metrics.json").unlink()
    (run / ".incoming").rmdir()
    (run / ".incoming").symlink_to(run.parents[1] / "outside")
    return None  # the manifest, if any, would be read from outside


def a_folder_to_remove(run: Path) -> Any:
    (run / "keep").mkdir()
    return {"files": [], "remove": ["keep"]}


def a_folder_moved_over(run: Path) -> Any:
    (run / ".incoming" / "sub").mkdir()
    return {"files": ["metrics.json", "sub"], "remove": []}


MADE = [link_out_removed, link_out_moved_in, link_out_written_over, incoming_links_out,
        a_folder_to_remove, a_folder_moved_over]  # fmt: skip
CASES = [(k, v) for k, v in HOSTILE.items() if v is not None or k == "null"]
CASES += [(f.__name__, f) for f in MADE]


@pytest.mark.parametrize(("name", "plan"), CASES, ids=[c[0] for c in CASES])
def test_a_hostile_manifest_is_refused_before_anything_is_touched(tmp_path, name, plan) -> None:
    run = world(tmp_path)
    if callable(plan):
        plan = plan(run)
    if (run / ".incoming").is_dir() and not (run / ".incoming").is_symlink():
        text = plan if isinstance(plan, str) else json.dumps(plan)
        (run / ".incoming" / ".manifest.json").write_text(text)
    before = tree(tmp_path)
    with pytest.raises(ValueError) as e:
        finish_replacing(run)
    assert str(run) in str(e.value), e.value
    assert "nothing was" in str(e.value)
    assert tree(tmp_path) == before  # not one file moved, removed or written, in or out


def test_the_entry_refused_is_named(tmp_path) -> None:
    run = world(tmp_path)
    plan = {"files": ["metrics.json"], "remove": ["../../victim.txt"]}
    (run / ".incoming" / ".manifest.json").write_text(json.dumps(plan))
    refusal = r"under 'remove', names a file outside the folder .*; got '\.\./\.\./victim\.txt' \("
    with pytest.raises(ValueError, match=refusal + r"a path, not a plain file name\)"):
        finish_replacing(run)


def test_an_honest_manifest_is_finished(tmp_path) -> None:
    run = world(tmp_path)
    (run / "curves.png").write_text("old plot")
    plan = {"files": ["metrics.json"], "remove": ["curves.png", "gone.png"]}
    (run / ".incoming" / ".manifest.json").write_text(json.dumps(plan))
    finish_replacing(run)
    assert tree(run) == {"metrics.json": b"new"}
    assert (tmp_path / "victim.txt").read_text() == "the user's own"


def test_a_link_inside_the_folder_is_a_file_of_it(tmp_path) -> None:
    (tmp_path / "a").write_text("a")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    assert file_in(tmp_path, "b", "test") == str(tmp_path / "b")
    (tmp_path / "c").symlink_to(tmp_path.parent)
    with pytest.raises(ValueError, match="outside the folder"):
        file_in(tmp_path, "c", "test")


def test_replace_together_still_replaces(tmp_path) -> None:
    (tmp_path / "metrics.json").write_text("old")
    (tmp_path / "curves.png").write_text("old")
    with replace_together(tmp_path, ["metrics.json", "curves.png"]) as incoming:
        Path(incoming, "metrics.json").write_text("new")
    assert tree(tmp_path) == {"metrics.json": b"new"}
