"""The preliminary Hwang et al. study on the model-time simulation."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from hetsched.cli import main as hetsched_main
from hetsched.studies.cells import CellExecutor
from hetsched.studies.hwang_model_study import (
    Variant,
    _second_level,
    grid,
    plot,
    simulate,
    simulate_together,
    study,
    summary,
    with_efficiency,
)


def main(argv: list[str]) -> int:
    """``hetsched experiment hwang-model ARGV``."""
    return hetsched_main(["experiment", "hwang-model", *argv])


def test_the_grid_has_fifty_runs_per_scenario_and_dynamic_ones_on_six() -> None:
    assert len(grid(range(1, 24), [0])) == 23 * 50
    # Dynamic submission on the default and the five W/o App. scenarios.
    assert len(grid(range(1, 24), [0, 1], [1000.0, 2000.0])) == 2 * (23 + 6 * 2) * 50
    combos = {(r.first, r.pa_metric, r.second) for r in grid([1], [0])}
    assert ("fairness", "-", "allcore") in combos and ("pa-rr", "rpa", "maf-raw") in combos
    assert len(combos) == 50


def test_a_small_study_runs_resumes_and_summarises(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [r for r in grid([14], [0])
            if r.first in ("fairness", "pa-rr") and r.pa_metric in ("-", "rpa")]
    rows = study(tmp_path, runs, scale=0.001)
    assert len(rows) == len(runs) == 10
    # one line per group of runs simulated together, as it ends (off a terminal too)
    assert capsys.readouterr().err == "[1/1] scenario 14 seed 0: 10 runs\n"
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


@pytest.mark.parametrize("workers", [1, 2])
def test_the_cells_of_a_scenario_and_seed_run_together_as_each_alone(
        tmp_path: Path, workers: int) -> None:
    # A group of cells stopped after three rows, then resumed: the three are read back, the
    # others run together (sharing their invocations; in a worker process with workers=2),
    # and every row is the one its cell gives alone. Scenario 14 static and with dynamic
    # submission, scenario 19 (S/L App.) static, two seeds: six groups of 8 cells.
    runs = [r for r in grid([14, 19], [0, 1], [1000.0]) if r.first in ("fairness", "pa-rr")
            and r.second in ("allcore", "maf-normalized")]
    assert len(runs) == 2 * 3 * 8  # scenario 19: static only
    first = [r for r in runs if r.scenario == 14 and r.seed == 0 and r.interarrival][:3]
    study(tmp_path, first, scale=0.001)
    rows = study(tmp_path, runs, scale=0.001, executor=CellExecutor(jobs=workers))
    assert len(rows) == len(runs)
    fields = ("fairness", "makespan", "normalized")
    alone = {run.key: simulate(run, 0.001) for run in runs}
    for row in rows:
        key = (row["scenario"], row["first"], row["pa_metric"], row["second"], row["seed"],
               row["interarrival"] and repr(float(row["interarrival"])))
        assert [row[f] for f in fields] == [str(alone[key][f]) for f in fields], key
    with pytest.raises(ValueError, match="the same scenario, seed, gap and variant"):
        next(simulate_together(runs[:1] + [r for r in runs if r.seed == 1][:1], 0.001))


def test_policies_and_scenarios_are_checked_before_anything_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "study"
    assert main(["-o", str(out), "--scenarios", "1", "--policies", "pa-rr/rpa/best"]) == 2
    assert "unknown policy 'pa-rr/rpa/best'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        main(["-o", str(out), "--scenarios", "24"])
    assert refused.value.code == 2
    assert "argument --scenarios" in capsys.readouterr().err
    assert not out.exists()
    with pytest.raises(SystemExit):
        main(["-o", str(out), "--scale", "-1"])
    with pytest.raises(SystemExit):
        main(["-o", str(out), "--interarrival", "0"])
    capsys.readouterr()
    for spread in ("1", "-0.1", "x"):
        with pytest.raises(SystemExit):
            main(["-o", str(out), "--runtime-spread", spread])
        assert "argument --runtime-spread" in capsys.readouterr().err
    assert not out.exists()


def test_a_variant_runs_in_its_own_folder_and_reaches_the_policies(tmp_path: Path) -> None:
    # D_unit = 200 on scenario 1 at 0.01 x Table 6: PA-based RR hands out cores 200 at a
    # time, so its shares differ from D_unit = 1 (sec. 6.5); the folder keeps its variant.
    cell = ["--scenarios", "1", "--policies", "pa-rr/rpa/allcore", "--scale", "0.01",
            "--no-figures"]
    assert main(["-o", str(tmp_path / "d1"), *cell]) == 0
    assert main(["-o", str(tmp_path / "d200"), *cell, "--d-unit", "200"]) == 0
    rows = {}
    for name in ("d1", "d200"):
        with (tmp_path / name / "runs.csv").open() as handle:
            [rows[name]] = list(csv.DictReader(handle))
    assert rows["d1"]["normalized"] != rows["d200"]["normalized"]
    with pytest.raises(ValueError, match="holds a study of variant"):
        study(tmp_path / "d200", grid([1], [0], policies=["pa-rr/rpa/allcore"]), 0.01)
    [run] = grid([1], [0], policies=["aaf/rpa/ca-rr"], variant=Variant(p_unit=20, max_users=2))
    assert run.policy == "aaf/rpa/ca-rr"
    assert _second_level(run).get_params()["p_unit"] == 20
    assert _second_level(run).get_params()["max_users"] == 2


def test_summary_gives_seed_confidence_intervals_and_maf_over_random_by_hand() -> None:
    # Scenario 1, seeds 0 and 1; PA-based RR + Random: fairness 0.8 / 0.9, makespan 90 / 90;
    # + MAF: 0.84 / 0.9, makespan 81 / 90. MAF over Random: fairness +5% and 0%, mean 2.5,
    # sample sd 3.5355, t(0.975, 1) = 12.706: +- 12.706 x 3.5355 / sqrt(2) = 31.77;
    # efficiency 90 / 81 - 1 = +11.11% and 0: mean +5.56. Random's fairness over the seeds:
    # 0.85 +- 12.706 x 0.07071 / sqrt(2) = 0.635.
    def row(seed: int, first: str, metric: str, second: str, fair: float, makespan: float,
            ) -> dict[str, str]:
        return {"scenario": "1", "type": "Default", "first": first, "pa_metric": metric,
                "second": second, "seed": str(seed), "interarrival": "", "scale": "1.0",
                "fairness": str(fair), "makespan": str(makespan), "normalized": "",
                "seconds": "0"}

    rows = [row(seed, "fairness", "-", "allcore", 0.7, 100.0) for seed in (0, 1)] + [
        row(0, "pa-rr", "rpa", "random", 0.8, 90.0), row(1, "pa-rr", "rpa", "random", 0.9, 90.0),
        row(0, "pa-rr", "rpa", "maf-normalized", 0.84, 81.0),
        row(1, "pa-rr", "rpa", "maf-normalized", 0.9, 90.0)]
    text = summary(rows)
    assert "pa-rr     random          fairness 0.850 +- 0.635  efficiency 0.900" in text
    assert "(2 seeds)" in text
    assert ("2 scenario x seed pairs: fairness +2.50% +- 31.77 (max +5.00), efficiency"
            " (Random's makespan / MAF's - 1: > 0 when MAF's is shorter) +5.56% +- 70.59"
            " (max +11.11)") in text


def test_a_study_stopped_before_its_first_row_resumes(tmp_path: Path) -> None:
    # Stopped before any run ended: runs.csv exists but is empty; the resumed study writes
    # the header before its rows.
    (tmp_path / "runs.csv").write_text("")
    runs = [r for r in grid([14], [0]) if r.policy == "fairness/-/allcore"]
    assert len(study(tmp_path, runs, scale=0.001)) == 1
    with (tmp_path / "runs.csv").open() as handle:
        assert [row["first"] for row in csv.DictReader(handle)] == ["fairness"]


def test_summary_gives_the_papers_claims_by_hand() -> None:
    # Scenario 1, simple fairness + AllCore makespan 100 (efficiency = makespan / 100).
    # RPA: PAF + AllCore 0.8 (90), PAF + MAF 0.88 (80), PA-based RR + AllCore 0.9 (90),
    # PA-based RR + MAF 0.92 (81): fairness 0.875, efficiency 0.8525. EPA: PAF 0.75 (95),
    # 0.85 (80): 0.8, 0.875. Throughput: PAF 0.6 (100), 0.5 (100): 0.55, 1.0. RPA over
    # Throughput: 0.875 / 0.55 = +59.1 %, 1.0 / 0.8525 = +17.3 %; over EPA 0.875 / 0.8 =
    # +9.4 %, 0.875 / 0.8525 = +2.6 %. Fig. 4 (PAF, two pairs): fairer by 6.7 % and 3.5 %;
    # more efficient by 95 / 90 = 5.6 % and 0. Fairest first level: simple fairness (0.7,
    # 0.66) 0.68, PAF 0.84, PA-based RR 0.91; second: AllCore 0.8, MAF 0.82 (MAF raw's 0.99
    # left out). Fig. 7 first level (MAF): 0.92 / 0.66 = +39.4 %, 110 / 80 = +37.5 %; second
    # level (PA-based RR): 0.92 / 0.9 = +2.2 %, 90 / 81 = +11.1 %.
    def row(first: str, metric: str, second: str, fair: float, makespan: float,
            gap: str = "") -> dict[str, str]:
        return {"scenario": "1", "type": "Default", "first": first, "pa_metric": metric,
                "second": second, "seed": "0", "interarrival": gap, "scale": "1.0",
                "fairness": str(fair), "makespan": str(makespan), "normalized": "",
                "seconds": "0"}

    rows = [row("fairness", "-", "allcore", 0.7, 100.0),
            row("fairness", "-", "maf-normalized", 0.66, 110.0),
            row("paf", "rpa", "allcore", 0.8, 90.0),
            row("paf", "rpa", "maf-normalized", 0.88, 80.0),
            row("paf", "rpa", "maf-raw", 0.99, 70.0),
            row("pa-rr", "rpa", "allcore", 0.9, 90.0),
            row("pa-rr", "rpa", "maf-normalized", 0.92, 81.0),
            row("paf", "epa", "allcore", 0.75, 95.0),
            row("paf", "epa", "maf-normalized", 0.85, 80.0),
            row("paf", "throughput", "allcore", 0.6, 100.0),
            row("paf", "throughput", "maf-normalized", 0.5, 100.0),
            row("fairness", "-", "allcore", 0.6, 200.0, "1000.0"),
            row("paf", "rpa", "allcore", 0.7, 180.0, "1000.0")]
    text = summary(rows)
    assert ("Sec. 6.2: RPA over throughput: fairness +59.1%, efficiency +17.3%; over epa:"
            " fairness +9.4%, efficiency +2.6%") in text
    assert ("Fig. 4: RPA over EPA on 2 run pairs: fairer in 100.0% (by up to 6.7%), equal in"
            " 0.0%; more efficient in 50.0% (by up to 5.6%)") in text
    assert "how many scenarios: pa-rr 1\n" in text
    assert "how many scenarios: maf-normalized 1\n" in text
    assert ("first level (MAF normalised), best over worst in 1 scenarios: fairness up to"
            " 39.4% (mean 39.4), efficiency up to 37.5% (mean 37.5)") in text
    assert ("second level (PA-based RR, RPA), best over worst in 1 scenarios: fairness up to"
            " 2.2% (mean 2.2), efficiency up to 11.1% (mean 11.1)") in text
    # Dynamic submission beside static on the same scenarios: by first, then second level.
    assert "  static            fairness 0.680/1.050, paf 0.840/0.850, pa-rr 0.910/0.855\n" in text
    assert "  mean gap 1000 s   fairness 0.600/1.000, paf 0.700/0.900\n" in text
    assert "  mean gap 1000 s   allcore 0.650/0.950\n" in text


def test_summary_only_runs_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cell = ["--scenarios", "14", "--policies", "fairness/-/allcore", "--scale", "0.001",
            "--no-figures"]
    assert main(["-o", str(tmp_path), *cell, "--summary-only"]) == 2
    assert "holds no run of that grid" in capsys.readouterr().err
    assert not (tmp_path / "runs.csv").exists()
    assert main(["-o", str(tmp_path), *cell]) == 0
    capsys.readouterr()
    both = ["--scenarios", "14", "15", *cell[2:]]
    assert main(["-o", str(tmp_path), *both, "--summary-only"]) == 0  # scenario 15 not run
    assert "1 runs" in capsys.readouterr().out
    with (tmp_path / "runs.csv").open() as handle:
        assert [row["scenario"] for row in csv.DictReader(handle)] == ["14"]
    assert main(["-o", str(tmp_path), *cell, "--summary-only", "--d-unit", "5"]) == 2
    assert "holds a study of variant" in capsys.readouterr().err


def test_full_is_the_papers_hundred_seeds_unless_seeds_are_given(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Seeds 0, 1 and 150 of one cell in the folder: the default grid is seed 0, --full's
    # seeds 0-99 (the paper's 100 runs a cell, sec. 6.1), an explicit --seeds wins over --full.
    cell = ["--scenarios", "14", "--policies", "fairness/-/allcore", "--scale", "0.001",
            "--no-figures"]
    assert main(["-o", str(tmp_path), *cell, "--seeds", "0", "1", "150"]) == 0
    capsys.readouterr()
    for extra, runs in (([], 1), (["--full"], 2), (["--full", "--seeds", "150"], 1)):
        assert main(["-o", str(tmp_path), *cell, *extra, "--summary-only"]) == 0
        assert f"\n{runs} runs (" in capsys.readouterr().out
