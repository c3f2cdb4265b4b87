"""``hetsched experiment hwang`` (studies/hwang.py): the cells chosen on the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from hetsched.cli import main as hetsched_main
from hetsched.studies.cells import CellExecutor
from hetsched.studies.hwang import grid, study


def main(argv: list[str]) -> int:
    """``hetsched experiment hwang ARGV``."""
    return hetsched_main(["experiment", "hwang", *argv])


def test_unknown_scenarios_and_policies_stop_before_anything_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "study"
    with pytest.raises(SystemExit) as refused:
        main(["-o", str(out), "--scenarios", "0"])
    assert refused.value.code == 2
    assert "argument --scenarios" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"unknown scenario 24 \(Table 8: 1 to 23\)"):
        grid(True, [0], [], scenarios=[24])
    assert main(["-o", str(out), "--policies", "pa-rr/rpa/maf,paf/rpa/best"]) == 2
    assert "unknown policy 'paf/rpa/best'" in capsys.readouterr().err
    assert not out.exists()


def test_scenarios_and_policies_choose_the_cells() -> None:
    runs = grid(True, [0, 1], [], scenarios=[2, 20], policies=["pa-rr/epa/maf"])
    assert [(r.scenario, r.first, r.metric, r.second, r.seed) for r in runs] == [
        (2, "pa-rr", "epa", "maf", 0), (20, "pa-rr", "epa", "maf", 0),
        (2, "pa-rr", "epa", "maf", 1), (20, "pa-rr", "epa", "maf", 1)]
    assert len(grid(True, [0], [])) == 23 * 40  # the paper's 40 cells (metric x levels)
    assert len(grid(False, [0], [])) == 16


def test_runs_on_worker_processes_give_the_rows_run_here(tmp_path: Path) -> None:
    """Two engine runs sent to two worker processes (``--jobs 2``) write the rows they give
    in this process (the wall-clock seconds aside), in the grid's order, in runs.csv too."""
    runs = grid(False, [0], [], policies=["fairness/rpa/allcore", "pa-rr/rpa/maf"])
    here = study(tmp_path / "here", runs, 0.001)
    workers = study(tmp_path / "workers", runs, 0.001, CellExecutor(jobs=2))
    for rows in (here, workers):
        for row in rows:
            del row["seconds"]
    assert workers == here and [row["first"] for row in here] == ["fairness", "pa-rr"]
    written = [[line.rsplit(",", 1)[0] for line in (tmp_path / folder / "runs.csv").open()]
               for folder in ("here", "workers")]  # fmt: skip
    assert written[0] == written[1] and len(written[0]) == 3
    assert study(tmp_path / "workers", runs, 0.001, CellExecutor(jobs=2))[1]["first"] == "pa-rr"
