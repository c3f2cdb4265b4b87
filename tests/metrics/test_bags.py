"""MS_LB of a bag-of-tasks workload and makespan / MS_LB in a run's summary (metrics/bags.py,
Tarplee et al. sec. 2.2), on files written by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_makespan_goals import HEADER, PLATFORM_XML

from hetsched.errors import WorkloadError
from hetsched.metrics.bags import bag_lower_bound
from hetsched.metrics.summary import summarize
from hetsched.running.run_cli import summary_table


def _row(job: int, resource: int, start: float, end: float) -> str:
    return (
        f"{job},w0,p,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,{start:.6f},"
        f'{end - start:.6f},{end:.6f},{start:.6f},{end:.6f},1.000000,{resource},0.000000,""\n'
    )


def _bag(tmp_path: Path, etc: list[dict[str, float]], rows: str) -> tuple[Path, Path, Path]:
    """One task per ``etc`` entry, of type t<index of its distinct etc>, all at 0, on the
    platform a (2 nodes), b (1 node)."""
    kinds = {json.dumps(e, sort_keys=True): f"t{n}" for n, e in enumerate(etc)}
    jobs = [{"id": str(n), "subtime": 0.0, "res": 1, "profile": "p", "cores": 1, "etc": e,
             "task_type": kinds[json.dumps(e, sort_keys=True)]} for n, e in enumerate(etc)]
    (tmp_path / "workload.json").write_text(json.dumps(
        {"nb_res": 3, "jobs": jobs, "profiles": {"p": {"type": "delay", "delay": 1.0}}}
    ))  # fmt: skip
    (tmp_path / "platform.xml").write_text(PLATFORM_XML)
    (tmp_path / "out_jobs.csv").write_text(HEADER + rows)
    return tmp_path / "out", tmp_path / "workload.json", tmp_path / "platform.xml"


def test_the_summary_reads_makespan_over_the_lp_bound(tmp_path: Path) -> None:
    """Three tasks of one type, 3 s on a (2 machines), 2 s on b (1 machine): F_a = 3 mu_a / 2,
    F_b = 2 mu_b, mu_a + mu_b = 3: mu_a = 12/7, MS_LB = 18/7 s; the run puts two on a and
    one on b, makespan 3 s: ratio 7/6."""
    etc = [{"a": 3.0, "b": 2.0}] * 3
    summary = summarize(*_bag(tmp_path, etc, _row(0, 0, 0, 3) + _row(1, 1, 0, 3)
                                        + _row(2, 2, 0, 2)))  # fmt: skip
    assert summary.makespan_lower_bound == pytest.approx(18 / 7)
    assert summary.makespan_ratio == pytest.approx(7 / 6)
    table = summary_table(summary)
    assert "makespan lower bound MS_LB (s)" in table and "1.16667" in table
    assert summary.makespan_goal is None and "Psi" not in table


def test_a_special_purpose_machine_bounds_only_the_types_it_runs() -> None:
    """Type t0 runs on a only (absent from b: infinite ETC), t1 on both: two t0 tasks of 4 s
    fill a's 2 machines to 4 s; t1 (1 s on a, 4 s on b) then splits: F_a = (8 + mu_a) / 2 =
    F_b = 4 (1 - mu_a) gives mu_a = 0 and MS_LB = 4 s (b alone takes it in 4 s)."""
    jobs = [{"id": str(n), "subtime": 0.0, "res": 1, "task_type": t, "etc": e}
            for n, (t, e) in enumerate([("t0", {"a": 4.0}), ("t0", {"a": 4.0}),
                                        ("t1", {"a": 1.0, "b": 4.0})])]
    assert bag_lower_bound(jobs, ("a", "a", "b")) == pytest.approx(4.0)
    changed = [*jobs[1:], {**jobs[2], "etc": {"a": 2.0}}]
    with pytest.raises(WorkloadError, match=r"w\.json: job 2: its etc differs from the other"):
        bag_lower_bound(changed, ("a", "a", "b"), "w.json")
    assert bag_lower_bound([{**jobs[0], "subtime": 5.0}, jobs[1]], ("a", "a", "b")) is None
