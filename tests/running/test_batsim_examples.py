"""Batsim's own example workloads (tag v4.2.1) under every registry heuristic and the stock
schedulers, on the embedded engine (running/run.py, validation/preflight.py, workloads/annotate.py).

Each run either ends with every task accounted for (completed, or dropped with the reason the
heuristic gave, counted in the summary) and the schedule checked, or is refused before it
starts with one line naming the command that adds what is missing. After ``hetsched workload
annotate`` (``--add hansen`` for Hansen et al.'s heuristics) every heuristic runs. The
embedded engine refuses profiles that communicate (``test_various_profile_types.json``),
which real Batsim runs.

The files are read at test time from a copy of Batsim's repository (``HETSCHED_BATSIM_REPO``,
default ``/work/batsim-v4.2.1``) and never copied into this one; the tests skip, saying so,
without it. ``test_batsim_paper_workload_seed1.json`` (800 jobs) is cut to its first
:data:`PAPER_JOBS` jobs, so that 33 heuristics run on it in a test's time.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hetsched.cli import main
from hetsched.errors import WorkloadError
from hetsched.heuristics.registry import HEURISTICS
from hetsched.running.run import run_heuristic
from hetsched.workloads.annotate import annotate_workload
from hetsched.workloads.batsim_workload import write_workload

BATSIM_REPO = Path(os.environ.get("HETSCHED_BATSIM_REPO", "/work/batsim-v4.2.1"))
WORKLOADS = (
    "example_workload_hpc_seed1_jobs250.json",
    "test_batsim_paper_workload_seed1.json",
    "test_delays.json",
    "test_various_profile_types.json",
)
PAPER_JOBS = 120
STOCK = ("pybatsim:easyBackfill", "pybatsim:fillerSched")
HANSEN = ("pb-r", "pb-s", "rf-min-min", "rf-min-max", "rf-duplex")
FIXES = ("hetsched workload annotate", "hetsched workload generate", "hetsched platform annotate")
ENGINE_REFUSAL = ("communication (com > 0), which needs SimGrid's network model, is not"
                  " supported by the embedded engine; use real Batsim")

pytestmark = pytest.mark.skipif(
    not (BATSIM_REPO / "workloads").is_dir(),
    reason=f"no copy of Batsim's repository at {BATSIM_REPO} (set HETSCHED_BATSIM_REPO)",
)

SPEC = """name = "dvfs-pair"

[[clusters]]
name = "fast"
nb_nodes = 64
cores_per_node = 1
pstates = [{speed = 2.0e9, idle_watts = 95.0, full_watts = 190.0},
           {speed = 1.0e9, idle_watts = 80.0, full_watts = 130.0}]

[[clusters]]
name = "slow"
nb_nodes = 64
cores_per_node = 1
pstates = [{speed = 1.0e9, idle_watts = 90.0, full_watts = 150.0}]
"""
"""A hetsched platform of 128 one-core nodes (Batsim's hpc example asks up to 128) in two
clusters, one with DVFS."""


def _batsim_workload(name: str, folder: Path) -> Path:
    document = json.loads((BATSIM_REPO / "workloads" / name).read_text())
    if name == "test_batsim_paper_workload_seed1.json":
        document["jobs"] = document["jobs"][:PAPER_JOBS]
    path = folder / name
    path.write_text(json.dumps(document))
    return path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The platform, each workload as Batsim has it and annotated for that platform."""
    folder = tmp_path_factory.mktemp("batsim-examples")
    (folder / "dvfs-pair.toml").write_text(SPEC)
    assert main(["platform", "generate", "--spec", str(folder / "dvfs-pair.toml"),
                 "-o", str(folder / "platform.xml")]) == 0
    from hetsched.validation.preflight import PlatformView

    clusters = list(PlatformView.read(folder / "platform.xml").clusters.values())
    for name in WORKLOADS:
        plain = _batsim_workload(name, folder)
        document = json.loads(plain.read_text())
        annotated = annotate_workload(document, clusters, etc_from="walltime", seed=1)
        write_workload(annotated, folder / f"annotated-{name}")
        hansen = annotate_workload(document, clusters, what=("etc", "hansen"),
                                   etc_from="walltime", seed=1)
        write_workload(hansen, folder / f"hansen-{name}")
    return folder


def _outcome(
    name: str, platform: Path, workload: Path, outdir: Path, energy: bool = True
) -> str:
    """``"ran"`` after checking the summary, ``"refused"`` after checking the refusal names a
    command, ``"engine"`` when the embedded engine refuses a communicating profile."""
    try:
        summary = run_heuristic(name, platform, workload, outdir, energy=energy)
    except WorkloadError as error:
        text = str(error)
        assert "\n" not in text and any(fix in text for fix in FIXES), text
        assert not outdir.exists()
        return "refused"
    except ValueError as error:
        assert ENGINE_REFUSAL in str(error), error
        return "engine"
    total = summary.tasks_completed + summary.tasks_failed + summary.tasks_dropped
    assert total == summary.tasks_total == len(json.loads(workload.read_text())["jobs"])
    if not name.startswith("pybatsim:"):
        assert sum((summary.drop_reasons or {}).values()) == summary.tasks_dropped
    assert summary.checked_rules
    return "ran"


@pytest.mark.parametrize("workload", WORKLOADS)
def test_every_scheduler_runs_batsims_workloads_or_is_refused_naming_the_fix(
    inputs: Path, workload: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As Batsim has them: the baselines and the bag heuristics run on the delay workloads
    (run times from the delay profiles), each drop with its reason; the value, utility and
    Hansen heuristics are refused before the run naming the command that adds their
    annotations; a communicating profile gives no run time, so every hetsched heuristic is
    refused on test_various_profile_types, and the stock schedulers meet the engine's own
    refusal."""
    monkeypatch.chdir(tmp_path)  # pybatsim's schedulers may write their logs there
    outcomes = {
        name: _outcome(name, inputs / "platform.xml", inputs / workload, tmp_path / name)
        for name in (*HEURISTICS, *STOCK)
    }
    communicating = workload == "test_various_profile_types.json"
    for name, outcome in outcomes.items():
        needs = HEURISTICS[name].requires if name in HEURISTICS else frozenset()
        if name in STOCK:
            expected = "engine" if communicating else "ran"
        elif communicating or needs:
            expected = "refused"
        else:
            expected = "ran"
        assert outcome == expected, (name, outcome)


@pytest.mark.parametrize("workload", WORKLOADS)
def test_after_workload_annotate_every_heuristic_runs(
    inputs: Path, workload: str, tmp_path: Path,
) -> None:
    """Annotated (``--etc-from walltime`` for the profiles that give no run time; ``--add
    hansen`` for Hansen et al.'s heuristics, which refuse the default annotation naming that
    option), every heuristic runs to the end; on test_various_profile_types the embedded
    engine still refuses the communicating profiles (real Batsim runs them)."""
    communicating = workload == "test_various_profile_types.json"
    for name in HEURISTICS:
        path = inputs / f"annotated-{workload}"
        if name in HANSEN:
            with pytest.raises(WorkloadError, match="--add hansen"):
                run_heuristic(name, inputs / "platform.xml", path, tmp_path / name)
            path = inputs / f"hansen-{workload}"
        outcome = _outcome(name, inputs / "platform.xml", path, tmp_path / name)
        assert outcome == ("engine" if communicating else "ran"), (name, outcome)


@pytest.mark.parametrize(
    ("platform", "workload"),
    [("cluster512.xml", "example_workload_hpc_seed1_jobs250.json"),
     ("cluster512.xml", "test_batsim_paper_workload_seed1.json"),
     ("small_platform.xml", "test_delays.json")],
)
def test_the_heuristics_run_on_batsims_own_platforms(
    inputs: Path, platform: str, workload: str, tmp_path: Path,
) -> None:
    """On Batsim's own platforms (no hetsched host properties; no power either, so without
    energy, as ``--no-energy``), the heuristics that need no annotation run, from the delay
    profiles; the others are refused naming the fix."""
    path = BATSIM_REPO / "platforms" / platform
    for name in ("fcfs", "easy", "conservative", "min-min", "max-value"):
        outcome = _outcome(name, path, inputs / workload, tmp_path / name, energy=False)
        assert outcome == ("refused" if HEURISTICS[name].requires else "ran"), (name, outcome)
