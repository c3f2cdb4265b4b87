"""Writing and loading workload files: canonical bytes, no silent overwrite, strict parsing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hetsched.workloads.batsim_workload import (
    dumps_workload,
    hetsched_member,
    load_workload,
    write_workload,
)
from hetsched.workloads.schema import WorkloadError


def document() -> dict:
    return {
        "nb_res": 3,
        "jobs": [
            {"id": "7", "subtime": 0, "walltime": 11, "res": 1, "profile": "delay_10",
             "cores": 2, "etc": {"b": 10.0, "a": 12.5}, "user": "u1"},
            {"id": "9", "subtime": 5.25, "walltime": 21, "res": 2, "profile": "delay_20",
             "cores": 3, "etc": {"b": 20.0, "a": 1e-3}},
        ],
        "profiles": {"delay_20": {"type": "delay", "delay": 20},
                     "delay_10": {"type": "delay", "delay": 10}},
        "hetsched": {"schema_version": 1, "reference_cluster": "b", "clusters": {"b": 2, "a": 4},
                     "measure_window": None, "source": {"note": "é"}},
    }


def test_canonical_text_keeps_order_one_job_per_line() -> None:
    text = dumps_workload(document())
    lines = text.splitlines()
    assert lines[0] == "{" and lines[-1] == "}"
    assert lines[1] == '"nb_res":3,'
    assert lines[2] == '"jobs":['
    assert lines[3].startswith('{"id":"7","subtime":0,')
    assert lines[4].startswith('{"id":"9","subtime":5.25,')
    # Key order is the document's: the platform order of clusters survives ("b" before "a").
    assert '"clusters":{"b":2,"a":4}' in text
    assert text.isascii() and "\\u00e9" in text
    assert json.loads(text) == document()


def test_same_document_same_bytes_and_round_trip(tmp_path: Path) -> None:
    first, second, third = tmp_path / "1.json", tmp_path / "2.json", tmp_path / "3.json"
    write_workload(document(), first)
    write_workload(document(), second)
    assert first.read_bytes() == second.read_bytes()
    write_workload(load_workload(first), third)
    assert third.read_bytes() == first.read_bytes()


def test_existing_file_is_never_overwritten_without_force(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text("precious")
    with pytest.raises(FileExistsError, match=re.escape(f"{path} exists: pass force=True")):
        write_workload(document(), path)
    assert path.read_text() == "precious"
    write_workload(document(), path, force=True)
    assert load_workload(path) == document()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.json"]  # no temporary left


def test_invalid_document_is_not_written(tmp_path: Path) -> None:
    doc = document()
    doc["jobs"][0]["cores"] = 0
    path = tmp_path / "w.json"
    with pytest.raises(WorkloadError, match="field 'cores': must be an integer >= 1"):
        write_workload(doc, path)
    assert not path.exists()


def test_non_finite_numbers_are_refused_on_write(tmp_path: Path) -> None:
    doc = document()
    doc["hetsched"]["source"]["x"] = float("nan")
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        write_workload(doc, tmp_path / "w.json")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"nb_res": 1,\n "jobs": [}', r"could not be parsed \(line 2 column 11: Expecting value"),
        ('{"nb_res": 1, "nb_res": 2}', "duplicate key 'nb_res' in one JSON object"),
        ('{"nb_res": NaN}', "NaN is not a JSON number"),
        ('{"nb_res": 1e400}', "number 1e400 does not fit in a double"),
        ('{"nb_res": 1, "jobs": [], "profiles": {}, "hetsched": []}', "'hetsched': must be an"),
        ("[]", "not a JSON object"),
    ],
)
def test_load_errors_name_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(WorkloadError, match=re.escape(str(path)) + ".*" + message):
        load_workload(path)


def test_require_annotations(tmp_path: Path) -> None:
    path = tmp_path / "plain.json"
    path.write_text(json.dumps({"nb_res": 1, "jobs": [], "profiles": {}}))
    assert load_workload(path)["nb_res"] == 1
    with pytest.raises(WorkloadError, match="not a hetsched workload"):
        load_workload(path, require_annotations=True)


def test_hetsched_member_of_a_written_workload_is_the_parsed_one() -> None:
    text = dumps_workload(document())
    assert hetsched_member(text) == json.loads(text)["hetsched"]
    assert hetsched_member(text.replace('"hetsched"', '"other"')) is None


def test_hetsched_member_last_is_read_without_the_jobs() -> None:
    # the jobs are not parsed when hetsched is the last member: here they are not even JSON
    text = '{"jobs": [not json], \n "hetsched" : {"clusters": {"a": 4}}\n}\n'
    assert hetsched_member(text) == {"clusters": {"a": 4}}
    # not last: the whole document is parsed (and invalid jobs are an error)
    with pytest.raises(json.JSONDecodeError):
        hetsched_member('{"hetsched": {"clusters": {"a": 4}}, "jobs": [not json]}')


@pytest.mark.parametrize("text, member", [
    # a job's own "hetsched" key is not the document's
    ('{"jobs": [{"id": 1, "hetsched": 2}]}', None),
    ('{"hetsched": {"a": 1}, "jobs": [{"id": 1, "hetsched": 2}]}', {"a": 1}),
    # "hetsched" as a string value, and inside a string (its quotes escaped)
    ('{"jobs": [], "x": ["a", "hetsched"]}', None),
    ('{"jobs": [], "x": "\\"hetsched\\": {}"}', None),
    # a nested object's last member followed by more of the document
    ('{"jobs": [], "x": {"hetsched": {"a": 1}}}', None),
    # duplicate keys: the last, as json.loads
    ('{"hetsched": {"a": 1}, "jobs": [], "hetsched": {"a": 2}}', {"a": 2}),
])
def test_hetsched_member_is_the_top_level_one(text: str, member: object) -> None:
    assert hetsched_member(text) == member == json.loads(text).get("hetsched")
