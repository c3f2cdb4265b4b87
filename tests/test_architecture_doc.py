"""docs/architecture.md against the tree: what it names exists, and every module is named.

The layout table of docs/architecture.md is where a newcomer looks up a module, so it must
follow the tree both ways:

* every path it names (``core/driver.py``, ``tests/heuristics/value/``) exists, from the
  repository root or from a folder its line names (``wheels/`` on the row of ``docker/``), and
  every bare module name (``preflight.py``) on a line that also names a folder or a path
  exists under one of those folders;
* every module of the package (everything under ``hetsched/``) and every shared test helper
  (a module of ``tests/`` that is not a test file) is named: by its path from the repository
  root, or by its file name on a line that names its folder. The pybatsim files that
  :mod:`hetsched.schedulers.generated` writes into ``schedulers/``, one per heuristic, are
  named as a family (``maxVpr.py`` holds ``MaxVpr``), not one by one.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository root."""

ARCHITECTURE = ROOT / "docs" / "architecture.md"
"""The document checked."""

PATH = re.compile(r"(?<![\w./<>-])((?:[\w.-]+/)+(?:[\w.-]+\.py)?)(?![\w<>])")
"""A path of the tree: folders ending with ``/``, optionally a module (``core/driver.py``)."""

MODULE = re.compile(r"`([\w-]+\.py)`")
"""A bare module name in backticks (```preflight.py```)."""


def _lines() -> list[str]:
    """The lines of docs/architecture.md (a table row is one line)."""
    return ARCHITECTURE.read_text(encoding="utf-8").splitlines()


def _folders(line: str) -> list[Path]:
    """The folders a line names: its folder paths and the folders of its module paths."""
    folders = []
    for path in PATH.findall(line):
        folder = ROOT / path if path.endswith("/") else (ROOT / path).parent
        folders.append(folder)
    return folders


def _documented_modules() -> list[Path]:
    """Every module the layout must name: the package's modules and the shared test helpers.

    The pybatsim files of ``schedulers/`` are not a package: they are named as a family.
    """
    modules = [
        path for path in (ROOT / "hetsched").rglob("*.py") if path.name != "__init__.py"
    ]
    helpers = [
        path for path in (ROOT / "tests").rglob("*.py")
        if not path.name.startswith("test_") and path.name != "__init__.py"
    ]
    return sorted(modules + helpers)


def test_every_named_path_exists() -> None:
    missing = []
    for number, line in enumerate(_lines(), start=1):
        folders = _folders(line)
        for path in PATH.findall(line):
            if not any((base / path).exists() for base in [ROOT, *folders]):
                missing.append(f"docs/architecture.md:{number}: {path}")
        for name in MODULE.findall(line) if folders else []:
            if not any((folder / name).exists() or any(folder.rglob(name)) for folder in folders):
                missing.append(f"docs/architecture.md:{number}: {name} (under {line[:40]!r})")
    assert not missing, "named in docs/architecture.md but not in the tree:\n" + "\n".join(missing)


def test_every_module_is_named() -> None:
    lines = _lines()
    unnamed = []
    for module in _documented_modules():
        relative = module.relative_to(ROOT).as_posix()
        folder = module.parent.relative_to(ROOT).as_posix() + "/"
        named = any(
            relative in line or (f"`{module.name}`" in line and f"`{folder}" in line)
            for line in lines
        )
        if not named:
            unnamed.append(relative)
    assert not unnamed, "modules docs/architecture.md does not name:\n" + "\n".join(unnamed)
