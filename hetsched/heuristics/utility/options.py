"""Every task's (cluster, P-state) options of a run of Machovec et al.'s heuristics, in one
table worked out once per task (sec. III.E-F; :mod:`hetsched.heuristics.utility.maxutility`).

A task states its cores; on each cluster it can run on it gets the fewest whole nodes that
hold them, and each P-state of that cluster is an option: its cluster position, P-state, node
count, duration (:meth:`Task.duration`, sec. III.F), resources (eq. 1: execution time x cores
allocated), busy energy (eq. 5, :meth:`Cluster.busy_energy`) and the watts of one busy node
(:meth:`Cluster.busy_watts`; both NaN without a power model).

A task waits through many mapping events (on a full-size day of sec. IV.B, 300 to 700 tasks
at each of the afternoon's events), and its options and utility function never change: the
:class:`OptionTable` appends a task's options and its utility function's row
(:class:`~hetsched.core.utility.UtilityTable`) the first time it is seen, and an event takes
the rows of its tasks with one fancy index per column (:meth:`OptionTable.rows`) instead of
joining hundreds of small arrays. The values are the same floats: each task's rows are
computed as before, once, and only copied.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.core.utility import UtilityTable

_INT_COLUMNS = ("cluster", "pstate", "nodes")
_FLOAT_COLUMNS = ("duration", "resources", "energy", "watts")


class Block(NamedTuple):
    """Where one task's options lie in an :class:`OptionTable`: rows ``first`` to
    ``first + size - 1``, its shortest duration (task dropping, sec. III.C) and the row of
    its utility function."""

    first: int
    size: int
    fastest: float
    utility_row: int


def task_options(task: Task, feasible: Sequence[Cluster], position: Mapping[str, int],
                 need_energy: bool) -> tuple[list[tuple[int, int, int, float, float, float,
                                                        float]], float]:
    """``task``'s option rows on its ``feasible`` clusters (``position``: each cluster's
    place in the system's list), in cluster then P-state order, and its shortest duration;
    ValueError when ``need_energy`` and a cluster has no power model."""
    rows = []
    for cluster in feasible:
        nodes = cluster.nodes_for(task.cores)
        cores = nodes * cluster.cores_per_resource
        if need_energy and not cluster.pstates:
            raise ValueError(f"cluster {cluster.name} has no P-state power model: the"
                             " energy of a task cannot be planned on it")
        for pstate in range(max(1, len(cluster.pstates))):
            duration = task.duration(cluster, pstate)
            rows.append((position[cluster.name], pstate, nodes, duration, duration * cores,
                         cluster.busy_energy(pstate, nodes, duration, task.task_type)
                         if cluster.pstates else np.nan,
                         cluster.busy_watts(pstate, task.task_type)
                         if cluster.pstates else np.nan))
    return rows, min(row[3] for row in rows)


class _Columns:
    """Growable columns of one row kind (capacity doubled when full)."""

    def __init__(self, names: Sequence[str], dtype: type) -> None:
        self.names = tuple(names)
        self.dtype = dtype
        self.size = 0
        self.arrays: dict[str, np.ndarray] = {
            name: np.empty(16, dtype=dtype) for name in self.names
        }

    def append(self, values: Sequence[Sequence[object]]) -> int:
        """Append rows (one sequence per column); return the first row's index."""
        count = len(values[0])
        first = self.size
        if first + count > next(iter(self.arrays.values())).size:
            room = max(2 * (first + count), 16)
            for name, array in self.arrays.items():
                grown: np.ndarray = np.empty(room, dtype=self.dtype)
                grown[:first] = array[:first]
                self.arrays[name] = grown
        for name, column in zip(self.names, values, strict=True):
            self.arrays[name][first:first + count] = column
        self.size = first + count
        return first


class OptionTable:
    """The options and utility functions of the tasks seen so far on ``clusters`` (the
    system's clusters, by name: a table serves one system)."""

    def __init__(self, clusters: Mapping[str, Cluster]) -> None:
        self.clusters = clusters
        self.position = {name: j for j, name in enumerate(clusters)}
        self.blocks: dict[str, tuple[Task, Block | None]] = {}
        """By task id: the task and its block (``None`` when it fits on no cluster)."""
        self._ints = _Columns(_INT_COLUMNS, np.intp)
        self._floats = _Columns(_FLOAT_COLUMNS, float)
        # Utility rows (UtilityTable's arrays), padded with intervals that start at +inf.
        self._utility_count = 0
        self._priority = np.empty(16)
        self._start = np.full((16, 1), np.inf)
        self._fraction = np.zeros((16, 1))
        self._rate = np.zeros((16, 1))

    def block(self, task: Task, feasible: Sequence[Cluster] | None,
              need_energy: bool) -> Block | None:
        """``task``'s block, added the first time this task object is seen; ``feasible``
        (its clusters, :func:`~hetsched.heuristics.common.feasible_clusters`) is read only
        then: pass ``None`` to ask whether it is known (``None`` back when not)."""
        known = self.blocks.get(task.id)
        if known is not None and known[0] is task:
            return known[1]
        if feasible is None:
            return None
        block = None
        if feasible:
            rows, fastest = task_options(task, feasible, self.position, need_energy)
            columns = list(zip(*rows, strict=True))
            first = self._ints.append(columns[:3])
            self._floats.append(columns[3:])
            block = Block(first, len(rows), fastest, self._add_utility(task))
        self.blocks[task.id] = (task, block)
        return block

    def _add_utility(self, task: Task) -> int:
        """Append the row of ``task``'s utility function (``UtilityTable``'s own values)."""
        if task.utility is None:
            raise ValueError(f"task {task.id} has no utility function: its options cannot be"
                             " scored")
        row = self._utility_count
        priority, start, fraction, rate = UtilityTable([task.utility]).arrays()
        width = max(start.shape[1], self._start.shape[1])
        if row == self._priority.size or width > self._start.shape[1]:
            self._grow(max(2 * row, self._priority.size), width)
        self._priority[row] = priority[0]
        used = start.shape[1]
        self._start[row, :used] = start[0]
        self._fraction[row, :used] = fraction[0]
        self._rate[row, :used] = rate[0]
        self._utility_count = row + 1
        return row

    def _grow(self, rows: int, width: int) -> None:
        used, old = self._utility_count, self._start.shape[1]
        priority = np.empty(rows)
        priority[:used] = self._priority[:used]
        start = np.full((rows, width), np.inf)
        fraction, rate = np.zeros((rows, width)), np.zeros((rows, width))
        start[:used, :old] = self._start[:used]
        fraction[:used, :old] = self._fraction[:used]
        rate[:used, :old] = self._rate[:used]
        self._priority, self._start, self._fraction, self._rate = priority, start, fraction, rate

    def rows(self, blocks: Sequence[Block]) -> tuple[np.ndarray, np.ndarray]:
        """The table rows of ``blocks``' options, block after block, and each block's size.

        >>> first, size = np.array([5, 0, 9]), np.array([2, 3, 1])
        >>> _ranges(first, size).tolist()
        [5, 6, 0, 1, 2, 9]
        """
        first = np.fromiter((b.first for b in blocks), np.intp, len(blocks))
        size = np.fromiter((b.size for b in blocks), np.intp, len(blocks))
        return _ranges(first, size), size

    def column(self, name: str, rows: np.ndarray) -> np.ndarray:
        """Column ``name`` (cluster, pstate, nodes, duration, resources, energy, watts) at
        ``rows``."""
        kind = self._ints if name in _INT_COLUMNS else self._floats
        return kind.arrays[name][rows]

    def utility_table(self, blocks: Sequence[Block]) -> UtilityTable:
        """The :class:`UtilityTable` of ``blocks``' tasks, in their order (the rows of
        ``UtilityTable([task.utility for task in tasks])``, with more +inf padding: intervals
        that are never reached)."""
        rows = np.fromiter((b.utility_row for b in blocks), np.intp, len(blocks))
        return UtilityTable.of_arrays(self._priority[rows], self._start[rows],
                                      self._fraction[rows], self._rate[rows])


def _ranges(first: np.ndarray, size: np.ndarray) -> np.ndarray:
    """``first[0] .. first[0] + size[0] - 1``, then the next block's, in one pass."""
    offsets = np.cumsum(size) - size
    return np.arange(int(size.sum()), dtype=np.intp) + np.repeat(first - offsets, size)
