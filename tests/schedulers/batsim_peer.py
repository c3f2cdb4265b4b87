"""Batsim played by a test over ZeroMQ, for the scheduler tests that run a real scheduler
process (``pybatsim``'s launcher, ``hetsched serve``): a free port, and the scheduler started
with a REQ socket connected to it, both cleaned up however the test ends."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import zmq

ROOT = Path(__file__).resolve().parents[2]
"""The repository root, where the scheduler processes run."""


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def scheduler_peer(command: list[str], port: int,
                   timeout: float) -> Iterator[tuple[subprocess.Popen[str], zmq.Socket]]:
    """Start ``command`` (a scheduler that binds ``port``) with its output captured, and
    connect a REQ socket to it whose reads give up after ``timeout`` seconds; on the way out
    kill the scheduler if it still runs, close the socket and end the ZeroMQ context."""
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    context = zmq.Context()
    req = context.socket(zmq.REQ)
    req.setsockopt(zmq.RCVTIMEO, int(timeout * 1000))
    req.setsockopt(zmq.LINGER, 0)
    try:
        req.connect(f"tcp://127.0.0.1:{port}")
        yield process, req
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        req.close()
        context.term()
