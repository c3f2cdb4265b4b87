"""Study cells on every executor (studies/cells.py): one process, Dask distributed.

The study is test_khemka.py's small one: one KTH SP2 day on the ``khemka`` preset, two
heuristics (one with an option), two scenarios so that two groups go to two Dask workers.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from shared_traces import TRACE_DIR

from hetsched.studies.cells import (
    Cell,
    CellExecutor,
    ScenarioCells,
    _absolute,
    add_executor_arguments,
    executor_from_args,
    run_tasks,
)
from hetsched.studies.khemka import StudyRun, run_study
from hetsched.studies.scenario import Scenario

KTH = "KTH-SP2-1996-2.1-cln"

needs_trace = pytest.mark.skipif(
    not (TRACE_DIR / f"{KTH}.swf.gz").is_file(), reason="the KTH trace is not available"
)


def comparable(run: StudyRun) -> tuple:
    """A run's results, wall-clock figures aside (mapping-event latencies, wall time)."""
    data = run.summary.to_json()
    for key in [k for k in data if k.startswith("mapping_latency")] + ["wall_seconds"]:
        data.pop(key)
    return (run.environment, run.scenario, run.day, run.heuristic, data)


@needs_trace
def test_a_study_gives_the_same_results_on_dask_and_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    def study(folder: str, executor: CellExecutor) -> list[StudyRun]:
        return run_study(Path(folder), trace=KTH, nb_scenarios=2, trace_dir=TRACE_DIR,
                         heuristics=["easy", "max-vpr:book_zero_value=true"],
                         arrivals=(1, 10**6), executor=executor)

    one = study("one", CellExecutor())
    dask = study("dask", CellExecutor("dask", jobs=2))
    processes = study("procs", CellExecutor(jobs=2))  # cells as tasks of their own
    assert [comparable(r) for r in one] == [
        comparable(r) for r in _renamed(processes, "procs", "one")
    ]
    # the same runs, the folders aside (the local cluster shares our working directory)
    assert [comparable(r) for r in one] == [
        comparable(r) for r in _renamed(dask, "dask", "one")
    ]
    assert len(one) == 4 and one[0].summary.outdir.startswith("one/")
    for path in Path("one").rglob("out_jobset.csv"):  # every output file the same too
        twin = Path("dask") / path.relative_to("one")
        assert twin.read_text() == path.read_text()

    resumed: list[bool] = []
    again = run_study(Path("dask"), trace=KTH, nb_scenarios=2, trace_dir=TRACE_DIR,
                      heuristics=["easy", "max-vpr:book_zero_value=true"],
                      arrivals=(1, 10**6), executor=CellExecutor("dask", jobs=1),
                      on_run=lambda run, done, *_: resumed.append(done))
    assert resumed == [True] * 4  # resumed on Dask as in processes: nothing rerun
    assert [comparable(r) for r in again] == [comparable(r) for r in dask]


def _renamed(runs: list[StudyRun], old: str, new: str) -> list[StudyRun]:
    import dataclasses

    def rename(text: str) -> str:
        return new + text[len(old):] if text.startswith(old + "/") else text

    return [dataclasses.replace(run, summary=dataclasses.replace(
        run.summary, outdir=rename(run.summary.outdir), workload=rename(run.summary.workload),
        platform=rename(run.summary.platform))) for run in runs]


def test_executor_choices_and_errors() -> None:
    assert CellExecutor(jobs=3) == CellExecutor("processes", 3)
    assert CellExecutor(scheduler_address="tcp://h:8786").kind == "dask"
    with pytest.raises(ValueError, match="unknown executor 'ray'"):
        CellExecutor("ray")
    with pytest.raises(ValueError, match="jobs must be >= 1"):
        CellExecutor("dask", jobs=0)
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=1)
    add_executor_arguments(parser)
    args = parser.parse_args(["--scheduler-address", "tcp://10.0.0.1:8786", "--jobs", "4"])
    assert executor_from_args(args) == CellExecutor("dask", 4, "tcp://10.0.0.1:8786", True)
    assert executor_from_args(parser.parse_args([])).kind == "processes"


def test_groups_sent_to_a_remote_cluster_have_absolute_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    scenario = Scenario(KTH, day=100, preset="khemka", seed=1)
    group = ScenarioCells(scenario, Path("s0"), (Cell(("a",), "easy", Path("s0/easy")),),
                          "traces")
    remote = _absolute(group)
    assert remote.folder == tmp_path / "s0" and remote.trace_dir == tmp_path / "traces"
    assert remote.cells[0].outdir == tmp_path / "s0" / "easy"
    assert remote.cells[0].key == ("a",) and remote.scenario == scenario



def test_a_trace_folder_from_the_environment_goes_to_remote_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dask workers do not share the client's environment, so ``HETSCHED_TRACE_DIR``
    set only here must travel with the group, made absolute."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HETSCHED_TRACE_DIR", "traces")
    scenario = Scenario(KTH, day=100, preset="khemka", seed=1)
    group = ScenarioCells(scenario, Path("s0"), (Cell(("a",), "easy", Path("s0/easy")),))
    assert _absolute(group).trace_dir == tmp_path / "traces"
    explicit = ScenarioCells(scenario, Path("s0"), group.cells, "given")
    assert _absolute(explicit).trace_dir == tmp_path / "given"  # --trace-dir wins
    monkeypatch.delenv("HETSCHED_TRACE_DIR")
    assert _absolute(group).trace_dir is None

@needs_trace
def test_a_remote_dask_study_finds_the_trace_folder_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Dask scheduler and a worker started apart, without ``HETSCHED_TRACE_DIR``
    (and an empty trace cache, no trace to find); the study exports it on the client only and
    gives no ``trace_dir``. The worker must read the trace from that folder (it used to try to
    download it: "download of trace ... failed")."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HETSCHED_TRACE_DIR", str(TRACE_DIR))
    environment = {key: value for key, value in os.environ.items()
                   if key != "HETSCHED_TRACE_DIR"}  # fmt: skip
    environment["XDG_CACHE_HOME"] = str(tmp_path / "empty-cache")
    dask = Path(sys.executable).parent / "dask"
    address_file = tmp_path / "scheduler.json"
    logs = (tmp_path / "dask.log").open("w")
    processes = [subprocess.Popen(
        [str(dask), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
         "--scheduler-file", str(address_file)],
        env=environment, stdout=logs, stderr=subprocess.STDOUT, cwd=tmp_path)]  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not address_file.is_file() or not address_file.read_text():
            assert time.monotonic() < deadline, (tmp_path / "dask.log").read_text()
            time.sleep(0.2)
        address = json.loads(address_file.read_text())["address"]
        processes.append(subprocess.Popen(
            [str(dask), "worker", address, "--nthreads", "1", "--nworkers", "1", "--no-nanny",
             "--no-dashboard", "--local-directory", str(tmp_path / "worker")],
            env=environment, stdout=logs, stderr=subprocess.STDOUT, cwd=tmp_path))  # fmt: skip
        runs = run_study(Path("remote"), trace=KTH, nb_scenarios=1, heuristics=["easy"],
                         arrivals=(1, 10**6), executor=CellExecutor(scheduler_address=address))
        assert len(runs) == 1 and runs[0].summary.tasks_completed > 0
        assert Path(runs[0].summary.workload).is_relative_to(tmp_path / "remote")
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(timeout=30)
        logs.close()


ORPHAN_SCRIPT = """
import concurrent.futures, multiprocessing, os, sys, time
from hetsched.studies.cells import exit_with_parent

def work(path):
    with open(path, "w") as stream:
        stream.write(str(os.getpid()))
    time.sleep(60)

if __name__ == "__main__":
    initializer = exit_with_parent if sys.argv[2] == "watch" else None
    initargs = (os.getpid(), 0.1) if initializer else ()
    pool = concurrent.futures.ProcessPoolExecutor(
        1, mp_context=multiprocessing.get_context("spawn"),
        initializer=initializer, initargs=initargs)
    pool.submit(work, sys.argv[1]).result()
"""


def _alive(pid: int) -> bool:
    """``pid`` runs (a zombie, exited but not reaped by its new parent, does not count)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("mode", ["watch", "no-watch"])
def test_workers_end_when_the_study_process_is_killed(tmp_path: Path, mode: str) -> None:
    """A study killed by SIGKILL (no chance to clean up) leaves no pool worker behind; without
    the initializer the worker would sleep its 60 s (the control case)."""
    script, pid_file = tmp_path / "study.py", tmp_path / "worker.pid"
    script.write_text(ORPHAN_SCRIPT)
    errors = tmp_path / "stderr.txt"  # the killed study's leaked-semaphore warning goes there
    with errors.open("w") as stream:
        parent = subprocess.Popen([sys.executable, str(script), str(pid_file), mode],
                                  stderr=stream)
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, f"no worker: {errors.read_text()}"
            time.sleep(0.05)
        worker = int(pid_file.read_text())
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 10
        while _alive(worker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _alive(worker) == (mode == "no-watch")
    finally:
        parent.kill()
        if pid_file.exists() and pid_file.read_text() and _alive(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


class _Prepared:
    """A scenario whose inputs are two named files, prepared at once."""

    def prepare_inputs(self, folder: Path, trace_dir: object = None) -> tuple[Path, Path]:
        return folder / "platform.xml", folder / "workload.json"


def test_each_cell_is_yielded_as_soon_as_it_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    """Off a terminal too, a study's line per cell comes when that cell ends: the first cell
    of a scenario is yielded before the second one runs."""
    from hetsched.studies import cells

    ran: list[str] = []
    monkeypatch.setattr(cells, "run_or_resume",
                        lambda name, *args, **kwargs: (ran.append(name) or f"summary {name}",
                                                       False))
    group = ScenarioCells(_Prepared(), Path("s0"), tuple(
        Cell((name,), name, Path("s0") / name) for name in ("easy", "fcfs")
    ))
    results = cells.run_groups([group])
    cell, summary, resumed = next(results)
    assert (cell.heuristic, summary, resumed, ran) == ("easy", "summary easy", False, ["easy"])
    assert [c.heuristic for c, *_ in results] == ["fcfs"] and ran == ["easy", "fcfs"]


def test_an_interrupted_study_says_what_it_finished(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from hetsched.studies import cells

    def run(name: str, *args: object, **kwargs: object) -> tuple[str, bool]:
        if name == "fcfs":
            raise KeyboardInterrupt
        return f"summary {name}", False

    monkeypatch.setattr(cells, "run_or_resume", run)
    group = ScenarioCells(_Prepared(), Path("s0"), tuple(
        Cell((name,), name, Path("s0") / name) for name in ("easy", "fcfs", "cmq")
    ))
    done = []
    with pytest.raises(KeyboardInterrupt):
        for cell, *_ in cells.run_groups([group], executor=CellExecutor(progress=True)):
            done.append(cell.heuristic)
    assert done == ["easy"]
    assert capsys.readouterr().err == ("interrupted: 1 of 3 cells finished (their runs are"
                                       " kept; the same command resumes from them)\n")


def test_tasks_run_in_this_process_in_order_and_as_each_ends() -> None:
    ran: list[int] = []

    def negate(value: int) -> int:
        ran.append(value)
        return -value

    results = run_tasks(negate, [3, 1, 2])
    assert next(results) == (0, -3) and ran == [3]  # yielded before the next one runs
    assert list(results) == [(1, -1), (2, -2)]
    assert list(run_tasks(negate, [])) == []


@pytest.mark.parametrize("executor", [CellExecutor(jobs=2), CellExecutor("dask", jobs=2)],
                         ids=["processes", "dask"])
def test_tasks_on_workers_give_every_result_once(executor: CellExecutor) -> None:
    """In worker processes or on Dask: each item's result once, with its position, whatever
    the order they end in."""
    items = [-4, 7, -1, 0, 5]
    results = list(run_tasks(abs, items, executor))
    assert sorted(results) == [(0, 4), (1, 7), (2, 1), (3, 0), (4, 5)]


def test_a_failing_task_stops_the_tasks() -> None:
    with pytest.raises(ValueError, match="invalid literal"):
        list(run_tasks(int, ["1", "x", "3"], CellExecutor(jobs=2)))
