"""Install paths: hetsched without pybatsim, and runs from the project root.

``pip install .`` installs hetsched without pybatsim (it cannot be a dependency: its pin
``pyzmq<23`` does not build on Python 3.11). Then ``hetsched --help`` and the commands that do
not need pybatsim must work, and the others must say how to install it. A Python whose
``import batsim`` fails stands for that installation here (``sys.modules["batsim"] = None``).

``python -m pytest`` and ``python -m hetsched.cli`` from the project root put the root first on
``sys.path``, where hetsched's own ``schedulers/`` folder shadows pybatsim's package of that
name; stock pybatsim schedulers must run all the same.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_run import tiny  # noqa: F401 (fixture)

from hetsched.dependencies import (
    PYBATSIM_INSTALL,
    MissingDependencyError,
    require,
)

ROOT = Path(__file__).resolve().parents[1]
WITHOUT = """
import contextlib, io, json, sys
for name in {modules!r}:
    sys.modules[name] = None  # `import name` now raises ImportError, as when not installed
from hetsched.cli import main
results = []
for arguments in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(arguments)
        except SystemExit as exit:
            code = exit.code
    results.append([code, out.getvalue(), err.getvalue()])
print(json.dumps(results))
"""


def hetsched_without(
    modules: tuple[str, ...], commands: list[list[str]], cwd: Path
) -> list[tuple[int, str, str]]:
    """``hetsched ARGUMENTS`` for each of ``commands``, in one Python where ``modules`` cannot
    be imported: (exit status, standard output, standard error) of each."""
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT.format(modules=modules), json.dumps(commands)],
        cwd=cwd, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return [tuple(item) for item in json.loads(result.stdout)]


def test_help_and_pybatsim_free_commands_work_without_pybatsim(tmp_path: Path) -> None:
    commands = [["--help"], ["run", "--help"], ["compare", "--help"], ["list"],
                ["platform", "generate", "--preset", "khemka", "--max-procs", "64",
                 "--fraction", "0.3", "-o", "p.xml"]]  # fmt: skip
    for arguments, (code, _, err) in zip(
        commands, hetsched_without(("batsim",), commands, tmp_path), strict=True
    ):
        assert code == 0, (arguments, err)
    assert (tmp_path / "p.xml").is_file()


NEEDS_PYBATSIM = [
    ["run", "easy", "-p", "platform.xml", "-w", "workload.json"],
    ["run", "pybatsim:easyBackfill", "-p", "platform.xml", "-w", "workload.json"],
    ["compare", "--platform", "platform.xml", "--workload", "workload.json",
     "--heuristics", "easy", "-o", "cmp"],
    ["serve", "easy"],
    ["batsim", "-p", "platform.xml", "-w", "workload.json"],
]  # fmt: skip


def test_commands_needing_pybatsim_say_how_to_install_it(tiny: Path) -> None:  # noqa: F811
    results = hetsched_without(("batsim",), NEEDS_PYBATSIM, tiny)
    for arguments, (code, _, err) in zip(NEEDS_PYBATSIM, results, strict=True):
        assert code == 2, (arguments, err)
        assert err.startswith(f"hetsched {arguments[0]}: error: pybatsim 3.2.1 is not installed")
        assert f"`{PYBATSIM_INSTALL}`" in err and "pyzmq<23" in err
        assert len(err.splitlines()) == 1, err
    assert not (tiny / "runs").exists() and not (tiny / "cmp").exists()


def test_require_names_the_install_command_and_keeps_other_import_errors() -> None:
    assert require("json").__name__ == "json"
    saved = sys.modules.get("docker", False)
    sys.modules["docker"] = None  # type: ignore[assignment]
    try:
        with pytest.raises(MissingDependencyError, match=r"pip install 'hetsched\[docker\]'"):
            require("docker")
    finally:
        if saved is False:
            del sys.modules["docker"]
        else:
            sys.modules["docker"] = saved  # type: ignore[assignment]
    with pytest.raises(ModuleNotFoundError) as caught:
        require("hetsched_no_such_module")
    assert not isinstance(caught.value, MissingDependencyError)


def test_stock_scheduler_runs_from_the_project_root(tiny: Path) -> None:  # noqa: F811
    """``python -m`` from the root: ``import schedulers`` finds hetsched's source folder first."""
    script = (
        "import sys, schedulers\n"
        f"assert schedulers.__file__.startswith({str(ROOT)!r}), schedulers.__file__\n"
        "from hetsched.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, "run", "pybatsim:easyBackfill",
         "-p", str(tiny / "platform.xml"), "-w", str(tiny / "workload.json"),
         "-o", str(tiny / "ebf"), "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert '"value_percent": 100.0' in result.stdout  # test_run.py's hand-computed 16 of 16


def test_python_m_pytest_from_the_project_root(tmp_path: Path) -> None:
    """The issue's case: test modules that import pybatsim's ``schedulers`` collect and run."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "--basetemp", str(tmp_path / "inner"),
         "tests/running/test_run.py::test_embedded_stock_easy_backfill_by_hand",
         "tests/engine/test_engine_simulation.py::test_easy_backfill_by_hand"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "2 passed" in result.stdout
