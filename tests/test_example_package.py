"""examples/my-heuristic, installed by ``make setup`` into the project's environment, through
``hetsched list``, ``check``, ``run`` and ``compare`` by its entry-point name, and by its
module (the tutorial, tests/test_tutorial.py, runs it on a real trace day)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_run import tiny  # noqa: F401 (the fixture)

from hetsched.cli import main
from hetsched.heuristics import registry

NAME = "smallest-etc"
MODULE = "my_heuristic.smallest_etc:SmallestEtc"


@pytest.fixture(autouse=True)
def installed() -> None:
    assert NAME in registry.installed(), (
        "examples/my-heuristic is not installed in this environment: run make setup"
    )


def test_list_shows_it_with_its_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith(NAME)]
    assert line.split()[:3] == [NAME, "entry", "point"]
    assert f"{MODULE} (my-heuristic 0.1.0)" in line


def test_check_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", NAME]) == 0
    assert capsys.readouterr().out.startswith(f"{NAME} (SmallestEtc from entry point {MODULE}")


def test_run_and_compare_by_name_and_by_module(
    tiny: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    """The tiny case of tests/running/test_run.py: job 1 (ETC fast 100 s, slow 200 s) alone at
    0 ends earliest on ``fast``, [0, 100); job 2 (fast 50 s, slow 100 s) at 10 ends at 150 on
    ``fast`` (busy until 100) but at 110 on ``slow``, free: [10, 110). Values 10 + 4 = 14 of
    16, makespan 110 s."""
    assert main(["run", NAME, "-p", "platform.xml", "-w", "workload.json", "--json"]) == 0
    by_name = json.loads(capsys.readouterr().out)
    assert by_name["heuristic"] == NAME and by_name["tasks_completed"] == 2
    assert (by_name["value_earned"], by_name["makespan"]) == (14.0, 110.0)
    assert main(["compare", "--platform", "platform.xml", "--workload", "workload.json",
                 "--heuristics", f"{NAME},{MODULE},easy", "-o", "compared"]) == 0
    table = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in table[1:4]}
    assert list(rows) == [NAME, MODULE, "easy"]
    assert rows[NAME][:4] == rows[MODULE][:4]  # the same class: the same schedule
    summary = json.loads((tiny / "compared" / "my_heuristic.smallest_etc-SmallestEtc"
                          / "summary.json").read_text())
    assert (summary["value_earned"], summary["makespan"]) == (14.0, 110.0)
