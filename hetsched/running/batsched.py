"""batsched, Batsim's C++ reference scheduler, as a contestant of ``hetsched run`` and ``compare``.

``batsched:VARIANT`` names batsched 1.4.0 started as ``batsched -v VARIANT -s tcp://*:PORT``
(``easy_bf``, ``conservative_bf``, ``fcfs_fast``, ...: batsched checks the variant itself and
exits naming the ones it has). It is a separate program that binds the ZeroMQ endpoint and
waits for Batsim, the embedded engine or real Batsim alike; its console output goes to the run's
``scheduler.log``. Like pybatsim's stock schedulers it knows neither execution twins nor the
papers' annotations: it schedules the workload's own profiles, Batsim runs without dynamic jobs
and the schedule checker holds it to Batsim's rules.

Run options (``--option K=V``) map onto batsched's command line: ``queue_order``, ``policy`` and
``rjms_delay`` become ``--queue_order``, ``--policy`` and ``--rjms_delay``; any other key goes
into the JSON object of ``--variant_options``.

>>> batsched = Batsched("easy_bf", Path("/opt/bin/batsched"), {"queue_order": "asc_size"})
>>> batsched.command("tcp://*:28000")
['/opt/bin/batsched', '-v', 'easy_bf', '-s', 'tcp://*:28000', '--queue_order', 'asc_size']
>>> Batsched("energy_bf", Path("batsched"), {"alpha": 1.5}).command("tcp://*:1")[-2:]
['--variant_options', '{"alpha": 1.5}']
"""

from __future__ import annotations

import contextlib
import difflib
import json
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BATSCHED_PREFIX = "batsched:"
BATSCHED_VERSION = "1.4.0"
BATSCHED_FLAGS = {
    "queue_order": "--queue_order",
    "policy": "--policy",
    "rjms_delay": "--rjms_delay",
}
"""Run options that are batsched command-line flags rather than variant options."""

EXIT_GRACE = 5.0
"""Seconds batsched may take to exit once the simulation ended, before it is killed."""

VARIANTS = (
    "conservative_bf", "crasher", "easy_bf", "easy_bf_fast", "easy_bf_plot_liquid_load_horizon",
    "energy_bf", "energy_bf_dicho", "energy_bf_idle_sleeper", "energy_bf_monitoring",
    "energy_bf_monitoring_inertial", "energy_bf_subpart_sleeper", "energy_watcher", "fcfs",
    "fcfs_fast", "filler", "killer", "killer2", "random", "rejecter", "sequencer", "sleeper",
    "submitter", "waiting_time_estimator",
)
"""batsched 1.4.0's variants (``variants_set`` of its ``main.cpp``): a name outside them is
refused before the run, as batsched would refuse it once started."""

INSTALL_HINT = (
    f"install batsched {BATSCHED_VERSION} (https://gitlab.inria.fr/batsim/batsched; with Nix, the"
    " batsched package of NUR-kapack, https://github.com/oar-team/nur-kapack) or give its path"
    " with --batsched PATH"
)


class BatschedError(RuntimeError):
    """batsched stopped with an error; the message ends with the tail of its log."""


@dataclass(frozen=True)
class Batsched:
    """batsched ``variant`` at ``executable``, with run ``options`` (module docstring)."""

    variant: str
    executable: Path
    options: Mapping[str, Any] = field(default_factory=dict)

    def command(self, endpoint: str) -> list[str]:
        """batsched's command line, its REP socket bound at ``endpoint``."""
        command = [str(self.executable), "-v", self.variant, "-s", endpoint]
        variant_options = {}
        for key, value in self.options.items():
            if key in BATSCHED_FLAGS:
                command += [BATSCHED_FLAGS[key], str(value)]
            else:
                variant_options[key] = value
        if variant_options:
            command += ["--variant_options", json.dumps(variant_options)]
        return command

    @contextlib.contextmanager
    def started(self, endpoint: str, log: Path) -> Iterator[subprocess.Popen[bytes]]:
        """batsched running, its output appended to ``log``; killed on leaving, whatever the
        way out, if it has not exited by itself within :data:`EXIT_GRACE` seconds."""
        with log.open("ab") as stream:
            process = subprocess.Popen(
                self.command(endpoint), stdout=stream, stderr=subprocess.STDOUT
            )
        try:
            yield process
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=EXIT_GRACE)
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()


def find_batsched(path: str | Path | None = None) -> Path:
    """The batsched executable: ``path`` if given, else ``batsched`` on ``PATH``.

    Raises ``FileNotFoundError`` saying how to install it.
    """
    if path is not None:
        if shutil.which(str(path)) is None:
            raise FileNotFoundError(f"--batsched {path}: no such executable; {INSTALL_HINT}")
        return Path(path)
    found = shutil.which("batsched")
    if found is None:
        raise FileNotFoundError(f"batsched is not installed (not on PATH): {INSTALL_HINT}")
    return Path(found)


def make_batsched(
    name: str, options: Mapping[str, Any], executable: str | Path | None = None
) -> Batsched:
    """The :class:`Batsched` of run name ``batsched:VARIANT``."""
    variant = name[len(BATSCHED_PREFIX) :]
    if not name.startswith(BATSCHED_PREFIX) or not variant:
        raise ValueError(f"{name!r} is not batsched:VARIANT (e.g. batsched:easy_bf)")
    if variant not in VARIANTS:
        close = difflib.get_close_matches(variant, VARIANTS, n=1)
        hint = f" (did you mean {BATSCHED_PREFIX}{close[0]}?)" if close else ""
        raise ValueError(
            f"unknown batsched variant {variant!r}{hint}: batsched {BATSCHED_VERSION} has"
            f" {', '.join(VARIANTS)}"
        )
    return Batsched(variant, find_batsched(executable), dict(options))
