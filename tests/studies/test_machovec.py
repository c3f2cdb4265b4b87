"""The study of Machovec et al. (studies/machovec.py): a tiny study on the embedded engine,
budgets from the unconstrained runs, every constrained run checked against its budget,
resumption, tables and figures."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from hetsched.metrics.summary import RunSummary
from hetsched.platforms.simgrid_xml import read_platform
from hetsched.studies import machovec
from hetsched.studies.machovec import Config, StudyRun, Trial

FREE = (machovec._config("max-util-ph"), machovec._config("max-upe-ph"))
BUDGET = (machovec._config("conservative"), machovec._config("max-upe-ph"),
          machovec._config("max-upr-ph", "per-resource"))


def test_configurations_are_the_papers() -> None:
    """Fig. 9/10: 4 comparison heuristics, 3 x 2 x 3 filtered utility heuristics, 2 Max UPE;
    Fig. 7/8: 4 more leniencies each; every run maps every 60 s."""
    labels = [c.label for c in machovec.CONSTRAINED]
    assert len(labels) == len(set(labels)) == 4 + 18 + 2
    assert labels[:4] == ["random", "conservative", "easy", "cmq"]
    assert "max-upr-ph/per-resource" in labels and "max-upe-ph/per-task" not in labels
    assert [c.label for c in machovec.SWEEPS][:4] == [
        "max-upr-ph/per-task@0.5", "max-upr-ph/per-task@1", "max-upr-ph/per-task@4",
        "max-upr-ph/per-task@8",
    ]
    assert all(c.options["period"] == 60.0 for c in (*machovec.CONSTRAINED, *machovec.SWEEPS))
    assert Config("max-upr-ph/per-task@0.5", "max-upr-ph").folder == "max-upr-ph+per-task+L0.5"


def test_a_tiny_study_end_to_end(tmp_path: Path) -> None:
    outdir = tmp_path / "study"
    seen: list[tuple[StudyRun, bool]] = []
    runs, budgets = machovec.run_study(
        outdir, trials=2, levels=("5k",), scale=0.005, constrained=BUDGET, unconstrained=FREE,
        sweeps=False, on_run=lambda run, resumed, done, total: seen.append((run, resumed)),
    )
    assert len(runs) == 2 * (len(FREE) + len(BUDGET)) == len(seen)
    assert [(r.phase, r.trial, r.label) for r in runs[:4]] == [
        ("free", 0, "max-util-ph"), ("free", 0, "max-upe-ph"),
        ("free", 1, "max-util-ph"), ("free", 1, "max-upe-ph"),
    ]
    for budget in budgets:
        free = {r.label: r.summary for r in runs
                if (r.phase, r.trial) == ("free", budget.trial)}
        best = max(free, key=lambda label: free[label].utility_percent or 0.0)
        assert budget.best == best and budget.source == "max-util-ph"
        assert budget.budget == pytest.approx(0.7 * free["max-util-ph"].energy_window_joules)
    for run in runs:
        if run.phase == "budget":
            summary = run.summary
            assert "energy-budget" in (summary.checked_rules or ())
            assert summary.energy_budget_joules == budgets[run.trial].budget
            assert summary.energy_window_joules <= summary.energy_budget_joules
    workload = json.loads((outdir / "trial0" / "5k" / "budget" / "workload.json").read_text())
    assert workload["hetsched"]["energy_budget"] == budgets[0].budget
    assert workload["hetsched"]["source"]["options"]["core_scale"] == 0.005
    marker = json.loads((outdir / "trial0" / "5k" / machovec.SCENARIO_FILE).read_text())
    assert (marker["core_scale"], marker["period"]) == (0.005, 60.0 / 0.005)

    again, _ = machovec.run_study(outdir, trials=2, levels=("5k",), scale=0.005,
                                  constrained=BUDGET, unconstrained=FREE, sweeps=False)
    assert [r.summary for r in again] == [r.summary for r in runs]

    aggregates, figures = machovec.summarize_study(runs, budgets, outdir)
    assert {(a.phase, a.label) for a in aggregates} == {
        ("free", c.label) for c in FREE} | {("budget", c.label) for c in BUDGET}
    assert all(a.trials == 2 for a in aggregates)
    assert sorted(p.name for p in figures) == ["fig9a.png", "fig9b.png"]
    for name in ("runs.csv", "summary.csv", "budgets.csv"):
        assert (outdir / name).exists()
    assert "max-upe-ph" in machovec.format_aggregates(aggregates)


def test_a_prepared_folder_with_another_budget_is_refused(tmp_path: Path) -> None:
    Trial(3, 300, 10.0, 1e6).prepare_inputs(tmp_path)
    assert Trial(3, 300, 10.0, 1e6).prepare_inputs(tmp_path)[1].exists()  # reused
    with pytest.raises(FileExistsError, match="holds other inputs"):
        Trial(3, 300, 10.0, 2e6).prepare_inputs(tmp_path)


def test_node_sizes_scale_and_period_make_other_inputs(tmp_path: Path) -> None:
    """A trial's folder marker names its node sizes (default the preset's 48, 64), its
    ``core_scale`` and its mapping period: a folder of other inputs, or of a study written
    before they were recorded, is refused rather than resumed with the wrong system."""
    platform, _ = Trial(3, 300, 10.0, None, (64,)).prepare_inputs(tmp_path / "big")
    assert 'value="64"' in platform.read_text()
    for other in (Trial(3, 300, 10.0), Trial(3, 300, 10.0, None, (64,), 0.5),
                  Trial(3, 300, 10.0, None, (64,), 1.0, 600.0)):
        with pytest.raises(FileExistsError, match="holds other inputs"):
            other.prepare_inputs(tmp_path / "big")
    Trial(3, 300, 10.0).prepare_inputs(tmp_path / "default")
    marker = json.loads((tmp_path / "default" / machovec.SCENARIO_FILE).read_text())
    assert marker == {"seed": 3, "cores": 300, "tasks_per_day": 10.0, "energy_budget": None,
                      "cores_per_node": [48, 64], "core_scale": 1.0, "period": 60.0}


def test_the_command_line_reads_node_sizes(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from hetsched.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["experiment", "machovec", "--cores-per-node", "64,x", "-o", str(tmp_path / "x")])
    assert exit_.value.code == 2
    assert "argument --cores-per-node: must be an integer >= 1, got 'x'" in (
        capsys.readouterr().err)
    assert not (tmp_path / "x").exists()


def test_bad_arguments_are_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="levels must be among 5k, 10k"):
        machovec.run_study(tmp_path, levels=("20k",))
    with pytest.raises(ValueError, match="scale must be in"):
        machovec.run_study(tmp_path, scale=2.0)
    with pytest.raises(ValueError, match="no unconstrained run"):
        machovec.best_and_budget([], "5k", 0)


def test_budget_and_aggregates_by_hand() -> None:
    """5k trial 0: Max Util-PH earns 90 % with 10 GJ, Max UPE-PH 95 % with 6 GJ: the best is
    Max UPE-PH, but the paper's 5k constraint comes from Max Util-PH: 7 GJ. At 10k it comes
    from Max UPR-PH. Two trials of 60 % and 70 % with 5 GJ each under budgets of 7 and 10 GJ:
    mean 65, CI 12.706 x 7.071 / 1.414 = 63.53; budget used 71.43 % and 50 %, mean 60.71."""
    def summary(percent: float, joules: float, budget: float | None = None) -> RunSummary:
        return RunSummary(
            heuristic="h", engine="embedded", outdir="o", workload="w", platform="p",
            measure_window=(0.0, 1.0), tasks_total=1, tasks_completed=1, tasks_failed=0,
            tasks_dropped=0, value_earned=None, value_bound=None, value_percent=None,
            value_earned_total=None, value_percent_total=None, utility_earned=percent,
            utility_bound=100.0, utility_percent=percent, energy_joules=joules,
            energy_window_joules=joules, energy_budget_joules=budget, makespan=1.0,
            mean_waiting_time=0.0, mapping_events=None, mapping_latency_p50=None,
            mapping_latency_p95=None, mapping_latency_max=None,
        )

    free = [StudyRun("5k", 0, "free", "max-util-ph", summary(90.0, 10e9)),
            StudyRun("5k", 0, "free", "max-upe-ph", summary(95.0, 6e9))]
    budget = machovec.best_and_budget(free, "5k", 0)
    assert (budget.best, budget.best_energy) == ("max-upe-ph", 6e9)
    assert (budget.source, budget.budget) == ("max-util-ph", pytest.approx(7e9))
    with pytest.raises(ValueError, match="comes from max-upr-ph unconstrained"):
        machovec.best_and_budget([dataclasses.replace(r, level="10k") for r in free], "10k", 0)
    constrained = [StudyRun("5k", t, "budget", "easy", summary(p, 5e9, b))
                   for t, p, b in ((0, 60.0, 7e9), (1, 70.0, 10e9))]
    (a,) = machovec.aggregate(constrained, [budget])
    assert (a.utility_percent, a.energy_gj, a.budget_gj) == (65.0, 5.0, pytest.approx(7.0))
    assert a.utility_ci95 == pytest.approx(63.531, abs=1e-3)
    assert a.budget_use_percent == pytest.approx((500 / 7 + 50) / 2)


def test_the_command_line_names_a_bad_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hetsched.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["experiment", "machovec", "--only", "easy,max-upe-ph/per-task",
              "-o", str(tmp_path / "x")])
    assert exit_.value.code == 2
    assert ("argument --only: unknown configuration(s) 'max-upe-ph/per-task'"
            in capsys.readouterr().err)
    assert not (tmp_path / "x").exists()


def test_power_levels_make_other_inputs_and_the_platform_carries_them(tmp_path: Path) -> None:
    """``power_levels``: the trial's platform gets one level per task type of its day (the
    same clusters otherwise); the marker names it, so a folder of node-power inputs is not
    resumed with levels, and a marker without it is one without levels (earlier studies)."""
    plain, workload = Trial(3, 300, 10.0).prepare_inputs(tmp_path / "plain")
    assert "power_levels" not in plain.read_text()
    with pytest.raises(FileExistsError, match="holds other inputs"):
        Trial(3, 300, 10.0, power_levels=True).prepare_inputs(tmp_path / "plain")
    apc, apc_workload = Trial(3, 300, 10.0, power_levels=True).prepare_inputs(tmp_path / "apc")
    assert apc_workload.read_bytes() == workload.read_bytes()
    types = {job["task_type"] for job in json.loads(workload.read_text())["jobs"]}
    levels = {level.task_type for cluster in read_platform(apc).clusters
              for level in cluster.power_levels}
    assert levels == types
    marker = json.loads((tmp_path / "apc" / machovec.SCENARIO_FILE).read_text())
    assert marker["power_levels"] is True


@pytest.mark.parametrize(("flags", "levels"), [([], True), (["--node-power"], False)])
def test_the_command_line_writes_power_levels_unless_node_power(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str], levels: bool
) -> None:
    """The study charges each task its type's APC by default (sec. II.B: power levels);
    ``--node-power`` keeps the clusters' node power."""
    from hetsched.cli import main

    seen: dict[str, object] = {}

    def run_study(outdir: Path, **kwargs: object) -> tuple[list, list]:
        seen.update(kwargs)
        return [], []

    monkeypatch.setattr(machovec, "run_study", run_study)
    monkeypatch.setattr(machovec, "summarize_study", lambda *args, **kwargs: "")
    main(["experiment", "machovec", "--trials", "1", *flags, "-o", str(tmp_path / "x")])
    assert seen["power_levels"] is levels


def test_an_interval_from_too_few_trials_is_printed_na() -> None:
    """Two trials (the quick mode) give no 95% interval worth printing; four do."""
    def row(trials: int) -> machovec.Aggregate:
        return machovec.Aggregate("5k", "free", "easy", trials, 50.0, 12.5, 0.2, 0.01, None,
                                  None, None, 90.0, 10.0, None)

    two = machovec.format_aggregates([row(2)]).splitlines()
    assert two[1].split()[5:8] == ["n/a", "0.200", "n/a"]
    assert two[-1] == ("n/a: no 95% interval from fewer than 3 values, or one wider than the"
                       " measure's whole range (more trials: --trials)")
    four = machovec.format_aggregates([row(4)]).splitlines()
    assert four[1].split()[5:8] == ["+-12.5", "0.200", "+-0.010"] and len(four) == 2
