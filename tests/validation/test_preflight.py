"""One validation before every run: ``hetsched run`` refuses, before a simulation
starts and without writing outputs, what ``hetsched workload validate`` refuses; the workload
is checked against its platform; jobs no cluster can run are warned about and counted."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import pytest
from test_message_checks import begins, submitted
from test_run import tiny  # noqa: F401 (fixture)

from hetsched.cli import main
from hetsched.engine.errors import UnsupportedFeature
from hetsched.errors import InputWarning, WorkloadError
from hetsched.schedulers.message_checks import BatsimProtocolError, ProtocolGuard
from hetsched.validation.preflight import PlatformView, preflight, preflight_run
from hetsched.workloads.generators import generate


def _edit(folder: Path, change: callable) -> None:  # type: ignore[valid-type]
    path = folder / "workload.json"
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


def _refused(capsys: pytest.CaptureFixture[str], command: str, *needles: str) -> None:
    """``hetsched run`` (or ``validate``) exited 2 with one line naming every needle, before
    anything ran: no output folder."""
    args = {
        "run": ["run", "easy", "-p", "platform.xml", "-w", "workload.json", "-o", "out"],
        "validate": ["workload", "validate", "workload.json", "-p", "platform.xml"],
    }[command]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    for needle in needles:
        assert needle in err[0], err[0]
    assert not Path("out").exists()


def _pstates(count: int) -> list[float]:
    return [100.0 * (1 + 0.05 * k) for k in range(count)]


@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.parametrize(
    ("change", "needles"),
    [
        # A budget that is not a number ended in a TypeError inside the scheduler.
        (lambda d: d["hetsched"].update(energy_budget="abc"), ["energy_budget", "'abc'"]),
        # -1 failed only once the run had started.
        (lambda d: d["hetsched"].update(energy_budget=-1), ["energy_budget", "-1"]),
        # A workload made for 15 P-states on a platform of 1 ran silently wrong.
        (lambda d: d["jobs"][0].update(etc_pstate={"fast": _pstates(15)}),
         ["job '1'", "etc_pstate", "15 P-states", "cluster fast has 1"]),
        # A P-state the platform lacks (power for 3 P-states).
        (lambda d: d["jobs"][1].update(power={"slow": [100.0, 80.0, 60.0]}),
         ["job '2'", "'power'['slow']", "3 P-states"]),
        # res 1000 on a 4-host platform ran with no word.
        (lambda d: (d.update(nb_res=1000), d["jobs"][0].update(res=1000, cores=4000)),
         ["job '1'", "'res' 1000", "4 compute hosts"]),
        # An ETC for a cluster the platform lacks failed mid-run, in the mapping driver.
        (lambda d: (d["hetsched"]["clusters"].update(gpu=4),
                    d["jobs"][1]["etc"].update(gpu=50.0)),
         ["job '2'", "field 'etc' names cluster(s) ['gpu']"]),
        # A workload made for 8-core nodes on the platform's 4-core ones.
        (lambda d: (d["hetsched"]["clusters"].update(fast=8), d["jobs"][0].update(res=1),
                    d["jobs"][1].update(res=1)),
         ["clusters['fast']", "8 cores per resource", "has 4 (its cores per node"]),
    ],
    ids=["budget-abc", "budget-negative", "15-pstates", "power-pstates", "res-1000",
         "unknown-cluster", "cores-per-node"],
)
@pytest.mark.usefixtures("tiny")
def test_bad_input_is_refused_before_the_run(
    capsys: pytest.CaptureFixture[str], change: callable,  # type: ignore[valid-type]
    needles: list[str], command: str,
) -> None:
    _edit(Path.cwd(), change)
    _refused(capsys, command, "workload.json", *needles)


@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.usefixtures("tiny")
def test_an_infinite_etc_is_refused_naming_the_file(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """``Infinity`` ended as "Batsim message 2: not JSON" from the protocol."""
    text = Path("workload.json").read_text().replace('"fast": 100.0', '"fast": Infinity', 1)
    Path("workload.json").write_text(text)
    _refused(capsys, command, "workload.json", "Infinity")


@pytest.mark.usefixtures("tiny")
def test_jobs_no_cluster_can_run_are_warned_about_and_counted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A job that needs more nodes than any cluster has (12 cores: 3 four-core nodes, each
    cluster has 2) is dropped by the heuristic: one warning before the run, and the count in
    the summary."""
    _edit(Path.cwd(), lambda d: d["jobs"][1].update(cores=12, res=3))
    code = main(["run", "max-value", "-p", "platform.xml", "-w", "workload.json", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "warning: workload.json: 1 job(s) that no cluster of platform platform.xml" in err
    assert err.rstrip().endswith("will be dropped: 2")
    summary = json.loads(out)
    assert summary["tasks_unrunnable"] == 1
    assert summary["tasks_dropped"] == 1
    assert main(["workload", "validate", "workload.json", "-p", "platform.xml"]) == 0
    assert "2 jobs, 1 that no cluster can run" in capsys.readouterr().out


def test_conflicting_makespan_goals_get_the_same_verdict_from_validate_and_run(
    tmp_path: Path,
) -> None:
    """The applications of a Hansen batch share one makespan goal (sec. II): the robust
    heuristics refuse two goals, so validation does too (it passed ``validate`` before)."""
    document = generate("hansen", 1)
    document["jobs"][3]["makespan_goal"] = document["jobs"][0]["makespan_goal"] * 2
    path = tmp_path / "w.json"
    path.write_text(json.dumps(document))
    with pytest.raises(WorkloadError, match=r"w\.json: Hansen batch of 32 applications: the"
                       r" jobs have 2 makespan goals"):
        preflight(path)
    document["jobs"][3]["makespan_goal"] = document["jobs"][0]["makespan_goal"]
    path.write_text(json.dumps(document))
    assert preflight(path).jobs == 32


def test_a_plain_batsim_platform_is_checked_for_its_hosts_only(tmp_path: Path) -> None:
    view = PlatformView.from_compute_resources("p", [{"id": 0, "properties": {}}])
    assert view.clusters is None and view.nb_hosts == 1


def test_serve_refuses_a_submitted_job_the_platform_cannot_run() -> None:
    """Under real Batsim, what JOB_SUBMITTED carries gets the run's checks, refused through
    the protocol guard's clear error (never a traceback from the scheduler)."""
    guard = ProtocolGuard(None)
    guard.check(json.dumps(begins()))
    event = submitted("w0!1")
    event["data"]["job"]["etc_pstate"] = {"fast": _pstates(15)}
    message = {"now": 1.0, "events": [{"timestamp": 1.0, **event}]}
    with pytest.raises(BatsimProtocolError, match=r"Batsim message 2, event 0 \(JOB_SUBMITTED\):"
                       r" job w0!1: field 'etc_pstate'\['fast'\] has 15 P-states, the"
                       r" platform's cluster fast has 1"):
        guard.check(json.dumps(message))
    event["data"]["job"] = {**submitted("w0!2")["data"]["job"], "etc": {"fast": math.inf}}
    event["data"]["job_id"] = "w0!2"
    with pytest.raises(BatsimProtocolError, match=r"job w0!2: field 'etc'\['fast'\]: must be a"
                       r" number > 0, got inf"):
        guard.check(json.dumps({"now": 1.0, "events": [{"timestamp": 1.0, **event}]}))


@pytest.mark.usefixtures("tiny")
def test_the_unrunnable_warning_is_an_input_warning() -> None:
    _edit(Path.cwd(), lambda d: d["jobs"][0].update(cores=9, res=3))
    with pytest.warns(InputWarning, match="1 job"):
        checked = preflight("workload.json", "platform.xml")
    assert checked.unrunnable == ("1",)


def test_apc_jobs_on_a_platform_without_power_levels_are_warned_about(tmp_path: Path) -> None:
    """A Machovec workload's per-task-type power (APC) on a platform written without power
    levels runs, charged the clusters' node power: one InputWarning says so; written with
    the workload's levels, none."""
    from test_power_levels import HAND, hand_case

    from hetsched.platforms.simgrid_xml import write_platform

    levelled, workload = hand_case(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputWarning)
        preflight(workload, levelled)
    plain = tmp_path / "plain.xml"
    write_platform(HAND, plain)
    with pytest.warns(InputWarning, match=r"3 job\(s\) carry a per-task-type 'power' \(APC\)"
                      r" but platform .*plain.xml has no power levels"):
        preflight(workload, plain)


def test_a_generated_hwang_workload_runs_on_its_generated_platform(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shared-node clusters (Hwang et al.: one Batsim host per core) count 1 core per
    resource on both sides; the generated pair was refused (gene: 1 against 2)."""
    monkeypatch.chdir(tmp_path)
    assert main(["platform", "generate", "--preset", "hwang", "--seed", "0", "-o", "p.xml"]) == 0
    assert main(["workload", "generate", "--preset", "hwang-s1", "--seed", "0", "--platform",
                 "p.xml", "--option", "scale=0.0004", "-o", "w.json"]) == 0
    preflight("w.json", "p.xml")
    assert main(["run", "two-level-fairness", "-p", "p.xml", "-w", "w.json", "-o", "out"]) == 0


@pytest.fixture(scope="module")
def machovec_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Machovec platforms of 2,000 cores with 2, 3 (the preset's) and 15 P-states, and a
    100-task-a-day workload generated on the 3- and on the 15-P-state one."""
    folder = tmp_path_factory.mktemp("machovec")
    for pstates in (2, 3, 15):
        assert main(["platform", "generate", "--preset", "machovec", "--option", "cores=2000",
                     "--option", f"pstates={pstates}", "-o", str(folder / f"p{pstates}.xml")]) == 0
    for pstates in (3, 15):
        assert main(["workload", "generate", "--preset", "machovec", "--seed", "1",
                     "--platform", str(folder / f"p{pstates}.xml"),
                     "--option", "tasks_per_day=100", "--option", "core_scale=0.02",
                     "--option", "hours=6", "--option", "warmup_hours=1",
                     "-o", str(folder / f"w{pstates}.json")]) == 0
    return folder


@pytest.mark.parametrize(
    ("platform", "workload", "options", "message"),
    [
        # A workload made for 15 P-states on the preset's 3: refused, not run silently wrong.
        ("p3.xml", "w15.json", [], "w15.json: job '0' (jobs[0]): field 'etc_pstate'['sp2'] has"
         " 15 P-states, the platform's cluster sp2 has 3 (platform p3.xml)"),
        # A P-state the platform lacks: the workload's third on a 2-P-state platform.
        ("p2.xml", "w3.json", [], "w3.json: job '0' (jobs[0]): field 'etc_pstate'['sp1'] has"
         " 3 P-states, the platform's cluster sp1 has 2 (platform p2.xml)"),
        # A budget that is not a positive number, given on the command line.
        ("p3.xml", "w3.json", ["--option", "energy_budget=-5"],
         "option energy_budget must be a number of joules > 0 or null, got -5"),
        ("p3.xml", "w3.json", ["--option", "energy_budget=abc"],
         "option energy_budget must be a number of joules > 0 or null, got 'abc'"),
        ("p3.xml", "w3.json", ["--option", "energy_budget=0"],
         "option energy_budget must be a number of joules > 0 or null, got 0"),
    ],
    ids=["15-pstates-on-3", "pstate-the-platform-lacks", "budget-option-negative",
         "budget-option-abc", "budget-option-zero"],
)
def test_a_machovec_run_with_bad_input_is_refused_before_it_starts(
    machovec_files: Path, platform: str, workload: str, options: list[str], message: str,
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``hetsched run max-upe-ph`` on a generated Machovec day: exit 2, the error naming the
    file, job and field (or the option), no output folder."""
    capsys.readouterr()
    monkeypatch.chdir(machovec_files)
    out = tmp_path / "out"
    code = main(["run", "max-upe-ph", "-p", platform, "-w", workload, *options, "-o", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1] == f"hetsched run: error: {message}"
    assert not out.exists()


def test_a_budget_given_as_an_option_is_the_budget_the_run_reports(
    machovec_files: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--option energy_budget=J`` replaces the workload's budget in the scheduler (the
    adapter) and so in the summary, the printout and the checker (they reported the
    workload's, none here, while the heuristic applied the option's)."""
    monkeypatch.chdir(machovec_files)
    out = tmp_path / "large"
    capsys.readouterr()
    assert main(["run", "max-upe-ph", "-p", "p3.xml", "-w", "w3.json",
                 "--option", "energy_budget=1e12", "-o", str(out)]) == 0
    assert "budget 1,000.000 GJ: held" in capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["energy_budget_joules"] == 1e12
    assert summary["tasks_completed"] > 0


@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.usefixtures("tiny")
def test_an_nb_res_over_the_platforms_hosts_is_warned_about(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """Batsim takes any positive ``nb_res`` (it reads it only with ``--mmax-workload``), so
    this is a warning, not an error: the run goes on, the warning says why it matters."""
    _edit(Path.cwd(), lambda d: d.update(nb_res=1000))
    args = {
        "run": ["run", "easy", "-p", "platform.xml", "-w", "workload.json", "--json"],
        "validate": ["workload", "validate", "workload.json", "-p", "platform.xml"],
    }[command]
    assert main(args) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"hetsched {'run' if command == 'run' else 'workload'}: warning:"
        " workload.json: nb_res 1000 exceeds the 4 compute hosts of platform platform.xml:"
        " the workload was made for a larger platform (Batsim uses nb_res only with"
        " --mmax-workload; each job's res is checked against the hosts)"
    ], err


MAX_VALUE_REFUSAL = (
    "max-value: job w0!1 has no value function (annotation 'value', Khemka et al. sec. 2),"
    " which max-value needs: add it with 'hetsched workload annotate {workload} -p {platform}"
    " --add value -o OUT.json'"
)


def _without(field: str) -> callable:  # type: ignore[valid-type]
    return lambda d: [job.pop(field, None) for job in d["jobs"]]


def _communicating(document: dict) -> None:
    """Job 1 of a plain workload (no ``hetsched`` object) without etc, its profile
    communicating."""
    document.pop("hetsched", None)
    document["profiles"]["p1"] = {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6}
    del document["jobs"][0]["etc"]


@pytest.mark.parametrize(
    ("name", "change", "message"),
    [
        ("max-value", _without("value"),
         MAX_VALUE_REFUSAL.format(workload="workload.json", platform="platform.xml")),
        ("max-upe-ph", lambda d: None,
         "max-upe-ph: job w0!1 has no utility function (annotation 'utility', Machovec et al."
         " sec. II.C), which max-upe-ph needs: add it with 'hetsched workload annotate"
         " workload.json -p platform.xml --add utility -o OUT.json'"),
        ("rf-duplex", lambda d: None,
         "rf-duplex: job w0!1 has no stochastic model of Hansen et al. sec. II (annotations"
         " 'downey', 'serial_time', 'slowdown', 'makespan_goal'), which rf-duplex needs: add it"
         " with 'hetsched workload annotate workload.json -p platform.xml --add hansen"
         " -o OUT.json'"),
        ("fcfs", _communicating,
         "fcfs: job w0!1: no etc annotation, and its profile 'p1' (parallel_homogeneous)"
         " communicates (com != 0), which SimGrid's network decides: no run time can be"
         " derived: add etc with 'hetsched workload annotate workload.json -p platform.xml"
         " --etc-from walltime -o OUT.json'"),
    ],
)
@pytest.mark.usefixtures("tiny")
def test_a_heuristic_whose_inputs_lack_what_it_needs_is_refused_before_the_run(
    name: str, change: callable, message: str,  # type: ignore[valid-type]
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Exit 2, one line: the job, what is missing and the command that adds it; nothing
    written (no output folder, so no scheduler.log to refuse a rerun over), for ``run``
    and for ``compare`` (checked before its first run)."""
    _edit(Path("."), change)
    assert main(["run", name, "-p", "platform.xml", "-w", "workload.json", "-o", "out"]) == 2
    assert capsys.readouterr().err == f"hetsched run: error: {message}\n"
    assert main(["compare", "--platform", "platform.xml", "--workload", "workload.json",
                 "--heuristics", "fcfs", "easy", name, "-o", "cmp"]) == 2
    assert capsys.readouterr().err == f"hetsched compare: error: {message}\n"
    assert not Path("out").exists() and not Path("cmp").exists()


def test_serve_refuses_with_the_preflight_message() -> None:
    """The pybatsim classes (``hetsched serve``) check the same needs at JOB_SUBMITTED, with
    the preflight's message; the workload is the file SIMULATION_BEGINS names, the platform,
    which Batsim does not name, PLATFORM.xml."""
    from test_adapter import Session
    from test_adapter import submitted as adapter_submitted

    from hetsched.schedulers.adapter import HetschedScheduler

    session = Session(HetschedScheduler({"heuristic": "max-value"}))
    with pytest.raises(WorkloadError) as error:
        session.send(0.0, adapter_submitted(0.0, "w0!1"))
    assert str(error.value) == MAX_VALUE_REFUSAL.format(workload="/nonexistent/w0.json",
                                                        platform="PLATFORM.xml")


def test_a_plain_job_no_cluster_can_run_is_counted_as_unrunnable(tmp_path: Path) -> None:
    """A job without etc (its run time from its profile) fits a cluster by its res nodes of
    the reference cluster: res 3 on clusters of 2 nodes each is unrunnable, res 2 is not."""
    from test_run import PLATFORM_XML

    (tmp_path / "p.xml").write_text(PLATFORM_XML)
    workload = {"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 5}}, "jobs": [
        {"id": 1, "subtime": 0, "res": 3, "profile": "d"},
        {"id": 2, "subtime": 0, "res": 2, "profile": "d"}]}
    (tmp_path / "w.json").write_text(json.dumps(workload))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        checked = preflight(tmp_path / "w.json", tmp_path / "p.xml")
    assert checked.unrunnable == ("1",)
    assert len(caught) == 1 and "1 job(s) that no cluster" in str(caught[0].message)


def test_a_flop_profile_on_hosts_of_unknown_speed_names_platform_annotate() -> None:
    """A cluster whose speed the scheduler does not know (no P-states: a plain Batsim
    platform) gives no run time to a flop profile; a delay needs none."""
    from hetsched.core.system import Cluster
    from hetsched.heuristics.registry import create
    from hetsched.validation.preflight import job_problem

    job = {"id": 1, "subtime": 0, "res": 1, "profile": "p"}
    plain = [Cluster("batsim", 1, (0, 1))]
    flops = {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}
    assert job_problem(create("fcfs"), "w0!1", job, flops, plain, "w.json", "p.xml") == (
        "fcfs: job w0!1: no etc annotation, and its profile 'p' (parallel_homogeneous) is in"
        " flops, but the speed of cluster batsim's hosts is unknown (Batsim forwards no host"
        " speed; hetsched's host property speed_per_pstate gives it): add it with 'hetsched"
        " platform annotate p.xml -o OUT.xml'")
    delay = {"type": "delay", "delay": 4}
    assert job_problem(create("fcfs"), "w0!1", job, delay, plain, "w.json", "p.xml") is None


@pytest.mark.usefixtures("tiny")
def test_the_run_preflight_reads_the_inputs_once_for_the_engine() -> None:
    """preflight_run: preflight's verdict, and the platform and workload as the engine read
    them (with energy: its power model), for the simulation to take over."""
    checked = preflight_run("workload.json", "platform.xml", energy=True)
    assert checked == preflight("workload.json", "platform.xml")
    assert checked.inputs is not None and checked.inputs.energy
    machines = checked.inputs.platform.machines
    assert [m.name for m in machines] == ["0-fast-0", "0-fast-1", "1-slow-0", "1-slow-1"]
    assert all(m.power is not None for m in machines)
    [workload] = checked.inputs.workloads
    assert workload.name == "w0" and [job.id for job in workload.jobs] == ["w0!1", "w0!2"]


@pytest.mark.usefixtures("tiny")
def test_the_run_preflight_warns_naming_its_caller() -> None:
    _edit(Path("."), lambda d: d.update(nb_res=99))
    with pytest.warns(InputWarning, match="nb_res 99 exceeds") as caught:
        preflight_run("workload.json", "platform.xml", energy=False)
    assert [Path(w.filename).name for w in caught] == ["test_preflight.py"]


@pytest.mark.usefixtures("tiny")
def test_a_platform_for_real_batsim_only_is_read_as_batsim_forwards_it() -> None:
    """preflight (before a run on real Batsim, and before a comparison) reads the platform as
    Batsim forwards it to the scheduler: a storage host, which only real Batsim runs, leaves
    the compute hosts and clusters as they are; the run on the embedded engine still refuses
    it, in its preflight, with the engine's message."""
    before = PlatformView.read("platform.xml")
    path = Path("platform.xml")
    path.write_text(path.read_text().replace(
        "</zone>",
        '  <host id="pfs" speed="1e9f" coordinates="1 1 1"><prop id="role" value="storage"/>'
        "</host>\n</zone>"))
    assert PlatformView.read("platform.xml") == before and before.nb_hosts == 4
    assert sorted(before.clusters or ()) == ["fast", "slow"]
    assert preflight("workload.json", "platform.xml").jobs == 2
    with pytest.raises(UnsupportedFeature, match="host 'pfs': storage resources"):
        preflight_run("workload.json", "platform.xml", energy=True)
