"""The studies' command lines refuse numbers that cannot be right, before their first run and
without writing anything (the ranges: :mod:`hetsched.options`)."""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from test_cli import commands

from hetsched.cli import main

REFUSED = [
    # Tarplee: 0 seeds ran 3, a cap of 0 became 10,000, -2 seeds wrote an empty summary.
    # argparse names every spelling: the preferred one first, the old one still refused alike.
    (["experiment", "tarplee", "--tasks", "10", "--seeds", "0"], "--replicates/--seeds"),
    (["experiment", "tarplee", "--tasks", "10", "--seeds", "-2"], "--replicates/--seeds"),
    (["experiment", "tarplee", "--tasks", "10", "--replicates", "0"], "--replicates/--seeds"),
    (["experiment", "tarplee", "--tasks", "10", "--quadratic-cap", "0"], "--quadratic-cap"),
    (["experiment", "tarplee", "--tasks", "10", "--seed", "-1"], "--seed"),
    # Hwang on the engine: a negative gap ended in a numpy traceback after 16 runs; 0 ran.
    (["experiment", "hwang", "--interarrival", "-5"], "--interarrival"),
    (["experiment", "hwang", "--interarrival", "0"], "--interarrival"),
    (["experiment", "hwang", "--scale", "0"], "--scale"),
    (["experiment", "hwang", "--scale", "-1"], "--scale"),
    (["experiment", "hwang", "--scenarios", "24"], "--scenarios"),
    (["experiment", "hwang", "--seeds", "-1"], "--seeds"),
    (["experiment", "machovec", "--trials", "0"], "--trials"),
    (["experiment", "machovec", "--scale", "nan"], "--scale"),
    (["experiment", "hansen", "--trials", "0"], "--trials"),
    (["experiment", "hansen", "--points", "-3"], "--points"),
    (["experiment", "khemka", "--scenarios", "0"], "--days/--scenarios"),
    (["experiment", "khemka", "--days", "0"], "--days/--scenarios"),
    (["experiment", "hwang-model", "--jobs", "0"], "--jobs/--workers"),
    (["experiment", "hwang-model", "--workers", "0"], "--jobs/--workers"),
    (["experiment", "khemka", "--jobs", "0"], "--jobs"),
    (["compare", "--day", "-1"], "--day"),
    (["compare", "--etc-cov", "inf"], "--etc-cov"),
]


@pytest.mark.parametrize(("argv", "option"), REFUSED, ids=lambda v: " ".join(v)
                         if isinstance(v, list) else v)
def test_a_study_refuses_a_bad_number_before_running(
    argv: list[str], option: str, tmp_path: Path, capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    outdir = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "-o", str(outdir)])
    assert exit_.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"argument {option}" in last and "Traceback" not in last
    assert not outdir.exists() and not list(tmp_path.iterdir())


@pytest.mark.parametrize("argv", [["--scale", "-1"], ["--scale", "0"], ["--interarrival", "-5"],
                                  ["--interarrival", "0"], ["--scenarios", "24"],
                                  ["--seeds", "-1"]], ids=" ".join)
def test_the_hwang_model_study_refuses_a_bad_number(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """``--scale -1`` and ``0`` wrote results and figures; now refused, nothing written."""
    with pytest.raises(SystemExit) as exit_:
        main(["experiment", "hwang-model", "-o", str(tmp_path / "out"), *argv])
    assert exit_.value.code == 2
    assert f"argument {argv[0]}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


NAME_OPTIONS = [
    (["experiment", "tarplee", "--tasks", "10"], "--heuristics"),
    (["experiment", "tarplee", "--tasks", "10"], "--mappers"),
    (["experiment", "hansen"], "--batch-sizes"),
    (["experiment", "hansen"], "--slowdowns"),
    (["experiment", "hansen"], "--heuristics"),
    (["experiment", "machovec"], "--levels"),
    (["experiment", "machovec"], "--only"),
]


@given(case=st.sampled_from(NAME_OPTIONS),
       text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
       | st.sampled_from(["", ",", "nope", "lp,nope", "16", "5k,3k", "low,", " mixed ,x"]))
def test_a_study_refuses_unknown_names_before_running(
    case: tuple[list[str], str], text: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Drawn names (unknown ones, empty lists, junk) for the studies' name options: exit 2
    with one line naming the option, nothing written; names that are all known are left to
    the studies' own tests (they would run the study)."""
    argv, option = case
    parser = dict(commands())[tuple(argv[:2])]
    action = next(a for a in parser._actions if option in a.option_strings)
    try:
        action.type(text)
    except argparse.ArgumentTypeError:
        pass
    else:
        assume(False)
    outdir = tmp_path_factory.mktemp("study") / "out"
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), pytest.raises(SystemExit) as exit_:
        main([*argv, f"{option}={text}", "-o", str(outdir)])
    assert exit_.value.code == 2
    last = stderr.getvalue().strip().splitlines()[-1]
    named = "/".join(action.option_strings)  # argparse names every spelling of the option
    assert last.startswith(f"hetsched experiment {argv[1]}: error: argument {named}: ")
    assert not outdir.exists()
