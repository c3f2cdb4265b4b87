"""``hetsched check`` (schedulers/check_cli.py): one line per broken rule, exit status 0 when
every rule holds, 1 when one is broken, 2 when the name does not load."""

from __future__ import annotations

from pathlib import Path

import pytest

from hetsched.cli import main
from hetsched.schedulers.conformance import RULE_NAMES

BROKEN = '''
from hetsched.heuristics.baselines.backfilling import Fcfs


class Hidden(Fcfs):
    name = "hidden"

    def __init__(self, margin: float = 1.0) -> None:
        super().__init__()
        self._margin = margin


class Lazy(Fcfs):
    name = "lazy"
    summary = ""

    def map(self, event):
        return []


class NotOne:
    pass
'''


@pytest.fixture
def broken(tmp_path: Path) -> str:
    path = tmp_path / "broken.py"
    path.write_text(BROKEN)
    return str(path)


def test_a_conforming_heuristic_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "easy"]) == 0  # EASY keeps within energy budgets, nothing more
    assert capsys.readouterr().out == (
        f"easy (EasyBackfilling from hetsched): every rule holds ({len(RULE_NAMES) - 1} checked;"
        " not claimed: hard-deadlines)\n"
    )
    assert main(["check", "easy", "--rules", "clone,energy-budget"]) == 0
    assert capsys.readouterr().out.endswith(": every rule holds (2 checked)\n")


def test_each_broken_rule_is_one_line_with_its_fix(
    broken: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", f"{broken}:Lazy"]) == 1
    title, *lines = capsys.readouterr().out.splitlines()
    assert title == f"lazy (Lazy from file {broken}): 2 rule(s) broken"
    assert [line.split(":")[0] for line in lines] == ["metadata", "every-task-ends"]
    assert lines[0] == ("metadata: summary not set on Lazy; fix: set name (the name users"
                        " type), paper (first author, venue, section) and summary (one line)"
                        " on the class")
    assert "; fix: DROP (Action.DROP) a task you will never start" in lines[1]


@pytest.mark.parametrize(
    ("attribute", "rule"), [("Hidden", "get-params"), ("NotOne", "heuristic-class")]
)
def test_the_class_and_its_parameters(
    broken: str, attribute: str, rule: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", f"{broken}:{attribute}"]) == 1
    _, line = capsys.readouterr().out.splitlines()
    assert line.startswith(f"{rule}: ")


def test_rules_may_be_chosen(broken: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", f"{broken}:Lazy", "--rules", "metadata,clone"]) == 1
    assert [line.split(":")[0] for line in capsys.readouterr().out.splitlines()[1:]] == [
        "metadata"
    ]
    assert main(["check", "easy", "--rules", "clone,nope"]) == 2
    assert "--rules: unknown rule(s) nope (rules: heuristic-class," in capsys.readouterr().err


def test_a_name_that_does_not_load(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["check", f"{tmp_path}/absent.py:X"]) == 2
    assert "absent.py: no such file" in capsys.readouterr().err
    assert main(["check", "max-nothing"]) == 2
    assert "unknown heuristic 'max-nothing'" in capsys.readouterr().err
