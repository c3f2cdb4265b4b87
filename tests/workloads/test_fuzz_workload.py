"""Fuzzing the workload loader, the annotation schema and the metrics' workload reader.

Inputs start from valid annotated workloads (a converted trace with value and utility
functions, and the first jobs of the Machovec, Hansen and Hwang generators, which carry the
other annotation fields) and go through random mutations of the JSON tree (a value replaced
by random JSON, NaN and infinities included, a key deleted or added) or of the file's bytes.
Each must load or be refused with :class:`hetsched.errors.WorkloadError` naming the file
(tests/fuzzing.py). Mutations that are wrong by construction (a job without ``res``, a
negative ETC, an unknown annotation field, ...) must be refused.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path

from fuzzing import FUZZ, mutate_tree, outcome
from hypothesis import given
from hypothesis import strategies as st

from hetsched.metrics.annotations import read_workload_info
from hetsched.workloads import generators
from hetsched.workloads.batsim_workload import dumps_workload, load_workload
from hetsched.workloads.clusters import parse_clusters
from hetsched.workloads.convert import swf_to_workload
from hetsched.workloads.schema import validate_workload

TRACE = """\
; UnixStartTime: 0
; TimeZoneString: UTC
 1   3600  10  500  4 -1 -1  4  600 -1 1 1 1 1 1 1 -1 -1
 2   7200   0  100  8 -1 -1  8  200 -1 1 2 1 2 1 1 -1 -1
 3  72000   5 3000 16 -1 -1 16 3600 -1 0 1 1 3 1 1 -1 -1
"""


def _first_jobs(document: dict, count: int = 4) -> dict:
    document = copy.deepcopy(document)
    document["jobs"] = document["jobs"][:count]
    used = {job["profile"] for job in document["jobs"]}
    document["profiles"] = {k: v for k, v in document["profiles"].items() if k in used}
    return document


def _bases() -> list[dict]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.swf"
        path.write_text(TRACE)
        converted, _ = swf_to_workload(path, parse_clusters("a:4:16,b:8:8"),
                                       annotate=["value", "utility"])
    bases = [converted] + [
        _first_jobs(generators.generate(preset, 1, None))
        for preset in ("machovec", "hansen-8-low", "tarplee")
    ]
    for document in bases:
        validate_workload(document)
    return bases


BASES = _bases()


@st.composite
def mutated_documents(draw: st.DrawFn) -> dict:
    return mutate_tree(draw, copy.deepcopy(draw(st.sampled_from(BASES))))


def _write(folder: str, text: str | bytes) -> Path:
    path = Path(folder) / "w.json"
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


@FUZZ
@given(document=mutated_documents())
def test_mutated_documents_load_or_are_refused(document: dict) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, json.dumps(document))
        loaded = outcome("workload loader: mutated JSON tree", path, lambda: load_workload(path))
        if loaded is not None:  # what loads is what Batsim and the schema accept, and re-writes
            assert load_workload(_write(folder, dumps_workload(loaded))) == loaded
        outcome("metrics workload reader: mutated JSON tree", path,
                lambda: read_workload_info(path))


@st.composite
def mutated_bytes(draw: st.DrawFn) -> bytes:
    """A base workload's file with 1 to 4 bytes replaced or runs of up to 40 bytes cut."""
    raw = bytearray(dumps_workload(draw(st.sampled_from(BASES))).encode())
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(raw) - 1))
        if draw(st.booleans()):
            raw[position] = draw(st.integers(0, 255))
        else:
            del raw[position : position + draw(st.integers(1, 40))]
    return bytes(raw)


@FUZZ
@given(raw=mutated_bytes())
def test_mutated_bytes_load_or_are_refused(raw: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, raw)
        outcome("workload loader: mutated bytes", path, lambda: load_workload(path))
        outcome("metrics workload reader: mutated bytes", path, lambda: read_workload_info(path))


BAD_EDITS = {
    "job without res": lambda job, doc: job.pop("res"),
    "res 0": lambda job, doc: job.update(res=0),
    "res above nb_res": lambda job, doc: job.update(res=doc["nb_res"] + 1),
    "negative subtime": lambda job, doc: job.update(subtime=-1),
    "unknown profile": lambda job, doc: job.update(profile="no-such-profile"),
    "unknown annotation": lambda job, doc: job.update(colour="blue"),
    "cores 0": lambda job, doc: job.update(cores=0),
    "negative ETC": lambda job, doc: job["etc"].update({next(iter(job["etc"])): -1.0}),
    "ETC of an unknown cluster": lambda job, doc: job["etc"].update(nowhere=10.0),
    "job id twice": lambda job, doc: doc["jobs"].append(copy.deepcopy(job)),
    "nb_res a string": lambda job, doc: doc.update(nb_res="8"),
    "no profiles": lambda job, doc: doc.pop("profiles"),
    "schema version 2": lambda job, doc: doc["hetsched"].update(schema_version=2),
    "NaN walltime": lambda job, doc: job.update(walltime=float("nan")),
}


@FUZZ
@given(base=st.sampled_from(BASES), edit=st.sampled_from(sorted(BAD_EDITS)), data=st.data())
def test_bad_documents_are_always_refused(base: dict, edit: str, data: st.DataObject) -> None:
    document = copy.deepcopy(base)
    job = document["jobs"][data.draw(st.integers(0, len(document["jobs"]) - 1))]
    BAD_EDITS[edit](job, document)
    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, json.dumps(document))
        outcome("workload loader: bad by construction", path, lambda: load_workload(path),
                bad=True)
