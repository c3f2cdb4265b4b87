"""The ``two-level-fairness`` heuristic as a pybatsim scheduler: first level shares platforms among
users, second level picks co-runners; pilot jobs (Hwang et al., IEEE TSC 2018, sec. 5 (Algorithms
1-3)).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/twoLevelFairness.py -o '{"period": null}'

or by name with ``hetsched serve two-level-fairness``. Options: see
:mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class TwoLevelFairness(HetschedScheduler):
    """The ``two-level-fairness`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "two-level-fairness"
