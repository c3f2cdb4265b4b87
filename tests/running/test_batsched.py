"""batsched in runs and comparisons, with a stand-in ``batsched``.

batsched is in no package registry reachable here: ``tests/fake_batsched.py`` stands in for it
with batsched 1.4.0's command line, either replaying real batsched's recorded replies (a
reference run of ``shared/data/batsim-reference``) or as a tiny FCFS. The tiny case is
``test_run.py``'s; by hand, FCFS on it: job 1 (2 nodes) on resources 0-1, [0, 100); job 2 (2
nodes, at 10) on the free 2-3, [10, 60) (``delay`` profiles). Values 10 + 6 (50 s <= soft
deadline 60): 16 of 16, 100 %; makespan 100; waits 0.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from batsim_reference import reference_case
from test_run import tiny  # noqa: F401 (fixture)

from hetsched.cli import main
from hetsched.engine.replay import TO_BATSIM, TO_SCHEDULER
from hetsched.metrics.checker import BATSIM_RULES


def run(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, dict | None, str]:
    code = main(["run", *arguments, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if code == 0 else None, err


def test_batsched_replayed_on_the_engine_gives_batsim_outputs(
    tmp_path: Path, fake_batsched: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """``hetsched run batsched:easy_bf`` on the embedded engine, batsched being its recorded
    replies against Batsim 4.2.1: every message is Batsim's, the outputs are Batsim's."""
    case = reference_case("sdsc300-batsched-easy_bf")
    platform, workload = case.unpack(tmp_path)
    transcript = tmp_path / "transcript.jsonl"
    with transcript.open("w") as stream:
        for exchange in case.exchanges(workload):
            stream.write(json.dumps({"dir": TO_SCHEDULER, "msg": exchange.message}) + "\n")
            stream.write(json.dumps({"dir": TO_BATSIM, "msg": exchange.reply}) + "\n")
    monkeypatch.setenv("FAKE_BATSCHED_TRANSCRIPT", str(transcript))
    code, summary, err = run(
        capsys, "batsched:easy_bf", "-p", str(platform), "-w", str(workload.absolute()),
        "-o", str(tmp_path / "run"), "--no-energy", "--batsched", str(fake_batsched),
    )  # fmt: skip
    assert code == 0, err + (tmp_path / "run" / "scheduler.log").read_text()
    assert summary is not None and summary["heuristic"] == "batsched:easy_bf"
    assert summary["tasks_completed"] == summary["tasks_total"] == 136  # in the measure window
    assert summary["checked_rules"] == list(BATSIM_RULES)
    for kind, text in case.outputs().items():
        if kind != "schedule":
            assert (tmp_path / "run" / f"out_{kind}.csv").read_text() == text, kind
    argv = json.loads((tmp_path / "batsched-argv.json").read_text())
    assert argv[:3] == ["-v", "easy_bf", "-s"] and argv[3].startswith("tcp://*:")


@pytest.mark.parametrize("engine", ["embedded", "batsim"])
def test_batsched_fcfs_on_both_engines_by_hand(
    tiny: Path, fake_batsched: Path, fake_batsim: Path, engine: str,  # noqa: F811
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """batsched found on PATH; the numbers of the module docstring, through both engines."""
    monkeypatch.setenv("PATH", f"{fake_batsched.parent}{os.pathsep}{os.environ['PATH']}")
    code, summary, err = run(
        capsys, "batsched:fcfs_fast", "-p", "platform.xml", "-w", "workload.json",
        "--engine", engine, "--option", "queue_order=asc_size", "--option", "alpha=2",
    )  # fmt: skip
    assert code == 0, err
    assert summary is not None and summary["engine"] == engine
    assert summary["outdir"] == "runs/workload/batsched-fcfs_fast"
    assert summary["value_percent"] == 100.0 and summary["tasks_completed"] == 2
    assert summary["makespan"] == 100.0 and summary["mean_waiting_time"] == 0.0
    assert summary["checked_rules"] == list(BATSIM_RULES)
    argv = json.loads((tiny / "batsched-argv.json").read_text())
    assert argv[:3] == ["-v", "fcfs_fast", "-s"]
    assert argv[4:] == ["--queue_order", "asc_size", "--variant_options", '{"alpha": 2}']
    if engine == "batsim":
        batsim_argv = json.loads(fake_batsim.read_text())
        assert "--enable-dynamic-jobs" not in batsim_argv
        assert batsim_argv[batsim_argv.index("-s") + 1].rsplit(":", 1)[1] == argv[3].rsplit(":")[-1]


def test_compare_with_batsched_beside_hetsched_and_pybatsim(
    tiny: Path, fake_batsched: Path, capsys: pytest.CaptureFixture[str],  # noqa: F811
) -> None:  # fmt: skip
    code = main(["compare", "--platform", "platform.xml", "--workload", "workload.json",
                 "--heuristics", "easy,pybatsim:easyBackfill,batsched:fcfs_fast",
                 "--batsched", str(fake_batsched), "-o", "cmp", "--no-energy"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:4]}
    assert set(rows) == {"easy", "pybatsim:easyBackfill", "batsched:fcfs_fast"}
    assert rows["easy"][1] == "87.5" and rows["batsched:fcfs_fast"][1] == "100.0"
    assert {row[5] for row in rows.values()} == {"-"}  # energy: none without the energy model
    assert (tiny / "cmp" / "batsched-fcfs_fast" / "summary.json").is_file()
    assert (tiny / "cmp" / "pybatsim-easyBackfill" / "out_jobs.csv").is_file()


def test_batsched_not_installed_says_how_to_get_it(
    tiny: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:  # fmt: skip
    monkeypatch.setenv("PATH", str(tiny / "nowhere"))
    code, _, err = run(capsys, "batsched:easy_bf", "-p", "platform.xml", "-w", "workload.json")
    assert code == 2
    assert err.startswith("hetsched run: error: batsched is not installed (not on PATH): install")
    assert "batsched 1.4.0" in err and "--batsched PATH" in err
    code, _, err = run(capsys, "batsched:easy_bf", "-p", "platform.xml", "-w", "workload.json",
                       "--batsched", str(tiny / "no-such-batsched"))  # fmt: skip
    assert code == 2 and f"--batsched {tiny / 'no-such-batsched'}: no such executable" in err
    assert not (tiny / "runs").exists()


@pytest.mark.parametrize("engine", ["embedded", "batsim"])
def test_batsched_failures_stop_the_run_with_its_log(
    tiny: Path, fake_batsched: Path, fake_batsim: Path, engine: str,  # noqa: F811
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A variant batsched 1.4.0 does not have is refused before the run (exit 2, the closest
    variant named, nothing written); batsched crashing mid-run: exit 1, batsched's last
    words, no process left behind (the run returns at all)."""
    common = ["-p", "platform.xml", "-w", "workload.json", "--engine", engine,
              "--batsched", str(fake_batsched), "--force"]  # fmt: skip
    code, _, err = run(capsys, "batsched:easy_bff", *common, "-o", "typo")
    assert code == 2, err
    assert err.startswith("hetsched run: error: unknown batsched variant 'easy_bff' (did you"
                          " mean batsched:easy_bf?): batsched 1.4.0 has conservative_bf, ")
    assert not (tiny / "typo").exists()
    monkeypatch.setenv("FAKE_BATSCHED_CRASH_AFTER", "3")
    code, _, err = run(capsys, "batsched:easy_bf", *common)
    assert code == 1, err
    assert "batsched exited with code 6" in err and "crashing on message 3" in err


def test_batsim_failing_beside_batsched_is_reported(
    tiny: Path, fake_batsched: Path, fake_batsim: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("FAKE_BATSIM_FAIL", "1")
    code, _, err = run(capsys, "batsched:easy_bf", "-p", "platform.xml", "-w", "workload.json",
                       "--engine", "batsim", "--batsched", str(fake_batsched))  # fmt: skip
    assert code == 1
    assert "batsim exited with code 3 before the end of the simulation" in err
    assert "Invalid platform file 'platform.xml': fake failure" in err
