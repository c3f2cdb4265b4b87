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
from hetsched.engine.job_submitter import submit_by_date

if TYPE_CHECKING:
    from hetsched.engine.context import BatsimContext
    from hetsched.engine.events import EventList


def static_event_submitter_process(
    context: BatsimContext, event_list: EventList
) -> Generator[Any, Any, None]:
    """``static_event_submitter_process`` for ``event_list``."""
    hello = ipp.SubmitterHello(f"{event_list.name}_submitter", ipp.SubmitterType.EVENT_SUBMITTER)
    yield from submit_by_date(context, hello, event_list.events,
                              lambda event: event.timestamp, ipp.EventOccurred)
