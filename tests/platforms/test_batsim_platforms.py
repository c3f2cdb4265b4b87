"""Batsim's own example platforms (tag v4.2.1, read from a local copy of Batsim's repository,
``HETSCHED_BATSIM_REPO``, never copied here; skipped, saying so, without it) as hetsched sees
them, before and after ``hetsched platform annotate``, and runs on them with Batsim's example
workloads.

Without annotation every platform is one cluster of one-core nodes of unknown speed, in
Batsim's resource order; annotated, its clusters are its groups of identical hosts, the copy
keeps every other byte, and every reader (the scheduler's view of what Batsim forwards, the
embedded engine, the metrics' resource reader, SimGrid itself) reads it the same way. The
baselines (no annotation needed) run to the end on the raw and the annotated files.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from platform_files import batsim_file, without_added_props
from simgrid_probe import SIMGRID, simgrid_hosts

from hetsched.engine.platform import load_platform
from hetsched.engine.simulation import simulate
from hetsched.errors import PlatformError
from hetsched.metrics.resources import resource_clusters
from hetsched.platforms.annotate import WRITTEN, annotate_platform
from hetsched.platforms.properties import DEFAULT_CLUSTER
from hetsched.platforms.view import forwarded_hosts, platform_clusters
from hetsched.running.run import make_scheduler, run_heuristic

ENGINE_PLATFORMS = (
    "cluster512.xml",
    "small_platform.xml",
    "energy_platform_homogeneous_no_net_128.xml",  # starts with a blank line
    "energy_platform_homogeneous_no_net_1.xml",
    "energy_platform_homogeneous.xml",
    "cluster_energy_128.xml",
    "simple_coalloc_platform.xml",
    "properties_example.xml",
)
"""Compute-only example platforms the embedded engine runs."""
REAL_BATSIM_ONLY = ("cluster512_pfs.xml",)  # a storage host
"""Example platforms for real Batsim only (the embedded engine refuses them)."""
CLUSTERS = {
    "cluster512.xml": {"my_cluster_1": (512, 1e9, 0)},
    "small_platform.xml": {"AS0-0": (2, 48.492e6, 0), "AS0-1": (2, 76.296e6, 0)},
    "energy_platform_homogeneous_no_net_128.xml": {"AS0": (128, 100e6, 13)},
    "energy_platform_homogeneous_no_net_1.xml": {"AS0": (1, 100e6, 13)},
    "energy_platform_homogeneous.xml": {"AS0": (4, 100e6, 1)},
    "cluster_energy_128.xml": {"cluster_compute": (128, 100e6, 13)},
    "simple_coalloc_platform.xml": {"AS0-0": (32, 48.492e6, 0), "AS0-1": (2, 76.296e6, 0)},
    "properties_example.xml": {"AS4": (7, 1e9, 0)},
    "cluster512_pfs.xml": {"my_cluster_1": (512, 1e9, 0)},
}
"""What annotate makes of each: cluster -> (nodes, speed of P-state 0, computation
P-states with power; 0 without power), read off the files by hand."""


def _platform(name: str) -> Path:
    return batsim_file(f"platforms/{name}")


@pytest.mark.parametrize("name", ENGINE_PLATFORMS + REAL_BATSIM_ONLY)
def test_raw_platform_is_one_cluster_of_unknown_speed(name: str) -> None:
    path = _platform(name)
    [cluster] = platform_clusters(path)
    nodes = sum(nodes for nodes, _, _ in CLUSTERS[name].values())
    assert (cluster.name, cluster.cores_per_node, cluster.resource_ids) == \
        (DEFAULT_CLUSTER, 1, tuple(range(nodes)))
    assert cluster.speed is None and cluster.pstates == ()
    assert resource_clusters(path) == (DEFAULT_CLUSTER,) * nodes
    if name in ENGINE_PLATFORMS:  # the engine's reader numbers the same hosts the same way
        assert [m.name for m in load_platform(path).machines] == \
            [h.name for h in forwarded_hosts(path)]


@pytest.mark.parametrize("name", ENGINE_PLATFORMS + REAL_BATSIM_ONLY)
def test_annotated_platform_shows_its_groups_of_identical_hosts(
    name: str, tmp_path: Path
) -> None:
    path = _platform(name)
    out = tmp_path / name
    clusters = annotate_platform(path, out)
    assert {c.name: (c.nb_nodes, c.speed, len(c.pstates)) for c in clusters} == CLUSTERS[name]
    assert platform_clusters(out) == clusters
    by_id = {rid: c.name for c in clusters for rid in c.resource_ids}
    assert resource_clusters(out) == tuple(by_id[i] for i in range(len(by_id)))
    hosts = forwarded_hosts(path)
    for cluster in clusters:  # identical hosts in one cluster, the speeds the file gives
        shapes = {(hosts[i].speeds, hosts[i].cores, hosts[i].properties.get("wattage_per_state"))
                  for i in cluster.resource_ids}
        assert len(shapes) == 1
        assert cluster.speed == next(iter(shapes))[0][0]
    assert without_added_props(out.read_bytes()) == path.read_bytes()
    if name in ENGINE_PLATFORMS:
        engine = load_platform(out, energy=all("wattage_per_state" in h.properties
                                               for h in hosts))
        assert [m.speeds for m in engine.machines] == [h.speeds for h in hosts]


@SIMGRID
@pytest.mark.parametrize("name", ["cluster512.xml", "small_platform.xml",
                                  "energy_platform_homogeneous_no_net_128.xml",
                                  "cluster512_pfs.xml"])
def test_simgrid_reads_the_annotated_copy_as_the_original(name: str, tmp_path: Path) -> None:
    path = _platform(name)
    out = tmp_path / name
    annotate_platform(path, out)
    before, after = simgrid_hosts(path), simgrid_hosts(out)
    assert [h["name"] for h in after] == [h["name"] for h in before]
    compute = {h.name for h in forwarded_hosts(path)}
    for old, new in zip(before, after, strict=True):
        assert {k: v for k, v in new.items() if k != "properties"} == \
               {k: v for k, v in old.items() if k != "properties"}
        added = set(new["properties"]) - set(old["properties"])
        assert added == (set(WRITTEN) if old["name"] in compute else set())
        assert all(new["properties"][k] == v for k, v in old["properties"].items())


def test_energy_run_on_a_platform_without_power_is_refused_naming_no_energy(
    tmp_path: Path
) -> None:
    workload = batsim_file("workloads/test_delays.json")
    with pytest.raises(PlatformError, match=r"cluster512\.xml: compute host\(s\) 'a0', 'a1',"
                       r" 'a10' and 509 more have no wattage_per_state property, which an"
                       r" energy run needs \(Batsim -E refuses them\): run with --no-energy"):
        run_heuristic("fcfs", _platform("cluster512.xml"), workload, tmp_path / "run")
    assert not (tmp_path / "run").exists()


def _times(outdir: Path) -> dict[str, tuple[str, str]]:
    """(start, finish) of each original job, through its twin (``hetsched!w0.<id>``)."""
    with (outdir / "out_jobs.csv").open() as stream:
        rows = list(csv.DictReader(stream))
    return {row["job_id"]: (row["starting_time"], row["finish_time"]) for row in rows
            if row["workload_name"] == "hetsched" and row["final_state"] ==
            "COMPLETED_SUCCESSFULLY"}


@pytest.mark.parametrize("heuristic", ["fcfs", "easy", "conservative"])
@pytest.mark.parametrize(("name", "energy"), [
    ("cluster512.xml", False), ("small_platform.xml", False),
    ("energy_platform_homogeneous_no_net_128.xml", True),
])
def test_baselines_run_test_delays_on_raw_and_annotated(
    heuristic: str, name: str, energy: bool, tmp_path: Path
) -> None:
    workload = batsim_file("workloads/test_delays.json")
    path = _platform(name)
    annotated = tmp_path / name
    annotate_platform(path, annotated)
    times = []
    for platform, folder in ((path, "raw"), (annotated, "annotated")):
        summary = run_heuristic(heuristic, platform, workload, tmp_path / folder, energy=energy)
        assert summary.tasks_completed == 10
        times.append(_times(tmp_path / folder))
    assert len(times[0]) == 10
    if len(CLUSTERS[name]) == 1:  # one cluster either way, delay profiles: the same schedule
        assert times[0] == times[1]


@pytest.mark.parametrize("heuristic", ["easy", "fcfs"])
def test_batsim_hpc_workload_runs_to_the_end_on_raw_and_annotated(
    heuristic: str, tmp_path: Path
) -> None:
    # Batsim's 250-job example on its 128-host energy platform, energy on; the embedded
    # engine and the scheduler directly: every job done, the same schedule on both files.
    workload = batsim_file("workloads/example_workload_hpc_seed1_jobs250.json")
    path = _platform("energy_platform_homogeneous_no_net_128.xml")
    annotated = tmp_path / "annotated.xml"
    annotate_platform(path, annotated)
    times = []
    for platform, folder in ((path, "raw"), (annotated, "annotated")):
        (tmp_path / folder).mkdir()
        prefix = tmp_path / folder / "out"
        simulate(platform, [workload], make_scheduler(heuristic, {}, prefix), str(prefix),
                 energy=True, dynamic_jobs=True)
        with (tmp_path / folder / "out_jobs.csv").open() as stream:
            rows = list(csv.DictReader(stream))
        assert sum(row["workload_name"] == "w0" for row in rows) == 250
        times.append({row["job_id"]: (row["starting_time"], row["finish_time"])
                      for row in rows if row["workload_name"] == "hetsched"})
    assert len(times[0]) == 250
    assert times[0] == times[1]


def test_annotated_small_platform_gives_mct_its_two_speeds(tmp_path: Path) -> None:
    # small_platform.xml: Fafard and Jupiter at 76.296 Mf (resources 1, 3), Bourassa and
    # Ginette at 48.492 Mf (0, 2), no power. Three one-host tasks of 762.96 Mflop, no etc:
    # 10 s on the fast hosts, 15.73 s on the slow ones. MCT puts two on the fast hosts, the
    # third on a slow one, and each twin (parallel_homogeneous at the nominal speed) lasts
    # its planned time.
    annotated = tmp_path / "small.xml"
    annotate_platform(_platform("small_platform.xml"), annotated)
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({
        "nb_res": 4,
        "jobs": [{"id": str(i), "subtime": 0, "res": 1, "profile": "p", "walltime": 100}
                 for i in range(3)],
        "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 7.6296e8, "com": 0}},
    }))
    summary = run_heuristic("mct-online", annotated, workload, tmp_path / "run", energy=False)
    assert summary.tasks_completed == 3
    with (tmp_path / "run" / "out_jobs.csv").open() as stream:
        twins = [row for row in csv.DictReader(stream) if row["workload_name"] == "hetsched"]
    runs = sorted((row["allocated_resources"], float(row["execution_time"])) for row in twins)
    assert [resource for resource, _ in runs] in (["0", "1", "3"], ["1", "2", "3"])
    assert [seconds for resource, seconds in runs if resource in ("1", "3")] == [10.0, 10.0]
    [slow] = [seconds for resource, seconds in runs if resource in ("0", "2")]
    assert slow == pytest.approx(7.6296e8 / 48.492e6, abs=1e-6)


def test_stock_scheduler_runs_on_the_blank_line_platform(tmp_path: Path) -> None:
    # energy_platform_homogeneous_no_net_128.xml starts with a blank line, which SimGrid and
    # Batsim accept: so do the checker's and the metrics' readers after the run.
    path = _platform("energy_platform_homogeneous_no_net_128.xml")
    assert path.read_bytes().startswith(b"\n")
    workload = batsim_file("workloads/test_delays.json")
    summary = run_heuristic("pybatsim:easyBackfill", path, workload, tmp_path / "run")
    assert summary.tasks_completed == 10
    assert summary.energy_joules == pytest.approx(128 * 95.0 * 37.0)  # all idle: delay jobs


def test_energy_compares_like_with_like_on_raw_and_annotated(tmp_path: Path) -> None:
    # On the raw 128-host energy platform hetsched's twins are delay jobs (speed unknown),
    # as the stock scheduler's jobs are: SimGrid charges idle power, and the summary's
    # delay_busy figure adds what a computing twin draws. Annotated, the twins compute and
    # SimGrid charges it: the same total either way, for easy and pybatsim's easyBackfill
    # (the same schedule: ten one-host delay jobs, each started at its submission).
    path = _platform("energy_platform_homogeneous_no_net_128.xml")
    annotated = tmp_path / "annotated.xml"
    annotate_platform(path, annotated)
    workload = batsim_file("workloads/test_delays.json")
    raw = run_heuristic("easy", path, workload, tmp_path / "raw")
    stock = run_heuristic("pybatsim:easyBackfill", path, workload, tmp_path / "stock")
    computed = run_heuristic("easy", annotated, workload, tmp_path / "annotated")
    assert raw.energy_joules == stock.energy_joules == pytest.approx(128 * 95.0 * 37.0)
    assert computed.energy_delay_busy_joules == 0.0
    busy = 10 * 10.0 * (190.738 - 95.0)  # ten 10-s jobs, one host each, P-state 0
    assert raw.energy_delay_busy_joules == pytest.approx(busy, rel=1e-9)
    assert stock.energy_delay_busy_joules == pytest.approx(busy, rel=1e-9)
    assert computed.energy_joules == pytest.approx(raw.energy_joules + busy, rel=1e-9)
