"""The makespan lower bound MS_LB of a bag-of-tasks workload (Tarplee et al., JPDC 2015, sec.
2.2), from the workload and platform files only, so that any run's makespan on it can be read
as ``makespan / MS_LB``, the paper's measure.

A workload is a bag when every job is submitted at one time, runs on one node and carries a
``task_type`` (the ``tarplee`` generator's jobs, docs/generators.md); its ETC matrix is each
type's ``etc`` row (a cluster absent from ``etc`` cannot run the type: infinite ETC, the
special-purpose machines of sec. 1), its machine types are the platform's clusters with their
nodes as ``M_j``. MS_LB is the LP of eq. 2-3
(:func:`hetsched.heuristics.bags.lp_makespan.makespan_lower_bound`). :class:`BagFamily` puts
MS_LB and ``makespan / MS_LB`` in a run's summary (:mod:`hetsched.metrics.family`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hetsched.errors import WorkloadError
from hetsched.metrics.family import FamilyRecord
from hetsched.metrics.outcomes import makespan
from hetsched.metrics.run_files import RunFiles


def is_bag(jobs: Sequence[Mapping[str, object]]) -> bool:
    """Every job submitted at one time, on one node, with a ``task_type``.

    >>> is_bag([{"subtime": 0.0, "res": 1, "task_type": "t0"}])
    True
    >>> is_bag([{"subtime": 0.0, "res": 1, "task_type": "t0"}, {"subtime": 5.0, "res": 1,
    ...         "task_type": "t0"}])
    False
    """
    return bool(jobs) and len({job.get("subtime") for job in jobs}) == 1 and all(
        job.get("res") == 1 and "task_type" in job for job in jobs
    )


def bag_lower_bound(
    jobs: Sequence[Mapping[str, object]], clusters: Sequence[str], source: str = "workload"
) -> float | None:
    """MS_LB of the bag ``jobs`` on the platform whose resources belong to ``clusters`` (one
    name per resource id), counted from the bag's submission; ``None`` when ``jobs`` is not a
    bag (:func:`is_bag`). One type's jobs share one ``etc`` row
    (:class:`~hetsched.errors.WorkloadError` naming ``source`` and the job otherwise).

    Two tasks of type a (2 s on x, 4 s on y) on one node of each: MS_LB = 8/3 (mu = 4/3, 2/3).

    >>> jobs = [{"id": str(n), "subtime": 0.0, "res": 1, "task_type": "a",
    ...          "etc": {"x": 2.0, "y": 4.0}} for n in range(2)]
    >>> round(bag_lower_bound(jobs, ("x", "y")), 6)
    2.666667
    """
    if not is_bag(jobs):
        return None
    machines = Counter(clusters)
    names = list(machines)
    rows: dict[str, tuple[float, ...]] = {}
    index: dict[str, int] = {}
    task_types = []
    for job in jobs:
        etc = job.get("etc")
        if not isinstance(etc, Mapping):
            raise WorkloadError(f"{source}: job {job.get('id')}: a bag's task needs an etc")
        row = tuple(float(etc.get(name, math.inf)) for name in names)
        key = str(job["task_type"])
        if rows.setdefault(key, row) != row:
            raise WorkloadError(
                f"{source}: job {job.get('id')}: its etc differs from the other tasks of type"
                f" {key!r}"
            )
        task_types.append(index.setdefault(key, len(index)))
    # (7 ms that every run's command paid for a bag's only)
    from hetsched.heuristics.bags.bag_of_tasks import BagOfTasks  # lazy: start-up time
    from hetsched.heuristics.bags.lp_makespan import makespan_lower_bound  # lazy: start-up time

    bag = BagOfTasks(list(rows.values()), task_types, [machines[name] for name in names])
    return makespan_lower_bound(bag).ms_lb


@dataclass(frozen=True)
class BagRecord(FamilyRecord):
    """Tarplee et al.'s section of a run's summary (``docs/run.md``): MS_LB and the run's
    makespan over it, the paper's measure (``None`` when MS_LB is 0)."""

    makespan_lower_bound: float | None = None
    makespan_ratio: float | None = None


class BagFamily:
    """Tarplee et al.'s makespan lower bound (:class:`~hetsched.metrics.family.FamilyMetrics`),
    for a bag of tasks (:func:`is_bag`) whose jobs carry no ``makespan_goal``: a batch with a
    goal is measured against its goal (Hansen et al., :mod:`hetsched.metrics.makespan_goals`).
    Its reference is MS_LB on the run's platform (:func:`bag_lower_bound`)."""

    record = BagRecord

    def reference(self, files: RunFiles) -> float | None:
        """MS_LB of the workload on the platform; ``None`` for other workloads."""
        if any(job.makespan_goal is not None for job in files.workload.jobs.values()):
            return None
        return bag_lower_bound(files.document["jobs"], files.clusters, str(files.workload_path))

    def summarize(self, files: RunFiles, reference: float) -> BagRecord:
        """MS_LB and the run's makespan over it."""
        ratio = None if not reference else makespan(files.outcomes) / reference
        return BagRecord(makespan_lower_bound=reference, makespan_ratio=ratio)
