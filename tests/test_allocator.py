"""chainrule/allocator.py: `chainrule train` fixes malloc's thresholds unless
CHAINRULE_FASTPATH=0, and importing chainrule leaves them alone."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from chainrule import allocator, cli


def test_importing_chainrule_leaves_the_allocator_alone() -> None:
    code = "import sys, chainrule; print('chainrule.allocator' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_the_thresholds_are_set_where_the_c_library_is_glibc() -> None:
    # In a process of its own: the setting lasts for the rest of the process.
    code = "from chainrule import allocator; print(allocator.steady_allocator())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


@pytest.mark.parametrize(("value", "on"), [(None, True), ("1", True), ("0", False), (" 0", False)])
def test_the_fast_path_switch_turns_it_off(monkeypatch, value, on) -> None:
    if value is None:
        monkeypatch.delenv("CHAINRULE_FASTPATH", raising=False)
    else:
        monkeypatch.setenv("CHAINRULE_FASTPATH", value)
    assert allocator.enabled() is on


@pytest.mark.parametrize(("value", "calls"), [("1", 1), ("0", 0)])
def test_train_fixes_the_thresholds_unless_switched_off(tmp_path, monkeypatch, value, calls):
    pytest.importorskip("sklearn")
    called = []
    monkeypatch.setattr(allocator, "steady_allocator", lambda: called.append(True) or True)
    monkeypatch.setenv("CHAINRULE_FASTPATH", value)
    args = ["train", "moons", "--epochs", "1", "--quiet", "--out", str(tmp_path)]
    assert cli.main(args) == 0
    assert len(called) == calls
