"""The study of Hansen et al. sec. V (experiments/hansen.py, hansen_figures.py, hansen_cli.py):
scenarios, trials with hidden actual draws, resumption, tables, figures, and the agreement of
realised completion rates with the predicted robustness over many trials."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from hetsched.cli import main
from hetsched.experiments import hansen
from hetsched.experiments.hansen import Agreement, Scenario
from hetsched.workloads.generators import generate as real_generate


def test_scenarios_of_section_v() -> None:
    """8, 32, 128 applications on 64, 256, 1,024 processors with 4, 5 and 6 type counts, in
    three slowdown categories: 45 scenarios."""
    every = hansen.scenarios(list(hansen.BATCHES))
    assert len(every) == 3 * (4 + 5 + 6) == 45
    assert {(s.applications, s.processors) for s in every} == {(8, 64), (32, 256), (128, 1024)}
    assert max(s.types for s in every if s.applications == 128) == 32
    assert [s.label for s in hansen.scenarios()][:2] == ["a32-p1-low", "a32-p2-low"]
    with pytest.raises(ValueError, match="batch size\\(s\\) \\[16\\]"):
        hansen.scenarios([16])
    with pytest.raises(ValueError, match="slowdown\\(s\\) \\['none'\\]"):
        hansen.scenarios([8], ["none"])


def test_trial_measures_predicted_and_realised() -> None:
    trial = hansen.run_trial(Scenario(8, 64, 4, "high"), 0, 3)
    assert [r.heuristic for r in trial.results] == list(hansen.HEURISTICS)
    for result in trial.results:
        assert len(result.probabilities) == len(result.completed) == 8
        assert result.robustness == min(result.probabilities) <= trial.upper_bound
    duplex = trial.result("rf-duplex").robustness
    assert duplex >= max(trial.result("rf-min-min").robustness,
                         trial.result("rf-min-max").robustness)
    assert trial.to_json()["scenario"]["types"] == 4
    assert hansen.Trial.from_json(json.loads(json.dumps(trial.to_json()))) == trial


def test_actual_draws_are_hidden_from_the_heuristics(monkeypatch: pytest.MonkeyPatch) -> None:
    """Changing the workload's actual times changes what is realised, never what the
    heuristics decide nor what they predict."""

    def doubled(*args: object, **kwargs: object) -> dict:
        workload = real_generate(*args, **kwargs)  # type: ignore[arg-type]
        for job in workload["jobs"]:
            serial = job["actual"]["serial_time"]
            job["actual"] = {"serial_time": {c: 1000.0 * s for c, s in serial.items()}}
        return workload

    scenario = Scenario(8, 64, 2, "mixed")
    honest = hansen.run_trial(scenario, 0, 5)
    monkeypatch.setattr(hansen, "generate_workload", doubled)
    tampered = hansen.run_trial(scenario, 0, 5)
    for a, b in zip(honest.results, tampered.results, strict=True):
        assert a.probabilities == b.probabilities
        assert not any(b.completed)  # 1000 times longer: nothing meets the goal
    assert any(any(r.completed) for r in honest.results)


def test_study_resumes_finished_trials(tmp_path: Path) -> None:
    seen: list[bool] = []
    first = hansen.run_study(tmp_path, batch_sizes=[8], slowdowns=["low"], trials=2,
                             on_trial=lambda t, resumed, done, total: seen.append(resumed))
    assert len(first) == 8 and not any(seen)
    seen.clear()
    again = hansen.run_study(tmp_path, batch_sizes=[8], slowdowns=["low"], trials=2,
                             on_trial=lambda t, resumed, done, total: seen.append(resumed))
    assert all(seen) and again == first
    seen.clear()
    hansen.run_study(tmp_path, batch_sizes=[8], slowdowns=["low"], trials=1, points=16,
                     on_trial=lambda t, resumed, done, total: seen.append(resumed))
    assert not any(seen)  # other points: run again
    with pytest.raises(ValueError, match="unknown heuristic"):
        hansen.run_study(tmp_path, heuristics=["pb-x"])


def test_agreement_counts_and_interval() -> None:
    a = Agreement.of([0.5, 0.7, 0.9, 0.9], [True, False, True, True])
    assert (a.n, a.realised) == (4, 0.75)
    assert a.predicted == pytest.approx(0.75)
    assert a.low < 0.75 < a.high and a.agrees
    assert not Agreement.of([0.99] * 50, [False] * 50).agrees
    assert hansen.wilson_interval(0, 5)[0] == 0.0 and hansen.wilson_interval(5, 5)[1] == 1.0


def z_score(predicted: list[float], completed: list[bool]) -> float:
    """(observed - expected successes) / sd for independent Bernoulli outcomes of known p."""
    p = np.array(predicted)
    variance = float((p * (1 - p)).sum())
    return (sum(completed) - p.sum()) / math.sqrt(variance)


def test_realised_rates_agree_with_predicted_robustness_over_many_trials(tmp_path: Path) -> None:
    """144 trials (8 applications, every type count and slowdown, 12 trials each): for every
    heuristic, the critical application's completion rate estimates the mean predicted
    robustness and every application's rate the mean P(i, I[i]). Outcomes of one heuristic
    are independent Bernoulli draws of known p (each (application, type) has its own draw),
    so (observed - expected) / sd is about N(0, 1): we require |z| < 3 for each of the 10
    checks, and the predicted mean inside the realised rate's Wilson 95% interval for every
    application-level pool."""
    trials = hansen.run_study(tmp_path, batch_sizes=[8], trials=12)
    assert len(trials) == 144
    for heuristic in hansen.HEURISTICS:
        results = [t.result(heuristic) for t in trials]
        critical = z_score([r.robustness for r in results],
                           [r.critical_completed for r in results])
        every = z_score([p for r in results for p in r.probabilities],
                        [c for r in results for c in r.completed])
        assert abs(critical) < 3, (heuristic, critical)
        assert abs(every) < 3, (heuristic, every)
        summary = hansen.summarize(trials, heuristic, None)
        assert summary.application_agreement.agrees, (heuristic, summary.application_agreement)


def test_tables_and_figures(tmp_path: Path) -> None:
    trials = hansen.run_study(tmp_path, slowdowns=["low"], trials=2)
    rows = hansen.summarize_study(trials)
    assert len(rows) == 5 * 5 + 5  # 5 scenarios x 5 heuristics, then 5 "all" rows
    hansen.write_csv(trials, rows, tmp_path)
    with (tmp_path / "summary.csv").open() as handle:
        table = list(csv.DictReader(handle))
    assert tuple(table[0]) == hansen.SUMMARY_COLUMNS
    assert [row["scenario"] for row in table[-5:]] == ["all"] * 5
    with (tmp_path / "trials.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == 10 * 5
    text = hansen.format_scenarios(rows)
    assert text.splitlines()[0].split()[:3] == ["scenario", "trials", "B"]
    assert "rf-duplex" in hansen.format_agreement(rows)
    from hetsched.experiments.hansen_figures import plot_figures

    paths = plot_figures(trials, tmp_path)
    assert [p.name for p in paths] == ["fig4.png", "fig5.png", "calibration.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)


def test_cli_runs_the_study(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["experiment", "hansen", "--batch-sizes", "8", "--slowdowns", "high",
                 "--trials", "1", "-o", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    assert "a8-p8-high" in out and "predicted against realised" in out
    assert (tmp_path / "summary.csv").exists() and (tmp_path / "calibration.png").exists()
    assert not (tmp_path / "fig4.png").exists()  # no 32-application scenario was run
