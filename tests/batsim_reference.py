"""Where the tests find the runs of real Batsim 4.2.1 (never part of the repository).

``$HETSCHED_BATSIM_REFERENCE``, else ``shared/data/batsim-reference`` beside the repository
(its README describes the folder). :func:`reference_case` skips the calling test, saying why,
when a case is absent.
"""

from __future__ import annotations

import gzip
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from hetsched.engine.replay import Exchange, load_transcript

REFERENCE_DIR = Path(
    os.environ.get("HETSCHED_BATSIM_REFERENCE")
    or Path(__file__).resolve().parents[2] / "shared" / "data" / "batsim-reference"
)
KNOWN_CASES = (
    "curie47-hetsched-max-vpr-ph",
    "curie47-pybatsim-easyBackfill",
    "dvfs-pstate-cycler",
    "sdsc300-batsched-conservative_bf",
    "sdsc300-batsched-easy_bf",
    "sdsc300-batsched-easy_bf-walltime-equals-delay",
    "sdsc300-batsched-fcfs_fast",
    "sdsc300-pybatsim-easyBackfill",
    "sdsc300-pybatsim-schedEasySjfBackfill",
)
"""The cases of the folder's README; any other case found in the folder is tested too."""


def case_names() -> list[str]:
    """The README's cases and any other case folder found."""
    found = [path.name for path in REFERENCE_DIR.iterdir()] if REFERENCE_DIR.is_dir() else []
    return sorted(set(KNOWN_CASES) | {name for name in found if (REFERENCE_DIR / name).is_dir()})


@dataclass(frozen=True)
class ReferenceCase:
    """One recorded run: inputs, ``batsim`` command line, transcript and Batsim's outputs."""

    name: str
    path: Path

    def _lines(self) -> list[str]:
        return (self.path / "command.txt").read_text(encoding="utf-8").splitlines()

    @property
    def exit_code(self) -> int:
        """Batsim's exit code (first line: ``batsim 4.2.1 (SimGrid 3.32) exit code: 0``)."""
        return int(self._lines()[0].rsplit(":", 1)[1])

    @property
    def batsim_arguments(self) -> list[str]:
        """The ``batsim`` command line, without the program name."""
        words = shlex.split(self._lines()[1])
        assert words[0] == "batsim", f"{self.path}/command.txt: line 2 is not a batsim command"
        return words[1:]

    def unpack(self, directory: Path) -> tuple[Path, Path]:
        """``platform.xml`` and ``workload.json`` written into ``directory``."""
        paths = []
        for name in ("platform.xml", "workload.json"):
            target = directory / name
            target.write_bytes(gzip.decompress((self.path / f"{name}.gz").read_bytes()))
            paths.append(target)
        return paths[0], paths[1]

    def exchanges(self, workload: Path) -> list[Exchange]:
        """The recorded messages, with the workload path Batsim sent put back.

        The README says the path in SIMULATION_BEGINS was edited to ``workload.json``; Batsim
        sends the absolute path of ``-w``, so the path of the workload given to the engine goes
        back in its place.
        """
        exchanges = load_transcript(self.path / "transcript.jsonl.gz")
        begins = exchanges[0].message["events"][0]
        assert begins["type"] == "SIMULATION_BEGINS"
        assert begins["data"]["workloads"] == {"w0": "workload.json"}
        begins["data"]["workloads"]["w0"] = str(workload.absolute())
        return exchanges

    def outputs(self) -> dict[str, str]:
        """Batsim's output files by kind (``jobs``, ``schedule``, ...), as text."""
        return {
            path.name[len("out_") : -len(".csv.gz")]: gzip.decompress(path.read_bytes()).decode()
            for path in sorted(self.path.glob("out_*.csv.gz"))
        }


PENDING_DIR = Path(
    os.environ.get("HETSCHED_BATSIM_PENDING") or REFERENCE_DIR.parent / "batsim-pending"
)
"""Runs of real Batsim recorded like the reference runs, kept apart until the engine matches
them (``shared/data/batsim-pending``, its README); a case may move to :data:`REFERENCE_DIR`."""


def pending_case(name: str) -> ReferenceCase:
    """The case ``name`` of the pending folder (or of the reference folder, where it goes once
    the engine matches it), or skip the test with the reason."""
    for folder in (PENDING_DIR, REFERENCE_DIR):
        if (folder / name / "transcript.jsonl.gz").is_file():
            return ReferenceCase(name, folder / name)
    pytest.skip(f"Batsim run {name!r} is neither in {PENDING_DIR} nor in {REFERENCE_DIR}")


def reference_case(name: str) -> ReferenceCase:
    """The case ``name``, or skip the test with the reason."""
    path = REFERENCE_DIR / name
    if not REFERENCE_DIR.is_dir():
        pytest.skip(
            f"the Batsim reference runs are not here ({REFERENCE_DIR}); set "
            "HETSCHED_BATSIM_REFERENCE or put shared/ beside the repository"
        )
    if not (path / "transcript.jsonl.gz").is_file():
        pytest.skip(f"reference case {name!r} is not in {REFERENCE_DIR}")
    return ReferenceCase(name, path)
