"""Model-time simulation of Hwang et al.'s pilot-job execution (IEEE TSC 2018, 5 and 6.1).

Users submit many-task applications; a
:class:`~hetsched.heuristics.fairness.two_level.TwoLevelScheduler`
is invoked when applications are submitted or terminate. Its first level shares each
platform's cores among the users with queued tasks, its second level maps the shares onto
nodes; every core then runs a *pilot job* of its user that keeps fetching that user's tasks
from the user's queue until the queue is empty. Redistribution is non-preemptive: a core
given to another user finishes its running task first, then fetches the new user's tasks.
A task's run time is set when it starts, by its platform and the co-runners its node runs
at that instant (:class:`~hetsched.workloads.corunner.CorunnerModel`).

This is a small event loop (each core's next task end and the submissions to come,
:meth:`PilotJobSimulation.step`, :meth:`PilotJobSimulation.run`) on Python lists and numpy
arrays (the class says which), with no simulator: it is the reference a Batsim run of the same
policies is checked against. Each instant is handled as a whole: task completions, then
submissions, then (if an application was submitted or terminated) one scheduling invocation,
then every idle core whose pilot's user has queued tasks starts one, and the run times of the
tasks started are computed from their nodes' occupancy after all of these starts.
:func:`shared_runs` runs several schedulers on the same inputs, sharing the stretches of
their runs between the invocations where their schedulers decide alike.

Choices where the paper is silent (tested in ``tests/studies/test_hwang_pilot_jobs.py``):

* An application *terminates* when its last task ends (not when its queue empties): a
  pilot whose queue is empty idles until the next invocation.
* When more pilots of a user ask for a task at one instant than its queue holds, the tasks
  go to pilots drawn at random ("the task is assigned to one of the pilot jobs randomly",
  sec. 6.1), from the simulation's ``seed``.
* The first level sees the tasks still *queued* (not the running ones) and distributes all
  the cores of every platform at every invocation (the paper's ``avCores``).
* A task's OneCore run time on each platform is its application's mean (the platform
  model's ``solo``, Table 3) unless the application gives every task's own
  (``Application.onecore``, the workload's ``actual`` run times: the run-time spread of
  ``workloads/gen_hwang.py``); the scheduler plans from the means either way. A user's tasks
  are fetched in order, the ones started at one instant in the order of (platform, core), as
  :class:`~hetsched.heuristics.fairness.two_level_fairness.TwoLevelFairness` takes its queue.

>>> from hetsched.workloads.corunner import CorunnerModel
>>> from hetsched.heuristics.fairness.first_level import SimpleFairness
>>> from hetsched.heuristics.fairness.second_level import AllCore
>>> from hetsched.heuristics.fairness.two_level import Platform, TwoLevelScheduler
>>> platforms = [Platform("gene", 2, CorunnerModel.paper("gene"))]
>>> apps = [Application("AutoDock", 0, tasks=4), Application("Blast", 1, tasks=4)]
>>> sim = PilotJobSimulation(platforms, apps, TwoLevelScheduler(SimpleFairness(), AllCore()))
>>> result = sim.run()
>>> result.finish.round(2).tolist()    # 2 rounds each on a node of its own (AllCore)
[1008.47, 128.0]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

import numpy as np

from hetsched.heuristics.fairness.two_level import (
    Allocation,
    Platform,
    TwoLevelScheduler,
    served_requests,
)

DENSE_SLOWDOWNS = 4_000_000
"""At most this many slowdown entries (32 MB) are kept in one array, the keys of every
platform (Table 5's platforms with Table 6's five applications: 2.45 million); beyond, a
dict per platform."""


_Key = TypeVar("_Key", int, np.ndarray)
"""A slowdown key or occupancy code: a Python int, or an int64 array of them."""


@dataclass(frozen=True)
class Application:
    """A user's many-task application: ``tasks`` tasks of application ``application`` (an
    index into the platforms' models), submitted at ``submission`` (s); ``onecore``, when
    given, each task's own OneCore run time (s) on each platform (``tasks`` rows, one column
    per platform of the simulation), else every task takes the model's mean.

    >>> Application("u1", 0, tasks=0)
    Traceback (most recent call last):
    ...
    ValueError: application u1: tasks must be >= 1, got 0
    """

    user: str
    application: int
    tasks: int
    submission: float = 0.0
    onecore: np.ndarray | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.onecore is not None and (
                np.ndim(self.onecore) != 2 or len(self.onecore) != self.tasks
                or not np.all(np.asarray(self.onecore) > 0)):
            raise ValueError(f"application {self.user}: onecore must hold one row of run"
                             f" times > 0 per task ({self.tasks})")
        if self.tasks < 1:
            raise ValueError(f"application {self.user}: tasks must be >= 1, got {self.tasks}")
        if not self.submission >= 0:
            raise ValueError(f"application {self.user}: submission must be >= 0")
        if self.application < 0:
            raise ValueError(f"application {self.user}: application index must be >= 0")


@dataclass
class Invocation:
    """One scheduling invocation: its time, the queued tasks it saw and the shares."""

    time: float
    queued: np.ndarray
    shares: np.ndarray


@dataclass
class SimulationResult:
    """Per user (rows) and platform (columns): what ran where; per user: when.

    ``tasks_run[u, j]``: tasks of user u run on platform j; ``busy[u, j]``: their run times
    summed (core-seconds); ``solo_busy[u, j]``: the same tasks' OneCore run times summed (so
    ``busy / solo_busy`` is the mean co-runner slowdown); ``submission`` and ``finish``: of
    each application.
    """

    users: tuple[str, ...]
    platforms: tuple[str, ...]
    tasks: np.ndarray
    submission: np.ndarray
    finish: np.ndarray
    tasks_run: np.ndarray
    busy: np.ndarray
    solo_busy: np.ndarray
    invocations: list[Invocation] = field(default_factory=list)

    @property
    def runtime(self) -> np.ndarray:
        """Each application's run time, submission to last task end (s)."""
        return self.finish - self.submission

    @property
    def makespan(self) -> float:
        """First submission to last task end (s)."""
        return float(self.finish.max() - self.submission.min())


class _SchedulerInputs(NamedTuple):
    """The arguments of :meth:`TwoLevelScheduler.schedule` at an invocation, in order."""

    tasks: np.ndarray
    applications: np.ndarray
    platforms: tuple[Platform, ...]
    previous: np.ndarray | None
    current: list[np.ndarray]
    running: list[np.ndarray]

    def copy(self) -> _SchedulerInputs:
        """New arrays of the same values (a scheduler may keep or change what it is given)."""
        return _SchedulerInputs(
            self.tasks.copy(), self.applications.copy(), self.platforms,
            None if self.previous is None else self.previous.copy(),
            [a.copy() for a in self.current], [a.copy() for a in self.running])


@dataclass
class _Invocation:
    """An invocation some run reached: the simulation's state (:meth:`PilotJobSimulation.
    _save`) and the scheduler's inputs there; per allocation decided at it (its
    :func:`_allocation_key`), the next invocation or the run's result."""

    state: tuple[Any, ...]
    inputs: _SchedulerInputs
    after: dict[tuple, _Invocation | SimulationResult] = field(default_factory=dict)


def _allocation_key(allocation: Allocation) -> tuple:
    """What makes two allocations the same decision: the shares' and layouts' types, shapes
    and values."""
    return tuple((a.dtype.str, a.shape, a.tobytes())
                 for a in (allocation.shares, *allocation.layouts))


def shared_runs(platforms: Sequence[Platform], applications: Sequence[Application],
                schedulers: Iterable[TwoLevelScheduler],
                seed: int | None = 0) -> Iterator[SimulationResult]:
    """The result of ``PilotJobSimulation(platforms, applications, scheduler, seed).run()``
    for each of ``schedulers`` in turn, bit for bit, sharing what the runs have in common.

    Until its first invocation a run does not depend on its scheduler, and between two
    invocations only on the state at the first and the allocation decided there. So the
    state at each invocation a run reaches is kept, with what follows each allocation
    decided at it: a later run is given the same scheduler inputs there, and while its
    scheduler decides the same allocations as an earlier run's, it follows that run
    without simulating (different policies often agree on the first invocations, and
    cells of the grid are sometimes the same run); from the first invocation where it
    decides otherwise it runs on from the kept state."""
    simulation: PilotJobSimulation | None = None
    first: _Invocation | SimulationResult | None = None
    for scheduler in schedulers:
        if simulation is None:
            simulation = PilotJobSimulation(platforms, applications, scheduler, seed)
            first = simulation._reach()
        reached = first
        while isinstance(reached, _Invocation):  # the invocations of earlier runs
            allocation = scheduler.schedule(*reached.inputs.copy())
            key = _allocation_key(allocation)
            if key not in reached.after:
                break
            reached = reached.after[key]
        if isinstance(reached, _Invocation):  # a decision no run made there: run on
            simulation.scheduler = scheduler
            simulation._restore(reached.state)
            while True:
                simulation._invoke_pending(allocation)
                following = simulation._reach()
                reached.after[key] = following
                if not isinstance(following, _Invocation):
                    break
                reached = following
                allocation = scheduler.schedule(*reached.inputs.copy())
                key = _allocation_key(allocation)
            reached = following
        assert isinstance(reached, SimulationResult)
        yield reached


class PilotJobSimulation:
    """Pilot-job execution of ``applications`` on ``platforms`` under ``scheduler``.

    ``seed`` seeds the draw of which pilots get a user's last tasks; the scheduler's
    policies carry their own seeds. ``now`` is the time of the last step.

    Per user, its queued and finished tasks are Python lists (read one at a time at an end
    handled alone, where a numpy scalar access costs as much as the rest of the event);
    what each user ran on each platform is a numpy array (added to for a window of ends at
    once). Per core (flat, core ``node * k + c``) the user of its pilot and of its
    running task and when that task ends, and per node an *occupancy code*, the number of
    tasks of each application on it in base ``k + 1`` (:meth:`_slowdown` reads a task's
    slowdown from it), are numpy arrays over every platform (``_*_all``, gathered and
    updated at once for a window of ends) with one view per platform (``_pilot``,
    ``_running``, ``_end``, ``_occupancy``).
    """

    def __init__(
        self,
        platforms: Sequence[Platform],
        applications: Sequence[Application],
        scheduler: TwoLevelScheduler,
        seed: int | None = 0,
    ) -> None:
        if not platforms or not applications:
            raise ValueError("a simulation needs platforms and applications")
        names = [p.model.applications for p in platforms]
        if any(n != names[0] for n in names):
            raise ValueError("the platforms' models must cover the same applications")
        for app in applications:
            if app.application >= len(names[0]):
                raise ValueError(
                    f"application {app.user}: index {app.application} is not one of the"
                    f" models' {len(names[0])} applications"
                )
        self.platforms = tuple(platforms)
        self.applications = tuple(applications)
        self.scheduler = scheduler
        self._rng = np.random.default_rng(seed)
        n, m = len(applications), len(platforms)
        self._nb_apps = len(names[0])
        self._app = np.array([a.application for a in applications], dtype=np.int64)
        self._app_of = self._app.tolist()
        self._tasks = [a.tasks for a in applications]
        self._tasks_array = np.array(self._tasks, dtype=np.int64)
        # per user, the index (over every user's tasks) of its first task and of the one after
        # its last: its next queued task is the latter minus its queued count
        self._after_last_array = np.cumsum(self._tasks_array)
        self._after_last = self._after_last_array.tolist()
        self._first_task = (self._after_last_array - self._tasks_array).tolist()
        self._onecore: np.ndarray | None = None  # (every task, platform), users in order
        if any(a.onecore is not None for a in applications):
            for a in applications:
                if a.onecore is not None and np.shape(a.onecore)[1] != len(platforms):
                    raise ValueError(f"application {a.user}: onecore needs one column per"
                                     f" platform ({len(platforms)})")
            self._onecore = np.concatenate([
                np.asarray(a.onecore, dtype=float) if a.onecore is not None else np.tile(
                    [p.model.solo[a.application] for p in platforms], (a.tasks, 1))
                for a in applications])
        self._app_solo = np.array([p.model.solo for p in platforms])  # [platform, application]
        self._queued = [0] * n
        self._done = [0] * n
        self._submitted = [False] * n
        self._finish = [math.nan] * n
        # per platform (views of one array over every platform's cores): the user of each
        # core's pilot and of its running task (-1: none), when that task ends (inf: none)
        cores = np.cumsum([0] + [p.cores for p in platforms])
        self._core_offset = cores[:-1]
        self._pilot_all = np.full(cores[-1], -1, dtype=np.int64)
        self._running_all = np.full(cores[-1], -1, dtype=np.int64)
        self._end_all = np.full(cores[-1], math.inf)
        self._pilot, self._running, self._end = (
            [array[a:b] for a, b in itertools.pairwise(cores)]
            for array in (self._pilot_all, self._running_all, self._end_all))
        self._cores_per_node = [p.cores_per_node for p in platforms]
        # tasks of each application running on each node, as occupancy codes (class doc)
        self._digit = [[(k + 1) ** a for a in range(self._nb_apps)]
                       for k in self._cores_per_node]
        for p, k in zip(platforms, self._cores_per_node, strict=True):
            if (k + 1) ** self._nb_apps >= 2**63:
                raise ValueError(
                    f"platform {p.name}: {self._nb_apps} applications on {k}-core nodes need"
                    f" occupancy codes up to {k + 1}^{self._nb_apps}, beyond 64-bit integers"
                )
        nodes = np.cumsum([0] + [p.nodes for p in platforms])
        self._occupancy_all = np.zeros(nodes[-1], dtype=np.int64)
        self._occupancy = [self._occupancy_all[a:b]
                           for a, b in itertools.pairwise(nodes)]
        # per platform: the digits of its occupancy codes; per core (flat): its platform,
        # its node (over every platform's nodes) and the digits of its node's code
        self._digits = np.array(self._digit, dtype=np.int64)
        self._platform_of = np.repeat(np.arange(m), [p.cores for p in platforms])
        self._node_of = np.repeat(np.arange(nodes[-1]), np.repeat(
            self._cores_per_node, [p.nodes for p in platforms])).astype(_narrowest(nodes[-1]))
        self._user_type = _narrowest(n)  # the users, -1 (no pilot) included
        self._core_digits = self._digits[self._platform_of].reshape(-1)
        self._slowdowns: list[dict[int, float]] = [{} for _ in platforms]
        # whether a slowdown's key (occupancy code, application, platform) fits in int64
        self._keys_fit = max((k + 1) ** self._nb_apps for k in self._cores_per_node) \
            * self._nb_apps * m < 2**63
        # the slowdowns of every platform's keys in one array (NaN: not computed yet), at
        # platform j's offset + key, when all of them take at most DENSE_SLOWDOWNS entries
        sizes = [(k + 1) ** self._nb_apps * self._nb_apps for k in self._cores_per_node]
        self._dense_offset = np.cumsum([0, *sizes[:-1]])
        self._dense: np.ndarray | None = (np.full(sum(sizes), math.nan)
                                          if sum(sizes) <= DENSE_SLOWDOWNS else None)
        # slowdown - 1 of a task of a per co-runner task of b: sigma_a (p_b + q_ab) / (k - 1)
        self._interference = [
            p.model.sensitivity[:, None] * (p.model.pressure[None, :] + p.model.pair)
            / max(1, p.cores_per_node - 1) for p in platforms]
        self._shares: np.ndarray | None = None
        self._tasks_run = np.zeros((n, m), dtype=np.int64)
        self._busy = np.zeros((n, m))
        self._solo_busy = np.zeros((n, m))
        self._invocations: list[Invocation] = []
        self._pending: float | None = None  # the time of an invocation due, not made yet
        # the submissions to come, in time order, from self._arrivals[self._next_arrival]
        self._arrivals = sorted((a.submission, user) for user, a in enumerate(applications))
        self._next_arrival = 0
        # the shortest OneCore run time, on any platform, of each task and those after it
        # of its user (no task runs shorter: slowdowns are >= 1, the models' pressures,
        # pair terms and sensitivities being >= 0)
        shortest = (self._onecore.min(axis=1) if self._onecore is not None
                    else np.repeat(self._app_solo.min(axis=0)[self._app], self._tasks))
        self._shortest_after = np.concatenate([
            np.minimum.accumulate(shortest[a:a + t][::-1])[::-1]
            for a, t in zip(self._first_task, self._tasks, strict=True)])
        self.now = 0.0

    def _counts(self, j: int, codes: int | np.ndarray) -> np.ndarray:
        """The tasks of each application (columns) on nodes of occupancy ``codes``."""
        k = self._cores_per_node[j]
        return (np.asarray(codes, dtype=np.int64)[..., None] // self._digits[j]) % (k + 1)

    def _slowdown_key(self, code: _Key, app: _Key) -> _Key:
        """The key of the slowdown of a task of ``app`` started on a node whose occupancy code,
        the task included, is ``code``, in its platform's cache (:meth:`_slowdown`): ``code x
        applications + app``; Python ints (keys may pass 2**63), or int64 arrays when
        ``_keys_fit``."""
        return code * self._nb_apps + app

    def _slowdown(self, j: int, key: int) -> float:
        """``C / S`` of the task of slowdown key ``key`` (:meth:`_slowdown_key`, a Python int)
        on platform ``j`` (computed once per key: occupancy code and application)."""
        slowdown = self._slowdowns[j].get(key)
        if slowdown is None:
            code, app = divmod(key, self._nb_apps)
            interference = self._interference[j][app]
            slowdown = (1.0 + float(interference @ self._counts(j, code))
                        - float(interference[app]))
            self._slowdowns[j][key] = slowdown
        return slowdown

    def _slowdowns_of(self, code: np.ndarray, app: np.ndarray, on: np.ndarray) -> np.ndarray:
        """The slowdowns (:meth:`_slowdown`) of tasks of ``app`` started on nodes of
        occupancy ``code`` (the task included) of platforms ``on``: read from the dense
        array when there is one (computing those not computed yet), else each (key,
        platform) looked up once in the caches."""
        if self._dense is not None:
            key = self._slowdown_key(code, app)
            index = self._dense_offset[on] + key
            slowdown = self._dense[index]
            for i in np.flatnonzero(np.isnan(slowdown)).tolist():
                slowdown[i] = self._dense[index[i]] = self._slowdown(int(on[i]), int(key[i]))
            return slowdown
        m = len(self.platforms)
        if self._keys_fit:
            unique, inverse = np.unique(self._slowdown_key(code, app) * m + on,
                                        return_inverse=True)
            keys = unique.tolist()
        else:  # in Python integers
            inverse = None
            keys = [self._slowdown_key(c, a) * m + j for c, a, j in zip(
                code.tolist(), app.tolist(), on.tolist(), strict=True)]
        values = [self._slowdown(key % m, key // m) for key in keys]
        return np.array(values) if inverse is None else np.array(values)[inverse]

    def _next_task(self) -> np.ndarray:
        """Per user, the index (over every user's tasks) of its next queued task."""
        return self._after_last_array - np.array(self._queued, dtype=np.int64)

    def _lookahead(self) -> float:
        """No task started from now on runs shorter than this: the shortest OneCore run time
        of the tasks still queued (a margin of 0.1 % covers the rounding of a slowdown's
        ``1 + x - y``); inf when none is queued."""
        following = [after - queued for after, queued
                     in zip(self._after_last, self._queued, strict=True) if queued]
        if not following:
            return math.inf
        return 0.999 * float(self._shortest_after[following].min())

    def _arrival(self) -> float:
        """When the next application is submitted (inf: none left)."""
        if self._next_arrival < len(self._arrivals):
            return self._arrivals[self._next_arrival][0]
        return math.inf

    def step(self) -> bool:
        """Handle every event of the next instant; False when nothing is left to happen."""
        if not self._instant():
            return False
        if self._pending is not None:
            self._invoke_pending()
        return True

    def _instant(self) -> bool:
        """Handle the events of the next instant but the invocation they may call for (left
        due in ``_pending``, with the starts after it); False when nothing is left to happen."""
        now = min(self._arrival(), float(self._end_all.min()))
        if now == math.inf:
            return False
        self.now = now
        invoke = False
        freed: dict[int, np.ndarray] = {}
        for j, end in enumerate(self._end):
            ended = np.flatnonzero(end == now)
            if ended.size == 0:
                continue
            end[ended] = math.inf
            users = self._running[j][ended]
            self._running[j][ended] = -1
            for user, count in enumerate(np.bincount(users, minlength=len(self._done)).tolist()):
                self._done[user] += count
            np.subtract.at(self._occupancy[j], ended // self._cores_per_node[j],
                           self._digits[j][self._app[users]])
            freed[j] = ended
        while self._arrival() == now:
            user = self._arrivals[self._next_arrival][1]
            self._next_arrival += 1
            self._submitted[user] = True
            self._queued[user] = self._tasks[user]
            invoke = True
        for user, finish in enumerate(self._finish):
            if (self._submitted[user] and self._done[user] == self._tasks[user]
                    and math.isnan(finish)):
                self._finish[user] = now
                invoke = True
        if invoke and any(self._queued):
            self._pending = now
        else:
            self._start(now, freed)
        return True

    def _complete_window(self) -> int:
        """Handle the task ends before ``first + lookahead`` (``first``: the next end), each
        alone at its instant, as if one after another; how many (0: none, :meth:`step`
        handles the next instant).

        No task started from now on runs shorter than :meth:`_lookahead`, so one started at
        or after ``first`` ends after the window: the ends in the window, read from the cores'
        end times before any of them is handled, are every event until its end whatever happens
        at them (a submission ends the window before it; two ends at one instant end it
        before them, and :meth:`step` handles that instant as a whole). They are handled with
        numpy (:meth:`_complete_ends`) up to the end of an application's last task
        (:meth:`_complete_one`), and so on; when that end calls for an invocation, the
        window stops there, the invocation due (``_pending``: :meth:`run` makes it and the
        next window starts after it). The results are those of handling every end as an
        instant of its own: the same tasks, run times (the same float products and sums) and
        additions in the same order."""
        end = self._end_all
        first = float(end.min())
        arrival = self._arrival()
        if not first < arrival:
            return 0
        inside = np.flatnonzero(end < min(first + self._lookahead(), arrival))
        time = end[inside]
        order = time.argsort()  # up to the first tie every order is this one
        time = time[order]
        tied = np.flatnonzero(time[1:] == time[:-1])
        if tied.size:  # stop before the first instant with several ends
            if tied[0] == 0:  # the first one: step() handles it
                return 0
            time = time[:tied[0]]
        flat = inside[order[:time.size]]  # platforms in order, then cores
        handled = 0
        while handled < time.size and self._pending is None:
            handled += self._complete_ends(time[handled:], flat[handled:])
            if handled < time.size:  # an application's last task: one by one
                j = int(self._platform_of[flat[handled]])
                self._complete_one(float(time[handled]), j,
                                   int(flat[handled] - self._core_offset[j]))
                handled += 1
        self.now = float(time[handled - 1])
        return handled

    def _complete_one(self, now: float, j: int, core: int) -> None:
        """The task on ``core`` of platform ``j`` ends alone at ``now``: the application
        may terminate (and the scheduler be invoked), else the core's pilot starts a task if
        its user has one queued."""
        self.now = now
        self._end[j][core] = math.inf
        running = self._running[j]
        user = running.item(core)
        running[core] = -1
        self._done[user] += 1
        node = core // self._cores_per_node[j]
        digit, occupancy = self._digit[j], self._occupancy[j]
        occupancy[node] -= digit[self._app_of[user]]
        if self._done[user] == self._tasks[user]:  # the application terminates
            self._finish[user] = now
            if any(self._queued):
                self._pending = now
            return
        pilot = self._pilot[j].item(core)
        if pilot < 0 or self._queued[pilot] == 0:
            return
        queued = self._queued[pilot]
        self._queued[pilot] = queued - 1
        running[core] = pilot
        app = self._app_of[pilot]
        code = occupancy.item(node) + digit[app]  # Python ints: keys may pass 2**63
        occupancy[node] = code
        solo = float(self._app_solo[j, app] if self._onecore is None else
                     self._onecore[self._after_last[pilot] - queued, j])
        duration = solo * self._slowdown(j, self._slowdown_key(code, app))
        self._tasks_run[pilot, j] += 1
        self._busy[pilot, j] += duration
        self._solo_busy[pilot, j] += solo
        self._end[j][core] = now + duration

    def _complete_ends(self, time: np.ndarray, flat: np.ndarray) -> int:
        """The ends ``time`` (increasing, each alone at its instant, all before any task
        started here can end) on cores ``flat`` (indices over every platform's cores),
        handled at once up to the first that ends an application's last task; how many.

        With no invocation the pilots stay, so at each end, as :meth:`_complete_one` would,
        the core's pilot starts its user's next queued task if there is one (the ``k``-th
        end here of a pilot of user ``u`` starts ``u``'s ``k``-th next task while its queue
        lasts), else the core idles; each node's occupancy after each end is its occupancy
        before the window plus the changes of the ends before on that node (a cumulative
        sum along the ends grouped by node, each group starting from its node's occupancy),
        which gives each started task's slowdown (read from the cache of :meth:`_slowdown`).
        The starts are taken grouped by user, each user's in time order: each table cell
        (user, platform) gets its additions in the order one end after another gives."""
        users = len(self.applications)
        running = self._running_all[flat]
        ended = np.bincount(running, minlength=users).tolist()
        if any(count and count >= tasks - done for count, tasks, done
               in zip(ended, self._tasks, self._done, strict=True)):
            rank = _ranks(running)  # earlier ends here of the same user's tasks
            n = int(np.flatnonzero(np.array(self._done, dtype=np.int64)[running] + rank + 1
                                   == self._tasks_array[running])[0])
            if n == 0:
                return 0
            time, flat, running = time[:n], flat[:n], running[:n]
            ended = np.bincount(running, minlength=users).tolist()
        n = running.size
        pilot = self._pilot_all[flat]
        # the ends by the user of their pilot (no pilot first), each user's in time order
        by_user = np.argsort(pilot.astype(self._user_type), kind="stable")
        grouped = pilot[by_user] + 1  # 0: no pilot
        asked = np.bincount(grouped, minlength=users + 1)
        fetched = np.arange(n) - (np.cumsum(asked) - asked)[grouped]  # earlier asks here
        starts = fetched < np.array([0, *self._queued], dtype=np.int64)[grouped]
        started = by_user[starts]  # the ends that start a task, by user then time
        user = grouped[starts] - 1
        cores = flat[started]
        app = self._app[user]
        digit = flat * self._nb_apps  # where the digits of each end's node start
        delta = -self._core_digits[digit + self._app[running]]
        delta[started] += self._core_digits[digit[started] + app]
        # each node's occupancy code after each end: its ends grouped (in time order), the
        # first of a group adding its node's occupancy before minus the previous group's after
        by_node = np.argsort(self._node_of[flat], kind="stable")
        node = self._node_of[flat[by_node]]
        step = delta[by_node]
        opens = np.empty(n, dtype=bool)
        opens[0] = True
        np.not_equal(node[1:], node[:-1], out=opens[1:])
        head = np.flatnonzero(opens)
        nodes = node[head]
        before = self._occupancy_all[nodes]
        after = before + np.add.reduceat(step, head)
        before[1:] -= after[:-1]
        step[head] += before
        code = np.empty(n, dtype=np.int64)
        code[by_node] = np.cumsum(step)
        self._occupancy_all[nodes] = after
        on = self._platform_of[cores]
        slowdown = self._slowdowns_of(code[started], app, on)
        if self._onecore is None:
            solo = self._app_solo[on, app]
        else:
            solo = self._onecore.reshape(-1)[  # one index: (task, platform) in the rows
                (self._next_task()[user] + fetched[starts]) * len(self.platforms) + on]
        duration = solo * slowdown
        self._end_all[flat] = math.inf
        self._end_all[cores] = time[started] + duration
        self._running_all[flat] = -1
        self._running_all[cores] = user
        for u, count in enumerate(ended):
            self._done[u] += count
        for u, count in enumerate(asked[1:].tolist()):
            self._queued[u] -= min(count, self._queued[u])
        self._accumulate(user * len(self.platforms) + on, duration, solo)
        return n

    def _layouts(self, flat: list[np.ndarray]) -> list[np.ndarray]:
        """Per platform, a copy of ``flat``'s users of each core, nodes x cores per node."""
        return [np.array(users, dtype=np.int64).reshape(p.nodes, p.cores_per_node)
                for users, p in zip(flat, self.platforms, strict=True)]

    def _invoke_pending(self, allocation: Allocation | None = None) -> None:
        """Make the invocation due (``allocation``: what the scheduler decides at it, if
        already asked), then every idle core whose pilot's user has queued tasks starts one
        (the pilots may have moved)."""
        now = self._pending
        assert now is not None
        self._pending = None
        inputs = self._scheduler_inputs()
        if allocation is None:
            allocation = self.scheduler.schedule(*inputs)
        self._shares = allocation.shares
        for pilot, layout in zip(self._pilot, allocation.layouts, strict=True):
            pilot[:] = layout.reshape(-1)
        self._invocations.append(Invocation(now, inputs.tasks, allocation.shares))
        self._start(now, None)

    def _scheduler_inputs(self) -> _SchedulerInputs:
        """What the scheduler is given at an invocation now (new arrays)."""
        return _SchedulerInputs(np.array(self._queued, dtype=np.int64), self._app,
                                self.platforms, self._shares, self._layouts(self._pilot),
                                self._layouts(self._running))

    def _start(self, now: float, freed: dict[int, np.ndarray] | None) -> None:
        """Every idle core whose pilot's user has queued tasks starts one of them; only the
        cores ``freed`` at this instant (per platform) can be such when the pilots stayed
        (``None``: look at every core)."""
        queued = np.array(self._queued, dtype=np.int64)
        requests = []
        for j, (pilot, running) in enumerate(zip(self._pilot, self._running, strict=True)):
            if freed is None:
                idle = np.flatnonzero((running < 0) & (pilot >= 0))
                idle = idle[queued[pilot[idle]] > 0]
                owners = pilot[idle]
            elif j in freed:  # freed[j]: increasing cores
                owners = pilot[freed[j]]
                keep = owners >= 0
                keep[keep] = queued[owners[keep]] > 0
                idle, owners = freed[j][keep], owners[keep]
            else:
                continue
            requests.append((np.full(idle.size, j), idle, owners))
        if not requests:
            return
        platform = np.concatenate([r[0] for r in requests])
        if platform.size == 0:
            return
        cores = np.concatenate([r[1] for r in requests])
        users = np.concatenate([r[2] for r in requests])
        keep = served_requests(self._rng, users, queued)
        if keep is not None:
            platform, cores, users = platform[keep], cores[keep], users[keep]
        # the k-th start of a user here takes its next queued task but k
        task = self._next_task()[users] + _ranks(users)
        for user in users.tolist():
            self._queued[user] -= 1
        for j in np.unique(platform):
            mine = platform == j
            self._run(int(j), cores[mine], users[mine], task[mine], now)

    def _run(self, j: int, cores: np.ndarray, users: np.ndarray, task: np.ndarray,
             now: float) -> None:
        """Start tasks ``task`` (indices over every user's tasks) of ``users`` on ``cores``
        (flat indices) of platform ``j``."""
        platform = self.platforms[j]
        model = platform.model
        running = self._running[j]
        k = platform.cores_per_node
        apps = self._app[users]
        occupancy = self._occupancy[j]
        nodes = cores // k
        running[cores] = users
        np.add.at(occupancy, nodes, self._digits[j][apps])
        corunners = self._counts(j, occupancy[nodes])
        corunners[np.arange(apps.size), apps] -= 1
        solo = model.solo[apps] if self._onecore is None else self._onecore[task, j]
        duration = solo * model.slowdown(apps, corunners)
        self._accumulate(users * len(self.platforms) + j, duration, solo)
        self._end[j][cores] = now + duration

    def _accumulate(self, cells: np.ndarray, duration: np.ndarray, solo: np.ndarray) -> None:
        """Count the tasks started on ``cells`` (``user x platforms + platform``) with their
        run and OneCore times, each table cell's additions in the order given (``add.at``)."""
        for table, addends in ((self._tasks_run, 1), (self._busy, duration),
                               (self._solo_busy, solo)):
            np.add.at(table.reshape(-1), cells, addends)

    def run(self) -> SimulationResult:
        """Step until every application has finished; its :class:`SimulationResult`."""
        while self._proceed():
            self._invoke_pending()
        return self._result()

    def _proceed(self) -> bool:
        """Handle the events up to the next invocation (True: it is due, ``_pending``) or to
        the end (False): lone ends in windows, else an instant at a time."""
        while self._pending is None:
            if not (self._complete_window() or self._instant()):
                return False
        return True

    def _reach(self) -> _Invocation | SimulationResult:
        """Handle the events up to the next invocation (its state and scheduler inputs) or
        to the end (the result)."""
        if self._proceed():
            return _Invocation(self._save(), self._scheduler_inputs())
        return self._result()

    def _save(self) -> tuple[Any, ...]:
        """A copy of everything the events and invocations change (:meth:`_restore`); the
        slowdown caches, which only grow and hold the model's values, are not part of it."""
        return (self._pilot_all.copy(), self._running_all.copy(), self._end_all.copy(),
                self._occupancy_all.copy(), self._tasks_run.copy(), self._busy.copy(),
                self._solo_busy.copy(), list(self._queued), list(self._done),
                list(self._submitted), list(self._finish), self._shares,
                list(self._invocations), self._next_arrival, self.now, self._pending,
                self._rng.bit_generator.state)

    def _restore(self, state: tuple[Any, ...]) -> None:
        """Back to the state :meth:`_save` gave (the arrays in place: the per-platform views
        stay valid)."""
        (pilot, running, end, occupancy, tasks_run, busy, solo_busy, queued, done, submitted,
         finish, self._shares, invocations, self._next_arrival, self.now, self._pending,
         self._rng.bit_generator.state) = state
        for mine, saved in ((self._pilot_all, pilot), (self._running_all, running),
                            (self._end_all, end), (self._occupancy_all, occupancy),
                            (self._tasks_run, tasks_run), (self._busy, busy),
                            (self._solo_busy, solo_busy)):
            mine[:] = saved
        self._queued, self._done, self._submitted, self._finish = (
            list(queued), list(done), list(submitted), list(finish))
        self._invocations = list(invocations)

    def _result(self) -> SimulationResult:
        """The run's :class:`SimulationResult`, once nothing is left to happen."""
        if any(math.isnan(f) for f in self._finish):
            stuck = [a.user for a, f in zip(self.applications, self._finish, strict=True)
                     if math.isnan(f)]
            raise RuntimeError(f"applications {', '.join(stuck)} never finished")
        return SimulationResult(
            tuple(a.user for a in self.applications),
            tuple(p.name for p in self.platforms),
            np.array(self._tasks, dtype=np.int64),
            np.array([a.submission for a in self.applications]),
            np.array(self._finish),
            np.array(self._tasks_run, dtype=np.int64),
            np.array(self._busy),
            np.array(self._solo_busy),
            list(self._invocations),
        )


def _ranks(values: np.ndarray) -> np.ndarray:
    """For each entry, how many entries before it hold the same value.

    >>> _ranks(np.array([3, 1, 3, 3, 1])).tolist()
    [0, 0, 1, 2, 1]
    """
    order = np.argsort(values, kind="stable")
    rank = np.empty_like(order)
    ordered = values[order]
    rank[order] = np.arange(order.size) - np.searchsorted(ordered, ordered)
    return rank


def _narrowest(count: int) -> type[np.signedinteger]:
    """The narrowest signed integer type that holds -1 and 0 to ``count`` - 1: a stable
    sort of 16-bit integers is a radix sort (numpy), several times faster than on int64.

    >>> _narrowest(2_400).__name__, _narrowest(70_000).__name__
    ('int16', 'int64')
    """
    return np.int16 if count <= np.iinfo(np.int16).max else np.int64
