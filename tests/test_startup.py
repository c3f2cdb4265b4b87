"""Start-up of the ``hetsched`` console script (issue 23, item 1): heavy modules load only for
the commands and heuristics that need them.

scipy.stats (Hansen et al.'s robustness model, the studies' confidence intervals), scipy's LP
solver (Tarplee et al.'s LP bound) and matplotlib (``hetsched plot``, the studies' figures)
cost seconds to import. ``hetsched --help``, ``hetsched list`` and ``hetsched run`` of a
Khemka et al. heuristic on the embedded engine use none of them: each runs in a fresh Python
here, which then lists the heavy modules it holds. A Hansen et al. run needs the gamma and beta
quantiles of its robustness model: it takes them from scipy.special (0.4 s to import), not
scipy.stats (1 s); a Tarplee et al. LP run loads scipy's LP solver and nothing else heavy.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_run import tiny  # noqa: F401 (fixture)

from hetsched.cli import main

HEAVY = ("scipy.stats", "scipy.optimize", "scipy.sparse", "matplotlib")
"""Modules that none of the commands below may import."""

LOADED = """
import contextlib, io, json, sys
from hetsched.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
    try:
        code = main(json.loads(sys.argv[1]))
    except SystemExit as exit:
        code = exit.code
heavy = sorted(name for name in sys.modules if name in {heavy!r})
print(json.dumps([code, heavy, err.getvalue()]))
"""


def heavy_modules_after(arguments: list[str], cwd: Path) -> tuple[int, list[str], str]:
    """``hetsched ARGUMENTS`` in a fresh Python: its exit status, the modules of :data:`HEAVY`
    it imported, its standard error."""
    result = subprocess.run(
        [sys.executable, "-c", LOADED.format(heavy=HEAVY), json.dumps(arguments)],
        cwd=cwd, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    code, heavy, err = json.loads(result.stdout)
    return code, heavy, err


@pytest.mark.parametrize(
    "arguments",
    [
        ["--help"],
        ["list"],
        ["run", "max-vpr-ph", "-p", "platform.xml", "-w", "workload.json", "-o", "out"],
    ],
    ids=["help", "list", "run-max-vpr-ph"],
)
def test_commands_do_not_import_heavy_modules(tiny: Path, arguments: list[str]) -> None:  # noqa: F811
    code, heavy, err = heavy_modules_after(arguments, tiny)
    assert code == 0, err
    assert heavy == []


@pytest.fixture
def hansen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Hansen et al. batch of 8 applications and its platform in ``tmp_path`` (the current
    directory)."""
    monkeypatch.chdir(tmp_path)
    for arguments in (
        ["platform", "generate", "--preset", "hansen", "--seed", "1", "-o", "hansen.xml"],
        ["workload", "generate", "--preset", "hansen-8-mixed", "--seed", "1", "-o", "hansen.json"],
    ):
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(arguments) == 0
    return tmp_path


def test_a_robust_run_does_not_import_scipy_stats(hansen: Path) -> None:
    """rf-duplex computes P(i, (j, k)) from gamma and beta quantiles (Hansen et al. sec. II):
    scipy.special's, bit for bit scipy.stats' (tests/heuristics/robust/test_robustness.py)."""
    run = ["run", "rf-duplex", "-p", "hansen.xml", "-w", "hansen.json", "-o", "out"]
    code, heavy, err = heavy_modules_after(run, hansen)
    assert code == 0, err
    assert heavy == []


def test_plot_loads_matplotlib_and_the_probe_sees_it(tiny: Path) -> None:  # noqa: F811
    """``hetsched plot`` draws with matplotlib: loaded then, and only then."""
    run = ["run", "max-vpr-ph", "-p", "platform.xml", "-w", "workload.json", "-o", "out"]
    assert heavy_modules_after(run, tiny)[:2] == (0, [])
    code, heavy, err = heavy_modules_after(["plot", "out"], tiny)
    assert code == 0, err
    assert "matplotlib" in heavy
