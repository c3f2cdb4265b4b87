"""The engine against real Batsim 4.2.1, message for message.

Each reference run of ``shared/data/batsim-reference`` (read through ``batsim_reference``) is
replayed: the engine runs on the run's inputs with its ``batsim`` flags, and the scheduler is
replaced by its recorded replies (:mod:`hetsched.engine.replay`), which also checks every
message the engine sends against the one Batsim sent; a difference fails the run, naming the
message and the first differing field. Then the engine's output files are compared with
Batsim's, line for line (only the wall-clock figures and the version differ).

This holds the engine to Batsim for batsched's ``easy_bf``, ``conservative_bf`` and
``fcfs_fast`` without batsched, and to pybatsim's and hetsched's schedulers, P-state changes,
walltime kills and the deadlock that ends a run with dynamic jobs and no
``registration_finished``.

What these runs caught (each would fail here again if it came back):

* ``curie47-pybatsim-easyBackfill`` message 306 (line 611 of the transcript): at t=52141 five
  jobs end and five are submitted. Batsim sends the five JOB_SUBMITTED first, then the five
  JOB_COMPLETED in the order the jobs started. Each job executor queries the energy of every
  host before telling the server (``add_job_end``), one simcall per host not yet updated at
  this date (SimGrid's ``HostEnergy::get_consumed_energy``); the executors walk the 9,369
  hosts in lockstep and all send after the submitter, which needs no query. The engine had
  charged the whole walk to the first executor only, so the others overtook the submitter.
* numbers in messages carry six decimals (``%6f``): the scheduler computes with the rounded
  values (twin profiles of ``curie47-hetsched-max-vpr-ph``; ``dvfs-pstate-cycler`` replies at
  ``1878.333333`` while the clock says ``1878.3333333333333``);
* parallel-task ends a few ulps apart (``1 / (1 / 1483)`` vs ``1 / (1 / 14)``) fall in one
  SimGrid step or in two: message 284 of ``curie47-hetsched-max-vpr-ph`` has one completion;
  SimGrid's clock is a sum of steps, each action decremented at each step;
* Batsim reads numbers with rapidjson's default (not always correctly rounded) parser and
  keeps a registered profile as its writer prints it (``%6f``), then reads it back: the twins'
  flops, hence their ends to the ulp and the energies to the last printed digit;
* energies and times summed in ``long double``, per-host energies updated as SimGrid does;
* the deadlock: Batsim writes every output and exits 0.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path

import pytest
from batsim_reference import ReferenceCase, case_names, pending_case, reference_case

from hetsched.engine import batsim_cli
from hetsched.engine.errors import EngineWarning
from hetsched.engine.replay import Replayer, ReplayTransport
from hetsched.engine.simulation import SimulationResult, simulate

WALL_CLOCK_FIGURES = ("batsim_version", "simulation_time", "scheduling_time")
"""``out_schedule.csv`` figures that are not simulated (version, wall-clock seconds)."""

def replay(case: ReferenceCase, directory: Path) -> SimulationResult:
    """The engine on ``case``'s inputs and flags, against the recorded replies."""
    platform, workload = case.unpack(directory)
    options = batsim_cli.parse_arguments(case.batsim_arguments)
    transport = ReplayTransport(Replayer(case.exchanges(workload), case.name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EngineWarning)  # asserted on result.deadlock
        return simulate(
            platform,
            [workload],
            None,
            directory / "out",
            energy=options.energy,
            dynamic_jobs=options.dynamic_jobs,
            acknowledge_dynamic_jobs=options.acknowledge_dynamic_jobs,
            forward_profiles=options.forward_profiles_on_submission,
            profile_reuse=options.enable_profile_reuse,
            transport=transport,
        )


def output_differences(expected: dict[str, str], files: Mapping[str, Path]) -> list[str]:
    """Where the engine's output ``files`` (by kind) differ from Batsim's (empty: identical)."""
    found = {kind: path.read_text() for kind, path in files.items()}
    differences = []
    if set(found) != set(expected):
        differences.append(f"files: Batsim wrote {sorted(expected)}, the engine {sorted(found)}")
    for kind in sorted(set(found) & set(expected)):
        mine, theirs = found[kind].splitlines(), expected[kind].splitlines()
        if kind == "schedule":
            keys, values = theirs[0].split(","), theirs[1].split(",")
            assert mine[0].split(",") == keys, "schedule header"
            for key, value, other in zip(keys, values, mine[1].split(","), strict=True):
                if key not in WALL_CLOCK_FIGURES and value != other:
                    differences.append(f"schedule {key}: Batsim {value}, engine {other}")
            continue
        if len(mine) != len(theirs):
            differences.append(f"{kind}: Batsim wrote {len(theirs)} lines, the engine {len(mine)}")
        for number, (line, other) in enumerate(zip(theirs, mine, strict=False), start=1):
            if line == other:
                continue
            differences.append(f"{kind} line {number}: Batsim {line!r}, engine {other!r}")
    return differences


@pytest.mark.parametrize("name", case_names())
def test_replay_matches_batsim(name: str, tmp_path: Path) -> None:
    case = reference_case(name)
    result = replay(case, tmp_path)
    differences = output_differences(case.outputs(), result.output_files)
    assert not differences, "\n".join(differences[:20])
    assert case.exit_code == 0
    summary = (case.path / "batsim-summary.txt").read_text()
    assert ("Deadlock detected" in summary) == (result.deadlock is not None)


def test_replies_dated_in_the_past_are_applied_late_as_batsim_does(tmp_path: Path) -> None:
    """Batsim's reference run ``batsim-pending/floor-timestamps``: a scheduler that floors its
    times, as batsim-py does, answers the submission at 5.5 with EXECUTE_JOB at 5.0 (and 7.25
    with 7.0, 12.9 with 12.0). Batsim 4.2.1 starts the jobs at 5.5, 7.25 and 12.9 and runs to
    the end; so does the engine, without refusing the replies."""
    case = pending_case("floor-timestamps")
    result = replay(case, tmp_path)
    assert output_differences(case.outputs(), result.output_files) == []
    assert case.exit_code == 0 and result.deadlock is None
    starts = [line.split(",")[8] for line in result.jobs_csv.read_text().splitlines()[1:]]
    assert starts == ["5.500000", "12.900000", "7.250000"]
