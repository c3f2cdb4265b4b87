"""The energy meter (core/energy.py) and the power model's task energy (Cluster.busy_energy):
hand-computed cases, and a real Batsim 4.2.1 run.

The reference run ``dvfs-pstate-cycler`` (shared/data/batsim-reference) ran 60 jobs on two
clusters of 3 P-states, the k-th job at P-state k mod 3, on real Batsim with SimGrid's energy
model: every job's energy is what the power model says. The meter's total is checked against
the embedded engine in tests/schedulers/test_pybatsim_engine.py and tests/core/test_runner.py.
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest
from batsim_reference import REFERENCE_DIR

from hetsched.core.energy_meter import EnergyMeter
from hetsched.core.system import Cluster, PState
from hetsched.engine.platform import load_platform
from hetsched.platforms.properties import clusters_from_compute_resources

C = Cluster("c", 4, (0, 1), (PState(1e9, 50.0, 120.0), PState(5e8, 30.0, 60.0),
                             PState(2.5e8, 20.0, 40.0)))


def test_idle_busy_and_pstates_by_hand() -> None:
    """Over [0, 40]: node 0 idles at P-state 0 for 10 s (50 W: 500 J), switches to P-state 2
    and computes for 20 s (40 W: 800 J), then idles at P-state 2 for 10 s (20 W: 200 J):
    1500 J; node 1 idles at P-state 0 all along: 40 x 50 = 2000 J."""
    meter = EnergyMeter([C])
    meter.set_pstate(0, 2, at=10.0)
    meter.set_busy(0, True, at=10.0)
    meter.set_busy(0, False, at=30.0)
    assert meter.power() == 20.0 + 50.0
    assert meter.consumed(40.0) == pytest.approx(1500.0 + 2000.0)
    assert C.busy_energy(pstate=2, nb_nodes=1, seconds=20.0) == 800.0


def test_energy_in_a_window_by_hand() -> None:
    """Window [15, 35] of the same history: node 0 idles at 50 W until 10, computes at 40 W
    over [10, 30), idles at 20 W after; node 1 idles at 50 W. In [15, 35]: node 0 15 x 40 +
    5 x 20 = 700 J, node 1 20 x 50 = 1000 J. Asked before the window: 0; inside it: the part
    so far; after it: constant. The bound crossed between two updates (15, passed at 30) is
    recorded exactly."""
    meter = EnergyMeter([C], window=(15.0, 35.0))
    meter.set_pstate(0, 2, at=10.0)
    meter.set_busy(0, True, at=10.0)
    assert meter.consumed_in_window(12.0) == 0.0
    assert meter.consumed_in_window(20.0) == pytest.approx(5 * 40.0 + 5 * 50.0)
    meter.set_busy(0, False, at=30.0)
    assert meter.consumed_in_window(30.0) == pytest.approx(15 * 40.0 + 15 * 50.0)
    assert meter.consumed_in_window(35.0) == pytest.approx(1700.0)
    assert meter.consumed_in_window(90.0) == pytest.approx(1700.0)
    meter.set_busy(1, True, at=50.0)  # after the window: no change
    assert meter.consumed_in_window(60.0) == pytest.approx(1700.0)
    assert EnergyMeter([C]).consumed_in_window(10.0) == EnergyMeter([C]).consumed(10.0)
    with pytest.raises(ValueError, match="window"):
        EnergyMeter([C], start=20.0, window=(15.0, 35.0))


def test_bad_calls_are_named() -> None:
    meter = EnergyMeter([C])
    meter.set_busy(1, True, at=5.0)
    with pytest.raises(ValueError, match="time went backwards"):
        meter.set_busy(1, False, at=4.0)
    with pytest.raises(ValueError, match="unknown resource 7"):
        meter.set_busy(7, True, at=6.0)
    with pytest.raises(ValueError, match="cluster c has no P-state 3"):
        meter.set_pstate(0, 3, at=6.0)
    with pytest.raises(ValueError, match="has no P-state power model"):
        EnergyMeter([Cluster("bare", 4, (0,))])


REFERENCE = REFERENCE_DIR / "dvfs-pstate-cycler"


def _rows(name: str) -> list[dict[str, str]]:
    with gzip.open(REFERENCE / name, "rt") as stream:
        return list(csv.DictReader(stream))


def _procset(text: str) -> list[int]:
    ids = []
    for part in text.split():
        first, _, last = part.partition("-")
        ids.extend(range(int(first), int(last or first) + 1))
    return ids


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="shared/data/batsim-reference is absent")
def test_task_energy_estimates_match_a_real_batsim_dvfs_run(tmp_path: Path) -> None:
    """Each job that ran inside one cluster: Batsim charged what the power model says.
    A computing job (parallel_homogeneous) loads its hosts fully: n x full watts of its
    P-state x its time (Cluster.busy_energy, what heuristics plan with); a delay job computes
    nothing, its hosts stay idle: n x idle watts. Jobs spread over both clusters run at the
    slower cluster's pace and load the faster hosts partly: they are not what our schedulers
    do (one cluster per task) and are left out. The P-state of each job comes from
    out_pstate_changes.csv (the scheduler sets it just before starting the job)."""
    platform = tmp_path / "platform.xml"
    platform.write_bytes(gzip.decompress((REFERENCE / "platform.xml.gz").read_bytes()))
    resources = load_platform(platform, energy=True).compute_resources()
    clusters = clusters_from_compute_resources(resources)
    cluster_of = {rid: c for c in clusters for rid in c.resource_ids}
    profiles = json.loads(gzip.decompress((REFERENCE / "workload.json.gz").read_bytes()))
    kinds = {name: p["type"] for name, p in profiles["profiles"].items()}
    changes: dict[int, list[tuple[float, int]]] = {}
    for row in _rows("out_pstate_changes.csv.gz"):
        if int(row["new_pstate"]) >= 0:  # -1 marks the transition
            change = (float(row["time"]), int(row["new_pstate"]))
            for resource in _procset(row["machine_id"]):
                changes.setdefault(resource, []).append(change)

    def pstate_at(start: float, host: int) -> int:
        # Batsim prints these times with 6 significant digits (3470.666667 -> 3470.67).
        return [p for t, p in changes[host] if t <= start * (1 + 1e-5) + 1e-6][-1]

    checked = 0
    for job in _rows("out_jobs.csv.gz"):
        hosts = _procset(job["allocated_resources"])
        if len({cluster_of[h].name for h in hosts}) != 1:
            continue
        cluster = cluster_of[hosts[0]]
        start, seconds = float(job["starting_time"]), float(job["execution_time"])
        [pstate] = {pstate_at(start, h) for h in hosts}
        if kinds[job["profile"]] == "delay":
            expected = len(hosts) * seconds * cluster.pstate(pstate).idle_watts
        else:
            expected = cluster.busy_energy(pstate, len(hosts), seconds)
        assert float(job["consumed_energy"]) == pytest.approx(expected, rel=1e-6), job["job_id"]
        checked += 1
    assert checked >= 40
