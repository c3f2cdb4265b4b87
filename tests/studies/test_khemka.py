"""Tests of studies/scenario.py, compare.py, khemka.py and cli.py.

The end-to-end tests use the real KTH SP2 trace (Parallel Workloads Archive) from
the shared trace folder (tests/shared_traces.py), day 100, on the ``khemka`` preset
shrunk to ``cores=64`` so that a
run takes well under a second on the embedded engine. Day 100 of KTH has jobs: its
28 h window (4 h warm-up + 24 h measured) holds 134 submissions.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
from pathlib import Path

import pytest
from shared_traces import TRACE_DIR

from hetsched.cli import main
from hetsched.heuristics.registry import HEURISTICS
from hetsched.metrics.summary import RunSummary
from hetsched.studies import khemka
from hetsched.studies.compare import (
    DEFAULT_HEURISTICS,
    SUMMARY_FILE,
    compare,
    format_table,
    run_or_resume,
)
from hetsched.studies.khemka import (
    ENVIRONMENTS,
    Aggregate,
    HeuristicSpec,
    StudyRun,
    aggregate,
    confidence_half_width,
    daily_arrivals,
    format_aggregates,
    plot_figures,
    ratios,
    run_study,
    select_days,
    write_csv,
    write_tables,
)
from hetsched.studies.scenario import (
    PLATFORM_FILE,
    SCENARIO_FILE,
    WORKLOAD_FILE,
    Scenario,
    prepare,
)

KTH = "KTH-SP2-1996-2.1-cln"
DAY = 100
OLD = 1_000_000_000  # an mtime (2001-09-09) no file written by a test can have

needs_trace = pytest.mark.skipif(
    not (TRACE_DIR / f"{KTH}.swf.gz").is_file(), reason="the KTH trace is not available"
)


def kth_scenario(seed: int = 1) -> Scenario:
    return Scenario(KTH, day=DAY, preset="khemka", seed=seed, platform_options={"cores": 64})


def set_old_mtime(*paths: Path) -> None:
    for path in paths:
        os.utime(path, (OLD, OLD))


# --------------------------------------------------------------------------- Scenario


def test_scenario_label_strips_folder_and_swf_suffixes() -> None:
    # label = <trace file name without .swf/.gz>-day<d>-<preset>-seed<s>
    scenario = Scenario("/data/traces/KTH-SP2-1996-2.1-cln.swf.gz", day=3, preset="khemka-20",
                        seed=0)
    assert scenario.label() == "KTH-SP2-1996-2.1-cln-day3-khemka-20-seed0"
    assert Scenario("plain.swf", day=0, preset="p", seed=7).label() == "plain-day0-p-seed7"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"day": -1}, "day must be >= 0, got -1"),
        ({"seed": -2}, "seed must be >= 0, got -2"),
        ({"etc_cov": 0.0}, "etc_cov must be > 0, got 0.0"),
        ({"etc_cov": -0.5}, "etc_cov must be > 0, got -0.5"),
        ({"etc_cov": float("nan")}, "etc_cov must be > 0, got nan"),
    ],
)
def test_scenario_rejects_invalid_fields(changes: dict[str, object], message: str) -> None:
    fields: dict[str, object] = {"trace": KTH, "day": 1, "preset": "khemka", "seed": 0}
    with pytest.raises(ValueError, match=message):
        Scenario(**{**fields, **changes})  # type: ignore[arg-type]


def test_scenario_to_json_round_trips_every_field() -> None:
    scenario = Scenario(KTH, day=2, preset="khemka", seed=4, etc_cov=1.0,
                        value_correlation="exact", platform_options={"cores": 64})
    assert Scenario(**scenario.to_json()) == scenario  # type: ignore[arg-type]


@needs_trace
def test_prepare_writes_once_reuses_and_refuses_another_scenario(tmp_path: Path) -> None:
    folder = tmp_path / "scenario"
    platform, workload = prepare(kth_scenario(), folder, TRACE_DIR)
    assert (platform, workload) == (folder / PLATFORM_FILE, folder / WORKLOAD_FILE)
    marker = folder / SCENARIO_FILE
    assert json.loads(marker.read_text()) == kth_scenario().to_json()
    document = json.loads(workload.read_text())
    assert len(document["jobs"]) > 0  # day 100 of KTH has jobs
    assert platform.read_text().lstrip().startswith("<?xml")

    files = (platform, workload, marker)
    contents = [path.read_bytes() for path in files]
    set_old_mtime(*files)
    # The same scenario again: nothing is rewritten (a rewrite would reset the old mtime).
    assert prepare(kth_scenario(), folder, TRACE_DIR) == (platform, workload)
    assert [path.read_bytes() for path in files] == contents
    assert [path.stat().st_mtime for path in files] == [OLD, OLD, OLD]

    # Another seed is another scenario: refused, and the folder is left as it was.
    with pytest.raises(FileExistsError, match="holds another scenario"):
        prepare(kth_scenario(seed=2), folder, TRACE_DIR)
    assert [path.read_bytes() for path in files] == contents
    assert [path.stat().st_mtime for path in files] == [OLD, OLD, OLD]


@needs_trace
def test_prepare_is_deterministic_and_reads_the_trace_dir_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The trace folder may come from HETSCHED_TRACE_DIR instead of the argument; the same
    # scenario prepared in two folders gives byte-identical inputs (same seed).
    monkeypatch.setenv("HETSCHED_TRACE_DIR", str(TRACE_DIR))
    first = prepare(kth_scenario(), tmp_path / "a")
    second = prepare(kth_scenario(), tmp_path / "b", TRACE_DIR)
    for one, other in zip(first, second, strict=True):
        assert one.read_bytes() == other.read_bytes()


@needs_trace
def test_prepare_rewrites_missing_inputs_of_the_same_scenario(tmp_path: Path) -> None:
    # A marker without its workload (an interrupted prepare) is completed, not refused.
    folder = tmp_path / "scenario"
    _, workload = prepare(kth_scenario(), folder, TRACE_DIR)
    content = workload.read_bytes()
    workload.unlink()
    prepare(kth_scenario(), folder, TRACE_DIR)
    assert workload.read_bytes() == content


# --------------------------------------------------------------------------- compare


@needs_trace
def test_compare_runs_each_heuristic_then_resumes(tmp_path: Path) -> None:
    platform, workload = prepare(kth_scenario(), tmp_path, TRACE_DIR)
    seen: list[tuple[str, bool]] = []
    summaries = compare(
        ["easy", "max-vpr-ph"], platform, workload, tmp_path,
        on_run=lambda name, summary, resumed: seen.append((name, resumed)),
    )
    assert seen == [("easy", False), ("max-vpr-ph", False)]
    assert [s.heuristic for s in summaries] == ["easy", "max-vpr-ph"]
    for summary in summaries:
        assert summary.engine == "embedded"
        assert summary.tasks_total > 0
        # value % = 100 x earned / bound (Khemka sec. 5), and both heuristics are measured
        # against the same bound and the same tasks: they ran on the same inputs.
        assert summary.value_bound == summaries[0].value_bound
        assert summary.tasks_total == summaries[0].tasks_total
        assert summary.value_percent == pytest.approx(
            100 * summary.value_earned / summary.value_bound
        )
    for name, summary in zip(["easy", "max-vpr-ph"], summaries, strict=True):
        saved = json.loads((tmp_path / name / SUMMARY_FILE).read_text())
        assert RunSummary(**saved) == summary

    jobs = [tmp_path / name / "out_jobs.csv" for name in ("easy", "max-vpr-ph")]
    set_old_mtime(*jobs)
    again, resumed = run_or_resume("easy", platform, workload, tmp_path / "easy")
    assert resumed is True
    assert again == summaries[0]
    seen.clear()
    assert compare(["easy", "max-vpr-ph"], platform, workload, tmp_path,
                   on_run=lambda name, summary, resumed: seen.append((name, resumed))
                   ) == summaries
    assert seen == [("easy", True), ("max-vpr-ph", True)]
    assert [path.stat().st_mtime for path in jobs] == [OLD, OLD]  # nothing was run again

    table = format_table(summaries).splitlines()
    assert len(table) == 1 + 2  # header + one row per run
    assert table[0].split()[:3] == ["heuristic", "value", "%"]
    assert [line.split()[0] for line in table[1:]] == ["easy", "max-vpr-ph"]
    # the "value %" cell of each row is the summary's value_percent at one decimal
    assert [line.split()[1] for line in table[1:]] == [
        f"{s.value_percent:.1f}" for s in summaries
    ]


@needs_trace
def test_run_or_resume_reruns_a_folder_without_summary(tmp_path: Path) -> None:
    # A run that died left outputs but no summary.json: it is run again, not read back.
    platform, workload = prepare(kth_scenario(), tmp_path, TRACE_DIR)
    first, resumed = run_or_resume("easy", platform, workload, tmp_path / "easy")
    assert resumed is False
    (tmp_path / "easy" / SUMMARY_FILE).unlink()
    jobs = tmp_path / "easy" / "out_jobs.csv"
    set_old_mtime(jobs)
    second, resumed = run_or_resume("easy", platform, workload, tmp_path / "easy")
    assert resumed is False
    assert jobs.stat().st_mtime != OLD
    assert (tmp_path / "easy" / SUMMARY_FILE).is_file()
    assert second.value_earned == first.value_earned
    assert second.tasks_completed == first.tasks_completed


@needs_trace
def test_a_summary_of_an_older_version_is_recomputed_not_read(tmp_path: Path) -> None:
    """A summary.json without this hetsched's summary version (value_earned meant another
    accounting before) is recomputed from the run's files, never read with a new meaning."""
    platform, workload = prepare(kth_scenario(), tmp_path, TRACE_DIR)
    first, _ = run_or_resume("easy", platform, workload, tmp_path / "easy")
    path = tmp_path / "easy" / SUMMARY_FILE
    old = {k: v for k, v in json.loads(path.read_text()).items()
           if k not in ("version", "value_earned_total", "value_percent_total")}
    old["value_percent"] = 99.0  # what an older accounting might have said
    path.write_text(json.dumps(old))
    jobs = tmp_path / "easy" / "out_jobs.csv"
    set_old_mtime(jobs)
    again, resumed = run_or_resume("easy", platform, workload, tmp_path / "easy")
    assert resumed is True and jobs.stat().st_mtime == OLD  # not run again
    assert again == first
    assert json.loads(path.read_text())["version"] == first.version


@needs_trace
def test_a_study_gives_the_same_runs_in_one_or_two_processes(tmp_path: Path) -> None:
    """One KTH day (any arrival count), two heuristics, one of them with an option: the
    summaries are the same run sequentially and in two worker processes (wall-clock times
    and mapping-event latencies aside)."""
    def study(folder: str, jobs: int) -> list[StudyRun]:
        return run_study(tmp_path / folder, trace=KTH, nb_scenarios=1, trace_dir=TRACE_DIR,
                         heuristics=["easy", "max-vpr:book_zero_value=true"],
                         arrivals=(1, 10**6), jobs=jobs)

    def comparable(run: StudyRun) -> tuple:
        data = run.summary.to_json()
        latencies = [k for k in data if k.startswith("mapping_latency")]
        for key in ("wall_seconds", "outdir", "workload", "platform", *latencies):
            data.pop(key)
        return (run.environment, run.scenario, run.day, run.heuristic, data)

    one, two = study("one", 1), study("two", 2)
    assert [comparable(r) for r in one] == [comparable(r) for r in two]
    assert [r.heuristic for r in one] == ["easy", "max-vpr:book_zero_value=true"]
    day = one[0].day
    assert (tmp_path / "one" / "intermediate" / f"s0-day{day}" /
            "max-vpr+book_zero_value=true" / SUMMARY_FILE).is_file()
    assert (tmp_path / "one" / "days.csv").read_text().startswith("day,arrivals,chosen\n")


@needs_trace
def test_a_study_runs_a_subset_of_its_scenarios(tmp_path: Path) -> None:
    """``only_scenarios`` keeps the full selection's days and seeds: scenario 2 of 3 alone
    is the run the whole study would make for it."""
    selection = khemka.select_days(khemka.daily_arrivals(KTH, TRACE_DIR), 3, 1, 10**6)
    [run] = run_study(tmp_path, trace=KTH, nb_scenarios=3, trace_dir=TRACE_DIR,
                      heuristics=["fcfs"], arrivals=(1, 10**6), only_scenarios=[2])
    assert (run.scenario, run.day) == (2, selection.days[2])
    folders = [p.name for p in (tmp_path / "intermediate").iterdir()]
    assert folders == [f"s2-day{selection.days[2]}"]
    scenario = json.loads((tmp_path / "intermediate" / folders[0] / "scenario.json").read_text())
    assert scenario["seed"] == 1 + 2


@needs_trace
def test_run_study_refuses_scenarios_out_of_range(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"scenario\(s\) 3 out of range: the study has 3"):
        run_study(tmp_path, trace=KTH, nb_scenarios=3, trace_dir=TRACE_DIR,
                  arrivals=(1, 10**6), only_scenarios=[0, 3])


@needs_trace
def test_cmq_diagnostics_of_a_small_study(tmp_path: Path) -> None:
    """Queue shares add up to 1, the events are CMQ's mapping events, and the study writes
    them to cmq.csv."""
    runs = run_study(tmp_path, trace=KTH, nb_scenarios=1, trace_dir=TRACE_DIR,
                     heuristics=["cmq", "easy"], arrivals=(1, 10**6))
    [diagnostic] = khemka.cmq_diagnostics(runs)
    assert diagnostic.small + diagnostic.medium + diagnostic.large == pytest.approx(1.0)
    assert diagnostic.large > 0  # the largest task is in the large queue
    assert diagnostic.events == runs[0].summary.mapping_events
    assert 0.0 <= diagnostic.several <= 1.0
    write_tables(runs, tmp_path)
    rows = list(csv.DictReader((tmp_path / "cmq.csv").open()))
    assert [row["mapping_events"] for row in rows] == [str(diagnostic.events)]


def test_default_heuristics_are_registered_names() -> None:
    # every name the comparison and the study run by default is one run_heuristic accepts
    assert set(DEFAULT_HEURISTICS) <= set(HEURISTICS)
    assert set(khemka.HEURISTICS) <= set(HEURISTICS)
    assert len(set(DEFAULT_HEURISTICS)) == len(DEFAULT_HEURISTICS)


# --------------------------------------------------------------------------- khemka


def test_environments_match_section_5() -> None:
    # Khemka sec. 5: 20% / 25% / 15% of Curie's cores; weak/exact/no correlation;
    # ETC COV 0.3 / 0.01 / 1. Every environment differs from "intermediate" in one parameter.
    base = ENVIRONMENTS["intermediate"]
    assert (base.preset, base.value_correlation, base.etc_cov) == ("khemka-20", "weak", 0.3)
    assert len(ENVIRONMENTS) == 7
    for env in ENVIRONMENTS.values():
        differences = sum([env.preset != base.preset,
                           env.value_correlation != base.value_correlation,
                           env.etc_cov != base.etc_cov])
        assert differences == (0 if env is base else 1), env.name
    assert ENVIRONMENTS["lower-oversubscription"].preset == "khemka-25"
    assert ENVIRONMENTS["higher-oversubscription"].preset == "khemka-15"
    assert ENVIRONMENTS["low-heterogeneity"].etc_cov == 0.01
    assert ENVIRONMENTS["high-heterogeneity"].etc_cov == 1.0


@pytest.mark.parametrize(
    ("nb", "days"),
    [
        # Eligible days (897-2904 arrivals, day 0 aside): 2, 3, 5, 6, 8 (m = 5).
        # Scenario i takes rank round(i (m - 1) / (nb - 1)).
        (1, (2,)),
        (2, (2, 8)),  # ranks 0, 4
        (3, (2, 5, 8)),  # ranks 0, 2, 4
        (4, (2, 3, 6, 8)),  # ranks 0, round(1.33) = 1, round(2.67) = 3, 4
        (5, (2, 3, 5, 6, 8)),
    ],
)
def test_select_days_spreads_over_the_eligible_days(nb: int, days: tuple[int, ...]) -> None:
    counts = {0: 1500, 1: 12, 2: 897, 3: 2904, 4: 2905, 5: 1000, 6: 2000, 7: 0, 8: 1600}
    selection = select_days(counts, nb)
    assert selection.days == days
    assert selection.skipped() == {
        "day 0 (no warm-up)": 1, "fewer than 897 arrivals": 1,
        "no arrival": 1, "more than 2904 arrivals": 1,
    }
    assert select_days(counts, nb).days == days  # reproducible


def test_select_days_errors_and_range_option() -> None:
    counts = {1: 100, 2: 500, 3: 3000}
    with pytest.raises(ValueError, match="only 0 day"):
        select_days(counts, 1)
    assert select_days(counts, 2, low=100, high=500).days == (1, 2)
    with pytest.raises(ValueError, match="at least one scenario, got 0"):
        select_days(counts, 0)
    with pytest.raises(ValueError, match="arrivals range"):
        select_days(counts, 1, low=10, high=5)
    text = select_days(counts, 1, low=400, high=600).describe()
    assert text.startswith("1 day(s) with 400-600 arrivals: 2 (500); skipped")
    assert "1 day(s): fewer than 400 arrivals" in text
    assert "1 day(s): more than 600 arrivals" in text


def _swf(path: Path, submits: list[int]) -> Path:
    lines = ["; MaxProcs: 8", "; UnixStartTime: 0", "; TimeZoneString: UTC"]
    lines += [f" {i + 1} {s} 5 100 4 -1 -1 4 200 -1 1 3 -1 -1 -1 -1 -1 -1"
              for i, s in enumerate(submits)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_daily_arrivals_of_a_small_trace(tmp_path: Path) -> None:
    # UnixStartTime 0 in UTC: submits 3600 and 86399 s are 1970-01-01 (day 0), 86400 is day 1,
    # 3 x 86400 + 5 is 1970-01-04 (day 3); day 2 has none.
    path = _swf(tmp_path / "t.swf", [3600, 86399, 86400, 3 * 86400 + 5])
    assert daily_arrivals(str(path)) == {0: 2, 1: 1, 3: 1}
    with pytest.raises(ValueError, match="no job record"):
        daily_arrivals(str(_swf(tmp_path / "empty.swf", [])))


@needs_trace
def test_curie_days_in_the_papers_range() -> None:
    """The paper's 48 days had 897 to 2,904 arrivals; Curie has enough such days."""
    curie = TRACE_DIR / f"{khemka.CURIE}.swf.gz"
    if not curie.is_file():
        pytest.skip("no Curie trace")
    selection = select_days(daily_arrivals(khemka.CURIE, TRACE_DIR), 48)
    assert len(set(selection.days)) == 48
    assert all(897 <= selection.arrivals[d] <= 2904 for d in selection.days)


def test_heuristic_specs() -> None:
    spec = HeuristicSpec.parse("max-vpr-ph:book_zero_value=true+drop_zero_value=false")
    assert (spec.name, dict(spec.options)) == (
        "max-vpr-ph", {"book_zero_value": True, "drop_zero_value": False}
    )
    assert spec.folder == "max-vpr-ph+book_zero_value=true+drop_zero_value=false"
    assert HeuristicSpec.parse("easy") == HeuristicSpec("easy", "easy", {})
    with pytest.raises(ValueError, match="option 'x' is not key=value"):
        HeuristicSpec.parse("easy:x")


def test_confidence_half_width_by_hand() -> None:
    # [2, 4, 6, 8]: mean 5, squared deviations 9 + 1 + 1 + 9 = 20, sample sd sqrt(20 / 3)
    # = 2.5820, t(0.975, 3) = 3.1824: half-width 3.1824 x 2.5820 / sqrt(4) = 4.1085.
    assert confidence_half_width([2.0, 4.0, 6.0, 8.0]) == pytest.approx(4.1085, abs=1e-4)
    # level 0.90: t(0.95, 3) = 2.3534, half-width 2.3534 x 2.5820 / 2 = 3.0382
    assert confidence_half_width([2.0, 4.0, 6.0, 8.0], level=0.90) == pytest.approx(
        3.0382, abs=1e-4
    )
    # [40, 60]: sd sqrt(200) = 14.142, t(0.975, 1) = 12.7062: 12.7062 x 14.142 / sqrt(2)
    # = 127.062
    assert confidence_half_width([40.0, 60.0]) == pytest.approx(127.062, abs=1e-3)
    assert confidence_half_width([7.0, 7.0, 7.0]) == 0.0  # no spread
    assert confidence_half_width([5.0]) == 0.0  # one scenario: no interval
    assert confidence_half_width([]) == 0.0


def summary(
    heuristic: str, percent: float | None, completed: int, latency: float | None = None
) -> RunSummary:
    """A run of 10 tasks with a value bound of 200 (value earned = percent x 2)."""
    return RunSummary(
        heuristic=heuristic, engine="embedded", outdir="o", workload="w.json",
        platform="p.xml", measure_window=(14400.0, 100800.0), tasks_total=10,
        tasks_completed=completed, tasks_failed=0, tasks_dropped=10 - completed,
        value_earned=None if percent is None else 2 * percent, value_bound=200.0,
        value_percent=percent,
        value_earned_total=None if percent is None else 2 * percent + 10,
        value_percent_total=None if percent is None else percent + 5,
        utility_earned=None, utility_bound=None,
        utility_percent=None, energy_joules=None, energy_window_joules=None,
        energy_budget_joules=None, makespan=100800.0, mean_waiting_time=60.0,
        mapping_events=None if latency is None else 5, mapping_latency_p50=latency,
        mapping_latency_p95=latency, mapping_latency_max=latency, wall_seconds=0.25,
    )


def study_runs() -> list[StudyRun]:
    """Two scenarios (days 1 and 332) of "intermediate", one of "lower-oversubscription"."""
    return [
        StudyRun("intermediate", 0, 1, "easy", summary("easy", 40.0, 4, 0.001)),
        StudyRun("intermediate", 0, 1, "max-vpr-ph", summary("max-vpr-ph", 70.0, 7)),
        StudyRun("intermediate", 0, 1, "fcfs", summary("fcfs", 0.0, 0)),
        StudyRun("intermediate", 1, 332, "easy", summary("easy", 60.0, 6, 0.003)),
        StudyRun("intermediate", 1, 332, "max-vpr-ph", summary("max-vpr-ph", 90.0, 9)),
        StudyRun("intermediate", 1, 332, "fcfs", summary("fcfs", 0.0, 0)),
        StudyRun("lower-oversubscription", 0, 1, "easy", summary("easy", 25.0, 3, 0.002)),
    ]


def test_aggregate_by_hand() -> None:
    result = aggregate(study_runs())
    assert [(a.environment, a.heuristic) for a in result] == [
        ("intermediate", "easy"),
        ("intermediate", "max-vpr-ph"),
        ("intermediate", "fcfs"),
        ("lower-oversubscription", "easy"),
    ]
    easy, vpr, fcfs, lower = result
    # easy: % 40 and 60 -> mean 50, half-width 127.062 (see above); completed 4, 6 -> 5;
    # mapping latency p50 1 ms and 3 ms -> 2 ms
    assert (easy.scenarios, easy.mean_percent, easy.mean_completed) == (2, 50.0, 5.0)
    assert easy.ci95 == pytest.approx(127.062, abs=1e-3)
    assert easy.latency_p50_ms == pytest.approx(2.0)
    # max-vpr-ph: % 70 and 90 -> mean 80; completed 7, 9 -> 8; no mapping events -> None
    assert (vpr.mean_percent, vpr.mean_completed, vpr.latency_p50_ms) == (80.0, 8.0, None)
    assert vpr.ci95 == pytest.approx(127.062, abs=1e-3)
    # fcfs earned nothing in both scenarios: 0 % with no spread
    assert (fcfs.mean_percent, fcfs.ci95) == (0.0, 0.0)
    # one scenario: no interval
    assert (lower.scenarios, lower.mean_percent, lower.ci95) == (1, 25.0, 0.0)
    assert aggregate([]) == []


def test_aggregate_with_the_other_accounting() -> None:
    """"total" counts completions after the window too: summaries' value_percent_total (here
    each run's % + 5): easy 45 and 65 -> 55; an unknown accounting is refused."""
    easy = aggregate(study_runs(), accounting="total")[0]
    assert (easy.heuristic, easy.mean_percent) == ("easy", 55.0)
    with pytest.raises(ValueError, match="unknown accounting 'late'"):
        aggregate(study_runs(), accounting="late")


def test_aggregate_refuses_runs_without_value() -> None:
    """A run whose workload has no value functions has no % of the bound: an error, not 0 %."""
    run = StudyRun("intermediate", 0, 1, "easy", summary("easy", None, 0))
    with pytest.raises(ValueError, match="no value %"):
        aggregate([run])


def test_ratios_by_hand() -> None:
    # intermediate: max-vpr-ph 80 % / easy 50 % = 1.6; fcfs at 0 % has no ratio;
    # lower-oversubscription has no max-vpr-ph run: no row.
    table = ratios(aggregate(study_runs()))
    assert table == {"intermediate": {"easy": pytest.approx(1.6)}}
    # another reference heuristic: easy 50 / max-vpr-ph 80 = 0.625; lower-oversubscription
    # has easy alone, so an empty row
    assert ratios(aggregate(study_runs()), best="easy") == {
        "intermediate": {"max-vpr-ph": pytest.approx(0.625)},
        "lower-oversubscription": {},
    }


def test_format_aggregates_by_hand() -> None:
    text = format_aggregates(aggregate(study_runs()))
    # widths: environment 22 ("lower-oversubscription"), heuristic 10 ("max-vpr-ph"),
    # n 1, "% of bound" 10, "95% CI" 6, "completed" 9, "event ms" 8;
    # the first two columns left-aligned, the others right-aligned, two spaces between.
    # No interval from 1 or 2 scenarios (+-127.1 on a percentage says nothing): n/a.
    assert text.splitlines() == [
        "environment             heuristic   n  % of bound  95% CI  completed  event ms",
        "intermediate            easy        2        50.0     n/a          5      2.00",
        "intermediate            max-vpr-ph  2        80.0     n/a          8         -",
        "intermediate            fcfs        2         0.0     n/a          0         -",
        "lower-oversubscription  easy        1        25.0     n/a          3      2.00",
        "n/a: no 95% interval from fewer than 3 values, or one wider than the measure's whole"
        " range (0-100%; more scenarios: --days)",
    ]
    three = [*study_runs(), StudyRun("intermediate", 2, 9, "easy", summary("easy", 50.0, 5))]
    easy = aggregate(three)[0]  # 40, 60, 50: half-width 4.3027 * 10 / sqrt(3) = 24.84
    assert easy.scenarios == 3 and format_aggregates([easy]).splitlines()[1].split()[4] == (
        "+-24.8")


def test_write_csv_by_hand(tmp_path: Path) -> None:
    runs = study_runs()
    write_csv(runs, aggregate(runs), tmp_path)
    with (tmp_path / "runs.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(runs)
    assert rows[3] == {
        "environment": "intermediate", "scenario": "1", "day": "332", "heuristic": "easy",
        "value_percent": "60.0", "value_earned": "120.0", "value_percent_total": "65.0",
        "value_earned_total": "130.0", "value_bound": "200.0",
        "tasks_total": "10", "tasks_completed": "6", "tasks_dropped": "4",
        "mapping_latency_p50": "0.003", "wall_seconds": "0.25",
    }
    assert rows[2]["value_percent"] == "0.0"
    with (tmp_path / "summary.csv").open(newline="") as handle:
        table = list(csv.reader(handle))
    assert table == [
        ["environment", "heuristic", "scenarios", "mean_value_percent", "ci95",
         "mean_tasks_completed", "mapping_latency_p50_ms"],
        ["intermediate", "easy", "2", "50.000", "127.062", "5.0", "2.000"],
        ["intermediate", "max-vpr-ph", "2", "80.000", "127.062", "8.0", ""],
        ["intermediate", "fcfs", "2", "0.000", "0.000", "0.0", ""],
        ["lower-oversubscription", "easy", "1", "25.000", "0.000", "3.0", "2.000"],
    ]


def _aggregate(environment: str, heuristic: str, percent: float) -> Aggregate:
    return Aggregate(environment, heuristic, 2, percent, 1.0, 5.0, None)


def test_plot_figures_only_for_present_environments(tmp_path: Path) -> None:
    # "intermediate" belongs to Fig. 4, 5(a) and 5(b); "lower-oversubscription" to Fig. 4.
    inter = [_aggregate("intermediate", "easy", 50.0), _aggregate("intermediate", "cmq", 60.0)]
    (tmp_path / "a").mkdir()
    written = plot_figures(inter, tmp_path / "a")
    assert written == [tmp_path / "a" / f"{k}.png" for k in ("fig4", "fig5a", "fig5b")]
    for path in written:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (tmp_path / "b").mkdir()
    lower = [_aggregate("lower-oversubscription", "easy", 70.0)]
    assert plot_figures(lower, tmp_path / "b") == [tmp_path / "b" / "fig4.png"]
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["fig4.png"]
    (tmp_path / "c").mkdir()
    assert plot_figures([], tmp_path / "c") == []
    assert list((tmp_path / "c").iterdir()) == []


def test_the_study_writes_tables_and_figures(tmp_path: Path) -> None:
    args = argparse.Namespace(outdir=tmp_path, accounting="window")
    tables = khemka.STUDY.summarize(study_runs(), args)
    assert tables.files == (tmp_path / "summary.csv", tmp_path / "runs.csv")
    assert format_aggregates(aggregate(study_runs())) in tables.text
    figures = khemka.STUDY.figures(study_runs(), args)
    # intermediate -> fig4, fig5a, fig5b; lower-oversubscription adds nothing new
    assert [p.name for p in figures] == ["fig4.png", "fig5a.png", "fig5b.png"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "fig4.png", "fig5a.png", "fig5b.png", "runs.csv", "summary.csv"
    ]


def test_run_study_rejects_an_unknown_environment(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown environment\(s\) nope, other; choose from"):
        run_study(tmp_path, environments=["intermediate", "nope", "other"])
    assert list(tmp_path.iterdir()) == []  # refused before anything was written


# --------------------------------------------------------------------------- CLI


@needs_trace
def test_cli_compare_prints_one_row_per_heuristic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outdir = tmp_path / "cmp"
    argv = ["compare", "--trace", KTH, "--day", str(DAY), "--preset", "khemka", "--cores", "64",
            "--seed", "1", "--heuristics", "easy,max-vpr-ph", "--trace-dir", str(TRACE_DIR),
            "-o", str(outdir)]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].startswith("heuristic")
    assert [line.split()[0] for line in lines[1:3]] == ["easy", "max-vpr-ph"]
    assert "preparing KTH-SP2-1996-2.1-cln-day100-khemka-seed1" in err
    for name in ("easy", "max-vpr-ph"):
        assert (outdir / name / SUMMARY_FILE).is_file()
    # The same scenario as kth_scenario(): the marker holds it.
    assert json.loads((outdir / SCENARIO_FILE).read_text()) == kth_scenario().to_json()
    # A second call resumes both runs and prints the same table.
    assert main(argv) == 0
    again, err = capsys.readouterr()
    assert again == out
    assert err.count("already done") == 2


def test_cli_compare_platform_without_workload(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["compare", "--platform", str(tmp_path / "p.xml"), "-o", str(tmp_path / "o")])
    assert code == 2
    assert "hetsched compare: error: --platform and --workload go together" in (
        capsys.readouterr().err
    )


def test_cli_compare_needs_trace_and_day(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", "--trace", KTH, "-o", str(tmp_path / "o")]) == 2
    assert "give --trace and --day" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_cli_experiment_khemka_unknown_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["experiment", "khemka", "--environments", "nope", "-o", str(tmp_path / "k")])
    assert code == 2
    err = capsys.readouterr().err
    assert "hetsched experiment: error: unknown environment(s) nope" in err
    assert "intermediate" in err  # the valid names are listed


@needs_trace
def test_scenario_drops_jobs_over_its_core_limit(tmp_path: Path) -> None:
    """Khemka et al. section 4 remove the tasks asking for more than 4,096 cores; a scenario's
    ``max_cores`` does the same (here 8 on KTH's day 100, whose jobs ask for up to 100 cores)."""
    limited = Scenario(KTH, day=DAY, preset="khemka", seed=1, max_cores=8,
                       platform_options={"cores": 64})
    _, workload = prepare(limited, tmp_path / "limited", TRACE_DIR)
    cores = [job["cores"] for job in json.loads(workload.read_text())["jobs"]]
    assert cores and max(cores) <= 8
    unlimited = Scenario(KTH, day=DAY, preset="khemka", seed=1, max_cores=None,
                         platform_options={"cores": 64})
    _, workload = prepare(unlimited, tmp_path / "unlimited", TRACE_DIR)
    assert max(job["cores"] for job in json.loads(workload.read_text())["jobs"]) > 8
    assert Scenario(KTH, day=DAY, preset="khemka", seed=1).max_cores == 4096


@needs_trace
def test_a_study_runs_heuristics_from_outside_the_repository(tmp_path: Path) -> None:
    """An installed heuristic (examples/my-heuristic's entry point) and a class of a file,
    checked before any run and run in two worker processes, each under its label."""
    (tmp_path / "mine.py").write_text(
        "from hetsched.heuristics.baselines.backfilling import Fcfs as Mine\n"
    )
    mine = f"{tmp_path / 'mine.py'}:Mine"
    runs = run_study(tmp_path / "study", trace=KTH, nb_scenarios=1, trace_dir=TRACE_DIR,
                     heuristics=["smallest-etc", mine, "fcfs"], arrivals=(1, 10**6), jobs=2)
    assert [run.heuristic for run in runs] == ["smallest-etc", mine, "fcfs"]
    assert runs[1].summary.value_earned == runs[2].summary.value_earned  # FCFS, another name
    with pytest.raises(ValueError, match="no such file"):
        run_study(tmp_path / "other", trace=KTH, nb_scenarios=1, trace_dir=TRACE_DIR,
                  heuristics=[f"{tmp_path / 'absent.py'}:Mine"], arrivals=(1, 10**6))
