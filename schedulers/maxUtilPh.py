"""The ``max-util-ph`` heuristic as a pybatsim scheduler: Max Util with place-holders instead of
permanent reservations (Machovec et al., 2017, sec. III.E).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/maxUtilPh.py -o '{"period": null}'

or by name with ``hetsched serve max-util-ph``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class MaxUtilPh(HetschedScheduler):
    """The ``max-util-ph`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "max-util-ph"
