"""The files of a run read once (metrics/run_files.py) for the checker, summary and task table.

The run is test_task_table.py's hand-computed case (``easy`` on a 4-node platform, 3 tasks).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_bags import _bag, _row
from test_makespan_goals import HEADER, _hansen_batch, _twin
from test_task_table import write_case

from hetsched.metrics import run_files
from hetsched.metrics.checker import check_files, check_run
from hetsched.metrics.families import family_references
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


def test_releasing_the_document_after_the_references(tmp_path: Path) -> None:
    """What needs the workload's JSON (the bag's MS_LB, Hansen's applications) is worked out
    by the families' references before ``release_document`` drops the JSON; the summary is
    what it is without that step: test_bags.py's bag (MS_LB 18/7 s) and
    test_makespan_goals.py's batch (Psi 0.5, P(batch) 0.25). A reader of the document
    after the release is refused, not served a second read of the file."""
    (tmp_path / "bag").mkdir()
    (tmp_path / "batch").mkdir()
    bag = _bag(tmp_path / "bag", [{"a": 3.0, "b": 2.0}] * 3,
               _row(0, 0, 0, 3) + _row(1, 1, 0, 3) + _row(2, 2, 0, 2))  # fmt: skip
    dropped = '3,w0,p,10.000000,1,-1.000000,0,REJECTED,,,,,,,,,""\n'
    batch = _hansen_batch(tmp_path / "batch", HEADER + _twin(1, "0-1", 60.0)
                          + _twin(2, "2", 60.0) + dropped)  # fmt: skip
    for case in (bag, batch):
        files = RunFiles.of(*case)
        references = family_references(files)
        files.release_document()
        assert "_parsed" not in files.__dict__
        with pytest.raises(ValueError, match="released"):
            _ = files.document
        assert summarize_files(files, references) == summarize(*case)
    assert summarize(*bag).makespan_lower_bound == pytest.approx(18 / 7)
    summary = summarize(*batch)
    assert (summary.robustness_predicted, summary.batch_probability_predicted) == (0.5, 0.25)
