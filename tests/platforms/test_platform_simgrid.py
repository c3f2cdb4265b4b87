"""Every preset's XML loaded by SimGrid 3.32 itself (Debian's python3-simgrid).

The venv cannot import SimGrid, so a probe runs under /usr/bin/python3 in a subprocess. It loads
the platform with SimGrid's energy plugin, reports what SimGrid sees of every host (name in
``Engine.all_hosts`` order, core count, speed of each P-state, Idle and AllCores watts of each
P-state as parsed by the energy plugin, properties read through SimGrid's C API), then simulates
10 s in which, for each cluster, node 0 is switched off, node 1 computes on one core at its
slowest P-state and node 2 stays idle, and reports the energy SimGrid charged to them.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hetsched.core.system import Cluster, PState
from hetsched.platforms.model import PlatformSpec
from hetsched.platforms.power_levels import with_power_levels
from hetsched.platforms.presets import PRESETS, generate
from hetsched.platforms.properties import (
    CORE_INDEX,
    POWER_LEVELS,
    PROPERTY_NAMES,
    clusters_from_compute_resources,
    core_pstates,
    host_properties,
)
from hetsched.platforms.simgrid_xml import write_platform
from hetsched.workloads.batsim_workload import load_workload, write_workload
from hetsched.workloads.generators import generate as generate_workload

SYSTEM_PYTHON = "/usr/bin/python3"
DURATION = 10.0

PROBE = r'''
import ctypes
import json
import sys

import simgrid

PROPERTIES = sys.argv[2].split(",")
DURATION = float(sys.argv[3])


def simgrid_library():
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "libsimgrid.so" in line:
                return ctypes.CDLL(line.split()[-1])
    raise RuntimeError("libsimgrid is not loaded")


engine = simgrid.Engine(["probe", "--cfg=plugin:host_energy", "--log=root.thres:warning"])
engine.load_platform(sys.argv[1])
lib = simgrid_library()
lib.sg_host_by_name.restype = ctypes.c_void_p
lib.sg_host_by_name.argtypes = [ctypes.c_char_p]
lib.sg_host_get_property_value.restype = ctypes.c_char_p
lib.sg_host_get_property_value.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
for name in ("sg_host_get_idle_consumption_at", "sg_host_get_wattmax_at"):
    getattr(lib, name).restype = ctypes.c_double
    getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_int]
lib.sg_host_get_consumed_energy.restype = ctypes.c_double
lib.sg_host_get_consumed_energy.argtypes = [ctypes.c_void_p]
lib.sg_host_set_pstate.argtypes = [ctypes.c_void_p, ctypes.c_int]
lib.sg_host_turn_off.argtypes = [ctypes.c_void_p]


def pointer(host):
    return lib.sg_host_by_name(host.name.encode())


hosts = []
chosen = {"off": {}, "busy": {}, "idle": {}}
for host in engine.all_hosts:
    properties = {}
    for key in PROPERTIES:
        value = lib.sg_host_get_property_value(pointer(host), key.encode())
        if value is not None:
            properties[key] = value.decode()
    count = host.pstate_count
    hosts.append({
        "name": host.name,
        "cores": host.core_count,
        "speeds": [host.pstate_speed(i) for i in range(count)],
        "idle_watts": [lib.sg_host_get_idle_consumption_at(pointer(host), i) for i in range(count)],
        "full_watts": [lib.sg_host_get_wattmax_at(pointer(host), i) for i in range(count)],
        "properties": properties,
    })
    if properties.get("role") == "compute_node":
        role = {"0": "off", "1": "busy", "2": "idle"}.get(properties["node_index"])
        if role is not None:
            chosen[role].setdefault(properties["cluster"], host)


def compute(host):
    simgrid.this_actor.execute(host.pstate_speed(host.pstate_count - 1) * DURATION)


def controller():
    for host in chosen["off"].values():
        lib.sg_host_turn_off(pointer(host))
    for host in chosen["busy"].values():
        lib.sg_host_set_pstate(pointer(host), host.pstate_count - 1)
        simgrid.Actor.create("compute", host, compute, host)
    simgrid.this_actor.sleep_for(DURATION)


simgrid.Actor.create("controller", engine.host_by_name("master"), controller)
engine.run()
energy = {}
for role, by_cluster in chosen.items():
    for cluster, host in by_cluster.items():
        energy.setdefault(cluster, {})[role] = lib.sg_host_get_consumed_energy(pointer(host))
json.dump({"clock": engine.clock, "hosts": hosts, "energy": energy}, sys.stdout)
'''


def simgrid_report(path: Path) -> dict:
    """What SimGrid 3.32 reports of the platform file at ``path`` (see the module docstring)."""
    result = subprocess.run(
        [SYSTEM_PYTHON, "-c", PROBE, str(path),
         ",".join((*PROPERTY_NAMES, CORE_INDEX, POWER_LEVELS)),
         str(DURATION)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def check_against_simgrid(platform: PlatformSpec, report: dict) -> None:
    hosts = report["hosts"]
    compute = [host for host in hosts if host["properties"].get("role") == "compute_node"]
    masters = [host for host in hosts if host["properties"].get("role") == "master"]
    assert [host["name"] for host in masters] == ["master"]
    assert len(hosts) == platform.total_hosts + 1
    # Batsim gives compute resources ids in SimGrid's host order (src/machines.cpp).
    resources = [
        {"id": index, "name": host["name"], "state": "idle", "properties": host["properties"],
         "zone_properties": {}}
        for index, host in enumerate(compute)
    ]
    first_id = 0
    expected = []
    for cluster in platform.clusters:
        ids = tuple(range(first_id, first_id + cluster.nb_hosts))
        first_id += cluster.nb_hosts
        per_host = core_pstates(cluster)  # a node's, or a core's share of it (shared nodes)
        dvfs = per_host[:len(cluster.pstates)]  # then the power levels' host P-states
        pstates = tuple(PState(p.speed, p.idle_watts, p.full_watts) for p in dvfs)
        k = cluster.cores_per_node if cluster.shared_nodes else 1
        node_of = tuple(i // k for i in range(cluster.nb_hosts)) if cluster.shared_nodes else ()
        levels = tuple(
            (level.task_type, tuple(PState(p.speed, p.idle_watts, w)
                                    for p, w in zip(dvfs, level.watts, strict=True)))
            for level in cluster.power_levels
        )
        expected.append(Cluster(cluster.name, cluster.cores_per_node, ids, pstates,
                                cluster.node_type, node_of, levels))
        for index, resource_id in enumerate(ids):
            host = compute[resource_id]
            core = index % k if cluster.shared_nodes else None
            assert host["properties"] == host_properties(cluster, index // k, core)
            assert host["cores"] == 1  # one SimGrid core per host (simgrid_xml docstring)
            assert host["speeds"] == [p.speed for p in per_host]
            assert host["idle_watts"] == [p.idle_watts for p in per_host]
            assert host["full_watts"] == [p.full_watts for p in per_host]
    assert clusters_from_compute_resources(resources) == expected
    assert report["clock"] == DURATION
    for cluster in platform.clusters:
        energy = report["energy"][cluster.name]
        slowest = core_pstates(cluster)[-1]
        off_watts = cluster.off_watts / (cluster.cores_per_node if cluster.shared_nodes else 1)
        # SimGrid's host energy model: off -> wattage_off; the one core of the node loaded at
        # the slowest P-state -> Idle + (AllCores - Idle) x 1/1 = AllCores, the full power.
        assert energy["off"] == pytest.approx(DURATION * off_watts, rel=1e-9, abs=1e-9)
        if cluster.nb_nodes > 1:
            busy_watts = slowest.full_watts
            assert energy["busy"] == pytest.approx(DURATION * busy_watts, rel=1e-9)
        if cluster.nb_nodes > 2:
            assert energy["idle"] == pytest.approx(DURATION * core_pstates(cluster)[0].idle_watts,
                                                   rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_simgrid_loads_every_preset(tmp_path: Path, preset: str) -> None:
    platform = generate(preset, seed=1)
    path = write_platform(platform, tmp_path / f"{preset}.xml")
    check_against_simgrid(platform, simgrid_report(path))


def test_simgrid_loads_options_and_power_variants(tmp_path: Path) -> None:
    # idle power > 0 and several P-states (machovec with idle_fraction), plus a trace-sized
    # khemka (KTH-SP2 MaxProcs 100, 20 %) whose clusters may have a single node.
    for name, platform in (
        ("machovec", generate("machovec", 3, idle_fraction=0.3)),
        ("kth", generate("khemka", 2, max_procs=100, fraction=0.2)),
    ):
        path = write_platform(platform, tmp_path / f"{name}.xml")
        check_against_simgrid(platform, simgrid_report(path))


def test_simgrid_loads_power_levels_and_charges_the_last_one(tmp_path: Path) -> None:
    """A machovec platform written with a day's power levels (per-task-type APC): SimGrid
    3.32 reads every host P-state, and a host busy at its last one (the last task type's
    slowest P-state) draws that level's watts."""
    spec = generate("machovec", 3, cores=1000)
    workload = tmp_path / "w.json"
    write_workload(generate_workload("machovec", 3, spec.clusters, tasks_per_day=40.0),
                   workload)
    platform = with_power_levels(spec, load_workload(workload), str(workload))
    assert all(cluster.power_levels for cluster in platform.clusters)
    path = write_platform(platform, tmp_path / "apc.xml")
    check_against_simgrid(platform, simgrid_report(path))


def test_simgrid_host_order_follows_cluster_order(tmp_path: Path) -> None:
    # Hwang's clusters are not in alphabetical order (gene, cheetah, darth, lcloud): the
    # zero-padded cluster position in the host names keeps SimGrid's (hence Batsim's) order.
    platform = generate("hwang", 0)
    report = simgrid_report(write_platform(platform, tmp_path / "hwang.xml"))
    names = [host["name"] for host in report["hosts"]]
    # Shared nodes: one host per core, <cluster>-<node>-<core>.
    assert names[0] == "0-gene-000-0" and names[599] == "0-gene-299-1"
    assert names[600] == "1-cheetah-00-0" and names[-2] == "3-lcloud-49-11"
    assert names[-1] == "master"


PTASK_PROBE = r'''
import json
import sys

import simgrid

engine = simgrid.Engine(["probe", "--cfg=host/model:ptask_L07", "--log=root.thres:warning"])
engine.load_platform(sys.argv[1])
first_two = {}
for host in engine.all_hosts:
    if host.name != "master":
        first_two.setdefault(host.name.split("-")[1], []).append(host)
durations = {}


def run():
    for cluster, hosts in first_two.items():
        pair = hosts[:2]
        flops = [10 * host.speed for host in pair]
        for nbytes in (0.0, 1e9):
            start = engine.clock
            simgrid.this_actor.parallel_execute(pair, flops, [0.0, nbytes, nbytes, 0.0])
            durations.setdefault(cluster, []).append(engine.clock - start)
    mailbox = simgrid.Mailbox.by_name("server")
    simgrid.Actor.create("node", pair[0], lambda: mailbox.put("done", 1_000_000_000))
    start = engine.clock
    mailbox.get()
    durations["message"] = [engine.clock - start]


simgrid.Actor.create("master", engine.host_by_name("master"), run)
engine.run()
json.dump(durations, sys.stdout)
'''


def test_batsim_host_model_runs_parallel_tasks_without_network_cost(tmp_path: Path) -> None:
    # Batsim runs jobs as SimGrid parallel tasks (host/model ptask_L07). On each cluster, a
    # parallel task of 10 s x speed flops per host takes 10 s with or without 1 GB exchanged
    # between the two hosts, and a 1 GB message to the master takes no time: no link, no
    # latency (Vivaldi zone, every host at coordinates 0 0 0).
    platform = generate("hwang", 0)
    path = write_platform(platform, tmp_path / "hwang.xml")
    result = subprocess.run([SYSTEM_PYTHON, "-c", PTASK_PROBE, str(path)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    durations = json.loads(result.stdout)
    assert durations == {"gene": [10.0, 10.0], "cheetah": [10.0, 10.0], "darth": [10.0, 10.0],
                         "lcloud": [10.0, 10.0], "message": [0.0]}
