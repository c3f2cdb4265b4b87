"""The SimGrid-like actor kernel (engine/kernel.py) and the energy model (engine/energy.py).

Kernel rules come from SimGrid 3.32's ``EngineImpl::run`` (sub-rounds, simcalls handled after
each sub-round), ``Mailbox::put``/``get`` (an answered isend/irecv then a blocking wait) and the
``double_update`` precision of sleeps; energy rules from ``src/plugins/host_energy.cpp``.
"""

from __future__ import annotations

import pytest

from hetsched.engine.host_energy import EnergyModel
from hetsched.engine.kernel import (
    Answered,
    Cancel,
    Execution,
    Kernel,
    Kill,
    Sleep,
    Start,
    Wait,
    receive,
    send,
)
from hetsched.engine.platform import PowerRange


def zero(_src: str, _dst: str) -> float:
    return 0.0


def test_answered_simcalls_cost_one_subround_each() -> None:
    kernel = Kernel(zero)
    log: list[tuple[str, int]] = []

    def slow():
        yield Answered(3)  # resumes in the third sub-round after this one
        log.append(("slow", kernel.subround))

    def ticker():
        for _ in range(4):
            log.append(("tick", kernel.subround))
            yield Answered()

    kernel.spawn(slow())
    kernel.spawn(ticker())
    kernel.run()
    # slow keeps its place before ticker in the run list while it is answered (SimGrid runs
    # it and answers it in each sub-round), so it comes first when it resumes.
    assert log == [("tick", 0), ("tick", 1), ("tick", 2), ("slow", 3), ("tick", 3)]


def test_send_is_not_in_the_mailbox_before_its_subround_ends() -> None:
    """A receiver that checks the mailbox right after a message does not see the next send.

    The sender's next isend is issued in the same sub-round as the receiver's check, and
    simcalls are only handled at the end of the sub-round (this is why Batsim's NOTIFY
    no_more_static_job_to_submit comes in a message of its own).
    """
    kernel = Kernel(zero)
    seen: list[tuple[str, bool]] = []

    def server():
        for _ in range(2):
            message = yield from receive("box", "m")
            seen.append((message, kernel.mailbox_empty("box")))

    def submitter():
        yield from send("box", "first", "m")
        yield from send("box", "second", "m")

    kernel.spawn(server())
    kernel.spawn(submitter())
    kernel.run()
    assert seen == [("first", True), ("second", True)]


def test_queued_send_makes_the_mailbox_non_empty() -> None:
    kernel = Kernel(zero)
    seen: list[tuple[str, bool]] = []

    def server():
        yield Sleep(1.0)  # both senders queue meanwhile
        for _ in range(2):
            message = yield from receive("box", "m")
            seen.append((message, kernel.mailbox_empty("box")))

    def sender(name: str):
        yield from send("box", name, "m")

    kernel.spawn(server())
    kernel.spawn(sender("a"))
    kernel.spawn(sender("b"))
    kernel.run()
    assert seen == [("a", False), ("b", True)]


def test_transfers_take_the_delay_and_go_one_at_a_time() -> None:
    # Two messages of 0.5 s each to a single receiver: the second starts when it is matched.
    kernel = Kernel(lambda src, dst: 0.5)
    arrivals: list[tuple[str, float]] = []

    def server():
        for _ in range(2):
            message = yield from receive("box", "m")
            arrivals.append((message, kernel.now))

    def sender(name: str):
        yield from send("box", name, "n")

    kernel.spawn(sender("a"))
    kernel.spawn(sender("b"))
    kernel.spawn(server())
    kernel.run()
    assert arrivals == [("a", 0.5), ("b", 1.0)]


def test_wait_with_timeout() -> None:
    kernel = Kernel(zero)
    results: list[tuple[str, object, float]] = []

    def waiter(name: str, work: float, timeout: float):
        execution = Execution(rate=1.0 / work)  # work 1.0 done in `work` seconds
        yield Start(execution)
        result = yield Wait(execution, timeout)
        results.append((name, result, kernel.now))

    kernel.spawn(waiter("early", 1.0, 2.0))
    kernel.spawn(waiter("late", 3.0, 2.0))
    kernel.spawn(waiter("tie", 2.0, 2.0))  # ends with its timeout, started first: "done"
    kernel.run()
    assert sorted(results) == [
        ("early", "done", 1.0),
        ("late", "timeout", 2.0),
        ("tie", "done", 2.0),
    ]


def test_owned_execution_is_cancelled_when_its_actor_ends() -> None:
    kernel = Kernel(zero)
    ended: list[tuple[bool, float]] = []

    def actor():
        execution = Execution(0.1, on_end=lambda k, cancelled: ended.append((cancelled, k.now)))
        yield Start(execution)
        yield Wait(execution, 4.0)  # times out at 4; the execution goes on...
        yield Sleep(1.0)  # ...until the actor terminates at 5

    kernel.spawn(actor())
    kernel.run()
    assert ended == [(True, 5.0)]


def test_cancel_and_kill() -> None:
    kernel = Kernel(zero)
    log: list[tuple[str, object, float]] = []
    execution = Execution(0.1)

    def worker():
        yield Start(execution)
        log.append(("worker", (yield Wait(execution)), kernel.now))

    def sleeper():
        yield Sleep(10.0)
        log.append(("sleeper", "woke", kernel.now))  # never: killed at 3

    sleeping = sleeper()

    def killer():
        yield Sleep(3.0)
        yield Cancel(execution)
        yield Kill(sleeping)
        log.append(("killer", "done", kernel.now))

    kernel.spawn(worker())
    kernel.spawn(sleeping)
    kernel.spawn(killer())
    kernel.run()
    assert log == [("worker", "cancelled", 3.0), ("killer", "done", 3.0)]


def test_sleeps_within_surf_precision_end_together() -> None:
    kernel = Kernel(zero)
    woken: list[tuple[str, float]] = []

    def sleeper(name: str, duration: float):
        yield Sleep(duration)
        woken.append((name, kernel.now))

    kernel.spawn(sleeper("a", 1.0))
    kernel.spawn(sleeper("b", 1.0 + 5e-10))  # less than 1e-9 later: ends with a
    kernel.spawn(sleeper("c", 1.0 + 5e-9))
    kernel.run()
    assert woken == [("a", 1.0), ("b", 1.0), ("c", 1.0 + 5e-9)]


# --------------------------------------------------------------------------- energy
RANGES = (PowerRange(100.0, 100.0, 200.0), PowerRange(60.0, 80.0, 120.0))


def model(nb: int = 2, cores: int = 1) -> EnergyModel:
    return EnergyModel([RANGES] * nb, [0] * nb, [cores] * nb, [(1e9, 5e8)] * nb)


def test_idle_busy_and_pstate_energy_by_hand() -> None:
    energy = model()
    energy.set_usage(0, 1e9, 10.0)  # 10 s idle (100 W) then busy (200 W, one core loaded)
    energy.set_pstate(0, 1, 15.0)  # 5 s x 200 W; then P-state 1 with one core at 5e8
    energy.set_usage(0, 5e8, 15.0)  # busy at P-state 1: 120 W
    energy.set_usage(0, 0.0, 25.0)  # 10 s x 120 W, then idle at P-state 1: 60 W
    # 10 x 100 + 5 x 200 + 10 x 120 + 5 x 60 = 3500 J at t = 30
    assert energy.host_energy(0, 30.0) == pytest.approx(3500.0)
    assert energy.total(30.0) == pytest.approx(3500.0 + 30 * 100.0)
    assert energy.wattmin() == 80.0 + 100.0  # epsilon of P-state 1 and of P-state 0


def test_multicore_host_loaded_by_one_executor() -> None:
    energy = model(1, cores=4)
    energy.set_usage(0, 1e9, 0.0)  # one executor on one of 4 cores: load 1/4
    # 100 + 0.25 x (200 - 100) = 125 W for 8 s
    assert energy.host_energy(0, 8.0) == pytest.approx(1000.0)


def test_unsynced_power_change_is_charged_since_the_last_update() -> None:
    """SimGrid only updates a host on events concerning it; a load change due to another
    host's P-state is charged, at its next update, since its previous one."""
    energy = model()
    energy.set_usage(0, 1e9, 0.0)  # 200 W from t=0
    energy.set_usage(0, 5e8, 10.0, synced=False)  # 150 W from t=10, not updated
    # SimGrid charges 150 W over [0, 20]: 3000 J (the exact integral would be 3500 J).
    assert energy.host_energy(0, 20.0) == pytest.approx(3000.0)
    other = model()
    other.set_usage(0, 1e9, 0.0)
    other.set_usage(0, 5e8, 10.0, synced=False)
    other.update_all(15.0)  # an energy line of the output: every host updated at 15
    assert other.host_energy(0, 20.0) == pytest.approx(15 * 150.0 + 5 * 150.0)


def test_hosts_updated_at_the_current_date_are_fresh() -> None:
    """An energy query on a host is a simcall only if nobody updated it at this date."""
    energy = model(3)
    assert all(energy.fresh.is_fresh(host, 0.0) for host in range(3))  # all updated at start
    assert energy.fresh.count_stale(0, 5.0) == 3
    energy.host_energy(0, 5.0)
    assert [energy.fresh.is_fresh(host, 5.0) for host in range(3)] == [True, False, False]
    energy.set_usage(2, 1e9, 5.0)  # synced: SimGrid updates the host
    assert energy.fresh.count_stale(0, 5.0) == 1
    energy.total(5.0)
    assert energy.fresh.count_stale(0, 5.0) == 0
    assert energy.fresh.count_stale(0, 6.0) == 3  # a new date: nothing updated yet
