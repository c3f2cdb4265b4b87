"""The independent schedule checker (docs/architecture.md, "How data flows"), run after every run.

It reads only Batsim's output files, the workload file and the platform file, and
shares no code with the schedulers or the engine. Batsim's rules, which every
scheduler must follow:

* ``accounting``: every task is accounted for exactly once (executed directly, or
  rejected with one executed twin, or dropped), no twin lacks an original, no row
  belongs to an unknown workload (:func:`hetsched.metrics.outcomes.account`).
  Illegal final states are rejected when ``out_jobs.csv`` is read.
* ``double-booking``: no node runs two jobs at once. Executions occupy their nodes
  during ``[starting_time, finish_time)``; a job that ends when another starts is
  fine, a zero-length job strictly inside another's interval is not.
* ``early-start``: nothing starts before its task's (original) submission time, nor
  before its own submission (a twin's registration).
* ``unknown-resource``: every execution runs on at least one resource, all of which
  are compute resources of the platform.

The papers' system-model rules, which hetsched's schedulers follow and stock
schedulers (which know neither clusters nor budgets) cannot:

* ``cluster-split``: each execution runs inside one cluster (Khemka sec. 2, Machovec
  sec. II.A: a task is never spread over clusters).
* ``energy-budget``: with ``hetsched.energy_budget`` in the workload, the platform's
  energy (``out_consumed_energy.csv``) is within the budget; over the measure window
  when the workload has one (Machovec's budget is per measured day), else over the
  whole run. A budget with no energy trace cannot be verified, which is a violation.

Start and submission times are compared at Batsim's precision, rounded to the 6 decimals
Batsim prints (:func:`~hetsched.metrics.outcomes.starts_before`); other times with a tolerance
of 1e-6 s. Every
violation is collected, then :class:`ScheduleViolation` lists them all.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import numpy as np

from hetsched.metrics.annotations import WorkloadInfo
from hetsched.metrics.energy_trace import energy_between, total_energy
from hetsched.metrics.outcomes import TIME_TOLERANCE, Accounting, account, starts_before
from hetsched.metrics.output_files import EnergySample, JobRecord
from hetsched.metrics.run_files import RunFiles

BATSIM_RULES = ("accounting", "double-booking", "early-start", "unknown-resource")
"""Rules every scheduler must follow."""
MODEL_RULES = ("cluster-split", "energy-budget")
"""Rules of the papers' system model (one cluster per task, energy budget)."""
VIOLATION_KINDS = BATSIM_RULES + MODEL_RULES


@dataclass(frozen=True)
class Violation:
    """One broken rule: its kind (see :data:`VIOLATION_KINDS`) and what, where and when.

    >>> str(Violation("early-start", "job w0!1 starts at 3.0 before its submission at 5.0"))
    '[early-start] job w0!1 starts at 3.0 before its submission at 5.0'
    """

    kind: str
    message: str

    def __post_init__(self) -> None:
        if self.kind not in VIOLATION_KINDS:
            raise ValueError(f"unknown violation kind {self.kind!r}")

    def __str__(self) -> str:
        return f"[{self.kind}] {self.message}"


class ScheduleViolation(Exception):
    """The schedule broke at least one rule; ``violations`` lists every one found."""

    def __init__(self, violations: Sequence[Violation], source: str = "") -> None:
        self.violations = tuple(violations)
        where = f" in {source}" if source else ""
        lines = [f"schedule checker: {len(self.violations)} violation(s){where}:"]
        lines.extend(f"  {violation}" for violation in self.violations)
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class CheckReport:
    """What a passing check covered: its rules, tasks, executions and distinct nodes used."""

    rules: tuple[str, ...]
    tasks: int
    executions: int
    nodes_used: int


def _interval(record: JobRecord) -> tuple[float, float]:
    """``(start, finish)`` of an executed job."""
    if record.starting_time is None or record.finish_time is None:
        raise ValueError(f"job {record.batsim_id} has no execution interval")
    return record.starting_time, record.finish_time


@dataclass(frozen=True)
class _Allocations:
    """Every (execution, node) pair of a run as flat arrays, built once for the rules that
    look at each node of each execution (a day of Curie: 1,443 executions, 234,000 pairs),
    which then look in Python only at the executions or nodes an array operation flags: the
    flags are a superset of the violations, and the violations are found and worded by the
    per-node and per-execution rules below, in their order."""

    executions: Sequence[JobRecord]
    nodes: np.ndarray
    """The nodes of each execution, one after the other (int64)."""
    owners: np.ndarray
    """The index in ``executions`` of each entry of ``nodes``."""
    starts: np.ndarray
    finishes: np.ndarray

    @classmethod
    def of(cls, executions: Sequence[JobRecord]) -> _Allocations:
        counts = np.fromiter((len(r.allocated_resources) for r in executions), np.int64,
                             len(executions))  # fmt: skip
        intervals = np.array([_interval(r) for r in executions], float).reshape(-1, 2)
        nodes = np.fromiter(chain.from_iterable(r.allocated_resources for r in executions),
                            np.int64, int(counts.sum()))  # fmt: skip
        owners = np.repeat(np.arange(len(executions)), counts)
        return cls(executions, nodes, owners, intervals[owners, 0], intervals[owners, 1])

    def nodes_held_twice(self) -> list[int]:
        """The nodes where an execution may overlap an earlier one: per node, by (start,
        finish), each execution against the latest finish before it, as
        :func:`_double_bookings` sweeps, without its ``start < point`` condition (more nodes,
        never fewer)."""
        if not len(self.nodes):
            return []
        order = np.lexsort((self.finishes, self.starts, self.nodes))
        nodes, starts, finishes = self.nodes[order], self.starts[order], self.finishes[order]
        values, ranks = np.unique(finishes, return_inverse=True)
        keys = nodes * (len(values) + 1) + ranks.reshape(-1)  # exact running max per node
        running = np.maximum.accumulate(keys)
        first = np.ones(len(nodes), bool)
        first[1:] = nodes[1:] != nodes[:-1]
        before = np.empty(len(nodes), np.int64)
        before[1:] = running[:-1]
        before[first] = 0
        latest = values[np.clip(before - nodes * (len(values) + 1), 0, len(values) - 1)]
        overlap = np.minimum(finishes, latest) - starts > TIME_TOLERANCE
        point = (starts == finishes) & (starts < latest - TIME_TOLERANCE)
        return sorted({int(node) for node in nodes[(overlap | point) & ~first]})

    def outside(self, clusters: Sequence[str]) -> list[JobRecord]:
        """The executions that may run on no resource, on one the platform lacks, or on
        several clusters (:func:`_resources`, :func:`_cluster_splits` say which)."""
        flagged = np.zeros(len(self.executions), bool)
        unknown = self.nodes >= len(clusters)
        flagged[self.owners[unknown]] = True
        if clusters:
            names = {name: code for code, name in enumerate(dict.fromkeys(clusters))}
            codes = np.array([names[name] for name in clusters], np.int64)
            known = ~unknown
            code = codes[self.nodes[known]]
            owners = self.owners[known]
            low = np.full(len(self.executions), np.iinfo(np.int64).max)
            high = np.full(len(self.executions), -1)
            np.minimum.at(low, owners, code)
            np.maximum.at(high, owners, code)
            flagged |= (high >= 0) & (low != high)
        empty = np.ones(len(self.executions), bool)
        empty[self.owners] = False
        flagged |= empty
        return [self.executions[int(index)] for index in np.flatnonzero(flagged)]


def _double_bookings(executions: Sequence[JobRecord], nodes: Sequence[int]) -> list[Violation]:
    """Sweep each of ``nodes``' executions by start time against the latest-finishing one so
    far (``nodes``: those :meth:`_Allocations.nodes_held_twice` flags)."""
    wanted = set(nodes)
    if not wanted:
        return []
    by_node: dict[int, list[tuple[float, float, JobRecord]]] = defaultdict(list)
    for record in executions:
        for node in record.allocated_resources:
            if node in wanted:
                by_node[node].append((*_interval(record), record))
    violations = []
    for node in sorted(by_node):
        holder: tuple[float, float, JobRecord] | None = None
        for start, finish, job in sorted(by_node[node], key=lambda item: item[:2]):
            if holder is not None:
                h_start, h_finish, h_job = holder
                overlap = min(finish, h_finish) - start
                point_inside = start == finish and h_start < start < h_finish - TIME_TOLERANCE
                if overlap > TIME_TOLERANCE or point_inside:
                    violations.append(
                        Violation(
                            "double-booking",
                            f"node {node}: job {job.batsim_id} [{start}, {finish})"
                            f" overlaps job {h_job.batsim_id} [{h_start}, {h_finish})",
                        )
                    )
            if holder is None or finish > holder[1]:
                holder = (start, finish, job)
    return violations


def _resources(executions: Sequence[JobRecord], clusters: Sequence[str]) -> list[Violation]:
    violations = []
    for record in executions:
        unknown = [node for node in record.allocated_resources if node >= len(clusters)]
        if unknown:
            violations.append(
                Violation(
                    "unknown-resource",
                    f"job {record.batsim_id} runs on resources {unknown}: the platform has"
                    f" only {len(clusters)} compute resources",
                )
            )
        if not record.allocated_resources:
            violations.append(
                Violation("unknown-resource", f"job {record.batsim_id} ran on no resource")
            )
    return violations


def _cluster_splits(executions: Sequence[JobRecord], clusters: Sequence[str]) -> list[Violation]:
    violations = []
    for record in executions:
        known = [node for node in record.allocated_resources if node < len(clusters)]
        used = sorted({clusters[node] for node in known})
        if len(used) > 1:
            per_cluster = {name: [n for n in known if clusters[n] == name] for name in used}
            violations.append(
                Violation(
                    "cluster-split",
                    f"job {record.batsim_id} runs on several clusters: {per_cluster}",
                )
            )
    return violations


def _energy_budget(
    workload: WorkloadInfo, energy: Sequence[EnergySample] | None
) -> list[Violation]:
    budget = workload.energy_budget
    if budget is None:
        return []
    if energy is None:
        return [
            Violation(
                "energy-budget",
                f"the workload has an energy budget of {budget} J but the run has no energy"
                " trace (out_consumed_energy.csv): run with energy enabled",
            )
        ]
    if workload.measure_window is None:
        consumed, span = total_energy(energy), "the run"
    else:
        t0, t1 = workload.measure_window
        consumed, span = energy_between(energy, t0, t1), f"the measure window [{t0}, {t1}]"
    if consumed > budget * (1 + 1e-9):
        return [
            Violation(
                "energy-budget",
                f"the platform consumed {consumed} J during {span}, over the budget of"
                f" {budget} J by {consumed - budget} J",
            )
        ]
    return []


def check_schedule(
    records: Sequence[JobRecord],
    workload: WorkloadInfo,
    clusters: Sequence[str],
    energy: Sequence[EnergySample] | None = None,
    *,
    rules: Sequence[str] = VIOLATION_KINDS,
    source: str = "",
    accounting: Accounting | None = None,
) -> CheckReport:
    """Check a run against ``rules``; raise :class:`ScheduleViolation` listing every violation.

    ``clusters[i]`` is the cluster of Batsim resource ``i``
    (:func:`hetsched.metrics.resources.resource_clusters`); ``energy`` the rows of
    ``out_consumed_energy.csv`` if the run had energy enabled. ``rules`` defaults to
    all of them; :data:`BATSIM_RULES` alone suits stock schedulers. ``accounting``:
    ``account(records, workload)`` when the caller already has it.
    """
    unknown_rules = sorted(set(rules) - set(VIOLATION_KINDS))
    if unknown_rules or not rules:
        raise ValueError(
            f"checker: rules must be among {', '.join(VIOLATION_KINDS)}, got {list(rules)}"
        )
    if accounting is None:
        accounting = account(records, workload)
    violations = [Violation("accounting", problem) for problem in accounting.problems]
    executions = [record for record in records if record.executed]
    allocations = _Allocations.of(executions)
    violations.extend(_double_bookings(executions, allocations.nodes_held_twice()))
    task_submission = {
        outcome.execution.batsim_id: (outcome.task_id, outcome.submission_time)
        for outcome in accounting.outcomes.values()
        if outcome.execution is not None
    }
    for run in executions:
        start, _ = _interval(run)
        task_id, submitted = task_submission.get(run.batsim_id, (run.batsim_id, 0.0))
        submitted = max(submitted, run.submission_time)
        if starts_before(start, submitted):
            violations.append(
                Violation(
                    "early-start",
                    f"job {run.batsim_id} (task {task_id}) starts at {start},"
                    f" before its submission at {submitted}",
                )
            )
    outside = allocations.outside(clusters)
    violations.extend(_resources(outside, clusters))
    violations.extend(_cluster_splits(outside, clusters))
    violations.extend(_energy_budget(workload, energy))
    violations = [violation for violation in violations if violation.kind in rules]
    if violations:
        raise ScheduleViolation(violations, source)
    return CheckReport(
        rules=tuple(kind for kind in VIOLATION_KINDS if kind in rules),
        tasks=len(accounting.outcomes),
        executions=len(executions),
        nodes_used=len(np.unique(allocations.nodes)),
    )


def check_run(
    prefix: str | Path,
    workload_path: str | Path,
    platform_path: str | Path,
    *,
    rules: Sequence[str] = VIOLATION_KINDS,
) -> CheckReport:
    """Check the run whose Batsim outputs are ``<prefix>_jobs.csv`` (and energy, if any)."""
    return check_files(RunFiles.of(prefix, workload_path, platform_path), rules=rules)


def check_files(files: RunFiles, *, rules: Sequence[str] = VIOLATION_KINDS) -> CheckReport:
    """:func:`check_run` on files that the summary and the task table then read no more."""
    return check_schedule(
        files.jobs,
        files.workload,
        files.clusters,
        files.energy,
        rules=rules,
        source=str(files.output("jobs.csv")),
        accounting=files.accounting,
    )
