"""The ``sufferage-online`` heuristic as a pybatsim scheduler: Sufferage: per pass, a machine to the
task that would suffer most elsewhere; re-planned at every arrival and completion, the rest
place-holders (Maheswaran et al., JPDC 59(2), 1999 (batch mode); online batch mode: Tarplee et al.,
JPDC 84 (2015), sec. 1).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/sufferageOnline.py -o '{"period": null}'

or by name with ``hetsched serve sufferage-online``. Options: see
:mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class SufferageOnline(HetschedScheduler):
    """The ``sufferage-online`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "sufferage-online"
