"""The ``lp-makespan-online`` heuristic as a pybatsim scheduler: LP bound over task types x
clusters, rounded, longest first onto each cluster; re-planned at every arrival and completion, the
rest place-holders (Tarplee et al., JPDC 84 (2015), sec. 1 (online batch mode) and 2).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/lpMakespanOnline.py -o '{"period": null}'

or by name with ``hetsched serve lp-makespan-online``. Options: see
:mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class LpMakespanOnline(HetschedScheduler):
    """The ``lp-makespan-online`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "lp-makespan-online"
