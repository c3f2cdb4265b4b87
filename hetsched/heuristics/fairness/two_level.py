"""One scheduling invocation of Hwang et al.'s two-level scheduler (IEEE TSC 2018, sec. 5).

The scheduler is invoked when an application is submitted or terminates. The first level
shares every platform's cores among the users with tasks in their queues; the second level
maps each platform's shares onto its nodes; every core then hosts a *pilot job* of its user
that keeps fetching that user's tasks. :meth:`TwoLevelScheduler.schedule` returns the shares
and, per platform, the user of every core (an array nodes x cores per node, -1 for an idle
core): one Batsim host per core, grouped into nodes by the host property ``node``, receives
the pilot job of that user.

Redistribution is non-preemptive (section 5): a core whose user changes finishes its running
task first. To move as few pilot jobs as possible, :func:`keep_pilots` puts each node
combination the second level decided on a node whose pilots already are those users when
there is one, else on the node with the most idle cores, and within a node keeps every user
on the cores running its tasks, giving idle cores to new pilots before busy ones (the paper
does not say where a combination goes; the co-runner effect depends only on which users share
a node).

>>> from hetsched.workloads.corunner import CorunnerModel
>>> from hetsched.heuristics.fairness.first_level import PlatformAffinityRoundRobin
>>> from hetsched.heuristics.fairness.second_level import MostAffectedFirst
>>> platforms = [Platform("gene", 2, CorunnerModel.paper("gene")),
...              Platform("cheetah", 1, CorunnerModel.paper("cheetah"))]
>>> scheduler = TwoLevelScheduler(PlatformAffinityRoundRobin(), MostAffectedFirst())
>>> allocation = scheduler.schedule(tasks=[100, 0, 100, 0, 0], applications=range(5),
...                                 platforms=platforms)
>>> allocation.shares.tolist()
[[0, 6], [0, 0], [4, 2], [0, 0], [0, 0]]
>>> [layout.tolist() for layout in allocation.layouts]   # no combination fits 6 + 2 cores
[[[2, 2], [2, 2]], [[0, 0, 0, 2, 0, 0, 0, 2]]]
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from hetsched.heuristics.fairness.affinity import CombinationTable, combination_table
from hetsched.heuristics.fairness.first_level import FirstLevelPolicy
from hetsched.heuristics.fairness.second_level import SecondLevelPolicy
from hetsched.workloads.corunner import CorunnerModel


@dataclass(frozen=True, eq=False)
class Platform:
    """A platform of ``nodes`` nodes whose run times follow ``model`` (the paper's
    ``Platform`` structure: its cores, and the run-time table its second level reads)."""

    name: str
    nodes: int
    model: CorunnerModel
    table: CombinationTable = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.nodes < 1:
            raise ValueError(f"platform {self.name}: nodes must be >= 1, got {self.nodes}")
        object.__setattr__(self, "table", combination_table(self.model))

    @property
    def cores_per_node(self) -> int:
        return self.model.cores_per_node

    @property
    def cores(self) -> int:
        return self.nodes * self.model.cores_per_node


@dataclass(frozen=True, eq=False)
class Allocation:
    """What one invocation decided: ``shares`` (users x platforms, first level) and, per
    platform, ``layouts[j]`` (nodes x cores per node: the user of each core, -1 idle)."""

    shares: np.ndarray
    layouts: tuple[np.ndarray, ...]


class TwoLevelScheduler:
    """A first-level and a second-level policy, invoked together.

    >>> from hetsched.heuristics.fairness.first_level import SimpleFairness
    >>> from hetsched.heuristics.fairness.second_level import AllCore
    >>> TwoLevelScheduler(SimpleFairness(), AllCore())
    TwoLevelScheduler(SimpleFairness(), AllCore(seed=0))
    """

    def __init__(self, first_level: FirstLevelPolicy, second_level: SecondLevelPolicy) -> None:
        self.first_level = first_level
        self.second_level = second_level

    def __repr__(self) -> str:
        return f"TwoLevelScheduler({self.first_level!r}, {self.second_level!r})"

    def clone(self) -> TwoLevelScheduler:
        """The same policies, their random draws started again."""
        return TwoLevelScheduler(self.first_level.clone(), self.second_level.clone())

    def schedule(
        self,
        tasks: Sequence[int] | np.ndarray,
        applications: Iterable[int] | np.ndarray,
        platforms: Sequence[Platform],
        previous: np.ndarray | None = None,
        current: Sequence[np.ndarray] | None = None,
        running: Sequence[np.ndarray] | None = None,
    ) -> Allocation:
        """Shares and node layouts for users with ``tasks`` queued tasks each, running
        ``applications`` (indices into the platforms' models); ``previous``: the shares of
        the last invocation; ``current``: the layouts the pilot jobs follow now, and
        ``running``: the user of each core's running task (-1 idle), per platform
        (:func:`keep_pilots`)."""
        tasks = np.asarray(tasks, dtype=np.int64)
        applications = np.fromiter(applications, dtype=np.int64)
        if applications.shape != tasks.shape:
            raise ValueError("tasks and applications need one entry per user")
        if not platforms:
            raise ValueError("no platform")
        for name, layouts in (("current", current), ("running", running)):
            if layouts is not None and len(layouts) != len(platforms):
                raise ValueError(f"{name} needs one layout per platform")
        solo = np.column_stack([p.model.solo[applications] for p in platforms])
        cores = np.array([p.cores for p in platforms], dtype=np.int64)
        shares = self.first_level.allocate(tasks, cores, solo, previous)
        layouts = []
        for j, platform in enumerate(platforms):
            layout = self.second_level.map(shares[:, j], applications, platform.nodes,
                                           platform.table)
            if current is not None:
                layout = keep_pilots(layout, current[j],
                                     None if running is None else running[j])
            layouts.append(layout)
        return Allocation(shares, tuple(layouts))


def keep_pilots(
    layout: np.ndarray, current: np.ndarray, running: np.ndarray | None = None
) -> np.ndarray:
    """``layout``'s node rows moved onto the nodes of ``current`` (the pilot layout now) so
    that pilot jobs stay where they are: a row goes to a node whose pilots are the same
    users (the first such node), the other rows to the nodes left, those with the most idle
    cores first (then in order). Within a node,
    given ``running`` (the user of each core's running task, -1 idle; ``current`` when not
    given): cores without a pilot in the row go first to busy cores, then each user keeps
    the cores running its own tasks, then takes idle cores, then the cores left. So a new
    pilot never waits on a busy core while a core of its node idles.

    A pure function of its three arrays: the answers to the last 1,024 distinct questions are
    kept (the cells of a Hwang model-time group, which follow each other's runs, ask about half
    of theirs again: docs/performance.md), and each call returns a new array.

    >>> keep_pilots(np.array([[1, 1], [0, 2], [3, 3]]), np.array([[2, 0], [3, 3], [0, 0]]))
    array([[2, 0],
           [3, 3],
           [1, 1]])
    >>> keep_pilots(np.array([[1, -1]]), np.array([[0, 1]]), running=np.array([[-1, 1]]))
    array([[ 1, -1]])
    """
    layout = np.asarray(layout)
    current = np.asarray(current)
    running = current if running is None else np.asarray(running)
    if not layout.shape == current.shape == running.shape:
        raise ValueError(
            f"layouts differ in shape: {layout.shape}, {current.shape}, {running.shape}"
        )
    key = (layout.shape, layout.dtype.str, current.dtype.str, running.dtype.str,
           layout.tobytes(), current.tobytes(), running.tobytes())
    return np.frombuffer(_kept_layout(*key), dtype=layout.dtype).reshape(layout.shape).copy()


@lru_cache(maxsize=1024)
def _kept_layout(shape: tuple[int, ...], layout_dtype: str, current_dtype: str,
                 running_dtype: str, layout: bytes, current: bytes, running: bytes) -> bytes:
    """:func:`keep_pilots` on arrays given as bytes (so that its answers can be kept)."""
    def array(data: bytes, dtype: str) -> np.ndarray:
        return np.frombuffer(data, dtype=dtype).reshape(shape)

    return _keep_pilots(array(layout, layout_dtype), array(current, current_dtype),
                        array(running, running_dtype)).tobytes()


def _keep_pilots(layout: np.ndarray, current: np.ndarray, running: np.ndarray) -> np.ndarray:
    """The rows moved as :func:`keep_pilots` says."""
    nodes_of: defaultdict[tuple[int, ...], list[int]] = defaultdict(list)
    for node in range(current.shape[0] - 1, -1, -1):
        nodes_of[tuple(sorted(current[node].tolist()))].append(node)
    result = np.empty_like(layout)
    taken = np.zeros(layout.shape[0], dtype=bool)
    moved = []
    for row in layout:
        same = nodes_of.get(tuple(sorted(row.tolist())))
        if same:
            node = same.pop()
            result[node] = _arrange(row, running[node])
            taken[node] = True
        else:
            moved.append(row)
    left = np.flatnonzero(~taken)
    idle = (running[left] < 0).sum(axis=1)
    for row, node in zip(moved, left[np.argsort(-idle, kind="stable")], strict=True):
        result[node] = _arrange(row, running[node])
    return result


def _arrange(row: np.ndarray, running: np.ndarray) -> np.ndarray:
    """``row``'s users on the cores of a node whose cores run ``running`` (-1: idle)."""
    left = Counter(row.tolist())
    out = np.full_like(row, -2)  # -2: not given yet
    busy = [core for core, user in enumerate(running.tolist()) if user >= 0]
    # 1. No pilot (-1) on busy cores, first those whose running user has no pilot here.
    for core in sorted(busy, key=lambda c: int(running[c]) in left):
        if left[-1] == 0:
            break
        out[core] = -1
        left[-1] -= 1
    # 2. Users keep the cores running their own tasks.
    for core in busy:
        user = int(running[core])
        if out[core] == -2 and left[user] > 0:
            out[core] = user
            left[user] -= 1
    # 3. The others: idle cores first, then the cores left.
    free = sorted((c for c in range(row.size) if out[c] == -2), key=lambda c: running[c] >= 0)
    rest = [u for u in sorted(left, key=lambda u: (u < 0, u)) for _ in range(left[u])]
    out[free] = rest
    return out


def served_requests(
    rng: np.random.Generator, users: np.ndarray, queued: np.ndarray
) -> np.ndarray | None:
    """Which of the pilot jobs asking for a task at one instant get one (section 6.1: when a
    user's pilots ask for more tasks than its queue holds, "the task is assigned to one of the
    pilot jobs randomly"): ``users[i]`` is the user of request ``i``'s pilot, ``queued[u]``
    the tasks user ``u`` has queued. ``None`` when every request is served (nothing drawn
    from ``rng``); else the indices of the requests served, increasing: each user's served
    requests drawn at random among its own (one permutation of all the requests).
    :class:`~hetsched.heuristics.fairness.two_level_fairness.TwoLevelFairness` and the
    model-time :class:`~hetsched.studies.hwang_pilot_jobs.PilotJobSimulation` both draw with
    it, so that they give the same schedule.

    >>> served_requests(np.random.default_rng(0), np.array([0, 1, 0]), np.array([2, 1])) is None
    True
    >>> served_requests(np.random.default_rng(0), np.array([0, 1, 0, 0]), np.array([1, 1]))
    array([1, 2])
    """
    if not np.any(np.bincount(users, minlength=queued.size) > queued):
        return None
    order = rng.permutation(users.size)
    order = order[np.argsort(users[order], kind="stable")]
    first = np.searchsorted(users[order], users[order])
    rank = np.arange(order.size) - first
    return np.sort(order[rank < queued[users[order]]])
