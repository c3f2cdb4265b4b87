"""One policy vocabulary for ``hetsched experiment hwang`` and ``hwang-model``
(studies/hwang_policies.py), ``--list-policies`` on both, ``hwang-model --outdir``."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import ModuleType

import pytest

from hetsched.cli import main
from hetsched.studies import hwang, hwang_model_study
from hetsched.studies.experiment_cli import add_study_parser
from hetsched.studies.hwang_policies import spelled_as_in


def parsed(module: ModuleType, *argv: str) -> argparse.Namespace:
    """``argv`` parsed by the study of ``module``'s ``hetsched experiment`` parser."""
    studies = argparse.ArgumentParser().add_subparsers()
    add_study_parser(studies, module.STUDY)
    return studies.choices[module.STUDY.name].parse_args(list(argv))


def test_each_study_takes_the_others_spelling_of_a_cell() -> None:
    model = parsed(hwang_model_study, "--policies", "pa-rr/rpa/maf,fairness/rpa/allcore")
    assert model.policies == ["pa-rr/rpa/maf-normalized", "fairness/-/allcore"]
    engine = parsed(hwang, "--policies", "pa-rr/rpa/maf-normalized,fairness/-/maf")
    assert engine.policies == ["pa-rr/rpa/maf", "fairness/rpa/maf"]
    assert parsed(hwang_model_study, "--policies", "aaf/epa/maf-raw").policies == [
        "aaf/epa/maf-raw"]


def test_every_engine_cell_is_a_model_cell_and_back() -> None:
    """The engine's 40 cells are the model-time grid's 50 without MAF raw."""
    model_cells = {spelled_as_in(cell, hwang_model_study.POLICIES) for cell in hwang.POLICIES}
    assert model_cells == {c for c in hwang_model_study.POLICIES if not c.endswith("maf-raw")}
    for cell in hwang.POLICIES:
        assert spelled_as_in(spelled_as_in(cell, hwang_model_study.POLICIES),
                             hwang.POLICIES) == cell  # fmt: skip


def test_the_engine_study_refuses_maf_raw_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "study"
    assert main(["experiment", "hwang", "-o", str(out), "--policies", "pa-rr/rpa/maf-raw"]) == 2
    assert "unknown policy 'pa-rr/rpa/maf-raw'" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(("study", "cells"), [("hwang", hwang.POLICIES),
                                              ("hwang-model", hwang_model_study.POLICIES)])
def test_list_policies_on_both_studies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], study: str, cells: tuple[str, ...]
) -> None:
    out = tmp_path / "study"
    assert main(["experiment", study, "--list-policies", "-o", str(out)]) == 0
    assert capsys.readouterr().out.splitlines() == list(cells)
    assert not out.exists()


@pytest.mark.parametrize("flag", ["-o", "--outdir", "--out"])
def test_hwang_model_output_folder_spellings(flag: str) -> None:
    assert parsed(hwang_model_study, flag, "somewhere").outdir == Path("somewhere")
