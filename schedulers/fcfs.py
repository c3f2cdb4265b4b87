"""The ``fcfs`` heuristic as a pybatsim scheduler: first come, first served: start tasks in arrival
order until one cannot start now (baseline in none of the papers (the arrival order of Machovec et
al., 2017, sec. III.D)).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/fcfs.py -o '{"period": null}'

or by name with ``hetsched serve fcfs``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class Fcfs(HetschedScheduler):
    """The ``fcfs`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "fcfs"
