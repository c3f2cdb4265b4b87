"""Fuzzing the SWF reader, the conversion and ``hetsched workload from-swf`` (tests/fuzzing.py).

Inputs start from a valid trace (a header with time zones and machine sizes, eight records
over two days) and go through random mutations: a field replaced by a token from a pool of
troublemakers (``-2``, ``1.5``, ``nan``, ``1e400``, letters, NUL...), lines deleted,
duplicated, swapped or cut, bytes flipped, the file cut short, and the whole thing gzip'd or
not. Each must read (and convert) or be refused with the project's error naming the file;
the console script must exit 0 or 2 and leave no partial output file. Inputs bad by
construction (a record with 17 fields, a damaged gzip stream) must be refused, or, for gzip
damage outside the checked data, read back the very same records.
"""

from __future__ import annotations

import gzip
import tempfile
from pathlib import Path

import pytest
from fuzzing import FUZZ, TALLY, outcome
from hypothesis import given
from hypothesis import strategies as st

from hetsched.cli import main
from hetsched.workloads.batsim_workload import dumps_workload, parse_workload
from hetsched.workloads.clusters import parse_clusters
from hetsched.workloads.convert import swf_to_workload
from hetsched.workloads.schema import validate_workload
from hetsched.workloads.swf import read_swf

pytestmark = pytest.mark.filterwarnings("ignore::hetsched.workloads.swf.SwfWarning")

VALID = """\
; Version: 2.2
; Computer: Test machine
; MaxJobs: 8
; MaxRecords: 8
; UnixStartTime: 0
; TimeZone: 0
; TimeZoneString: UTC
; MaxNodes: 16
; MaxProcs: 64
; Note: a note
;       on two lines
 1   3600  10  500  4 -1 -1  4  600 -1 1 1 1 1 1 1 -1 -1
 2   7200   0  100  8 -1 -1  8  200 -1 1 2 1 2 1 1 -1 -1
 3  72000   5 3000 16 -1 -1 16 3600 -1 0 1 1 3 1 1 -1 -1
 4  80000   0    0  2 -1 -1  2   60 -1 5 3 1 1 1 1 -1 -1
 5  90000  60  700 -1 -1 -1 32  800 -1 1 2 1 2 1 1 -1 -1
 6 100000   0  900 64 -1 -1 -1 1000 -1 1 4 1 1 1 1 -1 -1
 7 150000   1   50  1 -1 -1  1   -1 -1 1 1 1 1 1 1 -1 -1
 8 160000   2  400  4 -1 -1  4  300 -1 1 5 1 5 1 1 -1 -1
"""
TOKENS = ["-1", "-2", "0", "1", "1.5", "7.49", "-0.5", "abc", "nan", "inf", "1e400", "1e3",
          "99999999999999999999", "\x00", "+3", "-0", "0x10", ";", "", "2147483648"]
CLUSTERS = parse_clusters("a:4:16,b:8:8")


def _mutate_field(lines: list[str], data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(lines) - 1))
    parts = lines[index].split()
    if not parts:
        return
    position = data.draw(st.integers(0, len(parts) - 1))
    parts[position] = data.draw(st.sampled_from(TOKENS) | st.text(max_size=4))
    lines[index] = " ".join(parts)


def _mutate_lines(lines: list[str], data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(["delete", "duplicate", "swap", "cut", "insert"]))
    i = data.draw(st.integers(0, len(lines) - 1))
    j = data.draw(st.integers(0, len(lines) - 1))
    if kind == "delete" and len(lines) > 1:
        del lines[i]
    elif kind == "duplicate":
        lines.insert(j, lines[i])
    elif kind == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "cut":
        lines[i] = lines[i][: data.draw(st.integers(0, len(lines[i])))]
    else:
        lines.insert(i, data.draw(st.text(max_size=30)))


@st.composite
def mutated_traces(draw: st.DrawFn) -> bytes:
    data = draw(st.data())
    lines = VALID.splitlines()
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            _mutate_field(lines, data)
        else:
            _mutate_lines(lines, data)
    raw = bytearray("\n".join(lines).encode("latin-1", errors="replace") + b"\n")
    for _ in range(draw(st.integers(0, 2))):
        raw[draw(st.integers(0, len(raw) - 1))] = draw(st.integers(0, 255))
    return bytes(raw)


def _write(folder: Path, data: bytes, compress: bool) -> Path:
    path = folder / ("t.swf.gz" if compress else "t.swf")
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def _read_all(path: Path) -> list:
    _, records = read_swf(path)
    return list(records)


@FUZZ
@given(data=mutated_traces(), compress=st.booleans())
def test_mutated_traces_read_or_are_refused(data: bytes, compress: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = _write(Path(folder), data, compress)
        outcome("swf reader: mutated text", path, lambda: _read_all(path))


@FUZZ
@given(data=mutated_traces(), day=st.sampled_from([None, 0, 1]))
def test_mutated_traces_convert_or_are_refused(data: bytes, day: int | None) -> None:
    """A converted document passes Batsim's checks and the annotation schema."""
    with tempfile.TemporaryDirectory() as folder:
        path = _write(Path(folder), data, compress=False)
        converted = outcome(
            "swf conversion: mutated text", path,
            lambda: swf_to_workload(path, CLUSTERS, day=day, annotate=["value", "utility"]),
        )
        if converted is not None:
            document, _ = converted
            validate_workload(parse_workload(dumps_workload(document)))


@FUZZ
@given(data=mutated_traces())
def test_cli_exits_0_or_2_and_never_leaves_a_partial_file(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = _write(Path(folder), data, compress=False)
        output = Path(folder) / "w.json"
        code = main(["workload", "from-swf", str(path), "--clusters", "a:4:16,b:8:8",
                     "--day", "1", "-o", str(output)])
        assert code in (0, 2)
        TALLY["cli workload from-swf", "loaded" if code == 0 else "refused"] += 1
        left = sorted(p.name for p in Path(folder).iterdir())
        assert left == (["t.swf", "w.json"] if code == 0 else ["t.swf"])
        if code == 0:
            validate_workload(parse_workload(output.read_text()), str(output))


@FUZZ
@given(line=st.integers(0, 8), cut=st.integers(1, 17))
def test_a_record_with_missing_fields_is_always_refused(line: int, cut: int) -> None:
    lines = VALID.splitlines()
    header = len(lines) - 8
    parts = lines[header + line % 8].split()
    lines.insert(header + line, " ".join(parts[:cut]))
    with tempfile.TemporaryDirectory() as folder:
        path = _write(Path(folder), ("\n".join(lines) + "\n").encode(), compress=False)
        outcome("swf reader: short record (bad)", path, lambda: _read_all(path), bad=True)


@FUZZ
@given(offset=st.integers(0, 10_000), value=st.integers(0, 255), cut=st.booleans())
def test_damaged_gzip_is_refused_or_reads_the_same_records(
    offset: int, value: int, cut: bool
) -> None:
    """Damage that changes nothing (the gzip header's time stamp and OS bytes, bits of the
    deflate stream that do not change what it decodes to) may read; anything else is
    refused: never records that differ from the original's."""
    text = VALID * 40
    original = gzip.compress(text.encode(), mtime=0)
    data = bytearray(original)
    offset %= len(data)
    if cut:
        data = data[:offset]
    elif data[offset] == value:
        value ^= 0xFF
        data[offset] = value
    else:
        data[offset] = value
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.swf.gz"
        path.write_bytes(bytes(data))
        reference = Path(folder) / "ref.swf"
        reference.write_text(text)
        damaged = outcome("swf reader: damaged gzip", path, lambda: _read_all(path))
        if damaged is not None:
            assert [job[:18] for job in damaged] == [job[:18] for job in _read_all(reference)]
