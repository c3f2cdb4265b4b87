"""Fuzzing the platform loaders: JSON/TOML specs, SimGrid XML, the metrics' resource reader.

Specs start from a valid two-cluster spec whose tree is mutated (a value replaced by random
data, a key deleted or added) and written as JSON or TOML; platform files start from a
generated SimGrid XML file (two clusters, two P-states) whose attributes are changed, whose
elements are deleted or duplicated, or whose bytes are flipped. Each must load or be refused
with :class:`hetsched.errors.PlatformError` naming the file (tests/fuzzing.py). A spec or a
file wrong by construction (P-states not fastest first, a host with another cluster's speed
list) must be refused. The SimGrid XML reader loads exactly what was written or refuses.
"""

from __future__ import annotations

import copy
import json
import re
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from fuzzing import FUZZ, mutate_tree, outcome
from hypothesis import given
from hypothesis import strategies as st

from hetsched.metrics.resources import resource_clusters
from hetsched.platforms.simgrid_xml import platform_to_xml, read_platform
from hetsched.platforms.spec import load_spec, platform_from_dict

SPEC = {
    "name": "lab",
    "clusters": [
        {"name": "thin", "nb_nodes": 3, "cores_per_node": 16,
         "pstates": [{"speed": 2.0e9, "idle_watts": 95.0, "full_watts": 190.0},
                     {"speed": 1.2e9, "idle_watts": 80, "full_watts": 130}]},
        {"name": "gpu", "nb_nodes": 2, "cores_per_node": 32, "node_type": "gpu-node",
         "off_watts": 12.5, "pstates": [{"speed": 3e9, "idle_watts": 150, "full_watts": 400}]},
    ],
}
PLATFORM = platform_from_dict(SPEC)
XML = platform_to_xml(PLATFORM)


@st.composite
def mutated_specs(draw: st.DrawFn) -> dict:
    return mutate_tree(draw, copy.deepcopy(SPEC))


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)  # TOML spells inf and nan as Python does
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        items = (f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    return '""'  # TOML has no null: an empty string instead


def _as_toml(spec: dict) -> str:
    return "\n".join(f"{json.dumps(key)} = {_toml_value(value)}" for key, value in spec.items())


@FUZZ
@given(spec=mutated_specs(), as_toml=st.booleans())
def test_mutated_specs_load_or_are_refused(spec: dict, as_toml: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("lab.toml" if as_toml else "lab.json")
        path.write_text(_as_toml(spec) if as_toml else json.dumps(spec))
        outcome("platform spec (JSON/TOML): mutated tree", path, lambda: load_spec(path))


@FUZZ
@given(as_toml=st.booleans(), data=st.data())
def test_mutated_spec_bytes_load_or_are_refused(as_toml: bool, data: st.DataObject) -> None:
    raw = bytearray((_as_toml(SPEC) if as_toml else json.dumps(SPEC)).encode())
    for _ in range(data.draw(st.integers(1, 3))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("lab.toml" if as_toml else "lab.json")
        path.write_bytes(bytes(raw))
        outcome("platform spec (JSON/TOML): mutated bytes", path, lambda: load_spec(path))


@FUZZ
@given(cluster=st.integers(0, 1), data=st.data())
def test_pstates_out_of_order_are_always_refused(cluster: int, data: st.DataObject) -> None:
    spec = copy.deepcopy(SPEC)
    pstates = spec["clusters"][cluster]["pstates"]
    pstates.append({**pstates[-1], "speed": pstates[-1]["speed"] * data.draw(st.floats(1, 10))})
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "lab.json"
        path.write_text(json.dumps(spec))
        outcome("platform spec: P-states not fastest first (bad)", path,
                lambda: load_spec(path), bad=True)


ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')


@st.composite
def mutated_xml(draw: st.DrawFn) -> bytes:
    lines = XML.splitlines()
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(["attribute", "delete", "duplicate", "byte"]))
        attributes = list(ATTRIBUTE.finditer(lines[index]))
        if kind == "attribute" and attributes:
            match = draw(st.sampled_from(attributes))
            value = draw(st.sampled_from(["", "0", "-1", "1e400", "nan", "x", "2", "c1",
                                          "master", "compute_node", "1.0:2.0"])
                         | st.text(max_size=6))
            value = value.replace('"', "&quot;").replace("<", "&lt;").replace("&", "&amp;")
            lines[index] = (lines[index][: match.start(2)] + value
                            + lines[index][match.end(2):])
        elif kind == "delete" and len(lines) > 1:
            del lines[index]
        elif kind == "duplicate":
            lines.insert(index, lines[index])
        elif lines[index]:
            position = draw(st.integers(0, len(lines[index]) - 1))
            character = chr(draw(st.integers(32, 126)))
            lines[index] = lines[index][:position] + character + lines[index][position + 1:]
    return ("\n".join(lines) + "\n").encode()


def _canonical(text: str) -> str:
    """The elements and attributes (no DOCTYPE, processing instruction, comment, spacing)."""
    text = re.sub(r"<!DOCTYPE[^>]*>|<\?.*?\?>", "", text, flags=re.DOTALL)
    return ElementTree.canonicalize(text, strip_text=True)


@FUZZ
@given(data=mutated_xml())
def test_mutated_platform_files_load_or_are_refused(data: bytes) -> None:
    """What the reader accepts is a platform it would write back as the same hosts."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "platform.xml"
        path.write_bytes(data)
        platform = outcome("platform XML reader: mutated file", path, lambda: read_platform(path))
        if platform is not None:  # only comments, spacing or the DOCTYPE may differ
            assert _canonical(platform_to_xml(platform)) == _canonical(data.decode())
        outcome("metrics resource reader: mutated file", path, lambda: resource_clusters(path))


@FUZZ
@given(host=st.integers(0, PLATFORM.total_nodes - 1))
def test_a_host_with_another_speed_list_is_always_refused(host: int) -> None:
    lines = XML.splitlines()
    hosts = [i for i, line in enumerate(lines) if 'core="1"' in line]
    lines[hosts[host]] = re.sub(r'speed="[^"]*"', 'speed="1.0f"', lines[hosts[host]])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "platform.xml"
        path.write_text("\n".join(lines))
        outcome("platform XML reader: host speed changed (bad)", path,
                lambda: read_platform(path), bad=True)
