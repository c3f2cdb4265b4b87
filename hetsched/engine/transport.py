"""How the engine reaches the scheduler: in process (default) or over a real ZeroMQ socket.

Either way the engine sends Batsim's JSON text and reads the scheduler's JSON text, so the
scheduler sees exactly what it would see from Batsim.

* :class:`InProcessTransport` drives pybatsim's ``Batsim`` object through a
  :class:`LoopbackBatsim`, whose network is a :class:`LoopbackNetwork` instead of a socket:
  the constructor reads SIMULATION_BEGINS from it, then each message is handed over with
  ``do_next_event()``. Nothing runs in another thread; the run is deterministic.
* :class:`ZmqTransport` acts as Batsim does (``src/batsim.cpp``, ``src/network.cpp``): a ZMQ
  ``REQ`` socket *connected* to the endpoint where the scheduler's ``REP`` socket is bound
  (pybatsim binds ``tcp://*:28000`` by default). Given a scheduler object, it serves it in a
  background thread with pybatsim's own ``Batsim``/``NetworkHandler``; otherwise the scheduler
  runs elsewhere (e.g. ``pybatsim scheduler.py -s tcp://*:PORT``, or batsched), and a
  :class:`SchedulerPeer` given to it says when that program stopped.

>>> connect_endpoint("tcp://*:28000"), bind_endpoint("tcp://localhost:28000")
('tcp://127.0.0.1:28000', 'tcp://127.0.0.1:28000')
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Protocol

import batsim.batsim
import batsim.network
import zmq

from hetsched.engine.errors import SimulationError

_SCHEDULER_TIMEOUT_MS = 600_000
"""pybatsim's wait for Batsim's next message when the engine serves a scheduler in a thread."""

_THREAD_EXIT_GRACE = 5.0
"""Seconds the served scheduler's thread may take to end once its socket closed."""


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


class LoopbackNetwork:
    """pybatsim's ``NetworkHandler`` interface without a socket: the message Batsim sent in
    ``inbox``, the scheduler's reply in ``outbox``."""

    def __init__(self) -> None:
        self.inbox: str | None = None
        self.outbox: str | None = None

    def bind(self) -> None:
        pass

    def connect(self) -> None:
        pass

    def recv(self, blocking: bool = False) -> Any:
        text = self.recv_string(blocking)
        return None if text is None else json.loads(text)

    def recv_string(self, blocking: bool = False) -> str | None:
        text, self.inbox = self.inbox, None
        return text

    def send(self, msg: Any) -> None:
        self.send_string(json.dumps(msg))

    def send_string(self, msg: str) -> None:
        self.outbox = msg

    def close(self) -> None:
        pass


class LoopbackBatsim(batsim.batsim.Batsim):
    """pybatsim 3.2.1's ``Batsim`` whose network is ``network`` (e.g. a :class:`LoopbackNetwork`).

    pybatsim offers no seam for its network: ``Batsim.__init__`` takes no handler, builds a
    ``NetworkHandler`` (a ZeroMQ REP socket) from its module's global of that name, binds it
    and reads SIMULATION_BEGINS from it before it returns; ``do_next_event`` and the reply go
    through the same object. The one name all of them read it by is the public attribute
    ``network``, so this subclass makes that attribute a property, the narrowest override
    there is (no private method, no module global): the ``NetworkHandler`` the constructor
    assigns is put aside unbound (its ZeroMQ context terminated, it never made a socket) and
    ``network`` stands in its place, whereas anything else assigned later is kept as given
    (hetsched's adapter wraps the network in its
    :class:`~hetsched.schedulers.message_checks.ProtocolGuard`). The constructor returns once
    the scheduler answered the SIMULATION_BEGINS that must be in ``network`` already.
    """

    def __init__(self, scheduler: batsim.batsim.BatsimScheduler, network: Any) -> None:
        self._loopback = network
        super().__init__(scheduler, "inprocess://hetsched", None)

    @property
    def network(self) -> Any:
        """The network pybatsim reads Batsim's messages from and sends the replies to."""
        return self._loopback

    @network.setter
    def network(self, handler: Any) -> None:
        if isinstance(handler, batsim.network.NetworkHandler):  # the constructor's own
            handler.context.term()
        else:
            self._loopback = handler


class InProcessTransport:
    """Hands messages to a pybatsim ``Batsim`` object (:class:`LoopbackBatsim`) in this thread."""

    def __init__(self, scheduler: batsim.batsim.BatsimScheduler) -> None:
        self.scheduler = scheduler
        self.bs: batsim.batsim.Batsim | None = None
        self.network = LoopbackNetwork()

    def exchange(self, message: str) -> str:
        network = self.network
        network.inbox, network.outbox = message, None
        if self.bs is None:
            self.bs = LoopbackBatsim(self.scheduler, network)
        else:
            self.bs.do_next_event()
        if network.outbox is None:
            raise SimulationError("the scheduler did not reply to Batsim's message")
        return network.outbox

    def close(self, check: bool = True) -> None:
        self.bs = None


class SchedulerPeer(Protocol):
    """What runs the scheduler behind :class:`ZmqTransport`'s socket (a thread of this process,
    a program such as batsched), watched while a reply is due: Batsim would wait for it
    forever, the engine reports that it stopped."""

    def exited(self) -> bool:
        """The scheduler's socket closed: wait the time it may take to exit; whether it did."""

    def check(self, message: int) -> None:
        """Raise if the scheduler stopped while Batsim's message number ``message`` (counted
        from 1) waits for its reply."""


class _SchedulerThread(threading.Thread):
    """Serves a pybatsim scheduler on a bound REP socket, as the ``pybatsim`` launcher does;
    the :class:`SchedulerPeer` of the transport that started it."""

    def __init__(self, scheduler: batsim.batsim.BatsimScheduler, endpoint: str) -> None:
        super().__init__(name="pybatsim-scheduler", daemon=True)
        self.scheduler = scheduler
        self.endpoint = endpoint
        self.error: BaseException | None = None

    def run(self) -> None:
        # made before it is initialised, so that its network is at hand below even when
        # Batsim.__init__ fails (e.g. the endpoint is taken); the constructor returns once
        # SIMULATION_BEGINS, which the engine sends at once, is in
        bs = batsim.batsim.Batsim.__new__(batsim.batsim.Batsim)
        try:
            bs.__init__(self.scheduler, bind_endpoint(self.endpoint), _SCHEDULER_TIMEOUT_MS)
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

    def exited(self) -> bool:
        self.join(timeout=_THREAD_EXIT_GRACE)  # it closed its socket: report why it stopped
        return not self.is_alive()

    def check(self, message: int) -> None:
        if not self.is_alive():
            raise SimulationError(
                f"the scheduler served on {self.endpoint} stopped without replying: "
                f"{self.error!r}"
            ) from self.error


class ZmqTransport:
    """Batsim's side of the socket: a REQ socket connected to the scheduler's endpoint.

    Batsim waits for each reply forever. The engine does too unless given a ``timeout``, but
    it watches the connection (a ZeroMQ socket monitor): once the scheduler was connected, its
    socket closing while a reply is due is an error (Batsim would wait forever), unless the
    scheduler's ``peer`` exits meanwhile, which the peer then reports. The peer is the thread
    serving ``scheduler`` when one is given, else ``peer`` (none: the socket alone is watched).
    """

    def __init__(
        self,
        endpoint: str,
        scheduler: batsim.batsim.BatsimScheduler | None = None,
        timeout: float | None = None,
        *,
        peer: SchedulerPeer | None = None,
    ) -> None:
        if scheduler is not None and peer is not None:
            raise ValueError("ZmqTransport: give a scheduler to serve or a peer, not both")
        self.endpoint = endpoint
        self.timeout = timeout
        self.thread: _SchedulerThread | None = None
        if scheduler is not None:
            self.thread = _SchedulerThread(scheduler, endpoint)
            self.thread.start()
        self.peer = self.thread or peer
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
                if self.peer is None or not self.peer.exited():
                    raise
            if self.peer is not None:
                self.peer.check(self.nb_exchanges)
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
