"""Batsim's static event submitters (``static_event_submitter_process``,
``src/event_submitter.cpp``).

One submitter per events file (:mod:`hetsched.engine.events`), on the master host, started
after the job submitters: it says hello to the server, sends the events of each date
together in one :class:`~hetsched.engine.ipp.EventOccurred`, sleeping between dates, and says
goodbye; when the last event submitter has, the server tells the scheduler
``no_more_external_event_to_occur``.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from hetsched.engine import ipp
from hetsched.engine.kernel import Sleep, send

if TYPE_CHECKING:
    from hetsched.engine.context import BatsimContext
    from hetsched.engine.events import Event, EventList

SERVER = "server"
"""The server's mailbox."""


def static_event_submitter_process(
    context: BatsimContext, event_list: EventList
) -> Generator[Any, Any, None]:
    """``static_event_submitter_process`` for ``event_list``."""
    kernel = context.kernel
    master = context.master
    name = f"{event_list.name}_submitter"
    yield from send(SERVER, ipp.SubmitterHello(name, ipp.SubmitterType.EVENT_SUBMITTER), master)
    current = kernel.now
    batch: list[Event] = []
    for event in event_list.events:
        if event.timestamp > current:
            if batch:
                yield from send(SERVER, ipp.EventOccurred(batch), master)
                batch = []
            yield Sleep(event.timestamp - current)
            current = kernel.now
        batch.append(event)
    if batch:
        yield from send(SERVER, ipp.EventOccurred(batch), master)
    yield from send(SERVER, ipp.SubmitterBye(name, ipp.SubmitterType.EVENT_SUBMITTER), master)
