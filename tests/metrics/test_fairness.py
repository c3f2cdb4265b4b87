"""Fairness and efficiency (Hwang et al. 2018, sections 3 and 6.1), by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hetsched.heuristics.fairness.first_level import fair_shares
from hetsched.metrics.fairness import (
    FairnessReference,
    efficiency,
    fairness,
    fairness_reference,
    fastest_onecore_runtime,
    makespan,
    normalized_throughput,
    run_fairness,
)
from hetsched.metrics.summary import summarize
from hetsched.studies.hwang import EngineRun, engine_run


def test_fastest_onecore_by_hand() -> None:
    # 300 cores, 3 users; u0 has 50 tasks: shares 50, 125, 125 (water-filling).
    # u0: ceil(50/50) x 10 = 10; u1: ceil(2000/125) = 16 rounds x min(30, 20) = 320;
    # u2: ceil(2001/125) = 17 rounds x 5 = 85.
    fastest = fastest_onecore_runtime([50, 2000, 2001], [[10, 40], [30, 20], [5, 50]], 300)
    assert fastest.tolist() == [10.0, 320.0, 85.0]


def test_fastest_onecore_on_the_default_scenario() -> None:
    # Table 5/6: 2,400 cores, 5 users: 480 cores each on the fastest platform.
    # AutoDock: 34,600 tasks -> 73 rounds of 244.068 s (cheetah).
    fastest = fastest_onecore_runtime([34_600], [[480.641, 244.068, 347.155, 294.118]], 480)
    assert fastest[0] == pytest.approx(73 * 244.068)


def test_fairness_is_one_minus_the_coefficient_of_variation() -> None:
    # Normalised throughputs 0.5, 1.0: mean 0.75, population sd 0.25 -> 1 - 1/3.
    assert fairness([0.5, 1.0]) == pytest.approx(2 / 3)
    assert fairness([0.8, 0.8, 0.8]) == pytest.approx(1.0)
    values = np.array([0.9, 0.7, 0.85, 0.6, 0.95])
    assert fairness(values) == pytest.approx(1 - values.std(ddof=0) / values.mean())


def test_normalised_throughput_is_the_ideal_run_time_over_the_real_one() -> None:
    # Throughput t_u = tasks / runtime; with Fastest-OneCore tasks / fastest; the ratio is
    # fastest / runtime.
    assert normalized_throughput([200.0, 100.0], [100.0, 100.0]).tolist() == [0.5, 1.0]


def test_efficiency_and_makespan() -> None:
    assert makespan([0.0, 30.0], [100.0, 120.0]) == 120.0
    assert efficiency(120.0, 150.0) == pytest.approx(0.8)


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="did every application finish"):
        normalized_throughput([np.nan, 10.0], [5.0, 5.0])
    with pytest.raises(ValueError, match="one finite normalised throughput > 0 per user"):
        fairness([])
    with pytest.raises(ValueError, match="give some of the 3 users no core"):
        fastest_onecore_runtime([5, 5, 5], np.ones((3, 2)), 2)
    with pytest.raises(ValueError, match="makespans must be > 0"):
        efficiency(0.0, 1.0)


def test_a_runs_summary_carries_the_studys_fairness_and_efficiency(tmp_path: Path) -> None:
    # Scenario 1 at 0.001 x Table 6 (500 tasks, with the run-time spread) on the engine: the
    # summary of the run's own files (what `hetsched run` prints and writes to summary.json)
    # gives the fairness the study computes from the driver, and the efficiency against the
    # study's simple fairness + AllCore run of the same inputs (the baseline runs each task
    # for its actual run time, in Batsim's submission order).
    rows = {}
    for first, second in (("pa-rr", "maf"), ("fairness", "allcore")):
        folder = tmp_path / first
        folder.mkdir()
        rows[first], _ = engine_run(EngineRun(1, first, "rpa", second), 0.001, folder)
    summary = summarize(tmp_path / "pa-rr" / "out", tmp_path / "pa-rr" / "workload.json",
                        tmp_path / "pa-rr" / "platform.xml")
    assert summary.fairness == pytest.approx(rows["pa-rr"]["fairness"], abs=1e-6)
    assert summary.baseline_makespan == pytest.approx(rows["fairness"]["makespan"], abs=1e-3)
    assert summary.efficiency == pytest.approx(
        rows["pa-rr"]["makespan"] / rows["fairness"]["makespan"], rel=1e-6)
    assert summary.to_json()["fairness"] == summary.fairness


def test_other_workloads_have_no_fairness(tmp_path: Path) -> None:
    workload = {"nb_res": 1, "jobs": [
        {"id": "1", "subtime": 0, "res": 1, "profile": "p"}], "profiles": {}}
    assert fairness_reference(workload, tmp_path / "unread.xml", "w.json") is None


def test_run_fairness_against_a_reference_by_hand() -> None:
    # Users a (task 1) and b (tasks 2, 3), both submitted at 0; Fastest-OneCore 10 and 20 s;
    # the baseline (simple fairness + AllCore) ends at 50 s.
    reference = FairnessReference(("a", "b"), {"w0!1": 0, "w0!2": 1, "w0!3": 1},
                                  np.array([0.0, 0.0]), np.array([10.0, 20.0]), 50.0)
    run = run_fairness({"w0!1": 20.0, "w0!2": 30.0, "w0!3": 40.0}, reference)
    assert run is not None
    # a ends at 20 (10 / 20 = 0.5), b at its last task, 40 (20 / 40 = 0.5): equal, fairness 1;
    # the makespan 40 over the baseline's 50
    assert dict(run.normalized) == {"a": 0.5, "b": 0.5}
    assert (run.fairness, run.makespan, run.efficiency) == (1.0, 40.0, 0.8)
    b_later = run_fairness({"w0!1": 20.0, "w0!2": 30.0, "w0!3": 80.0}, reference)
    assert b_later is not None and dict(b_later.normalized) == {"a": 0.5, "b": 0.25}
    # a task that did not complete (None) or is not in the outputs: no metrics
    assert run_fairness({"w0!1": 20.0, "w0!2": None, "w0!3": 40.0}, reference) is None
    assert run_fairness({"w0!1": 20.0, "w0!3": 40.0}, reference) is None


def test_fastest_onecore_with_staggered_arrivals_shares_among_overlapping_users() -> None:
    # Two users of 960 tasks of 10 s, 960 cores. Alone, each would take 1 round (10 s).
    solo = [[10.0], [10.0]]
    # Submitted at 0 and 5 s: alone their references [0, 10) and [5, 15) overlap, so each
    # shares the system with the other: 480 cores, 2 rounds, 20 s; and [0, 20), [5, 25)
    # still overlap (the fixed point). The first arrival is not measured against the whole
    # system for being 5 s early.
    assert fastest_onecore_runtime([960, 960], solo, 960, [0, 5]).tolist() == [20.0, 20.0]
    # Submitted at 0 and 15 s: [0, 10) and [15, 25) never meet: each has every core.
    assert fastest_onecore_runtime([960, 960], solo, 960, [0, 15]).tolist() == [10.0, 10.0]
    # At 0 and 10 s: the first ends as the second is submitted (half-open): no overlap.
    assert fastest_onecore_runtime([960, 960], solo, 960, [0, 10]).tolist() == [10.0, 10.0]
    # Submitted together, at any instant: section 3's share among all users.
    assert fastest_onecore_runtime([960, 960], solo, 960, [7, 7]).tolist() == [20.0, 20.0]


def test_staggered_fairness_by_hand() -> None:
    # The two users submitted at 0 and 5 s (above) end at 25 and 30 s: both ran 25 s
    # against a reference of 20 s, normalised throughput 0.8 each, fairness 1. Measured
    # against the whole system the first would get 10 / 25 = 0.4 and the fairness would be
    # 1 - 0.2 / 0.6 = 2/3 (arrival order, not the schedule).
    fastest = fastest_onecore_runtime([960, 960], [[10.0], [10.0]], 960, [0, 5])
    normalized = normalized_throughput(np.array([25.0, 30.0]) - [0.0, 5.0], fastest)
    assert normalized.tolist() == [0.8, 0.8]
    assert fairness(normalized) == pytest.approx(1.0)


def test_fastest_onecore_overlaps_are_a_least_fixed_point() -> None:
    # Three users of 960 tasks of 10 s, 960 cores, submitted at 0, 8 and 25 s.
    # Alone: [0, 10), [8, 18), [25, 35): u0 and u1 overlap -> 480 cores each, 20 s:
    # [0, 20), [8, 28); now u1 overlaps u2 too -> u1 shares among 3 (320 cores, 3 rounds,
    # 30 s: [8, 38)), u2 among {u1, u2} (480, 20 s: [25, 45)), u0 among {u0, u1} (20 s);
    # u0 [0, 20) and u2 [25, 45) still never meet: the fixed point.
    solo = [[10.0]] * 3
    assert fastest_onecore_runtime([960] * 3, solo, 960, [0, 8, 25]).tolist() == [20, 30, 20]
    # 600 tasks, 300 cores, submitted at 0, 0, 100: the first two share (150 cores, 4 rounds,
    # 40 s) and end by 100, so the third has every core (2 rounds, 20 s). At 0, 0, 30 the
    # third meets the first two ([0, 40) and [30, 50) overlap): a third each, 6 rounds.
    assert fastest_onecore_runtime([600] * 3, solo, 300, [0, 0, 100]).tolist() == [40, 40, 20]
    assert fastest_onecore_runtime([600] * 3, solo, 300, [0, 0, 30]).tolist() == [60, 60, 60]
    assert fastest_onecore_runtime([600] * 3, solo, 300).tolist() == [60, 60, 60]


def test_fastest_onecore_is_self_consistent_on_random_cases() -> None:
    # Whatever the submissions, the run times returned are those of the shares among the
    # users whose returned intervals [submission, submission + run time) overlap.
    rng = np.random.default_rng(11)
    for _ in range(300):
        users = int(rng.integers(1, 7))
        tasks = rng.integers(1, 60, users)
        solo = rng.uniform(1.0, 10.0, (users, int(rng.integers(1, 4)))).round(1)
        cores = int(rng.integers(users, 80))
        submission = rng.integers(0, 60, users).astype(float)  # ties and touching intervals
        fastest = fastest_onecore_runtime(tasks, solo, cores, submission)
        end = submission + fastest
        overlap = (np.eye(users, dtype=bool) | ((submission[:, None] < end[None, :])
                                                & (submission[None, :] < end[:, None])))
        shares = [fair_shares(cores, np.where(overlap[u], tasks, 0))[u] for u in range(users)]
        assert fastest.tolist() == (np.ceil(tasks / shares) * solo.min(axis=1)).tolist()
