"""The preliminary Hwang et al. study on the model-time simulation."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from hetsched.studies.hwang_model_study import grid, plot, study, summary, with_efficiency


def test_the_grid_has_fifty_runs_per_scenario_and_dynamic_ones_on_six() -> None:
    assert len(grid(range(1, 24), [0])) == 23 * 50
    # Dynamic submission on the default and the five W/o App. scenarios.
    assert len(grid(range(1, 24), [0, 1], [1000.0, 2000.0])) == 2 * (23 + 6 * 2) * 50
    combos = {(r.first, r.pa_metric, r.second) for r in grid([1], [0])}
    assert ("fairness", "-", "allcore") in combos and ("pa-rr", "rpa", "maf-raw") in combos
    assert len(combos) == 50


def test_a_small_study_runs_resumes_and_summarises(tmp_path: Path) -> None:
    runs = [r for r in grid([14], [0])
            if r.first in ("fairness", "pa-rr") and r.pa_metric in ("-", "rpa")]
    rows = study(tmp_path, runs, scale=0.001)
    assert len(rows) == len(runs) == 10
    with (tmp_path / "runs.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == 10
    assert len(study(tmp_path, runs, scale=0.001)) == 10  # resumed: nothing run again
    with (tmp_path / "runs.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == 10
    rated = with_efficiency(rows)
    baseline = [r for r in rated if r["first"] == "fairness" and r["second"] == "allcore"]
    assert [r["efficiency"] for r in baseline] == [1.0]
    assert all(0 < r["fairness"] <= 1 for r in rated)
    text = summary(rows)
    assert "Fig. 5: first level" in text and "pa-rr" in text
    assert [p.name for p in plot(rows, tmp_path)] == [
        "fig3.png", "fig5.png", "fig6.png", "fig4.png", "fig7.png"]
    with pytest.raises(ValueError, match=r"holds runs at scale 0\.001, not 0\.01"):
        study(tmp_path, runs, scale=0.01)
