"""The engine against SimGrid 3.32 itself (Debian's python3-simgrid, the version of Batsim 4.2.1).

Three things are compared with what real SimGrid does, in a subprocess of the system Python:

* the actor scheduling of :mod:`hetsched.engine.kernel`: the scenarios below are written once,
  as generators of operations, and run both by SimGrid actors (``Mailbox.put``/``get``,
  ``this_actor.sleep_for``/``yield_``, ``Actor.create``, and ``sg_mailbox_listen`` through
  ctypes for Batsim's ``mailbox_empty``) and by the kernel; the logs must be identical;
* message delays of :meth:`Platform.message_delay` on several platforms;
* parallel-task durations and host energy (``plugin:host_energy``) against the engine's model.

The module is skipped where python3-simgrid 3.32 is not installed.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hetsched.engine.energy_queries import EnergyQueries
from hetsched.engine.host_energy import EnergyModel
from hetsched.engine.kernel import Answered, Kernel, Sleep, Spawn, mailbox_empty, receive, send
from hetsched.engine.platform import load_platform

SYSTEM_PYTHON = "/usr/bin/python3"


def _simgrid_version() -> str | None:
    try:
        result = subprocess.run(
            [SYSTEM_PYTHON, "-c", "import simgrid; print(simgrid.simgrid_version)"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


pytestmark = pytest.mark.skipif(
    not (_simgrid_version() or "").startswith("3.32"),
    reason="SimGrid 3.32's Python bindings (python3-simgrid) are not installed",
)

# Scenarios: each s_NAME(api) returns [(actor name, host, generator)]. Operations:
# ("get", box) -> message, ("put", box, message), ("sleep", s), ("yield", n) (n answered
# simcalls), ("spawn", name, host, generator), ("empty", box) -> bool, ("now",) -> time.
SCENARIOS = '''
def s_submitter(api):
    """Batsim's submitter: HELLO-like send then another send; late senders queue up."""
    def server():
        for _ in range(4):
            message = yield ("get", "box")
            empty = yield ("empty", "box")
            api.log("recv", message, empty)
    def submitter():
        yield ("put", "box", "first")
        yield ("put", "box", "second")
    def late(name, duration):
        yield ("sleep", duration)
        yield ("put", "box", name)
    return [("server", "master", server()), ("sub", "master", submitter()),
            ("a", "master", late("a", 1.0)), ("b", "master", late("b", 1.0))]


def s_delays(api):
    """Senders on hosts at different distances, all starting together; one receiver."""
    def server():
        yield ("sleep", 0.5)
        for _ in range(4):
            message = yield ("get", "box")
            empty = yield ("empty", "box")
            api.log("recv", message, empty)
    def sender(name, wait):
        yield ("sleep", wait)
        yield ("put", "box", name)
        api.log("sent", name)
    return [("server", "master", server()), ("n1", "n1", sender("n1", 1.0)),
            ("n2", "n2", sender("n2", 0.2)), ("m", "master", sender("m", 0.2)),
            ("n1b", "n1", sender("n1b", 0.2))]


def s_spawn(api):
    """A server that spawns a request-reply actor, then checks its mailbox."""
    def server():
        for round in range(3):
            message = yield ("get", "server")
            empty = yield ("empty", "server")
            api.log("server", message, empty)
            if message.startswith("go"):
                yield ("spawn", "rr", "master", reply(round))
            empty = yield ("empty", "server")
            api.log("after-spawn", empty)
    def reply(round):
        yield ("put", "server", "ready%d" % round)
    def starter():
        yield ("put", "server", "go")
    def job():
        yield ("sleep", 2.0)
        yield ("put", "server", "go-done")
    return [("server", "master", server()), ("starter", "master", starter()),
            ("job", "n2", job())]


def s_yields(api):
    """Answered simcalls (energy queries, set_pstate) delay an actor by sub-rounds."""
    def server():
        for _ in range(3):
            message = yield ("get", "box")
            empty = yield ("empty", "box")
            api.log("recv", message, empty)
    def job(name, nb_yields):
        yield ("sleep", 3.0)
        yield ("yield", nb_yields)
        yield ("put", "box", name)
    return [("server", "master", server()), ("slow", "n1", job("slow", 5)),
            ("fast", "n2", job("fast", 1)), ("mid", "n2", job("mid", 2))]

def s_batsim(api):
    """Batsim's loop in miniature: server, request-reply actors, a submitter, job actors."""
    state = {"ready": False, "events": [], "bye": False, "running": 0, "done": 0}
    def server():
        yield from flush()
        while True:
            message = yield ("get", "server")
            if message == "READY":
                state["ready"] = True
            elif message == "BYE":
                state["bye"] = True
                state["events"].append("NO_MORE_JOBS")
            elif message.startswith("exec:"):
                state["running"] += 1
                host = "n1" if message.endswith("a") else "n2"
                yield ("spawn", "job", host, job(message[5:]))
            elif message.startswith("done:"):
                state["running"] -= 1
                state["done"] += 1
                state["events"].append(message)
            else:
                state["events"].append(message)
            if state["ready"]:
                empty = yield ("empty", "server")
                if empty and state["events"]:
                    yield from flush()
                elif empty and state["bye"] and state["done"] == 4:
                    api.log("end")
                    return
    def flush():
        api.log("message", list(state["events"]))
        batch, state["events"] = state["events"], []
        state["ready"] = False
        yield ("spawn", "rr", "master", reply(batch))
    def reply(batch):
        for event in batch:
            if event.startswith("sub:"):
                yield ("put", "server", "exec:" + event[4:])
        yield ("put", "server", "READY")
    def job(name):
        yield ("sleep", 3.0)
        yield ("yield", 2)
        yield ("put", "server", "done:" + name)
    def submitter():
        yield ("put", "server", "HELLO")
        yield ("put", "server", "sub:1a")
        yield ("put", "server", "sub:2b")
        yield ("sleep", 3.0)
        yield ("put", "server", "sub:3a")
        yield ("put", "server", "sub:4b")
        yield ("put", "server", "BYE")
    return [("submitter", "master", submitter()), ("server", "master", server())]
'''

SIMGRID_DRIVER = """
import ctypes, json, sys
from simgrid import Actor, Engine, Mailbox, this_actor
platform, scenario = sys.argv[1], sys.argv[2]
lib = ctypes.CDLL("libsimgrid.so.3.32")
lib.sg_mailbox_listen.argtypes = [ctypes.c_char_p]
lib.sg_mailbox_listen.restype = ctypes.c_int
engine = Engine(["driver", "--cfg=host/model:ptask_L07"])
engine.load_platform(platform)
LOG = []
class Api:
    def log(self, *items):
        LOG.append([Engine.clock, *items])
def actor(generator):
    def body():
        value = None
        while True:
            try:
                op = generator.send(value)
            except StopIteration:
                return
            value = None
            if op[0] == "get":
                value = Mailbox.by_name(op[1]).get()
            elif op[0] == "put":
                Mailbox.by_name(op[1]).put(op[2], 1)
            elif op[0] == "sleep":
                this_actor.sleep_for(op[1])
            elif op[0] == "yield":
                for _ in range(op[1]):
                    this_actor.yield_()
            elif op[0] == "spawn":
                Actor.create(op[1], engine.host_by_name(op[2]), actor(op[3]))
            elif op[0] == "empty":
                value = lib.sg_mailbox_listen(op[1].encode()) == 0
            elif op[0] == "now":
                value = Engine.clock
    return body
exec(SCENARIOS)
for name, host, generator in globals()["s_" + scenario](Api()):
    Actor.create(name, engine.host_by_name(host), actor(generator))
engine.run()
print("LOG=" + json.dumps(LOG))
"""

PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="z" routing="Full">
  <host id="master" speed="1Gf"><prop id="role" value="master"/></host>
  <host id="n1" speed="100Mf,50Mf" core="4">
    <prop id="wattage_per_state" value="100:200, 60:70:120"/></host>
  <host id="n2" speed="100Mf,50Mf" core="1">
    <prop id="wattage_per_state" value="100:200, 60:70:120"/></host>
  <link id="far" bandwidth="1MBps" latency="300ms"/>
  <link id="near" bandwidth="125MBps" latency="1ms"/>
  <link id="lb" bandwidth="1GBps" latency="10us" sharing_policy="FATPIPE"/>
  <route src="master" dst="master"><link_ctn id="lb"/></route>
  <route src="n1" dst="master"><link_ctn id="far"/><link_ctn id="near"/></route>
  <route src="n2" dst="master"><link_ctn id="near"/></route>
  <route src="n1" dst="n2"><link_ctn id="far"/></route>
</zone>
</platform>
"""


def run_simgrid(code: str, *args: str) -> str:
    result = subprocess.run(
        [SYSTEM_PYTHON, "-c", code, *args], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


@pytest.fixture(scope="module")
def platform_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("simgrid") / "platform.xml"
    path.write_text(PLATFORM, encoding="utf-8")
    return path


def kernel_log(platform_file: Path, scenario: str) -> list[list[object]]:
    platform = load_platform(platform_file)
    kernel = Kernel(platform.message_delay)
    log: list[list[object]] = []

    class Api:
        def log(self, *items: object) -> None:
            log.append([kernel.now, *items])

    def actor(generator, host: str):  # type: ignore[no-untyped-def]
        value = None
        while True:
            try:
                op = generator.send(value)
            except StopIteration:
                return
            value = None
            if op[0] == "get":
                value = yield from receive(op[1], host)
            elif op[0] == "put":
                yield from send(op[1], op[2], host)
            elif op[0] == "sleep":
                yield Sleep(op[1])
            elif op[0] == "yield":
                yield Answered(op[1])
            elif op[0] == "spawn":
                yield Spawn(actor(op[3], op[2]))
            elif op[0] == "empty":
                value = yield from mailbox_empty(kernel, op[1])
            elif op[0] == "now":
                value = kernel.now

    namespace: dict[str, object] = {}
    exec(SCENARIOS, namespace)
    for _name, host, generator in namespace[f"s_{scenario}"](Api()):  # type: ignore[operator]
        kernel.spawn(actor(generator, host))
    kernel.run()
    return log


@pytest.mark.parametrize("scenario", ["submitter", "delays", "spawn", "yields", "batsim"])
def test_kernel_schedules_actors_like_simgrid(platform_file: Path, scenario: str) -> None:
    output = run_simgrid(
        "SCENARIOS = " + repr(SCENARIOS) + "\n" + SIMGRID_DRIVER, str(platform_file), scenario
    )
    expected = json.loads(output.split("LOG=", 1)[1])
    actual = kernel_log(platform_file, scenario)
    assert [entry[1:] for entry in actual] == [entry[1:] for entry in expected]
    for mine, theirs in zip(actual, expected, strict=True):
        assert mine[0] == pytest.approx(theirs[0], rel=1e-12, abs=1e-15)


DELAY_PROBE = """
import sys
from simgrid import Actor, Engine, Mailbox
engine = Engine(["probe", "--cfg=host/model:ptask_L07"])
engine.load_platform(sys.argv[1])
pairs = [pair.split(">") for pair in sys.argv[2:]]
for index, (src, dst) in enumerate(pairs):
    def sender(index=index):
        Mailbox.by_name("m%d" % index).put("x", 1)
    def receiver(index=index, src=src, dst=dst):
        start = Engine.clock
        Mailbox.by_name("m%d" % index).get()
        print("%s>%s %r" % (src, dst, Engine.clock - start))
    Actor.create("s", engine.host_by_name(src), sender)
    Actor.create("r", engine.host_by_name(dst), receiver)
engine.run()
"""


def test_message_delays_match_simgrid(platform_file: Path) -> None:
    pairs = ["master>master", "n1>master", "n2>master", "n2>n1", "n1>n1"]
    output = run_simgrid(DELAY_PROBE, str(platform_file), *pairs)
    measured = dict(line.split(" ") for line in output.strip().splitlines())
    platform = load_platform(platform_file)
    for pair in pairs:
        src, dst = pair.split(">")
        assert platform.message_delay(src, dst) == pytest.approx(
            float(measured[pair]), rel=1e-12, abs=1e-18
        )


PTASK_PROBE = """
import ctypes, sys
from simgrid import Actor, Engine, Host, this_actor
lib = ctypes.CDLL("libsimgrid.so.3.32")
lib.sg_host_by_name.restype = ctypes.c_void_p
lib.sg_host_by_name.argtypes = [ctypes.c_char_p]
lib.sg_host_get_consumed_energy.restype = ctypes.c_double
lib.sg_host_get_consumed_energy.argtypes = [ctypes.c_void_p]
engine = Engine(["probe", "--cfg=host/model:ptask_L07", "--cfg=plugin:host_energy"])
engine.load_platform(sys.argv[1])
def query():  # what Batsim does when a job starts or ends (consumed_energy_on_machines)
    return [lib.sg_host_get_consumed_energy(lib.sg_host_by_name(name)) for name in (b"n1", b"n2")]
def job():
    n1, n2 = Host.by_name("n1"), Host.by_name("n2")
    this_actor.sleep_for(10)
    n1.pstate = 1
    query()
    start = Engine.clock
    this_actor.parallel_execute([n1, n2], [1e9, 1e9], [])
    print("first %r" % (Engine.clock - start))
    query()
    this_actor.sleep_for(5)
    query()
    start = Engine.clock
    this_actor.parallel_execute([n2, n2, n1], [5e8, 5e8, 2e8], [])
    print("second %r" % (Engine.clock - start))
    print("energy45 %r %r" % tuple(query()))
    n1.pstate = 1
    query()
    start = Engine.clock
    this_actor.parallel_execute([n1, n2], [1e9, 1e9], [])
    print("third %r" % (Engine.clock - start))
    print("energy60 %r %r" % tuple(query()))
def switcher():
    this_actor.sleep_for(55)
    Host.by_name("n1").pstate = 0
Actor.create("job", engine.host_by_name("master"), job)
Actor.create("switcher", engine.host_by_name("master"), switcher)
engine.run()
"""


def test_parallel_tasks_and_energy_match_simgrid(platform_file: Path) -> None:
    """Durations and joules of three parallel tasks, by hand, by the model and by SimGrid.

    Energy is queried as Batsim does (each job's hosts when it starts and ends).
    First task (t=10..30): 1e9 flops on n1 (4 cores, P-state 1: 50 Mf per core) and on n2
    (1 core, 100 Mf): rate = min(50e6/1e9, 100e6/1e9) = 0.05/s, 20 s. n1 uses 50 Mf of
    4 x 50 Mf: load 1/4, 70 + 0.25 x (120 - 70) = 82.5 W; n2 uses 50 Mf of 100 Mf: 150 W.
    Second task (t=35..45): two executors of 5e8 on n2 (one core: 100 Mf for 1e9 flops) and
    2e8 on n1: rate = min(100e6/5e8, 100e6/1e9, 50e6/2e8) = 0.1/s, 10 s; n2 full (200 W), n1
    uses 2e7 of 2e8: load 0.1, 75 W.
    At t=45: n1 = 10 x 100 + 20 x 82.5 + 5 x 60 + 10 x 75 = 3700 J,
    n2 = 10 x 100 + 20 x 150 + 5 x 100 + 10 x 200 = 6500 J.
    Third task (t=45..60): 1e9 on n1 (P-state 1) and n2, as the first one, but at t=55 n1 goes
    to P-state 0 (100 Mf): 0.5 of the work left at rate 0.1/s, 5 s more. n1 is updated when
    it switches: 10 x 82.5 + 5 x (100 + 0.25 x 100) = 1450 J. n2 is not: SimGrid charges its
    power at the end (full, 200 W) for the whole 15 s: 3000 J (not 10 x 150 + 5 x 200).
    """
    output = run_simgrid(PTASK_PROBE, str(platform_file))
    lines = dict(line.split(" ", 1) for line in output.splitlines() if " " in line)
    assert float(lines["first"]) == pytest.approx(20.0)
    assert float(lines["second"]) == pytest.approx(10.0)
    assert float(lines["third"]) == pytest.approx(15.0)
    simgrid45 = [float(value) for value in lines["energy45"].split()]
    simgrid60 = [float(value) for value in lines["energy60"].split()]
    assert simgrid45 == pytest.approx([3700.0, 6500.0])
    assert simgrid60 == pytest.approx([3700.0 + 1450.0, 6500.0 + 3000.0])

    platform = load_platform(platform_file, energy=True)
    assert [m.name for m in platform.machines] == ["n1", "n2"]
    energy = EnergyModel(
        [m.power or () for m in platform.machines],
        [0, 0],
        [m.cores for m in platform.machines],
        [m.speeds for m in platform.machines],
    )
    energy.set_pstate(0, 1, 10.0)
    for start, end, usages in ((10.0, 30.0, (50e6, 50e6)), (35.0, 45.0, (2e7, 1e8))):
        for host, usage in enumerate(usages):
            energy.set_usage(host, usage, start)
        for host in (0, 1):
            energy.set_usage(host, 0.0, end)
    assert [energy.host_energy(host, 45.0) for host in (0, 1)] == pytest.approx(simgrid45)
    energy.set_pstate(0, 1, 45.0)
    energy.set_usage(0, 50e6, 45.0)
    energy.set_usage(1, 50e6, 45.0)
    energy.set_pstate(0, 0, 55.0)
    energy.set_usage(0, 1e8, 55.0)  # n1 is updated when it changes P-state...
    energy.set_usage(1, 1e8, 55.0, synced=False)  # ...n2 is not
    energy.set_usage(0, 0.0, 60.0)
    energy.set_usage(1, 0.0, 60.0)
    assert [energy.host_energy(host, 60.0) for host in (0, 1)] == pytest.approx(simgrid60)


QUERY_PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="z" routing="Vivaldi">
  <host id="master" speed="1Gf" coordinates="0 0 0"><prop id="role" value="master"/>
    <prop id="wattage_per_state" value="0:0"/></host>
{hosts}
</zone>
</platform>
"""
QUERY_HOST = (
    '  <host id="n{index:02d}" speed="1Gf" coordinates="0 0 0">'
    '<prop id="wattage_per_state" value="10:20"/></host>'
)
QUERY_DELAYS = [0, 0, 3, 25, 60]
"""Answered simcalls each job executor makes before its queries (0, 0: same sub-round; 3, 25:
it catches up with the queries under way; 60: it starts when every host is up to date)."""
QUERY_DRIVER = """
import ctypes, json, sys
from simgrid import Actor, Engine, Mailbox, this_actor
lib = ctypes.CDLL("libsimgrid.so.3.32")
lib.sg_host_by_name.restype = ctypes.c_void_p
lib.sg_host_by_name.argtypes = [ctypes.c_char_p]
lib.sg_host_get_consumed_energy.restype = ctypes.c_double
lib.sg_host_get_consumed_energy.argtypes = [ctypes.c_void_p]
lib.sg_mailbox_listen.argtypes = [ctypes.c_char_p]
lib.sg_mailbox_listen.restype = ctypes.c_int
engine = Engine(["driver", "--cfg=host/model:ptask_L07", "--cfg=plugin:host_energy"])
engine.load_platform(sys.argv[1])
delays = json.loads(sys.argv[2])
nb = int(sys.argv[3])
hosts = [lib.sg_host_by_name(b"n%02d" % index) for index in range(nb)]
LOG = []
def server():
    for _ in range(len(delays) + 1):
        message = Mailbox.by_name("server").get()
        LOG.append([Engine.clock, message, lib.sg_mailbox_listen(b"server") == 0])
def submitter():
    this_actor.sleep_for(10.0)
    Mailbox.by_name("server").put("submitted", 1)
def executor(index, delay):
    this_actor.sleep_for(10.0)
    for _ in range(delay):
        this_actor.yield_()
    lib.sg_host_get_consumed_energy(hosts[index])  # the job's host (consumed_energy_on_machines)
    total = sum(lib.sg_host_get_consumed_energy(host) for host in hosts)  # an energy line
    Mailbox.by_name("server").put("completed %d %r" % (index, total), 1)
Actor.create("server", engine.host_by_name("master"), server)
for index, delay in enumerate(delays):
    Actor.create("e%d" % index, engine.host_by_name("n%02d" % index), executor, index, delay)
Actor.create("submitter", engine.host_by_name("master"), submitter)
engine.run()
print("LOG=" + json.dumps(LOG))
"""


def test_energy_queries_walk_in_lockstep_like_simgrid(tmp_path: Path) -> None:
    """Batsim's job executors query every host's energy when a job ends (SimGrid's lazy
    ``get_consumed_energy``: a simcall per host not yet updated at this date). Five jobs end
    together with a submission: the submitter, which queries nothing, reaches the server first;
    the executors walk the 40 hosts in lockstep (a late one catches up, one starting after the
    walk is over pays nothing) and arrive in their order. This is the order of the events of
    message 306 of the ``curie47-pybatsim-easyBackfill`` reference run."""
    nb_hosts = 40
    hosts = "\n".join(QUERY_HOST.format(index=index) for index in range(nb_hosts))
    path = tmp_path / "platform.xml"
    path.write_text(QUERY_PLATFORM.format(hosts=hosts), encoding="utf-8")
    output = run_simgrid(QUERY_DRIVER, str(path), json.dumps(QUERY_DELAYS), str(nb_hosts))
    simgrid_log = json.loads(output.split("LOG=", 1)[1])

    platform = load_platform(path, energy=True)
    kernel = Kernel(platform.message_delay)
    model = EnergyModel(
        [m.power or () for m in platform.machines],
        [0] * nb_hosts,
        [m.cores for m in platform.machines],
        [m.speeds for m in platform.machines],
    )
    queries = EnergyQueries(model, lambda: kernel.now)
    kernel.fast_forward = queries.fast_forward
    kernel.on_sleep_end = lambda host: model.update(host, kernel.now)
    log: list[list[object]] = []

    def server():  # type: ignore[no-untyped-def]
        for _ in range(len(QUERY_DELAYS) + 1):
            message = yield from receive("server", "master")
            log.append([kernel.now, message, (yield from mailbox_empty(kernel, "server"))])

    def submitter():  # type: ignore[no-untyped-def]
        yield Sleep(10.0)
        yield from send("server", "submitted", "master")

    def executor(index: int, delay: int):  # type: ignore[no-untyped-def]
        yield Sleep(10.0, index)
        if delay:
            yield Answered(delay)
        yield queries.hosts(np.array([index]))
        total = yield queries.all_hosts()
        yield from send("server", f"completed {index} {float(total)!r}", f"n{index:02d}")

    kernel.spawn(server())
    for index, delay in enumerate(QUERY_DELAYS):
        kernel.spawn(executor(index, delay))
    kernel.spawn(submitter())
    kernel.run()
    assert [entry[1].split()[:2] for entry in simgrid_log] == [
        ["submitted"],
        *[["completed", str(index)] for index in range(len(QUERY_DELAYS) - 1)],
        ["completed", str(len(QUERY_DELAYS) - 1)],
    ]
    assert log == simgrid_log
