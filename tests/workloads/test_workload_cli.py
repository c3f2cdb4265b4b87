"""``hetsched workload ...`` through the console script's main()."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from shared_traces import TRACE_DIR

from hetsched.cli import main
from hetsched.workloads.batsim_workload import load_workload

SHARED = TRACE_DIR
TRACE = """\
; UnixStartTime: 0
; TimeZoneString: UTC
; MaxProcs: 64
10   3600 0 5000 2 -1 -1 2 6000 -1 1 3 1 7 1 1 -1 -1
11  72000 0  100 3 -1 -1 3  200 -1 1 4 1 8 1 1 -1 -1
12  80000 0   50 4 -1 -1 4  100 -1 1 4 1 8 1 1 -1 -1
"""


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.swf"
    path.write_text(TRACE)
    return path


def test_from_swf_writes_and_reports(trace: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "w.json"
    code = main(["workload", "from-swf", str(trace), "--clusters", "a:2:8,b:4:4", "--day", "0",
                 "--annotate", "value", "--annotate", "utility", "--seed", "4", "-o", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "window: day 0 (1970-01-01, UTC)" in printed
    assert "  kept: 3" in printed
    assert f"wrote {out}: 3 jobs, 3 profiles, nb_res 12" in printed
    document = load_workload(out, require_annotations=True)
    # Day 0's window starts 4 h before midnight: subtime = submit + 14,400.
    assert [(job["id"], job["subtime"]) for job in document["jobs"]] == [
        ("10", 18_000), ("11", 86_400), ("12", 94_400),
    ]
    assert all("value" in job and "utility" in job for job in document["jobs"])
    assert document["hetsched"]["source"]["seed"] == 4


def test_existing_output_needs_force(trace: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "w.json"
    out.write_text("keep me")
    argv = ["workload", "from-swf", str(trace), "--clusters", "a:2:8", "-o", str(out)]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"hetsched workload: error: {out} exists: pass --force to overwrite it\n"
    )
    assert out.read_text() == "keep me"
    assert main([*argv, "--force"]) == 0
    assert len(load_workload(out)["jobs"]) == 3


def test_malformed_trace_error_names_the_line(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.swf"
    bad.write_text(TRACE + "13 90000 0 7 1 -1 -1 1 100 -1 1 4 1 8 1 1 -1\n")
    code = main(["workload", "from-swf", str(bad), "--clusters", "a:2:8", "-o",
                 str(tmp_path / "w.json")])
    assert code == 2
    err = capsys.readouterr().err
    assert err == (f"hetsched workload: error: {bad}:7: expected 18 fields in an SWF job"
                   " record, found 17\n")
    assert not (tmp_path / "w.json").exists()
    assert list(tmp_path.iterdir()) == [bad]  # no partial or temporary file either


def test_quirks_are_one_line_warnings_and_in_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quirky = tmp_path / "quirky.swf"
    quirky.write_text(TRACE + "13 90000 0 -7 1 -1 -1 1 100 -1 1 4 1 8 1 1 -1 -1\n"
                      "14 90000 0 -7 1 -1 -1 1 100 -1 1 4 1 8 1 1 -1 -1\n")
    code = main(["workload", "from-swf", str(quirky), "--clusters", "a:2:8", "-o",
                 str(tmp_path / "w.json")])
    assert code == 0
    captured = capsys.readouterr()
    assert captured.err == (
        f"hetsched workload: warning: {quirky}:7: field 4 (run time) is -7; values below 0"
        " other than -1 (read as missing); further ones are counted in the conversion report\n"
    )
    assert "  values below 0 other than -1 (read as missing): 2 (first at line 7)" in (
        captured.out.splitlines()
    )
    assert "  dropped, run time missing (-1): 2" in captured.out.splitlines()


def test_corrupt_gzip_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = bytearray(gzip.compress((TRACE * 400).encode()))
    data[len(data) // 2] ^= 0xFF
    corrupt = tmp_path / "corrupt.swf.gz"
    corrupt.write_bytes(bytes(data))
    code = main(["workload", "from-swf", str(corrupt), "--clusters", "a:2:8", "-o",
                 str(tmp_path / "w.json")])
    *warnings, error = capsys.readouterr().err.splitlines()  # garbage may warn first
    assert code == 2
    assert error.startswith(f"hetsched workload: error: {corrupt}: corrupt or truncated gzip")
    assert all(line.startswith("hetsched workload: warning: ") for line in warnings)
    assert list(tmp_path.iterdir()) == [corrupt]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--day", "-2"], "argument --day: must be an integer >= 0, got '-2'"),
        (["--warmup-hours", "-1"], "argument --warmup-hours: must be a finite number >= 0"),
        (["--max-cores", "0"], "argument --max-cores: must be an integer >= 1, got '0'"),
    ],
)
def test_from_swf_option_errors(trace: Path, tmp_path: Path, extra: list[str], message: str,
                                capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["workload", "from-swf", str(trace), "--clusters", "a:2:8", "-o",
              str(tmp_path / "w.json"), *extra])
    assert exit_.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "w.json").exists()


def test_from_swf_with_a_platform_file(trace: Path, tmp_path: Path) -> None:
    model = pytest.importorskip("hetsched.platforms.model")
    simgrid_xml = pytest.importorskip("hetsched.platforms.simgrid_xml")
    pstate = model.PStateSpec(speed=1e9, idle_watts=10.0, full_watts=20.0)
    platform = model.PlatformSpec(clusters=(
        model.ClusterSpec(name="thin", nb_nodes=6, cores_per_node=2, pstates=(pstate,)),
        model.ClusterSpec(name="fat", nb_nodes=2, cores_per_node=16, pstates=(pstate,)),
    ))
    xml = tmp_path / "p.xml"
    simgrid_xml.write_platform(platform, xml)
    out = tmp_path / "w.json"
    assert main(["workload", "from-swf", str(trace), "--platform", str(xml), "-o", str(out)]) == 0
    document = load_workload(out)
    assert document["nb_res"] == 8
    assert document["hetsched"]["clusters"] == {"thin": 2, "fat": 16}
    assert document["hetsched"]["reference_cluster"] == "thin"


@pytest.mark.skipif(not (SHARED / "KTH-SP2-1996-2.1-cln.swf.gz").is_file(),
                    reason=f"{SHARED} has no KTH trace")
def test_from_swf_by_registry_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "kth.json"
    code = main(["workload", "from-swf", "KTH-SP2-1996-2.1-cln", "--trace-dir", str(SHARED),
                 "--clusters", "sp2:1:100", "--day", "30", "-o", str(out)])
    assert code == 0
    assert "  kept: 99" in capsys.readouterr().out
    assert main(["workload", "traces", "--trace-dir", str(SHARED)]) == 0
    listing = capsys.readouterr().out
    assert f"KTH-SP2-1996-2.1-cln: 28,476 jobs; {SHARED / 'KTH-SP2-1996-2.1-cln.swf.gz'}" in listing


def test_show_and_validate(trace: Path, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "w.json"
    main(["workload", "from-swf", str(trace), "--clusters", "a:2:8,b:4:4", "--annotate", "value",
          "-o", str(out)])
    capsys.readouterr()
    assert main(["workload", "show", str(out)]) == 0
    text = capsys.readouterr().out
    assert "  jobs: 3   profiles: 3   nb_res: 12" in text
    assert "  submissions: 0 s to 76,400 s (span 21.22 h)" in text
    assert "  clusters: a (2 cores/node), b (4 cores/node); reference: a" in text
    assert "value functions: 3 jobs" in text
    assert main(["workload", "show", "--json", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["jobs"] == 3 and summary["cores"] == {"min": 2, "mean": 3.0, "max": 4}
    assert summary["value"]["jobs"] == 3
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"nb_res": 1, "jobs": [], "profiles": {}}))
    assert main(["workload", "validate", str(out), str(plain)]) == 0
    assert capsys.readouterr().out == (
        f"{out}: valid, annotated (schema 1), 3 jobs\n{plain}: valid, plain Batsim, 0 jobs\n"
    )


def test_show_refuses_an_invalid_workload(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"nb_res": 1, "jobs": [{"id": "1", "subtime": 0, "res": 1}],
                               "profiles": {}}))
    assert main(["workload", "show", str(bad)]) == 2
    assert capsys.readouterr().err == (
        f"hetsched workload: error: Invalid JSON file '{bad}': job 1 has no 'profile' field\n"
    )


def test_generate_is_deterministic_and_valid(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "g1.json", tmp_path / "g2.json"
    for out in (first, second):
        assert main(["workload", "generate", "--preset", "tarplee", "--seed", "3",
                     "-o", str(out)]) == 0
    assert first.read_bytes() == second.read_bytes()
    assert "wrote" in capsys.readouterr().out
    assert main(["workload", "show", str(first)]) == 0
    assert main(["workload", "generate", "--preset", "tarplee", "--seed", "3",
                 "-o", str(first)]) == 2
    assert "exists: pass --force" in capsys.readouterr().err
    assert main(["workload", "generate", "--preset", "nope", "--seed", "1",
                 "-o", str(tmp_path / "n.json")]) == 2
    assert "unknown workload preset 'nope'" in capsys.readouterr().err


def test_presets_lists_the_papers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["workload", "presets"]) == 0
    names = {line.split()[0] for line in capsys.readouterr().out.splitlines()}
    assert {"machovec", "tarplee", "hansen", "hwang"} <= names


def test_a_folder_or_a_missing_file_is_one_line(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["workload", "validate", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"hetsched workload: error: {tmp_path}: Is a directory\n"
    assert main(["workload", "show", str(tmp_path / "absent.json")]) == 2
    assert capsys.readouterr().err == (
        f"hetsched workload: error: {tmp_path / 'absent.json'}: No such file or directory\n"
    )


def test_a_quirk_is_warned_once_per_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The same file read twice in one command (a stand-in command converting it twice, as
    a study does) gives each warning once; the next command warns again."""
    from hetsched.workloads import workload_cli as workloads_cli
    from hetsched.workloads.clusters import parse_clusters
    from hetsched.workloads.convert import swf_to_workload

    quirky = tmp_path / "quirky.swf"
    quirky.write_text(TRACE.replace("; UnixStartTime", "; MaxRuntime: N/A\n; UnixStartTime"))

    def convert_twice(args: object) -> int:
        for _ in range(2):
            swf_to_workload(quirky, parse_clusters("a:2:8"))
        return 0

    monkeypatch.setattr(workloads_cli, "run_presets", convert_twice)
    for _ in range(2):
        assert main(["workload", "presets"]) == 0
        assert capsys.readouterr().err.count("MaxRuntime: 'N/A' is not a number") == 1


@pytest.mark.parametrize("command", [
    ["workload", "from-swf", "t.swf", "--clusters", "a:1:4", "-o", "w.json"],
    ["compare", "--trace", "t.swf", "--day", "1"],
])
def test_etc_cov_zero_is_refused_naming_the_option(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    """A COV of 0 is no ETC distribution (gamma): argparse refuses it, naming the option."""
    from hetsched.cli import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main([*command, "--etc-cov", "0"])
    assert exited.value.code == 2 and list(tmp_path.iterdir()) == []
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        "error: argument --etc-cov: must be a finite number > 0, got '0'")
