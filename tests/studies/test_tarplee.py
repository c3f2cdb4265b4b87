"""The Tarplee et al. study (studies/tarplee.py): instances equal to the
generated presets, the plan and its cap, resuming, files, and the command line."""

from __future__ import annotations

import argparse
import csv
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from hetsched.cli import main
from hetsched.heuristics.bags.lp_makespan import LpMakespan
from hetsched.heuristics.registry import HEURISTICS
from hetsched.platforms.presets import generate as generate_platform
from hetsched.studies import tarplee
from hetsched.studies.experiment_cli import add_study_parser
from hetsched.studies.tarplee import (
    Settings,
    StudyRun,
    aggregate,
    planned,
    read_runs,
    run_study,
    study_bag,
)
from hetsched.workloads.generators import generate as generate_workload


@pytest.mark.parametrize("seed", [1, 7])
def test_instance_is_the_generated_platform_and_workload(seed: int) -> None:
    """The study's bag is what ``hetsched workload generate --preset tarplee`` writes (ETC rows
    per task type, counts) on the ``tarplee`` platform of the same seed (machines per type)."""
    options = {"types": 3, "machines": 20}
    settings = Settings(platform_options=options, workload_options={"task_types": 6},
                        order="workload")
    bag = study_bag(settings, 300, seed)
    platform = generate_platform("tarplee", seed, **options)
    workload = generate_workload("tarplee", seed, platform.clusters, task_types=6, tasks=300)
    assert bag.machine_counts.tolist() == [c.nb_nodes for c in platform.clusters]
    names = [c.name for c in platform.clusters]
    rows = {job["task_type"]: [job["etc"][n] for n in names] for job in workload["jobs"]}
    assert bag.etc.tolist() == [rows[f"t{i:02d}"] for i in range(6)]
    kinds = [int(job["task_type"][1:]) for job in workload["jobs"]]
    assert bag.task_types.tolist() == kinds  # the file's order: type by type


def test_random_order_is_a_seeded_permutation() -> None:
    ordered = study_bag(Settings(order="workload"), 500, 3)
    shuffled = study_bag(Settings(), 500, 3)
    assert Counter(shuffled.task_types.tolist()) == Counter(ordered.task_types.tolist())
    assert shuffled.task_types.tolist() != ordered.task_types.tolist()
    assert np.array_equal(study_bag(Settings(), 500, 3).task_types, shuffled.task_types)
    with pytest.raises(ValueError, match="order 'sorted': choose from random, workload"):
        Settings(order="sorted")
    with pytest.raises(ValueError, match="workload option 'tasks' is set by the study"):
        Settings(workload_options={"tasks": 5})


def test_plan_caps_the_quadratic_mappers() -> None:
    plan = planned([100, 20_000], [1, 2], list(tarplee.MAPPERS), 10_000)
    assert Counter(name for n, _, name in plan if n == 100) == Counter(
        {name: 2 for name in tarplee.MAPPERS}
    )
    assert {name for n, _, name in plan if n == 20_000} == {"lp", "mct", "met"}
    with pytest.raises(ValueError, match=r"unknown mapper\(s\) max-min; choose from lp, min-min"):
        planned([100], [1], ["max-min"], 10)


def test_study_runs_checks_and_resumes(tmp_path: Path) -> None:
    settings = Settings(platform_options={"types": 2, "machines": 6},
                        workload_options={"task_types": 4})
    seen: list[tuple[str, bool]] = []

    def record(run: StudyRun, resumed: bool, done: int, total: int) -> None:
        seen.append((run.mapper, resumed))
        assert total == 2 * 5 + 2 * 3  # 2 seeds: 5 mappers at 40 tasks, 3 at 200 (over the cap)

    kwargs = {"tasks": [40, 200], "seeds": [1, 2], "quadratic_cap": 100, "settings": settings}
    runs = run_study(tmp_path, on_run=record, **kwargs)
    assert len(runs) == 16 and not any(resumed for _, resumed in seen)
    assert all(run.ratio >= 1.0 for run in runs)
    lp = {(r.tasks, r.seed): r.ms_lb for r in runs if r.mapper == "lp"}
    assert all(r.ms_lb == lp[(r.tasks, r.seed)] for r in runs)  # one bound per instance
    schedule = LpMakespan().map(study_bag(settings, 200, 2))
    lp_run = next(r for r in runs if (r.tasks, r.seed, r.mapper) == (200, 2, "lp"))
    assert lp_run.work == pytest.approx(float((schedule.end - schedule.start).sum()))
    assert read_runs(tmp_path / tarplee.RUNS_FILE) == runs
    seen.clear()
    assert run_study(tmp_path, on_run=record, **kwargs) == runs
    assert all(resumed for _, resumed in seen)
    with pytest.raises(ValueError, match="holds a study with other settings"):
        run_study(tmp_path, tasks=[40], seeds=[1], settings=Settings())


def test_a_bad_row_is_reported_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text(",".join(tarplee.RUN_FIELDS) + "\n100,1,lp,10.0,9.0,1.1,0.01,50.0\n"
                    "100,1,mct,ten,9.0,1.1,0.01,60.0\n")
    with pytest.raises(ValueError, match=r"runs\.csv, line 3: could not convert string"):
        read_runs(path)
    path.write_text("tasks,seed\n")
    with pytest.raises(ValueError, match="expected the columns tasks, seed, mapper"):
        read_runs(path)


def test_aggregate_by_hand() -> None:
    """Ratios 1.1 and 1.2 over two seeds: mean 1.15, sd 0.0707, t(0.975, 1) = 12.706,
    half-width 12.706 x 0.0707 / sqrt(2) = 0.6353. MCT's work: 90 / 60 on seed 1, 60 / 80 on
    seed 2: mean (1.5 + 0.75) / 2 = 1.125; MET has no LP run on its seed 3."""
    runs = [StudyRun(100, 1, "lp", 11.0, 10.0, 0.5, 60.0),
            StudyRun(100, 2, "lp", 12.0, 10.0, 1.5, 80.0),
            StudyRun(100, 1, "mct", 20.0, 10.0, 0.1, 90.0),
            StudyRun(100, 2, "mct", 20.0, 10.0, 0.1, 60.0),
            StudyRun(100, 3, "met", 30.0, 10.0, 0.1, 60.0)]
    lp, mct, met = aggregate(runs)
    assert (lp.tasks, lp.mapper, lp.seeds) == (100, "lp", 2)
    assert lp.mean_ratio == pytest.approx(1.15) and lp.ci95 == pytest.approx(0.6353, abs=1e-4)
    assert lp.mean_seconds == 1.0 and lp.work_vs_lp == 1.0
    assert (mct.seeds, mct.mean_ratio, mct.ci95) == (2, 2.0, 0.0)
    assert mct.work_vs_lp == pytest.approx(1.125)
    assert met.work_vs_lp is None


def test_command_line_writes_table_csv_and_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outdir = tmp_path / "study"
    code = main(["experiment", "tarplee", "--tasks", "60,1e2", "--seeds", "2",
                 "--mappers", "lp,min-min,mct", "--platform-option", "machines=10",
                 "--workload-option", "task_types=5", "-o", str(outdir)])
    assert code == 0
    out = capsys.readouterr().out
    assert "makespan / MS_LB (mean of 2 seeds)" in out
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("tasks"))
    assert header.split() == ["tasks", "lp", "min-min", "mct"]
    assert any(line.split()[0] == "100" for line in lines if line.strip())
    for name in ("summary.csv", "runs.csv", "ratio.png", "runtime.png", "study.json"):
        assert (outdir / name).is_file()
    with (outdir / "summary.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["tasks"], r["mapper"]) for r in rows] == [
        (n, m) for n in ("60", "100") for m in ("lp", "min-min", "mct")
    ]
    assert all(float(r["mean_ratio"]) >= 1.0 for r in rows)


def test_command_line_refuses_bad_task_counts(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["experiment", "tarplee", "--tasks", "0,100"])
    assert "expected numbers >= 1, got '0,100'" in capsys.readouterr().err


def test_command_line_sizes_by_tasks_per_machine_with_special_purpose_machines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """10 machines, 5 task types: 1 and 2.5 tasks per machine are 10 and 25 tasks; with one
    special-purpose machine type every schedule is still checked (the mappers never use an
    infinite ETC) and ends at MS_LB or later."""
    outdir = tmp_path / "study"
    code = main(["experiment", "tarplee", "--tasks-per-machine", "1,2.5", "--seeds", "1",
                 "--mappers", "lp,min-min,mct", "--platform-option", "machines=10",
                 "--workload-option", "task_types=5", "--workload-option", "special_purpose=1",
                 "-o", str(outdir)])  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    assert "tasks per machine [1.0, 2.5]: [10, 25] tasks" in captured.err
    with (outdir / "summary.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert {r["tasks"] for r in rows} == {"10", "25"}
    assert all(float(r["mean_ratio"]) >= 1.0 for r in rows)
    with pytest.raises(SystemExit):
        main(["experiment", "tarplee", "--tasks", "10", "--tasks-per-machine", "1"])
    assert "not allowed with argument" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["experiment", "tarplee", "--tasks-per-machine", "0"])
    assert "expected numbers > 0, got '0'" in capsys.readouterr().err


def test_heuristics_take_the_registry_names_and_mappers_stays() -> None:
    """``--heuristics lp-makespan,...`` (``hetsched list``'s names) and ``--mappers lp,...``
    choose the same mappers; each registry name's batch heuristic runs that very mapper."""
    studies = argparse.ArgumentParser().add_subparsers()
    add_study_parser(studies, tarplee.STUDY)
    parser = studies.choices["tarplee"]
    every = ["lp", "min-min", "sufferage", "mct", "met"]
    assert parser.parse_args([]).mappers == every == list(tarplee.MAPPERS)
    assert parser.parse_args(["--heuristics", "lp-makespan,min-min,sufferage,mct,met"]
                             ).mappers == every  # fmt: skip
    assert parser.parse_args(["--mappers", "lp,mct"]).mappers == ["lp", "mct"]
    assert parser.parse_args(["--heuristics", "met,lp"]).mappers == ["met", "lp"]
    for name, mapper in tarplee.HEURISTIC_MAPPERS.items():
        assert HEURISTICS[name].mapper.name == mapper  # type: ignore[attr-defined]
    with pytest.raises(SystemExit):
        parser.parse_args(["--heuristics", "lp-makespan-online"])
