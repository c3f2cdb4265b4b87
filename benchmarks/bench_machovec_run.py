"""CPU time and peak memory of whole runs of the Machovec et al. (2017) study at the paper's size
(sec. IV.B: 100,000 cores, 5,000 or 10,000 tasks a day, mapping events every 60 s, sec. III.A).

Each run is ``hetsched run NAME`` on a trial folder the study prepared (``platform.xml`` with
the day's power levels and ``workload.json``, e.g. ``runs/machovec-full/trial0/5k``), through
the embedded engine, in a child process of its own: its CPU time (user + system) and peak
resident memory come from the kernel's accounting of that child (``os.wait4``), so the
machine's other load does not count. ``--hetsched`` runs another checkout's command (the
"before" of a speed-up); ``--hours`` keeps the jobs that arrive in the first hours of the day
(a quicker look); ``--same-as`` compares the outputs Batsim would write (``out_jobs.csv``,
``out_consumed_energy.csv``, ...) byte for byte with an earlier ``--outdir``. Each run prints
one JSON line; ``--figure PNG --rows A.jsonl B.jsonl`` draws the CPU time and peak memory of
such files (a ``label`` field names each, e.g. before / after) side by side.

Run from the repository root::

    python -m benchmarks.bench_machovec_run runs/machovec-full/trial0/5k --heuristics max-upe-ph
    python -m benchmarks.bench_machovec_run --figure cost.png --rows before.jsonl after.jsonl
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from hetsched.files import write_atomically

BATSIM_OUTPUTS = ("out_jobs.csv", "out_consumed_energy.csv", "out_pstate_changes.csv",
                  "out_machine_states.csv")
"""Batsim's outputs whose bytes do not depend on the wall clock (``out_schedule.csv`` holds
``scheduling_time`` and ``simulation_time``)."""


def partial_day(workload: Path, hours: float, into: Path) -> Path:
    """``workload`` with only the jobs submitted in its first ``hours`` (and their profiles)."""
    document = json.loads(workload.read_text())
    jobs = [job for job in document["jobs"] if job["subtime"] < hours * 3600.0]
    used = {job["profile"] for job in jobs}
    document["jobs"] = jobs
    document["profiles"] = {k: v for k, v in document["profiles"].items() if k in used}
    write_atomically(into, json.dumps(document).encode(), force=True)
    return into


def measure(command: Sequence[str], name: str, platform: Path, workload: Path,
            outdir: Path) -> dict[str, float | int | str]:
    """Run ``command run name`` into ``outdir``; its CPU seconds, peak memory and summary.
    ``name`` may be ``NAME:FILTER``, a utility heuristic with an energy filter of Machovec et
    al. sec. III.G (``max-upr-ph:per-resource``)."""
    heuristic, _, energy_filter = name.partition(":")
    argv = [*command, "run", heuristic, "-p", str(platform), "-w", str(workload), "-o",
            str(outdir), "--option", "period=60.0", "--force", "--no-cache"]
    if energy_filter:
        argv += ["--option", f"energy_filter={energy_filter}"]
    began = time.monotonic()
    with (outdir.parent / f"{outdir.name}.log").open("w") as log:
        child = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{' '.join(argv)} failed ({child.returncode}): see {log.name}")
    summary = json.loads((outdir / "summary.json").read_text())
    return {
        "heuristic": name,
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "wall_s": round(time.monotonic() - began, 1),
        "events": summary.get("mapping_events"),
        "event_p50_ms": round(1e3 * (summary.get("mapping_latency_p50") or 0.0), 2),
        "utility_percent": summary.get("utility_percent"),
        "load_average": " ".join(f"{x:.1f}" for x in os.getloadavg()),
    }


def plot_cost(rows: Sequence[dict[str, object]], path: Path) -> None:
    """Two panels, CPU seconds and peak resident MiB, one bar per row (its ``label`` and
    ``heuristic``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{row['heuristic']}\n{row.get('label', '')}" for row in rows]
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.4))
    for ax, (key, title) in zip(axes, (("cpu_s", "CPU time (s)"),
                                       ("peak_rss_mib", "peak resident memory (MiB)")),
                                strict=True):
        values = [float(row[key]) for row in rows]  # type: ignore[arg-type]
        ax.bar(range(len(rows)), values, color=["tab:gray", "tab:blue"] * len(rows))
        for x, value in enumerate(values):
            ax.annotate(f"{value:,.0f}", (x, value), ha="center", va="bottom", fontsize="small")
        ax.set_xticks(range(len(rows)), labels, fontsize="small")
        ax.set_title(title, fontsize="medium")
    fig.suptitle("Machovec et al., one full-size day (100,000 cores, 5k)", fontsize="medium")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, nargs="?", help="a study trial folder"
                        " (platform.xml, workload.json), e.g. runs/machovec-full/trial0/5k")
    parser.add_argument("--heuristics", nargs="+", default=["max-upe-ph"],
                        help="NAME or NAME:FILTER (default: %(default)s)")
    parser.add_argument("--hours", type=float, help="only the jobs of the first hours")
    parser.add_argument("--hetsched", default=f"{sys.executable} -m hetsched.cli",
                        help="the command to run (default: this checkout's)")
    parser.add_argument("--outdir", type=Path, default=Path("runs/bench-machovec-run"))
    parser.add_argument("--same-as", type=Path, help="an earlier --outdir to compare with")
    parser.add_argument("--figure", type=Path, help="draw --rows into this PNG instead")
    parser.add_argument("--rows", type=Path, nargs="+", default=[],
                        help="JSON-lines files of earlier runs, each row with a label")
    args = parser.parse_args(argv)
    if args.figure is not None:
        rows = [json.loads(line) for path in args.rows
                for line in path.read_text().splitlines() if line.strip()]
        plot_cost(rows, args.figure)
        return
    if args.folder is None:
        parser.error("a trial folder is needed (or --figure with --rows)")
    args.outdir.mkdir(parents=True, exist_ok=True)
    workload = args.folder / "workload.json"
    if args.hours is not None:
        workload = partial_day(workload, args.hours, args.outdir / "workload.json")
    for name in args.heuristics:
        outdir = args.outdir / name.replace(":", "+")
        row = measure(args.hetsched.split(), name, args.folder / "platform.xml", workload,
                      outdir)
        if args.same_as is not None:
            row["same_outputs"] = all(
                filecmp.cmp(outdir / f, args.same_as / outdir.name / f, shallow=False)
                for f in BATSIM_OUTPUTS
            )
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
