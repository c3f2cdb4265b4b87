"""Checks of scheduler replies (engine/protocol.py), after Batsim 4.2.1's JsonProtocolReader."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.engine import batsim_json
from hetsched.engine.batsim_cli import batsim_command
from hetsched.engine.errors import ProtocolError, UnsupportedFeature
from hetsched.engine.protocol import (
    MessageWriter,
    check_event,
    encode,
    format_intervals,
    parse_call_me_later,
    parse_execute_job,
    parse_intervals,
    parse_kill_job,
    parse_query,
    parse_reply,
    parse_set_job_metadata,
    parse_set_resource_state,
    reread,
)


def test_interval_sets() -> None:
    assert format_intervals([]) == ""
    assert format_intervals([4, 0, 1, 2, 9, 10]) == "0-2 4 9-10"
    rng = np.random.default_rng(3)
    for _ in range(200):  # id arrays of more than 8: ascending ones, and any others
        ids = rng.integers(0, 40, rng.integers(9, 30))
        for array in (ids, np.unique(ids)):
            assert format_intervals(array) == format_intervals(array.tolist())
    assert parse_intervals("0-2 4  9-10") == (0, 1, 2, 4, 9, 10)
    for bad in ("3-1", "a", "1-2-3"):
        with pytest.raises(ValueError, match="invalid interval"):
            parse_intervals(bad)


def test_reply_structure() -> None:
    assert parse_reply('{"now": 2, "events": []}') == (2.0, [])
    for text, message in [
        ("{", "could not be parsed"),
        ("[]", "not a JSON object"),
        ('{"events": []}', "no 'now' key"),
        ('{"now": "x", "events": []}', "'now' value should be a number"),
        ('{"now": 1}', "no 'events' key"),
        ('{"now": 1, "events": {}}', "'events' value should be an array"),
    ]:
        with pytest.raises(ProtocolError, match=message):
            parse_reply(text)


def event(timestamp: float, kind: str = "NOTIFY") -> dict:
    return {"timestamp": timestamp, "type": kind, "data": {"type": "registration_finished"}}


def test_event_timestamps() -> None:
    assert check_event(0, event(5.0), now=6.0)[0] == 5.0
    # before the message it answers or the previous event: applied late, as Batsim does
    assert check_event(1, event(4.0), now=6.0)[0] == 4.0
    with pytest.raises(ProtocolError, match=r"event 0 \(NOTIFY\).*lower than or equal to now"):
        check_event(0, event(7.0), now=6.0)
    with pytest.raises(ProtocolError, match="should be an object"):
        check_event(0, [], now=6.0)
    with pytest.raises(ProtocolError, match="should have a 'data' key"):
        check_event(0, {"timestamp": 5, "type": "NOTIFY"}, now=6.0)


def test_execute_job_and_mapping() -> None:
    mapping = {"0": 0, "1": "1", "2": 1}  # executors 1 and 2 on the second allocated host
    record = parse_execute_job(0, {"job_id": "w0!1", "alloc": "2-3", "mapping": mapping})
    assert (record.alloc, record.mapping) == ((2, 3), (0, 1, 1))
    with pytest.raises(ProtocolError, match="no resource associated to executor 1"):
        parse_execute_job(0, {"job_id": "w0!1", "alloc": "2-3", "mapping": {"0": 0, "2": 1}})
    with pytest.raises(ProtocolError, match="only 2 allocated resources"):
        parse_execute_job(0, {"job_id": "w0!1", "alloc": "2-3", "mapping": {"0": 2}})
    with pytest.raises(ProtocolError, match="strictly positive"):
        parse_execute_job(0, {"job_id": "w0!1", "alloc": ""})
    with pytest.raises(ProtocolError, match=r"should be of size 2 or 3 \(size=1\)"):
        parse_execute_job(0, {"job_id": "w0!1"})
    with pytest.raises(UnsupportedFeature, match="'additional_io_job'"):
        parse_execute_job(0, {"job_id": "w0!1", "alloc": "0", "additional_io_job": {}})


def test_other_events() -> None:
    assert parse_call_me_later(3, {"timestamp": 7}).target == 7.0
    with pytest.raises(ProtocolError, match=r"event 3 \(CALL_ME_LATER\) should be a number"):
        parse_call_me_later(3, {"timestamp": "soon"})
    assert parse_kill_job(0, {"job_ids": ["w0!1", "w0!2"]}).job_ids == ("w0!1", "w0!2")
    with pytest.raises(ProtocolError, match="non-empty array of strings"):
        parse_kill_job(0, {"job_ids": []})
    state = parse_set_resource_state(0, {"resources": "0-1 4", "state": " 2"})
    assert (state.resources, state.state) == ((0, 1, 4), 2)  # std::stoi skips white space
    with pytest.raises(ProtocolError, match="corresponding to an integer"):
        parse_set_resource_state(0, {"resources": "0", "state": "fast"})
    with pytest.raises(ProtocolError, match="should not contain double quotes"):
        parse_set_job_metadata(0, {"job_id": "w0!1", "metadata": 'a "b"'})
    parse_query(0, {"requests": {"consumed_energy": {}}})
    with pytest.raises(ProtocolError, match="Unknown QUERY 'air_temperature_all'"):
        parse_query(0, {"requests": {"air_temperature_all": {}}})


def test_writer_refuses_going_back_in_time() -> None:
    writer = MessageWriter()
    writer.append("REQUESTED_CALL", {}, 5.0)
    with pytest.raises(AssertionError, match="date inconsistency"):
        writer.append("REQUESTED_CALL", {}, 4.0)
    assert json.loads(writer.generate(5.0))["events"][0]["timestamp"] == 5.0 and writer.empty


def test_batsim_command_options() -> None:
    assert batsim_command(
        "p.xml",
        ["w.json"],
        "out",
        energy=False,
        dynamic_jobs=True,
        socket_endpoint="tcp://localhost:28000",
        acknowledge_dynamic_jobs=True,
        forward_profiles=True,
        profile_reuse=True,
    ) == [
        "batsim", "-p", "p.xml", "-w", "w.json", "-e", "out", "--enable-dynamic-jobs",
        "--acknowledge-dynamic-jobs", "--forward-profiles-on-submission",
        "--enable-profile-reuse", "-s", "tcp://localhost:28000",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="profile reuse needs dynamic jobs"):
        batsim_command(
            "p.xml", ["w.json"], "o", energy=False, dynamic_jobs=False, socket_endpoint="x",
            profile_reuse=True,
        )  # fmt: skip
    with pytest.raises(ValueError, match="at least one workload"):
        batsim_command("p.xml", [], "o", energy=False, dynamic_jobs=False, socket_endpoint="x")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.text(max_size=5)
    | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES)
def test_reread_is_the_round_trip_through_batsims_text(value: Any) -> None:
    """A registered job as Batsim keeps it: what it writes ("%6f") read back as it reads."""
    expected = batsim_json.loads(encode(value))
    got = reread(value)
    assert json.dumps(got) == json.dumps(expected)
    assert repr(got) == repr(expected)  # same types (int or float), same -0.0


def test_reread_of_a_non_finite_double_fails_as_the_text_does() -> None:
    with pytest.raises(ValueError):
        batsim_json.loads(encode({"cpu": float("inf")}))
    with pytest.raises(ValueError):
        reread({"cpu": float("inf")})
