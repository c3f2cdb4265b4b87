"""``hetsched batsim``: the embedded engine behind Batsim 4.2.1's own command line.

Any Batsim scheduler (pybatsim, batsched, batsim-py, one's own) runs on the engine unchanged:
the engine *connects* a ZeroMQ REQ socket to ``-s`` (default ``tcp://localhost:28000``) where
the scheduler's REP socket is bound, exactly as ``batsim`` does (``src/batsim.cpp``), so a
pipeline can put ``hetsched batsim`` where it calls ``batsim``::

    batsched -v easy_bf -s 'tcp://*:28000' &
    hetsched batsim -p platform.xml -w workload.json -e out/run -E

Batsim's options (``batsim --help`` of v4.2.1) are read with Batsim's names and defaults. The
ones that change nothing in the engine's outputs are accepted (``--disable-schedule-tracing``:
the engine writes no Pajé trace anyway; ``--sg-log``, ``--redis-*`` without ``--enable-redis``,
``-v``/``-q`` levels); the ones it cannot honour are refused, with exit code 69
(:data:`EXIT_UNSUPPORTED`), never ignored: workflows (``-W``, ``--WS``), ``-r``,
Redis, ``--dump-execution-context``, ``--sg-cfg``, ``--mmax``/
``--mmax-workload``. One option is the engine's own: ``--timeout SECONDS``, the longest wait for
a reply (Batsim waits forever).

Exit codes, as Batsim's where Batsim has one:

====  ========================================================================================
0     the simulation ran; also when it ended on a deadlock (SimGrid's "Deadlock detected",
      e.g. dynamic jobs without ``registration_finished``): outputs are written, a warning
      says why, as Batsim does
1, 2  bit mask of unreadable input files, as Batsim: 0x01 platform, 0x02 workload
134   the run was aborted where Batsim aborts (``SIGABRT``: 128 + 6): invalid platform or
      workload, a scheduler message that breaks the protocol, a broken connection; also a
      scheduler silent past ``--timeout``
69    the input or a request is valid for Batsim but the engine cannot simulate it faithfully
      (e.g. a profile with communication, which needs SimGrid's network model): use Batsim
255   a command-line error (docopt's exit code; Batsim 4.2.1 exits 0 without running when
      ``--enable-profile-reuse`` comes without ``--enable-dynamic-jobs``: here it is 255)
====  ========================================================================================

:func:`batsim_command` gives the real ``batsim`` command line for a ``simulate()`` call.

>>> batsim_command("p.xml", ["a.json", "b.json"], "out/run", energy=True, dynamic_jobs=True,
...                socket_endpoint="tcp://localhost:28000")  # doctest: +NORMALIZE_WHITESPACE
['batsim', '-p', 'p.xml', '-w', 'a.json', '-w', 'b.json', '-e', 'out/run', '-E',
 '--enable-dynamic-jobs', '-s', 'tcp://localhost:28000']
>>> options = parse_arguments(["-p", "p.xml", "-w", "w.json", "-E", "--enable-dynamic-jobs"])
>>> options.export, options.socket_endpoint, options.energy, options.dynamic_jobs
('out', 'tcp://localhost:28000', True, True)
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from hetsched.engine.errors import EngineError, EngineWarning, UnsupportedFeature
from hetsched.parser import closest, plain_text

EXIT_OK = 0
EXIT_PLATFORM_UNREADABLE = 0x01
EXIT_WORKLOAD_UNREADABLE = 0x02
EXIT_ABORTED = 134
EXIT_UNSUPPORTED = 69
EXIT_USAGE = 255
DEFAULT_ENDPOINT = "tcp://localhost:28000"
VERBOSITY_LEVELS = ("quiet", "network-only", "information", "debug")

_REFUSED_FLAGS = {
    "dump_execution_context": "--dump-execution-context",
    "enable_redis": "--enable-redis (the engine talks JSON over ZeroMQ only)",
    "mmax_workload": "--mmax-workload",
}
_REFUSED_LISTS = {
    "workflows": "-W/--workflow (workflows)",
    "workflow_starts": "--WS/--workflow-start (workflows)",
    "roles": "-r/--add-role-to-hosts (give roles as host properties in the platform)",
    "sg_cfg": "--sg-cfg (SimGrid configuration)",
}


def batsim_command(
    platform: str | Path,
    workloads: Sequence[str | Path],
    output_prefix: str | Path,
    *,
    energy: bool,
    dynamic_jobs: bool,
    socket_endpoint: str,
    acknowledge_dynamic_jobs: bool = False,
    forward_profiles: bool = False,
    profile_reuse: bool = False,
) -> list[str]:
    """``batsim`` arguments equivalent to ``simulate()`` with the same arguments."""
    if not workloads:
        raise ValueError("batsim_command: at least one workload is needed")
    if profile_reuse and not dynamic_jobs:
        raise ValueError(
            "batsim_command: profile reuse needs dynamic jobs (Batsim refuses "
            "--enable-profile-reuse without --enable-dynamic-jobs)"
        )
    if acknowledge_dynamic_jobs and not dynamic_jobs:
        raise ValueError("batsim_command: acknowledging dynamic jobs needs dynamic jobs")
    command = ["batsim", "-p", str(platform)]
    for workload in workloads:
        command += ["-w", str(workload)]
    command += ["-e", str(output_prefix)]
    flags = {
        "-E": energy,
        "--enable-dynamic-jobs": dynamic_jobs,
        "--acknowledge-dynamic-jobs": acknowledge_dynamic_jobs,
        "--forward-profiles-on-submission": forward_profiles,
        "--enable-profile-reuse": profile_reuse,
    }
    command += [flag for flag, given in flags.items() if given]
    command += ["-s", socket_endpoint]
    return command


class UsageError(Exception):
    """A command line Batsim's docopt parser would refuse."""


class _Parser(argparse.ArgumentParser):
    """Batsim's command line as docopt (docopt.cpp, which Batsim 4.2.1 parses it with) reads
    it: a long option may be given by a unique prefix (``--enable-dyn``, docopt's
    ``parse_long``); an unknown option is an error, here named with the closest option."""

    def error(self, message: str) -> None:  # type: ignore[override]
        if message.startswith("unrecognized arguments: "):
            words = message.split(": ", 1)[1].split(" ")
            near = [closest(self, word) if word.startswith("--") else None for word in words]
            hints = [f"{word} (did you mean {option}?)" if option else word
                     for word, option in zip(words, near, strict=True)]
            message = "unrecognized arguments: " + " ".join(hints)
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    """Batsim 4.2.1's options, with its names and defaults."""
    parser = _Parser(
        prog="hetsched batsim",
        add_help=False,
        allow_abbrev=True,  # docopt's unique prefixes
        description="The embedded engine with Batsim 4.2.1's command line (a drop-in batsim).",
    )
    add = parser.add_argument
    add("-h", "--help", action="store_true", help="show this help and exit")
    add("--version", action="store_true", help="print the Batsim version emulated (4.2.1)")
    add("--simgrid-version", action="store_true", help="print the SimGrid version emulated")
    add("-p", "--platform", help="the SimGrid platform to simulate")
    add("-w", "--workload", dest="workloads", action="append", default=[], help="workload file")
    add("-W", "--workflow", dest="workflows", action="append", default=[])
    add("--WS", "--workflow-start", dest="workflow_starts", nargs=2, action="append", default=[])
    add("--events", action="append", default=[])
    add("-m", "--master-host", default="master_host", help="[default: master_host]")
    add("-r", "--add-role-to-hosts", dest="roles", action="append", default=[])
    add("-E", "--energy", action="store_true", help="SimGrid's energy plugin, energy outputs")
    add("-s", "--socket-endpoint", default=DEFAULT_ENDPOINT, help=f"[default: {DEFAULT_ENDPOINT}]")
    add("--enable-redis", action="store_true")
    add("--redis-hostname", default="127.0.0.1")
    add("--redis-port", default="6379")
    add("--redis-prefix", default="default")
    add("-e", "--export", default="out", help="output prefix [default: out]")
    add("--disable-schedule-tracing", action="store_true")
    add("--disable-machine-state-tracing", action="store_true")
    add("--mmax", default="0")
    add("--mmax-workload", action="store_true")
    add("--forward-profiles-on-submission", action="store_true")
    add("--enable-dynamic-jobs", dest="dynamic_jobs", action="store_true")
    add("--acknowledge-dynamic-jobs", action="store_true")
    add("--enable-profile-reuse", action="store_true")
    add("-v", "--verbosity", default="information", help="quiet, network-only, information, debug")
    add("-q", "--quiet", action="store_true")
    add("--workflow-jobs-limit", default="0")
    add("--ignore-beyond-last-workflow", action="store_true")
    add("--dump-execution-context", action="store_true")
    add("--enable-compute-sharing", action="store_true")
    add("--disable-storage-sharing", action="store_true")
    add("--no-sched", action="store_true")
    cfg = parser.add_mutually_exclusive_group()
    cfg.add_argument("--sched-cfg", default=None, help="configuration string for the scheduler")
    cfg.add_argument("--sched-cfg-file", default=None, help="same, read from a file")
    add("--sg-cfg", action="append", default=[])
    add("--sg-log", action="append", default=[])
    add("--forward-unknown-events", action="store_true")
    add("--timeout", type=float, default=None,
        help="(engine only) longest wait for a reply, in seconds (not milliseconds, as"
        " hetsched serve's -t) [default: none, wait forever as Batsim]")
    return parser


def parse_arguments(argv: Sequence[str]) -> argparse.Namespace:
    """Batsim's options from ``argv``; raises :class:`UsageError` where docopt would."""
    options = build_parser().parse_args(list(argv))
    if options.help or options.version or options.simgrid_version:
        return options
    if options.platform is None:
        raise UsageError("-p/--platform is required")
    if options.verbosity not in VERBOSITY_LEVELS:
        raise UsageError(f"Invalid <verbosity_level> {options.verbosity!r}.")
    if options.enable_profile_reuse and not options.dynamic_jobs:
        raise UsageError(
            "Profile reuse is enabled but dynamic registration is not, have you missed something?"
        )
    if options.timeout is not None and not options.timeout > 0:
        raise UsageError(f"--timeout must be > 0 seconds (got {options.timeout})")
    return options


def _refusals(options: argparse.Namespace) -> list[str]:
    refused = [what for flag, what in _REFUSED_FLAGS.items() if getattr(options, flag)]
    refused += [what for key, what in _REFUSED_LISTS.items() if getattr(options, key)]
    if options.mmax != "0":
        refused.append("--mmax (limit on the number of machines)")
    return refused


def _unreadable_inputs(options: argparse.Namespace) -> int:
    code = 0
    if not Path(options.platform).is_file():
        print(f"Platform file '{options.platform}' cannot be read.", file=sys.stderr)
        code |= EXIT_PLATFORM_UNREADABLE
    for workload in options.workloads:
        if not Path(workload).is_file():
            print(f"Workload file '{workload}' cannot be read.", file=sys.stderr)
            code |= EXIT_WORKLOAD_UNREADABLE
    for events in options.events:
        if not Path(events).is_file():
            print(f"Events file '{events}' cannot be read.", file=sys.stderr)
            code |= EXIT_WORKLOAD_UNREADABLE  # Batsim's bit for events files too
    return code


def main(argv: Sequence[str]) -> int:
    """Run ``batsim ARGV`` on the embedded engine; return Batsim's exit code."""
    parser = build_parser()
    try:
        options = parse_arguments(argv)
    except UsageError as error:
        print(f"hetsched batsim: {error}", file=sys.stderr)
        print(parser.format_usage(), file=sys.stderr, end="")
        return EXIT_USAGE
    if options.help:
        user_part = (__doc__ or "").split("\n\n:func:`batsim_command`", 1)[0]
        print(parser.format_help() + plain_text(user_part))
        return EXIT_OK
    if options.version or options.simgrid_version:
        from hetsched.engine.simulation import BATSIM_RELEASE  # lazy: optional dependency

        print("3.32.0" if options.simgrid_version else BATSIM_RELEASE)
        return EXIT_OK
    refused = _refusals(options)
    if refused:
        print(
            f"hetsched batsim: {', '.join(refused)} is not supported by the embedded engine; "
            "use real Batsim",
            file=sys.stderr,
        )
        return EXIT_UNSUPPORTED
    unreadable = _unreadable_inputs(options)
    if unreadable:
        return unreadable
    return _run(options)


def open_outputs(options: argparse.Namespace) -> str | None:
    """Create the output files Batsim opens before the simulation starts; ``None``, or
    Batsim's error when one cannot be written.

    Batsim's ``prepare_batsim_outputs`` (``src/export.cpp``) opens, in this order, the Pajé
    trace (unless ``--disable-schedule-tracing``), ``_machine_states.csv`` (unless
    ``--disable-machine-state-tracing``), with ``-E`` ``_consumed_energy.csv`` and
    ``_pstate_changes.csv``, then ``_jobs.csv``; each ``WriteBuffer`` truncates its file and
    aborts with ``Cannot write file '...'`` when it cannot (a missing ``-e`` folder is not
    created). Their headers stay in the stream's buffer until the end, so a run stopped
    early (batsim-py's ``simulation_time`` terminates ``batsim``) leaves them empty. The
    engine writes no Pajé trace; it names it in the error as Batsim does.
    """
    prefix = options.export
    names = [] if options.disable_machine_state_tracing else ["machine_states"]
    if options.energy:
        names += ["consumed_energy", "pstate_changes"]
    names.append("jobs")
    first = f"{prefix}_schedule.trace" if not options.disable_schedule_tracing else None
    for name in names:
        path = Path(f"{prefix}_{name}.csv")
        try:
            path.open("w").close()
        except OSError:
            return f"Cannot write file '{first or path}'"
    return None


def _run(options: argparse.Namespace) -> int:
    from hetsched.engine.simulation import simulate  # lazy: optional dependency

    quiet = options.quiet or options.verbosity == "quiet"
    sched_config = options.sched_cfg or ""
    if options.sched_cfg_file is not None:
        try:
            sched_config = Path(options.sched_cfg_file).read_text(encoding="utf-8")
        except OSError as error:
            print(f"hetsched batsim: cannot read --sched-cfg-file: {error}", file=sys.stderr)
            return EXIT_ABORTED
    cannot_write = open_outputs(options)
    if cannot_write is not None:
        print(f"hetsched batsim: aborted: {cannot_write}", file=sys.stderr)
        return EXIT_ABORTED
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", EngineWarning)
            result = simulate(
                options.platform,
                options.workloads,
                None,
                options.export,
                energy=options.energy,
                dynamic_jobs=options.dynamic_jobs,
                socket_endpoint=None if options.no_sched else options.socket_endpoint,
                no_sched=options.no_sched,
                events=options.events,
                forward_unknown_events=options.forward_unknown_events,
                acknowledge_dynamic_jobs=options.acknowledge_dynamic_jobs,
                forward_profiles=options.forward_profiles_on_submission,
                profile_reuse=options.enable_profile_reuse,
                compute_sharing=options.enable_compute_sharing,
                storage_sharing=not options.disable_storage_sharing,
                sched_config=sched_config,
                master_host=options.master_host,
                machine_state_tracing=not options.disable_machine_state_tracing,
                socket_timeout=options.timeout,
                force=True,  # Batsim overwrites its outputs
            )
    except UnsupportedFeature as error:
        print(f"hetsched batsim: {error}", file=sys.stderr)
        return EXIT_UNSUPPORTED
    except EngineError as error:
        print(f"hetsched batsim: aborted: {error}", file=sys.stderr)
        return EXIT_ABORTED
    for warning in caught:
        print(f"hetsched batsim: warning: {warning.message}", file=sys.stderr)
    if not quiet:
        states = result.final_states
        finished = sum(count for state, count in states.items() if state != "REJECTED")
        success = states.get("COMPLETED_SUCCESSFULLY", 0)
        jobs = sum(states.values())
        rate = success / jobs if jobs else float("nan")
        print(
            f"[export/INFO] jobs={jobs}, finished={finished}, success={success}, "
            f"killed={finished - success}, success_rate={rate:f}",
            file=sys.stderr,
        )
    return EXIT_OK
