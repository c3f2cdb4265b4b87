"""The ``mct`` heuristic as a pybatsim scheduler: MCT: each task, in arrival order, to the machine
where it completes earliest; the whole bag once known, the rest reserved (Braun et al., JPDC 61(6),
2001; static bag: Tarplee et al., JPDC 84 (2015), sec. 1).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/mctBatch.py -o '{"period": null}'

or by name with ``hetsched serve mct``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class MctBatch(HetschedScheduler):
    """The ``mct`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "mct"
