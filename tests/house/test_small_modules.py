"""A file is worth opening for a concern of its own: a module of a few dozen lines that one
other module of chainrule imports belongs in that module, unless it is a place a reader is
sent to (a PyTorch import path, a trick of fastpath/, a file other programs import)."""

from __future__ import annotations

import pathlib

from tests.house.test_layout import SRC, _imports, _module_name

SMALL = 40  # lines

# Small modules with one importer that stay files of their own, each with why.
ALLOWED = {
    "chainrule.fastpath.allocator": (
        "benchmarks/ and `chainrule train` fix malloc's thresholds from it, and importing "
        "chainrule must not import it (tests/fastpath/test_allocator.py)"
    ),
    "chainrule.fastpath.elements": (
        "a trick of fastpath/, one file each; Tensor.__getitem__ reaches it as fastpath.view_at"
    ),
    "chainrule.tools.layout": (
        "docs/make_notebook.py fits its SVGs with it too, and viz.py, its importer, is at the "
        "800-line limit"
    ),
    "chainrule.utils.data.dataloader": "torch.utils.data.dataloader's import path",
    "chainrule.utils.data.dataset": "torch.utils.data.dataset's import path",
    "chainrule.utils.data.distributed": "torch.utils.data.distributed's import path",
    "chainrule.utils.data.sampler": "torch.utils.data.sampler's import path",
    "chainrule.utils.hooks": "torch.utils.hooks' import path",
}


def small_single_use() -> dict[str, tuple[pathlib.Path, int, str]]:
    """Each module (not a package: its folder is its point) under SMALL lines that exactly one
    other module of chainrule imports: its file, its length and its importer."""
    paths = {_module_name(p): p for p in SRC.rglob("*.py")}
    edges = {m: _imports(p, set(paths)) for m, p in paths.items()}
    found = {}
    for module, path in sorted(paths.items()):
        lines = len(path.read_text().splitlines())
        importers = [m for m, imported in edges.items() if module in imported and m != module]
        if path.name != "__init__.py" and lines < SMALL and len(importers) == 1:
            found[module] = (path, lines, importers[0])
    return found


def _fold(module: str, importer: str) -> str:
    """Where a small module goes: a primitive into the ops/ file of its kind (ops/ holds the
    primitives, whatever imports them), anything else into its one importer."""
    if module.startswith("chainrule.ops."):
        return f"move its primitives into the ops/ file of their kind (imported by {importer})"
    return f"fold it into {importer}"


def test_a_small_module_with_one_importer_is_folded_into_it() -> None:
    found = small_single_use()
    unlisted = [
        f"{path.relative_to(SRC.parent.parent)} ({lines} lines): {_fold(module, importer)}, "
        "or add it to ALLOWED in tests/house/test_small_modules.py with why it is a file"
        for module, (path, lines, importer) in found.items()
        if module not in ALLOWED
    ]
    assert unlisted == [], "\n".join(unlisted)
    stale = sorted(set(ALLOWED) - set(found))
    assert stale == [], f"tests/house/test_small_modules.py: remove from ALLOWED: {stale}"
