"""The studies' command lines refuse numbers that cannot be right, before their first run and
without writing anything (issue 26's audit cases; ranges: :mod:`hetsched.options`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hetsched.cli import main
from hetsched.studies import hwang_model_study

REFUSED = [
    # Tarplee: 0 seeds ran 3, a cap of 0 became 10,000, -2 seeds wrote an empty summary.
    (["experiment", "tarplee", "--tasks", "10", "--seeds", "0"], "--seeds"),
    (["experiment", "tarplee", "--tasks", "10", "--seeds", "-2"], "--seeds"),
    (["experiment", "tarplee", "--tasks", "10", "--quadratic-cap", "0"], "--quadratic-cap"),
    (["experiment", "tarplee", "--tasks", "10", "--seed", "-1"], "--seed"),
    # Hwang on the engine: a negative gap ended in a numpy traceback after 16 runs; 0 ran.
    (["experiment", "hwang", "--interarrival", "-5"], "--interarrival"),
    (["experiment", "hwang", "--interarrival", "0"], "--interarrival"),
    (["experiment", "hwang", "--scale", "0"], "--scale"),
    (["experiment", "hwang", "--seeds", "-1"], "--seeds"),
    (["experiment", "machovec", "--trials", "0"], "--trials"),
    (["experiment", "machovec", "--scale", "nan"], "--scale"),
    (["experiment", "hansen", "--trials", "0"], "--trials"),
    (["experiment", "hansen", "--points", "-3"], "--points"),
    (["experiment", "khemka", "--scenarios", "0"], "--scenarios"),
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
        hwang_model_study.main(["-o", str(tmp_path / "out"), *argv])
    assert exit_.value.code == 2
    assert f"argument {argv[0]}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
