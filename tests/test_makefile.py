"""The Makefile's set-up: pybatsim and batsim-py, whose pins pip cannot satisfy on Python 3.11,
are installed with ``--no-deps`` after every install that runs pip's resolver, so that ``make
setup`` (and ``make quickstart``) print no "ERROR: pip's dependency resolver ..." lines for
these intended installs: pip checks conflicts only on installs that resolve dependencies."""

from __future__ import annotations

import re
from pathlib import Path

MAKEFILE = Path(__file__).resolve().parents[1] / "Makefile"


def _setup_pip_installs() -> list[str]:
    """The ``pip install`` lines of the recipe that makes ``$(BIN)/hetsched``."""
    recipe = re.search(r"^\$\(BIN\)/hetsched:.*?\n((?:\t.*\n)+)", MAKEFILE.read_text(), re.M)
    assert recipe, "no $(BIN)/hetsched recipe in the Makefile"
    return [line.strip() for line in recipe[1].splitlines()
            if "pip install" in line and not line.strip().startswith("#")]


def test_the_pinned_packages_are_installed_last_without_their_dependencies() -> None:
    installs = _setup_pip_installs()
    pinned = [i for i, line in enumerate(installs)
              if "$(PYBATSIM)" in line or "$(BATSIM_PY)" in line]
    resolving = [i for i, line in enumerate(installs) if "--no-deps" not in line]
    assert pinned and resolving, installs
    assert all("--no-deps" in installs[i] for i in pinned), installs
    assert min(pinned) > max(resolving), installs  # no resolver run after them
    assert any("$(PYBATSIM)" in installs[i] for i in pinned)
    assert any("$(BATSIM_PY)" in installs[i] for i in pinned)
