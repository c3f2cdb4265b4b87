"""The ``lp-makespan`` heuristic as a pybatsim scheduler: LP bound over task types x clusters,
rounded, longest first onto each cluster; the whole bag once known, the rest reserved (Tarplee et
al., JPDC 84 (2015), sec. 2).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/lpMakespanBatch.py -o '{"period": null}'

or by name with ``hetsched serve lp-makespan``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class LpMakespanBatch(HetschedScheduler):
    """The ``lp-makespan`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "lp-makespan"
