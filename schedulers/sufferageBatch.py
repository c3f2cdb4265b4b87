"""The ``sufferage`` heuristic as a pybatsim scheduler: Sufferage: per pass, a machine to the task
that would suffer most elsewhere; the whole bag once known, the rest reserved (Maheswaran et al.,
JPDC 59(2), 1999; static bag: Tarplee et al., JPDC 84 (2015), sec. 1).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/sufferageBatch.py -o '{"period": null}'

or by name with ``hetsched serve sufferage``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class SufferageBatch(HetschedScheduler):
    """The ``sufferage`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "sufferage"
