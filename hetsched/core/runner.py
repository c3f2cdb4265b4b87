"""The model-time runner: the mapping driver replayed in model time, without any simulator.

A small event loop in SimPy's style (a heap of timed events, :meth:`ModelTimeRunner.step`,
:meth:`ModelTimeRunner.run`): tasks arrive at their arrival times, a started task completes
after its planned duration (times its actual/planned ratio when it has an
:class:`~hetsched.core.actual.ActualRunTime`), and the driver is woken up when it asks
(reservations, periodic mapping events). It drives the very same
:class:`~hetsched.core.driver.MappingDriver` and heuristic as the pybatsim adapter does, so a
heuristic gives the same schedule here as on the embedded engine or Batsim (a test checks it on
a real trace day); what it lacks is SimGrid: no energy beyond the driver's power model, no
microsecond rounding, no Batsim output files. Use it for benchmarks, for studies that need no
simulator, and in tests. The engine stays the reference.

All events at one instant are handled as one simulator message: completions, then arrivals
(in Batsim's submission order: by arrival time, then by job id compared as a string, as
Batsim's job submitter sorts them, so ``w0!10`` before ``w0!9``), then the end of the workload
after the last arrival, then one call of :meth:`MappingDriver.advance` (a mapping event when a
task arrived or completed).

>>> from hetsched.core.system import Cluster
>>> from hetsched.core.tasks import Task
>>> from hetsched.heuristics.baselines.backfilling import Fcfs
>>> tasks = [Task("w0!1", 0.0, 4, {"c": 10.0}), Task("w0!2", 1.0, 4, {"c": 5.0})]
>>> runner = ModelTimeRunner([Cluster("c", 4, (0,))], Fcfs(), tasks)
>>> [(r.task.id, r.started, r.ended) for r in runner.run()]
[('w0!1', 0.0, 10.0), ('w0!2', 10.0, 15.0)]
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping, Sequence

from hetsched.core.actual import ActualRunTime
from hetsched.core.decisions import Action, Decision
from hetsched.core.driver import MappingDriver
from hetsched.core.mapping import Heuristic
from hetsched.core.state import TaskRecord, TaskState
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task

_COMPLETION, _ARRIVAL, _WAKEUP = 0, 1, 2
"""Event kinds, in the order they are handled at one instant."""


class ModelTimeRunner:
    """Replays ``tasks`` through a :class:`MappingDriver` running ``heuristic``.

    ``actual`` maps task ids to their actual run times (hidden from the heuristic, as on
    the engine); the other keywords are the driver's. ``now`` is the time of the last step.
    """

    def __init__(
        self,
        clusters: Sequence[Cluster],
        heuristic: Heuristic,
        tasks: Sequence[Task],
        *,
        actual: Mapping[str, ActualRunTime] | None = None,
        period: float | None = None,
        energy_budget: float | None = None,
        measure_window: tuple[float, float] | None = None,
        early_start: bool = True,
    ) -> None:
        self.driver = MappingDriver(
            clusters, heuristic, period=period, energy_budget=energy_budget,
            measure_window=measure_window, early_start=early_start,
        )
        self._actual = dict(actual or {})
        self._heap: list[tuple[float, int, int, object]] = []
        self._sequence = itertools.count()
        self._wakeups: set[float] = set()
        self._last_arrival = max((task.arrival for task in tasks), default=0.0)
        self._arrivals_left = len(tasks)
        self.now = 0.0
        for task in sorted(tasks, key=lambda t: (t.arrival, t.id)):  # Batsim's order
            self._push(task.arrival, _ARRIVAL, task)
        if not tasks:
            self.driver.no_more_tasks(0.0)

    def _push(self, at: float, kind: int, payload: object) -> None:
        heapq.heappush(self._heap, (at, kind, next(self._sequence), payload))

    def step(self) -> bool:
        """Handle every event of the next instant; False when nothing is left to happen."""
        if not self._heap:
            return False
        now = self._heap[0][0]
        self.now = now
        driver = self.driver
        task_event = False
        while self._heap and self._heap[0][0] == now:
            _, kind, _, payload = heapq.heappop(self._heap)
            if kind == _COMPLETION:
                driver.complete(payload, now)  # type: ignore[arg-type]
                task_event = True
            elif kind == _ARRIVAL:
                driver.submit(payload, now)  # type: ignore[arg-type]
                self._arrivals_left -= 1
                task_event = True
                if not self._arrivals_left:
                    driver.no_more_tasks(now)
            else:
                self._wakeups.discard(now)
        for decision in driver.advance(now, task_event=task_event):
            if decision.action is not Action.DROP:
                self._push(self._end_of(decision), _COMPLETION, decision.task_id)
        wakeup = driver.next_wakeup()
        if wakeup is not None and wakeup not in self._wakeups:
            self._wakeups.add(wakeup)
            self._push(wakeup, _WAKEUP, None)
        return True

    def _end_of(self, decision: Decision) -> float:
        planned = decision.end - decision.start
        actual = self._actual.get(decision.task_id)
        seconds = planned if actual is None else actual.duration(decision.cluster or "", planned)
        return self.driver.now + seconds

    def run(self, until: float | None = None) -> tuple[TaskRecord, ...]:
        """Step until nothing is left to happen (or the next instant is after ``until``);
        return every task's record. ValueError when tasks are left waiting for ever."""
        while self._heap and (until is None or self._heap[0][0] <= until):
            self.step()
        if until is None:
            stranded = [r.task.id for r in self.driver.tasks if r.state in _PENDING]
            if stranded:
                raise ValueError(
                    f"heuristic {self.driver.heuristic.name} left task(s)"
                    f" {', '.join(stranded[:5])}{' ...' if len(stranded) > 5 else ''} unmapped"
                    " with nothing left to happen (give a period to map periodically)"
                )
        return self.driver.tasks


_PENDING = (TaskState.WAITING, TaskState.RESERVED)
