"""``hetsched experiment NAME`` (studies/experiment_cli.py): every study behind one command
line, with the options they share, its tables and figures printed alike."""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from hetsched.cli import main
from hetsched.studies import experiment_cli
from hetsched.studies.cells import CellExecutor
from hetsched.studies.experiment_cli import STUDIES, add_study_parser, run_study_command
from hetsched.studies.study import Study, Tables

NAMES = [study.name for study in STUDIES]


def test_every_registered_study_implements_the_protocol() -> None:
    assert NAMES == ["khemka", "machovec", "tarplee", "hansen", "hwang", "hwang-model"]
    for study in STUDIES:
        assert isinstance(study, Study)
        assert not inspect.isabstract(type(study)), study.name
        module = sys.modules[type(study).__module__]
        assert module.STUDY is study  # one study per module, named STUDY
        assert study.description == module.__doc__
        assert study.help and study.full_help
        for method in ("add_arguments", "instead", "run", "summarize", "figures"):
            assert callable(getattr(study, method)), (study.name, method)


@pytest.mark.parametrize("name", NAMES)
def test_each_study_has_its_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["experiment", name, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: hetsched experiment {name}")
    for option in ("--outdir", "--full", "--no-cache"):
        assert option in out, (name, option)


def parser_of(study: Study) -> argparse.ArgumentParser:
    studies = argparse.ArgumentParser().add_subparsers()
    add_study_parser(studies, study)
    return studies.choices[study.name]


@pytest.mark.parametrize("study", STUDIES, ids=NAMES)
def test_the_shared_options_and_their_defaults(study: Study) -> None:
    args = parser_of(study).parse_args([])
    assert args.outdir == Path("runs") / study.name
    assert args.full is False and args.no_cache is False
    assert args.study_object is study and args.func is run_study_command
    if study.jobs_help is None:
        assert not hasattr(args, "jobs") and not hasattr(args, "executor")
    else:
        assert (args.jobs, args.executor, args.scheduler_address) == (1, None, None)
    full = parser_of(study).parse_args(["--full", "-o", "x"])
    assert full.full and full.outdir == Path("x")


def test_which_studies_run_their_cells_on_executors() -> None:
    """Tarplee's runs stay in the process (its docstring says why), the others' go to
    worker processes or Dask."""
    assert [s.name for s in STUDIES if s.jobs_help is None] == ["tarplee"]
    assert parser_of(STUDIES[-1]).parse_args(["--workers", "2", "--out", "y"]).jobs == 2


def test_an_unknown_study_is_refused_naming_the_studies(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["experiment", "nope"])
    assert exit_.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("hetsched experiment: error: argument study: invalid choice: 'nope'")
    assert all(f"'{name}'" in last for name in NAMES)


class Recording(Study[list[int]]):
    """A study that records the protocol's calls, with two runs, one table file and one
    figure."""

    name = "recording"
    help = "a test study"
    full_help = "more runs"
    jobs_help = "runs at once"

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.executor: CellExecutor | None = None

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--list", action="store_true")

    def instead(self, args: argparse.Namespace) -> Iterable[str] | None:
        return ["a", "b"] if args.list else None

    def run(self, args: argparse.Namespace, executor: CellExecutor | None) -> list[int]:
        self.calls.append("run")
        self.executor = executor
        return [1, 2, 3] if args.full else [1, 2]

    def summarize(self, results: list[int], args: argparse.Namespace) -> Tables:
        self.calls.append("summarize")
        return Tables(f"{len(results)} runs", (args.outdir / "summary.csv",))

    def figures(self, results: list[int], args: argparse.Namespace) -> list[Path]:
        self.calls.append("figures")
        return [args.outdir / "fig.png"]


def test_the_command_runs_summarizes_and_draws_then_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    study = Recording()
    args = parser_of(study).parse_args(["--full", "--jobs", "3", "-o", "out"])
    assert run_study_command(args) == 0
    assert study.calls == ["run", "summarize", "figures"]
    assert study.executor == CellExecutor("processes", 3, progress=True)
    assert capsys.readouterr().out == (
        "3 runs\ntables: out/summary.csv\nfigure: out/fig.png\n"
    )


def test_what_a_study_prints_instead_runs_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    study = Recording()
    assert run_study_command(parser_of(study).parse_args(["--list"])) == 0
    assert study.calls == []
    assert capsys.readouterr().out == "a\nb\n"


def test_the_experiment_command_lists_every_study() -> None:
    subparsers = argparse.ArgumentParser().add_subparsers()
    experiment_cli.register(subparsers)
    experiment = subparsers.choices["experiment"]
    [studies] = [a for a in experiment._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(studies.choices) == NAMES
