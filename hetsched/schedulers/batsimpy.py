"""A hetsched heuristic making the decisions inside a batsim-py loop.

batsim-py 1.0.5 (``SimulatorHandler``) starts ``batsim`` itself and lets a Python loop drive it
(``proceed_time``, ``allocate``, ``reject_job``). :class:`BatsimPyMapper` puts a
:class:`~hetsched.core.driver.MappingDriver` behind that loop: it learns the clusters from the
host properties batsim-py keeps (``Host.metadata``), turns every submitted job into a
:class:`~hetsched.core.tasks.Task`, runs the mapping events (Khemka et al., MIC 2015, section
3.1: on arrival and completion; Machovec et al. 2017, section III.A: every ``period`` seconds)
and enacts the decisions with batsim-py's own calls::

    mapper = BatsimPyMapper(registry.create("max-vpr"))
    simulator = simulator_handler()          # batsim-py's handler, on Batsim's own clock
    mapper.attach(simulator)
    simulator.start(platform="platform.xml", workload="workload.json")
    while simulator.is_running:
        mapper.schedule()                    # START -> allocate, DROP -> reject_job
        simulator.proceed_time()

What batsim-py cannot do, and what the mapper therefore refuses with
:class:`BatsimPyLimitation` (naming the task) rather than simulate wrongly (docs/batsim-py.md
has the errors observed):

- batsim-py never registers dynamic jobs, so there are no *execution twins*
  (docs/architecture.md): a job runs its own static profile on the hosts it gets. A START is
  enacted only when the heuristic's planned duration is what that profile takes on the chosen
  cluster (:func:`static_run_time`) and its node count is the job's ``res`` (batsim-py's
  ``allocate`` takes exactly ``res`` hosts). Heterogeneous ETCs and moldable node counts are
  refused; so are ``actual`` run times (they need a twin's profile).
- Energy: a ``delay`` profile does not compute, so SimGrid charges its hosts idle power, while
  the driver's energy meter charges busy power for a running task. With an energy budget
  (the heuristics that read ``system.energy_consumed``), a START of a job with a ``delay``
  profile is refused; ``parallel_homogeneous`` static profiles give Batsim's energy exactly.
- P-states: batsim-py reads a host's power states from ``watt_per_state`` (SimGrid 3.2x);
  Batsim 4.2 platforms (SimGrid 3.32) have ``wattage_per_state``, so its hosts have none and
  ``switch_power_state`` raises. A decision that changes a node's P-state is refused.

Choices: CALL_ME_LATER for a wake-up at ``t`` is asked for ``t - 0.09`` because batsim-py
adds 0.09 s to every callback time ("last batsim priority"), so reservations and periodic
mapping events happen at their own times. Energy budget and measure window are constructor
parameters: batsim-py does not keep the workload paths of SIMULATION_BEGINS.

>>> from hetsched.heuristics import registry
>>> mapper = BatsimPyMapper(registry.create("easy"), period=60)
>>> mapper.period, mapper.driver is None
(60.0, True)
>>> static_run_time({"type": "delay", "delay": 12.5}, speed=2e9, nb_hosts=3)
12.5
>>> static_run_time({"type": "parallel_homogeneous_total", "cpu": 6e9, "com": 0},
...                 speed=1e9, nb_hosts=3)
2.0
>>> static_run_time({"type": "parallel", "cpu": [1e9], "com": [0]}, speed=1e9, nb_hosts=1)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import cache
from typing import Any

from hetsched.core.decisions import Action, Decision
from hetsched.core.driver import EPSILON, MappingDriver, MappingError
from hetsched.core.mapping import Heuristic
from hetsched.core.state import TaskRecord
from hetsched.platforms.properties import clusters_from_compute_resources
from hetsched.workloads.job_tasks import task_from_job

BATSIM_PY_VERSION = "1.0.5"
"""The batsim-py release this module is written and tested against."""

CALLBACK_DELAY = 0.09
"""Seconds batsim-py 1.0.5 adds to every CALL_ME_LATER it sends ("last batsim priority")."""

INSTALL_HINT = (
    f"batsim-py is not installed: pip install --no-deps batsim-py=={BATSIM_PY_VERSION} and"
    " pip install 'hetsched[batsim-py]' (its pins, pandas==0.25.3 and zmq==0.0.0, do not"
    " build on Python 3.11; docs/batsim-py.md)"
)

logger = logging.getLogger(__name__)


class BatsimPyLimitation(ValueError):
    """A decision or a job that batsim-py's SimulatorHandler cannot enact faithfully."""


def _batsim_py() -> Any:
    try:
        import batsim_py
    except ImportError as error:
        raise ImportError(INSTALL_HINT) from error
    return batsim_py


@cache
def _exact_clock_handler_class() -> type:
    handler: Any = _batsim_py().SimulatorHandler

    class ExactClockSimulatorHandler(handler):
        """batsim-py's ``SimulatorHandler`` whose ``current_time`` is Batsim's ``now``.

        batsim-py 1.0.5 floors its clock (``math.floor``) and stamps every request with it:
        at ``now = 5.5`` an EXECUTE_JOB goes out at 5.0, which Batsim (and the embedded
        engine) applies late, at 5.5, while batsim-py records 5.0. This subclass reads the
        unfloored time batsim-py keeps, so that the mapper's view is Batsim's.
        """

        @property
        def current_time(self) -> float:
            return float(self._SimulatorHandler__current_time)

    return ExactClockSimulatorHandler


def simulator_handler(tcp_address: str | None = None) -> Any:
    """A batsim-py ``SimulatorHandler`` on Batsim's own clock (non-integer times work).

    Needs ``batsim`` on ``PATH``, as batsim-py does; ``hetsched batsim`` behind a two-line
    wrapper script serves (docs/batsim-py.md).
    """
    return _exact_clock_handler_class()(tcp_address)


def static_run_time(profile: Mapping[str, Any], speed: float | None, nb_hosts: int
                    ) -> float | None:
    """Seconds a Batsim profile runs on ``nb_hosts`` hosts of ``speed`` flop/s per core, or
    ``None`` when that needs SimGrid (communication, traces, sequences) or a speed the
    platform does not give (``speed`` ``None``: :attr:`hetsched.core.system.Cluster.speed`).

    ``delay``: its delay; ``parallel_homogeneous`` with ``com`` 0: ``cpu / speed``;
    ``parallel_homogeneous_total`` with ``com`` 0: ``cpu / nb_hosts / speed``.
    """
    kind = profile.get("type")
    if kind == "delay":
        return float(profile["delay"])
    if (kind in ("parallel_homogeneous", "parallel_homogeneous_total")
            and not profile.get("com") and speed is not None):
        flops = float(profile["cpu"])
        if kind == "parallel_homogeneous_total":
            flops /= nb_hosts
        return flops / speed
    return None


def _compute_resources(platform: Any) -> list[dict[str, Any]]:
    """SIMULATION_BEGINS' ``compute_resources`` as batsim-py's ``Platform`` keeps them."""
    return [
        {"id": host.id, "name": host.name, "properties": dict(host.metadata or {})}
        for host in platform.hosts
    ]


def _job_object(job: Any) -> dict[str, Any]:
    """JOB_SUBMITTED's ``job`` object back from a batsim-py ``Job`` (its ``metadata`` holds
    every field but ``profile``, ``res``, ``id`` and ``walltime``)."""
    document = {**job.metadata, "id": job.id, "res": job.res, "subtime": job.subtime,
                "profile": job.profile.name}  # fmt: skip
    if job.walltime is not None:
        document["walltime"] = job.walltime
    return document


class BatsimPyMapper:
    """A hetsched heuristic deciding for a batsim-py ``SimulatorHandler``.

    ``heuristic`` is called at every mapping event; ``period`` (seconds, or ``None`` for
    mapping events on arrival and completion), ``energy_budget`` (J) and ``measure_window``
    (``(t0, t1)``) are the driver's (:class:`~hetsched.core.driver.MappingDriver`).
    :meth:`attach` subscribes to a handler's job events before ``start``; :meth:`schedule`,
    called before each ``proceed_time``, runs what is due and enacts it.
    """

    def __init__(
        self,
        heuristic: Heuristic,
        *,
        period: float | None = None,
        energy_budget: float | None = None,
        measure_window: tuple[float, float] | None = None,
    ) -> None:
        if period is not None and not period > 0:
            raise ValueError(f"period must be > 0 seconds or None, got {period}")
        self.heuristic = heuristic
        self.period: float | None = None if period is None else float(period)
        self.energy_budget = energy_budget
        self.measure_window = measure_window
        self.driver: MappingDriver | None = None
        self._simulator: Any = None
        self._jobs: dict[str, Any] = {}
        self._task_event = False
        self._pending_calls: set[float] = set()

    # ------------------------------------------------------------ wiring
    def attach(self, simulator: Any) -> None:
        """Follow ``simulator``'s job submissions and completions (call before ``start``).

        Attaching again to the same simulator changes nothing (so :func:`run_loop` may follow
        an explicit ``attach``); attaching to another one is refused."""
        events = _batsim_py().JobEvent
        if self._simulator is simulator:
            return
        if self._simulator is not None:
            raise RuntimeError("this mapper is already attached to another simulator")
        self._simulator = simulator
        simulator.subscribe(events.SUBMITTED, self._on_submitted)
        simulator.subscribe(events.COMPLETED, self._on_completed)

    @property
    def tasks(self) -> tuple[TaskRecord, ...]:
        """Every task: state, decision (planned cluster, nodes, P-state, times), actual times."""
        return () if self.driver is None else self.driver.tasks

    # ------------------------------------------------------------ events
    def _driver(self) -> MappingDriver:
        if self.driver is None:
            simulator = self._attached()
            if simulator.platform is None:
                raise RuntimeError("the simulation has not begun: call simulator.start first")
            clusters = clusters_from_compute_resources(_compute_resources(simulator.platform))
            self.driver = MappingDriver(
                clusters, self.heuristic, period=self.period, energy_budget=self.energy_budget,
                measure_window=self.measure_window,
            )
        return self.driver

    def _attached(self) -> Any:
        if self._simulator is None:
            raise RuntimeError("attach the mapper to a simulator first")
        return self._simulator

    def _on_submitted(self, job: Any) -> None:
        driver = self._driver()
        document = _job_object(job)
        if "actual" in document:
            raise BatsimPyLimitation(
                f"job {job.id} has an 'actual' run time: it needs an execution twin (a"
                " dynamically registered job), which batsim-py's SimulatorHandler cannot register"
            )
        profile = _batsim_py().protocol.Converters.profile_to_json(job.profile)
        task = task_from_job(document, profile, driver.clusters)
        self._jobs[job.id] = (job, profile)
        driver.submit(task, self._now())
        self._task_event = True

    def _on_completed(self, job: Any) -> None:
        if str(job.state) != "COMPLETED_SUCCESSFULLY":
            logger.warning("job %s ended in state %s", job.id, job.state)
        self._driver().complete(job.id, self._now())
        self._task_event = True

    def _now(self) -> float:
        return float(self._attached().current_time)

    # ------------------------------------------------------------ decisions
    def schedule(self) -> list[Decision]:
        """Run the mapping event or the reservations due now; enact them; return them."""
        simulator = self._attached()
        if not simulator.is_running:
            return []
        driver = self._driver()
        now = self._now()
        if simulator.is_submitter_finished and driver.system.more_tasks_expected:
            driver.no_more_tasks(now)
            self._task_event = True
        decisions = driver.advance(now, task_event=self._task_event)
        self._task_event = False
        for decision in decisions:
            if decision.action is Action.DROP:
                simulator.reject_job(decision.task_id)
            else:
                self._check_enactable(decision)
                simulator.allocate(decision.task_id, list(decision.nodes))
        self._request_wakeup(now)
        self._check_not_stranded()
        return decisions

    def _check_enactable(self, decision: Decision) -> None:
        driver = self._driver()
        job, profile = self._jobs[decision.task_id]
        cluster = driver.system.clusters[decision.cluster or ""]
        task = f"task {decision.task_id} ({driver.heuristic.name}, cluster {cluster.name})"
        if driver.pstate_switches(decision.task_id):
            raise BatsimPyLimitation(
                f"{task}: P-state {decision.pstate} asked, but batsim-py reads power states"
                " from the host property watt_per_state (SimGrid 3.2x) and Batsim 4.2 platforms"
                " have wattage_per_state: its switch_power_state raises 'Cannot get undefined"
                " power states'"
            )
        if len(decision.nodes) != job.res:
            raise BatsimPyLimitation(
                f"{task}: {len(decision.nodes)} node(s) chosen, but the job asks for res ="
                f" {job.res} and batsim-py allocates exactly res hosts (a different node count"
                " needs an execution twin, which batsim-py cannot register)"
            )
        if self.energy_budget is not None and profile.get("type") == "delay":
            raise BatsimPyLimitation(
                f"{task}: energy budget set, but the job's static profile"
                f" {job.profile.name!r} is a delay, for which SimGrid charges idle power while"
                " the heuristic's energy meter charges busy power: use parallel_homogeneous"
                " profiles (cpu = ETC x speed, com 0)"
            )
        planned = decision.end - decision.start
        speed = cluster.pstates[decision.pstate].speed if cluster.pstates else cluster.speed
        runs = static_run_time(profile, speed, job.res)
        if runs is None or abs(runs - planned) > EPSILON * max(1.0, planned):
            what = "a time only SimGrid knows" if runs is None else f"{runs!r} s"
            raise BatsimPyLimitation(
                f"{task}: planned {planned!r} s, but without execution twins the job runs its"
                f" static profile {job.profile.name!r} ({profile.get('type')}), {what} there"
            )

    def _request_wakeup(self, now: float) -> None:
        self._pending_calls = {t for t in self._pending_calls if t > now + EPSILON}
        wakeup = self._driver().next_wakeup()
        if wakeup is None or any(t <= wakeup + EPSILON for t in self._pending_calls):
            return
        self._attached().set_callback(wakeup - CALLBACK_DELAY, lambda _time: None)
        self._pending_calls.add(wakeup)

    def _check_not_stranded(self) -> None:
        driver = self._driver()
        if driver.system.more_tasks_expected or not driver.waiting:
            return
        if not driver.running and not driver.reserved and driver.next_wakeup() is None:
            stranded = ", ".join(task.id for task in driver.waiting)
            raise MappingError(
                f"heuristic {driver.heuristic.name} left task(s) {stranded} waiting while"
                " nothing runs, nothing is reserved and no task will arrive: no mapping"
                " event can happen any more (give a period to map periodically)"
            )


def run_loop(
    mapper: BatsimPyMapper, simulator: Any, platform: str, workload: str, **start: Any
) -> tuple[TaskRecord, ...]:
    """Attach ``mapper`` (if not yet), start ``simulator`` on the files, loop until Batsim
    ends; the tasks.

    ``start`` goes to ``SimulatorHandler.start`` (e.g. ``verbosity``). The simulator is closed
    (its ``batsim`` process ended) whatever happens.
    """
    mapper.attach(simulator)
    try:
        simulator.start(platform=str(platform), workload=str(workload), **start)
        while simulator.is_running:
            mapper.schedule()
            simulator.proceed_time()
    finally:
        simulator.close()
    return mapper.tasks


__all__ = [
    "BatsimPyLimitation", "BatsimPyMapper", "run_loop", "simulator_handler", "static_run_time",
]
