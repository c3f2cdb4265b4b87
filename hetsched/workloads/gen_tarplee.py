"""Bag-of-tasks workload of Tarplee et al., JPDC 84 (2015), sections 2-3.

K. M. Tarplee et al., "Scalable linear programming based resource allocation for makespan
minimization in heterogeneous computing systems". The scheduling model (sec. 2.2): T task
types, ``T_i`` tasks of type i, M machine types, ``M_j`` machines of type j, an ETC matrix
``ETC_ij`` (estimated time to compute a task of type i on a machine of type j); the whole bag
is known at time 0 (static scheduling); a task runs on one machine, a machine runs one task at
a time.

Mapping onto Batsim: a machine type is a cluster, a machine is one node (``M_j`` =
``nb_nodes``), a task is a one-node job (``cores`` = 1, ``res`` = 1) submitted at time 0.

The text we have stops before the paper's sec. 3 (the nominal system), so the matrix is drawn
by the COV method of Ali et al. (2000), the method of this group of authors, with our choice of
parameters: ``task_types`` = 30, mean ETC ``mean_etc`` = 600 s, task heterogeneity
``task_cov`` = 0.6 and machine heterogeneity ``machine_cov`` = 0.3 (all options). Counts: every
type gets one task, the other ``tasks - task_types`` are dealt to the types uniformly at random
(multinomial), so ``T_i >= 1`` and ``sum T_i = tasks`` (default 1,000).

Special-purpose machines (sec. 1: "special-purpose machines that can perform specific tasks
quickly, while other tasks might not be able to run on them"), option ``special_purpose`` (the
number of machine types that are special-purpose, default 0; at most all but one): the last
``special_purpose`` machine types of the platform each run only a random share
``SPECIAL_PURPOSE_SHARE`` of the task types (each type independently, at least one type per
machine), ``SPECIAL_PURPOSE_SPEEDUP`` times faster than the COV method drew; every other task
type has an infinite ETC there, absent from its jobs' ``etc``. Share and speedup are our
choices (the text we have gives no numbers).

Job annotations: ``cores``, ``etc`` (the row of the ETC matrix, the machine types that can run
the task), ``task_type``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hetsched.workloads.clusters import ClusterLike
from hetsched.workloads.gen_common import (
    Option,
    TaskRecord,
    build_workload,
    check_clusters,
    cov_method,
    gamma_mean_cov,
    non_negative_int,
    positive_float,
    positive_int,
    resolve_options,
    seconds,
)

PAPER = "Tarplee et al., JPDC 84 (2015)"

PRESETS = {
    "tarplee": f"{PAPER}: bag of tasks, ETC matrix task types x machine types (COV method),"
    " counts per type, all submitted at time 0",
}

OPTIONS = (
    Option("task_types", 30, positive_int),
    Option("tasks", 1000, positive_int),
    Option("mean_etc", 600.0, positive_float),
    Option("task_cov", 0.6, positive_float),
    Option("machine_cov", 0.3, positive_float),
    Option("special_purpose", 0, non_negative_int),
)
"""Options: number of task types T, number of tasks, mean ETC (s), COV of task heterogeneity
(V_task) and of machine heterogeneity (V_mach) of the COV method, number of special-purpose
machine types."""
SPECIAL_PURPOSE_SHARE = 0.25
"""Our choice: the probability that a special-purpose machine type can run a task type."""
SPECIAL_PURPOSE_SPEEDUP = 4.0
"""Our choice: how many times faster a special-purpose machine type runs the types it can."""


def draw_etc(
    rng: np.random.Generator,
    task_types: int,
    machine_types: int,
    mean_etc: float,
    task_cov: float,
    machine_cov: float,
) -> np.ndarray:
    """The ETC matrix (task types x machine types, s) by the COV method (Ali et al. 2000).

    >>> etc = draw_etc(np.random.default_rng(0), 3, 2, 600.0, 0.6, 0.3)
    >>> etc.shape, bool((etc > 0).all())
    ((3, 2), True)
    """
    means = gamma_mean_cov(rng, mean_etc, task_cov, task_types)
    return cov_method(rng, means, machine_cov, machine_types)


def special_purpose(
    rng: np.random.Generator, etc: np.ndarray, machine_types: int
) -> np.ndarray:
    """The ETC matrix with its last ``machine_types`` columns special-purpose: each task type
    runs there with probability :data:`SPECIAL_PURPOSE_SHARE` (at least one per column),
    :data:`SPECIAL_PURPOSE_SPEEDUP` times faster; ``inf`` elsewhere.

    >>> etc = special_purpose(np.random.default_rng(0), np.full((8, 3), 400.0), 1)
    >>> bool((etc[:, :2] == 400.0).all()), sorted(set(etc[:, 2].tolist()))
    (True, [100.0, inf])
    """
    nb_types, nb_machine_types = map(int, etc.shape)
    if machine_types >= nb_machine_types:
        raise ValueError(
            f"option 'special_purpose' ({machine_types}) must leave at least one of the"
            f" {nb_machine_types} machine types general-purpose"
        )
    etc = etc.copy()
    for j in range(nb_machine_types - machine_types, nb_machine_types):
        runs = rng.random(nb_types) < SPECIAL_PURPOSE_SHARE
        runs[rng.integers(nb_types)] = True
        etc[:, j] = np.where(runs, etc[:, j] / SPECIAL_PURPOSE_SPEEDUP, np.inf)
    return etc


def draw_counts(rng: np.random.Generator, task_types: int, tasks: int) -> np.ndarray:
    """``T_i``: one task per type, the rest dealt uniformly at random (multinomial).

    >>> counts = draw_counts(np.random.default_rng(0), 4, 10)
    >>> int(counts.sum()), bool((counts >= 1).all())
    (10, True)
    """
    if tasks < task_types:
        raise ValueError(f"tasks ({tasks}) must be at least task_types ({task_types})")
    return 1 + rng.multinomial(tasks - task_types, np.full(task_types, 1.0 / task_types))


def draw_bag(
    preset: str, seed: int, machine_types: int, options: Mapping[str, object]
) -> tuple[np.ndarray, np.ndarray, dict[str, object]]:
    """The ETC matrix (s, rounded to the millisecond as the jobs carry it), the counts ``T_i``
    and the resolved options of the bag that :func:`generate` writes with ``seed``.

    >>> etc, counts, opts = draw_bag("tarplee", 1, 3, {"task_types": 4, "tasks": 10})
    >>> etc.shape, int(counts.sum()), opts["mean_etc"]
    ((4, 3), 10, 600.0)
    """
    opts = resolve_options(preset, options, OPTIONS, {})
    task_types, tasks = int(opts["task_types"]), int(opts["tasks"])
    if tasks < task_types:
        raise ValueError(
            f"preset {preset!r}: option 'tasks' ({tasks}) must be at least"
            f" 'task_types' ({task_types})"
        )
    rng = np.random.default_rng(seed)
    etc = draw_etc(
        rng,
        task_types,
        machine_types,
        float(opts["mean_etc"]),
        float(opts["task_cov"]),
        float(opts["machine_cov"]),
    )
    counts = draw_counts(rng, task_types, tasks)
    if int(opts["special_purpose"]):
        etc = special_purpose(rng, etc, int(opts["special_purpose"]))
    return np.vectorize(seconds)(etc), counts, opts


def generate(
    preset: str, seed: int, clusters: Sequence[ClusterLike], options: Mapping[str, object]
) -> dict[str, Any]:
    """The Tarplee bag of tasks of ``preset`` for ``clusters`` (see the module docstring)."""
    clusters = check_clusters(clusters)
    etc, counts, opts = draw_bag(preset, seed, len(clusters), options)
    records: list[TaskRecord] = []
    for i in range(etc.shape[0]):
        row = {
            cluster.name: float(etc[i, j])
            for j, cluster in enumerate(clusters)
            if np.isfinite(etc[i, j])
        }
        annotations = {"task_type": f"t{i:02d}"}
        records.extend(
            TaskRecord(subtime=0.0, cores=1, etc=row, annotations=annotations)
            for _ in range(int(counts[i]))
        )
    source = {"generator": preset, "paper": PAPER, "seed": seed, "options": opts}
    return build_workload(records, clusters, source)


def platform_preset(preset: str, options: Mapping[str, object]) -> tuple[str, dict[str, object]]:
    """The platform preset used when no clusters are given: ``tarplee``, without options."""
    return "tarplee", {}
