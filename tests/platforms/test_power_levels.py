"""Per-task-type power on Batsim (platforms/power_levels.py; Machovec et al. 2017, sec. II.B:
a task's energy is its type's APC on the chosen cluster and P-state x its execution time).

The platform written from a workload carries one host P-state per (task type, P-state); the
execution twin sets the task's level and the embedded engine (SimGrid's host energy model, as
Batsim 4.2.1 charges it) charges it: checked on a hand-computed case of three tasks and on a
generated Machovec day, each twin's ``consumed_energy`` in ``out_jobs.csv`` against
``power[c][p] x time`` and the day's total in ``out_consumed_energy.csv``."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from hetsched.cli import main
from hetsched.core.mapping import MappingEvent
from hetsched.core.state import TaskState
from hetsched.engine.platform import load_platform
from hetsched.engine.simulation import simulate
from hetsched.errors import WorkloadError
from hetsched.heuristics.energy_budget import ENERGY_MARGIN, EnergyLedger
from hetsched.heuristics.utility.maxutility import MaxUpe, MaxUpePh
from hetsched.metrics.annotations import read_workload_info
from hetsched.metrics.checker import check_run
from hetsched.metrics.energy_trace import energy_between
from hetsched.metrics.output_files import read_consumed_energy
from hetsched.platforms.model import ClusterSpec, PlatformSpec, PowerLevel, PStateSpec, SpecError
from hetsched.platforms.power_levels import with_power_levels
from hetsched.platforms.presets import generate as generate_platform
from hetsched.platforms.properties import clusters_from_compute_resources
from hetsched.platforms.simgrid_xml import read_platform, write_platform
from hetsched.schedulers.adapter import HetschedScheduler
from hetsched.validation.preflight import preflight
from hetsched.workloads.batsim_workload import load_workload, write_workload
from hetsched.workloads.gen_common import TaskRecord, build_workload
from hetsched.workloads.gen_machovec import (
    POWER_SCALING_FACTORS,
    UtilityClass,
    draw_task_types,
    utility_json,
)
from hetsched.workloads.generators import generate as generate_workload

# One cluster of three 8-core nodes; the cluster's own node power (what SimGrid charged
# before power levels): P-state 0 100 W, P-state 1 50 W, no idle power.
HAND = PlatformSpec((ClusterSpec("a", 3, 8, (PStateSpec(1e9, 0.0, 100.0),
                                              PStateSpec(5e8, 0.0, 50.0))),), name="hand")
FLAT = utility_json(5.0, 0.01, 0, UtilityClass(((0.0, 1.0, 1.0),)))


def _task(subtime: float, cores: int, task_type: str, etc: list[float],
          power: list[float]) -> TaskRecord:
    return TaskRecord(subtime, cores, {"a": etc[0]}, {
        "task_type": task_type, "etc_pstate": {"a": etc}, "power": {"a": power},
        "utility": FLAT})


def hand_case(folder: Path) -> tuple[Path, Path]:
    """Three tasks, APC x time by hand (watts of all the task's nodes x seconds):

    * t0, type g00, 1 node: P-state 0 120 W x 100 s = 12,000 J, P-state 1 100 W x 150 s =
      15,000 J (the cluster's node power would give 10,000 and 7,500 J: the other choice);
    * t1, type g01, 2 nodes: 120 W x 200 s = 24,000 J, 60 W x 240 s = 14,400 J;
    * t2, type g00 again, arrives at 10 s when every node is taken: after t0, at 100 s,
      12,000 J at P-state 0, on t0's node, which is already at g00's level.
    """
    folder.mkdir(parents=True, exist_ok=True)
    tasks = [_task(0.0, 8, "g00", [100.0, 150.0], [120.0, 100.0]),
             _task(0.0, 16, "g01", [200.0, 240.0], [120.0, 60.0]),
             _task(10.0, 8, "g00", [100.0, 150.0], [120.0, 100.0])]
    workload = folder / "workload.json"
    write_workload(build_workload(tasks, HAND.clusters, {"generator": "hand"}), workload)
    platform = folder / "platform.xml"
    write_platform(with_power_levels(HAND, load_workload(workload), str(workload)), platform)
    return platform, workload


def run(heuristic: MaxUpe, platform: Path, workload: Path, prefix: Path,
        period: float | None = None) -> None:
    options: dict[str, object] = {"export_prefix": str(prefix)}
    if period is not None:
        options["period"] = period
    scheduler = HetschedScheduler(options, heuristic=heuristic)
    simulate(platform, [workload], scheduler, str(prefix), energy=True, dynamic_jobs=True)


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as stream:
        return list(csv.DictReader(stream))


def twin_energy(prefix: Path) -> dict[str, float]:
    """Joules the engine charged each task's execution twin (out_jobs.csv)."""
    return {"w0!" + row["job_id"].split(".", 1)[1]: float(row["consumed_energy"])
            for row in rows(Path(f"{prefix}_jobs.csv")) if row["workload_name"] == "hetsched"}


def test_simgrid_charges_each_task_its_types_apc_by_hand(tmp_path: Path) -> None:
    platform, workload = hand_case(tmp_path)
    prefix = tmp_path / "out"
    run(MaxUpe(), platform, workload, prefix)
    tasks = {row["task_id"]: row for row in rows(Path(f"{prefix}_tasks.csv"))}
    assert {t: (row["pstate"], row["start"]) for t, row in tasks.items()} == {
        "w0!0": ("0", "0.0"), "w0!1": ("1", "0.0"), "w0!2": ("0", "100.0")}
    assert twin_energy(prefix) == pytest.approx({"w0!0": 12000.0, "w0!1": 14400.0,
                                                 "w0!2": 12000.0}, rel=1e-9)
    consumed = read_consumed_energy(Path(f"{prefix}_consumed_energy.csv"))
    assert consumed[-1].energy == pytest.approx(38400.0, rel=1e-9)
    # Host P-states of cluster a: 0-1 DVFS, 2-3 g00's level, 4-5 g01's. t2 reuses node 0.
    changes = [(row["time"], row["machine_id"], row["new_pstate"])
               for row in rows(Path(f"{prefix}_pstate_changes.csv"))]
    assert ("0", "0", "2") in changes and ("0", "1-2", "5") in changes
    assert not [c for c in changes if c[0] == "100"]


def test_without_levels_the_same_tasks_are_charged_the_clusters_node_power(
    tmp_path: Path
) -> None:
    """The contrast: on the platform without levels Max UPE plans and SimGrid charges the
    node power, 50 W x 150 s for t0 at P-state 1."""
    _, workload = hand_case(tmp_path)
    platform = tmp_path / "flat.xml"
    write_platform(HAND, platform)
    prefix = tmp_path / "flat"
    run(MaxUpe(), platform, workload, prefix)
    assert twin_energy(prefix)["w0!0"] == pytest.approx(7500.0, rel=1e-9)


def generated_day(folder: Path, budget: float | None = None) -> tuple[Path, Path, dict]:
    """A Machovec day of 60 tasks on 1,000 cores (seed 3), its platform written with its
    power levels, ``budget`` in the workload."""
    folder.mkdir(parents=True, exist_ok=True)
    spec = generate_platform("machovec", 3, cores=1000)
    document = generate_workload("machovec", 3, spec.clusters, tasks_per_day=60.0)
    document["hetsched"]["energy_budget"] = budget  # type: ignore[index]
    workload = folder / "workload.json"
    write_workload(document, workload)
    platform = folder / "platform.xml"
    write_platform(with_power_levels(spec, load_workload(workload), str(workload)), platform)
    return platform, workload, document


def test_a_generated_machovec_day_is_charged_its_plan_task_by_task(tmp_path: Path) -> None:
    """Every task's twin is charged ``power[c][p] x (planned end - planned start)`` (the
    plan, out_tasks.csv) to SimGrid's microsecond task ends; the day's total is their sum."""
    platform, workload, document = generated_day(tmp_path)
    prefix = tmp_path / "out"
    run(MaxUpePh(), platform, workload, prefix, period=600.0)
    power = {f"w0!{job['id']}": job["power"] for job in document["jobs"]}  # type: ignore
    charged = twin_energy(prefix)
    planned = {}
    for row in rows(Path(f"{prefix}_tasks.csv")):
        if row["state"] == "done":
            watts = power[row["task_id"]][row["cluster"]][int(row["pstate"])]
            planned[row["task_id"]] = watts * (float(row["planned_end"])
                                               - float(row["planned_start"]))
    assert len(planned) > 20
    assert charged == pytest.approx(planned, rel=1e-6)
    total = read_consumed_energy(Path(f"{prefix}_consumed_energy.csv"))[-1].energy
    assert total == pytest.approx(sum(planned.values()), rel=1e-6)


class LedgerRecorder:
    """Wraps a heuristic's ``map``: at each mapping event, the ledger's planned day total
    (budget - energy remaining: spent + committed, idle power 0) and the tasks it covers
    (started, reserved or done)."""

    def __init__(self, heuristic: MaxUpe) -> None:
        self.map = heuristic.map
        self.plans: list[tuple[float, float, frozenset[str]]] = []
        heuristic.map = self.record  # type: ignore[method-assign]

    def record(self, event: MappingEvent) -> list:
        ledger = EnergyLedger.at(event)
        budget = event.system.energy_budget
        assert ledger is not None and budget is not None
        booked = frozenset(t for t, r in event.system.tasks.items() if r.state in (
            TaskState.RUNNING, TaskState.RESERVED, TaskState.DONE))
        self.plans.append((event.time, budget * (1 - ENERGY_MARGIN) - ledger.remaining, booked))
        return self.map(event)


@pytest.mark.parametrize("energy_filter", ["none", "per-resource"])
def test_the_ledger_plans_the_apc_a_budget_holds(tmp_path: Path, energy_filter: str) -> None:
    """Under half of what Max UPE-PH drew unconstrained in the measured day: at every mapping
    event the ledger's planned day total is what SimGrid charged, inside the window, to the
    tasks started, reserved or done by then (each at its type's level); the day stays within
    the budget and the checker passes the run."""
    platform, workload, _ = generated_day(tmp_path / "free")
    run(MaxUpePh(), platform, workload, tmp_path / "free" / "out", period=600.0)
    window = read_workload_info(workload).measure_window
    assert window is not None
    free = energy_between(read_consumed_energy(tmp_path / "free" / "out_consumed_energy.csv"),
                          *window)
    budget = 0.5 * free
    platform, workload, _ = generated_day(tmp_path / "budget", budget)
    prefix = tmp_path / "budget" / "out"
    heuristic = MaxUpePh(energy_filter=energy_filter)
    recorder = LedgerRecorder(heuristic)
    run(heuristic, platform, workload, prefix, period=600.0)
    inside = {}
    for row in rows(Path(f"{prefix}_jobs.csv")):
        if row["workload_name"] == "hetsched":
            start, end = float(row["starting_time"]), float(row["finish_time"])
            share = max(0.0, min(end, window[1]) - max(start, window[0])) / (end - start)
            inside["w0!" + row["job_id"].split(".", 1)[1]] = float(row["consumed_energy"]) * share
    plans = [plan for plan in recorder.plans if plan[2]]
    assert len(plans) > 10
    for time, planned, booked in plans:
        assert planned == pytest.approx(sum(inside[t] for t in booked), rel=1e-6), time
    used = energy_between(read_consumed_energy(Path(f"{prefix}_consumed_energy.csv")), *window)
    assert used <= budget
    assert "energy-budget" in check_run(prefix, workload, platform).rules


def test_power_levels_round_trip_through_the_xml_and_simulation_begins(tmp_path: Path) -> None:
    platform, _ = hand_case(tmp_path)
    spec = read_platform(platform)
    assert spec.clusters[0].power_levels == (PowerLevel("g00", (120.0, 100.0)),
                                             PowerLevel("g01", (60.0, 30.0)))
    write_platform(spec, tmp_path / "again.xml")
    assert (tmp_path / "again.xml").read_bytes() == platform.read_bytes()
    [cluster] = clusters_from_compute_resources(load_platform(platform).compute_resources())
    assert len(cluster.pstates) == 2 and len(cluster.host_pstates) == 6
    assert cluster.busy_energy(1, 2, 240.0, "g01") == 14400.0
    with pytest.raises(ValueError, match="cluster a has no power level for task type None"):
        cluster.busy_energy(1, 2, 240.0)  # a task without a type: refused, not the DVFS power


def test_a_platform_without_a_types_level_is_refused_naming_cluster_and_type(
    tmp_path: Path
) -> None:
    platform, workload = hand_case(tmp_path)
    spec = read_platform(platform)
    [cluster] = spec.clusters
    missing = dataclasses.replace(cluster, power_levels=cluster.power_levels[:1])
    write_platform(dataclasses.replace(spec, clusters=(missing,)), platform, force=True)
    with pytest.raises(WorkloadError, match=r"job '1' \(jobs\[1\]\): field 'task_type':"
                       r" cluster a has no power level for task type 'g01'"):
        preflight(workload, platform)


def test_a_platform_written_from_another_day_is_refused(tmp_path: Path) -> None:
    """Levels of the same type names but other watts (another day's platform): preflight
    compares each job's power per node with its type's level."""
    platform, workload = hand_case(tmp_path)
    document = json.loads(workload.read_text())
    document["jobs"][1]["power"]["a"] = [120.0, 62.0]
    write_workload(document, workload, force=True)
    with pytest.raises(WorkloadError, match=r"job '1' .*'power'\['a'\]: \[60.0, 31.0\] W per"
                       r" node, the power level of task type 'g01' .* has \[60.0, 30.0\]"):
        preflight(workload, platform)


def test_workloads_the_levels_cannot_come_from_are_refused(tmp_path: Path) -> None:
    _, workload = hand_case(tmp_path)
    document = json.loads(workload.read_text())
    document["jobs"][2]["power"]["a"] = [130.0, 100.0]
    disagree = tmp_path / "disagree.json"
    write_workload(document, disagree)
    with pytest.raises(WorkloadError, match=r"job '2' .*'power'\['a'\]: \[130.0, 100.0\] W per"
                       r" node, job '0' of the same task type 'g00' has \[120.0, 100.0\]"):
        with_power_levels(HAND, load_workload(disagree), str(disagree))
    for job in document["jobs"]:
        del job["power"]
    none = tmp_path / "none.json"
    write_workload(document, none)
    with pytest.raises(WorkloadError, match="no job has a 'power' annotation"):
        with_power_levels(HAND, load_workload(none), str(none))
    with pytest.raises(SpecError, match=r"power_levels\[0\].watts: task type 'g00': 1"
                       r" wattage\(s\) for 2 P-state\(s\)"):
        ClusterSpec("a", 1, 8, HAND.clusters[0].pstates,
                    power_levels=(PowerLevel("g00", (1.0,)),))


def test_platform_generate_with_a_workload(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """``hetsched platform generate --preset machovec --workload W``: the same platform as
    without, plus one level per task type of W on each cluster it can run on."""
    monkeypatch.chdir(tmp_path)
    assert main(["platform", "generate", "--preset", "machovec", "--seed", "2", "--option",
                 "cores=1000", "-o", "plain.xml"]) == 0
    assert main(["workload", "generate", "--preset", "machovec", "--seed", "2", "--platform",
                 "plain.xml", "--option", "tasks_per_day=40", "-o", "w.json"]) == 0
    assert main(["platform", "generate", "--preset", "machovec", "--seed", "2", "--option",
                 "cores=1000", "--workload", "w.json", "-o", "apc.xml"]) == 0
    assert "power levels from w.json" in capsys.readouterr().out
    assert main(["platform", "show", "apc.xml"]) == 0
    assert "gp1: " in capsys.readouterr().out.split("total")[1]
    plain, apc = read_platform("plain.xml"), read_platform("apc.xml")
    assert [dataclasses.replace(c, power_levels=()) for c in apc.clusters] == list(plain.clusters)
    jobs = json.loads(Path("w.json").read_text())["jobs"]
    for cluster in apc.clusters:
        types = {job["task_type"] for job in jobs if cluster.name in job["power"]}
        assert [level.task_type for level in cluster.power_levels] == sorted(types)
    preflight("w.json", "apc.xml")


def test_the_randomness_factor_does_not_change_a_tasks_apc_energy() -> None:
    """Sec. IV.B: power scales with (factor x r), time with 1 / (sqrt(factor) x r), so r
    cancels in APC x time: energy / (APC x nodes x single-core time / speedup x sqrt(factor))
    stays near 1 and uncorrelated with r; a node power that ignores the task (the cluster's,
    charged before power levels) x time moves with 1 / r."""
    spec = generate_platform("machovec", 1, cores=100_000)
    types = draw_task_types(np.random.default_rng(5), spec.clusters, 2)
    apc_ratio, time_ratio, r = [], [], []
    for c, cluster in enumerate(spec.clusters):
        ok = types.eligible[:, c]
        nodes = np.array([math.ceil(k / cluster.cores_per_node) for k in types.cores[ok]])
        serial = types.t1[ok, c] / types.speedup[ok, c]
        for k, factor in enumerate(POWER_SCALING_FACTORS):
            energy = types.power[c][ok, k] * types.etc_pstate[c][ok, k]
            apc_ratio.append(energy / (types.apc[ok, c] * nodes * serial * math.sqrt(factor)))
            time_ratio.append(types.etc_pstate[c][ok, k] * math.sqrt(factor) / serial)
            r.append(types.randomness[ok, c])
    apc, times, rs = (np.concatenate(x) for x in (apc_ratio, time_ratio, r))
    assert rs.min() < 0.6 and rs.max() > 1.5  # a wide spread of r
    assert abs(np.corrcoef(rs, apc)[0, 1]) < 0.1 and np.all(np.abs(apc - 1) < 0.25)
    assert np.corrcoef(rs, times)[0, 1] < -0.8  # node power x time: ~1 / r
