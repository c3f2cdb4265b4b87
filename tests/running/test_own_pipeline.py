"""A Batsim pipeline that hetsched did not make, from a user's files to ``hetsched compare``.

The platform is written by hand: three SimGrid ``<cluster>`` elements of one-core hosts with
DVFS (speed lists with units, ``wattage_per_state``), and a master host, as a Batsim user
writes one. The workload is a day of the KTH SP2 log converted the way Batsim's own
``tools/swf_to_batsim_workload_delay.py`` (tag v4.2.1) converts a trace: one job a usable SWF
line, ids from 0, ``res`` the allocated processors, submission times from the first one,
``walltime = max(2 x run time, requested time)``, and ``delay`` profiles of the run time
rounded up to the next whole second, named by that number; no annotation. The converter here
is this test's own, written from that script's documented rules.

On those files as they are, the baselines and pybatsim's scheduler run and the value and utility
heuristics are refused before the run naming ``hetsched workload annotate``; after ``hetsched
platform annotate`` and ``hetsched workload annotate`` every heuristic asked for runs, each task
accounted for (completed, or dropped with its reason).
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest
from shared_traces import TRACE_DIR

from hetsched.cli import main

TRACE = TRACE_DIR / "KTH-SP2-1996-2.1-cln.swf.gz"
FIRST_JOBS = 150
"""Jobs of the trace kept (its first day and a half): enough for queues to form on 128 hosts."""

PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="AS0" routing="Full">
  <cluster id="fast" prefix="fast-" suffix="" radical="0-63" speed="2Gf, 1Gf"
           bw="10Gbps" lat="1us">
    <prop id="wattage_per_state" value="95.0:190.0, 80.0:130.0"/>
    <prop id="wattage_off" value="9.5"/>
  </cluster>
  <cluster id="mid" prefix="mid-" suffix="" radical="0-31" speed="1.5Gf, 1Gf, 500Mf"
           bw="10Gbps" lat="1us">
    <prop id="wattage_per_state" value="90.0:150.0, 80.0:120.0, 70.0:90.0"/>
  </cluster>
  <cluster id="old" prefix="old-" suffix="" radical="0-31" speed="1Gf" bw="1Gbps" lat="10us">
    <prop id="wattage_per_state" value="100.0:140.0"/>
  </cluster>
  <cluster id="head" prefix="master" suffix="" radical="0-0" speed="1Gf" bw="10Gbps" lat="1us">
    <prop id="role" value="master"/>
    <prop id="wattage_per_state" value="0:0"/>
  </cluster>
  <link id="backbone" bandwidth="10Gbps" latency="2us"/>
  <zoneRoute src="head" dst="fast" gw_src="masterhead_router" gw_dst="fast-fast_router">
    <link_ctn id="backbone"/></zoneRoute>
  <zoneRoute src="head" dst="mid" gw_src="masterhead_router" gw_dst="mid-mid_router">
    <link_ctn id="backbone"/></zoneRoute>
  <zoneRoute src="head" dst="old" gw_src="masterhead_router" gw_dst="old-old_router">
    <link_ctn id="backbone"/></zoneRoute>
</zone>
</platform>
"""
"""128 one-core compute hosts in three clusters of other speeds, two with DVFS."""

pytestmark = pytest.mark.skipif(not TRACE.is_file(), reason=f"no KTH SP2 trace at {TRACE}")


def batsim_delay_workload(swf: Path, first_jobs: int) -> dict:
    """A Batsim workload of ``delay`` jobs from the first ``first_jobs`` usable lines of an SWF
    log, by the rules of Batsim's ``swf_to_batsim_workload_delay.py`` (module docstring)."""
    jobs, delays = [], set()
    with gzip.open(swf, "rt") as lines:
        for line in lines:
            fields = line.split()
            if line.startswith(";") or len(fields) != 18:
                continue
            submit, run_time, res, requested = (float(fields[i]) for i in (1, 3, 4, 8))
            walltime = max(2 * run_time, requested)
            if not (res > 0 and walltime > run_time > 0 and submit >= 0):
                continue
            delay = int(run_time // 1 + 1)
            delays.add(delay)
            jobs.append({"id": len(jobs), "subtime": submit, "walltime": walltime,
                         "res": int(res), "profile": str(delay)})
            if len(jobs) == first_jobs:
                break
    first = min(job["subtime"] for job in jobs)
    for job in jobs:
        job["subtime"] -= first
    return {"nb_res": max(job["res"] for job in jobs), "jobs": jobs,
            "profiles": {str(d): {"type": "delay", "delay": d} for d in sorted(delays)}}


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("own-pipeline")
    (folder / "lab.xml").write_text(PLATFORM)
    (folder / "kth.json").write_text(json.dumps(batsim_delay_workload(TRACE, FIRST_JOBS)))
    return folder


def _summaries(outdir: Path) -> dict[str, dict]:
    return {path.parent.name: json.loads(path.read_text())
            for path in sorted(outdir.glob("*/summary.json"))}


def test_the_converted_day_is_batsims_delay_workload(own: Path) -> None:
    """The rules of the conversion, on the converted file: no hetsched field anywhere."""
    document = json.loads((own / "kth.json").read_text())
    assert set(document) == {"nb_res", "jobs", "profiles"}
    jobs = document["jobs"]
    assert [job["id"] for job in jobs] == list(range(FIRST_JOBS))
    assert min(job["subtime"] for job in jobs) == 0
    for job in jobs:
        assert set(job) == {"id", "subtime", "walltime", "res", "profile"}
        delay = document["profiles"][job["profile"]]["delay"]
        assert job["walltime"] >= 2 * (delay - 1) and delay == int(job["profile"])


def test_as_they_are_baselines_run_and_value_heuristics_name_the_annotation(
    own: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outdir = tmp_path / "raw"
    assert main(["compare", "--platform", str(own / "lab.xml"), "--workload",
                 str(own / "kth.json"), "--heuristics", "fcfs,easy,pybatsim:easyBackfill",
                 "-o", str(outdir)]) == 0
    for name, summary in _summaries(outdir).items():
        accounted = summary["tasks_completed"] + summary["tasks_failed"]
        assert accounted + summary["tasks_dropped"] == FIRST_JOBS, name
        assert summary["tasks_completed"] > FIRST_JOBS // 2, name
    capsys.readouterr()
    refused = tmp_path / "refused"
    assert main(["compare", "--platform", str(own / "lab.xml"), "--workload",
                 str(own / "kth.json"), "--heuristics", "easy,max-vpr-ph",
                 "-o", str(refused)]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "max-vpr-ph: job w0!0 has no value function" in error
    assert "hetsched workload annotate" in error
    assert not refused.exists()


def test_after_both_annotations_every_family_runs(own: Path, tmp_path: Path) -> None:
    platform, workload, outdir = tmp_path / "lab.xml", tmp_path / "kth.json", tmp_path / "cmp"
    assert main(["platform", "annotate", str(own / "lab.xml"), "-o", str(platform)]) == 0
    assert main(["workload", "annotate", str(own / "kth.json"), "-p", str(platform),
                 "-o", str(workload)]) == 0
    heuristics = ["fcfs", "easy", "max-vpr-ph", "max-util-ph", "max-upe-ph", "mct-online",
                  "pybatsim:easyBackfill"]
    assert main(["compare", "--platform", str(platform), "--workload", str(workload),
                 "--heuristics", ",".join(heuristics), "-o", str(outdir)]) == 0
    summaries = _summaries(outdir)
    assert len(summaries) == len(heuristics)
    for name, summary in summaries.items():
        total = summary["tasks_completed"] + summary["tasks_failed"] + summary["tasks_dropped"]
        assert total == FIRST_JOBS, name
        assert summary["tasks_completed"] > 0, name
        if not name.startswith("pybatsim"):
            assert sum((summary["drop_reasons"] or {}).values()) == summary["tasks_dropped"]
        assert math.isfinite(summary["energy_joules"]) and summary["energy_joules"] > 0
    # the heterogeneity-aware heuristics see three clusters of other speeds: max-vpr-ph
    # earns more of the value bound than FCFS on the same annotated day
    assert summaries["max-vpr-ph"]["value_percent"] > summaries["fcfs"]["value_percent"]
