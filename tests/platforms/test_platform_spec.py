"""User specs (JSON/TOML): the platform they describe, and errors that name the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hetsched.platforms.model import ClusterSpec, PlatformSpec, PStateSpec
from hetsched.platforms.simgrid_xml import read_platform, write_platform
from hetsched.platforms.spec import load_spec

TOML = """
name = "lab"

[[clusters]]
name = "thin"
nb_nodes = 4
cores_per_node = 16
pstates = [{speed = 2.0e9, idle_watts = 95.0, full_watts = 190.0},
           {speed = 1.2e9, idle_watts = 80, full_watts = 130}]

[[clusters]]
name = "gpu"
nb_nodes = 2
cores_per_node = 32
node_type = "gpu-node"
off_watts = 12.5
pstates = [{speed = 3e9, idle_watts = 150, full_watts = 400}]
"""

LAB = PlatformSpec(
    (
        ClusterSpec("thin", 4, 16, (PStateSpec(2e9, 95, 190), PStateSpec(1.2e9, 80, 130))),
        ClusterSpec("gpu", 2, 32, (PStateSpec(3e9, 150, 400),), "gpu-node", 12.5),
    ),
    name="lab",
)


def _lab_dict() -> dict:
    return {
        "name": "lab",
        "clusters": [
            {"name": "thin", "nb_nodes": 4, "cores_per_node": 16, "pstates": [
                {"speed": 2e9, "idle_watts": 95.0, "full_watts": 190.0},
                {"speed": 1.2e9, "idle_watts": 80, "full_watts": 130},
            ]},
            {"name": "gpu", "nb_nodes": 2, "cores_per_node": 32, "node_type": "gpu-node",
             "off_watts": 12.5, "pstates": [{"speed": 3e9, "idle_watts": 150, "full_watts": 400}]},
        ],
    }


def test_toml_and_json_give_the_same_platform(tmp_path: Path) -> None:
    (tmp_path / "lab.toml").write_text(TOML)
    (tmp_path / "lab.json").write_text(json.dumps(_lab_dict()))
    assert load_spec(tmp_path / "lab.toml") == LAB
    assert load_spec(tmp_path / "lab.json") == LAB
    assert LAB.total_cores == 4 * 16 + 2 * 32


def _broken(change) -> dict:
    spec = _lab_dict()
    change(spec)
    return spec


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (_broken(lambda s: s["clusters"][1].update(nb_nodes=0)),
         "clusters[1].nb_nodes: must be >= 1, got 0"),
        (_broken(lambda s: s["clusters"][0]["pstates"].reverse()),
         "clusters[0].pstates[1].speed: must be < pstates[0].speed (1200000000.0): P-states go"
         " from fastest to slowest"),
        (_broken(lambda s: s["clusters"][1]["pstates"][0].update(idle_watts=-5)),
         "clusters[1].pstates[0].idle_watts: must be >= 0, got -5"),
        (_broken(lambda s: s["clusters"][0].update(colour="red")),
         "clusters[0].colour: unknown key (known: name, nb_nodes, cores_per_node, pstates,"
         " node_type, off_watts, shared_nodes)"),
        (_broken(lambda s: s["clusters"][0].update(shared_nodes="yes")),
         "clusters[0].shared_nodes: must be true or false, got 'yes'"),
        (_broken(lambda s: s["clusters"][1]["pstates"][0].update(watts=5)),
         "clusters[1].pstates[0].watts: unknown key"),
        (_broken(lambda s: s.update(version=2)), "version: unknown key (known: name, clusters)"),
        (_broken(lambda s: s["clusters"][0].pop("cores_per_node")),
         "clusters[0].cores_per_node: is required"),
        (_broken(lambda s: s["clusters"][0]["pstates"][1].pop("speed")),
         "clusters[0].pstates[1].speed: is required"),
        (_broken(lambda s: s["clusters"][0].update(pstates=[])),
         "clusters[0].pstates: must be a non-empty list"),
        (_broken(lambda s: s["clusters"][0].update(nb_nodes="4")),
         "clusters[0].nb_nodes: must be a whole number, got '4'"),
        (_broken(lambda s: s["clusters"][0]["pstates"][0].update(speed=True)),
         "clusters[0].pstates[0].speed: must be a number, got True"),
        (_broken(lambda s: s["clusters"][1].update(name="thin")),
         "clusters[1].name: duplicate cluster name 'thin'"),
        (_broken(lambda s: s["clusters"].append(7)), "clusters[2]: must be a table/object"),
        (_broken(lambda s: s.update(clusters=[])), "clusters: must be a non-empty list"),
        ([1, 2], "must be a table/object, got [1, 2]"),
    ],
)
def test_bad_spec_names_file_and_field(tmp_path: Path, spec: object, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(spec))
    with pytest.raises(ValueError) as caught:
        load_spec(path)
    assert str(caught.value).startswith(f"{path}: {message}")


def test_shared_nodes_spec_writes_one_host_per_core(tmp_path: Path) -> None:
    """``shared_nodes = true``: 2 nodes of 4 cores are 8 Batsim hosts, read back as 2 nodes."""
    spec = tmp_path / "shared.toml"
    spec.write_text(
        '[[clusters]]\nname = "gene"\nnb_nodes = 2\ncores_per_node = 4\nshared_nodes = true\n'
        'pstates = [{speed = 1e9, idle_watts = 40, full_watts = 80}]\n'
    )
    platform = load_spec(spec)
    assert platform.clusters[0].shared_nodes and platform.total_hosts == 8
    xml = write_platform(platform, tmp_path / "shared.xml")
    assert read_platform(xml) == platform
    assert xml.read_text().count('<prop id="core_index"') == 8


def test_bad_toml_syntax_and_suffix(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text("name = \n")
    with pytest.raises(ValueError, match=r"bad\.toml: not valid TOML: .*line 1"):
        load_spec(tmp_path / "bad.toml")
    (tmp_path / "bad.json").write_text("{\n  \"name\": }")
    with pytest.raises(ValueError, match=r"bad\.json: not valid JSON: .*line 2"):
        load_spec(tmp_path / "bad.json")
    (tmp_path / "lab.yaml").write_text(TOML)
    with pytest.raises(ValueError, match=r"lab\.yaml: a platform spec must end in \.json or"):
        load_spec(tmp_path / "lab.yaml")
