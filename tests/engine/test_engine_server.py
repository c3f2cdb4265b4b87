"""The server (:mod:`hetsched.engine.server`): its handlers.

Runs of the whole engine through the server are in ``test_engine_simulation.py``; here, the
server's own contracts.
"""

from __future__ import annotations

from hetsched.engine import ipp, server


def test_every_message_has_a_handler() -> None:
    """The server handles each message class of :mod:`hetsched.engine.ipp`, and only those:
    a message sent without a handler would fail only when a run sends it."""
    assert set(server.HANDLERS) == set(ipp.MESSAGE_TYPES)
    assert len(ipp.MESSAGE_TYPES) == len(set(ipp.MESSAGE_TYPES))
