"""The real ``batsim`` command line that matches an engine run (Batsim 4.2.1, ``src/batsim.cpp``).

Batsim 4.2.1's options used here (``batsim --help``): ``-p/--platform``, ``-w/--workload``
(repeatable; workloads are named ``w0``, ``w1``... in order), ``-e/--export`` (output prefix,
default ``out``), ``-E/--energy``, ``-s/--socket-endpoint`` (where Batsim *connects* its REQ
socket, default ``tcp://localhost:28000``; the scheduler binds it, e.g. pybatsim's
``-s tcp://*:28000``), ``--enable-dynamic-jobs``, ``--acknowledge-dynamic-jobs``,
``--forward-profiles-on-submission`` and ``--enable-profile-reuse``.

>>> batsim_command("p.xml", ["a.json", "b.json"], "out/run", energy=True, dynamic_jobs=True,
...                socket_endpoint="tcp://localhost:28000")  # doctest: +NORMALIZE_WHITESPACE
['batsim', '-p', 'p.xml', '-w', 'a.json', '-w', 'b.json', '-e', 'out/run', '-E',
 '--enable-dynamic-jobs', '-s', 'tcp://localhost:28000']
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


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
    if energy:
        command.append("-E")
    if dynamic_jobs:
        command.append("--enable-dynamic-jobs")
    if acknowledge_dynamic_jobs:
        command.append("--acknowledge-dynamic-jobs")
    if forward_profiles:
        command.append("--forward-profiles-on-submission")
    if profile_reuse:
        command.append("--enable-profile-reuse")
    command += ["-s", socket_endpoint]
    return command
