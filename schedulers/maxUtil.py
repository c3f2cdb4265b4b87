"""The ``max-util`` heuristic as a pybatsim scheduler: Max Util: Min-Min on the utility at
completion over clusters and P-states, with permanent reservations (Machovec et al., 2017, sec.
III.E).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/maxUtil.py -o '{"period": null}'

or by name with ``hetsched serve max-util``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class MaxUtil(HetschedScheduler):
    """The ``max-util`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "max-util"
