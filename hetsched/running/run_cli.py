"""``hetsched run``: one scheduler, one platform, one workload; checked schedule; summary.

See ``docs/run.md`` for the options and every key of the ``--json`` summary.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hetsched.metrics.bags import BagRecord
from hetsched.metrics.checker import VIOLATION_KINDS, ScheduleViolation
from hetsched.metrics.fairness import FairnessRecord
from hetsched.metrics.family import FamilyRecord
from hetsched.metrics.makespan_goals import RobustnessRecord
from hetsched.metrics.summary import RunSummary
from hetsched.metrics.utility import UtilityRecord
from hetsched.metrics.value import ValueRecord
from hetsched.running.docker_engine import DEFAULT_BATSIM_IMAGE, NETWORKS, DockerError
from hetsched.running.run import (
    ENGINES,
    BatschedError,
    BatsimError,
    ExternalTools,
    folder_name,
    parse_option,
    run_heuristic,
)


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _check(rules: tuple[str, ...] | None) -> str:
    if rules is None:
        return "-"
    return "passed, all rules" if set(rules) == set(VIOLATION_KINDS) else "passed, Batsim rules"


def family_rows(summary: RunSummary) -> list[tuple[str, str]]:
    """The rows of the papers' own measures, one family's after another's, for the families
    whose records the run has (:attr:`~hetsched.metrics.summary.RunSummary.families`).

    Hansen et al. (a batch with a makespan goal Delta): the predicted robustness Psi(I) =
    min_i P(i, I[i]) (eq. 2, the critical application's probability), the predicted
    probability that the whole batch meets Delta, Delta itself and whether the batch met it.
    Tarplee et al. (a bag of tasks): the LP bound MS_LB (sec. 2.2) and makespan / MS_LB.
    Hwang et al. (a Hwang workload whose every task completed): fairness and efficiency
    (sec. 3, 6.1) and the makespan of simple fairness + AllCore that efficiency divides.
    Khemka's and Machovec's measures are the table's own rows (every run prints them). A
    family this command does not know yet gets one row per key of its record.

    >>> from hetsched.metrics.summary import RunSummary
    >>> s = RunSummary("rf-duplex", "embedded", "o", "w.json", "p.xml", None, 2, 2, 0, 0,
    ...                energy_joules=None, energy_window_joules=None, makespan=130.0,
    ...                mean_waiting_time=0.0, mapping_events=2, mapping_latency_p50=0.1,
    ...                mapping_latency_p95=0.1, mapping_latency_max=0.1, makespan_goals=2,
    ...                makespan_goals_met=1, makespan_goal=120.0, batch_met=False,
    ...                robustness_predicted=0.674, batch_probability_predicted=0.0028)
    >>> for row in family_rows(s): print(row)
    ('robustness Psi, predicted (min_i P_i)', '0.6740')
    ('P(batch meets goal), predicted', '0.0028')
    ('makespan goal Delta (s)', '120.000')
    ('batch met the goal', 'no (makespan 1.083 x Delta)')
    """
    rows = []
    for record in summary.families:
        lines = FAMILY_ROWS.get(type(record), _record_rows)
        rows += lines(record, summary.makespan)
    return rows


def _goal_rows(record: RobustnessRecord, makespan: float) -> list[tuple[str, str]]:
    rows = [
        ("robustness Psi, predicted (min_i P_i)", _probability(record.robustness_predicted)),
        ("P(batch meets goal), predicted", _probability(record.batch_probability_predicted)),
        ("makespan goal Delta (s)", _number(record.makespan_goal)),
    ]
    if record.batch_met is not None:
        ratio = "" if not record.makespan_goal else (
            f" (makespan {makespan / record.makespan_goal:.3f} x Delta)"
        )
        rows.append(("batch met the goal", ("yes" if record.batch_met else "no") + ratio))
    return rows


def _bag_rows(record: BagRecord, makespan: float) -> list[tuple[str, str]]:
    return [
        ("makespan lower bound MS_LB (s)", _number(record.makespan_lower_bound)),
        ("makespan / MS_LB", "-" if record.makespan_ratio is None
         else f"{record.makespan_ratio:.5f}"),
    ]


def _fairness_rows(record: FairnessRecord, makespan: float) -> list[tuple[str, str]]:
    return [
        ("fairness (Hwang)", _number(record.fairness)),
        ("efficiency (makespan / fairness+AllCore)", _number(record.efficiency)),
        ("fairness+AllCore makespan (s)", _number(record.baseline_makespan)),
    ]


def _table_rows(record: FamilyRecord, makespan: float) -> list[tuple[str, str]]:
    """No rows: the family's measures are rows of the table itself (:func:`summary_table`)."""
    return []


def _record_rows(record: FamilyRecord, makespan: float) -> list[tuple[str, str]]:
    """One row per key of a family's record, its value as Python prints it."""
    return [(key, "-" if value is None else str(value)) for key, value in record.to_json().items()]


FAMILY_ROWS: dict[type[FamilyRecord], Callable[[Any, float], list[tuple[str, str]]]] = {
    ValueRecord: _table_rows,
    UtilityRecord: _table_rows,
    RobustnessRecord: _goal_rows,
    BagRecord: _bag_rows,
    FairnessRecord: _fairness_rows,
}
"""How the table prints each family's record, given the run's makespan."""


def _probability(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def summary_table(summary: RunSummary) -> str:
    """The summary as a two-column table, labels left-aligned and values right-aligned.

    >>> from hetsched.metrics.summary import RunSummary
    >>> s = RunSummary("easy", "embedded", "out/x", "w.json", "p.xml", None, 4, 3, 0, 1,
    ...                energy_joules=51000.0, energy_window_joules=None, makespan=80.0,
    ...                mean_waiting_time=10.0, mapping_events=4, mapping_latency_p50=0.25,
    ...                mapping_latency_p95=0.385, mapping_latency_max=0.4, value_earned=16.0,
    ...                value_bound=29.0, value_percent=55.17241, value_earned_total=18.0,
    ...                value_percent_total=62.06897, wall_seconds=0.5,
    ...                checked_rules=("accounting",))
    >>> print(summary_table(s))  # doctest: +NORMALIZE_WHITESPACE
    heuristic                                          easy
    engine                                         embedded
    tasks (total)                                         4
    tasks completed                                       3
    tasks failed                                          0
    tasks dropped                                         1
    value earned                                     16.000
    value bound                                      29.000
    % of value bound                                 55.17%
    value earned, all completions                    18.000
    % of value bound, all completions                62.07%
    utility earned                                        -
    utility bound                                         -
    % of utility bound                                    -
    energy (J)                                   51,000.000
    makespan (s)                                     80.000
    mean waiting time (s)                            10.000
    mapping events                                        4
    mapping latency p50 (s)                        0.250000
    mapping latency p95 (s)                        0.385000
    mapping latency max (s)                        0.400000
    wall time (s)                                     0.500
    schedule check                     passed, Batsim rules
    outputs                                           out/x
    """
    percent = {
        key: "-" if value is None else f"{value:.2f}%"
        for key, value in (("value", summary.value_percent), ("utility", summary.utility_percent))
    }
    rows = [
        ("heuristic", summary.heuristic or "-"),
        ("engine", summary.engine or "-"),
        ("tasks (total)", str(summary.tasks_total)),
        ("tasks completed", str(summary.tasks_completed)),
        ("tasks failed", str(summary.tasks_failed)),
        ("tasks dropped", str(summary.tasks_dropped)),
    ]
    if summary.tasks_unrunnable:
        rows.append(("of them no cluster can run", str(summary.tasks_unrunnable)))
    rows += [
        ("value earned", _number(summary.value_earned)),
        ("value bound", _number(summary.value_bound)),
        ("% of value bound", percent["value"]),
        ("value earned, all completions", _number(summary.value_earned_total)),
        ("% of value bound, all completions",
         "-" if summary.value_percent_total is None else f"{summary.value_percent_total:.2f}%"),
        ("utility earned", _number(summary.utility_earned)),
        ("utility bound", _number(summary.utility_bound)),
        ("% of utility bound", percent["utility"]),
        ("energy (J)", _number(summary.energy_joules)),
    ]
    if summary.measure_window is not None:
        t0, t1 = summary.measure_window
        rows.append((f"energy in [{t0:g}, {t1:g}] (J)", _number(summary.energy_window_joules)))
    if summary.energy_budget_joules is not None:
        rows.append(("energy budget (J)", _number(summary.energy_budget_joules)))
    if summary.makespan_goals is not None:
        rows.append(
            ("met their makespan goal", f"{summary.makespan_goals_met} of {summary.makespan_goals}")
        )
    rows += [
        ("makespan (s)", _number(summary.makespan)),
        *family_rows(summary),
        ("mean waiting time (s)", _number(summary.mean_waiting_time)),
        ("mapping events", "-" if summary.mapping_events is None else str(summary.mapping_events)),
        ("mapping latency p50 (s)", _number(summary.mapping_latency_p50, 6)),
        ("mapping latency p95 (s)", _number(summary.mapping_latency_p95, 6)),
        ("mapping latency max (s)", _number(summary.mapping_latency_max, 6)),
        ("wall time (s)", _number(summary.wall_seconds)),
        ("schedule check", _check(summary.checked_rules)),
        ("outputs", summary.outdir),
    ]
    label_width = max(len(label) for label, _ in rows)
    value_width = max(len(value) for _, value in rows)
    table = [f"{label:<{label_width}}  {value:>{value_width}}" for label, value in rows]
    return "\n".join(table + drop_reason_lines(summary))


def drop_reason_lines(summary: RunSummary) -> list[str]:
    """One line per reason the scheduler gave for dropping tasks, with their count.

    >>> from hetsched.metrics.summary import RunSummary
    >>> s = RunSummary("min-min", "embedded", "o", "w.json", "p.xml", None, 3, 1, 0, 2,
    ...                None, None, 5.0, *[None] * 5, drop_reasons={"needs 8 nodes": 2})
    >>> drop_reason_lines(s)
    ['dropped 2 of 3 tasks: needs 8 nodes']
    """
    return [
        f"dropped {count} of {summary.tasks_total} tasks: {reason}"
        for reason, count in (summary.drop_reasons or {}).items()
    ]


def utility_energy_block(summary: RunSummary) -> str | None:
    """The utility/energy family's result (Machovec et al. 2017, sec. II.D and IV.C.3), for a
    workload with utility functions: utility earned over its bound (the utility if every task
    started on arrival) and the %, the energy the budget counts (the measure window's when the
    workload has one) and, with an energy budget, whether it held. ``None`` without utility.

    >>> import dataclasses
    >>> from hetsched.metrics.summary import RunSummary
    >>> s = RunSummary("max-upe-ph", "embedded", "out/x", "w.json", "p.xml", (0.0, 10.0), 4,
    ...                3, 0, 1, 9.0e9, 8.0e9, 80.0, 10.0, 4, 0.25, 0.385, 0.4,
    ...                utility_earned=41.5, utility_bound=50.0, utility_percent=83.0,
    ...                energy_budget_joules=1.0e10)
    >>> print(utility_energy_block(s))
    utility earned / bound: 41.500 / 50.000 (83.00% of the bound)
    energy in [0, 10]: 8.000 GJ; budget 10.000 GJ: held (80.00% used)
    >>> print(utility_energy_block(dataclasses.replace(s, energy_budget_joules=7.5e9)))
    utility earned / bound: 41.500 / 50.000 (83.00% of the bound)
    energy in [0, 10]: 8.000 GJ; budget 7.500 GJ: EXCEEDED (106.67% used)
    """
    if summary.utility_bound is None or summary.utility_earned is None:
        return None
    percent = "-" if summary.utility_percent is None else f"{summary.utility_percent:.2f}%"
    lines = [f"utility earned / bound: {summary.utility_earned:,.3f} /"
             f" {summary.utility_bound:,.3f} ({percent} of the bound)"]
    if summary.measure_window is not None:
        t0, t1 = summary.measure_window
        where, energy = f"energy in [{t0:g}, {t1:g}]", summary.energy_window_joules
    else:
        where, energy = "energy", summary.energy_joules
    if energy is None:
        lines.append(f"{where}: - (not measured)")
        return "\n".join(lines)
    line = f"{where}: {energy / 1e9:,.3f} GJ"
    budget = summary.energy_budget_joules
    if budget is not None:
        held = "held" if energy <= budget else "EXCEEDED"
        line += f"; budget {budget / 1e9:,.3f} GJ: {held} ({100 * energy / budget:.2f}% used)"
    else:
        line += "; no energy budget"
    lines.append(line)
    return "\n".join(lines)


def schedule_csv_notes(summary: RunSummary) -> list[str]:
    """What ``out_schedule.csv`` (Batsim's own summary of the run) says differently from the
    table, and why; nothing when it agrees or is not there.

    * With execution twins (docs/architecture.md) every task is two Batsim jobs: the original,
      rejected, and its twin, run. Batsim counts both: ``nb_jobs`` is about twice the tasks,
      ``nb_jobs_rejected`` counts the originals and ``success_rate`` (successes over
      ``nb_jobs``) is under one half, however well the run went. The table counts tasks.
    * Batsim's ``consumed_joules`` is the energy from the first job's submission to the last
      job's completion (``src/export.cpp``: ``energy_last_job_completion -
      energy_first_job_submission``); the table's energy is the whole run's, from time 0 (the
      last row of ``out_consumed_energy.csv``), the idle platform before the first
      submission included.
    """
    path = Path(summary.outdir) / "out_schedule.csv"
    try:
        with path.open(newline="") as stream:
            row = next(csv.DictReader(stream))
    except (OSError, StopIteration):
        return []
    notes = []
    try:
        jobs, rejected = int(row["nb_jobs"]), int(row["nb_jobs_rejected"])
        rate = float(row["success_rate"])
    except (KeyError, ValueError):
        return []
    if jobs > summary.tasks_total:  # the execution twins, registered as dynamic jobs
        notes.append(
            f"out_schedule.csv counts each task twice, its original job rejected and its"
            f" execution twin run: nb_jobs {jobs}, nb_jobs_rejected {rejected}, success_rate"
            f" {rate:g} for {summary.tasks_total} tasks, {summary.tasks_completed} completed"
        )
    consumed = row.get("consumed_joules")
    if consumed and summary.energy_joules is not None:
        joules = float(consumed)
        if abs(joules - summary.energy_joules) > 1e-9 * max(1.0, abs(summary.energy_joules)):
            notes.append(
                f"out_schedule.csv's consumed_joules {joules:,.3f} is the energy from the first"
                f" job's submission to the last one's completion; the energy above"
                f" ({summary.energy_joules:,.3f} J) is the whole run's, from time 0"
            )
    return notes


def default_outdir(name: str, workload: str) -> Path:
    """``runs/<workload file stem>/<NAME>`` (:func:`~hetsched.running.run.folder_name`: ``:``
    becomes ``-``, the ``/`` of a file reference ``_``)."""
    return Path("runs") / Path(workload).stem / folder_name(name)


RUN_FAILURES = (ScheduleViolation, BatsimError, BatschedError, DockerError)
"""A run that failed (exit status 1): an invalid schedule, or Batsim, batsched or Docker failed."""


def external_tools(args: argparse.Namespace) -> ExternalTools:
    """batsched and real Batsim as the command line says (``--batsched``, ``--batsim-image``,
    ``--docker-network``)."""
    return ExternalTools(
        batsched=args.batsched, batsim_image=args.batsim_image, docker_network=args.docker_network
    )


def add_engine_argument(parser: argparse.ArgumentParser) -> None:
    """``--engine``, shared by ``run``, ``compare`` and the studies that run on an engine."""
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="embedded",
        help="embedded engine (default), a real batsim found on PATH, or real Batsim in"
        " Docker (the upstream image, with the Docker SDK for Python)",
    )


def add_tool_arguments(parser: argparse.ArgumentParser) -> None:
    """``--batsched`` and the Docker engine's options, shared by ``run`` and ``compare``."""
    parser.add_argument(
        "--batsched",
        metavar="PATH",
        help="batsched executable for batsched:VARIANT names (default: batsched on PATH)",
    )
    parser.add_argument(
        "--batsim-image",
        metavar="IMAGE",
        help=f"--engine docker: Batsim image (default: $BATSIM_IMAGE or {DEFAULT_BATSIM_IMAGE})",
    )
    parser.add_argument(
        "--docker-network",
        choices=NETWORKS,
        default="host",
        help="--engine docker: host networking (default) or the bridge network, Batsim"
        " reaching the scheduler on host.docker.internal (Docker Desktop)",
    )


def run_command(args: argparse.Namespace) -> int:
    """``hetsched run``: exit 0 on success, 1 if Batsim failed or the schedule is invalid."""
    options = dict(parse_option(text) for text in args.option)
    outdir = args.outdir if args.outdir is not None else default_outdir(args.name, args.workload)
    try:
        summary = run_heuristic(
            args.name,
            args.platform,
            args.workload,
            outdir,
            engine=args.engine,
            options=options,
            progress=True,
            force=args.force,
            energy=not args.no_energy,
            tools=external_tools(args),
        )
    except RUN_FAILURES as error:
        print(f"hetsched run: {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(summary.to_json()))
    else:
        print(summary_table(summary))
        block = utility_energy_block(summary)
        if block is not None:
            print(block)
        for note in schedule_csv_notes(summary):  # beside the table, not in it
            print(f"hetsched run: note: {note}", file=sys.stderr)
    return 0


def add_cache_argument(parser: argparse.ArgumentParser) -> None:
    """``--no-cache``, which :func:`hetsched.cli.main` acts on (:mod:`hetsched.cache`)."""
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="parse the platform and workload files again, neither reading nor writing the"
        " cache of parsed inputs ($XDG_CACHE_HOME/hetsched; or set HETSCHED_NO_CACHE=1)",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``hetsched run`` to the ``hetsched`` parser."""
    parser = subparsers.add_parser(
        "run",
        help="run one scheduler on a platform and a workload, check it, print the metrics",
        description=(
            "Run NAME on a SimGrid platform and a Batsim workload, through the embedded"
            " engine, a real batsim found on PATH or real Batsim in Docker; check the"
            " schedule and print a summary"
            " of the metrics. NAME is a hetsched heuristic (see 'hetsched list'), a class of"
            " your own (path/to/file.py:ClassName or package.module:ClassName), a stock"
            " pybatsim scheduler, pybatsim:<module> (pybatsim:easyBackfill,"
            " pybatsim:fillerSched, ...), or batsched, batsched:<variant> (batsched:easy_bf,"
            " batsched:conservative_bf, ...)."
        ),
    )
    parser.add_argument("name", metavar="NAME", help="scheduler to run")
    parser.add_argument("-p", "--platform", required=True, help="SimGrid platform XML file")
    parser.add_argument("-w", "--workload", required=True, help="Batsim workload JSON file")
    parser.add_argument(
        "-o",
        "--outdir",
        type=Path,
        help="output directory (default: runs/<workload stem>/<NAME>)",
    )
    add_engine_argument(parser)
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="K=V",
        help="scheduler option; V is read as JSON when it is JSON (60, true, [1, 2]),"
        " else as a string; repeatable",
    )
    add_tool_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    parser.add_argument(
        "--force", action="store_true", help="replace a previous run's files in the output dir"
    )
    parser.add_argument(
        "--no-energy",
        action="store_true",
        help="run without SimGrid's energy model (for platforms without host power)",
    )
    add_cache_argument(parser)
    parser.set_defaults(func=run_command)
