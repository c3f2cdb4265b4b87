"""How the engine reaches the scheduler: in process (default) or over a real ZeroMQ socket.

Either way the engine sends Batsim's JSON text and reads the scheduler's JSON text, so the
scheduler sees exactly what it would see from Batsim.

* :class:`InProcessTransport` drives an unchanged pybatsim ``batsim.batsim.Batsim`` object
  built around a loopback network handler: ``Batsim.__init__`` reads SIMULATION_BEGINS from
  its network in its constructor, then each message is handed over with ``do_next_event()``.
  Nothing runs in another thread; the run is deterministic.
* :class:`ZmqTransport` acts as Batsim does (``src/batsim.cpp``, ``src/network.cpp``): a ZMQ
  ``REQ`` socket *connected* to the endpoint where the scheduler's ``REP`` socket is bound
  (pybatsim binds ``tcp://*:28000`` by default). Given a scheduler object, it serves it in a
  background thread with pybatsim's own ``Batsim``/``NetworkHandler``; otherwise the scheduler
  runs elsewhere (e.g. ``pybatsim scheduler.py -s tcp://*:PORT``).

>>> connect_endpoint("tcp://*:28000"), bind_endpoint("tcp://localhost:28000")
('tcp://127.0.0.1:28000', 'tcp://127.0.0.1:28000')
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Protocol

import batsim.batsim
import zmq

from hetsched.engine.errors import SimulationError

_PATCH_LOCK = threading.Lock()
_SCHEDULER_TIMEOUT_MS = 600_000
"""pybatsim's wait for Batsim's next message when the engine serves a scheduler in a thread."""


class Transport(Protocol):
    def exchange(self, message: str) -> str:
        """Send Batsim's message, return the scheduler's reply."""

    def close(self, check: bool = True) -> None:
        """Release sockets and threads (``check``: report late failures)."""


def connect_endpoint(endpoint: str) -> str:
    """Where Batsim connects for ``endpoint`` (``*`` and ``localhost`` become 127.0.0.1)."""
    return endpoint.replace("://*:", "://127.0.0.1:").replace("://localhost:", "://127.0.0.1:")


def bind_endpoint(endpoint: str) -> str:
    """Where a scheduler served by the engine binds for ``endpoint``."""
    return endpoint.replace("://localhost:", "://127.0.0.1:")


class InProcessTransport:
    """Hands messages to a pybatsim ``Batsim`` object in this thread."""

    def __init__(self, scheduler: batsim.batsim.BatsimScheduler) -> None:
        self.scheduler = scheduler
        self.bs: batsim.batsim.Batsim | None = None
        self._inbox: str | None = None
        self._outbox: str | None = None

    def _loopback(self) -> type:
        transport = self

        class LoopbackNetwork:
            """pybatsim's ``NetworkHandler`` interface, without a socket."""

            def __init__(self, socket_endpoint: str, timeout: Any = None, type: Any = None):
                self.socket_endpoint = socket_endpoint

            def bind(self) -> None:
                pass

            def connect(self) -> None:
                pass

            def recv(self, blocking: bool = False) -> Any:
                text = self.recv_string(blocking)
                return None if text is None else json.loads(text)

            def recv_string(self, blocking: bool = False) -> str | None:
                text, transport._inbox = transport._inbox, None
                return text

            def send(self, msg: Any) -> None:
                self.send_string(json.dumps(msg))

            def send_string(self, msg: str) -> None:
                transport._outbox = msg

            def close(self) -> None:
                pass

        return LoopbackNetwork

    def exchange(self, message: str) -> str:
        self._inbox, self._outbox = message, None
        if self.bs is None:
            with _PATCH_LOCK:
                original = batsim.batsim.NetworkHandler
                batsim.batsim.NetworkHandler = self._loopback()
                try:
                    self.bs = batsim.batsim.Batsim(self.scheduler, "inprocess://hetsched", None)
                finally:
                    batsim.batsim.NetworkHandler = original
        else:
            self.bs.do_next_event()
        if self._outbox is None:
            raise SimulationError("the scheduler did not reply to Batsim's message")
        return self._outbox

    def close(self, check: bool = True) -> None:
        self.bs = None


class _SchedulerThread(threading.Thread):
    """Serves a pybatsim scheduler on a bound REP socket, as the ``pybatsim`` launcher does."""

    def __init__(self, scheduler: batsim.batsim.BatsimScheduler, endpoint: str) -> None:
        super().__init__(name="pybatsim-scheduler", daemon=True)
        self.scheduler = scheduler
        self.endpoint = endpoint
        self.error: BaseException | None = None

    def run(self) -> None:
        bs = batsim.batsim.Batsim.__new__(batsim.batsim.Batsim)
        try:
            # Batsim.__init__ reads the module's NetworkHandler: hold the lock so that an
            # in-process simulation in another thread cannot swap it meanwhile. The
            # constructor returns once SIMULATION_BEGINS, which the engine sends at once, is in.
            with _PATCH_LOCK:
                bs.__init__(self.scheduler, self.endpoint, _SCHEDULER_TIMEOUT_MS)
            bs.start()
        except BaseException as error:
            self.error = error
        finally:
            # pybatsim closes its socket only after SIMULATION_ENDS; an open socket would block
            # the termination of its ZeroMQ context when the interpreter exits.
            network = getattr(bs, "network", None)
            if network is not None:
                if network.connection is not None:
                    network.connection.close(linger=0)
                    network.connection = None
                network.context.term()


class ZmqTransport:
    """Batsim's side of the socket: a REQ socket connected to the scheduler's endpoint.

    Batsim waits for each reply forever. The engine does too unless given a ``timeout``, but
    it watches the connection (a ZeroMQ socket monitor): once the scheduler was connected, its
    socket closing while a reply is due is an error (Batsim would wait forever).
    """

    def __init__(
        self,
        endpoint: str,
        scheduler: batsim.batsim.BatsimScheduler | None = None,
        timeout: float | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        self.thread: _SchedulerThread | None = None
        if scheduler is not None:
            self.thread = _SchedulerThread(scheduler, bind_endpoint(endpoint))
            self.thread.start()
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.REQ)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.monitor = self.socket.get_monitor_socket(
            zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED
        )
        self.connected = False
        self.nb_exchanges = 0
        self.socket.connect(connect_endpoint(endpoint))

    def _watch_connection(self) -> None:
        """Read the monitor's events; a disconnection after a connection is fatal."""
        # imported here: zmq.utils.monitor imports asyncio (through zmq.asyncio), which the
        # in-process transport of the embedded engine never needs
        from zmq.utils.monitor import recv_monitor_message

        while self.monitor.poll(0):
            event = recv_monitor_message(self.monitor)["event"]
            if event == zmq.EVENT_CONNECTED:
                self.connected = True
            elif event == zmq.EVENT_DISCONNECTED and self.connected:
                raise SimulationError(
                    f"the scheduler's socket on {self.endpoint} was closed while Batsim's "
                    f"message #{self.nb_exchanges} waited for its reply (the scheduler stopped "
                    "or crashed mid-run)"
                )

    def exchange(self, message: str) -> str:
        self.nb_exchanges += 1
        self.socket.send_string(message)
        poller = zmq.Poller()
        poller.register(self.socket, zmq.POLLIN)
        poller.register(self.monitor, zmq.POLLIN)
        started = time.monotonic()
        while True:
            events = dict(poller.poll(100))
            if self.socket in events:
                return self.socket.recv_string()
            try:
                self._watch_connection()
            except SimulationError:
                if self.thread is None:
                    raise
                self.thread.join(timeout=5)  # it closed its socket: report why it stopped
                if self.thread.is_alive():
                    raise
            if self.thread is not None and not self.thread.is_alive():
                raise SimulationError(
                    f"the scheduler served on {self.endpoint} stopped without replying: "
                    f"{self.thread.error!r}"
                ) from self.thread.error
            if self.timeout is not None and time.monotonic() - started > self.timeout:
                raise SimulationError(
                    f"no reply from the scheduler on {self.endpoint} to Batsim's message "
                    f"#{self.nb_exchanges} after {self.timeout} s"
                )

    def close(self, check: bool = True) -> None:
        """Close the socket; with ``check``, report a failure of the served scheduler."""
        self.socket.disable_monitor()
        self.monitor.close(linger=0)
        self.socket.close(linger=0)
        self.context.term()
        if self.thread is not None:
            self.thread.join(timeout=10)
            if check and self.thread.error is not None:
                raise SimulationError(
                    f"the scheduler served on {self.endpoint} failed: {self.thread.error!r}"
                ) from self.thread.error
