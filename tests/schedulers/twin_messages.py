"""The messages a hetsched scheduler sends Batsim 4.2.1 to start a task as its execution twin
(docs/architecture.md, "Execution twins"), for the adapter and pybatsim tests."""

from __future__ import annotations

from typing import Any


def twin_events(now: float, original: str, nodes: str, res: int,
                cpu: float) -> list[dict[str, Any]]:
    """REGISTER_PROFILE, REGISTER_JOB, EXECUTE_JOB of the twin of ``original`` on ``nodes``
    (``res`` resources, ``cpu`` flop per resource) and REJECT_JOB of the original."""
    workload, job = original.split("!")
    twin, profile = f"hetsched!{workload}.{job}", f"twin.{workload}.{job}"
    return [
        {"timestamp": now, "type": "REGISTER_PROFILE", "data": {
            "workload_name": "hetsched", "profile_name": profile,
            "profile": {"type": "parallel_homogeneous", "cpu": cpu, "com": 0}}},
        {"timestamp": now, "type": "REGISTER_JOB", "data": {"job_id": twin, "job": {
            "profile": profile, "id": twin, "res": res, "walltime": -1, "subtime": now}}},
        {"timestamp": now, "type": "EXECUTE_JOB", "data": {"job_id": twin, "alloc": nodes}},
        {"timestamp": now, "type": "REJECT_JOB", "data": {"job_id": original}},
    ]
