"""The ``max-upt`` heuristic as a pybatsim scheduler: Max UPT: Min-Min on utility per execution time
over clusters and P-states, with permanent reservations (Machovec et al., 2017, sec. III.E).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/maxUpt.py -o '{"period": null}'

or by name with ``hetsched serve max-upt``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class MaxUpt(HetschedScheduler):
    """The ``max-upt`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "max-upt"
