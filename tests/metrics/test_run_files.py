"""The files of a run read once (metrics/run_files.py) for the checker, summary and task table.

The run is test_task_table.py's hand-computed case (``easy`` on a 4-node platform, 3 tasks).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_task_table import write_case

from hetsched.metrics import run_files
from hetsched.metrics.checker import check_files, check_run
from hetsched.metrics.run_files import RunFiles
from hetsched.metrics.summary import summarize, summarize_files
from hetsched.metrics.task_table import task_table, task_table_of
from hetsched.running.run import run_heuristic


def counted(calls: Counter[str], name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*arguments: Any, **keywords: Any) -> Any:
        calls[name] += 1
        return function(*arguments, **keywords)

    return wrapper


def test_a_run_reads_its_jobs_workload_and_energy_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: Counter[str] = Counter()
    for name in ("read_jobs", "read_workload", "read_consumed_energy", "account"):
        monkeypatch.setattr(run_files, name, counted(calls, name, getattr(run_files, name)))
    platform, workload = write_case(tmp_path)
    summary = run_heuristic("easy", platform, workload, tmp_path / "easy")
    assert calls == {"read_jobs": 1, "read_workload": 1, "read_consumed_energy": 1, "account": 1}
    assert (summary.tasks_total, summary.tasks_completed, summary.makespan) == (3, 3, 140.0)
    assert (tmp_path / "easy" / "out_jobset.csv").read_text().count("\n") == 4  # header + 3


def test_shared_files_give_what_each_reader_gives_alone(tmp_path: Path) -> None:
    platform, workload = write_case(tmp_path)
    run_heuristic("easy", platform, workload, tmp_path / "easy")
    prefix = tmp_path / "easy" / "out"
    files = RunFiles.of(prefix, workload, platform)
    assert files.output("jobs.csv") == tmp_path / "easy" / "out_jobs.csv"
    assert check_files(files) == check_run(prefix, workload, platform)
    assert summarize_files(files, heuristic="easy") == summarize(prefix, workload, platform,
                                                                 heuristic="easy")  # fmt: skip
    assert task_table_of(files) == task_table(prefix, workload, platform)
    assert files.pstate_changes is not None and files.clusters == ("fast",) * 2 + ("slow",) * 2
