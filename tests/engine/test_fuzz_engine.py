"""Fuzzing the embedded engine's inputs: platform XML, workloads and scheduler replies.

The engine reads its inputs as Batsim 4.2.1 does (:mod:`hetsched.engine.platform`,
:mod:`hetsched.engine.workload`). Fed the mutated platform files of ``test_fuzz_platform`` and
the mutated workloads of ``test_fuzz_workload`` (a value replaced, an element or key deleted
or duplicated, bytes flipped or cut), each reader must load the input or refuse it with one
of the engine's errors, which are :class:`hetsched.errors.HetschedError` like every input
error of the project, and name the file (tests/fuzzing.py). Inputs wrong by construction
(a host with one power profile too few, a job whose profile does not exist) must
be refused.

Scheduler replies are fuzzed the same way through a whole simulation: a valid reply to the
first JOB_SUBMITTED message (executions with an allocation and a mapping, metadata, a
CALL_ME_LATER, a P-state change, a rejection), mutated, must run to the end or be refused
with an engine error that names the reply (``message #2``), never crash the engine.
"""

from __future__ import annotations

import copy
import json
import re
import tempfile
import warnings
from pathlib import Path

from fuzzing import FUZZ, TALLY, mutate_tree, outcome
from hypothesis import given
from hypothesis import strategies as st
from test_engine_simulation import PROFILES, platform, workload
from test_fuzz_platform import XML, mutated_xml
from test_fuzz_workload import BASES, mutated_bytes, mutated_documents

from hetsched.engine.errors import EngineError, EngineWarning
from hetsched.engine.platform import load_platform
from hetsched.engine.simulation import simulate
from hetsched.engine.workload import load_workload


@FUZZ
@given(data=mutated_xml(), energy=st.booleans())
def test_mutated_platform_files_load_or_are_refused(data: bytes, energy: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "platform.xml"
        path.write_bytes(data)
        outcome(f"engine platform reader (energy={energy}): mutated file", path,
                lambda: load_platform(path, energy=energy))


@FUZZ
@given(host=st.integers(0, 2))
def test_a_missing_power_profile_is_always_refused_with_energy(host: int) -> None:
    """Batsim's -E needs one ``wattage_per_state`` profile per P-state on every compute host
    (the first three hosts have two P-states: the second profile is dropped)."""
    lines = XML.splitlines()
    hosts = [i for i, line in enumerate(lines) if 'core="' in line]
    index = next(i for i in range(hosts[host], len(lines)) if "wattage_per_state" in lines[i])
    lines[index] = re.sub(r'value="([^",]*),[^"]*"', r'value="\1"', lines[index])
    assert lines[index].endswith('value="95.0:190.0"/>'), lines[index]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "platform.xml"
        path.write_text("\n".join(lines))
        outcome("engine platform reader: a P-state without power (bad)", path,
                lambda: load_platform(path, energy=True), bad=True)


def _write(folder: str, data: str | bytes) -> Path:
    path = Path(folder) / "w.json"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


@FUZZ
@given(document=mutated_documents())
def test_mutated_workloads_load_or_are_refused(document: dict) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, json.dumps(document))
        outcome("engine workload reader: mutated JSON tree", path,
                lambda: load_workload(path, "w0"))


@FUZZ
@given(raw=mutated_bytes())
def test_mutated_workload_bytes_load_or_are_refused(raw: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, raw)
        outcome("engine workload reader: mutated bytes", path,
                lambda: load_workload(path, "w0"))


@FUZZ
@given(base=st.sampled_from(BASES), data=st.data())
def test_a_job_without_its_profile_is_always_refused(base: dict, data: st.DataObject) -> None:
    """Batsim refuses a job whose profile the workload does not define."""
    document = copy.deepcopy(base)
    job = document["jobs"][data.draw(st.integers(0, len(document["jobs"]) - 1))]
    job["profile"] = data.draw(st.text(min_size=1, max_size=8).filter(
        lambda name: name not in document["profiles"]))
    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, json.dumps(document))
        outcome("engine workload reader: unknown profile (bad)", path,
                lambda: load_workload(path, "w0"), bad=True)


REPLY = {
    "now": 0.0,
    "events": [
        {"timestamp": 0.0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0-1"}},
        {"timestamp": 0.0, "type": "EXECUTE_JOB",
         "data": {"job_id": "w0!2", "alloc": "2 3", "mapping": {"0": "0", "1": "1"}}},
        {"timestamp": 0.0, "type": "SET_JOB_METADATA", "data": {"job_id": "w0!1", "metadata": "m"}},
        {"timestamp": 0.0, "type": "CALL_ME_LATER", "data": {"timestamp": 5.0}},
        {"timestamp": 0.0, "type": "SET_RESOURCE_STATE", "data": {"resources": "3", "state": "1"}},
        {"timestamp": 0.0, "type": "REJECT_JOB", "data": {"job_id": "w0!3"}},
    ],
}  # fmt: skip
"""A valid reply to the first JOB_SUBMITTED message (jobs w0!1 to w0!3, all at t=0)."""


class OneReply:
    """A scheduler that answers Batsim's message #2 with ``reply`` and every other message
    with no event (:class:`hetsched.engine.transport.Transport`: ``exchange`` and ``close``)."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.count = 0

    def exchange(self, message: str) -> str:
        self.count += 1
        if self.count == 2:
            return self.reply
        return json.dumps({"now": json.loads(message)["now"], "events": []})

    def close(self, check: bool = True) -> None:
        pass


def _run_reply(reply: str) -> str:
    """Simulate with ``reply``: it runs to the end (``loaded``), or the engine refuses it
    naming it (``refused``)."""
    with tempfile.TemporaryDirectory() as folder:
        jobs = [{"id": str(i), "subtime": 0, "res": 2, "profile": "c1e9"} for i in (1, 2, 3)]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", EngineWarning)  # e.g. jobs never executed
                simulate(platform(Path(folder)), [workload(Path(folder), jobs, PROFILES)], None,
                         Path(folder) / "out", energy=True, transport=OneReply(reply))
        except EngineError as error:
            assert "message #2" in str(error), str(error)
            result = "refused"
        else:
            result = "loaded"
    TALLY["engine protocol reader: mutated reply", result] += 1
    return result


def test_the_reply_template_runs() -> None:
    assert _run_reply(json.dumps(REPLY)) == "loaded"


@FUZZ
@given(data=st.data())
def test_mutated_replies_run_or_are_refused_naming_the_reply(data: st.DataObject) -> None:
    _run_reply(json.dumps(mutate_tree(data.draw, copy.deepcopy(REPLY))))


@FUZZ
@given(data=st.data())
def test_mutated_reply_bytes_run_or_are_refused_naming_the_reply(data: st.DataObject) -> None:
    raw = bytearray(json.dumps(REPLY).encode())
    for _ in range(data.draw(st.integers(1, 3))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(32, 126))
    _run_reply(raw.decode())
