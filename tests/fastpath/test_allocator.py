"""chainrule/allocator.py: `chainrule train` fixes malloc's thresholds unless the speed
tricks are off (CHAINRULE_FASTPATH=0), and importing chainrule leaves them alone."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from chainrule import fastpath
from chainrule.fastpath import allocator
from chainrule.tools import cli


def python(code: str, **env: str) -> str:
    """What ``code`` prints in a new process (the allocator's setting lasts a process)."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={**os.environ, **env},
    )  # fmt: skip
    return done.stdout.strip()


def test_importing_chainrule_leaves_the_allocator_alone() -> None:
    code = "import sys, chainrule; print('chainrule.fastpath.allocator' in sys.modules)"
    assert python(code) == "False"


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_the_thresholds_are_set_where_the_c_library_is_glibc() -> None:
    code = "from chainrule.fastpath import allocator; print(allocator.steady_allocator())"
    assert python(code) == "True"


@pytest.mark.parametrize(("switch", "calls"), [("on", 1), ("off", 0)])
def test_train_fixes_the_thresholds_unless_the_speed_tricks_are_off(
    tmp_path, monkeypatch, switch, calls
):
    pytest.importorskip("sklearn")
    called = []
    monkeypatch.setattr(allocator, "steady_allocator", lambda: called.append(True) or True)
    monkeypatch.setattr(fastpath.switch.state, "on", switch == "on")
    args = ["train", "moons", "--epochs", "1", "--quiet", "--out", str(tmp_path)]
    assert cli.main(args) == 0
    assert len(called) == calls


def test_the_documented_switch_is_the_environment_variable() -> None:
    """`CHAINRULE_FASTPATH=0 chainrule train ...` is how the docs turn the setting off."""
    code = "from chainrule import fastpath; print(fastpath.enabled())"
    assert python(code, CHAINRULE_FASTPATH="0") == "False"
    assert python(code) == "True" or os.environ.get("CHAINRULE_FASTPATH", "").strip() == "0"
