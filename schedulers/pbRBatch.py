"""The ``pb-r`` heuristic as a pybatsim scheduler: PB-R on the whole batch: Processor balance,
random: groups of M processors, random assignment (Hansen et al., 2014, sec. III.A.2).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/pbRBatch.py -o '{"period": null}'

or by name with ``hetsched serve pb-r``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class PbRBatch(HetschedScheduler):
    """The ``pb-r`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "pb-r"
