"""The ``conservative`` heuristic as a pybatsim scheduler: Conservative Backfilling: arrival order,
every task started or reserved at its earliest slot (Khemka et al., MIC 2015, sec. 3.3 (after
Mu'alem and Feitelson 2001); Machovec et al., 2017, sec. III.D.2).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/conservativeBackfilling.py -o '{"period": null}'

or by name with ``hetsched serve conservative``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class ConservativeBackfilling(HetschedScheduler):
    """The ``conservative`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "conservative"
