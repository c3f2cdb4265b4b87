"""``hetsched run`` end to end: embedded engine, a (fake) batsim on PATH, checker, metrics.

The tiny case, computed by hand. Platform: cluster ``fast`` = resources 0-1 (4 cores,
2 Gflop/s per core, 100 W idle, 200 W full) and ``slow`` = 2-3 (4 cores, 1 Gflop/s,
50 W idle, 100 W full). Workload (8 cores = 2 nodes on either cluster):

=====  =======  =========================  ===========================================
job    subtime  ETC fast / slow, profile   value function (start, final, soft, hard)
=====  =======  =========================  ===========================================
1      0        100 s / 200 s, delay 100   10, 2, 150, 300
2      10       50 s / 100 s, delay 50     6, 1, 60, 160
=====  =======  =========================  ===========================================

``easy`` (hetsched, execution twins): job 1 starts at once on ``fast`` (0-1), [0, 100);
at 10 ``fast`` is busy and ``slow`` is free, so job 2 runs there, [10, 110) (ETC 100 s).
Values: job 1 ends 100 s after arrival <= 150 -> 10; job 2 ends 100 s after arrival,
between soft 60 and hard 160 -> 6 + (1 - 6) * (100 - 60) / 100 = 4. Earned 14 of the
bound 10 + 6 = 16: 87.5 %. Makespan 110, waiting 0 and 0.
Energy (SimGrid's host model: full watts while a host computes; each node is one SimGrid
core, as the platform generator writes it, so a twin loads its whole node):
[0, 10): fast 2 x 200 + slow 2 x 50 = 500 W -> 5000 J; [10, 100): 2 x 200 + 2 x 100 = 600 W
-> 54000 J; [100, 110): 2 x 100 + 2 x 100 = 400 W -> 4000 J. Total 63000 J.

``pybatsim:easyBackfill`` (stock, the static ``delay`` profiles): job 1 on 0-1 [0, 100),
job 2 on 2-3 [10, 60). Values 10 + 6 (50 s <= soft 60) = 16: 100 %. Makespan 100.
A delay job computes nothing: all hosts idle, 300 W x 100 s = 30000 J. The busy power an
execution twin would have drawn on top (``energy_delay_busy_joules``): fast 2 x (200 - 100) W
x 100 s + slow 2 x (100 - 50) W x 50 s = 25000 J.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from hetsched.cli import main
from hetsched.engine.platform import load_platform
from hetsched.metrics.checker import BATSIM_RULES, VIOLATION_KINDS, ScheduleViolation, check_run
from hetsched.metrics.resources import resource_clusters
from hetsched.running.run import RunSummary, run_heuristic


def _host(name: str, cluster: str, index: int, speed: float, idle: float, full: float) -> str:
    props = {
        "role": "compute_node", "cluster": cluster, "node_type": f"{cluster}-4c",
        "cores_per_node": "4", "node_index": str(index), "speed_per_pstate": repr(speed),
        "wattage_per_state": f"{idle!r}:{full!r}", "wattage_off": "0.0",
    }  # fmt: skip
    lines = [f'  <host id="{name}" speed="{speed!r}f" core="1" coordinates="0 0 0">']
    lines += [f'    <prop id="{key}" value="{value}"/>' for key, value in props.items()]
    return "\n".join([*lines, "  </host>"])


PLATFORM_XML = "\n".join(
    [
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        '<platform version="4.1">',
        '<zone id="tiny" routing="Vivaldi">',
        '  <host id="master" speed="1e9f" coordinates="0 0 0">',
        '    <prop id="role" value="master"/>',
        '    <prop id="wattage_per_state" value="0.0:0.0"/>',
        '    <prop id="wattage_off" value="0.0"/>',
        "  </host>",
        _host("0-fast-0", "fast", 0, 2.0e9, 100.0, 200.0),
        _host("0-fast-1", "fast", 1, 2.0e9, 100.0, 200.0),
        _host("1-slow-0", "slow", 0, 1.0e9, 50.0, 100.0),
        _host("1-slow-1", "slow", 1, 1.0e9, 50.0, 100.0),
        "</zone>",
        "</platform>",
        "",
    ]
)
"""The tiny platform, with the host properties of docs/architecture.md."""

JSON_KEYS = {
    "heuristic", "engine", "outdir", "workload", "platform", "measure_window",
    "tasks_total", "tasks_completed", "tasks_failed", "tasks_dropped",
    "value_earned", "value_bound", "value_percent", "value_earned_total", "value_percent_total",
    "utility_earned", "utility_bound", "utility_percent",
    "energy_joules", "energy_window_joules", "energy_budget_joules",
    "makespan", "mean_waiting_time",
    "mapping_events", "mapping_latency_p50", "mapping_latency_p95", "mapping_latency_max",
    "makespan_goals", "makespan_goals_met", "energy_delay_busy_joules",
    "energy_delay_busy_window_joules", "makespan_goal", "batch_met",
    "robustness_predicted", "batch_probability_predicted", "makespan_lower_bound",
    "makespan_ratio", "fairness", "efficiency", "baseline_makespan", "wall_seconds",
    "checked_rules", "tasks_unrunnable", "drop_reasons", "version",
}  # fmt: skip
"""Every key of ``--json``, as documented in docs/run.md."""


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny platform and workload in ``tmp_path`` (also the current directory)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "platform.xml").write_text(PLATFORM_XML)
    jobs = [
        (1, 0, {"fast": 100.0, "slow": 200.0}, 100.0, [10, 2, 150, 300]),
        (2, 10, {"fast": 50.0, "slow": 100.0}, 50.0, [6, 1, 60, 160]),
    ]
    workload = {
        "nb_res": 4,
        "jobs": [
            {
                "id": job_id,
                "subtime": subtime,
                "walltime": 1000,
                "res": 2,
                "profile": f"p{job_id}",
                "cores": 8,
                "etc": etc,
                "value": dict(
                    zip(("start", "final", "soft_deadline", "hard_deadline"), value, strict=True)
                ),
            }
            for job_id, subtime, etc, _, value in jobs
        ],
        "profiles": {f"p{job_id}": {"type": "delay", "delay": d} for job_id, _, _, d, _ in jobs},
        "hetsched": {
            "schema_version": 1,
            "reference_cluster": "fast",
            "clusters": {"fast": 4, "slow": 4},
            "measure_window": None,
        },
    }
    (tmp_path / "workload.json").write_text(json.dumps(workload))
    return tmp_path


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    code = main(["run", *args, "-p", "platform.xml", "-w", "workload.json", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def assert_easy(summary: dict) -> None:
    assert set(summary) == JSON_KEYS
    assert (summary["tasks_total"], summary["tasks_completed"], summary["tasks_dropped"]) == (
        2, 2, 0,
    )  # fmt: skip
    assert summary["value_earned"] == pytest.approx(14.0)
    assert summary["value_bound"] == pytest.approx(16.0)
    assert summary["value_percent"] == pytest.approx(87.5)
    assert summary["energy_joules"] == pytest.approx(63000.0)
    assert summary["energy_delay_busy_joules"] == 0.0  # twins only: SimGrid charged them
    assert summary["makespan"] == pytest.approx(110.0)
    assert summary["mean_waiting_time"] == pytest.approx(0.0)
    assert summary["mapping_events"] >= 2  # at least the two arrivals
    assert 0 <= summary["mapping_latency_p50"] <= summary["mapping_latency_p95"]
    assert summary["mapping_latency_p95"] <= summary["mapping_latency_max"]
    assert summary["checked_rules"] == list(VIOLATION_KINDS)


def assert_easy_backfill(summary: dict) -> None:
    assert set(summary) == JSON_KEYS
    assert (summary["tasks_total"], summary["tasks_completed"]) == (2, 2)
    assert summary["value_earned"] == pytest.approx(16.0)
    assert summary["value_percent"] == pytest.approx(100.0)
    assert summary["energy_joules"] == pytest.approx(30000.0)
    # busy power the delays did not draw: fast 2 x 100 W x 100 s + slow 2 x 50 W x 50 s
    assert summary["energy_delay_busy_joules"] == pytest.approx(25000.0)
    assert summary["makespan"] == pytest.approx(100.0)
    assert summary["mapping_events"] is None  # stock schedulers record none
    assert summary["checked_rules"] == list(BATSIM_RULES)


# ---------------------------------------------------------------- embedded


def test_embedded_easy_by_hand(tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = run_json(capsys, "easy", "-o", "runs/easy")
    assert_easy(summary)
    assert (summary["heuristic"], summary["engine"]) == ("easy", "embedded")
    assert summary["outdir"] == "runs/easy"
    jobs = (tiny / "runs/easy/out_jobs.csv").read_text()
    assert "w0.2,hetsched," in jobs  # task 2 ran as an execution twin
    assert json.loads((tiny / "runs/easy/summary.json").read_text())["value_earned"] == 14.0


def test_embedded_stock_easy_backfill_by_hand(
    tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = run_json(capsys, "pybatsim:easyBackfill", "-o", "runs/ebf")
    assert_easy_backfill(summary)
    assert "hetsched" not in (tiny / "runs/ebf/out_jobs.csv").read_text()  # no twin


def test_stock_scheduler_may_spread_a_job_over_clusters(
    tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Job 2 asks for 3 nodes (12 cores): easyBackfill, which knows no cluster, gives it
    resources that span fast and slow. Batsim's rules pass; the papers' one-cluster rule would
    not."""
    workload = json.loads((tiny / "workload.json").read_text())
    workload["jobs"][1].update(res=3, cores=12)
    (tiny / "workload.json").write_text(json.dumps(workload))
    summary = run_json(capsys, "pybatsim:easyBackfill", "-o", "runs/split")
    assert summary["tasks_completed"] == 2
    with pytest.raises(ScheduleViolation, match=r"\[cluster-split\] job w0!2 runs on several"):
        check_run("runs/split/out", "workload.json", "platform.xml")


def test_summary_table_is_aligned(tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Labels left-aligned, values right-aligned: every line has the same width. No
    progress bar: the captured standard error is not a terminal (it has out_schedule.csv's
    notes only, :func:`hetsched.running.run_cli.schedule_csv_notes`)."""
    assert main(["run", "easy", "-p", "platform.xml", "-w", "workload.json"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len({len(line) for line in lines}) == 1
    rows = {line[:24].strip(): line[24:].strip() for line in lines}
    assert rows["% of value bound"] == "87.50%"
    assert rows["energy (J)"] == "63,000.000"
    assert rows["outputs"] == "runs/workload/easy"  # the default output directory
    assert all(line.startswith("hetsched run: note: ") for line in err.splitlines()), err
    assert "\r" not in err


def test_options_are_parsed_as_json_and_checked_by_the_scheduler(
    tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = run_json(capsys, "easy", "--option", "drop_zero_value=false", "-o", "runs/a")
    assert summary["tasks_completed"] == 2
    code = main(["run", "easy", "-p", "platform.xml", "-w", "workload.json", "-o", "runs/b",
                 "--option", "drop_zero_value=maybe"])  # fmt: skip
    assert code == 2
    assert "drop_zero_value" in capsys.readouterr().err
    code = main(["run", "easy", "-p", "platform.xml", "-w", "workload.json", "-o", "runs/c",
                 "--option", "bogus=1"])  # fmt: skip
    assert code == 2
    assert "unknown option 'bogus'" in capsys.readouterr().err
    assert not (tiny / "runs/c").exists()  # nothing written for a rejected scheduler


def test_unknown_schedulers(tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "max-nothing", "-p", "platform.xml", "-w", "workload.json"]) == 2
    assert "unknown scheduler 'max-nothing'" in capsys.readouterr().err
    assert main(["run", "pybatsim:nope", "-p", "platform.xml", "-w", "workload.json"]) == 2
    assert "pybatsim:easyBackfill" in capsys.readouterr().err


def test_outputs_are_not_overwritten_without_force(
    tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_json(capsys, "easy", "-o", "runs/x")
    assert main(["run", "easy", "-p", "platform.xml", "-w", "workload.json", "-o", "runs/x"]) == 2
    assert "runs/x holds a previous run" in capsys.readouterr().err
    assert_easy_backfill(run_json(capsys, "pybatsim:easyBackfill", "-o", "runs/x", "--force"))
    assert not (tiny / "runs/x/out_mapping_events.csv").exists()  # the easy run's file is gone


def test_a_run_refused_before_the_simulation_leaves_nothing_frozen(
    tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The preflight's inputs go to the collector's permanent generation until the simulation
    ends; a run that stops before it (a previous run's folder) gives them back."""
    run_json(capsys, "easy", "-o", "runs/x")
    assert gc.get_freeze_count() == 0
    assert main(["run", "easy", "-p", "platform.xml", "-w", "workload.json", "-o", "runs/x"]) == 2
    assert gc.get_freeze_count() == 0


def test_missing_input_file(tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "easy", "-p", "nowhere.xml", "-w", "workload.json"]) == 2
    assert "nowhere.xml: no such file" in capsys.readouterr().err


def test_python_api(tiny: Path) -> None:
    summary = run_heuristic("easy", "platform.xml", "workload.json", "api", options={})
    assert isinstance(summary, RunSummary)
    assert summary.value_percent == pytest.approx(87.5)
    assert summary.wall_seconds is not None and summary.wall_seconds > 0
    saved = json.loads((tiny / "api/summary.json").read_text())
    assert saved == summary.to_json()


# ------------------------------------------------------- batsim on PATH (fake)


def test_batsim_engine_serves_a_hetsched_heuristic(
    tiny: Path, fake_batsim: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Same numbers as the embedded engine, through a batsim subprocess over ZeroMQ."""
    summary = run_json(capsys, "easy", "--engine", "batsim", "-o", "runs/b")
    assert_easy(summary)
    assert summary["engine"] == "batsim"
    argv = json.loads(fake_batsim.read_text())
    assert argv[:7] == ["-p", "platform.xml", "-w", "workload.json", "-e", "runs/b/out", "-E"]
    assert "--enable-dynamic-jobs" in argv
    endpoint = argv[argv.index("-s") + 1]
    assert endpoint.startswith("tcp://localhost:")
    assert (tiny / "runs/b/batsim.log").read_text().startswith("$ batsim -p platform.xml")


def test_batsim_engine_serves_a_stock_scheduler(
    tiny: Path, fake_batsim: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Stock schedulers never send registration_finished: no dynamic jobs for them."""
    assert_easy_backfill(run_json(capsys, "pybatsim:easyBackfill", "--engine", "batsim"))
    assert "--enable-dynamic-jobs" not in json.loads(fake_batsim.read_text())


def test_batsim_failing_at_start_is_reported_with_its_log(
    tiny: Path, fake_batsim: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("FAKE_BATSIM_FAIL", "1")
    assert main(["run", "easy", "-p", "platform.xml", "-w", "workload.json", "--engine",
                 "batsim"]) == 1  # fmt: skip
    err = capsys.readouterr().err
    assert "batsim exited with code 3" in err
    assert "Invalid platform file 'platform.xml': fake failure" in err


def test_batsim_crashing_mid_run_is_reported(
    tiny: Path, fake_batsim: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("FAKE_BATSIM_CRASH_AFTER", "3")
    assert main(["run", "pybatsim:easyBackfill", "-p", "platform.xml", "-w", "workload.json",
                 "--engine", "batsim"]) == 1  # fmt: skip
    assert "batsim exited with code 6 before the end of the simulation" in capsys.readouterr().err


def test_batsim_not_on_path(
    tiny: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tiny / "empty"))
    assert main(["run", "easy", "-p", "platform.xml", "-w", "workload.json", "--engine",
                 "batsim"]) == 2  # fmt: skip
    assert "batsim not found on PATH" in capsys.readouterr().err


def test_checker_fails_the_run_loudly(
    tiny: Path, fake_batsim: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """The fake writes every start 5 s early: job 2 (submitted at 10) 'starts' at 5."""
    monkeypatch.setenv("FAKE_BATSIM_EARLY", "5")
    assert main(["run", "pybatsim:easyBackfill", "-p", "platform.xml", "-w", "workload.json",
                 "--engine", "batsim", "--json"]) == 1  # fmt: skip
    out, err = capsys.readouterr()
    assert out == ""
    assert "schedule checker: 2 violation(s)" in err
    assert "[early-start] job w0!2 (task w0!2) starts at 5.0, before its submission at 10.0" in err


# ------------------------------------------------------------------ platform


def test_checker_resource_order_matches_the_engine(tiny: Path) -> None:
    """The checker's own platform reader and the engine agree on Batsim's resource ids."""
    machines = load_platform(tiny / "platform.xml", energy=False).machines
    assert resource_clusters(tiny / "platform.xml") == tuple(
        m.properties["cluster"] for m in machines
    )
    assert resource_clusters(tiny / "platform.xml") == ("fast", "fast", "slow", "slow")


def test_the_summary_explains_out_schedule_csv(
    tiny: Path, capsys: pytest.CaptureFixture
) -> None:
    """Batsim's out_schedule.csv counts each task's original job (rejected) and its execution
    twin, and its consumed_joules starts at the first submission: the printed summary says
    both, with the file's own figures, where the table's differ."""
    import csv

    path = tiny / "workload.json"
    document = json.loads(path.read_text())
    for job in document["jobs"]:
        job["subtime"] += 100  # 100 s of idle platform before the first submission
    path.write_text(json.dumps(document))
    assert main(["run", "easy", "-p", "platform.xml", "-w", "workload.json", "-o", "out"]) == 0
    err = capsys.readouterr().err
    with (tiny / "out" / "out_schedule.csv").open() as stream:
        row = next(csv.DictReader(stream))
    summary = json.loads((tiny / "out" / "summary.json").read_text())
    notes = err.splitlines()
    assert notes == [
        "hetsched run: note: out_schedule.csv counts each task twice, its original job rejected"
        f" and its execution twin run: nb_jobs 4, nb_jobs_rejected 2, success_rate"
        f" {float(row['success_rate']):g} for 2 tasks, 2 completed",
        f"hetsched run: note: out_schedule.csv's consumed_joules"
        f" {float(row['consumed_joules']):,.3f} is the"
        " energy from the first job's submission to the last one's completion; the energy"
        f" above ({summary['energy_joules']:,.3f} J) is the whole run's, from time 0",
    ]
    assert (row["nb_jobs"], row["nb_jobs_rejected"], float(row["success_rate"])) == ("4", "2", 0.5)
