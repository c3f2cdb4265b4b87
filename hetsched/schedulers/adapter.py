"""The pybatsim adapter: Batsim events in, mapping events through a heuristic, Batsim events out.

:class:`HetschedScheduler` is a pybatsim ``BatsimScheduler``. It learns the
clusters from the host properties of SIMULATION_BEGINS, turns every submitted
job into a :class:`~hetsched.core.tasks.Task`, lets a
:class:`~hetsched.core.driver.MappingDriver` run the mapping events (Khemka et
al. MIC 2015 section 3.1: on task arrival and completion; Machovec et al. 2017
section III.A: every ``period`` seconds, with CALL_ME_LATER) and enacts the
decisions as *execution twins* (docs/architecture.md; names in
:mod:`hetsched.schedulers.twins`).

For a task started on nodes ``N`` of cluster ``c`` at P-state ``p``, one reply
holds, in this order:

1. SET_RESOURCE_STATE ``N`` -> ``p`` (only for the nodes of ``N`` not already at ``p``,
   as the driver's system view says: :meth:`MappingDriver.pstate_switches`); on a cluster
   with power levels (Machovec et al.'s per-task-type APC, ``core/system.py``), to the host
   P-state of the task's type at ``p``, which has the speed of ``p``;
2. REGISTER_PROFILE ``twin.<w>.<j>`` in workload ``hetsched``:
   ``{"type": "parallel_homogeneous", "cpu": d * speed(c, p), "com": 0}``
   where ``d`` is the time the task takes: end - start of the decision (the
   heuristic's plan, e.g. ETC(t, c) at P-state 0), or, when the job carries an
   ``actual`` run time (``docs/workload-schema.md``), that plan times the task's
   actual/planned ratio on ``c`` (:class:`~hetsched.core.actual.ActualRunTime`: the
   heuristic never sees it); ``speed(c, p)`` is the per-core speed of P-state
   ``p`` (host property ``speed_per_pstate``). A node's speed counts one core:
   SimGrid's ptask model computes a parallel task's part on a host at the
   host's ``speed``, whatever its core count, so the twin lasts exactly ``d``. On a
   cluster whose speed the platform does not give (no ``speed_per_pstate``: Batsim
   forwards no host speed), ``{"type": "delay", "delay": d}`` (:func:`twin_profile`);
3. REGISTER_JOB ``hetsched!<w>.<j>`` (``res`` = ``len(N)``, ``walltime`` -1,
   ``subtime`` now);
4. EXECUTE_JOB of the twin on ``N``;
5. REJECT_JOB of the original ``<w>!<j>``.

A dropped task gets REJECT_JOB. Batsim's ``no_more_static_job_to_submit`` tells the
driver that no task will arrive any more (a mapping event follows: batch heuristics map
the whole bag then); once no task waits or is reserved, the reply
ends with NOTIFY ``registration_finished`` (sent once; it only forbids further
registrations, running twins still finish). While reservations or periodic
mapping events lie ahead, the reply carries CALL_ME_LATER for the next one.

What the heuristic needs (:attr:`~hetsched.core.mapping.Heuristic.requires`) is checked with
the preflight's own code (:func:`~hetsched.validation.preflight.platform_problem` at
SIMULATION_BEGINS, :func:`~hetsched.validation.preflight.job_problem` at each JOB_SUBMITTED): a
:class:`~hetsched.errors.WorkloadError` with the preflight's message, the platform named
``PLATFORM.xml`` (Batsim does not send its path).

Requirements on Batsim: ``--enable-dynamic-jobs`` (checked at
SIMULATION_BEGINS), no Redis, energy (``-E``) whenever a heuristic picks a
P-state other than 0 (Batsim refuses SET_RESOURCE_STATE otherwise; it does
not tell the scheduler whether ``-E`` is on). Acknowledged registrations
(``--acknowledge-dynamic-jobs``) work too: the twins' JOB_SUBMITTED are ignored.
Every node starts at P-state 0 (SimGrid's default; Batsim does not forward a
host's initial P-state). Every message from Batsim passes a
:class:`~hetsched.schedulers.message_checks.ProtocolGuard` first (installed when pybatsim hands
the scheduler its ``Batsim`` object): a malformed or out-of-order message, and silence past
pybatsim's timeout, are a :class:`~hetsched.schedulers.message_checks.BatsimProtocolError`.

Options (pybatsim's ``-o`` JSON): ``heuristic`` (a built-in or installed heuristic's name,
or ``path/to/file.py:ClassName``, ``package.module:ClassName``:
:func:`hetsched.heuristics.registry.find`), ``period`` (seconds between
mapping events, or null for event-driven mapping), ``export_prefix`` (write, at the
end, ``<prefix>_mapping_events.csv``: time, nb_mappable, nb_decisions, seconds of
each heuristic call; and ``<prefix>_tasks.csv``: each task's final state, its
planned cluster, nodes, P-state, start and end, its actual start and end, and why it
was dropped),
``energy_budget`` and ``measure_window`` (override the workload's ``hetsched``
object; by default they are read from the workload files that SIMULATION_BEGINS
names, when the scheduler can read them, or given by the caller that read the workload,
:attr:`HetschedScheduler.workload_meta`) and the heuristic's own parameters. The adapter's
options are one :class:`AdapterOptions`, validated when made, kept apart from the
heuristic's parameters: from pybatsim's one dict (:meth:`AdapterOptions.split`), or given
apart (``hetsched run``).
"""

from __future__ import annotations

import csv
import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

from batsim.batsim import Batsim, BatsimScheduler, Job
from procset import ProcSet

from hetsched.core.actual import ActualRunTime
from hetsched.core.decisions import Action, Decision
from hetsched.core.driver import EPSILON, MAPPING_EVENTS_COLUMNS, MappingDriver, MappingError
from hetsched.core.energy_meter import (
    ENERGY_BUDGET_RULE,
    MEASURE_WINDOW_RULE,
    budget_and_window,
    is_energy_budget,
    is_measure_window,
)
from hetsched.core.mapping import Heuristic
from hetsched.core.state import TaskState
from hetsched.core.system import Cluster
from hetsched.engine.protocol import format_intervals
from hetsched.errors import WorkloadError
from hetsched.heuristics import registry
from hetsched.platforms.properties import clusters_from_compute_resources
from hetsched.schedulers.message_checks import BatsimProtocolError, ProtocolGuard
from hetsched.schedulers.twins import (
    TWIN_WORKLOAD,
    is_twin,
    original_job_id,
    twin_job_id,
    twin_profile_name,
)
from hetsched.validation.preflight import job_problem, platform_problem
from hetsched.workloads.batsim_workload import hetsched_member
from hetsched.workloads.job_tasks import SharedAnnotations, actual_from_job, task_from_job


@dataclass(frozen=True)
class AdapterOptions:
    """The adapter's own options (module docstring), apart from the heuristic's parameters,
    validated when made: ``heuristic`` (a name :func:`hetsched.heuristics.registry.find`
    knows, or ``None`` for a class that fixes it), ``period`` (seconds > 0, or ``None`` for
    event-driven mapping), ``export_prefix``, ``energy_budget`` (J) and ``measure_window``
    (``[t0, t1]``), the last two replacing the workload's.

    >>> options = AdapterOptions(heuristic="max-util", period=60, measure_window=[0, 86400])
    >>> options.period, options.measure_window, options.as_dict()["heuristic"]
    (60.0, (0.0, 86400.0), 'max-util')
    >>> options, parameters = AdapterOptions.split({"heuristic": "mm", "place_holders": True})
    >>> options.heuristic, parameters
    ('mm', {'place_holders': True})
    >>> AdapterOptions(period=0)
    Traceback (most recent call last):
    ...
    ValueError: option period must be a number of seconds > 0 or null, got 0
    """

    heuristic: str | None = None
    period: float | None = None
    export_prefix: str | None = None
    energy_budget: float | None = None
    measure_window: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        heuristic, period, prefix = self.heuristic, self.period, self.export_prefix
        if heuristic is not None and not isinstance(heuristic, str):
            raise ValueError(f"option heuristic must be a heuristic's name, got {heuristic!r}")
        if period is not None and (
            isinstance(period, bool) or not isinstance(period, int | float) or not period > 0
        ):
            raise ValueError(
                f"option period must be a number of seconds > 0 or null, got {period!r}"
            )
        if prefix is not None and not isinstance(prefix, str):
            raise ValueError(f"option export_prefix must be a path or null, got {prefix!r}")
        budget, window = self.energy_budget, self.measure_window
        if budget is not None and not is_energy_budget(budget):
            raise ValueError(
                f"option energy_budget must be {ENERGY_BUDGET_RULE} or null, got {budget!r}"
            )
        if window is not None and not is_measure_window(window):
            raise ValueError(
                f"option measure_window must be {MEASURE_WINDOW_RULE} or null, got {window!r}"
            )
        if period is not None:
            object.__setattr__(self, "period", float(period))
        if budget is not None:
            object.__setattr__(self, "energy_budget", float(budget))
        if window is not None:
            object.__setattr__(self, "measure_window", (float(window[0]), float(window[1])))

    @classmethod
    def split(cls, options: Mapping[str, Any]) -> tuple[AdapterOptions, dict[str, Any]]:
        """pybatsim's one ``-o`` dict (or ``hetsched run``'s ``--option K=V``): the adapter's
        options, and the rest, the heuristic's parameters."""
        names = {field.name for field in fields(cls)}
        own = {key: value for key, value in options.items() if key in names}
        return cls(**own), {key: value for key, value in options.items() if key not in names}

    def as_dict(self) -> dict[str, Any]:
        """The options set (not ``None``), as pybatsim's ``-o`` dict gives them."""
        return {field.name: getattr(self, field.name) for field in fields(self)
                if getattr(self, field.name) is not None}  # fmt: skip


ADAPTER_OPTIONS = tuple(field.name for field in fields(AdapterOptions))
"""Options read by the adapter (:class:`AdapterOptions`); every other option is a parameter
of the heuristic."""

TASKS_COLUMNS = (
    "task_id", "state", "cluster", "nodes", "pstate", "planned_start", "planned_end",
    "start", "end", "reason",
)
"""Columns of ``<export_prefix>_tasks.csv``: planned (the decision) and actual times, and
why a dropped task was dropped (``Decision.reason``)."""

PLATFORM_PLACEHOLDER = "PLATFORM.xml"
"""How a refusal names the platform file, which Batsim does not tell the scheduler."""

logger = logging.getLogger(__name__)


class BatsimSetupError(ValueError):
    """Batsim was started with options the adapter cannot work with."""


def mapping_events_path(export_prefix: str) -> Path:
    """Where the mapping-event latencies go for ``export_prefix``."""
    return Path(f"{export_prefix}_mapping_events.csv")


def tasks_path(export_prefix: str) -> Path:
    """Where the tasks' planned and actual times go for ``export_prefix``."""
    return Path(f"{export_prefix}_tasks.csv")


def twin_profile(cluster: Cluster, pstate: int, seconds: float) -> dict[str, object]:
    """The profile of an execution twin that lasts ``seconds`` on nodes of ``cluster`` at
    ``pstate`` (module docstring): ``parallel_homogeneous`` with ``cpu = seconds x speed``
    where the platform gives the speed (``speed_per_pstate``); on a cluster whose speed is
    unknown (a platform without hetsched's host properties: Batsim forwards no speed,
    :attr:`Cluster.speed` is ``None``), a ``delay`` of ``seconds``, which Batsim runs for
    exactly that long whatever the hosts' speed. SimGrid charges idle power to a host during
    a ``delay`` job, as for the workload's own ``delay`` jobs run by any scheduler; the
    scheduler has no power model on such a cluster anyway.

    >>> from hetsched.core.system import PState
    >>> twin_profile(Cluster("c", 1, (0,), (PState(2e9, 1.0, 2.0),)), 0, 3.0)
    {'type': 'parallel_homogeneous', 'cpu': 6000000000.0, 'com': 0}
    >>> twin_profile(Cluster("c", 1, (0,), nominal_speed=1e9), 0, 3.0)["cpu"]
    3000000000.0
    >>> twin_profile(Cluster("c", 1, (0,)), 0, 3.0)
    {'type': 'delay', 'delay': 3.0}
    """
    if cluster.pstates:
        return {"type": "parallel_homogeneous", "cpu": seconds * cluster.pstates[pstate].speed,
                "com": 0}
    if cluster.speed is None:
        return {"type": "delay", "delay": seconds}
    return {"type": "parallel_homogeneous", "cpu": seconds * cluster.speed, "com": 0}


def node_set(nodes: Iterable[int]) -> ProcSet:
    """The ProcSet of Batsim resource ids ``nodes``, built from its runs of consecutive ids.

    ``ProcSet(*nodes)`` merges one id at a time, each merge a pass over the intervals so far;
    this builds the same set from the runs, halves merged pairwise.

    >>> str(node_set((7, 3, 4, 5, 9, 8, 0)))
    '0 3-5 7-9'
    >>> node_set(range(0, 40, 2)) == ProcSet(*range(0, 40, 2))
    True
    """
    runs: list[tuple[int, int]] = []
    first = last = -2
    for node in sorted(set(nodes)):
        if node != last + 1:
            if last >= 0:
                runs.append((first, last))
            first = node
        last = node
    if last >= 0:
        runs.append((first, last))
    return _union(runs)


def _union(runs: list[tuple[int, int]]) -> ProcSet:
    if len(runs) <= 8:
        return ProcSet(*runs)
    half = len(runs) // 2
    return ProcSet(_union(runs[:half]), _union(runs[half:]))


def _workload_meta(paths: Mapping[str, str]) -> dict[str, Any]:
    """The ``hetsched`` object of the first readable workload file that has one."""
    for path in paths.values():
        try:
            meta = hetsched_member(Path(path).read_text())
        except (OSError, ValueError):
            continue
        if isinstance(meta, dict):
            return meta
    return {}


class HetschedScheduler(BatsimScheduler):
    """A hetsched heuristic behind pybatsim's scheduler interface.

    ``options`` is the dict pybatsim's launcher builds from ``-o JSON``.
    Subclasses fix the heuristic with the class attribute ``heuristic_name``
    (then the ``heuristic`` option may be omitted, or must name the same one).
    """

    heuristic_name: ClassVar[str | None] = None
    bounded_first_wait = False
    """True: the wait for Batsim's first message is bounded by pybatsim's timeout
    (``hetsched serve -t``; :class:`~hetsched.schedulers.message_checks.ProtocolGuard`)."""

    def __init__(
        self, options: Mapping[str, Any] | AdapterOptions | None = None, *,
        heuristic: Heuristic | None = None, parameters: Mapping[str, Any] | None = None,
    ) -> None:
        """``options``: pybatsim's ``-o`` dict, the adapter's options and the heuristic's
        parameters in one (:meth:`AdapterOptions.split`), or the adapter's options alone
        (:class:`AdapterOptions`) with the heuristic's ``parameters`` apart. ``heuristic``:
        run this object (registered or not) instead of building one from the ``heuristic``
        option; the options may then only be the adapter's."""
        if isinstance(options, AdapterOptions):
            own, params = options, dict(parameters or {})
        else:
            if parameters is not None:
                raise ValueError("give the heuristic's parameters with AdapterOptions, or all"
                                 " the options in one dict")
            own, params = AdapterOptions.split(options or {})
        super().__init__({**own.as_dict(), **params})
        if heuristic is not None:
            if params or own.heuristic is not None or self.heuristic_name is not None:
                raise ValueError(
                    "a scheduler given a heuristic object takes only the adapter's options"
                    f" ({', '.join(ADAPTER_OPTIONS[1:])})"
                )
        else:
            heuristic = self._create(own.heuristic, params)
        self.heuristic = heuristic
        self.adapter_options = own
        self.period: float | None = own.period
        self.export_prefix: str | None = own.export_prefix
        self.energy_budget: float | None = own.energy_budget
        self.measure_window: tuple[float, float] | None = own.measure_window
        self.workload_meta: Mapping[str, Any] | None = None
        """The workload's ``hetsched`` object when the caller read it (``hetsched run``: the
        preflight, :attr:`~hetsched.validation.preflight.Preflight.hetsched`), in place of
        the files that SIMULATION_BEGINS names, for the budget and the window."""
        self.driver: MappingDriver | None = None
        self._actual: dict[str, ActualRunTime] = {}
        self._shared = SharedAnnotations()
        self._pending_calls: set[float] = set()
        self._task_event = False
        self._registration_finished = False
        self._ended = False

    def _create(self, name: str | None, params: Mapping[str, Any]) -> Heuristic:
        name = self.heuristic_name if name is None else name
        if name is None:
            raise ValueError(
                f"option heuristic is required (one of: {', '.join(registry.names())};"
                " or path/to/file.py:ClassName, package.module:ClassName)"
            )
        if self.heuristic_name is not None and name != self.heuristic_name:
            raise ValueError(
                f"option heuristic: {type(self).__name__} runs {self.heuristic_name},"
                f" not {name!r}"
            )
        try:
            accepted = tuple(registry.parameters(name))
        except ValueError as error:
            raise ValueError(f"option heuristic: {error}") from None
        for key in params:
            if key not in accepted:
                raise ValueError(
                    f"unknown option {key!r} for heuristic {name} (adapter options:"
                    f" {', '.join(ADAPTER_OPTIONS)}; heuristic parameters:"
                    f" {', '.join(accepted) or 'none'})"
                )
        return registry.create(name, **params)

    # ------------------------------------------------------------- protocol
    @property
    def bs(self) -> Batsim:
        """pybatsim's ``Batsim`` object; its network handler wrapped in a :class:`ProtocolGuard`.

        pybatsim sets it in ``Batsim.__init__`` before it reads the first message, so every
        message from Batsim is checked (:mod:`hetsched.schedulers.message_checks`).
        """
        return self._bs

    @bs.setter
    def bs(self, bs: Batsim) -> None:
        network = getattr(bs, "network", None)
        if network is not None and not isinstance(network, ProtocolGuard):
            bs.network = ProtocolGuard(network, bounded_first_wait=self.bounded_first_wait)
        self._bs = bs

    # ----------------------------------------------------------- simulation
    def onSimulationBegins(self) -> None:
        config = self.bs.batconf
        if not config.get("dynamic-jobs-enabled", False):
            raise BatsimSetupError(
                "Batsim runs without dynamic jobs: hetsched schedulers execute tasks as"
                " dynamically registered twins; pass --enable-dynamic-jobs to Batsim"
            )
        if config.get("redis-enabled", False):
            raise BatsimSetupError(
                "Batsim runs with Redis: hetsched schedulers register their twins through"
                " the protocol; run Batsim without --enable-redis"
            )
        if self.export_prefix is not None:
            for path in (mapping_events_path(self.export_prefix), tasks_path(self.export_prefix)):
                if path.exists():
                    raise FileExistsError(f"{path} exists: choose another export_prefix")
        clusters = clusters_from_compute_resources(self.bs.machines["compute"])
        problem = platform_problem(self.heuristic, clusters, PLATFORM_PLACEHOLDER)
        if problem is not None:
            raise WorkloadError(problem)
        meta: Mapping[str, Any] = {}
        if self.energy_budget is None or self.measure_window is None:
            meta = (self.workload_meta if self.workload_meta is not None
                    else _workload_meta(self.bs.workloads))  # fmt: skip
        budget, window = budget_and_window(self.energy_budget, self.measure_window,
                                           meta.get("energy_budget"), meta.get("measure_window"))
        self.driver = MappingDriver(
            clusters, self.heuristic, period=self.period, energy_budget=budget,
            measure_window=window,
        )

    def onSimulationEnds(self) -> None:
        self._ended = True
        if self.driver is not None:
            reasons = Counter(record.drop_reason for record in self.driver.tasks
                              if record.state is TaskState.DROPPED)
            for reason, count in reasons.most_common():
                logger.warning("%s dropped %d task(s): %s", self.heuristic.name, count, reason)
        if self.export_prefix is not None:
            self.write_mapping_events(mapping_events_path(self.export_prefix))
            self.write_tasks(tasks_path(self.export_prefix))

    def write_mapping_events(self, path: Path) -> None:
        """Write one row per heuristic call (time, nb_mappable, nb_decisions, seconds)."""
        with path.open("x", newline="") as stream:
            writer = csv.writer(stream)
            writer.writerow(MAPPING_EVENTS_COLUMNS)
            for record in self._driver().records:
                writer.writerow(
                    (record.time, record.nb_mappable, record.nb_decisions, record.seconds)
                )

    def write_tasks(self, path: Path) -> None:
        """Write one row per task: final state, planned placement and times, actual times."""
        def number(value: float | None) -> str:
            return "" if value is None else repr(value)

        with path.open("x", newline="") as stream:
            writer = csv.writer(stream)
            writer.writerow(TASKS_COLUMNS)
            for record in self._driver().tasks:
                decision = record.decision
                placement: tuple[object, ...] = ("",) * 5 if decision is None else (
                    decision.cluster, format_intervals(decision.nodes), decision.pstate,
                    number(decision.start), number(decision.end),
                )
                writer.writerow((
                    record.task.id, record.state.value, *placement,
                    number(record.started), number(record.ended), record.drop_reason,
                ))

    def onDeadlock(self) -> None:
        raise BatsimProtocolError(
            "Batsim sent nothing within the timeout: it may have crashed, closed the"
            " connection or deadlocked (see its log); if it is only slow, raise the timeout"
            " (hetsched serve -t, pybatsim --timeout)"
        )

    # ------------------------------------------------------------------ jobs
    def onJobSubmission(self, job: Job) -> None:
        if is_twin(job.id):
            return  # acknowledgement of a twin we registered (--acknowledge-dynamic-jobs)
        clusters = self._driver().clusters
        problem = job_problem(
            self.heuristic, job.id, job.json_dict, job.profile_dict, clusters,
            str(self.bs.workloads.get(job.workload, "WORKLOAD.json")), PLATFORM_PLACEHOLDER,
        )
        if problem is not None:
            raise WorkloadError(problem)
        task = task_from_job(job.json_dict, job.profile_dict, clusters, self._shared)
        actual = actual_from_job(job.json_dict, task, clusters)
        if actual is not None:
            self._actual[task.id] = actual
        # the task is what the scheduler keeps of the job: its parsed JSON (about 4 KB a
        # job in Hwang et al.'s workloads) goes, though pybatsim keeps the job until rejected
        job.json_dict = None
        self._driver().submit(task, self.bs.time())
        self._task_event = True

    def onJobCompletion(self, job: Job) -> None:
        if not is_twin(job.id):
            raise ValueError(
                f"job {job.id} completed, but hetsched schedulers only execute twins"
            )
        if job.job_state is not Job.State.COMPLETED_SUCCESSFULLY:
            logger.warning("twin %s ended in state %s", job.id, job.job_state.name)
        self._driver().complete(original_job_id(job.id), self.bs.time())
        self._task_event = True
        self._forget(job.id)

    def onJobsKilled(self, jobs: list[Job]) -> None:
        # Batsim also sends JOB_COMPLETED (COMPLETED_KILLED) for every job really killed
        # (src/server.cpp, server_on_killing_done): the nodes are released there.
        logger.warning("jobs killed: %s", ", ".join(job.id for job in jobs))

    def onJobMessage(self, timestamp: float, job: Job, message: object) -> None:
        raise ValueError(
            f"job {job.id} sent a message at {timestamp}: hetsched twins never communicate"
            " with the scheduler (FROM_JOB_MSG is not supported)"
        )

    # ------------------------------------------------------------ resources
    def onMachinePStateChanged(self, nodeid: tuple[int, int], pstate: str) -> None:
        system = self._driver().system
        first, last = nodeid
        wrong = [node for node in range(first, last + 1) if system.pstate(node) != int(pstate)]
        if wrong:
            raise ValueError(
                f"Batsim says resources {node_set(wrong)} switched to P-state {pstate}, which"
                " the scheduler did not ask for"
            )

    def onReportEnergyConsumed(self, consumed_energy: float) -> None:
        logger.info("consumed energy reported by Batsim: %s J", consumed_energy)

    def onAddResources(self, to_add: ProcSet) -> None:
        raise ValueError(f"resources {to_add} added: hetsched does not support dynamic platforms")

    def onRemoveResources(self, to_remove: ProcSet) -> None:
        raise ValueError(
            f"resources {to_remove} removed: hetsched does not support dynamic platforms"
        )

    def onNotifyEventMachineUnavailable(self, machines: ProcSet) -> None:
        raise ValueError(
            f"machines {machines} became unavailable: hetsched does not support"
            " machine failures (Batsim --events)"
        )

    def onNotifyEventMachineAvailable(self, machines: ProcSet) -> None:
        raise ValueError(
            f"machines {machines} became available: hetsched does not support"
            " machine failures (Batsim --events)"
        )

    def onNotifyGenericEvent(self, event_data: dict[str, Any]) -> None:
        logger.info("external event ignored: %s", event_data)

    # -------------------------------------------------------------- timing
    def onRequestedCall(self) -> None:
        now = self.bs.time()
        self._pending_calls = {t for t in self._pending_calls if t > now + EPSILON}

    def onNoMoreJobsInWorkloads(self) -> None:
        self._driver().no_more_tasks(self.bs.time())
        self._task_event = True

    def onNoMoreExternalEvents(self) -> None:
        logger.info("no more external event to occur")

    def onNoMoreEvents(self) -> None:
        if self.driver is None or self._ended:
            return
        now = self.bs.time()
        decisions = self.driver.advance(now, task_event=self._task_event)
        self._task_event = False
        for decision in decisions:
            if decision.action is Action.DROP:
                self.bs.reject_jobs_by_id([decision.task_id])
                self._forget(decision.task_id)
            else:
                self._execute_twin(decision)
        self._request_wakeup()
        self._finish_registration_when_done()

    # ------------------------------------------------------------ internals
    def _driver(self) -> MappingDriver:
        if self.driver is None:
            raise RuntimeError("Batsim sent an event before SIMULATION_BEGINS")
        return self.driver

    def _execute_twin(self, decision: Decision) -> None:
        driver = self._driver()
        cluster = driver.system.clusters[decision.cluster or ""]
        to_switch = driver.pstate_switches(decision.task_id)
        if to_switch:  # to the decision's P-state, or its task type's power level
            self.bs.set_resource_state(node_set(to_switch), driver.system.pstate(to_switch[0]))
        original = decision.task_id
        profile_name = twin_profile_name(original)
        seconds = decision.end - decision.start
        actual = self._actual.pop(original, None)
        if actual is not None:
            seconds = actual.duration(cluster.name, seconds)
        self.bs.register_profiles(
            TWIN_WORKLOAD, {profile_name: twin_profile(cluster, decision.pstate, seconds)}
        )
        twin = self.bs.register_job(twin_job_id(original), len(decision.nodes), -1, profile_name)
        twin.allocation = node_set(decision.nodes)
        self.bs.execute_job(twin)
        self.bs.reject_jobs_by_id([original])
        self._forget(original)

    def _forget(self, job_id: str) -> None:
        """Drop a job pybatsim will not hear of again (a rejected original, a completed twin)
        from its ``Batsim.jobs``, which otherwise keeps every job and its JSON until the end:
        the driver's records (:attr:`MappingDriver.tasks`) are what the scheduler keeps."""
        self.bs.jobs.pop(job_id, None)

    def _request_wakeup(self) -> None:
        wakeup = self._driver().next_wakeup()
        if wakeup is None:
            return
        if any(t <= wakeup + EPSILON for t in self._pending_calls):
            return
        self.bs.wake_me_up_at(wakeup)
        self._pending_calls.add(wakeup)

    def _finish_registration_when_done(self) -> None:
        driver = self._driver()
        if self._registration_finished or not self.bs.no_more_static_jobs:
            return
        if driver.pending:
            if not driver.has_running and driver.next_wakeup() is None:
                stranded = ", ".join(t.id for t in driver.waiting)
                raise MappingError(
                    f"heuristic {driver.heuristic.name} left task(s) {stranded} waiting while"
                    " nothing runs, nothing is reserved and no task will arrive: no mapping"
                    " event can happen any more (give a period to map periodically)"
                )
            return
        self.bs.notify_registration_finished()
        self._registration_finished = True
