"""Second-level task mapping policies of Hwang et al. (IEEE TSC 2018, sections 5.2 and 6.1).

Once the first level has given each user a share of a platform's cores, a second-level
policy decides which users' pilot jobs share each node: ``map(shares, applications, nodes,
table) -> layout``, with

* ``shares[i]``: the cores of this platform user i got (``U[i].share[j]``);
* ``applications[i]``: the index of user i's application in ``table``;
* ``nodes``: the platform's number of nodes;
* ``table``: the run times of the applications in each co-runner combination on this
  platform (:class:`~hetsched.heuristics.fairness.affinity.CombinationTable`, the paper's ``comb``);
* ``layout``: an integer array (nodes, cores per node) giving the user of each core (-1: the
  core stays idle). User i appears exactly ``shares[i]`` times.

A combination is a set of users of distinct applications sharing a node's cores equally.
Policies (Table 7):

* :class:`AllCore` -- a user's cores fill whole nodes by themselves;
* :class:`RandomCombination` (Random) -- node after node, a combination drawn at random
  among those the shares still allow;
* :class:`MostAffectedFirst` (MAF, section 5.2.1) -- the user with the highest co-runner
  affinity picks the combination where it runs fastest and maps it on as many nodes as the
  shares allow, again and again;
* :class:`CorunnerAffinityRoundRobin` (CA-based RR, section 5.2.2) -- the users in turn pick
  the combination where they run fastest and map it on up to ``p_unit`` nodes.

Every policy ends with Algorithm 3's lines 12-15: the cores no combination can use are
shuffled and packed onto the nodes left, ``cores per node`` at a time.

Choices where the paper is silent (``tests/heuristics/fairness/test_second_level.py``):

* The combinations are those of ``table`` (the paper's measured AllCore, TwoApp and
  FourApp); ``max_users=2`` keeps those of one or two users (the pairwise simplification of
  section 5.3.2), and MAF's ``static_affinity=True`` computes the co-runner affinities once
  (the other simplification of section 5.3.2).
* A user is *done* (``U_done``) when its share is 0 or no combination of it with users not
  done fits the shares any more; this is settled again after every placement.
* MAF's co-runner affinity of a user is that of its application over the combinations made
  only of applications of users not done (Algorithm 3, line 8); a user without any has the
  lowest priority. Users tied on the highest value take turns (least often selected first,
  then by index), as section 5.2.1 suggests.
* A combination is chosen by the selecting user's run time in it, ties by the table's
  order (fewer users first); its other members are, for each application, the user of that
  application not done with the largest share left (ties: lowest index).
* Random draws the combination uniformly among those the shares allow, then each member
  uniformly among the users of that application whose share allows it; AllCore takes the
  users in index order.
* Nodes are filled in order: the first combinations placed go on the first nodes. Which
  physical node gets which row is the caller's concern
  (:func:`hetsched.heuristics.fairness.two_level.keep_pilots` keeps running pilot jobs in place).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from hetsched.heuristics.fairness.affinity import (
    CombinationTable,
    check_corunner_metric,
    corunner_affinity,
)
from hetsched.heuristics.fairness.policy import Policy


class _Layout:
    """Shares left and node rows placed so far on one platform."""

    def __init__(self, shares: np.ndarray, applications: np.ndarray, nodes: int,
                 table: CombinationTable) -> None:
        self.share = shares.copy()
        self.applications = applications
        self.nodes = nodes
        self.table = table
        self.k = table.cores_per_node
        self.rows: list[np.ndarray] = []

    @property
    def free_nodes(self) -> int:
        return self.nodes - len(self.rows)

    def place(self, users: list[int], count: int) -> None:
        """``count`` nodes holding ``users`` with equal numbers of cores."""
        each = self.k // len(users)
        row = np.repeat(np.asarray(users, dtype=np.int64), each)
        for _ in range(count):
            self.rows.append(row)
        for user in users:
            self.share[user] -= each * count

    def capacity(self, users: list[int]) -> int:
        """Nodes of ``users`` (equal split) the shares and free nodes allow."""
        each = self.k // len(users)
        return min(self.free_nodes, min(int(self.share[u]) // each for u in users))

    def best_users(self, candidates: np.ndarray) -> np.ndarray:
        """For each application, the candidate user with the largest share (ties: lowest
        index), or -1."""
        best = np.full(self.table.solo.size, -1, dtype=np.int64)
        for user in np.flatnonzero(candidates):
            app = self.applications[user]
            if best[app] < 0 or self.share[user] > self.share[best[app]]:
                best[app] = user
        return best

    def members(self, user: int, combination: tuple[int, ...], best: np.ndarray
                ) -> list[int] | None:
        """``user`` and, for the other applications of ``combination``, their ``best``
        users, if all of them have the cores (else None)."""
        each = self.k // len(combination)
        if self.share[user] < each:
            return None
        members = [user]
        for app in combination:
            if app != self.applications[user]:
                other = int(best[app])
                if other < 0 or self.share[other] < each:
                    return None
                members.append(other)
        return members

    def fastest(self, user: int, combinations: tuple[tuple[int, ...], ...],
                runtime: np.ndarray, best: np.ndarray) -> list[int] | None:
        """Members of the combination in which ``user`` runs fastest (ties: table order)."""
        app = self.applications[user]
        choice, choice_time = None, np.inf
        for c, combination in enumerate(combinations):
            if app in combination and runtime[c, app] < choice_time:
                members = self.members(user, combination, best)
                if members is not None:
                    choice, choice_time = members, runtime[c, app]
        return choice

    def settle(self, done: np.ndarray, combinations: tuple[tuple[int, ...], ...]) -> None:
        """Mark done every user whose share is 0 or who fits no combination any more."""
        done |= self.share <= 0
        changed = True
        while changed:
            changed = False
            best = self.best_users(~done)
            for user in np.flatnonzero(~done):
                app = self.applications[user]
                if not any(
                    self.members(int(user), comb, best) is not None
                    for comb in combinations if app in comb
                ):
                    done[user] = True
                    changed = True
                    best = self.best_users(~done)

    def finish(self, rng: np.random.Generator) -> np.ndarray:
        """Algorithm 3, lines 12-15: the shares left, shuffled, packed onto the free nodes."""
        left = np.repeat(np.arange(self.share.size), np.maximum(self.share, 0))
        rng.shuffle(left)
        layout = np.full((self.nodes, self.k), -1, dtype=np.int64)
        if self.rows:
            layout[: len(self.rows)] = np.vstack(self.rows)
        flat = layout[len(self.rows):].reshape(-1)
        flat[: left.size] = left
        self.share[:] = 0
        return layout


def _check_map(shares: np.ndarray, applications: np.ndarray, nodes: int,
               table: CombinationTable) -> tuple[np.ndarray, np.ndarray]:
    shares = np.asarray(shares)
    applications = np.asarray(applications)
    if shares.ndim != 1 or applications.shape != shares.shape:
        raise ValueError(
            f"shares and applications need one entry per user: {shares.shape},"
            f" {applications.shape}"
        )
    if np.any(shares < 0):
        raise ValueError("shares must be >= 0")
    if np.any((applications < 0) | (applications >= table.solo.size)):
        raise ValueError(f"applications must index the table's {table.solo.size} applications")
    if shares.sum() > nodes * table.cores_per_node:
        raise ValueError(
            f"{int(shares.sum())} cores shared out on {nodes} nodes of"
            f" {table.cores_per_node} cores"
        )
    return shares.astype(np.int64), applications.astype(np.int64)


def _check_max_users(max_users: object) -> int | None:
    if max_users is not None and (
        isinstance(max_users, bool) or not isinstance(max_users, int) or max_users < 1
    ):
        raise ValueError(f"max_users must be None or an integer >= 1, got {max_users!r}")
    return max_users


class SecondLevelPolicy(Policy, ABC):
    """A second-level policy: ``map(shares, applications, nodes, table) -> layout``.

    ``seed`` seeds the policy's random draws (Algorithm 3's random combinations, Random's
    choices); the generator lives with the policy, so successive invocations continue it.
    """

    def __init__(self, seed: int | None = 0) -> None:
        self.seed = seed
        self._rng = np.random.default_rng(seed)

    @abstractmethod
    def map(self, shares: np.ndarray, applications: np.ndarray, nodes: int,
            table: CombinationTable) -> np.ndarray:
        """The user of each core of each node, (nodes, cores per node), -1 when idle."""


class AllCore(SecondLevelPolicy):
    """AllCore (section 6.1): "assigns the tasks of the same application to a node".

    >>> from hetsched.heuristics.fairness.affinity import combination_table
    >>> from hetsched.workloads.corunner import CorunnerModel
    >>> table = combination_table(CorunnerModel.paper("gene"))
    >>> AllCore().map(np.array([3, 2, 0, 0, 1]), np.arange(5), 3, table).tolist()
    [[0, 0], [1, 1], [0, 4]]
    """

    name: ClassVar[str] = "allcore"
    summary: ClassVar[str] = "each user's cores fill nodes of their own"

    def map(self, shares: np.ndarray, applications: np.ndarray, nodes: int,
            table: CombinationTable) -> np.ndarray:
        shares, applications = _check_map(shares, applications, nodes, table)
        layout = _Layout(shares, applications, nodes, table)
        for user in range(shares.size):
            layout.place([user], int(layout.share[user]) // layout.k)
        return layout.finish(self._rng)


class RandomCombination(SecondLevelPolicy):
    """Random (section 6.1): each node gets a combination drawn at random among the
    combinations of ``table`` that the shares left allow.

    >>> RandomCombination(seed=3)
    RandomCombination(seed=3)
    """

    name: ClassVar[str] = "random"
    summary: ClassVar[str] = "a random co-runner combination per node"

    def map(self, shares: np.ndarray, applications: np.ndarray, nodes: int,
            table: CombinationTable) -> np.ndarray:
        shares, applications = _check_map(shares, applications, nodes, table)
        layout = _Layout(shares, applications, nodes, table)
        rng = self._rng
        members = table.members
        each = layout.k // table.sizes
        users_of = [np.flatnonzero(applications == app) for app in range(table.solo.size)]
        while layout.free_nodes:
            largest = np.zeros(table.solo.size, dtype=np.int64)
            np.maximum.at(largest, applications, layout.share)
            fits = np.all(~members | (largest[None, :] >= each[:, None]), axis=1)
            if not fits.any():
                break
            c = int(rng.choice(np.flatnonzero(fits)))
            chosen = []
            for app in table.combinations[c]:
                eligible = users_of[app][layout.share[users_of[app]] >= each[c]]
                chosen.append(int(eligible[rng.integers(eligible.size)]))
            layout.place(chosen, 1)
        return layout.finish(rng)


class MostAffectedFirst(SecondLevelPolicy):
    """Most Affected First (MAF, section 5.2.1): the user with the highest co-runner
    affinity (``metric``: ``raw`` or ``normalized`` difference) selects the combination in
    which it runs fastest and maps it on as many nodes as the shares allow; repeated until
    every user is done.

    >>> MostAffectedFirst(metric="raw", max_users=2)
    MostAffectedFirst(metric='raw', max_users=2, static_affinity=False, seed=0)
    """

    name: ClassVar[str] = "maf"
    summary: ClassVar[str] = "the most affected user picks its best co-runners first"

    def __init__(self, metric: str = "normalized", max_users: int | None = None,
                 static_affinity: bool = False, seed: int | None = 0) -> None:
        super().__init__(seed)
        self.metric = check_corunner_metric(metric)
        self.max_users = _check_max_users(max_users)
        self.static_affinity = bool(static_affinity)

    def map(self, shares: np.ndarray, applications: np.ndarray, nodes: int,
            table: CombinationTable) -> np.ndarray:
        shares, applications = _check_map(shares, applications, nodes, table)
        table = table.restrict(self.max_users)
        layout = _Layout(shares, applications, nodes, table)
        done = shares <= 0
        selected = np.zeros(shares.size, dtype=np.int64)
        affinity = self._affinity(table, applications, done)
        while True:
            layout.settle(done, table.combinations)
            if done.all():
                break
            if not self.static_affinity:
                affinity = self._affinity(table, applications, done)
            value = np.where(np.isnan(affinity[applications]), -np.inf, affinity[applications])
            value[done] = np.nan
            tied = np.flatnonzero(value == np.nanmax(value))
            user = int(tied[np.lexsort((tied, selected[tied]))[0]])
            selected[user] += 1
            best = layout.best_users(~done)
            members = layout.fastest(user, table.combinations, table.runtime, best)
            if members is None:
                raise RuntimeError(f"MAF: user {user} is not done but fits no combination")
            layout.place(members, layout.capacity(members))
        return layout.finish(self._rng)

    def _affinity(self, table: CombinationTable, applications: np.ndarray,
                  done: np.ndarray) -> np.ndarray:
        """Co-runner affinity of each application over the users not done (line 8)."""
        available = np.zeros(table.solo.size, dtype=bool)
        available[applications[~done]] = True
        return corunner_affinity(table, self.metric, available)


class CorunnerAffinityRoundRobin(SecondLevelPolicy):
    """Co-runner Affinity based Round-Robin (CA-based RR, section 5.2.2): the users not
    done, in index order, each select the combination in which they run fastest and map it
    on up to ``p_unit`` nodes; repeated until every user is done.

    >>> CorunnerAffinityRoundRobin(p_unit=20)
    CorunnerAffinityRoundRobin(p_unit=20, max_users=None, seed=0)
    """

    name: ClassVar[str] = "ca-rr"
    summary: ClassVar[str] = "users in turn pick their best co-runners for p_unit nodes"

    def __init__(self, p_unit: int = 1, max_users: int | None = None,
                 seed: int | None = 0) -> None:
        super().__init__(seed)
        if isinstance(p_unit, bool) or not isinstance(p_unit, int) or p_unit < 1:
            raise ValueError(f"p_unit must be an integer >= 1, got {p_unit!r}")
        self.p_unit = p_unit
        self.max_users = _check_max_users(max_users)

    def map(self, shares: np.ndarray, applications: np.ndarray, nodes: int,
            table: CombinationTable) -> np.ndarray:
        shares, applications = _check_map(shares, applications, nodes, table)
        table = table.restrict(self.max_users)
        layout = _Layout(shares, applications, nodes, table)
        done = shares <= 0
        while True:
            layout.settle(done, table.combinations)
            if done.all():
                break
            for user in range(shares.size):
                if done[user]:
                    continue
                best = layout.best_users(~done)
                members = layout.fastest(user, table.combinations, table.runtime, best)
                if members is None:
                    done[user] = True
                    continue
                layout.place(members, min(self.p_unit, layout.capacity(members)))
                done |= layout.share <= 0
        return layout.finish(self._rng)


SECOND_LEVEL_POLICIES: dict[str, type[SecondLevelPolicy]] = {
    cls.name: cls
    for cls in (AllCore, RandomCombination, MostAffectedFirst, CorunnerAffinityRoundRobin)
}
"""Table 7's second-level policies by name."""
