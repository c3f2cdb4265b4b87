"""Start-up of the ``hetsched`` console script: heavy modules load only for the commands and
heuristics that need them.

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


def heavy_modules_after(arguments: list[str], cwd: Path,
                        heavy: tuple[str, ...] = HEAVY) -> tuple[int, list[str], str]:  # fmt: skip
    """``hetsched ARGUMENTS`` in a fresh Python: its exit status, the modules of ``heavy``
    it imported, its standard error."""
    result = subprocess.run(
        [sys.executable, "-c", LOADED.format(heavy=heavy), json.dumps(arguments)],
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


def generated(folder: Path, platform: str, workload: str, *options: str) -> None:
    """``platform.xml`` and ``workload.json`` of the presets, seed 1, in ``folder``."""
    for arguments in (
        ["platform", "generate", "--preset", platform, "--seed", "1", "-o", "platform.xml"],
        ["workload", "generate", "--preset", workload, "--seed", "1", *options,
         "-o", "workload.json"],
    ):  # fmt: skip
        with contextlib.redirect_stdout(io.StringIO()):
            assert main([*arguments[:-1], str(folder / arguments[-1])]) == 0


@pytest.mark.parametrize(
    ("name", "platform", "workload", "options", "allowed"),
    [
        ("rf-duplex", "hansen", "hansen-8-mixed", (), []),
        ("lp-makespan", "tarplee", "tarplee", ("--option", "tasks=50"),
         ["scipy.optimize", "scipy.sparse"]),
    ],
    ids=["hansen-rf-duplex", "tarplee-lp-makespan"],
)  # fmt: skip
def test_runs_import_only_the_scipy_they_compute_with(
    tmp_path: Path, name: str, platform: str, workload: str, options: tuple[str, ...],
    allowed: list[str],
) -> None:  # fmt: skip
    """rf-duplex computes P(i, (j, k)) from gamma and beta quantiles (Hansen et al. sec. II):
    scipy.special's, bit for bit scipy.stats' (tests/heuristics/robust/test_robustness.py);
    lp-makespan solves Tarplee et al.'s LP (sec. 2.2) with scipy.optimize's linprog."""
    generated(tmp_path, platform, workload, *options)
    run = ["run", name, "-p", "platform.xml", "-w", "workload.json", "-o", "out"]
    code, heavy, err = heavy_modules_after(run, tmp_path)
    assert code == 0, err
    assert heavy == allowed


def test_plot_loads_matplotlib_and_the_probe_sees_it(tiny: Path) -> None:  # noqa: F811
    """``hetsched plot`` draws with matplotlib: loaded then, and only then."""
    run = ["run", "max-vpr-ph", "-p", "platform.xml", "-w", "workload.json", "-o", "out"]
    assert heavy_modules_after(run, tiny)[:2] == (0, [])
    code, heavy, err = heavy_modules_after(["plot", "out"], tiny)
    assert code == 0, err
    assert "matplotlib" in heavy


def test_an_embedded_run_imports_neither_asyncio_nor_another_familys_heuristic(
    tiny: Path,  # noqa: F811
) -> None:
    """The summary computes Hwang et al.'s fairness baseline (sec. 6.1) with their heuristic,
    for Hwang workloads only: a Khemka et al. run never imports it. The embedded engine's
    in-process transport needs no ZeroMQ socket monitor (``zmq.utils.monitor``, which imports
    asyncio): only the transport to a scheduler over ZeroMQ imports it."""
    unneeded = ("hetsched.heuristics.fairness.two_level_fairness", "asyncio")
    run = ["run", "max-vpr-ph", "-p", "platform.xml", "-w", "workload.json", "-o", "out"]
    assert heavy_modules_after(run, tiny, unneeded)[:2] == (0, [])


def test_the_console_script_module_imports_no_numpy() -> None:
    """``import hetsched.cli`` loads no numpy (nor scipy): the console script can still set
    how many threads their OpenBLAS starts (:func:`hetsched.cli.console_main`)."""
    probe = "import sys, hetsched.cli; print(sorted({'numpy', 'scipy'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_numba_loads_only_when_a_schedule_is_searched(tiny: Path) -> None:  # noqa: F811
    """numba (0.2 s to import) compiles the node groups' loops
    (:mod:`hetsched.core.node_group_kernels`): ``--help`` and ``list`` do without it, a run
    of a heuristic that searches its schedule (Max VPR-PH) loads it."""
    for arguments in (["--help"], ["list"]):
        assert heavy_modules_after(arguments, tiny, ("numba",))[:2] == (0, [])
    run = ["run", "max-vpr-ph", "-p", "platform.xml", "-w", "workload.json", "-o", "out"]
    assert heavy_modules_after(run, tiny, ("numba",))[:2] == (0, ["numba"])
