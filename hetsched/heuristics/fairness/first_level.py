"""First-level resource allocation policies of Hwang et al. (IEEE TSC 2018, section 5.1).

At each scheduling invocation (an application submitted or terminated) a first-level policy
decides how many cores of each platform every user gets: ``allocate(tasks, cores, solo,
previous) -> shares``, with

* ``tasks[i]``: the tasks still in user i's queue (``U[i].task``; 0 for a user with nothing
  left to run, who gets nothing);
* ``cores[j]``: the cores of platform j to distribute (``P[j].avCores``: all its cores, the
  redistribution being non-preemptive, section 5);
* ``solo[i, j]``: the OneCore run time of user i's application on platform j, from which the
  platform affinity ``P[j].PA[i]`` is computed (:mod:`hetsched.heuristics.fairness.affinity`) over
  the users with tasks, at every invocation (RPA changes with them);
* ``previous``: the shares of the previous invocation (PAF keeps users on their platforms);
* ``shares[i, j]``: ``U[i].share[j]``, never more in total than ``tasks[i]``.

Policies (Table 7):

* :class:`SimpleFairness` -- each platform's cores split equally among the users, a user's
  cores beyond its tasks going equally to the others (section 6.1);
* :class:`ProviderAffinityFirst` (PAF) and :class:`ApplicationAffinityFirst` (AAF) --
  Algorithm 1 with the favoured platforms chosen by the platforms (top k% users) or by the
  users (top k% platforms), k = 50;
* :class:`PlatformAffinityRoundRobin` (PA-based RR) -- Algorithm 2: fair shares, then users
  in turn take up to ``d_unit`` cores from their best platform with cores left.

Choices where the paper is silent (``tests/heuristics/fairness/test_first_level.py``):

* Integer division. Algorithm 1 line 14 gives ``min(demand, avCores / S[j])`` with
  ``S[j]`` the users still to serve on j; we take the floor, and since ``S[j]`` drops by one
  after each user the last one served takes what is left, so nothing is lost to rounding
  (600 cores for 7 users: 85, 85, 86, 86, 86, 86, 86). Fair shares (Algorithm 2 line 7, and
  Fastest-OneCore) water-fill the same way: users by increasing demand, each
  ``min(demand, floor(left / users left))``.
* Ties: users with equal demand in index order; a user's platforms of equal affinity by its
  shorter OneCore run time, then index (with a single user left RPA is 1 everywhere: its
  fastest platform comes first); PAF's top users by decreasing affinity, ties by index.
  Simple fairness, which ignores affinities, takes platforms in index order.
* "Top k%" is ``floor(k% x count)``: with k = 50 a single user left selects nothing, which
  is the case the paper's line 9 handles ("If only one user who still needs more cores is
  left ... no selection occurs in line 8", section 5.3.1). Line 9 then gives PAF each
  platform with cores to its highest-affinity user(s) needing cores, and AAF each platform
  with cores to the users whose affinity to it is at least the median over the users needing
  cores (section 5.3.1's rule).
* PAF keeps users on the platforms they had ("A computed allocation matrix in one run is
  provided as input for the next run", section 5.1.1): a user with a share of platform j in
  ``previous`` favours j again, besides the top k% users of j. AAF and PA-based RR ignore
  ``previous``.
* Simple fairness is Algorithm 1 with every user favouring every platform, platforms in
  index order.
* Affinities are computed once per invocation (Algorithm 1 line 6, Algorithm 2 line 6), over
  the users with tasks and the platforms with cores to distribute.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import ClassVar

import numpy as np

from hetsched.heuristics.fairness.affinity import check_platform_metric, platform_affinity
from hetsched.heuristics.fairness.policy import Policy

Selection = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
"""``(affinity, users needing cores, platforms with cores) -> Z`` favoured matrix."""


def fair_shares(total: int, demand: np.ndarray) -> np.ndarray:
    """Equal shares of ``total`` cores, a user never above its ``demand``, the unneeded
    cores going equally to the others (water-filling; users by increasing demand, ties by
    index, each ``min(demand, floor(left / users left))``).

    >>> fair_shares(2400, np.array([1000, 100, 1000, 0, 5000])).tolist()
    [766, 100, 767, 0, 767]
    """
    demand = np.asarray(demand, dtype=np.int64)
    shares = np.zeros(demand.size, dtype=np.int64)
    users = [int(i) for i in np.lexsort((np.arange(demand.size), demand)) if demand[i] > 0]
    left = int(total)
    for position, user in enumerate(users):
        shares[user] = min(int(demand[user]), left // (len(users) - position))
        left -= int(shares[user])
    return shares


def _check(tasks: np.ndarray, cores: np.ndarray, solo: np.ndarray,
           previous: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    tasks = np.asarray(tasks)
    cores = np.asarray(cores)
    solo = np.asarray(solo, dtype=float)
    if tasks.ndim != 1 or cores.ndim != 1 or solo.shape != (tasks.size, cores.size):
        raise ValueError(
            f"tasks (users,), cores (platforms,) and solo (users, platforms) disagree:"
            f" {tasks.shape}, {cores.shape}, {solo.shape}"
        )
    if np.any(tasks < 0) or np.any(cores < 0):
        raise ValueError("tasks and cores must be >= 0")
    if previous is not None and np.shape(previous) != solo.shape:
        raise ValueError(f"previous shares must be (users, platforms) = {solo.shape}")
    return tasks.astype(np.int64), cores.astype(np.int64), solo


def _affinities(solo: np.ndarray, tasks: np.ndarray, cores: np.ndarray,
                metric: str) -> np.ndarray:
    """Platform affinities of the users with tasks to the platforms with cores (section
    5.1.1: "for each user with remaining tasks to all the platforms with available cores");
    every other entry is 0 and never used."""
    affinity = np.zeros(solo.shape)
    users, platforms = tasks > 0, cores > 0
    if users.any() and platforms.any():
        affinity[np.ix_(users, platforms)] = platform_affinity(
            solo[np.ix_(users, platforms)], metric
        )
    return affinity


def _top(values: np.ndarray, candidates: np.ndarray, count: int,
         then: np.ndarray | None = None) -> np.ndarray:
    """Indices of the ``count`` largest ``values`` among ``candidates`` (ties: smallest
    ``then`` when given, then index)."""
    order = [int(i) for i in _order(values, then) if candidates[i]]
    return np.asarray(order[:count], dtype=np.int64)


def _order(affinity: np.ndarray, solo: np.ndarray | None) -> np.ndarray:
    """Indices by decreasing ``affinity``, ties by shorter ``solo`` run time (when given),
    then index."""
    index = np.arange(affinity.size)
    keys = (index, -affinity) if solo is None else (index, solo, -affinity)
    return np.lexsort(keys)


def affinity_first(
    tasks: np.ndarray, cores: np.ndarray, affinity: np.ndarray, select: Selection,
    solo: np.ndarray | None = None,
) -> np.ndarray:
    """Algorithm 1 (Affinity First, first level) with the favoured-platform rule ``select``
    (lines 8-9); a user's platforms by decreasing affinity, ties by shorter ``solo`` run
    time when given, then index (line 12). Returns the shares (users, platforms)."""
    n, m = affinity.shape
    share = np.zeros((n, m), dtype=np.int64)
    available = cores.copy()
    while available.sum() > 0 and tasks.sum() > share.sum():
        need = tasks - share.sum(axis=1)
        favoured = select(affinity, need > 0, available > 0).astype(bool)
        favoured &= (need > 0)[:, None] & (available > 0)[None, :]
        if not favoured.any():
            raise RuntimeError("affinity-first: no user favours any platform")  # select's bug
        users_left = favoured.sum(axis=0)
        before = available.sum()
        for i in np.lexsort((np.arange(n), need)):
            for j in _order(affinity[i], None if solo is None else solo[i]):
                if favoured[i, j]:
                    d = min(int(tasks[i] - share[i].sum()), int(available[j] // users_left[j]))
                    favoured[i, j] = False
                    users_left[j] -= 1
                    share[i, j] += d
                    available[j] -= d
        if available.sum() == before:
            raise RuntimeError("affinity-first: an iteration allocated nothing")
    return share


class FirstLevelPolicy(Policy, ABC):
    """A first-level policy: ``allocate(tasks, cores, solo, previous) -> shares``."""

    def allocate(
        self,
        tasks: np.ndarray,
        cores: np.ndarray,
        solo: np.ndarray,
        previous: np.ndarray | None = None,
    ) -> np.ndarray:
        """Cores of each platform for each user, (users, platforms) integers."""
        tasks, cores, solo = _check(tasks, cores, solo, previous)
        return self._shares(tasks, cores, solo, previous)

    @abstractmethod
    def _shares(self, tasks: np.ndarray, cores: np.ndarray, solo: np.ndarray,
                previous: np.ndarray | None) -> np.ndarray:
        """:meth:`allocate` on inputs already checked: integer ``tasks`` and ``cores``,
        float ``solo``."""


class SimpleFairness(FirstLevelPolicy):
    """The simple fairness policy (section 6.1): every platform's cores split equally
    among the users with tasks; cores a user does not need go equally to the others.

    >>> SimpleFairness().allocate([500, 4, 500], [10, 20], np.ones((3, 2))).tolist()
    [[3, 9], [3, 1], [4, 10]]
    """

    name: ClassVar[str] = "fairness"
    summary: ClassVar[str] = "each platform's cores split equally among the users"

    def _shares(self, tasks: np.ndarray, cores: np.ndarray, solo: np.ndarray,
                previous: np.ndarray | None) -> np.ndarray:
        return affinity_first(tasks, cores, np.zeros(solo.shape), _everyone)


class TopAffinityFirst(FirstLevelPolicy):
    """Algorithm 1 (section 5.1.1) with a "top ``k``%" selection of the favoured platforms
    (lines 8-9) by platform affinity (``metric``): PAF and AAF differ only in who selects
    (:meth:`_select`)."""

    def __init__(self, metric: str = "rpa", k: int = 50) -> None:
        self.metric = check_platform_metric(metric)
        self.k = _check_k(k)

    def _shares(self, tasks: np.ndarray, cores: np.ndarray, solo: np.ndarray,
                previous: np.ndarray | None) -> np.ndarray:
        def select(affinity: np.ndarray, users: np.ndarray, platforms: np.ndarray) -> np.ndarray:
            return self._select(affinity, users, platforms, solo, previous)

        return affinity_first(tasks, cores, _affinities(solo, tasks, cores, self.metric), select,
                              solo)

    @abstractmethod
    def _select(self, affinity: np.ndarray, users: np.ndarray, platforms: np.ndarray,
                solo: np.ndarray, previous: np.ndarray | None) -> np.ndarray:
        """Algorithm 1's favoured matrix Z (lines 8-9): a :data:`Selection` that may also
        use the OneCore run times ``solo`` and the ``previous`` shares."""


class ProviderAffinityFirst(TopAffinityFirst):
    """Provider Affinity First (PAF, Algorithm 1, section 5.1.1): each platform favours its
    top ``k``% users by platform affinity (``metric``), and the users it gave cores to at
    the previous invocation.

    >>> ProviderAffinityFirst(metric="epa")
    ProviderAffinityFirst(metric='epa', k=50)
    """

    name: ClassVar[str] = "paf"
    summary: ClassVar[str] = "each platform's cores to its top k% users by platform affinity"

    def _select(self, affinity: np.ndarray, users: np.ndarray, platforms: np.ndarray,
                solo: np.ndarray, previous: np.ndarray | None) -> np.ndarray:
        favoured = np.zeros(solo.shape, bool) if previous is None else np.asarray(previous) > 0
        count = int(users.sum()) * self.k // 100
        for j in np.flatnonzero(platforms):
            favoured[_top(affinity[:, j], users, count), j] = True
        if not (favoured & users[:, None] & platforms[None, :]).any():  # line 9
            for j in np.flatnonzero(platforms):
                best = affinity[users, j].max()
                favoured[users & (affinity[:, j] == best), j] = True
        return favoured


class ApplicationAffinityFirst(TopAffinityFirst):
    """Application Affinity First (AAF, Algorithm 1, section 5.1.1): each user favours its
    top ``k``% platforms by platform affinity (``metric``).

    >>> ApplicationAffinityFirst(k=25).k
    25
    """

    name: ClassVar[str] = "aaf"
    summary: ClassVar[str] = "each user gets cores of its top k% platforms by platform affinity"

    def _select(self, affinity: np.ndarray, users: np.ndarray, platforms: np.ndarray,
                solo: np.ndarray, previous: np.ndarray | None) -> np.ndarray:
        favoured = np.zeros(affinity.shape, bool)
        count = int(platforms.sum()) * self.k // 100
        for i in np.flatnonzero(users):
            favoured[i, _top(affinity[i], platforms, count, solo[i])] = True
        if not favoured.any():  # line 9: the users at or above the median affinity
            for j in np.flatnonzero(platforms):
                median = np.median(affinity[users, j])
                favoured[users & (affinity[:, j] >= median), j] = True
        return favoured


class PlatformAffinityRoundRobin(FirstLevelPolicy):
    """Platform Affinity based Round-Robin (PA-based RR, Algorithm 2, section 5.1.2): fair
    shares of all the cores, then the users, in index order, each take up to ``d_unit``
    cores of their highest-affinity platform with cores left, until every fair share is met.

    >>> PlatformAffinityRoundRobin().allocate([9, 9], [2, 2], [[10, 20], [10, 40]]).tolist()
    [[0, 2], [2, 0]]
    """

    name: ClassVar[str] = "pa-rr"
    summary: ClassVar[str] = "fair shares, taken in turn from each user's best platform"

    def __init__(self, metric: str = "rpa", d_unit: int = 1) -> None:
        self.metric = check_platform_metric(metric)
        if isinstance(d_unit, bool) or not isinstance(d_unit, int) or d_unit < 1:
            raise ValueError(f"d_unit must be an integer >= 1, got {d_unit!r}")
        self.d_unit = d_unit

    def _shares(self, tasks: np.ndarray, cores: np.ndarray, solo: np.ndarray,
                previous: np.ndarray | None) -> np.ndarray:
        n, m = solo.shape
        affinity = _affinities(solo, tasks, cores, self.metric)
        fair = fair_shares(int(cores.sum()), tasks)
        share = np.zeros((n, m), dtype=np.int64)
        taken = np.zeros(n, dtype=np.int64)
        available = cores.copy()
        preference = [list(_order(affinity[i], solo[i])) for i in range(n)]
        while fair.sum() > taken.sum():
            self._clean_rounds(fair, taken, share, available, preference)
            for i in range(n):  # one round of Algorithm 2, lines 9-14
                if fair[i] > taken[i]:
                    r = next(j for j in preference[i] if available[j] > 0)
                    d = min(self.d_unit, int(fair[i] - taken[i]), int(available[r]))
                    share[i, r] += d
                    taken[i] += d
                    available[r] -= d
        return share

    def _clean_rounds(self, fair: np.ndarray, taken: np.ndarray, share: np.ndarray,
                      available: np.ndarray, preference: list[list[int]]) -> None:
        """Apply at once the rounds in which no platform runs out and no user reaches its
        fair share: in each of them every user takes ``d_unit`` cores of the same platform,
        exactly as the round-by-round loop would."""
        users = np.flatnonzero(fair > taken)
        best = np.array([next(j for j in preference[i] if available[j] > 0) for i in users])
        demand = np.bincount(best, minlength=available.size) * self.d_unit
        wanted = demand > 0
        rounds = min(
            int((available[wanted] // demand[wanted]).min()),
            int(((fair[users] - taken[users]) // self.d_unit).min()),
        )
        if rounds > 0:
            share[users, best] += rounds * self.d_unit
            taken[users] += rounds * self.d_unit
            available -= rounds * demand


def _everyone(affinity: np.ndarray, users: np.ndarray, platforms: np.ndarray) -> np.ndarray:
    """Simple fairness: every user favours every platform."""
    return np.ones(affinity.shape, bool)


def _check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 50:
        raise ValueError(f"k must be an integer percentage in 1..50 (section 5.1.1), got {k!r}")
    return k


FIRST_LEVEL_POLICIES: dict[str, type[FirstLevelPolicy]] = {
    cls.name: cls
    for cls in (SimpleFairness, ProviderAffinityFirst, ApplicationAffinityFirst,
                PlatformAffinityRoundRobin)
}
"""Table 7's first-level policies by name."""
