"""The pybatsim adapter: Batsim events in, mapping events through a heuristic, Batsim events out.

:class:`HetschedScheduler` is a pybatsim ``BatsimScheduler``. It learns the
clusters from the host properties of SIMULATION_BEGINS, turns every submitted
job into a :class:`~hetsched.core.tasks.Task`, lets a
:class:`~hetsched.core.driver.MappingDriver` run the mapping events (Khemka et
al. MIC 2015 section 3.1: on task arrival and completion; Machovec et al. 2017
section III.A: every ``period`` seconds, with CALL_ME_LATER) and enacts the
decisions as *execution twins* (DESIGN.md; names in
:mod:`hetsched.schedulers.twins`).

For a task started on nodes ``N`` of cluster ``c`` at P-state ``p``, one reply
holds, in this order:

1. SET_RESOURCE_STATE ``N`` -> ``p`` (only for the nodes of ``N`` not already at ``p``);
2. REGISTER_PROFILE ``twin.<w>.<j>`` in workload ``hetsched``:
   ``{"type": "parallel_homogeneous", "cpu": d * speed(c, p), "com": 0}``
   where ``d`` = end - start of the decision (the heuristic's model time, e.g.
   ETC(t, c) at P-state 0) and ``speed(c, p)`` the per-core speed of P-state
   ``p`` (host property ``speed_per_pstate``). A node's speed counts one core:
   SimGrid's ptask model computes a parallel task's part on a host at the
   host's ``speed``, whatever its core count, so the twin lasts exactly ``d``;
3. REGISTER_JOB ``hetsched!<w>.<j>`` (``res`` = ``len(N)``, ``walltime`` -1,
   ``subtime`` now);
4. EXECUTE_JOB of the twin on ``N``;
5. REJECT_JOB of the original ``<w>!<j>``.

A dropped task gets REJECT_JOB. Once Batsim has said
``no_more_static_job_to_submit`` and no task waits or is reserved, the reply
ends with NOTIFY ``registration_finished`` (sent once; it only forbids further
registrations, running twins still finish). While reservations or periodic
mapping events lie ahead, the reply carries CALL_ME_LATER for the next one.

Requirements on Batsim: ``--enable-dynamic-jobs`` (checked at
SIMULATION_BEGINS), no Redis, energy (``-E``) whenever a heuristic picks a
P-state other than 0 (Batsim refuses SET_RESOURCE_STATE otherwise; it does
not tell the scheduler whether ``-E`` is on). Acknowledged registrations
(``--acknowledge-dynamic-jobs``) work too: the twins' JOB_SUBMITTED are ignored.
Every node starts at P-state 0 (SimGrid's default; Batsim does not forward a
host's initial P-state).

Options (pybatsim's ``-o`` JSON): ``heuristic`` (a name of
:data:`hetsched.heuristics.registry.HEURISTICS`), ``period`` (seconds between
mapping events, or null for event-driven mapping), ``export_prefix`` (write
``<prefix>_mapping_events.csv`` at the end: time, nb_mappable, nb_decisions,
seconds of each heuristic call) and the heuristic's own parameters.
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from batsim.batsim import BatsimScheduler, Job
from procset import ProcSet

from hetsched.core.decisions import Action, Decision
from hetsched.core.driver import EPSILON, MappingDriver, MappingError
from hetsched.heuristics import registry
from hetsched.platforms.properties import clusters_from_compute_resources
from hetsched.schedulers.jobtasks import task_from_job
from hetsched.schedulers.twins import (
    TWIN_WORKLOAD,
    is_twin,
    original_job_id,
    twin_job_id,
    twin_profile_name,
)

ADAPTER_OPTIONS = ("heuristic", "period", "export_prefix")
"""Options read by the adapter; every other option is a parameter of the heuristic."""

MAPPING_EVENTS_COLUMNS = ("time", "nb_mappable", "nb_decisions", "seconds")

logger = logging.getLogger(__name__)


class BatsimSetupError(ValueError):
    """Batsim was started with options the adapter cannot work with."""


def mapping_events_path(export_prefix: str) -> Path:
    """Where the mapping-event latencies go for ``export_prefix``."""
    return Path(f"{export_prefix}_mapping_events.csv")


class HetschedScheduler(BatsimScheduler):
    """A hetsched heuristic behind pybatsim's scheduler interface.

    ``options`` is the dict pybatsim's launcher builds from ``-o JSON``.
    Subclasses fix the heuristic with the class attribute ``heuristic_name``
    (then the ``heuristic`` option may be omitted, or must name the same one).
    """

    heuristic_name: ClassVar[str | None] = None

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        options = dict(options or {})
        super().__init__(options)
        name = options.get("heuristic", self.heuristic_name)
        if name is None:
            raise ValueError(
                "option heuristic is required (one of: "
                f"{', '.join(sorted(registry.HEURISTICS))})"
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
        params = {k: v for k, v in options.items() if k not in ADAPTER_OPTIONS}
        for key in params:
            if key not in accepted:
                raise ValueError(
                    f"unknown option {key!r} for heuristic {name} (adapter options:"
                    f" {', '.join(ADAPTER_OPTIONS)}; heuristic parameters:"
                    f" {', '.join(accepted) or 'none'})"
                )
        period = options.get("period")
        if period is not None and (
            isinstance(period, bool) or not isinstance(period, int | float) or not period > 0
        ):
            raise ValueError(
                f"option period must be a number of seconds > 0 or null, got {period!r}"
            )
        export_prefix = options.get("export_prefix")
        if export_prefix is not None and not isinstance(export_prefix, str):
            raise ValueError(f"option export_prefix must be a path or null, got {export_prefix!r}")
        self.heuristic = registry.create(name, **params)
        self.period: float | None = None if period is None else float(period)
        self.export_prefix: str | None = export_prefix
        self.driver: MappingDriver | None = None
        self._pstate: dict[int, int] = {}
        self._pending_calls: set[float] = set()
        self._task_event = False
        self._registration_finished = False
        self._ended = False

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
        if self.export_prefix is not None and mapping_events_path(self.export_prefix).exists():
            raise FileExistsError(
                f"{mapping_events_path(self.export_prefix)} exists: choose another export_prefix"
            )
        clusters = clusters_from_compute_resources(self.bs.machines["compute"])
        self.driver = MappingDriver(clusters, self.heuristic, period=self.period)
        self._pstate = {node: 0 for cluster in clusters for node in cluster.resource_ids}

    def onSimulationEnds(self) -> None:
        self._ended = True
        if self.export_prefix is not None:
            self.write_mapping_events(mapping_events_path(self.export_prefix))

    def write_mapping_events(self, path: Path) -> None:
        """Write one row per heuristic call (time, nb_mappable, nb_decisions, seconds)."""
        with path.open("x", newline="") as stream:
            writer = csv.writer(stream)
            writer.writerow(MAPPING_EVENTS_COLUMNS)
            for record in self._driver().records:
                writer.writerow(
                    (record.time, record.nb_mappable, record.nb_decisions, record.seconds)
                )

    def onDeadlock(self) -> None:
        raise RuntimeError(
            "Batsim sent nothing within the timeout: it may have crashed or deadlocked"
            " (see its log); if it is only slow, raise pybatsim's --timeout"
        )

    # ------------------------------------------------------------------ jobs
    def onJobSubmission(self, job: Job) -> None:
        if is_twin(job.id):
            return  # acknowledgement of a twin we registered (--acknowledge-dynamic-jobs)
        task = task_from_job(job.json_dict, job.profile_dict, self._driver().clusters)
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
        first, last = nodeid
        for node in range(first, last + 1):
            self._pstate[node] = int(pstate)

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
        logger.info("no more static job to submit")

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
        cluster = next(c for c in driver.clusters if c.name == decision.cluster)
        to_switch = [n for n in decision.nodes if self._pstate[n] != decision.pstate]
        if to_switch:
            self.bs.set_resource_state(ProcSet(*to_switch), decision.pstate)
            for node in to_switch:
                self._pstate[node] = decision.pstate
        original = decision.task_id
        profile_name = twin_profile_name(original)
        flops = (decision.end - decision.start) * cluster.pstates[decision.pstate].speed
        self.bs.register_profiles(
            TWIN_WORKLOAD,
            {profile_name: {"type": "parallel_homogeneous", "cpu": flops, "com": 0}},
        )
        twin = self.bs.register_job(twin_job_id(original), len(decision.nodes), -1, profile_name)
        twin.allocation = ProcSet(*decision.nodes)
        self.bs.execute_job(twin)
        self.bs.reject_jobs_by_id([original])

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
        if driver.waiting or driver.reserved:
            if not driver.running and driver.next_wakeup() is None:
                stranded = ", ".join(t.id for t in driver.waiting)
                raise MappingError(
                    f"heuristic {driver.heuristic.name} left task(s) {stranded} waiting while"
                    " nothing runs, nothing is reserved and no task will arrive: no mapping"
                    " event can happen any more (give a period to map periodically)"
                )
            return
        self.bs.notify_registration_finished()
        self._registration_finished = True
