"""The ``pb-s`` heuristic as a pybatsim scheduler: PB-S on the whole batch: Processor balance,
smart: groups of M processors in random order, each to the application most likely to meet the goal
on it (Hansen et al., 2014, sec. III.A.3).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/pbSBatch.py -o '{"period": null}'

or by name with ``hetsched serve pb-s``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class PbSBatch(HetschedScheduler):
    """The ``pb-s`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "pb-s"
