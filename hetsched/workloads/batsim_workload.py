"""Reading and writing Batsim workload files (JSON: ``nb_res``, ``jobs``, ``profiles``).

:func:`write_workload` validates the document (:mod:`hetsched.workloads.schema`) and writes
it in a canonical form, so the same document always gives byte-identical files: keys in
the document's own order (JSON objects are ordered in Python; the order of the ``clusters``
object is the platform order, which the annotation schema relies on), ASCII only, compact
JSON, with one line per top-level member and one line per job and per profile (readable,
greppable and diff-friendly). Reading a file back and writing it again gives the same
bytes. It refuses to overwrite an existing file unless ``force=True``.

:func:`load_workload` parses strictly (duplicate keys, ``NaN``, ``Infinity`` and numbers
too large for a double are errors, as in Batsim's JSON parser) and validates.

>>> import pathlib, tempfile
>>> doc = {"nb_res": 2, "profiles": {"d10": {"type": "delay", "delay": 10}},
...        "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "d10"}]}
>>> print(dumps_workload(doc), end="")
{
"nb_res":2,
"profiles":{
"d10":{"type":"delay","delay":10}
},
"jobs":[
{"id":"1","subtime":0,"res":1,"profile":"d10"}
]
}
>>> path = pathlib.Path(tempfile.mkdtemp()) / "w.json"
>>> write_workload(doc, path)
>>> load_workload(path) == doc
True
>>> write_workload(doc, path)
Traceback (most recent call last):
...
FileExistsError: ...w.json exists: pass force=True (--force) to overwrite it
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import cast

from hetsched.files import write_atomically
from hetsched.workloads.schema import WorkloadError, validate_workload


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


def dumps_workload(document: dict) -> str:
    """The canonical text of a workload document (see the module docstring)."""
    members = []
    for key, value in document.items():
        name = _compact(key)
        if isinstance(value, list) and value:
            body = ",\n".join(_compact(item) for item in value)
            members.append(f"{name}:[\n{body}\n]")
        elif isinstance(value, dict) and value:
            body = ",\n".join(f"{_compact(k)}:{_compact(item)}" for k, item in value.items())
            members.append(f"{name}:{{\n{body}\n}}")
        else:
            members.append(f"{name}:{_compact(value)}")
    return "{\n" + ",\n".join(members) + "\n}\n"


def write_workload(
    document: dict, path: str | Path, force: bool = False, *, validate: bool = True
) -> None:
    """Validate ``document`` and write it to ``path`` (canonical, deterministic bytes).

    An existing ``path`` is a :class:`FileExistsError` unless ``force``. The file is written
    whole or not at all (:func:`hetsched.files.write_atomically`): an error or an
    interruption never leaves a partial workload behind.
    """
    path = Path(path)
    if validate:
        validate_workload(document, str(path), path.parent)
    write_atomically(path, dumps_workload(document).encode("ascii"), force=force)


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise WorkloadError(f"duplicate key {key!r} in one JSON object")
        result[key] = value
    return result


def _no_constant(name: str) -> float:
    raise WorkloadError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise WorkloadError(f"number {text} does not fit in a double")
    return value


def parse_workload(text: str, filename: str = "<workload>") -> object:
    """Parse JSON text strictly; errors name the file (and line and column when known)."""
    try:
        return json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_no_constant,
            parse_float=_finite_float,
        )
    except json.JSONDecodeError as error:
        raise WorkloadError(
            f"Invalid JSON file '{filename}': could not be parsed (line {error.lineno}"
            f" column {error.colno}: {error.msg})"
        ) from None
    except (WorkloadError, ValueError) as error:  # ValueError: an integer of 4,300+ digits
        raise WorkloadError(
            f"Invalid JSON file '{filename}': could not be parsed: {error}"
        ) from None
    except RecursionError:
        raise WorkloadError(
            f"Invalid JSON file '{filename}': could not be parsed: nested too deeply"
        ) from None


_DECODER = json.JSONDecoder()
_KEY = '"hetsched"'
_COLON = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")
_END = re.compile(r"[ \t\n\r]*\}[ \t\n\r]*")


def hetsched_member(text: str) -> object:
    r"""The top-level ``hetsched`` member of a workload's JSON text, ``None`` when it has none.

    When it is the document's last member, as hetsched writes it
    (:func:`~hetsched.workloads.gen_common.workload_document`), only that member is parsed:
    a Hwang et al. workload of 500,000 jobs is 375 MB of text whose jobs take about 2.3 GB and
    45 s of CPU to build. The last ``"hetsched"`` of the text is that member
    exactly when it is a key (after ``{`` or ``,``, before ``:``: a quote inside a JSON string
    is escaped) whose value is followed by nothing but the closing brace of the document;
    otherwise the whole text is parsed (:func:`json.loads`, duplicate keys: the last). The
    text is a workload Batsim has read, valid JSON.

    >>> hetsched_member('{"jobs": [{"hetsched": 1}], "hetsched": {"clusters": {"c": 4}}}')
    {'clusters': {'c': 4}}
    >>> hetsched_member('{"hetsched": {"clusters": {"c": 4}}, "jobs": [{"hetsched": 1}]}')
    {'clusters': {'c': 4}}
    >>> hetsched_member('{"jobs": [{"note": "\\"hetsched\\": 2}"}]}') is None
    True
    """
    key = text.rfind(_KEY)
    before = key - 1
    while before >= 0 and text[before] in " \t\n\r":
        before -= 1
    if before >= 0 and text[before] in "{," and (colon := _COLON.match(text, key + len(_KEY))):
        value, end = _DECODER.raw_decode(text, colon.end())
        if _END.fullmatch(text, end):
            return value
    document = json.loads(text)
    return document.get("hetsched") if isinstance(document, dict) else None


def load_workload(path: str | Path, *, require_annotations: bool = False) -> dict:
    """Read and validate a Batsim workload; with ``require_annotations`` it must carry the
    ``hetsched`` annotation object (schema version 1)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise WorkloadError(
            f"Invalid JSON file '{path}': not UTF-8 text (byte {error.start})"
        ) from None
    parsed = parse_workload(text, str(path))
    validate_workload(parsed, str(path), path.parent)
    document = cast(dict, parsed)  # validate_workload refuses anything but an object
    if require_annotations and "hetsched" not in document:
        raise WorkloadError(
            f"{path}: not a hetsched workload (no 'hetsched' annotation object); convert a"
            " trace with 'hetsched workload from-swf' or generate one"
        )
    return document
