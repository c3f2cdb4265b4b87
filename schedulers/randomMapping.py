"""Random mapping (Machovec et al. 2017, section III.D.1) as a pybatsim scheduler.

Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/randomMapping.py -o '{"period": null}'

or by name with ``hetsched serve random``. Options: see
:mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class RandomMapping(HetschedScheduler):
    """The ``random`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "random"
