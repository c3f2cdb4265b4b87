"""``hetsched platform generate|show|presets`` through the console script's main()."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hetsched.cli import main
from hetsched.platforms.presets import PRESETS, generate
from hetsched.platforms.simgrid_xml import platform_to_xml, read_platform


def test_generate_preset_writes_the_preset(tmp_path: Path, capsys) -> None:
    out = tmp_path / "hwang.xml"
    assert main(["platform", "generate", "--preset", "hwang", "--seed", "3", "-o", str(out)]) == 0
    assert out.read_text() == platform_to_xml(generate("hwang", 3))
    assert capsys.readouterr().out == (
        f"wrote {out} (preset hwang, seed 3): 4 clusters, 500 nodes, 2,400 cores\n"
    )


def test_generate_refuses_to_overwrite_without_force(tmp_path: Path, capsys) -> None:
    out = tmp_path / "p.xml"
    out.write_text("mine")
    assert main(["platform", "generate", "--preset", "khemka", "-o", str(out)]) == 2
    assert "hetsched platform: error:" in capsys.readouterr().err
    assert out.read_text() == "mine"
    assert main(["platform", "generate", "--preset", "khemka", "-o", str(out), "--force"]) == 0
    assert read_platform(out) == generate("khemka", 0)  # the seed defaults to 0


def test_generate_khemka_sized_for_a_trace(tmp_path: Path) -> None:
    out = tmp_path / "kth.xml"
    args = ["platform", "generate", "--preset", "khemka", "--seed", "4", "-o", str(out)]
    assert main([*args, "--max-procs", "100", "--fraction", "0.2"]) == 0
    assert read_platform(out) == generate("khemka", 4, max_procs=100, fraction=0.2)
    assert main([*args, "--cores", "5000", "--force"]) == 0
    assert read_platform(out) == generate("khemka", 4, cores=5000)


def test_generate_with_other_preset_options(tmp_path: Path) -> None:
    out = tmp_path / "m.xml"
    assert main(["platform", "generate", "--preset", "machovec", "--seed", "2", "-o", str(out),
                 "--option", "idle_fraction=0.25", "--option", "cores=20000"]) == 0
    assert read_platform(out) == generate("machovec", 2, idle_fraction=0.25, cores=20_000)
    out = tmp_path / "t.xml"
    assert main(["platform", "generate", "--preset", "tarplee", "-o", str(out),
                 "--option", "machines_per_type=2,3"]) == 0
    assert [c.nb_nodes for c in read_platform(out).clusters] == [2, 3]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--preset", "curie"], "unknown preset 'curie'"),
        (["--preset", "hwang", "--cores", "10"], "preset 'hwang' has no option 'cores'"),
        (["--preset", "khemka", "--option", "cores"], "--option 'cores': expected KEY=VALUE"),
        (["--preset", "khemka", "--cores", "5", "--option", "cores=6"], "given twice"),
        (["--preset", "khemka", "--max-procs", "100"], "'max_procs' and 'fraction' go together"),
    ],
)
def test_generate_errors_write_nothing(tmp_path: Path, capsys, extra: list, message: str) -> None:
    out = tmp_path / "never.xml"
    assert main(["platform", "generate", *extra, "-o", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_generate_from_a_spec_and_bad_spec(tmp_path: Path, capsys) -> None:
    spec = {"name": "lab", "clusters": [
        {"name": "a", "nb_nodes": 2, "cores_per_node": 4,
         "pstates": [{"speed": 2e9, "idle_watts": 10, "full_watts": 40}]},
        {"name": "b", "nb_nodes": 1, "cores_per_node": 8,
         "pstates": [{"speed": 1e9, "idle_watts": -1, "full_watts": 40}]},
    ]}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(spec))
    out = tmp_path / "lab.xml"
    assert main(["platform", "generate", "--spec", str(bad), "-o", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"hetsched platform: error: {bad}: clusters[1].pstates[0].idle_watts:"
        " must be >= 0, got -1\n"
    )
    assert not out.exists()
    spec["clusters"][1]["pstates"][0]["idle_watts"] = 5
    good = tmp_path / "good.json"
    good.write_text(json.dumps(spec))
    assert main(["platform", "generate", "--spec", str(good), "-o", str(out)]) == 0
    assert read_platform(out).total_cores == 2 * 4 + 8
    assert main(["platform", "generate", "--spec", str(good), "--seed", "1", "-o",
                 str(tmp_path / "x.xml")]) == 2
    assert "need --preset" in capsys.readouterr().err


def test_show_prints_clusters_pstates_and_power(tmp_path: Path, capsys) -> None:
    out = tmp_path / "m.xml"
    main(["platform", "generate", "--preset", "machovec", "--seed", "1", "-o", str(out)])
    capsys.readouterr()
    assert main(["platform", "show", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    platform = generate("machovec", 1)
    gp1 = platform.clusters[0]
    assert lines[0] == "platform machovec-seed1: 6 clusters"
    assert lines[1].split() == ["cluster", "node", "type", "nodes", "cores/node", "cores",
                                "P-state", "Gflop/s/core", "idle", "W", "full", "W", "off", "W"]
    # gp1, P-states 0..2: speed 1, sqrt(0.75) = 0.866, sqrt(0.5) = 0.7071 Gflop/s per core.
    assert lines[2].split() == [
        "gp1", gp1.node_type, f"{gp1.nb_nodes:,}", str(gp1.cores_per_node),
        f"{gp1.total_cores:,}", "0", "1", "0", f"{gp1.pstates[0].full_watts:.6g}", "0"]
    assert lines[3].split() == ["1", "0.866", "0", f"{gp1.pstates[1].full_watts:.6g}"]
    assert lines[4].split() == ["2", "0.7071", "0", f"{gp1.pstates[2].full_watts:.6g}"]
    assert lines[-1].split() == ["total", f"{platform.total_nodes:,}",
                                 f"{platform.total_cores:,}"]
    assert len(lines) == 2 + 6 * 3 + 1


def test_show_errors(tmp_path: Path, capsys) -> None:
    assert main(["platform", "show", str(tmp_path / "none.xml")]) == 2
    assert "No such file" in capsys.readouterr().err
    other = tmp_path / "other.xml"
    other.write_text("<platform version='4.1'><zone id='z' routing='Full'/></platform>")
    assert main(["platform", "show", str(other)]) == 2
    assert f"{other}: <zone id='z'>: expected routing" in capsys.readouterr().err


def test_presets_lists_every_preset(capsys) -> None:
    assert main(["platform", "presets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(PRESETS)
    assert lines[0].split(None, 1)[1] == PRESETS["khemka"]
