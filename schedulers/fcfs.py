"""First-come first-served (baseline; Machovec et al. 2017, section III.D) as a pybatsim scheduler.

Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/fcfs.py -o '{"period": null}'

or by name with ``hetsched serve fcfs``. Options: see
:mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class Fcfs(HetschedScheduler):
    """The ``fcfs`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "fcfs"
