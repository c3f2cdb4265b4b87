"""Batsim's CALL_ME_LATER waiters (``waiter_process``, ``src/jobs_execution.cpp``).

The server starts one waiter per CALL_ME_LATER on the master host; it sleeps until the date
asked (at least :data:`MIN_WAITER_SLEEP`) and sends WAITING_DONE, which the server turns into
REQUESTED_CALL, unless the simulation has ended meanwhile.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from hetsched.engine import ipp
from hetsched.engine.kernel import Sleep, send

if TYPE_CHECKING:
    from hetsched.engine.server import ServerData

MIN_WAITER_SLEEP = 1e-5
"""Batsim's waiter sleeps at least this long ("the value of 1e-5 have been found on
trial-error")."""


def waiter_process(target_time: float, data: ServerData) -> Generator[Any, Any, None]:
    """``waiter_process``: WAITING_DONE to the server at ``target_time``."""
    context = data.context
    now = context.kernel.now
    if now < target_time:
        yield Sleep(max(target_time - now, MIN_WAITER_SLEEP))
    if not (data.end_sent or data.end_ack):
        yield from send(ipp.SERVER, ipp.WaitingDone(), context.master)
