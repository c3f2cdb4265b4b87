"""The ``max-upe-ph`` heuristic as a pybatsim scheduler: Max UPE with place-holders, the paper's
best heuristic under an energy constraint (Machovec et al., 2017, sec. III.E).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/maxUpePh.py -o '{"period": null}'

or by name with ``hetsched serve max-upe-ph``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class MaxUpePh(HetschedScheduler):
    """The ``max-upe-ph`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "max-upe-ph"
