"""The thin scheduler classes through pybatsim's own machinery, and ``hetsched serve``/``list``.

- every heuristic of the registry has its file in ``schedulers/`` and loads
  through pybatsim's ``instanciate_scheduler`` by relative and absolute path;
- no file of ``schedulers/`` shadows a module (pybatsim puts the folder on
  ``sys.path`` while it loads a scheduler);
- the real ``pybatsim`` launcher and ``hetsched serve`` run in a subprocess
  over a real ZeroMQ socket; the test plays Batsim 4.2.1 (a REQ socket) with
  hand-written messages and checks every reply.

Platform of the socket tests: cluster ``fast`` = resources 0-1 (4 cores per
node, 2e9 flop/s per core at P-state 0), cluster ``slow`` = resources 2-4
(8 cores per node, 1e9 flop/s).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from batsim.tools.launcher import instanciate_scheduler
from batsim_peer import free_port, scheduler_peer
from twin_messages import twin_events

from hetsched.cli import main
from hetsched.heuristics import registry
from hetsched.schedulers import generated
from hetsched.schedulers.adapter import HetschedScheduler
from hetsched.schedulers.serve_cli import SCHEDULER_MODULES, scheduler_class

ROOT = Path(__file__).resolve().parents[2]
SCHEDULERS = ROOT / "schedulers"
BIN = Path(sys.executable).parent


@pytest.fixture
def clean_import_state() -> Iterator[None]:
    """pybatsim's launcher may register our folder as the top-level package ``schedulers``
    (shadowing pybatsim's own) and edits sys.path: undo both after the test."""
    path = list(sys.path)
    before = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "schedulers"}
    yield
    sys.path[:] = path
    for name in [k for k in sys.modules if k.split(".")[0] == "schedulers"]:
        del sys.modules[name]
    sys.modules.update(before)


def test_one_scheduler_file_per_heuristic() -> None:
    assert list(SCHEDULER_MODULES) == list(registry.HEURISTICS)
    for name, module in SCHEDULER_MODULES.items():
        cls = scheduler_class(name)
        assert cls.__name__ == module[0].upper() + module[1:]
        assert cls.heuristic_name == name
        assert (SCHEDULERS / f"{module}.py").is_file()


def test_scheduler_files_are_generated_from_the_registry() -> None:
    """Each file is exactly what `python -m hetsched.schedulers.generated` writes, and the
    only other file of schedulers/ is the generic scheduler (no stale scheduler file)."""
    expected = generated.expected_files()
    for name, text in expected.items():
        assert (SCHEDULERS / name).read_text() == text, (
            f"schedulers/{name} is stale: run python -m hetsched.schedulers.generated"
        )
    assert {p.name for p in SCHEDULERS.glob("*.py")} == {"anyHeuristic.py"} | set(expected)


@pytest.mark.parametrize("name", list(SCHEDULER_MODULES))
@pytest.mark.parametrize("relative", [True, False])
def test_pybatsim_launcher_loads_each_scheduler_by_path(
    name: str, relative: bool, monkeypatch: pytest.MonkeyPatch, clean_import_state: None
) -> None:
    module = SCHEDULER_MODULES[name]
    if relative:
        monkeypatch.chdir(ROOT)
        path = f"schedulers/{module}.py"
    else:
        path = str(SCHEDULERS / f"{module}.py")
    scheduler = instanciate_scheduler(path, {"period": 60})
    assert isinstance(scheduler, HetschedScheduler)
    assert type(scheduler).__name__ == module[0].upper() + module[1:]
    assert scheduler.heuristic.name == name
    assert scheduler.period == 60.0


def test_no_scheduler_file_shadows_a_module() -> None:
    """pybatsim puts schedulers/ first on sys.path while loading: ``random.py`` there would
    replace the standard library's ``random`` for everything imported meanwhile."""
    for path in SCHEDULERS.glob("*.py"):
        name = path.stem
        if name == "__init__":
            continue
        assert name not in sys.stdlib_module_names, name
        assert importlib.util.find_spec(name) is None, name


def test_list_prints_every_heuristic_with_its_origin_and_paper(
    capsys: pytest.CaptureFixture,
) -> None:
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == registry.names()
    for line, name in zip(lines, registry.names(), strict=True):
        cls = registry.heuristic_class(name)
        assert line.endswith(cls.paper)
        assert f"  {registry.origin(name)}  " in line
        assert (registry.origin(name) == "hetsched") == (name in registry.HEURISTICS)


@pytest.mark.parametrize("inside", [False, True])
def test_the_generic_scheduler_loads_any_heuristic(
    inside: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_import_state: None
) -> None:
    """``anyHeuristic.py`` by pybatsim's launcher, from the root and from inside schedulers/
    (where a file named ``hetsched.py`` would be imported as the package ``hetsched``), told a
    built-in name or a file reference, options passed to the heuristic."""
    (tmp_path / "mine.py").write_text(
        "from hetsched.heuristics.baselines.backfilling import EasyBackfilling as Mine\n"
    )
    monkeypatch.chdir(SCHEDULERS if inside else ROOT)
    path = "anyHeuristic.py" if inside else "schedulers/anyHeuristic.py"
    for name in ("easy", f"{tmp_path / 'mine.py'}:Mine"):
        scheduler = instanciate_scheduler(path, {"heuristic": name, "textbook": True})
        assert type(scheduler).__name__ == "AnyHeuristic"
        assert scheduler.heuristic.name == "easy" and scheduler.heuristic.textbook
    with pytest.raises(ValueError, match="option heuristic is required"):
        instanciate_scheduler(path, {})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("{nope", "option -o: invalid JSON"),
        ("[1]", "option -o: expected a JSON object"),
        ('{"speed": 1}', "unknown option 'speed' for heuristic fcfs"),
    ],
)
def test_serve_refuses_bad_options(
    options: str, message: str, capsys: pytest.CaptureFixture
) -> None:
    assert main(["serve", "fcfs", "-s", "tcp://127.0.0.1:1", "-o", options]) == 2
    assert message in capsys.readouterr().err


# --------------------------------------------------------------- real sockets
def _props(cluster: str, cores: int, speeds: str, watts: str, index: int) -> dict[str, str]:
    return {
        "role": "compute_node", "cluster": cluster, "node_type": f"{cluster}-{cores}c",
        "cores_per_node": str(cores), "node_index": str(index), "speed_per_pstate": speeds,
        "wattage_per_state": watts, "wattage_off": "5.0",
    }


def _begins() -> dict[str, Any]:
    resources = [
        {"id": i, "name": f"fast-{i}", "state": "idle", "zone_properties": {},
         "properties": _props("fast", 4, "2000000000.0", "90.0:180.0", i)}
        for i in (0, 1)
    ] + [
        {"id": i, "name": f"slow-{i - 2}", "state": "idle", "zone_properties": {},
         "properties": _props("slow", 8, "1000000000.0", "50.0:90.0", i - 2)}
        for i in (2, 3, 4)
    ]
    config = {
        "redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379,
        "redis-prefix": "default", "profiles-forwarded-on-submission": False,
        "dynamic-jobs-enabled": True, "dynamic-jobs-acknowledged": False,
        "profile-reuse-enabled": False, "sched-config": "", "forward-unknown-events": False,
    }
    data = {
        "nb_resources": 5, "nb_compute_resources": 5, "nb_storage_resources": 0,
        "allow_compute_sharing": False, "allow_storage_sharing": True, "config": config,
        "compute_resources": resources, "storage_resources": [],
        "workloads": {"w0": "/tmp/w0.json"},
        "profiles": {"w0": {"d": {"type": "delay", "delay": 10.0}}},
    }
    return {"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": data}]}


def _job(now: float, job_id: str, **fields: Any) -> dict[str, Any]:
    job = {"id": job_id, "subtime": now, "walltime": 100.0, "res": 1, "profile": "d", **fields}
    return {"timestamp": now, "type": "JOB_SUBMITTED", "data": {"job_id": job_id, "job": job}}


def _completed(now: float, twin: str, alloc: str) -> dict[str, Any]:
    return {"timestamp": now, "type": "JOB_COMPLETED", "data": {
        "job_id": twin, "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": alloc}}


NO_MORE_JOBS = {"type": "NOTIFY", "data": {"type": "no_more_static_job_to_submit"}}
FINISHED = {"type": "NOTIFY", "data": {"type": "registration_finished"}}


def _play_batsim(
    command: list[str], port: int, exchanges: list[tuple[dict, list[dict]]]
) -> subprocess.CompletedProcess:
    """Run ``command`` (a scheduler bound to ``port``), play Batsim: send each message and
    compare the reply's events; return the finished process."""
    with scheduler_peer(command, port, timeout=60) as (process, req):
        for message, expected in exchanges:
            req.send_string(json.dumps(message))
            reply = json.loads(req.recv_string())
            assert reply["now"] == message["now"]
            assert reply["events"] == expected, f"reply to {message['events']}"
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def _at(now: float, *events: dict[str, Any]) -> dict[str, Any]:
    return {"now": now, "events": [{"timestamp": now, **e} for e in events]}


@pytest.mark.parametrize(
    ("path", "options"),
    [
        (str(SCHEDULERS / "maxVpr.py"), {}),
        ("schedulers/maxVpr.py", {}),
        ("schedulers/anyHeuristic.py", {"heuristic": "max-vpr"}),
    ],
)
def test_pybatsim_launcher_runs_max_vpr_over_zeromq(path: str, options: dict[str, str]) -> None:
    """Max VPR (Khemka 3.3), two tasks at 0, value / (ETC x NC) per choice:

    w0!1: 8 cores, ETC fast 10 s / slow 30 s, value 100 until 100 s.
      fast: 2 nodes, NC 8, completes at 10 -> 100 / (10 x 8) = 1.25
      slow: 1 node,  NC 8, completes at 30 -> 100 / (30 x 8) = 0.417
    w0!2: 24 cores, ETC fast 20 s / slow 15 s, value 60 until 100 s.
      fast: needs 6 nodes, has 2 -> cannot run there
      slow: 3 nodes, NC 24, completes at 15 -> 60 / (15 x 24) = 0.167
    Best first: w0!1 on fast nodes 0-1 now (cpu 10 s x 2e9 = 2e10), then w0!2 on
    slow nodes 2-4 now (cpu 15 s x 1e9 = 1.5e10); nothing left: registration_finished.
    The scheduler file is given as an absolute path and relative to the repository root, and
    the generic one, told the heuristic by its option.
    """
    port = free_port()
    value = {"final": 0.0, "soft_deadline": 100.0, "hard_deadline": 200.0}
    jobs = [
        _job(0.0, "w0!1", cores=8, etc={"fast": 10.0, "slow": 30.0},
             value={"start": 100.0, **value}),
        _job(0.0, "w0!2", res=3, cores=24, etc={"fast": 20.0, "slow": 15.0},
             value={"start": 60.0, **value}),
    ]
    command = [str(BIN / "pybatsim"), path,
               "-s", f"tcp://127.0.0.1:{port}", "-o", json.dumps({"period": None, **options})]
    run = _play_batsim(command, port, [
        (_begins(), []),
        ({"now": 0.0, "events": [*jobs, {"timestamp": 0.0, **NO_MORE_JOBS}]},
         [*twin_events(0.0, "w0!1", "0-1", 2, 2e10), *twin_events(0.0, "w0!2", "2-4", 3, 1.5e10),
          {"timestamp": 0.0, **FINISHED}]),
        ({"now": 10.0, "events": [_completed(10.0, "hetsched!w0.1", "0-1")]}, []),
        ({"now": 15.0, "events": [_completed(15.0, "hetsched!w0.2", "2-4")]}, []),
        (_at(15.0, {"type": "SIMULATION_ENDS", "data": {}}), []),
    ])
    assert f"Scheduler: {Path(path).stem[0].upper()}{Path(path).stem[1:]}" in run.stdout


@pytest.mark.parametrize("reference", [False, True])
def test_hetsched_serve_runs_fcfs_over_zeromq(tmp_path: Path, reference: bool) -> None:
    """FCFS (Machovec III.D; cluster = earliest start, ties to the first cluster):

    at 0: w0!1 (8 cores) fits now on fast (2 nodes, 10 s, cpu 2e10);
          w0!2 (24 cores) fits now on slow only (3 nodes, 30 s, cpu 3e10);
    at 5: w0!3 (8 cores) cannot start now (fast busy to 10, slow to 30): nothing;
    at 10: w0!1's twin completes; w0!3 starts on fast nodes 0-1 (10 s, cpu 2e10) and,
           the workload being exhausted since 5, registration_finished follows.
    The mapping-event latencies (one row per heuristic call: 0, 5, 10) are exported. Served by
    name, and as a class of a file of one's own (``path/to/file.py:ClassName``).
    """
    name = "fcfs"
    if reference:
        (tmp_path / "mine.py").write_text(
            "from hetsched.heuristics.baselines.backfilling import Fcfs as MyFcfs\n"
        )
        name = f"{tmp_path / 'mine.py'}:MyFcfs"
    port = free_port()
    etc = {"fast": 10.0, "slow": 30.0}
    prefix = tmp_path / "fcfs"
    command = [str(BIN / "hetsched"), "serve", name, "-s", f"tcp://127.0.0.1:{port}",
               "-o", json.dumps({"export_prefix": str(prefix)})]
    _play_batsim(command, port, [
        (_begins(), []),
        ({"now": 0.0, "events": [_job(0.0, "w0!1", cores=8, etc=etc),
                                 _job(0.0, "w0!2", res=3, cores=24, etc=etc)]},
         [*twin_events(0.0, "w0!1", "0-1", 2, 2e10), *twin_events(0.0, "w0!2", "2-4", 3, 3e10)]),
        ({"now": 5.0, "events": [_job(5.0, "w0!3", cores=8, etc=etc),
                                 {"timestamp": 5.0, **NO_MORE_JOBS}]}, []),
        ({"now": 10.0, "events": [_completed(10.0, "hetsched!w0.1", "0-1")]},
         [*twin_events(10.0, "w0!3", "0-1", 2, 2e10), {"timestamp": 10.0, **FINISHED}]),
        ({"now": 20.0, "events": [_completed(20.0, "hetsched!w0.3", "0-1")]}, []),
        ({"now": 30.0, "events": [_completed(30.0, "hetsched!w0.2", "2-4")]}, []),
        (_at(30.0, {"type": "SIMULATION_ENDS", "data": {}}), []),
    ])
    rows = (tmp_path / "fcfs_mapping_events.csv").read_text().splitlines()
    assert rows[0] == "time,nb_mappable,nb_decisions,seconds"
    assert [row.rsplit(",", 1)[0] for row in rows[1:]] == ["0.0,2,2", "5.0,1,0", "10.0,1,1"]
