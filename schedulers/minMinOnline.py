"""The ``min-min-online`` heuristic as a pybatsim scheduler: Min-Min: the task with the smallest
earliest completion time first; re-planned at every arrival and completion, the rest place-holders
(Braun et al., JPDC 61(6), 2001; batch mode: Maheswaran et al., JPDC 59(2), 1999; online batch mode:
Tarplee et al., JPDC 84 (2015), sec. 1).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/minMinOnline.py -o '{"period": null}'

or by name with ``hetsched serve min-min-online``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class MinMinOnline(HetschedScheduler):
    """The ``min-min-online`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "min-min-online"
