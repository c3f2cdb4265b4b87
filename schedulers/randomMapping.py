"""The ``random`` heuristic as a pybatsim scheduler: Random: arrival order, a random cluster and
P-state per task, started or reserved at its earliest slot (Machovec et al., 2017, sec. III.D.1).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/randomMapping.py -o '{"period": null}'

or by name with ``hetsched serve random``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class RandomMapping(HetschedScheduler):
    """The ``random`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "random"
