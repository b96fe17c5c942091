"""The package as users receive it: the sdist and the wheel build from a copy of the source,
carry the license and the typing marker, and the wheel installs and imports on its own.

Built with setuptools' own build backend, as pip calls it without build isolation, so no
network is needed; everything happens under a temporary folder, never in the source tree.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# one process per call: setuptools keeps state between two builds in one process
BUILD = (
    "import sys; from setuptools import build_meta; getattr(build_meta, sys.argv[1])(sys.argv[2])"
)


def run(*args: str, cwd: Path | None = None) -> str:
    """Run a command; its stdout, or a failure that shows what it printed."""
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist and the wheel, built from a copy of what the project ships."""
    tmp = tmp_path_factory.mktemp("packaging")
    source = tmp / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    shutil.copytree(ROOT / "src", source / "src", ignore=ignore)
    out = tmp / "dist"
    for build in ("build_sdist", "build_wheel"):
        run(sys.executable, "-c", BUILD, build, str(out), cwd=source)
    (sdist,), (wheel,) = out.glob("chainrule-*.tar.gz"), out.glob("chainrule-*.whl")
    return {"sdist": sdist, "wheel": wheel, "tmp": tmp}


def test_the_wheel_carries_the_license_and_the_typing_marker(dists: dict[str, Path]) -> None:
    names = set(zipfile.ZipFile(dists["wheel"]).namelist())
    assert "chainrule/py.typed" in names
    assert "chainrule/fastpath/allocator.py" in names
    info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
    assert f"{info}/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(dists["wheel"]).read(f"{info}/METADATA").decode()
    assert "License-Expression: MIT" in metadata
    entry_points = zipfile.ZipFile(dists["wheel"]).read(f"{info}/entry_points.txt").decode()
    assert "chainrule = chainrule.tools.cli:main" in entry_points


def test_the_names_list_ships_in_the_wheel_and_the_sdist(dists: dict[str, Path]) -> None:
    """chainrule.datasets.names() reads it as package data."""
    wheel = zipfile.ZipFile(dists["wheel"])
    assert {"chainrule/assets/names.txt", "chainrule/assets/README.md"} <= set(wheel.namelist())
    shipped = (ROOT / "src" / "chainrule" / "assets" / "names.txt").read_bytes()
    assert wheel.read("chainrule/assets/names.txt") == shipped
    with tarfile.open(dists["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert "src/chainrule/assets/names.txt" in names


def test_the_sdist_carries_the_license_and_the_sources(dists: dict[str, Path]) -> None:
    with tarfile.open(dists["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"LICENSE", "pyproject.toml", "README.md", "src/chainrule/py.typed"} <= names
    assert "src/chainrule/__init__.py" in names


def test_the_wheel_installs_and_imports_from_where_it_was_installed(
    dists: dict[str, Path],
) -> None:
    """A fresh environment with the wheel installed, and this environment's dependencies
    (numpy, safetensors, tqdm) reachable through a .pth line; the source tree's editable
    install is not, so the import must find the installed copy."""
    env = dists["tmp"] / "env"
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    paths = {"base": str(env), "platbase": str(env)}
    site = Path(sysconfig.get_path("purelib", vars=paths))
    ours = sysconfig.get_path("purelib")
    (site / "dependencies.pth").write_text(ours + "\n")
    run(sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
        "--target", str(site), str(dists["wheel"]))  # fmt: skip
    code = (
        "import chainrule as cr; x = cr.tensor([1.0, 2.0], requires_grad=True); "
        "(x * x).sum().backward(); print(cr.__file__); print(x.grad.tolist())"
    )
    where, grad = run(str(python), "-c", code, cwd=dists["tmp"]).split("\n")[:2]
    assert Path(where).is_relative_to(site)
    assert grad == "[2.0, 4.0]"
