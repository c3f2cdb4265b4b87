"""The study of Hansen et al. sec. V (studies/hansen.py):
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
from hetsched.studies import hansen
from hetsched.studies.cells import CellExecutor
from hetsched.studies.hansen import Agreement, Scenario
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


def test_trial_predicts_the_whole_batch_and_records_its_regime() -> None:
    """P(every application meets Delta) <= Psi for every heuristic; the batch completed iff
    every application did; the regime (Downey's A from M, slowdown per application) travels
    with the trial, and with per-application draws the batch probability is the product."""
    regime = hansen.Regime("share", "per-application")
    trial = hansen.run_trial(Scenario(8, 64, 2, "high"), 0, 3, regime=regime)
    assert trial.regime == regime
    for result in trial.results:
        assert 0.0 <= result.batch_probability <= result.robustness
        assert result.batch_probability == pytest.approx(np.prod(result.probabilities))
        assert result.batch_completed == all(result.completed)
    shared = hansen.run_trial(Scenario(8, 64, 2, "high"), 0, 3, regime=hansen.Regime("share"))
    duplex, apart = shared.result("rf-duplex"), trial.result("rf-duplex")
    assert duplex.probabilities == apart.probabilities  # same model, other actual draws
    assert duplex.batch_probability > apart.batch_probability
    with pytest.raises(ValueError, match="parallelism 'all'"):
        hansen.Regime("all")
    with pytest.raises(ValueError, match="machine_cov 0"):
        hansen.Regime(machine_cov=0)


def test_default_regime_is_share_at_machine_cov_0_1() -> None:
    """The study's default regime is the generator's: A from M, one slowdown per type,
    V_mach 0.1; the trial's workload carries them."""
    regime = hansen.Regime()
    assert (regime.parallelism, regime.slowdown_draw, regime.machine_cov) == (
        "share", "per-type", 0.1)
    options = regime.generator_options(Scenario(8, 64, 2, "low"))
    assert options == {"applications": 8, "slowdown": "low", "parallelism": "share",
                       "slowdown_draw": "per-type", "machine_cov": 0.1}


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
    seen.clear()
    hansen.run_study(tmp_path, batch_sizes=[8], slowdowns=["low"], trials=1,
                     regime=hansen.Regime("cited"),
                     on_trial=lambda t, resumed, done, total: seen.append(resumed))
    assert not any(seen)  # another regime: run again
    seen.clear()
    hansen.run_study(tmp_path, batch_sizes=[8], slowdowns=["low"], trials=1,
                     regime=hansen.Regime("cited", machine_cov=0.3),
                     on_trial=lambda t, resumed, done, total: seen.append(resumed))
    assert not any(seen)  # another machine COV: run again
    stored = tmp_path / "trials" / "a8-p1-low" / "t0.json"
    older = json.loads(stored.read_text())
    del older["regime"]["machine_cov"]  # a trial stored before machine_cov was an option
    stored.write_text(json.dumps(older))
    seen.clear()
    hansen.run_study(tmp_path, batch_sizes=[8], slowdowns=["low"], trials=1,
                     regime=hansen.Regime("cited", machine_cov=0.3),
                     on_trial=lambda t, resumed, done, total: seen.append(resumed))
    assert seen == [False, True, True, True]  # its machine COV unknown: run again
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
    """144 trials (8 applications, every type count and slowdown, 12 trials each), A from M
    and one actual slowdown per application (so that every (application, type) has its own
    draw): for every heuristic, the critical application's completion rate estimates the mean
    predicted robustness and every application's rate the mean P(i, I[i]). Outcomes of one
    heuristic are then independent Bernoulli draws of known p, so (observed - expected) / sd
    is about N(0, 1): we require |z| < 3 for each of the 10 checks (a calibrated model fails
    one by chance with probability 0.027; five 95% intervals would fail one with 0.23). The
    mean predicted robustness is well above 0 here (the RF heuristics' 0.33-0.41), so the
    check is not met by predicting 0 and seeing 0."""
    regime = hansen.Regime("share", "per-application")
    trials = hansen.run_study(tmp_path, batch_sizes=[8], trials=12, regime=regime)
    assert len(trials) == 144
    for heuristic in hansen.HEURISTICS:
        results = [t.result(heuristic) for t in trials]
        critical = z_score([r.robustness for r in results],
                           [r.critical_completed for r in results])
        every = z_score([p for r in results for p in r.probabilities],
                        [c for r in results for c in r.completed])
        assert abs(critical) < 3, (heuristic, critical)
        assert abs(every) < 3, (heuristic, every)
    assert np.mean([t.result("rf-duplex").robustness for t in trials]) > 0.3


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
    batch = hansen.format_batch(rows)
    assert batch.splitlines()[0].split()[:5] == ["scenario", "heuristic", "trials", "mean", "Psi"]
    assert len(batch.splitlines()) == 1 + len(rows)
    assert {row["batch_agrees"] for row in table} <= {"0", "1"}
    paths = hansen.plot_figures(trials, tmp_path)
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


def test_trial_on_the_embedded_engine_realises_the_draws() -> None:
    """Every heuristic runs as a Batsim scheduler on the embedded engine: it allocates as in
    model (same cluster and processor count for each application, else RuntimeError), and
    each application's completion by the goal read from out_jobs.csv is the one its actual
    draw gives."""
    trial = hansen.run_trial(Scenario(8, 64, 4, "high"), 0, 3, engine="embedded")
    assert trial.engine == "embedded"
    for result in trial.results:
        assert result.engine_completed == result.completed
        assert result.engine_mismatches == 0
        assert result.engine_critical_completed == result.critical_completed
    assert any(not all(r.completed) for r in trial.results)  # some application missed it
    assert hansen.Trial.from_json(json.loads(json.dumps(trial.to_json()))) == trial
    model = hansen.run_trial(Scenario(8, 64, 4, "high"), 0, 3)
    assert [r.probabilities for r in model.results] == [r.probabilities for r in trial.results]
    with pytest.raises(ValueError, match="unknown engine 'simgrid'"):
        hansen.run_trial(Scenario(8, 64, 4, "high"), 0, 3, engine="simgrid")


def test_trial_under_batsim_is_the_embedded_engines(fake_batsim: Path) -> None:
    """``--engine batsim`` (a ``batsim`` subprocess over ZeroMQ: here the fake Batsim of the
    tests) gives the same allocation and completions."""
    scenario = Scenario(8, 64, 2, "low")
    batsim = hansen.run_trial(scenario, 0, 7, ["pb-s", "rf-duplex"], engine="batsim")
    embedded = hansen.run_trial(scenario, 0, 7, ["pb-s", "rf-duplex"], engine="embedded")
    assert fake_batsim.exists()  # the fake did run
    assert batsim.engine == "batsim"
    for a, b in zip(batsim.results, embedded.results, strict=True):
        assert a.engine_completed == b.engine_completed == a.completed


def test_an_allocation_other_than_the_models_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """If the engine ran an application elsewhere than the model's allocation says, the
    trial fails naming it (here the model's allocation is tampered with)."""
    real = hansen.AllocationProblem.assignment

    def moved(self: hansen.AllocationProblem, allocation: object) -> dict:
        assignment = real(self, allocation)  # type: ignore[arg-type]
        first = next(iter(assignment))
        cluster, k = assignment[first]
        return {**assignment, first: (cluster, k + 1)}

    monkeypatch.setattr(hansen.AllocationProblem, "assignment", moved)
    with pytest.raises(RuntimeError, match="rf-duplex on the embedded engine ran application"):
        hansen.run_trial(Scenario(8, 64, 1, "low"), 0, 2, ["rf-duplex"], engine="embedded")


def test_study_on_the_engine_resumes_and_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Trials run on the engine are reused with or without it; a trial run without the engine
    is run again when the engine is asked for. Summary columns and the printed table."""
    options = {"batch_sizes": [8], "slowdowns": ["mixed"], "trials": 1,
               "heuristics": ["pb-r", "rf-duplex"]}
    seen: list[bool] = []
    record = lambda t, resumed, done, total: seen.append(resumed)  # noqa: E731
    plain = hansen.run_study(tmp_path, **options, on_trial=record)  # type: ignore[arg-type]
    assert not any(seen) and all(t.engine is None for t in plain)
    seen.clear()
    engine = hansen.run_study(tmp_path, **options, engine="embedded",  # type: ignore[arg-type]
                              on_trial=record)
    assert not any(seen) and all(t.engine == "embedded" for t in engine)
    seen.clear()
    again = hansen.run_study(tmp_path, **options, on_trial=record)  # type: ignore[arg-type]
    assert all(seen)  # the engine's trials, their engine results left out
    assert [(t.engine, t.model_seconds) for t in again] == [
        (None, t.model_seconds) for t in engine
    ]
    assert all(r.engine_completed is None for t in again for r in t.results)
    rows = hansen.summarize_study(engine)
    everything = [r for r in rows if r.scenario is None]
    for row in everything:
        assert row.engine_robustness_agreement == row.robustness_agreement
        assert row.engine_application_agreement == row.application_agreement
        assert row.engine_mismatches == 0
    assert all(r.engine_robustness_agreement is None for r in hansen.summarize_study(plain))
    hansen.write_csv(engine, rows, tmp_path)
    with (tmp_path / "summary.csv").open() as handle:
        last = list(csv.DictReader(handle))[-1]
    assert last["engine_draws_mismatches"] == "0" and last["engine_application_rate"] != ""
    text = hansen.format_engine_agreement(rows)
    assert text.splitlines()[0].split()[:2] == ["heuristic", "trials"]
    assert hansen.format_engine_agreement(hansen.summarize_study(plain)) == ""
    code = main(["experiment", "hansen", "--batch-sizes", "8", "--slowdowns", "mixed",
                 "--trials", "1", "--heuristics", "pb-r,rf-duplex", "--engine", "embedded",
                 "-o", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and "on the embedded engine (from out_jobs.csv)" in out


def test_trials_on_worker_processes_are_the_ones_run_here(tmp_path: Path) -> None:
    """The trials sent to two worker processes (``--jobs 2``) are those run in this process,
    returned in study order and each stored as it ends."""

    def measured(trials: list[hansen.Trial]) -> list[tuple]:
        return [(t.scenario, t.trial, t.seed, t.upper_bound,
                 [(r.heuristic, r.probabilities, r.completed) for r in t.results])
                for t in trials]  # fmt: skip

    here = hansen.run_study(tmp_path / "here", batch_sizes=[8], slowdowns=["low"], trials=2)
    seen: list[bool] = []
    workers = hansen.run_study(tmp_path / "workers", batch_sizes=[8], slowdowns=["low"],
                               trials=2, executor=CellExecutor(jobs=2),
                               on_trial=lambda t, resumed, done, total: seen.append(resumed))
    assert measured(workers) == measured(here) and seen == [False] * 8
    assert len(list((tmp_path / "workers" / "trials").rglob("t*.json"))) == 8
