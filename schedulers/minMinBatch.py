"""The ``min-min`` heuristic as a pybatsim scheduler: Min-Min: the task with the smallest earliest
completion time first; the whole bag once known, the rest reserved (Braun et al., JPDC 61(6), 2001;
static bag: Tarplee et al., JPDC 84 (2015), sec. 1).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/minMinBatch.py -o '{"period": null}'

or by name with ``hetsched serve min-min``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class MinMinBatch(HetschedScheduler):
    """The ``min-min`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "min-min"
